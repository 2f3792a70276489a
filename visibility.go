package rayd

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Visibility variants (operations spec §4.2).
type (
	// EdgeSamples is the input of VisibleEdge.
	EdgeSamples = geom.EdgeSamples
	// ChainVisibility is the record of VisibleChain.
	ChainVisibility = geom.ChainVisibility
	// PairVisibility is the per-chunk record of VisiblePair that an
	// Offload hook receives.
	PairVisibility = geom.PairVisibility
)

// The variants expand their rows into segments (geom.PairSegments,
// EdgeSegments, ChainSegments), find each segment's closest blocker that is
// not ignored on the scene's engine (the device BVH of a CUDA scene — an
// OptiX scene builds a BVH on first use —, the replicas of a replicated
// scene, sharded by rows, or the CPU reference) and reduce the segments
// back to rows. Unlike Visible, they treat a row with a non-finite input as
// inactive: its answer is false (operations spec §0.2, §4.2). Like Visible,
// segments carry the full ray mask DefaultMask: a face of a mesh whose mask
// is 0 (SetMeshMask) never blocks.

// VisiblePair reports per row whether start→endA and start→endB are
// unobstructed (spec §4.2, visible_pair; the segment rule of Visible). ignore
// is nil or holds K global prim ids per row (−1 pads) whose hits are
// skipped. Inactive rows and rows with a non-finite coordinate are false.
func (s *Scene) VisiblePair(ctx context.Context, start, endA, endB []float32, ignore []int32, active []bool) (a, b []bool, err error) {
	batch, err := geom.PairSegments(start, endA, endB, ignore, active)
	if err != nil {
		return nil, nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, nil, err
	}
	defer s.mu.RUnlock()
	r, err := s.eng.VisiblePair(ctx, batch)
	if err != nil || r == nil {
		return nil, nil, err
	}
	return r.A, r.B, nil
}

// VisibleEdge reports per row whether any sample point of an edge is
// visible from the row's source (spec §4.2, visible_edge): samples at
// Position + (TMin + f·max(TMax − TMin, 0))·Direction for the fractions f
// (default 0, ¼, ½, ¾, 1; at most 16, finite). Inactive rows and rows with
// a non-finite input are false.
func (s *Scene) VisibleEdge(ctx context.Context, e EdgeSamples) ([]bool, error) {
	batch, err := geom.EdgeSegments(e)
	if err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.VisibleEdge(ctx, batch)
}

// VisibleChain walks chains of points (spec §4.2, visible_chain): points
// holds N rows of perChain points (perChain ≥ 2), row i checks segments 0 …
// min(length[i], perChain−1)−1 in order and reports whether all are visible,
// or the first blocked segment and its closest non-ignored blocker. ignore
// is nil or holds K ids per segment slot (N·(perChain−1)·K, −1 pads).
// Inactive rows and rows with a non-finite walked point give (false, −1, −1).
func (s *Scene) VisibleChain(ctx context.Context, points []float32, perChain int, length, ignore []int32, active []bool) (*ChainVisibility, error) {
	batch, err := geom.ChainSegments(points, perChain, length, ignore, active)
	if err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.VisibleChain(ctx, batch)
}
