package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine/cpu"
)

// Closest point on mesh. Every engine answers from the float64 distances
// of the CPU reference (ties to the lowest global face id) bit for bit: the
// CPU backend walks the reference's BVH; a CUDA scene walks its triangle
// BVH on the device (an OptiX scene builds that BVH on the first query and
// refits it after vertex updates, as for the visibility variants); a
// replicated scene shards the rows over its replicas. The optional sign
// runs on the same engine (see SignMode); the backward pass runs on the
// host on every backend (see ClosestPointVJP).

// SignMode selects the inside/outside test of ClosestPoint.
type SignMode int

const (
	// SignNone computes no sign (ClosestResult.Sign is nil).
	SignNone SignMode = iota
	// SignWinding signs each row by the generalized winding number of the
	// scene around the point: −1 where it is at least 1/2 (inside), +1
	// elsewhere. Robust for open meshes and soups. Every face is summed for
	// every row (rows × faces solid angles, no BVH): on the CPU by the
	// reference, on a CUDA scene by the winding kernel, on a replicated
	// scene by its replicas, sharded by rows. The device's float64 sums
	// carry an error bound (only atan2 differs from the host's); the few
	// rows whose winding number lies within that bound of 1/2 (points on or
	// next to the surface) are re-computed on the host by the reference,
	// so every backend gives the reference's signs.
	SignWinding
	// SignParity signs each row by the parity of the crossing count of the
	// segment from the point along the fixed direction
	// (0.5773, 0.5112, 0.6367) to a point beyond every face
	// (geom.ParityEnd): −1 odd, +1 even. The count is the Count of the
	// scene's own Crossings query (k = 1), so every backend gives the same
	// signs. The segment rule decides the edge cases: a face within 2e-5 of
	// the point along the segment (a point on a face) is not counted, and a
	// segment through a shared edge or vertex counts each face whose
	// watertight test accepts it. Exact for closed meshes away from grazing
	// segments; on open meshes it depends on the direction.
	SignParity
)

// ClosestOptions are the optional inputs of ClosestPoint. The zero value
// queries every row without a sign.
type ClosestOptions struct {
	// Active is empty (every row) or one flag per row; an inactive row
	// gets the miss record and sign 0.
	Active []bool
	// Sign selects the sign test, run by the scene's backend (see
	// SignMode).
	Sign SignMode
}

// ClosestPointRecord is the per-row record of ClosestPoint: Dist, Point
// (3 per row), Bary (weights of the face's v0, v1, v2, 3 per row),
// ShapeID (the mesh), LocalFaceID and GlobalFaceID. A row with no face
// within maxDist, an inactive row and a row with a non-finite coordinate
// hold Dist = +Inf, zero vectors and ids −1.
type ClosestPointRecord = geom.ClosestPoints

// ClosestResult is the answer of ClosestPoint: the record and, when a sign
// was requested, Sign (+1 outside, −1 inside, 0 for an inactive or
// non-finite row; one per row).
type ClosestResult struct {
	*ClosestPointRecord
	Sign []int8
}

// ClosestCotangent holds the upstream gradients of a ClosestPoint record:
// ∂L/∂Dist (1 per row) and ∂L/∂Point (3 per row); a nil field is zero.
type ClosestCotangent = geom.ClosestCotangents

// ClosestPoint finds, for each point (3 float32 per row), the face of the
// scene nearest to it within maxDist (maxDist ≤ 0 or +Inf: unbounded): the
// face of least float64 squared distance, computed from the float32
// vertices, ties at equal squared distance to the lowest global face id;
// every output is that float64 answer rounded once to float32.
//
// Errors: ErrLength (*geom.LengthError) for a points slice that is not 3
// per row or an Active mask of another length; ErrInvalidArgument for a NaN
// maxDist or an unknown sign mode; ErrClosed; ctx's error once it is done.
// An empty batch returns an empty record.
func (s *Scene) ClosestPoint(ctx context.Context, points []float32, maxDist float32, opts ClosestOptions) (*ClosestResult, error) {
	if _, err := geom.CheckPoints(points, opts.Active); err != nil {
		return nil, err
	}
	if _, err := geom.CheckMaxDist(maxDist); err != nil {
		return nil, err
	}
	if opts.Sign < SignNone || opts.Sign > SignParity {
		return nil, &geom.ArgumentError{Field: "Sign", Reason: fmt.Sprintf("unknown sign mode %d", opts.Sign)}
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	rec, err := s.eng.ClosestPoint(ctx, points, maxDist, opts.Active)
	if err != nil {
		return nil, err
	}
	res := &ClosestResult{ClosestPointRecord: rec}
	switch opts.Sign {
	case SignParity:
		reach := geom.ParityReach(s.tables.Vertices, s.tables.Faces)
		c, err := s.eng.Crossings(ctx, points, geom.ParityEnds(points, reach), opts.Active, 1)
		if err != nil {
			return nil, err
		}
		res.Sign = geom.ParitySigns(points, opts.Active, c.Count)
	case SignWinding:
		w, err := s.eng.WindingSums(ctx, points, opts.Active)
		if err != nil {
			return nil, err
		}
		if res.Sign, err = cpu.WindingSigns(ctx, s.tables, points, opts.Active, w); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// ClosestPointVJP is the backward pass of ClosestPoint with each row's
// face and barycentric weights frozen (geom.ClosestPointsVJP): the
// gradients with respect to the points (3 per row) and to the scene's
// vertices (3 per global vertex), in float64. The distance gradients are
// exact; the point's follow the frozen weights. It runs on the host on
// every backend (the work is linear in the rows). Errors: ErrInvalidArgument
// without a record or for a face id out of range, ErrLength for mismatched
// slices, ErrClosed.
func (s *Scene) ClosestPointVJP(ctx context.Context, points []float32, res *ClosestResult, g ClosestCotangent) (dPoints, dVertices []float64, err error) {
	if res == nil || res.ClosestPointRecord == nil {
		return nil, nil, fmt.Errorf("%w: the backward pass needs the forward record", ErrInvalidArgument)
	}
	if err := s.rlock(ctx); err != nil {
		return nil, nil, err
	}
	defer s.mu.RUnlock()
	return geom.ClosestPointsVJP(s.tables, points, res.GlobalFaceID, res.Bary, g)
}
