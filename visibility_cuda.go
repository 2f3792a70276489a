package rayd

import (
	"context"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// blockerBVH is the BVH an OptiX engine uses for the visibility variants,
// built on first use and refitted after vertex updates (a BVH engine uses
// its own).
type blockerBVH struct {
	mu    sync.Mutex
	bvh   *accel.BVH
	stale bool
}

// blockerTree returns the BVH the segment blockers run on. The scene's
// read lock is held, so no vertex update overlaps.
func (e *cudaEngine) blockerTree(t *geom.Tables) (*accel.BVH, error) {
	if b, ok := e.bvh.(*accel.BVH); ok {
		return b, nil
	}
	bb := &e.blockers
	bb.mu.Lock()
	defer bb.mu.Unlock()
	if bb.bvh == nil {
		b, err := accel.Build(e.build, t)
		if err != nil {
			return nil, fmt.Errorf("rayd: building the visibility BVH on %v: %w", e.dev, err)
		}
		bb.bvh, bb.stale = b, false
	}
	if bb.stale {
		if err := bb.bvh.Refit(e.build, t); err != nil {
			return nil, err
		}
		if err := e.build.Synchronize(); err != nil {
			return nil, err
		}
		bb.stale = false
	}
	return bb.bvh, nil
}

func (e *cudaEngine) segmentBlockers(ctx context.Context, t *geom.Tables, start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
	n := len(start) / 3
	if n == 0 {
		return []int32{}, ctx.Err()
	}
	tree, err := e.blockerTree(t)
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
