package accel

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// ModuleReorder is the PTX module of the ray reordering kernels
// (reorder.cu): the origins' box, the sort keys, the gather of the rays
// and the scatter of the hit records back to ray order.
const ModuleReorder = "reorder"

// reorderThreads is the block size of the reordering kernels (reorder.cu's
// REORDER_THREADS).
const reorderThreads = 256

// reorderBoundsBlocks caps the grid of rayd_reorder_bounds (grid-stride).
const reorderBoundsBlocks = 1024

// boxWords is the length of the origins' box record of rayd_reorder_bounds.
const boxWords = 9

// ErrReorderArgument is returned (wrapped) by NewReorderer and the
// Reorderer's methods for arguments they cannot run with: a nil device,
// stream, BVH or Reorderer, a closed Reorderer, a stream or BVH of another
// device than the Reorderer's, a batch larger than the Reorderer's
// capacity, or rays and hits the intersect would refuse.
var ErrReorderArgument = errors.New("accel: invalid ray reordering argument")

// Reorderer runs a query on rays sorted for coherence and returns the
// records in the caller's ray order. It owns the device scratch for up to
// Cap rays: the sort keys and row numbers, the radix sort's scratch, the
// sorted rays (every optional column) and the sorted hit record (every
// column, 76 bytes a ray).
//
// The order is the stable ascending sort of a 32-bit key per ray: the
// direction's octant (bit 31 x < 0, bit 30 y < 0, bit 29 z < 0) above the
// 30-bit Morton code, x highest, of the origin quantized to 1024 cells per
// axis of the origins' bounding box, less its lowest bit. The steps are
// Keys, Sort, Gather, IntersectSorted and Scatter, in that order on one
// stream; Intersect queues them all. A Reorderer serves one stream at a
// time: a second batch queued before the first has finished would
// overwrite its scratch.
//
// It does not pay end to end for the full record: on an H200 (compute
// scene, 4,194,304 incoherent rays, 4-wide BVH) Intersect took 12.57 ms
// against 8.78 ms for the plain intersect, of which 3.98 ms went to
// scattering the 76-byte records back to ray order, while the intersect
// on the sorted rays took 7.98 ms (benchmarks/results/geometry-h200.json
// at ed1caa0, configs[compute].reorder). No query reorders by default; a
// caller that can use the records in sorted order (Order gives the
// permutation) saves the scatter.
type Reorderer struct {
	d          *launch.Device
	n          int
	box        *launch.Buffer[uint32]
	keys, vals *launch.Buffer[uint32]
	sort       *RadixSortScratch
	// The sorted rays and hit record.
	o, dir, tmax, tmin *launch.Buffer[float32]
	active, mask       *launch.Buffer[uint8]
	hits               Hits
	closed             bool
}

// NewReorderer allocates on d the scratch to reorder batches of up to n
// rays (1 ≤ n ≤ 2^31 − 32). Close frees it.
func NewReorderer(d *launch.Device, n int) (r *Reorderer, err error) {
	if n < 1 || n > maxRays {
		return nil, fmt.Errorf("%w: scratch for %d rays (1..%d)", ErrReorderArgument, n, maxRays)
	}
	if d == nil {
		return nil, fmt.Errorf("%w: nil device", ErrReorderArgument)
	}
	r = &Reorderer{d: d, n: n}
	defer func() {
		if err != nil {
			_ = r.Close()
			r = nil
		}
	}()
	if r.sort, err = NewRadixSortScratch(d, n); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		b   **launch.Buffer[uint32]
		len int
	}{{&r.box, boxWords}, {&r.keys, n}, {&r.vals, n}} {
		if *p.b, err = launch.Alloc[uint32](d, p.len); err != nil {
			return nil, err
		}
	}
	for _, p := range []struct {
		b   **launch.Buffer[float32]
		len int
	}{{&r.o, 3 * n}, {&r.dir, 3 * n}, {&r.tmax, n}, {&r.tmin, n}, {&r.hits.T, n}, {&r.hits.P, 3 * n},
		{&r.hits.N, 3 * n}, {&r.hits.GeoN, 3 * n}, {&r.hits.UV, 2 * n}, {&r.hits.Bary, 3 * n}} {
		if *p.b, err = launch.Alloc[float32](d, p.len); err != nil {
			return nil, err
		}
	}
	for _, b := range []**launch.Buffer[uint8]{&r.active, &r.mask} {
		if *b, err = launch.Alloc[uint8](d, n); err != nil {
			return nil, err
		}
	}
	for _, b := range []**launch.Buffer[int32]{&r.hits.ShapeID, &r.hits.PrimID, &r.hits.LocalPrimID, &r.hits.GlobalPrimID} {
		if *b, err = launch.Alloc[int32](d, n); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// maxRays is the largest ray batch a query takes (Rays' row limit).
const maxRays = 1<<31 - 1 - 31

// Cap is the most rays a batch may hold.
func (r *Reorderer) Cap() int { return r.n }

// Order is the permutation of the last Sort: row j of the sorted batch is
// ray Order[j] of the caller's (the first N elements; valid once the Sort
// queued on the stream has run).
func (r *Reorderer) Order() *launch.Buffer[uint32] { return r.vals }

// Close frees the scratch; the caller must ensure no queued step still uses
// it. Idempotent, and a no-op on nil.
func (r *Reorderer) Close() error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	err := r.sort.Close()
	for _, b := range []*launch.Buffer[uint32]{r.box, r.keys, r.vals} {
		err = errors.Join(err, closeBuf(b))
	}
	for _, b := range []*launch.Buffer[float32]{r.o, r.dir, r.tmax, r.tmin, r.hits.T, r.hits.P, r.hits.N,
		r.hits.GeoN, r.hits.UV, r.hits.Bary} {
		err = errors.Join(err, closeBuf(b))
	}
	for _, b := range []*launch.Buffer[uint8]{r.active, r.mask} {
		err = errors.Join(err, closeBuf(b))
	}
	for _, b := range []*launch.Buffer[int32]{r.hits.ShapeID, r.hits.PrimID, r.hits.LocalPrimID, r.hits.GlobalPrimID} {
		err = errors.Join(err, closeBuf(b))
	}
	return err
}

