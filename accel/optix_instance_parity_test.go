package accel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// The tie rule of the OptiX instance layer: TestGPUOptiXParity's rule
// (parityScene.consistent) applied in the object space of the instance
// each side reports, the object ray being geom.ObjectRay's. OptiX maps the
// world ray into object space with its own arithmetic, so the ray origin
// is uncertain by a few float32 roundings of the instance's object-space
// magnitudes: instSlack widens the tolerances by that much. Every field
// derived from a backend's (t, u, v, face, instance) must equal the
// reference's derivation bit for bit (same operation sequences).

// instHit is one answer to a closest-hit query over instances.
type instHit struct {
	hit        bool
	t, u, v    float32
	prim, inst int32 // global face, instance id
}

// instParity is the reference side of an instanced parity check: the
// scene's tables and instances, one parityScene per geometry over its own
// (object-space) tables, and the per-row limits.
type instParity struct {
	tb   *geom.Tables
	x    *geom.Instances
	geos []*parityScene
	tmin []float32
	mask []uint8
}

func newInstParity(tb *geom.Tables, x *geom.Instances) (*instParity, error) {
	ip := &instParity{tb: tb, x: x}
	for _, m := range tb.Meshes() {
		sub, err := geom.BuildTables([]geom.Mesh{m})
		if err != nil {
			return nil, err
		}
		ip.geos = append(ip.geos, &parityScene{tb: sub})
	}
	return ip, nil
}

// visible reports whether a row of mask m may see instance i: m shares a
// bit with the instance's mask and with its mesh's mask.
func (ip *instParity) visible(i int, m uint8) bool {
	r := &ip.x.Records[i]
	return r.Mask&m != 0 && ip.tb.MaskOf(int(r.Geometry))&m != 0
}

