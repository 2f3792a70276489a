package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestVJPLaunchMatchesTheKernel drives the VJP launch through the recorder
// with every optional buffer set and unset.
func TestVJPLaunchMatchesTheKernel(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleVJP: parseKernels(t, "vjp.cu"),
	}}
	geo := Geometry{Vertices: buf[float32](), Faces: buf[int32]()}
	for _, full := range []bool{false, true} {
		r := Rays{O: buf[float32](), D: buf[float32](), N: 10}
		tape := Tape{Prim: buf[int32]()}
		var g Cotangents
		var out Grads
		if full {
			r.Active, tape.UV = buf[uint8](), buf[float32]()
			g = Cotangents{T: buf[float32](), P: buf[float32](), N: buf[float32](), GeoN: buf[float32](), UV: buf[float32](), Bary: buf[float32]()}
			out = Grads{Vertices: buf[float32](), Origins: buf[float32](), Directions: buf[float32]()}
		}
		require.NoError(t, launchVJP(rec, geo, r, tape, g, out))
	}
	assert.Equal(t, 2, rec.seen[ModuleVJP+".rayd_intersect_vjp"])
	for entry := range rec.kernels[ModuleVJP] {
		assert.Positive(t, rec.seen[ModuleVJP+"."+entry], "kernel %s is never launched", entry)
	}
}

func TestVJPArgumentChecks(t *testing.T) {
	geo := Geometry{Vertices: buf[float32](), Faces: buf[int32]()}
	r := Rays{O: buf[float32](), D: buf[float32]()} // N = 0: every length check passes
	assert.NoError(t, checkVJP(geo, r, Tape{Prim: buf[int32]()}, Cotangents{}, Grads{}))
	assert.ErrorContains(t, checkVJP(geo, r, Tape{}, Cotangents{}, Grads{}), "Tape.Prim is required")
	r.N = 2
	assert.ErrorContains(t, checkVJP(geo, r, Tape{Prim: buf[int32]()}, Cotangents{}, Grads{}), "Rays.O holds 0 elements")
	r = Rays{O: buf[float32](), D: buf[float32]()}
	assert.ErrorContains(t, checkVJP(Geometry{}, r, Tape{Prim: buf[int32]()}, Cotangents{}, Grads{}), "no device geometry")
}

// Both tracers carry the VJP.
type vjpTracer interface {
	IntersectVJP(*launch.Stream, Rays, Tape, Cotangents, Grads) error
	NumVertices() int
}

var (
	_ vjpTracer = (*BVH)(nil)
	_ vjpTracer = (*OptiX)(nil)
)

// vjpCase is a forward intersect on the device with random cotangents.
type vjpCase struct {
	tab    *geom.Tables
	bvh    *BVH
	rays   *rayBatch
	hits   *geom.Hits
	cot    ref.IntersectCotangents
	devCot Cotangents
	tape   Tape
}

