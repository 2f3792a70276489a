package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// The steps of Reorderer.Intersect, exported so that each can be queued and
// timed alone. They run in order on one stream: Keys, Sort, Gather,
// IntersectSorted, Scatter, each for the same rays (N rows).

// Keys queues on s the sort key of each ray of rays and its row number:
// the origins' bounding box (rayd_reorder_bounds) and the keys
// (rayd_reorder_keys), into the Reorderer's key and value arrays.
func (r *Reorderer) Keys(s *launch.Stream, rays Rays) error {
	if err := r.checkRays(s, rays); err != nil || rays.N == 0 {
		return err
	}
	return r.keysOn(streamRunner{s}, rays)
}

// Sort queues on s the stable radix sort (RadixSort) of the first n keys
// of the last Keys with their row numbers: Order then holds the
// permutation.
func (r *Reorderer) Sort(s *launch.Stream, n int) error {
	if err := r.checkRays(s, Rays{O: r.o, D: r.dir, N: n}); err != nil || n == 0 {
		return err
	}
	return radixSortOn(streamRunner{s}, r.keys, r.vals, n, r.sort)
}

// Gather queues on s the sorted rays: row j is row Order[j] of rays (the
// origins, directions and each optional column rays holds).
func (r *Reorderer) Gather(s *launch.Stream, rays Rays) error {
	if err := r.checkRays(s, rays); err != nil || rays.N == 0 {
		return err
	}
	return r.gatherOn(streamRunner{s}, rays)
}

// IntersectSorted queues on s bvh.Intersect of the gathered rays (the
// launch of rays: its Counter and PersistentBlocks) into the Reorderer's
// sorted hit record, writing the columns out holds (out itself is not
// written).
func (r *Reorderer) IntersectSorted(s *launch.Stream, bvh *BVH, rays Rays, flags geom.Flags, out Hits) error {
	if err := r.check(s, bvh, rays, flags, out); err != nil || rays.N == 0 {
		return err
	}
	return bvh.launchIntersect(streamRunner{s}, r.sorted(rays), flags, r.sortedHits(out), false)
}

// Scatter queues on s the sorted hit record back into out in ray order:
// row Order[j] of each column that out holds and flags select is row j of
// its sorted column. n and out are IntersectSorted's.
func (r *Reorderer) Scatter(s *launch.Stream, n int, flags geom.Flags, out Hits) error {
	rays := Rays{O: r.o, D: r.dir, N: n}
	if err := r.checkRays(s, rays); err != nil {
		return err
	}
	if err := checkIntersect(rays, flags, out); err != nil {
		return fmt.Errorf("%w: %w", ErrReorderArgument, err)
	}
	if n == 0 {
		return nil
	}
	return r.scatterOn(streamRunner{s}, n, flags, out)
}

// keysOn queues the box and the keys of rays on run.
func (r *Reorderer) keysOn(run runner, rays Rays) error {
	if err := run.memset32(r.box, 0xffffffff); err != nil {
		return err
	}
	k := &kernelLauncher{r: run, module: ModuleReorder}
	blocks := min((rays.N+reorderThreads-1)/reorderThreads, reorderBoundsBlocks)
	k.run("rayd_reorder_bounds", launch.Blocks(max(blocks, 1), 1), launch.Threads(reorderThreads), rays.O, int32(rays.N), r.box)
	grid, blk := threads1D(rays.N, reorderThreads)
	k.run("rayd_reorder_keys", grid, blk, rays.O, rays.D, int32(rays.N), r.box, r.keys, r.vals)
	return k.err
}

// gatherOn queues the gather of rays into the sorted rays on run.
func (r *Reorderer) gatherOn(run runner, rays Rays) error {
	sorted := r.sorted(rays)
	k := &kernelLauncher{r: run, module: ModuleReorder}
	grid, blk := threads1D(rays.N, reorderThreads)
	k.run("rayd_reorder_gather", grid, blk, r.vals, int32(rays.N), rays.O, rays.D,
		nullable(rays.TMax), nullable(rays.Active), nullable(rays.TMin), nullable(rays.Mask),
		sorted.O, sorted.D, nullable(sorted.TMax), nullable(sorted.Active), nullable(sorted.TMin), nullable(sorted.Mask))
	return k.err
}

