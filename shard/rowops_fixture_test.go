package shard_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// The fixture of the nearest-edge, visibility-variant and backward-pass
// tests: the shared dynamic grid (mesh 0, 81 vertices, 208 edges) and a
// static box above it (mesh 1, 8 vertices, 18 edges), so that shape ids,
// local edge ids and vertex offsets are exercised.
func rowMeshes() []geom.Mesh {
	return append(fixtureMeshes(), testscene.Box([3]float32{0.3, -0.2, 0.45}, [3]float32{0.25, 0.2, 0.3}))
}

// single is the single-device CPU reference: one set of tables with its
// ref.Scene and edge.Scene, mutated as the broadcasts mutate the replicas.
type single struct {
	tables *geom.Tables
	scene  *ref.Scene
	edges  *edge.Scene
}

func newSingle(t testing.TB) *single {
	t.Helper()
	tables, err := geom.BuildTables(rowMeshes())
	require.NoError(t, err)
	s, err := ref.NewScene(tables)
	require.NoError(t, err)
	return &single{tables: tables, scene: s, edges: edge.NewScene(tables)}
}

// update replaces mesh 0's vertices and refits (UpdateVertices + SyncGeometry).
func (s *single) update(t testing.TB, v []float32) {
	t.Helper()
	require.NoError(t, s.tables.UpdateVertices(0, v))
	s.scene.Refit()
}

// rowLayer plans a layer over devices on a simulated cluster just large
// enough (a repeated device needs o.AllowSameDevice) and builds rowMeshes.
func rowLayer(t testing.TB, devices []int, o shard.Options) (*shard.Layer, *simdev.Cluster) {
	t.Helper()
	c := simdev.New(simdev.Config{Devices: slices.Max(devices) + 1})
	l, err := shard.Plan(devices, c, o)
	require.NoError(t, err)
	require.NotNil(t, l)
	require.NoError(t, l.Build(context.Background(), c.Builder(devices[0], rowMeshes())))
	c.ResetStats()
	t.Cleanup(func() {
		require.NoError(t, l.Close())
		require.Zero(t, c.LivePayloads(), "payloads leaked")
	})
	return l, c
}

// rowInputs are the random inputs of one test, drawn once from a fresh
// seed (testscene.Rand logs it on failure) and reused across mutations.
type rowInputs struct {
	n int
	// Query points (NearestEdge, NearestEdges), with an active mask.
	points []float32
	active []bool
	k      int
	// Rays (NearestEdgeRay, the backward passes): finite and +Inf tmax,
	// a NaN tmax now and then.
	o, d, tmax []float32
	rayActive  []bool
	// The visibility variants.
	pairStart, pairA, pairB []float32
	pairIgnore              []int32
	samples                 geom.EdgeSamples
	chain                   []float32
	chainP                  int
	chainLen                []int32
	chainIgnore             []int32
	// Cotangents of the backward passes (float64 for the edges).
	icot geom.IntersectCotangents
	pcot edge.PointCotangent
	rcot edge.RayCotangent
}