// reference answers every row with ref.InstancedScene.Closest over the
// instances the row's mask may see (one reference scene per distinct
// mask, instances kept in id order so ties still go to the lower id).
func (ip *instParity) reference(o, d, tmax []float32, active []bool) ([]instHit, error) {
	n := len(o) / 3
	lim := geom.RayLimits{TMin: ip.tmin, Mask: ip.mask}
	type sub struct {
		sc  *ref.InstancedScene
		ids []int32
	}
	subs := map[uint8]*sub{}
	for i := range n {
		m := lim.MaskAt(i)
		if subs[m] != nil {
			continue
		}
		s := &sub{}
		f := &geom.Instances{}
		for k := range ip.x.Records {
			if ip.visible(k, m) {
				f.Records = append(f.Records, ip.x.Records[k])
				s.ids = append(s.ids, int32(k))
			}
		}
		if f.Len() > 0 {
			sc, err := ref.NewInstancedScene(context.Background(), ip.tb, f)
			if err != nil {
				return nil, err
			}
			s.sc = sc
		}
		subs[m] = s
	}
	out := make([]instHit, n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if len(active) > 0 && !active[i] {
					continue
				}
				oi, di := row3f(o, i), row3f(d, i)
				if !geom.IsFinite3(oi) || !geom.IsFinite3(di) {
					continue
				}
				tm := geom.DefaultTMax
				if len(tmax) > 0 {
					tm = tmax[i]
				}
				s := subs[lim.MaskAt(i)]
				if s.sc == nil {
					continue
				}
				h, ok := s.sc.Closest(oi, di, lim.TMinAt(i, geom.TMin), tm)
				if ok {
					out[i] = instHit{hit: true, t: h.T, u: h.U, v: h.V, prim: h.Prim, inst: s.ids[h.Instance]}
				}
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// frame is hit h seen in its instance's object space: the geometry's
// parity scene, the object ray, the local face and the origin slack.
func (ip *instParity) frame(o, d [3]float32, h instHit) (ps *parityScene, oo, dd [3]float32, local int32, slack float64) {
	rec := &ip.x.Records[h.inst]
	g := rec.Geometry
	oo, dd = geom.ObjectRay(rec, o, d)
	return ip.geos[g], oo, dd, h.prim - ip.tb.FaceOffset[g], instSlack(rec, o, d, float64(h.t))
}

// instSlack is how far two float32 maps of the world ray into rec's object
// space may put the object origin (at the hit's t) apart: parityUlps of the
// world magnitudes |o|, |b| and t·|d| carried through the inverse.
func instSlack(rec *geom.InstanceRecord, o, d [3]float32, t float64) float64 {
	var inv, mo, mb, md float64
	for i := range 3 {
		var row float64
		for j := range 3 {
			row += math.Abs(float64(rec.Inverse[3*i+j]))
		}
		inv = max(inv, row)
		mo, mb, md = max(mo, math.Abs(float64(o[i]))), max(mb, math.Abs(float64(rec.Transform[4*i+3]))), max(md, math.Abs(float64(d[i])))
	}
	if math.IsInf(t, 0) || math.IsNaN(t) {
		t = 0
	}
	return parityUlps * inv * (mo + mb + math.Abs(t)*md)
}

// consistent applies the tie rule to one row's reference answer want and
// backend answer got; tie reports an exact tie, edge an edge/bound case
// that explained a difference.
func (ip *instParity) consistent(i int, o, d [3]float32, tmin, tmax float32, want, got instHit) (tie, edge bool, err error) {
	if got.hit {
		if got.inst < 0 || int(got.inst) >= ip.x.Len() || got.prim < 0 || int(got.prim) >= ip.tb.NumFaces() {
			return false, false, fmt.Errorf("instance %d / face %d out of range", got.inst, got.prim)
		}
		if g := ip.x.Records[got.inst].Geometry; ip.tb.FaceShape[got.prim] != g {
			return false, false, fmt.Errorf("face %d is not a face of instance %d's geometry %d", got.prim, got.inst, g)
		}
		if m := (geom.RayLimits{Mask: ip.mask}).MaskAt(i); !ip.visible(int(got.inst), m) {
			return false, false, fmt.Errorf("instance %d (mask %#x, mesh mask %#x) hit by a row of mask %#x", got.inst,
				ip.x.Records[got.inst].Mask, ip.tb.MaskOf(int(ip.x.Records[got.inst].Geometry)), m)
		}
	}
	tolOf := func(h instHit) faceTol {
		ps, oo, dd, local, slack := ip.frame(o, d, h)
		return ps.faceTol(oo, dd, local, float64(h.t), slack)
	}
	onEdge := func(h instHit) bool {
		ps, oo, dd, local, slack := ip.frame(o, d, h)
		return ps.edgeOrBound(oo, dd, tmin, tmax, slack, rowHit{true, h.t, local})
	}
	switch {
	case !want.hit && !got.hit:
		return false, false, nil
	case want.hit && got.hit && want.inst == got.inst && want.prim == got.prim:
		if tol := tolOf(want).t; math.Abs(float64(got.t)-float64(want.t)) > tol {
			return false, false, fmt.Errorf("same face %d of instance %d, t %v vs reference %v (tolerance %.3g)",
				got.prim, got.inst, got.t, want.t, tol)
		}
		return false, false, nil
	}
	if got.hit {
		ps, oo, dd, local, slack := ip.frame(o, d, got)
		gt, gb, ok := ps.mt64(oo, dd, local)
		ft := ps.faceTol(oo, dd, local, float64(got.t), slack)
		if !ok || math.Abs(gt-float64(got.t)) > ft.t || gb < -ft.bary {
			return false, false, fmt.Errorf("reported face %d of instance %d is not hit at t %v (float64: t %v, min barycentric %v, ok %v; tolerances %+v)",
				got.prim, got.inst, got.t, gt, gb, ok, ft)
		}
	}
	switch {
	case want.hit && got.hit && math.Abs(float64(got.t)-float64(want.t)) <= max(tolOf(want).t, tolOf(got).t):
		return true, false, nil
	case want.hit && got.hit && got.t < want.t:
		if onEdge(got) {
			return false, true, nil
		}
		return false, false, fmt.Errorf("face %d of instance %d at t %v is nearer than the reference's face %d of instance %d at %v and not on an edge",
			got.prim, got.inst, got.t, want.prim, want.inst, want.t)
	case want.hit:
		if onEdge(want) {
			return false, true, nil
		}
		return false, false, fmt.Errorf("reference face %d of instance %d at t %v missed (got %+v) and not on an edge",
			want.prim, want.inst, want.t, got)
	default:
		if onEdge(got) {
			return false, true, nil
		}
		return false, false, fmt.Errorf("face %d of instance %d at t %v where the reference misses, not on an edge", got.prim, got.inst, got.t)
	}
}

// errRecord marks a derived field that is not the reference's derivation.
var errRecord = errors.New("record field differs from the reference's derivation")

// checkRecord checks row i of a FlagsAll record got: the miss record, or
// every field derived from got's own (t, u, v, face, instance) exactly as
// ref.InstancedScene derives it; with the reference's face and instance
// (same), the barycentrics within the tie rule's tolerance of want's.
func (ip *instParity) checkRecord(i int, o, d [3]float32, got *geom.Hits, g, want instHit) error {
	eq3 := func(a []float32, b [3]float32) bool {
		return math.Float32bits(a[0]) == math.Float32bits(b[0]) && math.Float32bits(a[1]) == math.Float32bits(b[1]) &&
			math.Float32bits(a[2]) == math.Float32bits(b[2])
	}
	if !g.hit {
		var zero [3]float32
		if !math.IsInf(float64(got.T[i]), 1) || !eq3(got.P[3*i:], zero) || !eq3(got.N[3*i:], zero) || !eq3(got.GeoN[3*i:], zero) ||
			!eq3(got.Bary[3*i:], zero) || got.UV[2*i] != 0 || got.UV[2*i+1] != 0 || got.ShapeID[i] != -1 || got.PrimID[i] != -1 ||
			got.LocalPrimID[i] != -1 || got.GlobalPrimID[i] != -1 || got.InstanceID[i] != -1 {
			return fmt.Errorf("%w: not the miss record", errRecord)
		}
		return nil
	}
	rec := &ip.x.Records[g.inst]
	if got.ShapeID[i] != rec.Geometry || got.GlobalPrimID[i] != g.prim || got.LocalPrimID[i] != ip.tb.FaceLocal[g.prim] {
		return fmt.Errorf("%w: ids (shape %d, prim %d, local %d, global %d, instance %d)", errRecord, got.ShapeID[i], got.PrimID[i],
			got.LocalPrimID[i], got.GlobalPrimID[i], got.InstanceID[i])
	}
	p0, p1, p2 := ip.tb.Triangle(int(g.prim))
	nrm := geom.WorldNormal(rec, geom.FaceCross(p0, p1, p2), geom.NormalFloor)
	if !eq3(got.GeoN[3*i:], nrm) || !eq3(got.N[3*i:], nrm) {
		return fmt.Errorf("%w: normals %v / %v, geom.WorldNormal %v", errRecord, got.GeoN[3*i:3*i+3], got.N[3*i:3*i+3], nrm)
	}
	var p [3]float32
	for k := range 3 {
		p[k] = float32(o[k] + float32(g.t*d[k]))
	}
	if !eq3(got.P[3*i:], p) {
		return fmt.Errorf("%w: p %v, o + t·d = %v", errRecord, got.P[3*i:3*i+3], p)
	}
	if !eq3(got.Bary[3*i:], [3]float32{float32(float32(1-g.u) - g.v), g.u, g.v}) {
		return fmt.Errorf("%w: barycentric %v for uv (%v, %v)", errRecord, got.Bary[3*i:3*i+3], g.u, g.v)
	}
	if want.hit && want.inst == g.inst && want.prim == g.prim {
		ps, oo, dd, local, slack := ip.frame(o, d, g)
		ft := ps.faceTol(oo, dd, local, float64(g.t), slack)
		if math.Abs(float64(g.u-want.u)) > ft.bary || math.Abs(float64(g.v-want.v)) > ft.bary {
			return fmt.Errorf("uv (%v, %v), reference (%v, %v) (tolerance %.3g)", g.u, g.v, want.u, want.v, ft.bary)
		}
	}
	return nil
}

// checkHits compares a FlagsAll instanced record got (with InstanceID)
// with the reference answers want for rays (o, d, tmax, active) under the
// tie rule.
func (ip *instParity) checkHits(o, d, tmax []float32, active []bool, got *geom.Hits, want []instHit) (parityStats, error) {
	st := parityStats{Rows: len(want)}
	lim := geom.RayLimits{TMin: ip.tmin}
	for i, w := range want {
		g := instHit{hit: got.PrimID[i] >= 0, t: got.T[i], prim: got.PrimID[i], inst: got.InstanceID[i]}
		if g.hit {
			g.u, g.v = got.UV[2*i], got.UV[2*i+1]
		}
		oi, di := row3f(o, i), row3f(d, i)
		tm := geom.DefaultTMax
		if len(tmax) > 0 {
			tm = tmax[i]
		}
		if g.hit && (len(active) > 0 && !active[i] || !geom.IsFinite3(oi) || !geom.IsFinite3(di)) {
			return st, fmt.Errorf("row %d: inactive or non-finite row hit face %d", i, g.prim)
		}
		tie, edge, err := ip.consistent(i, oi, di, lim.TMinAt(i, geom.TMin), tm, w, g)
		if err != nil {
			return st, fmt.Errorf("row %d (o %v d %v tmax %v): %w", i, oi, di, tm, err)
		}
		if g.hit {
			st.Hits++
		}
		if tie {
			st.Ties++
		}
		if edge {
			st.EdgeCases++
		}
		if err := ip.checkRecord(i, oi, di, got, g, w); err != nil {
			return st, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return st, nil
}
