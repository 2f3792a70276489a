package cpu

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// ClosestPoint runs the reference's closest-point query over its BVH.
func (e *Engine) ClosestPoint(ctx context.Context, points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error) {
	return e.s.ClosestPointsContext(ctx, points, maxDist, active)
}

// SignMode selects the inside/outside test of ClosestSigns.
type SignMode int

const (
	// SignWinding is the generalized winding number (ref.WindingNumbers):
	// −1 where it is at least 1/2, +1 elsewhere.
	SignWinding SignMode = iota + 1
	// SignParity is the parity of the crossing count along
	// ref.ParityDirection (ref.CrossingCounts): −1 odd, +1 even.
	SignParity
)

// ClosestSigns computes the sign of every row on the host with the CPU
// reference over the current tables t, by brute force over every face
// (rows × faces work), whatever engine answered the closest points: +1
// outside, −1 inside, 0 for an inactive or non-finite row. Errors: a
// *geom.LengthError for mismatched slices, a *geom.ArgumentError for an
// unknown mode, ctx's error once it is done.
func ClosestSigns(ctx context.Context, t *geom.Tables, points []float32, active []bool, mode SignMode) ([]int8, error) {
	n, err := geom.CheckPoints(points, active)
	if err != nil {
		return nil, err
	}
	if mode != SignWinding && mode != SignParity {
		return nil, &geom.ArgumentError{Field: "sign", Reason: fmt.Sprintf("unknown sign mode %d", mode)}
	}
	sign := make([]int8, n)
	if n == 0 {
		return sign, ctx.Err()
	}
	s, err := ref.NewSceneContext(ctx, t, ref.BruteForce())
	if err != nil {
		return nil, err
	}
	if mode == SignWinding {
		w, err := s.WindingNumbersContext(ctx, points, active)
		if err != nil {
			return nil, err
		}
		for i, v := range w {
			switch {
			case v != v: // NaN: inactive or non-finite row
			case v >= 0.5:
				sign[i] = -1
			default:
				sign[i] = 1
			}
		}
		return sign, nil
	}
	c, err := s.CrossingCountsContext(ctx, points, active)
	if err != nil {
		return nil, err
	}
	for i, v := range c {
		switch {
		case v < 0:
		case v%2 == 1:
			sign[i] = -1
		default:
			sign[i] = 1
		}
	}
	return sign, nil
}
