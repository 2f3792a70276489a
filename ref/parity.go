package ref

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// ParityDirection returns the fixed direction of the crossing counts,
// geom.ParityDirection().
func ParityDirection() [3]float32 { return geom.ParityDirection() }

// CrossingCounts is CrossingCountsContext with context.Background().
func (s *Scene) CrossingCounts(points []float32, active []bool) ([]int32, error) {
	return s.CrossingCountsContext(context.Background(), points, active)
}

// CrossingCountsContext returns, for each row of points (3 values per
// row), the crossing count of its parity segment: the Count of the
// crossings query (CrossingsContext, k = 1) over the segment from the
// point to geom.ParityEnd(point, ParityReach()), which leaves the point
// along geom.ParityDirection() and ends beyond every face. Every engine's
// crossings query gives the same count, so this is the definition every
// engine answers. Its parity is the inside test of a closed mesh: odd
// inside, even outside. Open meshes have no inside and the parity there
// depends on the direction; WindingNumbers is the robust test.
//
// The segment rule decides the edge cases (see geom.ParityEnd): a face
// within 2e-5 of the point along the segment (a point on a face) is not
// counted, and a segment through a shared edge or vertex counts each face
// whose watertight test accepts it (at least one), so the parity is exact
// for segments that cross faces in their interiors.
//
// active holds one value per row or is empty (all active); an inactive row
// or one with a non-finite coordinate holds −1. Errors: a *LengthError
// (ErrLength) for mismatched slices, those of CrossingsContext; ctx is
// checked before the result is allocated and between blocks of rows.
func (s *Scene) CrossingCountsContext(ctx context.Context, points []float32, active []bool) ([]int32, error) {
	n, err := geom.CheckPoints(points, active)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: crossing counts cancelled: %w", err)
	}
	if n == 0 {
		return []int32{}, nil
	}
	c, err := s.CrossingsContext(ctx, points, geom.ParityEnds(points, s.ParityReach()), active, 1)
	if err != nil {
		return nil, err
	}
	count := c.Count
	for i := range count {
		if (len(active) > 0 && !active[i]) || !geom.IsFinite3(row3(points, i)) {
			count[i] = -1
		}
	}
	return count, nil
}

// ParityReach is geom.ParityReach of the scene's faces (its vertices as of
// the last Refit): the largest absolute vertex coordinate of any face.
func (s *Scene) ParityReach() float32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var m float32
	for f := range s.tris {
		for _, v := range s.tris[f] {
			for _, x := range v {
				m = max(m, max(x, -x))
			}
		}
	}
	return m
}