// scatterOn queues the scatter of the sorted hit record into out on run:
// a column is moved when flags select it and out holds it.
func (r *Reorderer) scatterOn(run runner, n int, flags geom.Flags, out Hits) error {
	src, dst := r.sortedHits(selected(out, flags)), selected(out, flags)
	k := &kernelLauncher{r: run, module: ModuleReorder}
	grid, blk := threads1D(n, reorderThreads)
	k.run("rayd_reorder_scatter_hits", grid, blk, r.vals, int32(n),
		src.T, nullable(src.P), nullable(src.N), nullable(src.GeoN), nullable(src.UV), nullable(src.Bary),
		nullable(src.ShapeID), nullable(src.PrimID), nullable(src.LocalPrimID), nullable(src.GlobalPrimID),
		dst.T, nullable(dst.P), nullable(dst.N), nullable(dst.GeoN), nullable(dst.UV), nullable(dst.Bary),
		nullable(dst.ShapeID), nullable(dst.PrimID), nullable(dst.LocalPrimID), nullable(dst.GlobalPrimID))
	return k.err
}

// sorted is the gathered batch of rays: the Reorderer's columns where rays
// holds one, and rays' launch (counter, persistent grid).
func (r *Reorderer) sorted(rays Rays) Rays {
	out := Rays{O: r.o, D: r.dir, N: rays.N, Counter: rays.Counter, PersistentBlocks: rays.PersistentBlocks}
	if rays.TMax != nil {
		out.TMax = r.tmax
	}
	if rays.Active != nil {
		out.Active = r.active
	}
	if rays.TMin != nil {
		out.TMin = r.tmin
	}
	if rays.Mask != nil {
		out.Mask = r.mask
	}
	return out
}

// sortedHits is the Reorderer's hit record with the columns out holds.
func (r *Reorderer) sortedHits(out Hits) Hits {
	h := Hits{T: r.hits.T}
	pick := func(dst **launch.Buffer[float32], have, src *launch.Buffer[float32]) {
		if have != nil {
			*dst = src
		}
	}
	pickID := func(dst **launch.Buffer[int32], have, src *launch.Buffer[int32]) {
		if have != nil {
			*dst = src
		}
	}
	pick(&h.P, out.P, r.hits.P)
	pick(&h.N, out.N, r.hits.N)
	pick(&h.GeoN, out.GeoN, r.hits.GeoN)
	pick(&h.UV, out.UV, r.hits.UV)
	pick(&h.Bary, out.Bary, r.hits.Bary)
	pickID(&h.ShapeID, out.ShapeID, r.hits.ShapeID)
	pickID(&h.PrimID, out.PrimID, r.hits.PrimID)
	pickID(&h.LocalPrimID, out.LocalPrimID, r.hits.LocalPrimID)
	pickID(&h.GlobalPrimID, out.GlobalPrimID, r.hits.GlobalPrimID)
	return h
}

// selected is out without the columns flags do not select (the intersect
// writes t always, the geometric columns with FlagGeometric, the shading
// normal with FlagShadingN, uv with FlagUV).
func selected(out Hits, flags geom.Flags) Hits {
	h := Hits{T: out.T}
	if flags.Has(geom.FlagGeometric) {
		h.P, h.GeoN, h.Bary = out.P, out.GeoN, out.Bary
		h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID = out.ShapeID, out.PrimID, out.LocalPrimID, out.GlobalPrimID
	}
	if flags.Has(geom.FlagShadingN) {
		h.N = out.N
	}
	if flags.Has(geom.FlagUV) {
		h.UV = out.UV
	}
	return h
}