func newVJPCase(t *testing.T, s *launch.Stream, tab *geom.Tables, n int, seed uint64) *vjpCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	o, d := make([]float32, 3*n), make([]float32, 3*n)
	active := make([]bool, n)
	for i := range n {
		o[3*i], o[3*i+1], o[3*i+2] = rng.Float32()*2.2-1.1, rng.Float32()*2.2-1.1, 2+rng.Float32()
		d[3*i], d[3*i+1], d[3*i+2] = rng.Float32()*0.4-0.2, rng.Float32()*0.4-0.2, -1
		active[i] = i%7 != 3
	}
	bvh, err := Build(s, tab)
	require.NoError(t, err)
	t.Cleanup(func() { _ = bvh.Close() })
	c := &vjpCase{tab: tab, bvh: bvh, rays: newRayBatch(t, s, o, d, nil, active)}
	var dev Hits
	c.hits = deviceHits(t, s, n, geom.FlagsAll, func(h Hits) error {
		dev = h
		return bvh.Intersect(s, c.rays.dev, geom.FlagsAll, h)
	})
	c.tape = Tape{Prim: dev.PrimID, UV: dev.UV}
	rnd := func(per int) []float32 {
		v := make([]float32, per*n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	c.cot = ref.IntersectCotangents{T: rnd(1), P: rnd(3), N: rnd(3), GeoN: rnd(3), UV: rnd(2), Bary: rnd(3)}
	c.devCot = Cotangents{T: devBuf(t, s, c.cot.T), P: devBuf(t, s, c.cot.P), N: devBuf(t, s, c.cot.N),
		GeoN: devBuf(t, s, c.cot.GeoN), UV: devBuf(t, s, c.cot.UV), Bary: devBuf(t, s, c.cot.Bary)}
	return c
}

// closeTo reports the first element where got (float32) and want (float64)
// differ by more than rtol·|want| + atol.
func closeTo(got []float32, want []float64, rtol, atol float64) (int, bool) {
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > rtol*math.Abs(want[i])+atol {
			return i, false
		}
	}
	return -1, true
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// TestGPUIntersectVJPMatchesReference compares the kernel with the float64
// reference on the same tape, with the tape's (u, v) and without.
func TestGPUIntersectVJPMatchesReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		for name, tab := range map[string]*geom.Tables{
			"grid":  tables(t, gridMesh(16, 2)),
			"mixed": tables(t, gridMesh(9, 3), cloudMesh(3000, 0.1, 4)),
		} {
			const n = 20000
			c := newVJPCase(t, s, tab, n, 5)
			nv := tab.NumVertices()
			for _, withUV := range []bool{true, false} {
				tape, uv := c.tape, c.hits.UV
				if !withUV {
					tape.UV, uv = nil, nil
				}
				out := Grads{Vertices: devOut[float32](t, s, 3*nv), Origins: devOut[float32](t, s, 3*n), Directions: devOut[float32](t, s, 3*n)}
				require.NoError(t, c.bvh.IntersectVJP(s, c.rays.dev, tape, c.devCot, out))
				want, err := ref.IntersectVJP(tab, c.rays.o, c.rays.d, c.rays.active, c.hits.PrimID, uv, c.cot)
				require.NoError(t, err)
				gv := download(t, s, out.Vertices, 3*nv)
				if i, ok := closeTo(gv, want.Vertices, 1e-4, 1e-5*maxAbs(want.Vertices)); !ok {
					t.Fatalf("%s (uv %v): vertex gradient %d: got %v, want %v", name, withUV, i, gv[i], want.Vertices[i])
				}
				for what, pair := range map[string]struct {
					b *launch.Buffer[float32]
					w []float64
				}{"origin": {out.Origins, want.Origins}, "direction": {out.Directions, want.Directions}} {
					got := download(t, s, pair.b, 3*n)
					if i, ok := closeTo(got, pair.w, 1e-5, 1e-9*maxAbs(pair.w)); !ok {
						t.Fatalf("%s (uv %v): %s gradient %d (row %d, prim %d): got %v, want %v", name, withUV, what, i, i/3,
							c.hits.PrimID[i/3], got[i], pair.w[i])
					}
				}
			}
		}
	})
}

// TestGPUIntersectVJPUnitTriangle is the spec's check on the device, with
// only the t cotangent and only the vertex output.
func TestGPUIntersectVJPUnitTriangle(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		tab := tables(t, geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}})
		bvh, err := Build(s, tab)
		require.NoError(t, err)
		defer bvh.Close()
		r := newRayBatch(t, s, []float32{.25, .25, -1}, []float32{0, 0, 1}, nil, nil)
		tape := Tape{Prim: devBuf(t, s, []int32{0}), UV: devBuf(t, s, []float32{.25, .25})}
		out := Grads{Vertices: devBuf(t, s, []float32{9, 9, 9, 9, 9, 9, 9, 9, 9})} // stale values are zeroed
		require.NoError(t, bvh.IntersectVJP(s, r.dev, tape, Cotangents{T: devBuf(t, s, []float32{1})}, out))
		assert.Equal(t, []float32{0, 0, .5, 0, 0, .25, 0, 0, .25}, download(t, s, out.Vertices, 9))
	})
}
