package rayd

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Crossings is the record of Scene.Crossings: per row, the k hits of least
// (t, global prim id) along the segment in ascending order, the total hit
// count and whether it exceeds k (see geom.Crossings for every field).
type Crossings = geom.Crossings

// MaxCrossingsK is the largest k of Scene.Crossings.
const MaxCrossingsK = geom.MaxCrossingsK

// Crossings finds every triangle hit along each segment start→end (3 values
// per row each) under the segment rule of Visible: with D = end − start,
// L = |D|, dir = D/L and origin = start + 1e-5·dir, a hit is a triangle
// whose watertight test accepts a t in [1e-5, max(L − 2e-5, 0)]. t is a
// world distance along the unit direction from that biased origin (the hit
// point is origin + t·dir), the t and the acceptance of Visible, so a row
// is visible exactly when its count is 0.
//
// Row i of the record keeps K = k slots at [i·k, i·k+k): the min(Count[i],
// k) hits of least (t, global prim id), ascending, each with its global
// prim id and its mesh (Shape, the ShapeID of Intersect), then miss slots
// (t = +Inf, prim = shape = −1). Count[i] counts every hit of the segment,
// also those beyond k; Overflow[i] is Count[i] > k. Inactive rows, rows
// with a non-finite coordinate and segments not longer than 2e-5 hold only
// miss slots and count 0. active is nil or one flag per row. Segments
// carry the full ray mask DefaultMask: a face counts only while the mask of
// its mesh (SetMeshMask) is not 0.
//
// Every engine gives the same record bit for bit: the CPU reference, a CUDA
// scene (rayd-go's BVH; an OptiX scene builds that BVH on its first
// crossings or visibility-variant call and refits it after UpdateVertices)
// and a replicated scene, sharded by rows. Errors: a *LengthError
// (ErrLength) for mismatched slices, an *ArgumentError
// (ErrInvalidArgument) for k outside [1, MaxCrossingsK], an
// *AllocationError (ErrTooLarge) for a record that cannot fit in memory.
func (s *Scene) Crossings(ctx context.Context, start, end []float32, k int, active []bool) (*Crossings, error) {
	if _, err := geom.CheckCrossings(start, end, active, k, geom.HostMemoryLimit()); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.Crossings(ctx, start, end, active, k)
}
