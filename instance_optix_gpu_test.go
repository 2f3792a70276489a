package rayd_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// instRef answers rows like ref.InstancedScene restricted to the instances
// a row may see (its mask shares a bit with the instance's mask and with
// its mesh's mask): one reference per distinct row mask.
type instRef struct {
	tb   *geom.Tables
	x    *geom.Instances
	subs map[uint8]*instSub
}

type instSub struct {
	sc  *ref.InstancedScene
	ids []int32
}

func (ir *instRef) closest(t *testing.T, o, d [3]float32, tmin, tmax float32, mask uint8) (ref.InstanceHit, bool) {
	s := ir.subs[mask]
	if s == nil {
		s = &instSub{}
		f := &geom.Instances{}
		for k, r := range ir.x.Records {
			if r.Mask&mask != 0 && ir.tb.MaskOf(int(r.Geometry))&mask != 0 {
				f.Records = append(f.Records, r)
				s.ids = append(s.ids, int32(k))
			}
		}
		if f.Len() > 0 {
			sc, err := ref.NewInstancedScene(context.Background(), ir.tb, f)
			require.NoError(t, err)
			s.sc = sc
		}
		ir.subs[mask] = s
	}
	if s.sc == nil {
		return ref.InstanceHit{}, false
	}
	h, ok := s.sc.Closest(o, d, tmin, tmax)
	if ok {
		h.Instance = s.ids[h.Instance]
	}
	return h, ok
}

// checkOptiXInstancedRows compares an OptiX instanced record g (FlagsAll)
// with the reference row by row under the tie rule of
// TestOptiXBackendAgreesUnderTheTieRule, evaluated in the object space of
// the instance hit: the same instance and face with t within the
// conditioning bound, or else an exact tie (both hit at t within 1e-4
// relative) or a boundary row (the reference's or OptiX's hit on an edge of
// its face, or at a bound of the row's interval) — counted, not failed. Every OptiX hit
// must be visible to its row and carry the fields the reference derives
// from its own (t, u, v, face, instance) bit for bit. It returns the
// counts of hits, ties and boundary rows, and the rows outside the rule.
func checkOptiXInstancedRows(t *testing.T, ir *instRef, r rayd.Rays, g *rayd.Hits) (hits, ties, boundary, bad int) {
	t.Helper()
	lim := geom.RayLimits{TMin: r.TMin, Mask: r.Mask}
	for i := range r.Len() {
		var o, d [3]float32
		copy(o[:], r.Origins[3*i:])
		copy(d[:], r.Directions[3*i:])
		tmin, tmax := lim.TMinAt(i, geom.TMin), geom.DefaultTMax
		if len(r.TMax) > 0 {
			tmax = r.TMax[i]
		}
		w, wok := ir.closest(t, o, d, tmin, tmax, lim.MaskAt(i))
		gok := g.PrimID[i] >= 0
		if gok {
			hits++
			inst := g.InstanceID[i]
			require.True(t, inst >= 0 && int(inst) < ir.x.Len(), "row %d: instance %d", i, inst)
			rec := &ir.x.Records[inst]
			m := lim.MaskAt(i)
			require.True(t, rec.Mask&m != 0 && ir.tb.MaskOf(int(rec.Geometry))&m != 0,
				"row %d: instance %d (mask %#x, mesh mask %#x) hit by a row of mask %#x", i, inst, rec.Mask, ir.tb.MaskOf(int(rec.Geometry)), m)
			require.GreaterOrEqual(t, g.T[i], tmin, "row %d: hit before the row's tmin", i)
			prim := g.PrimID[i]
			require.Equal(t, rec.Geometry, ir.tb.FaceShape[prim], "row %d: face %d of instance %d", i, prim, inst)
			require.Equal(t, [4]int32{rec.Geometry, prim, ir.tb.FaceLocal[prim], prim},
				[4]int32{g.ShapeID[i], g.GlobalPrimID[i], g.LocalPrimID[i], g.PrimID[i]}, "row %d: ids", i)
			p0, p1, p2 := ir.tb.Triangle(int(prim))
			nrm := geom.WorldNormal(rec, geom.FaceCross(p0, p1, p2), geom.NormalFloor)
			u, v := g.UV[2*i], g.UV[2*i+1]
			var p [3]float32
			for k := range 3 {
				p[k] = float32(o[k] + float32(g.T[i]*d[k]))
			}
			bary := [3]float32{float32(float32(1-u) - v), u, v}
			want := append(append(append(append([]float32{}, nrm[:]...), nrm[:]...), p[:]...), bary[:]...)
			got := append(append(append(append([]float32{}, g.GeoN[3*i:3*i+3]...), g.N[3*i:3*i+3]...), g.P[3*i:3*i+3]...), g.Bary[3*i:3*i+3]...)
			require.True(t, testscene.EqualBits(want, got), "row %d: normals, p, barycentrics %v, derived from OptiX's hit %v", i, got, want)
		} else {
			require.True(t, math.IsInf(float64(g.T[i]), 1) && g.InstanceID[i] == -1 && g.ShapeID[i] == -1, "row %d: miss record", i)
		}
		if !wok && !gok {
			continue
		}
		if wok && gok && w.Instance == g.InstanceID[i] && w.Prim == g.PrimID[i] {
			oo, dd := geom.ObjectRay(&ir.x.Records[w.Instance], o, d)
			if math.Abs(float64(g.T[i]-w.T)) <= 1e-5*math.Abs(float64(w.T)) ||
				withinConditioning(ir.tb, oo[:], dd[:], w.Prim, g.T[i], w.T) ||
				withinTransformConditioning(ir.tb, &ir.x.Records[w.Instance], o, oo, dd, w.Prim, g.T[i], w.T) {
				continue
			}
		}
		if wok && gok && math.Abs(float64(g.T[i]-w.T)) <= 1e-4*math.Abs(float64(w.T)) {
			ties++
			continue
		}
		near := func(a, b float32) bool {
			return math.Abs(float64(a)-float64(b)) <= 1e-4*math.Max(1, math.Abs(float64(b)))
		}
		edge := func(u, v, tt float32) bool {
			return u < 1e-4 || v < 1e-4 || 1-u-v < 1e-4 || near(tt, tmin) || near(tt, tmax)
		}
		if (wok && edge(w.U, w.V, w.T)) || (gok && edge(g.UV[2*i], g.UV[2*i+1], g.T[i])) {
			boundary++
			continue
		}
		if bad < 5 {
			t.Logf("row %d: optix hit %v t=%v inst=%d prim=%d, reference hit %v t=%v inst=%d prim=%d", i, gok, g.T[i],
				g.InstanceID[i], g.PrimID[i], wok, w.T, w.Instance, w.Prim)
		}
		bad++
	}
	return hits, ties, boundary, bad
}

