package edge

import (
	"slices"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

func quadMesh(z float32) geom.Mesh {
	return geom.Mesh{
		Vertices: []float32{0, 0, z, 1, 0, z, 1, 1, z, 0, 1, z},
		Faces:    []int32{0, 1, 2, 0, 2, 3},
	}
}

func mustTables(t *testing.T, meshes ...geom.Mesh) *geom.Tables {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

type edgeRow struct{ v0, v1, f0, f1, opp, shape, local int32 }

func rows(e *Edges) []edgeRow {
	out := make([]edgeRow, e.Len())
	for i := range out {
		out[i] = edgeRow{e.V0[i], e.V1[i], e.Face0[i], e.Face1[i], e.Opposite[i], e.ShapeID[i], e.LocalID[i]}
	}
	return out
}

func TestTopologyUnitQuad(t *testing.T) {
	e := Topology(mustTables(t, quadMesh(0)))
	want := []edgeRow{
		{0, 1, 0, -1, 2, 0, 0},
		{0, 2, 0, 1, 1, 0, 1},
		{0, 3, 1, -1, 2, 0, 2},
		{1, 2, 0, -1, 0, 0, 3},
		{2, 3, 1, -1, 0, 0, 4},
	}
	if got := rows(e); !slices.Equal(got, want) {
		t.Fatalf("edges\n got %v\nwant %v", got, want)
	}
	var boundary []bool
	for i := range e.Len() {
		boundary = append(boundary, e.IsBoundary(i))
	}
	if !slices.Equal(boundary, []bool{true, false, true, true, true}) {
		t.Fatalf("boundary %v", boundary)
	}
	if !slices.Equal(e.Offset, []int32{0}) || !slices.Equal(e.Count, []int32{5}) {
		t.Fatalf("offset %v count %v", e.Offset, e.Count)
	}
}

func TestTopologyClosedTetrahedron(t *testing.T) {
	m := geom.Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1},
		Faces:    []int32{0, 2, 1, 0, 1, 3, 1, 2, 3, 0, 3, 2},
	}
	e := Topology(mustTables(t, m))
	if e.Len() != 6 {
		t.Fatalf("E = %d, want 6", e.Len())
	}
	for i := range e.Len() {
		if e.IsBoundary(i) || e.Face0[i] >= e.Face1[i] {
			t.Fatalf("edge %d: faces %d %d", i, e.Face0[i], e.Face1[i])
		}
		if e.Opposite[i] == e.V0[i] || e.Opposite[i] == e.V1[i] {
			t.Fatalf("edge %d: opposite %d on the edge", i, e.Opposite[i])
		}
	}
}

func TestTopologyNonManifoldFan(t *testing.T) {
	// Three faces share the key (0,1): candidates 0 (f0 0→1), 3 (f1 1→0),
	// 6 (f2 0→1) ⇒ 3 edges for the pairs (0,3), (0,6), (3,6).
	m := geom.Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1},
		Faces:    []int32{0, 1, 2, 1, 0, 3, 0, 1, 4},
	}
	e := Topology(mustTables(t, m))
	got := rows(e)
	want := []edgeRow{
		{0, 1, 0, 1, 2, 0, 0},
		{0, 1, 0, 2, 2, 0, 1},
		{0, 1, 1, 2, 3, 0, 2},
		{0, 2, 0, -1, 1, 0, 3},
		{0, 3, 1, -1, 1, 0, 4},
		{0, 4, 2, -1, 1, 0, 5},
		{1, 2, 0, -1, 0, 0, 6},
		{1, 3, 1, -1, 0, 0, 7},
		{1, 4, 2, -1, 0, 0, 8},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("edges\n got %v\nwant %v", got, want)
	}
	// k faces on one key ⇒ k(k−1)/2 edges.
	for k := 1; k <= 6; k++ {
		fan := geom.Mesh{Vertices: make([]float32, 3*(k+2))}
		for i := range k + 2 {
			fan.Vertices[3*i] = float32(i)
			fan.Vertices[3*i+1] = float32(i * i)
		}
		for i := range k {
			fan.Faces = append(fan.Faces, 0, 1, int32(i+2))
		}
		e := Topology(mustTables(t, fan))
		shared := 0
		for i := range e.Len() {
			if e.V0[i] == 0 && e.V1[i] == 1 {
				shared++
			}
		}
		want := k * (k - 1) / 2
		if k == 1 {
			want = 1
		}
		if shared != want || e.Len() != want+2*k {
			t.Fatalf("k=%d: shared %d (want %d), E %d", k, shared, want, e.Len())
		}
	}
}

func TestTopologyMultiMeshDisabled(t *testing.T) {
	tri := geom.Mesh{Vertices: []float32{0, 0, 5, 1, 0, 5, 0, 1, 5}, Faces: []int32{0, 1, 2}, EdgesDisabled: true}
	e := Topology(mustTables(t, quadMesh(0), tri, quadMesh(1)))
	if e.Len() != 10 {
		t.Fatalf("E = %d, want 10", e.Len())
	}
	if !slices.Equal(e.Offset, []int32{0, 5, 5}) || !slices.Equal(e.Count, []int32{5, 0, 5}) {
		t.Fatalf("offset %v count %v", e.Offset, e.Count)
	}
	first := rows(Topology(mustTables(t, quadMesh(0))))
	for i, r := range rows(e)[5:] {
		w := first[i]
		// Global vertices shift by 4 + 3; faces stay mesh-local.
		w.v0, w.v1, w.opp, w.shape = w.v0+7, w.v1+7, w.opp+7, 2
		if r != w {
			t.Fatalf("edge %d: got %v want %v", 5+i, r, w)
		}
	}
	all := Topology(mustTables(t, tri))
	if all.Len() != 0 || all.Count[0] != 0 {
		t.Fatalf("disabled mesh produced %d edges", all.Len())
	}
}
