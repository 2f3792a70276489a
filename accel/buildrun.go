package accel

import (
	"github.com/rayd-go/rayd/launch"
)

// Device build constants (mirror ptx/src/bvh_build.cu and rayd.cuh).
const (
	radixDigits  = 1 << RadixBits
	radixTile    = 4096 // keys per radix tile (256 threads × 16)
	radixThreads = 256
	scanTile     = 2048 // elements per scan tile (256 threads × 8)
	scanThreads  = 256
	buildThreads = 256
	statusWords  = 16
	statusFlags  = 0
	statusNodes  = 1
	statusHeight = 2
)

// runner is where kernels go: a stream of a device, or a recorder in the
// CPU tests that checks every launch against the kernels' CUDA signatures.
type runner interface {
	launch(module, entry string, grid, block launch.Dim3, args ...any) error
	memset32(b *launch.Buffer[uint32], v uint32) error
	zero(b zeroer) error
}

// zeroer is a buffer of any element type that can be cleared.
type zeroer interface {
	Memset8(s *launch.Stream, v uint8) error
}

// streamRunner launches on a stream.
type streamRunner struct{ s *launch.Stream }

func (r streamRunner) launch(module, entry string, grid, block launch.Dim3, args ...any) error {
	k, err := r.s.Device().Kernel(module, entry)
	if err != nil {
		return err
	}
	return k.Launch(r.s, grid, block, 0, args...)
}

func (r streamRunner) memset32(b *launch.Buffer[uint32], v uint32) error { return b.Memset32(r.s, v) }

func (r streamRunner) zero(b zeroer) error { return b.Memset8(r.s, 0) }

// kernelLauncher launches entry points of one module and keeps the first
// error.
type kernelLauncher struct {
	r      runner
	module string
	err    error
}

func (l *kernelLauncher) run(entry string, grid, block launch.Dim3, args ...any) {
	if l.err == nil {
		l.err = l.r.launch(l.module, entry, grid, block, args...)
	}
}

// threads1D is a grid of ceil(n/block) blocks of block threads (≥ 1 block).
func threads1D(n, block int) (launch.Dim3, launch.Dim3) {
	return launch.Blocks(n, block), launch.Threads(block)
}

// nullable passes a possibly nil buffer as a kernel pointer.
func nullable[T launch.Elem](b *launch.Buffer[T]) any {
	if b == nil {
		return launch.Null
	}
	return b
}

// runBuild queues the whole device build on r (see bvh_build.cu for the
// order and each kernel's contract). No host synchronization.
func (b *BVH) runBuild(r runner, tiles, histTiles, idxTiles int) error {
	v := &b.kept
	n := b.numTris
	g := b.geo
	k := &kernelLauncher{r: r, module: ModuleBuild}
	k.run("rayd_bvh_init", launch.Blocks(1, 32), launch.Threads(32), v.status)
	grid, blk := threads1D(n, buildThreads)
	k.run("rayd_bvh_face_bounds", grid, blk, g.Vertices, g.Faces, int32(n), v.faceBoxes, v.status)
	k.run("rayd_bvh_morton", grid, blk, v.faceBoxes, int32(n), v.status, v.keys, v.vals)
	queueRadixSort(k, v.keys, v.vals, v.keys2, v.vals2, v.hist, v.histSums, n, tiles, histTiles)
	// The sorted pairs are back in keys/vals.
	gi, bi := threads1D(max(n-1, 1), buildThreads)
	k.run("rayd_bvh_karras", gi, bi, v.keys, int32(n), v.child, v.parent, v.first, v.count, v.counter)
	k.run("rayd_bvh_bottom_up", grid, blk, v.faceBoxes, v.vals, int32(n), v.child, v.parent, v.count, v.counter,
		v.nodeBox, v.cost, v.info, v.status, int32(b.opt.MaxLeafSize), b.opt.TraversalCost, b.opt.IntersectCost, int32(0))
	if b.opt.Width == 8 {
		b.runCollapseWide(k, v, n)
		return k.err
	}
	mark, emit := "rayd_bvh_mark", "rayd_bvh_emit"
	if b.opt.Width == 4 {
		mark, emit = "rayd_bvh_mark_quad", "rayd_bvh_emit_quad"
	}
	if n > 1 {
		k.run(mark, gi, bi, int32(n), v.parent, v.count, v.info, int32(b.opt.MaxLeafSize), v.flags)
		k.run("rayd_scan_tiles", launch.Blocks(idxTiles, 1), launch.Threads(scanThreads), v.flags, v.idx, int32(n-1), v.idxSums)
		k.run("rayd_scan_sums", launch.Blocks(1, 1), launch.Threads(1024), v.idxSums, int32(idxTiles))
	}
	k.run(emit, gi, bi, int32(n), v.child, v.first, v.count, v.info, v.flags, v.idx, v.idxSums,
		v.nodeBox, b.nodes, v.status)
	k.run("rayd_bvh_write_tris", grid, blk, g.Vertices, g.Faces, nullable(g.FaceShape), nullable(g.FaceLocal),
		v.vals, int32(n), b.tris)
	return k.err
}

