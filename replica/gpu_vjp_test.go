package replica_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// Float32 vertex gradients of the intersect VJP are sums of atomic float32
// additions whose order differs between the single-device launch (every
// row into one partial) and a replicated call (each chunk's rows into its
// partial, the partials added in float64 in row order and rounded once).
// Both are float32 sums of the same terms in different groupings, each
// within about m·2⁻²⁴·Σ|term| of the exact sum for a vertex reached by m
// rows; in this scene m is at most a few hundred, so they agree within
// 1e-4 of the value plus 1e-5 of the largest gradient (the tolerance
// accel's own test grants the kernel against the float64 reference), while
// a lost or doubled row moves a vertex by a whole term.
const (
	vjpRel = 1e-4
	vjpAbs = 1e-5
)

// TestGPUIntersectVJPMatchesOneDevice: intersect_vjp on replicated layers in
// every mode (the Offload parts' vertex partials summed by the task): the
// per-row origin and direction gradients are bitwise the single-device
// accel.BVH.IntersectVJP rows, the vertex gradient is within the float32
// summation tolerance of the single-device one and of the float64
// reference (ref.IntersectVJP), with the tape's (u, v) and all cotangents,
// and without (u, v) and with only the t and p cotangents, in every stage
// (the tape comes from the stage's geometry).
func TestGPUIntersectVJPMatchesOneDevice(t *testing.T) {
	for _, devs := range deviceLists(t) {
		t.Run(fmt.Sprint(devs), func(t *testing.T) {
			f := newFixtureOn(t, devs)
			f.stages(t, f.opModes(t), func(stage string, w *world, modes []modeLayer) {
				for _, n := range opSizes(stage) {
					for _, full := range []bool{true, false} {
						checkIntersectVJP(t, f, w, modes, fmt.Sprintf("%s N=%d full=%v", stage, n, full), n, full)
					}
				}
			})
		})
	}
}

func checkIntersectVJP(t *testing.T, f *fixture, w *world, modes []modeLayer, what string, n int, full bool) {
	t.Helper()
	b := f.batch(t, n)
	hits := w.single.intersect(batch{o: b.o, d: b.d, active: b.active}, geom.FlagsAll)
	task := &shard.IntersectVJP{O: b.o, D: b.d, Active: b.active, Prim: hits.GlobalPrimID, Vertices: w.tables.NumVertices(),
		G: geom.IntersectCotangents{T: f32s(f, n), P: f32s(f, 3*n)}}
	if full {
		task.UV = hits.UV
		task.G.N, task.G.GeoN, task.G.UV, task.G.Bary = f32s(f, 3*n), f32s(f, 3*n), f32s(f, 2*n), f32s(f, 3*n)
	}
	want := w.intersectVJP(task)
	exact, err := ref.IntersectVJP(w.tables, task.O, task.D, task.Active, task.Prim, task.UV, task.G)
	require.NoError(t, err)
	closeTo32(t, what+" single-device vertices against float64", want.Vertices, exact.Vertices)
	if n > 64 {
		require.NotZero(t, maxAbs(exact.Vertices), "%s: no row reaches a vertex", what)
	}
	for _, m := range modes {
		name := fmt.Sprintf("%s %s", m.name, what)
		got := runOp(t, m, task, func(g *shard.IntersectGrads) int { return len(g.Origins) / 3 })
		sameF32(t, name+" origins", got.Origins, want.Origins, false)
		sameF32(t, name+" directions", got.Directions, want.Directions, false)
		closeTo32(t, name+" vertices against the single device", got.Vertices, widen(want.Vertices))
		closeTo32(t, name+" vertices against float64", got.Vertices, exact.Vertices)
	}
}

