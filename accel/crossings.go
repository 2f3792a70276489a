package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// ModuleCrossings is the PTX module of the crossings query
// (ptx/src/crossings.cu).
const ModuleCrossings = "crossings"

// Crossings is a device crossings record of N rows of K slots (see
// geom.Crossings): T, Prim and Shape hold N·K values, row i at [i·K, i·K+K),
// Count one per row. Overflow is Count > K, derived on the host.
type Crossings struct {
	T           *launch.Buffer[float32]
	Prim, Shape *launch.Buffer[int32]
	Count       *launch.Buffer[int32]
}

// crossingsSlots are the kept-hit array sizes of the kernels, smallest
// first: a launch for k uses the smallest that holds k.
var crossingsSlots = [...]int{8, 16, 32, 64}

// crossingsEntry names the kernel for k on a node layout of width w, its
// masked variant (face masks honoured) when masked, and its dynamic-fetch
// variant (the _dyn kernels) when dyn.
func crossingsEntry(k, w int, masked, dyn bool) string {
	suffix := ""
	if w == 4 {
		suffix = "_4"
	}
	if masked {
		suffix += "_masked"
	}
	if dyn {
		suffix += "_dyn"
	}
	for _, s := range crossingsSlots {
		if k <= s {
			return fmt.Sprintf("rayd_crossings%d%s", s, suffix)
		}
	}
	return ""
}

// Crossings queues the crossings query for seg on s: per segment, under the
// segment rule of spec §4.1, the k hits of least (t, global prim id) in
// ascending order (+Inf, −1, −1 pads), their shapes, and the number of hits
// on the whole segment. Inactive, non-finite and degenerate segments are
// the miss row with count 0. The walk and the watertight test are those of
// closest hit, so every value equals the CPU reference (ref.Scene.Crossings)
// bit for bit. While a face mask differs from the default (SetFaceMasks) a
// face counts only when its mask is not 0 (segments carry the full ray
// mask), through the masked kernels. k is in [1, geom.MaxCrossingsK].
func (b *BVH) Crossings(s *launch.Stream, seg Segments, k int, out Crossings) error {
	return b.crossings(streamRunner{s}, seg, k, out)
}

func (b *BVH) crossings(run runner, seg Segments, k int, out Crossings) error {
	if seg.N < 0 || seg.N > 1<<31-1-31 {
		return fmt.Errorf("accel: segment count %d out of range", seg.N)
	}
	if err := geom.CheckCrossingsK(k); err != nil {
		return err
	}
	if seg.Start == nil || seg.End == nil || out.T == nil || out.Prim == nil || out.Shape == nil || out.Count == nil {
		return fmt.Errorf("accel: Segments.Start, Segments.End and every Crossings buffer are required")
	}
	if err := firstErr(needLen("Segments.Start", seg.Start, 3*seg.N), needLen("Segments.End", seg.End, 3*seg.N),
		needLen("Segments.Active", seg.Active, seg.N), needLen("Crossings.T", out.T, seg.N*k),
		needLen("Crossings.Prim", out.Prim, seg.N*k), needLen("Crossings.Shape", out.Shape, seg.N*k),
		needLen("Crossings.Count", out.Count, seg.N), needLen("Segments.Counter", seg.Counter, 1)); err != nil {
		return err
	}
	if seg.N == 0 {
		return nil
	}
	return b.launchCrossings(run, seg, k, out)
}

// launchCrossings is the launch behind the checks of crossings. A
// persistent launch fetches rows dynamically under FetchAuto whatever the
// BVH's size (short false, as intersect): every crossings walk runs to the
// segment's end, so walks are long and differ in length as much as the
// segments do, which is where a 32-row batch waits longest for its slowest
// row; the L2-resident exception of trace_reflections and visible (short
// walks that end at the first or nearest hit) does not apply.
func (b *BVH) launchCrossings(run runner, seg Segments, k int, out Crossings) error {
	if b.opt.Width == 8 {
		return fmt.Errorf("crossings on width %d: %w", b.opt.Width, ErrWidth)
	}
	g, counter, err := b.grid(run, seg.N, seg.Counter, seg.PersistentBlocks)
	if err != nil {
		return err
	}
	args := []any{b.nodes, b.tris, int32(b.numTris), seg.Start, seg.End, nullable(seg.Active), int32(k), int32(seg.N),
		out.T, out.Prim, out.Shape, out.Count, counter}
	if b.faceMask != nil {
		args = append(args, b.faceMask)
	}
	entry := crossingsEntry(k, b.opt.Width, b.faceMask != nil, b.dynamic(counter, false))
	return run.launch(ModuleCrossings, entry, g, launch.Threads(TraceThreads), args...)
}
