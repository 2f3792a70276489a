package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// ModuleVisibility is the PTX module of the segment blockers
// (ptx/src/visibility.cu).
const ModuleVisibility = "visibility"

// SegmentBlockers queues the segment query behind the visibility variants
// of spec §4.2: out[i] is the global prim id of segment i's closest blocker
// (least t in [1e-5, tmax] under the segment rule of spec §4.1, ties to the
// lower id) that is not among ignore[i·k … i·k+k) (−1 pads; ignore nil:
// none), or −1 when nothing blocks it. Inactive, non-finite and degenerate
// segments give −1. While a face mask differs from the default
// (SetFaceMasks) a face of mask 0 never blocks (segments carry the full ray
// mask), through the masked kernels.
func (b *BVH) SegmentBlockers(s *launch.Stream, seg Segments, ignore *launch.Buffer[int32], k int, out *launch.Buffer[int32]) error {
	if seg.N < 0 || seg.N > 1<<31-1-31 {
		return fmt.Errorf("accel: segment count %d out of range", seg.N)
	}
	if seg.Start == nil || seg.End == nil || out == nil {
		return fmt.Errorf("accel: Segments.Start, Segments.End and out are required")
	}
	if ignore != nil && k < 1 {
		return fmt.Errorf("accel: ignore rows of length %d", k)
	}
	if ignore == nil {
		k = 0
	}
	if err := firstErr(needLen("Segments.Start", seg.Start, 3*seg.N), needLen("Segments.End", seg.End, 3*seg.N),
		needLen("Segments.Active", seg.Active, seg.N), needLen("ignore", ignore, seg.N*k),
		needLen("SegmentBlockers out", out, seg.N), needLen("Segments.Counter", seg.Counter, 1)); err != nil {
		return err
	}
	if seg.N == 0 {
		return nil
	}
	return b.launchBlockers(streamRunner{s}, seg, ignore, k, out)
}

func (b *BVH) launchBlockers(run runner, seg Segments, ignore *launch.Buffer[int32], k int, out *launch.Buffer[int32]) error {
	g, counter, err := b.grid(run, seg.N, seg.Counter, seg.PersistentBlocks)
	if err != nil {
		return err
	}
	args := []any{b.nodes, b.tris, int32(b.numTris), seg.Start, seg.End, nullable(seg.Active), nullable(ignore), int32(k),
		int32(seg.N), out, counter}
	entry := "rayd_segment_blockers"
	if b.faceMask != nil {
		entry, args = "rayd_segment_blockers_masked", append(args, b.faceMask)
	}
	return run.launch(ModuleVisibility, b.entry(entry), g, launch.Threads(TraceThreads), args...)
}
