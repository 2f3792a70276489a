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
)

// TestGPUOptiXMaskedQueriesAgreeUnderTheTieRule: an OptiX scene answers
// Intersect with per-ray tmin and masks over meshes with masks (at build,
// after SetMeshMask hides a mesh, after every mask is reset) like the CPU
// backend under the tie rule of TestOptiXBackendAgreesUnderTheTieRule: rows
// whose reference or OptiX hit lies on a triangle's boundary (nearBoundary,
// within the face's float32 conditioning) or at the row's tmin are
// counted, not failed; a mismatch logs both hits, the faces' conditioning
// and the row, and the failure the seed (RAYD_TEST_SEED) that replays it. The batch (maskedBatch) aims a third
// of its rays at a vertex or an edge midpoint of the scene, at t = 1: a hit
// there is a boundary point of every face that meets it, where OptiX's
// triangle test (not watertight) may pick another face, or none, so a row
// whose either hit is its aim point is a boundary row too. Every OptiX hit honours its row's limits, and
// TraceReflections and Visible answer (no refusal) with every reported face
// visible to its row; visible_pair (over the scene's BVH) equals the CPU's.
func TestGPUOptiXMaskedQueriesAgreeUnderTheTieRule(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 77))
	meshes := parityScenes[3].meshes(r) // mixed: grid, soup, sphere
	for m, v := range testscene.RandomMeshMasks(r, len(meshes)) {
		meshes[m].Mask = rayd.Mask(v)
	}
	cpu := cpuScene(t, meshes...)
	gpu := gpuBackendScenes(t, ord, meshes)["optix"]
	rays, end := maskedBatch(t, r, meshes)
	checkOptiXMasked(t, "built with masks", cpu, gpu, meshes, rays, end)
	for _, s := range []*rayd.Scene{cpu, gpu} {
		require.NoError(t, s.SetMeshMask(ctx, 1, 0x06))
		require.NoError(t, s.SetMeshMask(ctx, 2, 0))
	}
	checkOptiXMasked(t, "after SetMeshMask", cpu, gpu, meshes, rays, end)
	requireSamePairs(t, "optix visible_pair with mesh masks", cpu, gpu, rays.Origins, end)
	for _, s := range []*rayd.Scene{cpu, gpu} {
		for m := range meshes {
			require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
		}
	}
	checkOptiXMasked(t, "after reset", cpu, gpu, meshes, rays, end)
}

