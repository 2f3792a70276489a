package cuda

import (
	"context"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// blockerBVH is the BVH an OptiX engine uses for the visibility variants
// and the RF operations (their kernels are BVH kernels), built on first use
// and refitted after vertex updates; a BVH engine uses its own. It carries
// the tables' face masks (uploaded at build and after SetMeshMask).
type blockerBVH struct {
	mu         sync.Mutex
	bvh        *accel.BVH
	stale      bool
	masksStale bool
}

// markMasksStale makes the next use upload the tables' face masks.
func (bb *blockerBVH) markMasksStale() {
	bb.mu.Lock()
	bb.masksStale = bb.bvh != nil
	bb.mu.Unlock()
}

func (bb *blockerBVH) markStale() {
	bb.mu.Lock()
	bb.stale = bb.bvh != nil
	bb.mu.Unlock()
}

func (bb *blockerBVH) drop() error {
	bb.mu.Lock()
	defer bb.mu.Unlock()
	if bb.bvh == nil {
		return nil
	}
	err := bb.bvh.Close()
	bb.bvh = nil
	return err
}

// bvhTree is sceneBVH for the kernels without a masked form (RF): refused
// while any mesh mask differs from the default.
func (e *Engine) bvhTree() (*accel.BVH, error) {
	if err := e.checkMeshMasks("the RF operations"); err != nil {
		return nil, err
	}
	return e.sceneBVH()
}

// sceneBVH returns a BVH of the scene with the tables' face masks: the
// tracer itself on a BVH engine, the blocker BVH on an OptiX engine. The
// scene's read lock is held, so no vertex or mask update overlaps.
func (e *Engine) sceneBVH() (*accel.BVH, error) {
	if b, ok := e.tr.(*accel.BVH); ok {
		return b, nil
	}
	bb := &e.blockers
	bb.mu.Lock()
	defer bb.mu.Unlock()
	if bb.bvh == nil {
		b, err := accel.Build(e.build, e.tables)
		if err != nil {
			return nil, fmt.Errorf("rayd: building a BVH on %v: %w", e.dev, err)
		}
		bb.bvh, bb.stale, bb.masksStale = b, false, true
	}
	if bb.masksStale {
		if err := e.applyMasks(bb.bvh); err != nil {
			return nil, err
		}
		if err := e.build.Synchronize(); err != nil {
			return nil, err
		}
		bb.masksStale = false
	}
	if bb.stale {
		if err := bb.bvh.Refit(e.build, e.tables); err != nil {
			return nil, err
		}
		if err := e.build.Synchronize(); err != nil {
			return nil, err
		}
		bb.stale = false
	}
	return bb.bvh, nil
}

// segmentBlockers is the device segment query: the closest non-ignored
// blocker of every segment (a face of mesh mask 0 never blocks: the masked
// kernels run while a mesh mask is set).
func (e *Engine) segmentBlockers(ctx context.Context) geom.SegmentBlockers {
	return func(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
		n := len(start) / 3
		if n == 0 {
			return []int32{}, ctx.Err()
		}
		tree, err := e.sceneBVH()
		if err != nil {
			return nil, err
		}
		out := make([]int32, n)
		err = e.withRays(ctx, start, end, nil, active, func(sl *slot, dr accel.Rays) error {
			dev, err := scratch(e.dev, sl.i32, "blockers", n)
			if err != nil {
				return err
			}
			seg := accel.Segments{Start: dr.O, End: dr.D, Active: dr.Active, N: n, Counter: sl.counter}
			var ign *launch.Buffer[int32]
			if len(ignore) > 0 {
				if ign, err = stage(e, sl, sl.i32, "ignore", ignore); err != nil {
					return err
				}
			}
			if err := tree.SegmentBlockers(sl.s, seg, ign, k, dev); err != nil {
				return err
			}
			return dev.Download(sl.s, out)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// VisiblePair answers visible_pair with the device segment query.
func (e *Engine) VisiblePair(ctx context.Context, b *geom.SegmentBatch) (*geom.PairVisibility, error) {
	blk, err := b.Query(e.segmentBlockers(ctx), 0, b.Rows)
	if err != nil {
		return nil, err
	}
	return geom.PairFinish(b, 0, b.Rows, blk)
}

// VisibleEdge answers visible_edge with the device segment query.
func (e *Engine) VisibleEdge(ctx context.Context, b *geom.SegmentBatch) ([]bool, error) {
	blk, err := b.Query(e.segmentBlockers(ctx), 0, b.Rows)
	if err != nil {
		return nil, err
	}
	return geom.EdgeFinish(b, 0, b.Rows, blk)
}

// VisibleChain answers visible_chain with the device segment query.
func (e *Engine) VisibleChain(ctx context.Context, b *geom.SegmentBatch) (*geom.ChainVisibility, error) {
	blk, err := b.Query(e.segmentBlockers(ctx), 0, b.Rows)
	if err != nil {
		return nil, err
	}
	return geom.ChainFinish(b, 0, b.Rows, blk)
}
