package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// TraceThreads is the block size of the query kernels (their
// __launch_bounds__).
const TraceThreads = 128

// Rays is a device-resident ray batch of N rows.
type Rays struct {
	O, D   *launch.Buffer[float32] // 3N each (directions not normalized)
	TMax   *launch.Buffer[float32] // N, or nil (intersect: FLT_MAX; reflections: 1e8)
	Active *launch.Buffer[uint8]   // N, or nil (all active)
	// TMin and Mask are the optional per-ray limits (masks.go): N each, or
	// nil (the query's epsilon; mask 0xFF). Either selects the masked
	// kernels.
	TMin *launch.Buffer[float32]
	Mask *launch.Buffer[uint8]
	N    int
	// Counter, when set (one element), makes the launch persistent: a grid
	// sized to the device whose warps take 32-row batches from *Counter. The
	// launcher zeroes it on the stream first, so one Counter must not be
	// shared by launches that may run concurrently.
	Counter *launch.Buffer[uint32]
	// PersistentBlocks is the grid of a persistent launch (0: 8 blocks of
	// TraceThreads per multiprocessor of the device).
	PersistentBlocks int
}

// Hits is the device-resident intersection record (spec §1.6). T is
// required; any other field may be nil, and a field is written only when
// flags select it and it is not nil.
type Hits struct {
	T, P, N, GeoN, UV, Bary                    *launch.Buffer[float32]
	ShapeID, PrimID, LocalPrimID, GlobalPrimID *launch.Buffer[int32]
}

// Reflections is the device-resident record of trace_reflections (spec
// §3.1) for N rows and B bounces: slot i·B + b. Images may be nil.
type Reflections struct {
	Valid  *launch.Buffer[uint8]   // N·B
	T      *launch.Buffer[float32] // N·B
	Prim   *launch.Buffer[int32]   // N·B
	Images *launch.Buffer[float32] // 3·N·B or nil
}

// Segments is a device-resident batch of N segments for Visible.
type Segments struct {
	Start, End *launch.Buffer[float32] // 3N each
	Active     *launch.Buffer[uint8]   // N or nil
	N          int
	Counter    *launch.Buffer[uint32] // as Rays.Counter
	// PersistentBlocks as Rays.PersistentBlocks.
	PersistentBlocks int
}

// entry is the name of a query kernel for the BVH's node layout.
func (b *BVH) entry(base string) string {
	switch b.opt.Width {
	case 4:
		return base + "4"
	case 8:
		return base + "8"
	}
	return base
}

// needLen checks that a non-nil buffer holds at least want elements.
func needLen[T launch.Elem](what string, b *launch.Buffer[T], want int) error {
	if b != nil && b.Len() < want {
		return fmt.Errorf("accel: %s holds %d elements, needs %d", what, b.Len(), want)
	}
	return nil
}

func (r *Rays) check() error {
	if r.N < 0 || r.N > 1<<31-1-31 {
		return fmt.Errorf("accel: ray count %d out of range", r.N)
	}
	if r.O == nil || r.D == nil {
		return fmt.Errorf("accel: Rays.O and Rays.D are required")
	}
	for _, e := range []error{needLen("Rays.O", r.O, 3*r.N), needLen("Rays.D", r.D, 3*r.N),
		needLen("Rays.TMax", r.TMax, r.N), needLen("Rays.Active", r.Active, r.N), needLen("Rays.Counter", r.Counter, 1),
		needLen("Rays.TMin", r.TMin, r.N), needLen("Rays.Mask", r.Mask, r.N)} {
		if e != nil {
			return e
		}
	}
	return nil
}

// defaultSMs is the multiprocessor count assumed when the device does not
// report one (an H200 has 132).
const defaultSMs = 132

// grid returns the launch shape and the counter argument of a query.
func (b *BVH) grid(r runner, n int, counter *launch.Buffer[uint32], blocks int) (launch.Dim3, any, error) {
	if counter == nil {
		return launch.Blocks(n, TraceThreads), launch.Null, nil
	}
	if err := r.memset32(counter, 0); err != nil {
		return launch.Dim3{}, nil, err
	}
	if blocks <= 0 {
		blocks = 8 * max(b.sms, 1)
	}
	return launch.Blocks(blocks, 1), counter, nil
}