// closeBuf closes b unless it is nil.
func closeBuf[T launch.Elem](b *launch.Buffer[T]) error {
	if b == nil {
		return nil
	}
	return b.Close()
}

// Intersect queues on s the closest-hit query of BVH.Intersect for rays on
// rays sorted by the Reorderer's key and writes out in the caller's ray
// order: Keys, Sort, Gather, IntersectSorted (the same kernel and launch as
// bvh.Intersect(s, rays, flags, out): persistent when rays.Counter is set)
// and Scatter. Every column out holds and flags select is written, bit for
// bit what bvh.Intersect writes; no host synchronization.
func (r *Reorderer) Intersect(s *launch.Stream, bvh *BVH, rays Rays, flags geom.Flags, out Hits) error {
	if err := r.check(s, bvh, rays, flags, out); err != nil || rays.N == 0 {
		return err
	}
	return r.intersectOn(streamRunner{s}, bvh, rays, flags, out)
}

// intersectOn queues the whole reordered intersect on run for checked
// arguments.
func (r *Reorderer) intersectOn(run runner, bvh *BVH, rays Rays, flags geom.Flags, out Hits) error {
	for _, step := range []func() error{
		func() error { return r.keysOn(run, rays) },
		func() error { return radixSortOn(run, r.keys, r.vals, rays.N, r.sort) },
		func() error { return r.gatherOn(run, rays) },
		func() error { return bvh.launchIntersect(run, r.sorted(rays), flags, r.sortedHits(out), false) },
		func() error { return r.scatterOn(run, rays.N, flags, out) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// check is the argument check of Intersect (and, with a nil bvh allowed
// where noted, of the steps).
func (r *Reorderer) check(s *launch.Stream, bvh *BVH, rays Rays, flags geom.Flags, out Hits) error {
	if bvh == nil {
		return fmt.Errorf("%w: nil BVH", ErrReorderArgument)
	}
	if err := r.checkRays(s, rays); err != nil {
		return err
	}
	if bvh.Device() != r.d {
		return fmt.Errorf("%w: BVH of another device", ErrReorderArgument)
	}
	if err := checkIntersect(rays, flags, out); err != nil {
		return fmt.Errorf("%w: %w", ErrReorderArgument, err)
	}
	return nil
}

// checkRays checks the Reorderer, the stream and the batch.
func (r *Reorderer) checkRays(s *launch.Stream, rays Rays) error {
	switch {
	case r == nil:
		return fmt.Errorf("%w: nil Reorderer", ErrReorderArgument)
	case r.closed:
		return fmt.Errorf("%w: closed Reorderer", ErrReorderArgument)
	case s == nil:
		return fmt.Errorf("%w: nil stream", ErrReorderArgument)
	case s.Device() != r.d:
		return fmt.Errorf("%w: stream of another device", ErrReorderArgument)
	case rays.N > r.n:
		return fmt.Errorf("%w: %d rays, scratch for %d", ErrReorderArgument, rays.N, r.n)
	}
	if err := rays.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrReorderArgument, err)
	}
	return nil
}