// TestGPUOptiXInstancedSceneAgreesWithReference: a scene built with
// WithBackend(BackendOptiX) and WithInstances runs on OptiX (an IAS over
// one GAS per geometry) and answers Intersect like the CPU reference under
// the OptiX tie rule, after construction, after SetInstanceTransforms (a
// query with other rays first leaves stale rows in the scratch buffers)
// and after UpdateVertices of a dynamic geometry; FlagsNone gives the same
// t as FlagsAll.
func TestGPUOptiXInstancedSceneAgreesWithReference(t *testing.T) {
	dev := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := testscene.Rand(t)
	grid := testscene.Grid(24, 1.5, 0)
	grid.Dynamic = true
	meshes := []rayd.Mesh{grid, testscene.Soup(r, 800, 0.1), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 16, 8)}
	in := testscene.RandomInstances(r, len(meshes), 300, 1.5)
	s, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendOptiX), rayd.WithDevice(dev), rayd.WithInstances(in))
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, rayd.BackendOptiX, s.Backend())

	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	ir := &instRef{tb: tb, x: x, subs: map[uint8]*instSub{}}
	o, d, tmax := testscene.RandomRays(r, tb, 20000)
	po, pd, _ := testscene.RandomRays(r, tb, 20000)
	rays := rayd.Rays{Origins: o, Directions: d, TMax: tmax}
	check := func(what string) {
		t.Helper()
		ir.subs = map[uint8]*instSub{}
		_, err := s.Intersect(ctx, rayd.Rays{Origins: po, Directions: pd}, rayd.FlagsAll) // stale scratch
		require.NoError(t, err)
		g, err := s.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		hits, ties, boundary, bad := checkOptiXInstancedRows(t, ir, rays, g)
		t.Logf("%s: %d rows, %d hits, %d exact ties, %d boundary rows, %d outside the tie rule", what, rays.Len(), hits, ties, boundary, bad)
		assert.Zero(t, bad, what)
		assert.Positive(t, hits, what)
		tOnly, err := s.Intersect(ctx, rays, rayd.FlagsNone)
		require.NoError(t, err)
		require.True(t, testscene.EqualBits(g.T, tOnly.T), "%s: FlagsNone t differs from FlagsAll t", what)
	}
	check("built")
	moved := make([]rayd.Transform, len(in))
	for i := range moved {
		moved[i] = testscene.RandomTransform(r, 1.5)
	}
	require.NoError(t, s.SetInstanceTransforms(ctx, 0, moved))
	require.NoError(t, x.SetTransforms(0, moved))
	check("transforms updated")
	v := append([]float32(nil), grid.Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = float32(0.1 * r.Float64())
	}
	require.NoError(t, s.UpdateVertices(ctx, 0, v))
	require.NoError(t, tb.UpdateVertices(0, v))
	check("vertices updated")
}