// Intersect queues the closest-hit query of spec §2.1 for r on s (tmin 1e-6,
// ties at equal t to the lowest global prim id) and writes out.
func (b *BVH) Intersect(s *launch.Stream, r Rays, flags geom.Flags, out Hits) error {
	return b.intersect(streamRunner{s}, r, flags, out, false)
}

// IntersectBrute is Intersect by a loop over every triangle (for tests: a BVH
// must give identical records). Rays.Counter is ignored.
func (b *BVH) IntersectBrute(s *launch.Stream, r Rays, flags geom.Flags, out Hits) error {
	return b.intersect(streamRunner{s}, r, flags, out, true)
}

func (b *BVH) intersect(run runner, r Rays, flags geom.Flags, out Hits, brute bool) error {
	if err := checkIntersect(r, flags, out); err != nil {
		return err
	}
	n := r.N
	if n == 0 {
		return nil
	}
	return b.launchIntersect(run, r, flags, out, brute)
}

// launchIntersect queues rayd_intersect or rayd_intersect_brute for checked
// arguments.
func (b *BVH) launchIntersect(run runner, r Rays, flags geom.Flags, out Hits, brute bool) error {
	n := r.N
	k := &kernelLauncher{r: run, module: ModuleTrace}
	outs := []any{out.T, nullable(out.P), nullable(out.N), nullable(out.GeoN), nullable(out.UV), nullable(out.Bary),
		nullable(out.ShapeID), nullable(out.PrimID), nullable(out.LocalPrimID), nullable(out.GlobalPrimID)}
	if brute {
		if b.maskedFor(r) {
			return errBruteMasked
		}
		args := append([]any{b.tris, int32(b.numTris), r.O, r.D, nullable(r.TMax), nullable(r.Active), int32(n), uint32(flags)}, outs...)
		k.run("rayd_intersect_brute", launch.Blocks(n, TraceThreads), launch.Threads(TraceThreads), args...)
		return k.err
	}
	g, counter, err := b.grid(run, n, r.Counter, r.PersistentBlocks)
	if err != nil {
		return err
	}
	args := append([]any{b.nodes, b.tris, int32(b.numTris), r.O, r.D, nullable(r.TMax), nullable(r.Active), int32(n), uint32(flags)}, outs...)
	args = append(args, counter)
	if b.maskedFor(r) {
		args = append(args, b.maskArgs(r)...)
		k.run(b.walkEntry("rayd_intersect_masked", counter, false), g, launch.Threads(TraceThreads), args...)
		return k.err
	}
	k.run(b.walkEntry("rayd_intersect", counter, false), g, launch.Threads(TraceThreads), args...)
	return k.err
}

// TraceReflections queues trace_reflections (spec §3.2) for r with
// maxBounces ≥ 1 bounces on s.
func (b *BVH) TraceReflections(s *launch.Stream, r Rays, maxBounces int, out Reflections) error {
	return b.traceReflections(streamRunner{s}, r, maxBounces, out)
}

func (b *BVH) traceReflections(run runner, r Rays, maxBounces int, out Reflections) error {
	if maxBounces < 1 {
		return fmt.Errorf("accel: maxBounces %d, must be at least 1", maxBounces)
	}
	if err := r.check(); err != nil {
		return err
	}
	if out.Valid == nil || out.T == nil || out.Prim == nil {
		return fmt.Errorf("accel: Reflections.Valid, T and Prim are required")
	}
	slots := r.N * maxBounces
	for _, e := range []error{needLen("Reflections.Valid", out.Valid, slots), needLen("Reflections.T", out.T, slots),
		needLen("Reflections.Prim", out.Prim, slots), needLen("Reflections.Images", out.Images, 3*slots)} {
		if e != nil {
			return e
		}
	}
	if r.N == 0 {
		return nil
	}
	return b.launchReflections(run, r, maxBounces, out)
}