// intersectVJP is the single-device backward pass of task (outputs
// poisoned; the launcher zeroes the vertex gradient).
func (w *world) intersectVJP(task *shard.IntersectVJP) *shard.IntersectGrads {
	t, s := w.t, w.single.s
	n, nv := len(task.O)/3, 3*task.Vertices
	g := task.G
	cot := accel.Cotangents{T: upload(t, s, g.T, true), P: upload(t, s, g.P, true), N: upload(t, s, g.N, true),
		GeoN: upload(t, s, g.GeoN, true), UV: upload(t, s, g.UV, true), Bary: upload(t, s, g.Bary, true)}
	out := accel.Grads{Vertices: poisoned[float32](t, s, nv), Origins: poisoned[float32](t, s, 3*n),
		Directions: poisoned[float32](t, s, 3*n)}
	rays := deviceRays(t, s, batch{o: task.O, d: task.D, active: task.Active})
	tape := accel.Tape{Prim: upload(t, s, task.Prim, false), UV: upload(t, s, task.UV, true)}
	require.NoError(t, w.single.bvh.IntersectVJP(s, rays, tape, cot, out))
	return &shard.IntersectGrads{Vertices: fetch(t, s, out.Vertices, nv), Origins: fetch(t, s, out.Origins, 3*n),
		Directions: fetch(t, s, out.Directions, 3*n)}
}

// TestGPUEdgeVJPsMatchOneDevice: nearest_edge_vjp and nearest_edge_ray_vjp
// on replicated layers in every mode, with the frozen edges of the stage's
// forward (CPU edge scene, mask applied) and random float64 cotangents (all
// of them, or some nil): the per-row gradients are bitwise the
// single-device accel.EdgeBVH rows and equal the CPU reference
// (edge.Scene.NearestPointVJP / NearestRayVJP), the vertex gradients agree
// with both within 1e-12·(1 + |value|) (float64 atomics), in every stage.
func TestGPUEdgeVJPsMatchOneDevice(t *testing.T) {
	for _, devs := range deviceLists(t) {
		t.Run(fmt.Sprint(devs), func(t *testing.T) {
			f := newFixtureOn(t, devs)
			f.stages(t, f.opModes(t), func(stage string, w *world, modes []modeLayer) {
				for _, n := range opSizes(stage) {
					for _, full := range []bool{true, false} {
						what := fmt.Sprintf("%s N=%d full=%v", stage, n, full)
						checkEdgePointVJP(t, f, w, modes, what, n, full)
						checkEdgeRayVJP(t, f, w, modes, what, n, full)
					}
				}
			})
		})
	}
}

const edgeVJPTol = 1e-12

func checkEdgePointVJP(t *testing.T, f *fixture, w *world, modes []modeLayer, what string, n int, full bool) {
	t.Helper()
	p, _ := randomPoints(f, n)
	es := w.edgeScene()
	fwd, err := es.NearestPoint(p, nil)
	require.NoError(t, err)
	g := edge.PointCotangent{Distance: f64s(f, n), EdgePoint: f64s(f, 3*n)}
	if full {
		g.EdgeT = f64s(f, n)
	}
	wantP, wantV, err := es.NearestPointVJP(p, fwd, g)
	require.NoError(t, err)
	task := &shard.NearestEdgeVJP{Points: p, GlobalEdgeID: fwd.GlobalEdgeID, G: g, Vertices: w.tables.NumVertices()}
	single := w.edgePointVJP(task)
	near64(t, what+" single-device point rows against the CPU", single.Points, wantP, 0)
	near64(t, what+" single-device point vertices against the CPU", single.Vertices, wantV, edgeVJPTol)
	for _, m := range modes {
		name := fmt.Sprintf("%s %s nearest_edge_vjp", m.name, what)
		got := runOp(t, m, task, func(g *shard.EdgePointGrads) int { return len(g.Points) / 3 })
		sameF64(t, name+" points", got.Points, single.Points)
		near64(t, name+" vertices against the single device", got.Vertices, single.Vertices, edgeVJPTol)
		near64(t, name+" vertices against the CPU", got.Vertices, wantV, edgeVJPTol)
	}
}