func newRowInputs(r *rand.Rand, s *single, n int) *rowInputs {
	in := &rowInputs{n: n, k: 1 + r.IntN(5), chainP: 2 + r.IntN(4)}
	in.points = randPoints(r, s.tables, n)
	in.active = randActive(r, n)
	in.o, in.d, in.tmax = testscene.RandomRays(r, s.tables, n)
	for i := range n {
		if r.IntN(40) == 0 {
			in.tmax[i] = float32(math.NaN())
		}
	}
	in.rayActive = randActive(r, n)
	in.pairStart, in.pairA, in.pairB = randPoints(r, s.tables, n), randPoints(r, s.tables, n), randPoints(r, s.tables, n)
	in.pairIgnore = randIgnore(r, s.tables, 2*n)
	in.samples = geom.EdgeSamples{Source: randPoints(r, s.tables, n), Position: randPoints(r, s.tables, n),
		Direction: normals32(r, 3*n), TMin: uniform32(r, n, -0.5, 0.2), TMax: uniform32(r, n, 0, 0.8), Active: randActive(r, n)}
	if r.IntN(2) == 0 {
		in.samples.Fractions = uniform32(r, 1+r.IntN(7), 0, 1)
	}
	in.chain = randPoints(r, s.tables, n*in.chainP)
	in.chainLen = make([]int32, n)
	for i := range in.chainLen {
		in.chainLen[i] = int32(r.IntN(in.chainP + 1)) // 0 … P: P walks every slot too
	}
	in.chainIgnore = randIgnore(r, s.tables, n*(in.chainP-1))
	in.icot = geom.IntersectCotangents{T: normals32(r, n), P: normals32(r, 3*n), N: normals32(r, 3*n),
		GeoN: normals32(r, 3*n), UV: normals32(r, 2*n), Bary: normals32(r, 3*n)}
	in.pcot = edge.PointCotangent{Distance: normals64(r, n), EdgePoint: normals64(r, 3*n), EdgeT: normals64(r, n)}
	in.rcot = edge.RayCotangent{Distance: normals64(r, n), RayT: normals64(r, n), Point: normals64(r, 3*n),
		EdgeT: normals64(r, n), EdgePoint: normals64(r, 3*n)}
	// An absent cotangent is zero: drop one field of each at random.
	switch r.IntN(3) {
	case 0:
		in.icot.N = nil
	case 1:
		in.icot.UV, in.icot.Bary = nil, nil
	}
	if r.IntN(2) == 0 {
		in.pcot.EdgeT = nil
	}
	if r.IntN(2) == 0 {
		in.rcot.Point = nil
	}
	return in
}

// randPoints mixes uniform points around the scene with points exactly on
// vertices and edge midpoints (ties between edges) and non-finite rows.
func randPoints(r *rand.Rand, tb *geom.Tables, n int) []float32 {
	p := make([]float32, 3*n)
	for i := range n {
		row := p[3*i : 3*i+3]
		switch r.IntN(10) {
		case 0:
			v := r.IntN(tb.NumVertices())
			copy(row, tb.Vertices[3*v:3*v+3])
		case 1:
			f := r.IntN(tb.NumFaces())
			a, b := int(tb.Faces[3*f]), int(tb.Faces[3*f+1])
			for k := range 3 {
				row[k] = (tb.Vertices[3*a+k] + tb.Vertices[3*b+k]) / 2
			}
			row[2] += float32(r.IntN(3)-1) * 0.125
		case 2:
			if r.IntN(4) == 0 {
				row[r.IntN(3)] = float32(math.NaN())
				continue
			}
			fallthrough
		default:
			for k := range 3 {
				row[k] = float32(r.Float64()*2.8 - 1.4)
			}
		}
	}
	return p
}

// randActive is nil (every row active) a third of the time, else a random
// mask.
func randActive(r *rand.Rand, n int) []bool {
	if r.IntN(3) == 0 {
		return nil
	}
	a := make([]bool, n)
	for i := range a {
		a[i] = r.IntN(5) != 0
	}
	return a
}

// randIgnore is two ignored prim ids per segment (−1 pads), or none.
func randIgnore(r *rand.Rand, tb *geom.Tables, segments int) []int32 {
	if r.IntN(3) == 0 {
		return nil
	}
	ig := make([]int32, 2*segments)
	for i := range ig {
		ig[i] = int32(r.IntN(tb.NumFaces()+tb.NumFaces()/2)) - int32(tb.NumFaces()/2)
		ig[i] = max(ig[i], -1)
	}
	return ig
}

func normals32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func normals64(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

func uniform32(r *rand.Rand, n int, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return v
}

// randMask disables about a third of the edges.
func randMask(r *rand.Rand, edges int) []bool {
	m := make([]bool, edges)
	for i := range m {
		m[i] = r.IntN(3) != 0
	}
	return m
}
