package ref

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// Intersect is the forward pass of intersect (spec §2.1): for each row the
// closest hit of o + t·d with t ∈ [geom.TMin, tmax] over every triangle of the
// scene, without culling and without normalizing d.
//
// o and d hold 3 values per row; tmax holds one per row or is empty
// (geom.DefaultTMax, FLT_MAX); active holds one per row or is empty (all
// active). flags selects the materialized fields (geom.Flags). Inactive rows
// and rows with a non-finite origin or direction are misses. A hit row holds
// t, p = o + t·d (per component o + (t*d) in float32), n = geo_n = the unit
// face normal (geom.FaceNormal with geom.NormalFloor, not flipped toward the
// ray), uv = (u, v), barycentric = ((1−u)−v, u, v), the mesh id, prim id =
// global id, the local face id and the global id.
//
// Errors: a *LengthError (ErrLength) for mismatched slices, an
// *ArgumentError (ErrInvalidArgument) for flags outside geom.FlagsAll. An
// empty batch returns an empty record.
func (s *Scene) Intersect(o, d, tmax []float32, active []bool, flags geom.Flags) (*geom.Hits, error) {
	return s.IntersectContext(context.Background(), o, d, tmax, active, flags)
}

// IntersectContext is Intersect honouring ctx: it checks ctx before the
// result is allocated and between blocks of rows, and once ctx is done it
// returns no record and an error wrapping ctx.Err() (errors.Is
// context.Canceled or context.DeadlineExceeded) within one block's time.
func (s *Scene) IntersectContext(ctx context.Context, o, d, tmax []float32, active []bool, flags geom.Flags) (*geom.Hits, error) {
	return s.IntersectLimitsContext(ctx, o, d, tmax, active, geom.RayLimits{}, flags)
}

// IntersectLimitsContext is IntersectContext with per-ray limits: row i
// accepts t ∈ [lim.TMinAt(i, geom.TMin), tmax] and only faces whose mesh
// mask shares a bit with lim.MaskAt(i). Empty limits give IntersectContext's
// answer bitwise. Errors add those of geom.CheckRayLimits.
func (s *Scene) IntersectLimitsContext(ctx context.Context, o, d, tmax []float32, active []bool, lim geom.RayLimits, flags geom.Flags) (*geom.Hits, error) {
	n, err := checkIntersect(ctx, o, d, tmax, active, lim, flags)
	if err != nil {
		return nil, err
	}
	h := geom.NewHitsZeroed(n, flags) // every row is written below
	if n == 0 {
		return h, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "intersect", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.intersectRow(h, i, o, d, tmax, active, lim)
		}
	}); err != nil {
		return nil, err
	}
	return h, nil
}

// rayRow reads row i of an intersect batch: its origin, direction and
// tmax (geom.DefaultTMax without a tmax column); ok is false for an
// inactive row or one with a non-finite origin or direction (a miss).
func rayRow(i int, o, d, tmax []float32, active []bool) (oi, di [3]float32, tm float32, ok bool) {
	if len(active) > 0 && !active[i] {
		return oi, di, 0, false
	}
	oi, di = row3(o, i), row3(d, i)
	if !geom.IsFinite3(oi) || !geom.IsFinite3(di) {
		return oi, di, 0, false
	}
	tm = geom.DefaultTMax
	if len(tmax) > 0 {
		tm = tmax[i]
	}
	return oi, di, tm, true
}

// intersectRow traces row i and writes its hit, or the miss record, into
// h (h starts zeroed).
func (s *Scene) intersectRow(h *geom.Hits, i int, o, d, tmax []float32, active []bool, lim geom.RayLimits) {
	oi, di, tm, ok := rayRow(i, o, d, tmax, active)
	if !ok {
		h.SetMiss(i)
		return
	}
	hit, ok := s.closest(oi, di, lim.TMinAt(i, geom.TMin), tm, lim.MaskAt(i))
	if !ok {
		h.SetMiss(i)
		return
	}
	h.T[i] = hit.T
	tr := &s.tris[hit.Prim]
	var normal [3]float32
	if h.Flags&(geom.FlagGeometric|geom.FlagShadingN) != 0 {
		normal = geom.FaceNormal(tr[0], tr[1], tr[2], geom.NormalFloor)
	}
	if h.Flags.Has(geom.FlagGeometric) {
		var p [3]float32
		for k := range 3 {
			p[k] = float32(oi[k] + float32(hit.T*di[k]))
		}
		put3(h.P, i, p)
		put3(h.GeoN, i, normal)
		put3(h.Bary, i, [3]float32{float32(float32(1-hit.U) - hit.V), hit.U, hit.V})
		h.ShapeID[i] = s.tables.FaceShape[hit.Prim]
		h.PrimID[i] = hit.Prim
		h.LocalPrimID[i] = s.tables.FaceLocal[hit.Prim]
		h.GlobalPrimID[i] = hit.Prim
	}
	if h.Flags.Has(geom.FlagShadingN) {
		put3(h.N, i, normal)
	}
	if h.Flags.Has(geom.FlagUV) {
		h.UV[2*i], h.UV[2*i+1] = hit.U, hit.V
	}
}

// checkIntersect validates the inputs of an intersect (rays, limits,
// flags) and ctx, and returns the row count: the checks, errors and order
// of Scene.IntersectLimitsContext and InstancedScene.IntersectLimits.
func checkIntersect(ctx context.Context, o, d, tmax []float32, active []bool, lim geom.RayLimits, flags geom.Flags) (int, error) {
	n, err := geom.CheckRays(o, d, tmax, active)
	if err != nil {
		return 0, err
	}
	if err := geom.CheckRayLimits(n, tmax, lim); err != nil {
		return 0, err
	}
	if !flags.Valid() {
		return 0, &ArgumentError{Field: "flags", Reason: fmt.Sprintf("unknown bits %#x", uint32(flags&^geom.FlagsAll))}
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("ref: intersect cancelled: %w", err)
	}
	return n, nil
}
