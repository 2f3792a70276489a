package accel

import (
	"errors"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// Host-level RF calls: each packs and uploads host inputs (validated by
// package rf) to stream-ordered buffers on s, runs one launch, downloads the
// outputs (waiting for s) and returns them in package rf's result types.
// faces and tri describe the scene's global faces (the BVH's geometry).

// hostBufs collects the stream-ordered buffers of one call.
type hostBufs struct {
	s    *launch.Stream
	bufs []interface{ Close() error }
	err  error
}

func hostAlloc[T launch.Elem](h *hostBufs, n int) *launch.Buffer[T] {
	if h.err != nil {
		return nil
	}
	b, err := launch.AllocAsync[T](h.s, max(n, 1))
	if err != nil {
		h.err = err
		return nil
	}
	h.bufs = append(h.bufs, b)
	return b
}

func hostUpload[T launch.Elem](h *hostBufs, src []T) *launch.Buffer[T] {
	b := hostAlloc[T](h, len(src))
	if h.err == nil && len(src) > 0 {
		h.err = b.Upload(h.s, src)
	}
	return b
}

// optUpload uploads src, or returns nil for an empty slice.
func optUpload[T launch.Elem](h *hostBufs, src []T) *launch.Buffer[T] {
	if len(src) == 0 {
		return nil
	}
	return hostUpload(h, src)
}

func hostDownload[T launch.Elem](h *hostBufs, b *launch.Buffer[T], n int) []T {
	out := make([]T, n)
	if h.err == nil && n > 0 {
		h.err = b.Download(h.s, out)
	}
	return out
}

func (h *hostBufs) close(err error) error {
	if err == nil {
		err = h.err
	}
	for _, b := range h.bufs {
		err = errors.Join(err, b.Close())
	}
	return err
}

func boolBytes(v []bool) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		if x {
			out[i] = 1
		}
	}
	return out
}

// AccumDfrDirectHost runs accum_dfr_direct for host inputs; opt.LaneCount
// must be the resolved window size (≥ 0).
func (b *BVH) AccumDfrDirectHost(s *launch.Stream, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool,
	opt rf.AccumOptions, faces int, tri TriangleFunc) (*rf.AccumResult, error) {
	h := &hostBufs{s: s}
	n, cells := st.StateCount(), g.Res0*g.Res1
	in := DfrAccumLaunch{States: hostUpload(h, PackDfrStates(st, n, m, active, faces, tri)), NumStates: n, Grid: g, Options: opt}
	out := DfrAccumOut{Grids: hostAlloc[float32](h, 7*cells), Counters: hostAlloc[int32](h, 7)}
	if h.err == nil {
		h.err = b.AccumDfrDirect(s, in, out)
	}
	grids, counters := hostDownload(h, out.Grids, 7*cells), hostDownload(h, out.Counters, 7)
	if err := h.close(nil); err != nil {
		return nil, err
	}
	return DecodeDfrAccum(grids, counters, g.Res0, g.Res1), nil
}

// AccumDfrCoherentHost runs accum_dfr_coherent_direct for host inputs;
// opt.LaneCount must be resolved (≥ 0).
func (b *BVH) AccumDfrCoherentHost(s *launch.Stream, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool,
	opt rf.CoherentOptions, faces int, tri TriangleFunc) (*rf.CoherentResult, error) {
	h := &hostBufs{s: s}
	n, cells := st.StateCount(), g.Res0*g.Res1
	in := DfrCoherentLaunch{States: hostUpload(h, PackDfrStates(st, n, m, active, faces, tri)), NumStates: n, Grid: g, Options: opt}
	out := DfrCoherentOut{Grids: hostAlloc[float32](h, 12*cells), Counts: hostAlloc[int32](h, 3*cells)}
	if h.err == nil {
		h.err = b.AccumDfrCoherentDirect(s, in, out)
	}
	grids, counts := hostDownload(h, out.Grids, 12*cells), hostDownload(h, out.Counts, 3*cells)
	if err := h.close(nil); err != nil {
		return nil, err
	}
	return DecodeDfrCoherent(grids, counts, g.Res0, g.Res1), nil
}

// AccumulateReflectionsHost runs accumulate_reflections for a host ray
// batch; m nil is the default material over faces faces.
func (b *BVH) AccumulateReflectionsHost(s *launch.Stream, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial,
	maxBounces int, opt rf.ReflOptions, faces int) (*rf.ReflResult, error) {
	h := &hostBufs{s: s}
	n, cells := len(rays.O)/3, g.Res0*g.Res1
	in := ReflAccumLaunch{O: hostUpload(h, rays.O), D: hostUpload(h, rays.D), TMax: optUpload(h, rays.TMax),
		TxPosition: hostUpload(h, rays.TxPosition), TxPolarization: optUpload(h, rays.TxPolarization),
		Active: optUpload(h, boolBytes(rays.Active)), N: n, Material: hostUpload(h, PackFaceMaterial(m, faces)),
		NumFaces: faces, Grid: g, MaxBounces: maxBounces, Options: opt}
	capacity := 0
	if opt.CollectWedges {
		capacity = opt.WedgeCapacity
	}
	out := ReflAccumOut{Grids: hostAlloc[float32](h, 7*cells), Counters: hostAlloc[int32](h, 2)}
	if capacity > 0 {
		out.Wedges = hostAlloc[uint32](h, capacity*WedgeEventWords)
	}
	if h.err == nil {
		h.err = b.AccumulateReflections(s, in, out)
	}
	grids, counters := hostDownload(h, out.Grids, 7*cells), hostDownload(h, out.Counters, 2)
	var wedges []uint32
	if capacity > 0 {
		wedges = hostDownload(h, out.Wedges, capacity*WedgeEventWords)
	}
	if err := h.close(nil); err != nil {
		return nil, err
	}
	return DecodeReflAccum(grids, counters, wedges, n, maxBounces, g, opt), nil
}

// TraceDfrPathsHost runs trace_dfr_paths over every lane for host inputs
// (validated by rf.TraceDfrPaths: active has one flag per state of the
// limit M = min(S, MaxPaths)).
func (b *BVH) TraceDfrPathsHost(s *launch.Stream, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool,
	opt rf.PathOptions, faces int, tri TriangleFunc) (*rf.DfrPaths, error) {
	T, R := len(tx)/3, len(rx)/3
	M := len(active)
	capacity := T * R * M
	if capacity == 0 {
		return rf.NewDfrPaths(0, opt.Layout), nil
	}
	h := &hostBufs{s: s}
	in := DfrPathsLaunch{States: hostUpload(h, PackDfrStates(st, M, m, active, faces, tri)), NumStates: M,
		Rx: hostUpload(h, rx), NumRx: R, NumTx: T, TxPolarization: optUpload(h, opt.TxPolarization),
		PolRows: len(opt.TxPolarization) / 3, Wavelength: opt.Wavelength, Layout: opt.Layout, LaneCount: capacity}
	out := DfrPathsOut{Rows: hostAlloc[uint32](h, capacity*PathRowWords), Count: hostAlloc[int32](h, 1), Capacity: capacity}
	if h.err == nil {
		h.err = b.TraceDfrPaths(s, in, out)
	}
	rows, count := hostDownload(h, out.Rows, capacity*PathRowWords), hostDownload(h, out.Count, 1)
	if err := h.close(nil); err != nil {
		return nil, err
	}
	return DecodePaths(rows, count[0], capacity, opt.Layout), nil
}
