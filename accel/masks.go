package accel

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// errBruteMasked refuses per-ray limits or face masks on the brute-force
// intersect (a test kernel without a masked variant).
var errBruteMasked = errors.New("accel: the brute-force intersect has no masked variant")

// SetFaceMasks sets the visibility mask of every global face (in global face
// order, geom.Tables.FaceMasks) on s. While any mask differs from
// geom.DefaultMask the queries run their masked kernels (rayd_*_masked),
// which count a hit only when the face's mask shares a bit with the ray's;
// when every mask is the default the device table is freed and the
// unmasked kernels run again, unchanged. Queries on other streams must be
// ordered after s.
func (b *BVH) SetFaceMasks(s *launch.Stream, masks []uint8) error {
	if len(masks) != b.numTris {
		return fmt.Errorf("accel: %d face masks for %d faces", len(masks), b.numTris)
	}
	if allDefault(masks) {
		err := b.faceMask.CloseOn(s)
		b.faceMask = nil
		return err
	}
	if b.faceMask == nil {
		buf, err := launch.AllocAsync[uint8](s, len(masks))
		if err != nil {
			return err
		}
		b.faceMask = buf
	}
	return b.faceMask.Upload(s, masks)
}

// Masked reports whether any face has a non-default mask.
func (b *BVH) Masked() bool { return b.faceMask != nil }

// maskedFor reports whether a query of r runs the masked kernels: r carries
// per-ray limits or a face has a non-default mask.
func (b *BVH) maskedFor(r Rays) bool { return r.TMin != nil || r.Mask != nil || b.faceMask != nil }

// maskArgs are the trailing arguments of the masked kernels for r.
func (b *BVH) maskArgs(r Rays) []any {
	return []any{nullable(r.TMin), nullable(r.Mask), nullable(b.faceMask)}
}

func allDefault(masks []uint8) bool {
	for _, m := range masks {
		if m != geom.DefaultMask {
			return false
		}
	}
	return true
}
