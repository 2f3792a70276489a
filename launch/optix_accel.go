package launch

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/driver"
)

// GASInput is one triangle geometry in device memory: Vertices holds 3
// float32 per vertex and Faces 3 vertex indices per triangle (the
// scene-global tables of spec §1.2 fit as they are). Both buffers are
// referenced, not copied: they must stay alive and, but for a vertex update
// followed by Refit, unchanged while the GAS is used.
type GASInput struct {
	Vertices *Buffer[float32]
	Faces    *Buffer[int32]
}

// GASOptions selects how a GAS is built.
type GASOptions struct {
	// AllowUpdate keeps update scratch memory so Refit can follow vertex
	// changes (dynamic scenes). Such a GAS is not compacted.
	AllowUpdate bool
	// Compact copies a static GAS into a compacted buffer when that is
	// smaller (one extra synchronisation at build).
	Compact bool
	// FastBuild prefers build speed to trace speed.
	FastBuild bool
	// AnyHit keeps any-hit programs callable (otherwise the geometry is
	// flagged DISABLE_ANYHIT, the fast path for closest-hit and occlusion).
	AnyHit bool
}

// GAS is an OptiX triangle geometry acceleration structure on one device.
// Queries on different streams may share it; Refit and Close must not
// overlap queries.
type GAS struct {
	ctx    *OptiXContext
	d      *Device
	in     GASInput
	tris   driver.OptiXTriangles
	opts   driver.OptiXAccelOptions
	handle driver.OptiXTraversable
	out    *Buffer[uint8]
	update *Buffer[uint8] // refit scratch (AllowUpdate)
	sizes  driver.OptiXAccelBufferSizes
}

// ErrNotUpdatable is returned by Refit on a GAS built without AllowUpdate.
var ErrNotUpdatable = errors.New("launch: GAS was built without AllowUpdate")

// BuildGAS builds the GAS of in on s and returns after the build (and the
// compaction) has completed. The context must be the OptiX context of s's
// device.
func (c *OptiXContext) BuildGAS(s *Stream, in GASInput, opt GASOptions) (*GAS, error) {
	if s.d.ordinal != c.ordinal {
		return nil, fmt.Errorf("launch: BuildGAS: context on cuda:%d, stream on %v: %w", c.ordinal, s.d, ErrWrongDevice)
	}
	if in.Vertices == nil || in.Faces == nil || in.Vertices.d != s.d || in.Faces.d != s.d {
		return nil, fmt.Errorf("launch: BuildGAS: vertices and faces must be buffers of %v", s.d)
	}
	nv, nf := in.Vertices.Len()/3, in.Faces.Len()/3
	if nf == 0 || nv == 0 || in.Vertices.Len()%3 != 0 || in.Faces.Len()%3 != 0 || nf > 1<<30 {
		return nil, fmt.Errorf("launch: BuildGAS: %d vertex floats and %d face indices (need whole triples, ≥ 1 face, ≤ 2^30 faces)",
			in.Vertices.Len(), in.Faces.Len())
	}
	g := &GAS{ctx: c, d: s.d, in: in}
	g.tris = driver.OptiXTriangles{Vertices: in.Vertices.ptr, NumVertices: uint32(nv), Indices: in.Faces.ptr,
		NumTriangles: uint32(nf), GeometryFlags: driver.OptiXGeometryDisableAnyHit}
	if opt.AnyHit {
		g.tris.GeometryFlags = driver.OptiXGeometryNone
	}
	flags := driver.OptiXBuildPreferFastTrace
	if opt.FastBuild {
		flags = driver.OptiXBuildPreferFastBuild
	}
	compact := opt.Compact && !opt.AllowUpdate
	switch {
	case opt.AllowUpdate:
		flags |= driver.OptiXBuildAllowUpdate
	case compact:
		flags |= driver.OptiXBuildAllowCompaction
	}
	g.opts = driver.OptiXAccelOptions{BuildFlags: flags}
	if err := g.build(s, compact); err != nil {
		_ = g.Close()
		return nil, fmt.Errorf("launch: BuildGAS (%d triangles) on %v: %w", nf, s.d, err)
	}
	return g, nil
}