// checkOptiXMasked compares gpu's masked queries with cpu's (see
// TestGPUOptiXMaskedQueriesAgreeUnderTheTieRule).
func checkOptiXMasked(t *testing.T, name string, cpu, gpu *rayd.Scene, meshes []rayd.Mesh, rays rayd.Rays, end []float32) {
	t.Helper()
	ctx := context.Background()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	for m := range meshes {
		mask, err := gpu.MeshMask(m)
		require.NoError(t, err)
		require.NoError(t, tb.SetMask(m, mask))
	}
	seen := func(i int, shape int32) bool { return shape < 0 || tb.MaskOf(int(shape))&rays.Mask[i] != 0 }
	g, err := gpu.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err, name)
	c, err := cpu.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	n := c.Len()
	org, dir := rays.Origins, rays.Directions
	boundary, bad := 0, 0
	for i := range n {
		if g.PrimID[i] >= 0 {
			require.GreaterOrEqual(t, g.T[i], rays.TMin[i], "%s row %d: hit before tmin", name, i)
			require.True(t, seen(i, g.ShapeID[i]), "%s row %d: mesh %d is masked for the row", name, i, g.ShapeID[i])
		}
		tm := float64(rays.TMin[i])
		nearTMin := func(x float32) bool { return math.Abs(float64(x)-tm) <= 1e-5*tm+1e-6 }
		o, d := org[3*i:3*i+3], dir[3*i:3*i+3]
		onEdge := c.PrimID[i] >= 0 && (nearBoundary(tb, o, d, c.PrimID[i], c.Bary[3*i:3*i+3]) || nearTMin(c.T[i])) ||
			g.PrimID[i] >= 0 && (nearBoundary(tb, o, d, g.PrimID[i], g.Bary[3*i:3*i+3]) || nearTMin(g.T[i])) ||
			atAimPoint(tb, org[3*i:3*i+3], dir[3*i:3*i+3], g.T[i], c.T[i])
		single := &rayd.Hits{Flags: rayd.FlagsAll, T: g.T[i : i+1], P: g.P[3*i : 3*i+3], N: g.N[3*i : 3*i+3], GeoN: g.GeoN[3*i : 3*i+3],
			UV: g.UV[2*i : 2*i+2], Bary: g.Bary[3*i : 3*i+3], ShapeID: g.ShapeID[i : i+1], PrimID: g.PrimID[i : i+1],
			LocalPrimID: g.LocalPrimID[i : i+1], GlobalPrimID: g.GlobalPrimID[i : i+1]}
		want := &rayd.Hits{Flags: rayd.FlagsAll, T: c.T[i : i+1], P: c.P[3*i : 3*i+3], N: c.N[3*i : 3*i+3], GeoN: c.GeoN[3*i : 3*i+3],
			UV: c.UV[2*i : 2*i+2], Bary: c.Bary[3*i : 3*i+3], ShapeID: c.ShapeID[i : i+1], PrimID: c.PrimID[i : i+1],
			LocalPrimID: c.LocalPrimID[i : i+1], GlobalPrimID: c.GlobalPrimID[i : i+1]}
		if m := compareHits(tb, org[3*i:3*i+3], dir[3*i:3*i+3], single, want); m.prim+m.t > 0 && !sameSurfaceNearOrigin(g, c, org, dir, i) {
			if (onEdge && boundary < 3) || (!onEdge && bad < 5) {
				rc, _ := faceConditioning(tb, o, d, c.PrimID[i])
				gc, _ := faceConditioning(tb, o, d, g.PrimID[i])
				t.Logf("%s row %d (boundary %v): optix t=%v prim=%d bary=%v, reference t=%v prim=%d bary=%v, barycentric conditioning %.3g / %.3g, tmin=%v mask=%#x o=%v d=%v",
					name, i, onEdge, g.T[i], g.PrimID[i], g.Bary[3*i:3*i+3], c.T[i], c.PrimID[i], c.Bary[3*i:3*i+3], gc.bary, rc.bary,
					rays.TMin[i], rays.Mask[i], o, d)
			}
			if onEdge {
				boundary++
			} else {
				bad++
			}
		}
	}
	t.Logf("%s: %d rays, %d boundary rows, %d mismatches outside the tie rule", name, n, boundary, bad)
	assert.Zero(t, bad, name)

	rf, err := gpu.TraceReflections(ctx, rays, 3)
	require.NoError(t, err, name)
	for i := range n {
		for b := range 3 {
			if p := rf.PrimIDs[i*3+b]; rf.Valid[i*3+b] {
				require.True(t, seen(i, tb.FaceShape[p]), "%s reflections row %d bounce %d: face %d is masked", name, i, b, p)
			}
		}
	}
	_, err = gpu.Visible(ctx, rays.Origins, end, nil)
	require.NoError(t, err, name)
}

// atAimPoint reports whether the row (o, d) points at a vertex or an edge
// midpoint of tb at t = 1 (the aimed rays of testscene.RandomRays: d is
// the float32 difference, so o + d is that point within float32 rounding)
// and one of the two hits (t values gt, ct) is that point.
func atAimPoint(tb *geom.Tables, o, d []float32, gt, ct float32) bool {
	if math.Abs(float64(gt)-1) > 1e-5 && math.Abs(float64(ct)-1) > 1e-5 {
		return false
	}
	var p [3]float64
	scale := 1.0
	for k := range 3 {
		p[k] = float64(o[k]) + float64(d[k])
		scale = math.Max(scale, math.Max(math.Abs(float64(o[k])), math.Abs(float64(d[k]))))
	}
	tol := 1e-6 * scale
	near := func(q [3]float64) bool {
		return math.Abs(p[0]-q[0]) <= tol && math.Abs(p[1]-q[1]) <= tol && math.Abs(p[2]-q[2]) <= tol
	}
	vert := func(v int32) [3]float64 {
		return [3]float64{float64(tb.Vertices[3*v]), float64(tb.Vertices[3*v+1]), float64(tb.Vertices[3*v+2])}
	}
	for f := range tb.NumFaces() {
		for a := range 3 {
			va, vb := vert(tb.Faces[3*f+a]), vert(tb.Faces[3*f+(a+1)%3])
			if near(va) || near([3]float64{(va[0] + vb[0]) / 2, (va[1] + vb[1]) / 2, (va[2] + vb[2]) / 2}) {
				return true
			}
		}
	}
	return false
}
