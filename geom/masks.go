package geom

import (
	"fmt"
	"math"
)

// DefaultMask is the visibility mask of a mesh built without one and of a
// ray without one: every bit set, so that every ray hits every mesh.
const DefaultMask uint8 = 0xFF

// Mask returns a pointer to v, for Mesh.Mask: Mesh{…, Mask: Mask(0x01)}.
func Mask(v uint8) *uint8 { return &v }

// MaskOf returns the visibility mask of mesh m: Mask[m], or DefaultMask
// when the tables carry no mask table (tables assembled by hand).
func (t *Tables) MaskOf(m int) uint8 {
	if m < 0 || m >= len(t.Mask) {
		return DefaultMask
	}
	return t.Mask[m]
}

// MasksDefault reports whether every mesh has DefaultMask: the scene then
// traces exactly as a scene without masks.
func (t *Tables) MasksDefault() bool {
	for _, m := range t.Mask {
		if m != DefaultMask {
			return false
		}
	}
	return true
}

// SetMask sets the visibility mask of mesh m. Errors: ErrMeshIndex for m
// outside [0, NumMeshes). Callers serialize it against readers.
func (t *Tables) SetMask(m int, mask uint8) error {
	if m < 0 || m >= t.NumMeshes() {
		return fmt.Errorf("%w: %d not in [0,%d)", ErrMeshIndex, m, t.NumMeshes())
	}
	if len(t.Mask) != t.NumMeshes() {
		full := make([]uint8, t.NumMeshes())
		for i := range full {
			full[i] = t.MaskOf(i)
		}
		t.Mask = full
	}
	t.Mask[m] = mask
	return nil
}

// FaceMasks returns the visibility mask of every global face (the mask of
// its mesh), in global face order.
func (t *Tables) FaceMasks() []uint8 {
	out := make([]uint8, t.NumFaces())
	for f, m := range t.FaceShape {
		out[f] = t.MaskOf(int(m))
	}
	return out
}

// RayLimits are the optional per-ray inputs of the traced queries beyond
// tmax: TMin, the start of each row's interval (empty: the query's default
// epsilon), and Mask, each row's visibility mask (empty: DefaultMask). A
// hit counts only when the row's mask and the mask of the hit face's mesh
// share a bit.
type RayLimits struct {
	TMin []float32
	Mask []uint8
}

// IsDefault reports whether l carries neither TMin nor Mask: the query
// then runs exactly as without limits.
func (l RayLimits) IsDefault() bool { return len(l.TMin) == 0 && len(l.Mask) == 0 }

// TMinAt returns row i's tmin, or def when TMin is empty.
func (l RayLimits) TMinAt(i int, def float32) float32 {
	if len(l.TMin) == 0 {
		return def
	}
	return l.TMin[i]
}

// MaskAt returns row i's mask, or DefaultMask when Mask is empty.
func (l RayLimits) MaskAt(i int) uint8 {
	if len(l.Mask) == 0 {
		return DefaultMask
	}
	return l.Mask[i]
}

// CheckRayLimits validates l for a batch of n rows with per-row tmax
// (empty: unbounded). TMin and Mask each hold n values or none (a
// *LengthError naming "tmin" or "mask"); every tmin must be finite, ≥ 0
// and not above its row's tmax (an *ArgumentError naming "tmin[i]"). A
// NaN tmax is not compared (the row misses, as without TMin).
func CheckRayLimits(n int, tmax []float32, l RayLimits) error {
	if err := checkLen("tmin", len(l.TMin), n, 1, true); err != nil {
		return err
	}
	if err := checkLen("mask", len(l.Mask), n, 1, true); err != nil {
		return err
	}
	for i, tm := range l.TMin {
		switch {
		case math.IsNaN(float64(tm)) || math.IsInf(float64(tm), 0):
			return &ArgumentError{Field: fmt.Sprintf("tmin[%d]", i), Reason: fmt.Sprintf("%v is not finite", tm)}
		case tm < 0:
			return &ArgumentError{Field: fmt.Sprintf("tmin[%d]", i), Reason: fmt.Sprintf("%v is negative", tm)}
		case len(tmax) > 0 && tm > tmax[i]:
			return &ArgumentError{Field: fmt.Sprintf("tmin[%d]", i), Reason: fmt.Sprintf("%v exceeds tmax %v", tm, tmax[i])}
		}
	}
	return nil
}