// TestGPUOptiXInstancedSceneHonoursLimitsAndMasks: on an OptiX instanced
// scene, Intersect with per-ray TMin and Mask over instances with masks
// and meshes with masks (at build, after SetMeshMask hides a mesh, after
// every mesh mask is reset, after SetInstanceTransforms) answers like the
// reference restricted to what each row may see, under the tie rule; no
// hit is on an instance or mesh the row may not see, or before its tmin.
func TestGPUOptiXInstancedSceneHonoursLimitsAndMasks(t *testing.T) {
	dev := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 91))
	meshes := []rayd.Mesh{testscene.Grid(16, 1.5, 0), testscene.Soup(r, 600, 0.1), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 12, 8)}
	for m, v := range testscene.RandomMeshMasks(r, len(meshes)) {
		meshes[m].Mask = rayd.Mask(v)
	}
	in := testscene.RandomInstances(r, len(meshes), 120, 1.5)
	choices := []uint8{0x01, 0x02, 0x03, 0x04, 0xFF, 0x00}
	for i := range in {
		in[i].Mask = rayd.Mask(choices[r.IntN(len(choices))])
	}
	s, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendOptiX), rayd.WithDevice(dev), rayd.WithInstances(in))
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, rayd.BackendOptiX, s.Backend())
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	ir := &instRef{tb: tb, x: x}
	o, d, tmax := testscene.RandomRays(r, tb, 20000)
	tmin, mask := testscene.RandomLimits(r, 20000, tmax)
	rays := rayd.Rays{Origins: o, Directions: d, TMax: tmax, TMin: tmin, Mask: mask}
	check := func(what string) {
		t.Helper()
		ir.subs = map[uint8]*instSub{}
		for _, rs := range []rayd.Rays{rays, {Origins: o, Directions: d, TMax: tmax}} {
			g, err := s.Intersect(ctx, rs, rayd.FlagsAll)
			require.NoError(t, err)
			hits, ties, boundary, bad := checkOptiXInstancedRows(t, ir, rs, g)
			t.Logf("%s (limits %v): %d hits, %d exact ties, %d boundary rows, %d outside the tie rule", what, rs.TMin != nil, hits, ties, boundary, bad)
			assert.Zero(t, bad, what)
			ir.subs = map[uint8]*instSub{}
		}
	}
	check("built")
	for m, v := range map[int]uint8{1: 0x06, 2: 0} {
		require.NoError(t, s.SetMeshMask(ctx, m, v))
		require.NoError(t, tb.SetMask(m, v))
	}
	check("after SetMeshMask")
	for m := range meshes {
		require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
		require.NoError(t, tb.SetMask(m, rayd.DefaultMask))
	}
	check("mesh masks reset")
	moved := make([]rayd.Transform, len(in))
	for i := range moved {
		moved[i] = testscene.RandomTransform(r, 1.5)
	}
	require.NoError(t, s.SetInstanceTransforms(ctx, 0, moved))
	require.NoError(t, x.SetTransforms(0, moved))
	check("transforms updated")
}

// withinTransformConditioning is withinConditioning for a hit on the same
// face of the same instance with the error of the world-to-object map
// added: OptiX maps the ray with its own float32 inverse of the instance
// transform, not geom.ObjectRay's, so its object-space origin and
// direction differ from the reference's by some float32 units in the last
// place of the world magnitudes times the transform's condition number κ
// (TLASInflate's analysis in accel), and a short t absorbs that error
// relative to the face's slope along the ray.
func withinTransformConditioning(tb *geom.Tables, rec *geom.InstanceRecord, o [3]float32, oo, dd [3]float32, f int32,
	gt, wt float32) bool {
	if f < 0 {
		return false
	}
	var na, ni, tmag, omag, dmag float64
	for i := range 3 {
		var ra, ri float64
		for j := range 3 {
			ra += math.Abs(float64(rec.Transform[4*i+j]))
			ri += math.Abs(float64(rec.Inverse[3*i+j]))
		}
		na, ni = math.Max(na, ra), math.Max(ni, ri)
		tmag = math.Max(tmag, math.Abs(float64(rec.Transform[4*i+3])))
		omag = math.Max(omag, math.Abs(float64(o[i])))
		dmag = math.Max(dmag, math.Abs(float64(dd[i])))
	}
	kappa := math.Max(na*ni, 1)
	p0, p1, p2 := tb.Triangle(int(f))
	var e1, e2 [3]float64
	for k := range 3 {
		e1[k], e2[k] = float64(p1[k])-float64(p0[k]), float64(p2[k])-float64(p0[k])
	}
	n := [3]float64{e1[1]*e2[2] - e1[2]*e2[1], e1[2]*e2[0] - e1[0]*e2[2], e1[0]*e2[1] - e1[1]*e2[0]}
	nl := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2])
	nd := math.Abs(n[0]*float64(dd[0]) + n[1]*float64(dd[1]) + n[2]*float64(dd[2]))
	if nd == 0 || nl == 0 {
		return false
	}
	const eps = 1.0 / (1 << 24)
	originErr := ni * kappa * (omag + tmag)        // object-space origin error, in eps
	dirErr := math.Abs(float64(wt)) * kappa * dmag // object-space error of t·d, in eps
	tol := 1e-5*math.Abs(float64(wt)) + 1e-6 + 64*eps*(originErr+dirErr)*nl/nd
	return math.Abs(float64(gt)-float64(wt)) <= tol
}
