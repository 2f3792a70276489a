package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// Compact intersect records: Intersect split in two, for moving hits between
// devices. IntersectCompact runs the traversal and writes 16 bytes per row;
// ExpandHits rebuilds Intersect's record (spec §1.6) from them on any BVH
// built from the same tables with the same Options. The build is
// deterministic, so triangle slots agree between such BVHs, and both halves
// write through the kernels' one epilogue, so the expanded record is bitwise
// Intersect's.

// CompactWords is the size of one compact record in uint32 words (16 bytes):
//
//	word 0  t as float32 bits (+Inf on a miss)
//	word 1  u as float32 bits (weight of v1; 0 on a miss)
//	word 2  v as float32 bits (weight of v2; 0 on a miss)
//	word 3  slot: the hit triangle's index in the BVH's leaf order
//	        (Layout.Triangle), CompactMiss on a miss
const CompactWords = 4

// CompactMiss is the slot of a compact record that missed.
const CompactMiss = 0xffffffff

// compactAlign is the alignment the kernels' 16-byte loads and stores need.
const compactAlign = 16

// IntersectCompact queues the traversal of Intersect for r on s (the same
// tmin, tmax, active rows, non-finite rows and persistent counter) and
// writes one compact record per row into out, which holds at least
// CompactWords·N words and starts on a 16-byte boundary (Alloc does; a View
// must start at a multiple of 4 words).
func (b *BVH) IntersectCompact(s *launch.Stream, r Rays, out *launch.Buffer[uint32]) error {
	return b.intersectCompact(streamRunner{s}, r, out)
}

func (b *BVH) intersectCompact(run runner, r Rays, out *launch.Buffer[uint32]) error {
	if err := r.check(); err != nil {
		return err
	}
	if err := checkCompact("IntersectCompact out", out, r.N); err != nil {
		return err
	}
	if r.N == 0 {
		return nil
	}
	return b.launchIntersectCompact(run, r, out)
}

// launchIntersectCompact queues rayd_intersect_compact for checked arguments.
func (b *BVH) launchIntersectCompact(run runner, r Rays, out *launch.Buffer[uint32]) error {
	g, counter, err := b.grid(run, r.N, r.Counter, r.PersistentBlocks)
	if err != nil {
		return err
	}
	k := &kernelLauncher{r: run, module: ModuleTrace}
	k.run(b.walkEntry("rayd_intersect_compact", counter, false), g, launch.Threads(TraceThreads), b.nodes, b.tris, int32(b.numTris),
		r.O, r.D, nullable(r.TMax), nullable(r.Active), int32(r.N), out, counter)
	return k.err
}

// ExpandHits queues, on s, the rebuilding of Intersect's record for r from
// compact (CompactWords·N words from IntersectCompact over a BVH built from
// the same tables with the same Options, on this device or copied from
// another; 16-byte aligned). flags and out as Intersect: every field written
// is bitwise the one Intersect writes for the same rays, misses included.
// Only r.O and r.D are read (and only for the rows whose p is written);
// r.TMax, r.Active and r.Counter took effect in IntersectCompact. A slot
// outside the BVH's triangles is a miss.
func (b *BVH) ExpandHits(s *launch.Stream, r Rays, compact *launch.Buffer[uint32], flags geom.Flags, out Hits) error {
	return b.expandHits(streamRunner{s}, r, compact, flags, out)
}

func (b *BVH) expandHits(run runner, r Rays, compact *launch.Buffer[uint32], flags geom.Flags, out Hits) error {
	if err := checkIntersect(r, flags, out); err != nil {
		return err
	}
	if err := checkCompact("ExpandHits compact", compact, r.N); err != nil {
		return err
	}
	if r.N == 0 {
		return nil
	}
	return b.launchExpandHits(run, r, compact, flags, out)
}

// launchExpandHits queues rayd_expand_hits for checked arguments.
func (b *BVH) launchExpandHits(run runner, r Rays, compact *launch.Buffer[uint32], flags geom.Flags, out Hits) error {
	n := r.N
	k := &kernelLauncher{r: run, module: ModuleTrace}
	k.run("rayd_expand_hits", launch.Blocks(n, TraceThreads), launch.Threads(TraceThreads), b.tris, int32(b.numTris),
		r.O, r.D, compact, int32(n), uint32(flags), out.T, nullable(out.P), nullable(out.N), nullable(out.GeoN),
		nullable(out.UV), nullable(out.Bary), nullable(out.ShapeID), nullable(out.PrimID), nullable(out.LocalPrimID),
		nullable(out.GlobalPrimID))
	return k.err
}

// checkCompact requires a compact record buffer of n rows on a 16-byte
// boundary.
func checkCompact(what string, b *launch.Buffer[uint32], n int) error {
	if b == nil {
		return fmt.Errorf("accel: %s is required", what)
	}
	if err := needLen(what, b, CompactWords*n); err != nil {
		return err
	}
	if b.Addr()%compactAlign != 0 {
		return fmt.Errorf("accel: %s at %#x is not %d-byte aligned", what, b.Addr(), compactAlign)
	}
	return nil
}