// runRefit queues a refit on r: face boxes and triangle records from the
// current vertices, boxes bottom-up over the kept tree, nodes re-emitted.
func (b *BVH) runRefit(r runner) error {
	if b.opt.Width == 8 {
		return ErrNotRefittable
	}
	v := &b.kept
	n := b.numTris
	g := b.geo
	if n > 1 {
		if err := r.memset32(v.counter, 0); err != nil {
			return err
		}
	}
	k := &kernelLauncher{r: r, module: ModuleBuild}
	grid, blk := threads1D(n, buildThreads)
	k.run("rayd_bvh_face_bounds", grid, blk, g.Vertices, g.Faces, int32(n), v.faceBoxes, launch.Null)
	k.run("rayd_bvh_write_tris", grid, blk, g.Vertices, g.Faces, nullable(g.FaceShape), nullable(g.FaceLocal),
		v.vals, int32(n), b.tris)
	k.run("rayd_bvh_bottom_up", grid, blk, v.faceBoxes, v.vals, int32(n), v.child, v.parent, v.count, v.counter,
		v.nodeBox, launch.Null, launch.Null, v.status, int32(b.opt.MaxLeafSize), b.opt.TraversalCost, b.opt.IntersectCost, int32(1))
	gi, bi := threads1D(max(n-1, 1), buildThreads)
	emit := "rayd_bvh_emit"
	if b.opt.Width == 4 {
		emit = "rayd_bvh_emit_quad"
	}
	k.run(emit, gi, bi, int32(n), v.child, v.first, v.count, v.info, v.flags, v.idx, v.idxSums,
		v.nodeBox, b.nodes, v.status)
	return k.err
}

// wideCollapseThreads is the block of rayd_bvh_collapse_wide (one block).
const wideCollapseThreads = 1024

// runCollapseWide queues the Width 8 tail of a build (bvh_build.cu): every
// internal node's wide slots in parallel, the breadth-first numbering in
// one block, the node emission and the triangle records in the wide order.
func (b *BVH) runCollapseWide(k *kernelLauncher, v *buildViews, n int) {
	g := b.geo
	gi, bi := threads1D(max(n-1, 1), buildThreads)
	if n > 1 {
		k.run("rayd_bvh_slots_wide", gi, bi, int32(n), v.child, v.first, v.count, v.info, v.nodeBox, v.wideSlots,
			v.wideCounts)
	}
	k.run("rayd_bvh_collapse_wide", launch.Blocks(1, 1), launch.Threads(wideCollapseThreads), int32(n), v.first,
		v.count, v.info, v.vals, v.wideSlots, v.wideCounts, v.wideRoot, v.wideBase, v.wideOrder, v.status)
	k.run("rayd_bvh_emit_wide", gi, bi, int32(n), v.first, v.count, v.info, v.nodeBox, v.wideSlots, v.wideRoot,
		v.wideBase, v.status, b.nodes)
	grid, blk := threads1D(n, buildThreads)
	k.run("rayd_bvh_write_tris", grid, blk, g.Vertices, g.Faces, nullable(g.FaceShape), nullable(g.FaceLocal),
		v.wideOrder, int32(n), b.tris)
}
