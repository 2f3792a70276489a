package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// ModuleRFFold is the PTX module of the resident RF partials
// (ptx/src/rf_fold.cu).
const ModuleRFFold = "rf_fold"

// RFPartial is one device's resident partial of an RF grid accumulation
// (accum_dfr_direct, accum_dfr_coherent_direct, accumulate_reflections):
// the float64 grid sums the accumulation kernels add into (Acc) and their
// int32 counters (Ints), before any float32 conversion. ZeroPartial starts
// it, every launch of the *Partial methods adds its window into it, and
// FoldPartial adds other devices' partials into it and converts the total,
// so a device's windows sum into one partial and a call's partials into one
// result without a float32 round trip in between. The buffers may be larger
// than the shape of the call.
type RFPartial struct {
	Acc  *launch.Buffer[float64]
	Ints *launch.Buffer[int32]
}

// PartialShape is the size of an operation's partial: Acc float64 sums
// (grid rows the kernels accumulate) and Ints int32 counters.
type PartialShape struct {
	Acc, Ints int
}

// Words is the size of the folded output: the Acc sums as float32 values,
// then the Ints counters, one 32-bit word each.
func (p PartialShape) Words() int { return p.Acc + p.Ints }

// DfrDirectShape is the partial of accum_dfr_direct over cells: the power
// and field x re sums (the other five grids are zero) and the seven
// counters.
func DfrDirectShape(cells int) PartialShape { return PartialShape{Acc: 2 * cells, Ints: 7} }

// DfrCoherentShape is the partial of accum_dfr_coherent_direct over cells:
// the direct field x re and x im sums (the other ten grids are zero) and
// the three per-cell count rows.
func DfrCoherentShape(cells int) PartialShape { return PartialShape{Acc: 2 * cells, Ints: 3 * cells} }

// ReflShape is the partial of accumulate_reflections over cells: the seven
// grids and the reflection and wedge-event counters.
func ReflShape(cells int) PartialShape { return PartialShape{Acc: 7 * cells, Ints: 2} }

// PartialAddr is where a partial lies: the device addresses of its Acc and
// Ints buffers, which a kernel of another device reads through peer access
// (FoldPartial). The zero value is no partial.
type PartialAddr struct {
	Acc, Ints uint64
}

// Addr returns the device addresses of p.
func (p RFPartial) Addr() PartialAddr {
	var a PartialAddr
	if p.Acc != nil {
		a.Acc = p.Acc.Addr()
	}
	if p.Ints != nil {
		a.Ints = p.Ints.Addr()
	}
	return a
}

// check verifies that p holds shape.
func (p RFPartial) check(shape PartialShape) error {
	switch {
	case shape.Acc < 0 || shape.Ints < 0:
		return fmt.Errorf("accel: partial shape %d+%d", shape.Acc, shape.Ints)
	case p.Acc == nil || p.Ints == nil:
		return fmt.Errorf("accel: a partial needs both its Acc and Ints buffers")
	}
	if err := needLen("RFPartial.Acc", p.Acc, shape.Acc); err != nil {
		return err
	}
	return needLen("RFPartial.Ints", p.Ints, shape.Ints)
}

// foldGrid is the launch shape of the zero and fold kernels over n values.
func foldGrid(n int) launch.Dim3 { return launch.Blocks(min(max(n, 1), 1<<20), TraceThreads) }

// ZeroPartial queues on s (a stream of p's device) the zeroing of shape's
// elements of p: one launch.
func ZeroPartial(s *launch.Stream, p RFPartial, shape PartialShape) error {
	return zeroPartial(rfStream{s}, p, shape)
}

func zeroPartial(run rfRunner, p RFPartial, shape PartialShape) error {
	if err := p.check(shape); err != nil {
		return err
	}
	return launchZeroPartial(run, p, shape)
}

func launchZeroPartial(run rfRunner, p RFPartial, shape PartialShape) error {
	return run.launchShared(ModuleRFFold, "rf_zero_partial", foldGrid(max(shape.Acc, shape.Ints)),
		launch.Threads(TraceThreads), 0, p.Acc, int64(shape.Acc), p.Ints, int64(shape.Ints))
}

// FoldPartial queues on s (a stream of dst's device) the addition of the
// partial at src into dst: one launch that reads src where it lies (dst's
// own device, or a peer whose memory dst's context can access; the zero
// PartialAddr adds nothing). With out nil the sum is written into dst;
// otherwise it is written to out as shape.Words() words (the Acc sums
// rounded to float32, as their bit patterns, then the counters) and dst is
// left unchanged. The caller orders s after the work that wrote src.
func FoldPartial(s *launch.Stream, dst RFPartial, src PartialAddr, shape PartialShape, out *launch.Buffer[uint32]) error {
	return foldPartial(rfStream{s}, dst, src, shape, out)
}