func (g *GAS) build(s *Stream, compact bool) error {
	err := s.use(func() error {
		var e error
		g.sizes, e = g.ctx.ox.AccelMemoryUsage(g.opts, g.tris)
		return e
	})
	if err != nil {
		return err
	}
	temp, err := Alloc[uint8](g.d, int(max(g.sizes.TempBytes, 8)))
	if err != nil {
		return err
	}
	defer func() { // the build reads temp until it completes
		_ = s.Synchronize()
		_ = temp.Close()
	}()
	if g.out, err = Alloc[uint8](g.d, int(g.sizes.OutputBytes)); err != nil {
		return err
	}
	var size *Buffer[uint64]
	if compact {
		if size, err = Alloc[uint64](g.d, 1); err != nil {
			return err
		}
		defer size.Close()
	}
	err = s.use(func() error {
		var e error
		var emit driver.DevicePtr
		if size != nil {
			emit = size.ptr
		}
		g.handle, e = g.ctx.ox.AccelBuild(s.s, g.opts, g.tris, temp.ptr, uint64(temp.Bytes()), g.out.ptr, uint64(g.out.Bytes()), emit)
		return e
	})
	if err != nil {
		return err
	}
	if size != nil {
		if err := g.compact(s, size); err != nil {
			return err
		}
	}
	if g.opts.BuildFlags&driver.OptiXBuildAllowUpdate != 0 {
		if g.update, err = Alloc[uint8](g.d, int(max(g.sizes.TempUpdateBytes, 8))); err != nil {
			return err
		}
	}
	return s.Synchronize()
}

// compact reads the emitted size (waiting for the build) and, when smaller,
// copies the GAS into a buffer of that size.
func (g *GAS) compact(s *Stream, size *Buffer[uint64]) error {
	n := make([]uint64, 1)
	if err := size.Download(s, n); err != nil {
		return err
	}
	if n[0] == 0 || n[0] >= uint64(g.out.Bytes()) {
		return nil
	}
	small, err := Alloc[uint8](g.d, int(n[0]))
	if err != nil {
		return err
	}
	var h driver.OptiXTraversable
	err = s.use(func() error {
		var e error
		h, e = g.ctx.ox.AccelCompact(s.s, g.handle, small.ptr, uint64(small.Bytes()))
		if e == nil {
			e = s.s.Synchronize() // the old buffer is read until the copy is done
		}
		return e
	})
	if err != nil {
		_ = small.Close()
		return err
	}
	old := g.out
	g.out, g.handle = small, h
	return old.Close()
}

// Refit queues an update of the GAS on s after its input vertices changed
// in place (same buffers, same topology). Queries queued on s afterwards see
// the new geometry; other streams must wait for s.
func (g *GAS) Refit(s *Stream) error {
	if g.update == nil {
		return ErrNotUpdatable
	}
	if g.out == nil || g.out.closed.Load() {
		return ErrClosed
	}
	if s.d != g.d {
		return fmt.Errorf("launch: GAS.Refit: GAS on %v, stream on %v: %w", g.d, s.d, ErrWrongDevice)
	}
	opts := g.opts
	opts.Update = true
	return s.use(func() error {
		h, err := g.ctx.ox.AccelBuild(s.s, opts, g.tris, g.update.ptr, uint64(g.update.Bytes()), g.out.ptr, uint64(g.out.Bytes()), 0)
		if err == nil {
			g.handle = h
		}
		return err
	})
}

// Handle returns the traversable handle for the launch parameters.
func (g *GAS) Handle() uint64 { return uint64(g.handle) }

// Bytes returns the device memory the GAS holds (structure + refit scratch).
func (g *GAS) Bytes() int {
	n := 0
	for _, b := range []*Buffer[uint8]{g.out, g.update} {
		if b != nil {
			n += b.Bytes()
		}
	}
	return n
}

// Updatable reports whether Refit is available.
func (g *GAS) Updatable() bool { return g.update != nil }

// Context returns the OptiX context the GAS belongs to.
func (g *GAS) Context() *OptiXContext { return g.ctx }

// Close frees the GAS's memory (not its input buffers). Idempotent; no
// queued work may still use the GAS.
func (g *GAS) Close() error {
	var errs []error
	for _, b := range []*Buffer[uint8]{g.out, g.update} {
		errs = append(errs, b.Close())
	}
	g.out, g.update, g.handle = nil, nil, 0
	return errors.Join(errs...)
}