func checkEdgeRayVJP(t *testing.T, f *fixture, w *world, modes []modeLayer, what string, n int, full bool) {
	t.Helper()
	o, d, tmax := randomEdgeRays(f, n)
	es := w.edgeScene()
	fwd, err := es.NearestRay(o, d, tmax, nil)
	require.NoError(t, err)
	g := edge.RayCotangent{Distance: f64s(f, n), Point: f64s(f, 3*n), EdgePoint: f64s(f, 3*n)}
	if full {
		g.RayT, g.EdgeT = f64s(f, n), f64s(f, n)
	}
	wantO, wantD, wantV, err := es.NearestRayVJP(o, d, tmax, fwd, g)
	require.NoError(t, err)
	task := &shard.NearestEdgeRayVJP{O: o, D: d, TMax: tmax, GlobalEdgeID: fwd.GlobalEdgeID, G: g, Vertices: w.tables.NumVertices()}
	single := w.edgeRayVJP(task)
	near64(t, what+" single-device origin rows against the CPU", single.Origins, wantO, 0)
	near64(t, what+" single-device direction rows against the CPU", single.Directions, wantD, 0)
	near64(t, what+" single-device ray vertices against the CPU", single.Vertices, wantV, edgeVJPTol)
	for _, m := range modes {
		name := fmt.Sprintf("%s %s nearest_edge_ray_vjp", m.name, what)
		got := runOp(t, m, task, func(g *shard.EdgeRayGrads) int { return len(g.Origins) / 3 })
		sameF64(t, name+" origins", got.Origins, single.Origins)
		sameF64(t, name+" directions", got.Directions, single.Directions)
		near64(t, name+" vertices against the single device", got.Vertices, single.Vertices, edgeVJPTol)
		near64(t, name+" vertices against the CPU", got.Vertices, wantV, edgeVJPTol)
	}
}

// edgePointVJP is the single-device point backward pass (outputs poisoned;
// the launcher zeroes the vertex gradient). An empty batch has zero
// gradients and runs nothing.
func (w *world) edgePointVJP(task *shard.NearestEdgeVJP) *shard.EdgePointGrads {
	t, s := w.t, w.single.s
	n, nv := len(task.Points)/3, 3*task.Vertices
	if n == 0 {
		return &shard.EdgePointGrads{Points: []float64{}, Vertices: make([]float64, nv)}
	}
	g := task.G
	dp, dv := poisoned[float64](t, s, 3*n), poisoned[float64](t, s, nv)
	require.NoError(t, w.edgeBVH().PointVJP(s, upload(t, s, task.Points, false), upload(t, s, task.GlobalEdgeID, false), n,
		accel.EdgePointGrad{Distance: upload(t, s, g.Distance, true), EdgePoint: upload(t, s, g.EdgePoint, true),
			EdgeT: upload(t, s, g.EdgeT, true)}, dp, dv))
	return &shard.EdgePointGrads{Points: fetch(t, s, dp, 3*n), Vertices: fetch(t, s, dv, nv)}
}

// edgeRayVJP is the single-device ray backward pass.
func (w *world) edgeRayVJP(task *shard.NearestEdgeRayVJP) *shard.EdgeRayGrads {
	t, s := w.t, w.single.s
	n, nv := len(task.O)/3, 3*task.Vertices
	if n == 0 {
		return &shard.EdgeRayGrads{Origins: []float64{}, Directions: []float64{}, Vertices: make([]float64, nv)}
	}
	g := task.G
	f := func(v []float64) *launch.Buffer[float64] { return upload(t, s, v, true) }
	do, dd, dv := poisoned[float64](t, s, 3*n), poisoned[float64](t, s, 3*n), poisoned[float64](t, s, nv)
	rays := deviceRays(t, s, batch{o: task.O, d: task.D, tmax: task.TMax})
	require.NoError(t, w.edgeBVH().RayVJP(s, rays, upload(t, s, task.GlobalEdgeID, false),
		accel.EdgeRayGrad{Distance: f(g.Distance), RayT: f(g.RayT), Point: f(g.Point), EdgeT: f(g.EdgeT), EdgePoint: f(g.EdgePoint)},
		do, dd, dv))
	return &shard.EdgeRayGrads{Origins: fetch(t, s, do, 3*n), Directions: fetch(t, s, dd, 3*n), Vertices: fetch(t, s, dv, nv)}
}

// closeTo32 requires |got − want| ≤ vjpRel·|want| + vjpAbs·max|want|.
func closeTo32(t testing.TB, what string, got []float32, want []float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	atol := vjpAbs * maxAbs(want)
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > vjpRel*math.Abs(want[i])+atol || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s: element %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