func foldPartial(run rfRunner, dst RFPartial, src PartialAddr, shape PartialShape, out *launch.Buffer[uint32]) error {
	if err := dst.check(shape); err != nil {
		return err
	}
	if err := needLen("the folded output", out, shape.Words()); err != nil {
		return err
	}
	return launchFoldPartial(run, dst, src, shape, out)
}

func launchFoldPartial(run rfRunner, dst RFPartial, src PartialAddr, shape PartialShape, out *launch.Buffer[uint32]) error {
	return run.launchShared(ModuleRFFold, "rf_fold_partial", foldGrid(max(shape.Acc, shape.Ints)),
		launch.Threads(TraceThreads), 0, dst.Acc, dst.Ints, src.Acc, src.Ints, int64(shape.Acc), int64(shape.Ints),
		nullable(out))
}

// AccumDfrDirectPartial queues the accum_dfr_direct launch of in's window
// on s, adding into p (DfrDirectShape; in.Accumulate is ignored: a partial
// is only ever added into). An empty window queues nothing.
func (b *BVH) AccumDfrDirectPartial(s *launch.Stream, in DfrAccumLaunch, p RFPartial) error {
	return b.accumDfrDirectPartial(rfStream{s}, in, p)
}

func (b *BVH) accumDfrDirectPartial(run rfRunner, in DfrAccumLaunch, p RFPartial) error {
	cells, err := checkDfrDirect(in)
	if err != nil {
		return err
	}
	if err := p.check(DfrDirectShape(cells)); err != nil {
		return err
	}
	return b.launchDfrDirectPartial(run, in, p, cells)
}

func (b *BVH) launchDfrDirectPartial(run rfRunner, in DfrAccumLaunch, p RFPartial, cells int) error {
	calls, shared := b.dfrDirectCalls(in, cells)
	for _, c := range calls {
		if err := b.runPartial(run, ModuleRFAccum, c.entry, c.lanes, shared, c.args, p); err != nil {
			return err
		}
	}
	return nil
}

// AccumDfrCoherentPartial queues the accum_dfr_coherent_direct launch of
// in's window on s, adding into p (DfrCoherentShape).
func (b *BVH) AccumDfrCoherentPartial(s *launch.Stream, in DfrCoherentLaunch, p RFPartial) error {
	return b.accumDfrCoherentPartial(rfStream{s}, in, p)
}

func (b *BVH) accumDfrCoherentPartial(run rfRunner, in DfrCoherentLaunch, p RFPartial) error {
	cells, err := checkDfrCoherent(in)
	if err != nil {
		return err
	}
	if err := p.check(DfrCoherentShape(cells)); err != nil {
		return err
	}
	return b.launchDfrCoherentPartial(run, in, p, cells)
}

func (b *BVH) launchDfrCoherentPartial(run rfRunner, in DfrCoherentLaunch, p RFPartial, cells int) error {
	args, shared, ok := b.dfrCoherentArgs(in, cells)
	if !ok {
		return nil
	}
	return b.runPartial(run, ModuleRFAccum, "rf_accum_coherent", in.Options.LaneCount, shared, args, p)
}

// AccumulateReflectionsPartial queues the accumulate_reflections launch of
// in's rows on s, adding into p (ReflShape). Wedge collection has one
// global event buffer and is refused here: it runs through
// AccumulateReflections.
func (b *BVH) AccumulateReflectionsPartial(s *launch.Stream, in ReflAccumLaunch, p RFPartial) error {
	return b.accumulateReflectionsPartial(rfStream{s}, in, p)
}

func (b *BVH) accumulateReflectionsPartial(run rfRunner, in ReflAccumLaunch, p RFPartial) error {
	if in.Options.CollectWedges {
		return fmt.Errorf("accel: AccumulateReflectionsPartial cannot collect wedge events")
	}
	cells, err := checkReflAccum(in)
	if err != nil {
		return err
	}
	if err := p.check(ReflShape(cells)); err != nil {
		return err
	}
	return b.launchReflPartial(run, in, p, cells)
}

func (b *BVH) launchReflPartial(run rfRunner, in ReflAccumLaunch, p RFPartial, cells int) error {
	if in.N == 0 {
		return nil
	}
	args, shared := b.reflAccumArgs(in, nil, cells)
	return b.runPartial(run, ModuleRFRefl, "rf_accum_reflections", in.N, shared, args, p)
}

// runPartial launches entry (of this BVH's node layout) over lanes with
// args followed by p's accumulators.
func (b *BVH) runPartial(run rfRunner, module, entry string, lanes int, shared uint32, args []any, p RFPartial) error {
	args = append(args, p.Acc, p.Ints)
	entry = b.entry(entry)
	grid, err := b.rfWaveGrid(run, module, entry, lanes, shared)
	if err != nil {
		return err
	}
	return run.launchShared(module, entry, grid, launch.Threads(TraceThreads), shared, args...)
}