func (b *BVH) launchReflections(run runner, r Rays, maxBounces int, out Reflections) error {
	g, counter, err := b.grid(run, r.N, r.Counter, r.PersistentBlocks)
	if err != nil {
		return err
	}
	k := &kernelLauncher{r: run, module: ModuleTrace}
	args := []any{b.nodes, b.tris, int32(b.numTris), r.O, r.D, nullable(r.TMax), nullable(r.Active), int32(r.N),
		int32(maxBounces), out.Valid, out.T, out.Prim, nullable(out.Images), counter}
	if b.maskedFor(r) {
		k.run(b.walkEntry("rayd_trace_reflections_masked", counter, true), g, launch.Threads(TraceThreads), append(args, b.maskArgs(r)...)...)
		return k.err
	}
	k.run(b.walkEntry("rayd_trace_reflections", counter, true), g, launch.Threads(TraceThreads), args...)
	return k.err
}

// Visible queues visible(start, end) (spec §4.1) on s: out[i] = 1 when the
// segment is unobstructed, 0 when blocked or inactive.
func (b *BVH) Visible(s *launch.Stream, seg Segments, out *launch.Buffer[uint8]) error {
	return b.visible(streamRunner{s}, seg, out)
}

func (b *BVH) visible(run runner, seg Segments, out *launch.Buffer[uint8]) error {
	if seg.N < 0 || seg.N > 1<<31-1-31 {
		return fmt.Errorf("accel: segment count %d out of range", seg.N)
	}
	if seg.Start == nil || seg.End == nil || out == nil {
		return fmt.Errorf("accel: Segments.Start, Segments.End and out are required")
	}
	for _, e := range []error{needLen("Segments.Start", seg.Start, 3*seg.N), needLen("Segments.End", seg.End, 3*seg.N),
		needLen("Segments.Active", seg.Active, seg.N), needLen("Visible out", out, seg.N),
		needLen("Segments.Counter", seg.Counter, 1)} {
		if e != nil {
			return e
		}
	}
	if seg.N == 0 {
		return nil
	}
	return b.launchVisible(run, seg, out)
}

func (b *BVH) launchVisible(run runner, seg Segments, out *launch.Buffer[uint8]) error {
	g, counter, err := b.grid(run, seg.N, seg.Counter, seg.PersistentBlocks)
	if err != nil {
		return err
	}
	k := &kernelLauncher{r: run, module: ModuleTrace}
	args := []any{b.nodes, b.tris, int32(b.numTris), seg.Start, seg.End, nullable(seg.Active), int32(seg.N), out, counter}
	if b.faceMask != nil {
		k.run(b.walkEntry("rayd_visible_masked", counter, true), g, launch.Threads(TraceThreads), append(args, b.faceMask)...)
		return k.err
	}
	k.run(b.walkEntry("rayd_visible", counter, true), g, launch.Threads(TraceThreads), args...)
	return k.err
}

// checkIntersect validates an intersect call's rays, flags and output
// record (both backends write the same record).
func checkIntersect(r Rays, flags geom.Flags, out Hits) error {
	if err := r.check(); err != nil {
		return err
	}
	if !flags.Valid() {
		return fmt.Errorf("accel: flags %#x outside FlagsAll", uint32(flags))
	}
	if out.T == nil {
		return fmt.Errorf("accel: Hits.T is required")
	}
	n := r.N
	for _, e := range []error{needLen("Hits.T", out.T, n), needLen("Hits.P", out.P, 3*n), needLen("Hits.N", out.N, 3*n),
		needLen("Hits.GeoN", out.GeoN, 3*n), needLen("Hits.UV", out.UV, 2*n), needLen("Hits.Bary", out.Bary, 3*n),
		needLen("Hits.ShapeID", out.ShapeID, n), needLen("Hits.PrimID", out.PrimID, n),
		needLen("Hits.LocalPrimID", out.LocalPrimID, n), needLen("Hits.GlobalPrimID", out.GlobalPrimID, n)} {
		if e != nil {
			return e
		}
	}
	return nil
}
