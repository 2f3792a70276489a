package ref

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// TraceReflections is the forward pass of trace_reflections (spec §3.2): up
// to maxBounces specular bounces per row, each the closest hit with
// t ∈ [geom.MultipathTMin, tmax_b], where tmax_b is tmax[i] for bounce 0 when
// tmax is given and tmax[i] is finite, and geom.ReflectionMiss otherwise.
//
// Per hit, in float32: P = geom.Interpolate(v0, v1, v2, u, v); N̂ =
// geom.FaceNormal(v0, v1, v2, geom.ReflectionNormalFloor), negated when
// dir·N̂ > 0; the image source I ← I − (2((I−P)·N̂))·N̂ (seeded with o); the
// slot gets valid, t, the global prim and I; then dir ← dir − (2(dir·N̂))·N̂
// (its length is preserved, so every t is in units of |d|) and the next
// origin is P + geom.MultipathBias·dir. The loop stops at the first miss.
// Empty slots, inactive rows and rows with a non-finite origin or direction
// hold valid false, t = geom.ReflectionMiss, prim -1 and a zero image.
//
// Errors: an *ArgumentError when maxBounces < 1 or maxBounces >
// geom.MaxBounces, a *LengthError for mismatched slices, and a
// *geom.AllocationError (geom.ErrTooLarge) when the record of N ×
// maxBounces slots would not fit in geom.HostMemoryLimit(): all before
// anything is allocated. An empty batch returns an empty record.
func (s *Scene) TraceReflections(o, d, tmax []float32, active []bool, maxBounces int) (*geom.Reflections, error) {
	return s.TraceReflectionsContext(context.Background(), o, d, tmax, active, maxBounces)
}

// TraceReflectionsContext is TraceReflections honouring ctx: it checks ctx
// before the record is allocated and between blocks of rows, and once ctx
// is done it returns no record and an error wrapping ctx.Err().
func (s *Scene) TraceReflectionsContext(ctx context.Context, o, d, tmax []float32, active []bool, maxBounces int) (*geom.Reflections, error) {
	return s.TraceReflectionsLimitsContext(ctx, o, d, tmax, active, geom.RayLimits{}, maxBounces)
}

// TraceReflectionsLimitsContext is TraceReflectionsContext with per-ray
// limits: the first bounce of row i accepts t ∈ [lim.TMinAt(i,
// geom.MultipathTMin), tmax]; later bounces keep geom.MultipathTMin. Every
// bounce counts only faces whose mesh mask shares a bit with lim.MaskAt(i).
// Empty limits give TraceReflectionsContext's answer bitwise. Errors add
// those of geom.CheckRayLimits.
func (s *Scene) TraceReflectionsLimitsContext(ctx context.Context, o, d, tmax []float32, active []bool, lim geom.RayLimits, maxBounces int) (*geom.Reflections, error) {
	if err := geom.CheckBounces(maxBounces); err != nil {
		return nil, err
	}
	n, err := geom.CheckRays(o, d, tmax, active)
	if err != nil {
		return nil, err
	}
	if err := geom.CheckRayLimits(n, tmax, lim); err != nil {
		return nil, err
	}
	if err := geom.CheckReflections(n, maxBounces, true, geom.HostMemoryLimit()); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: trace_reflections cancelled: %w", err)
	}
	r := geom.NewReflectionsZeroed(n, maxBounces) // every row is written below
	if n == 0 {
		return r, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "trace_reflections", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.reflectRow(r, i, o, d, tmax, active, lim)
		}
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// reflectRow traces the chain of row i into r: every slot of the row is
// emptied first (r starts zeroed), then the hits are written.
func (s *Scene) reflectRow(r *geom.Reflections, i int, o, d, tmax []float32, active []bool, lim geom.RayLimits) {
	r.SetMiss(i)
	if len(active) > 0 && !active[i] {
		return
	}
	orig, dir := row3(o, i), row3(d, i)
	if !geom.IsFinite3(orig) || !geom.IsFinite3(dir) {
		return
	}
	img, mask := orig, lim.MaskAt(i)
	for b := range r.Bounces {
		tm, tmin := geom.ReflectionMiss, geom.MultipathTMin
		if b == 0 {
			tmin = lim.TMinAt(i, geom.MultipathTMin)
			if len(tmax) > 0 && finite32(tmax[i]) {
				tm = tmax[i]
			}
		}
		hit, ok := s.closest(orig, dir, tmin, tm, mask)
		if !ok {
			return
		}
		tr := &s.tris[hit.Prim]
		p := geom.Interpolate(tr[0], tr[1], tr[2], hit.U, hit.V)
		nrm := geom.FaceNormal(tr[0], tr[1], tr[2], geom.ReflectionNormalFloor)
		if dot3(dir, nrm) > 0 {
			nrm = [3]float32{-nrm[0], -nrm[1], -nrm[2]}
		}
		img = mirrorPoint(img, p, nrm)
		slot := i*r.Bounces + b
		r.Valid[slot], r.T[slot], r.PrimIDs[slot] = true, hit.T, hit.Prim
		put3(r.ImageSources, slot, img)
		dir = reflect(dir, nrm)
		for k := range 3 {
			orig[k] = float32(p[k] + float32(geom.MultipathBias*dir[k]))
		}
	}
}

// mirrorPoint is x − (2((x−p)·n))·n: x mirrored in the plane through p with
// unit normal n.
func mirrorPoint(x, p, n [3]float32) [3]float32 {
	rel := [3]float32{float32(x[0] - p[0]), float32(x[1] - p[1]), float32(x[2] - p[2])}
	s := float32(2 * dot3(rel, n))
	return [3]float32{float32(x[0] - float32(s*n[0])), float32(x[1] - float32(s*n[1])), float32(x[2] - float32(s*n[2]))}
}

// reflect is v − (2(v·n))·n for a unit normal n.
func reflect(v, n [3]float32) [3]float32 {
	s := float32(2 * dot3(v, n))
	return [3]float32{float32(v[0] - float32(s*n[0])), float32(v[1] - float32(s*n[1])), float32(v[2] - float32(s*n[2]))}
}
