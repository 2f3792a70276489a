package rayd

import (
	"context"
	"sync"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// Visibility variants (operations spec §4.2).
type (
	// EdgeSamples is the input of VisibleEdge.
	EdgeSamples = geom.EdgeSamples
	// ChainVisibility is the record of VisibleChain.
	ChainVisibility = geom.ChainVisibility
)

// The variants expand their rows into segments, find each segment's closest
// blocker that is not ignored (on the device for CUDA scenes: the scene's
// BVH, or on an OptiX scene a BVH built on first use; on the host reference
// for CPU and replicated scenes) and reduce the segments back to rows.

// blockerEngine is implemented by engines with their own segment blockers.
type blockerEngine interface {
	segmentBlockers(ctx context.Context, t *geom.Tables, start, end []float32, active []bool, ignore []int32, k int) ([]int32, error)
}

// hostBlockers is the host reference over a scene's tables, built on first
// use and refitted after vertex updates (the engines without blockers of
// their own use it).
type hostBlockers struct {
	mu    sync.Mutex
	s     *ref.Scene
	stale bool
}

func (h *hostBlockers) scene(t *geom.Tables) (*ref.Scene, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.s == nil {
		s, err := ref.NewScene(t)
		if err != nil {
			return nil, err
		}
		h.s = s
	} else if h.stale {
		h.s.Refit()
	}
	h.stale = false
	return h.s, nil
}

// blockers returns the scene's segment query; the caller holds s.mu.
func (s *Scene) blockers(ctx context.Context) geom.SegmentBlockers {
	return func(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if be, ok := s.eng.(blockerEngine); ok {
			return be.segmentBlockers(ctx, s.tables, start, end, active, ignore, k)
		}
		hs, err := s.hostRef.scene(s.tables)
		if err != nil {
			return nil, err
		}
		return hs.SegmentBlockers(start, end, active, ignore, k)
	}
}

// VisiblePair reports per row whether start→endA and start→endB are
// unobstructed (spec §4.2, visible_pair; the segment rule of Visible). ignore
// is nil or holds K global prim ids per row (−1 pads) whose hits are
// skipped. Inactive rows and rows with a non-finite coordinate are false.
func (s *Scene) VisiblePair(ctx context.Context, start, endA, endB []float32, ignore []int32, active []bool) (a, b []bool, err error) {
	if err := s.rlock(); err != nil {
		return nil, nil, err
	}
	defer s.mu.RUnlock()
	return geom.VisiblePair(start, endA, endB, ignore, active, s.blockers(ctx))
}

// VisibleEdge reports per row whether any sample point of an edge is
// visible from the row's source (spec §4.2, visible_edge): samples at
// Position + (TMin + f·max(TMax − TMin, 0))·Direction for the fractions f
// (default 0, ¼, ½, ¾, 1; at most 16, finite). Inactive rows and rows with
// a non-finite input are false.
func (s *Scene) VisibleEdge(ctx context.Context, e EdgeSamples) ([]bool, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return geom.VisibleEdge(e, s.blockers(ctx))
}

// VisibleChain walks chains of points (spec §4.2, visible_chain): points
// holds N rows of perChain points (perChain ≥ 2), row i checks segments 0 …
// min(length[i], perChain−1)−1 in order and reports whether all are visible,
// or the first blocked segment and its closest non-ignored blocker. ignore
// is nil or holds K ids per segment slot (N·(perChain−1)·K, −1 pads).
// Inactive rows and rows with a non-finite walked point give (false, −1, −1).
func (s *Scene) VisibleChain(ctx context.Context, points []float32, perChain int, length, ignore []int32, active []bool) (*ChainVisibility, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return geom.VisibleChain(points, perChain, length, ignore, active, s.blockers(ctx))
}

func (e *cpuEngine) segmentBlockers(ctx context.Context, _ *geom.Tables, start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.s.SegmentBlockers(start, end, active, ignore, k)
}
