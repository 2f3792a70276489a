package ref

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// parityDirection is the fixed direction of the crossing counts.
var parityDirection = [3]float32{0.5773, 0.5112, 0.6367}

// ParityDirection returns the fixed direction of the crossing counts,
// (0.5773, 0.5112, 0.6367): off every axis and diagonal, so that rays from
// grid-aligned points rarely graze an axis-aligned mesh's edges.
func ParityDirection() [3]float32 { return parityDirection }

// CrossingCounts is CrossingCountsContext with context.Background().
func (s *Scene) CrossingCounts(points []float32, active []bool) ([]int32, error) {
	return s.CrossingCountsContext(context.Background(), points, active)
}

// CrossingCountsContext returns, for each row of points (3 values per
// row), the number of faces the half ray p + t·ParityDirection(), t > 0
// (t ∈ [tiny, +∞) with tiny the least positive float32), crosses under
// the watertight test (geom.Watertight, no back-face culling). Its parity
// is the inside test of a closed mesh: odd inside, even outside. Open
// meshes have no inside and the parity there depends on the direction;
// WindingNumbers is the robust test. A ray through a shared edge or vertex
// may count both faces (the watertight test reports at least one), so
// the parity is exact for rays that cross faces in their interiors.
// Every face is tested for every row (rows × faces work).
//
// active holds one value per row or is empty (all active); an inactive row
// or one with a non-finite coordinate holds −1. Errors: a *LengthError
// (ErrLength) for mismatched slices; ctx is checked before the result is
// allocated and between blocks of rows.
func (s *Scene) CrossingCountsContext(ctx context.Context, points []float32, active []bool) ([]int32, error) {
	n, err := geom.CheckPoints(points, active)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: crossing counts cancelled: %w", err)
	}
	c := make([]int32, n)
	if n == 0 {
		return c, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	tiny := float32(math.SmallestNonzeroFloat32)
	inf := float32(math.Inf(1))
	if err := parallelRows(ctx, "crossing counts", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := row3(points, i)
			if (len(active) > 0 && !active[i]) || !geom.IsFinite3(p) {
				c[i] = -1
				continue
			}
			k := int32(0)
			for f := range s.tris {
				tr := &s.tris[f]
				if _, _, _, ok := geom.Watertight(p, parityDirection, tr[0], tr[1], tr[2], tiny, inf); ok {
					k++
				}
			}
			c[i] = k
		}
	}); err != nil {
		return nil, err
	}
	return c, nil
}
