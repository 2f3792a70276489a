package geom

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func quad() Mesh {
	return Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0},
		Faces:    []int32{0, 1, 2, 0, 2, 3},
	}
}

func TestMeshValidate(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		mesh   Mesh
		field  string
		index  int
		reason string
	}{
		{"no vertices", Mesh{Faces: []int32{0, 1, 2}}, "vertices", -1, "no vertices"},
		{"no faces", Mesh{Vertices: []float32{0, 0, 0}}, "faces", -1, "no faces"},
		{"ragged vertices", Mesh{Vertices: []float32{0, 0, 0, 1}, Faces: []int32{0, 0, 0}}, "vertices", -1, "multiple of 3"},
		{"ragged faces", Mesh{Vertices: []float32{0, 0, 0}, Faces: []int32{0, 0}}, "faces", -1, "multiple of 3"},
		{"negative index", Mesh{Vertices: []float32{0, 0, 0}, Faces: []int32{0, -1, 0}}, "faces", 1, "out of range"},
		{"index too large", Mesh{Vertices: []float32{0, 0, 0, 1, 1, 1}, Faces: []int32{0, 1, 0, 1, 0, 2}}, "faces", 5, "face 1"},
		{"nan", Mesh{Vertices: []float32{0, 0, 0, 1, nan, 1}, Faces: []int32{0, 1, 0}}, "vertices", 4, "vertex 1"},
		{"inf", Mesh{Vertices: []float32{float32(math.Inf(-1)), 0, 0}, Faces: []int32{0, 0, 0}}, "vertices", 0, "not finite"},
	}
	for _, c := range cases {
		err := c.mesh.Validate()
		if !errors.Is(err, ErrInvalidMesh) {
			t.Errorf("%s: err = %v, want ErrInvalidMesh", c.name, err)
			continue
		}
		var me *MeshError
		if !errors.As(err, &me) {
			t.Fatalf("%s: %T is not *MeshError", c.name, err)
		}
		if me.Mesh != -1 || me.Field != c.field || me.Index != c.index || !strings.Contains(me.Reason, c.reason) {
			t.Errorf("%s: got %+v, want field %q index %d reason ~%q", c.name, *me, c.field, c.index, c.reason)
		}
		if !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: message %q does not name the field", c.name, err)
		}
	}
	q := quad()
	if err := q.Validate(); err != nil {
		t.Fatalf("valid quad: %v", err)
	}
	degenerate := Mesh{Vertices: []float32{1, 1, 1}, Faces: []int32{0, 0, 0}}
	if err := degenerate.Validate(); err != nil {
		t.Fatalf("degenerate triangles are valid: %v", err)
	}
}

func TestBuildTables(t *testing.T) {
	tri := Mesh{Vertices: []float32{5, 5, 5, 6, 5, 5, 5, 6, 5}, Faces: []int32{0, 1, 2}, Dynamic: true}
	q := quad()
	q.EdgesDisabled = true
	tb, err := BuildTables([]Mesh{q, tri, q})
	if err != nil {
		t.Fatal(err)
	}
	if tb.NumMeshes() != 3 || tb.NumVertices() != 11 || tb.NumFaces() != 5 {
		t.Fatalf("counts: %d meshes %d vertices %d faces", tb.NumMeshes(), tb.NumVertices(), tb.NumFaces())
	}
	wantFaces := []int32{0, 1, 2, 0, 2, 3, 4, 5, 6, 7, 8, 9, 7, 9, 10}
	if !equal(tb.Faces, wantFaces) {
		t.Errorf("faces %v, want %v", tb.Faces, wantFaces)
	}
	checks := []struct {
		name      string
		got, want []int32
	}{
		{"VertexOffset", tb.VertexOffset, []int32{0, 4, 7}},
		{"FaceOffset", tb.FaceOffset, []int32{0, 2, 3}},
		{"FaceShape", tb.FaceShape, []int32{0, 0, 1, 2, 2}},
		{"FaceLocal", tb.FaceLocal, []int32{0, 1, 0, 0, 1}},
	}
	for _, c := range checks {
		if !equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for f := range tb.NumFaces() {
		if int32(f) != tb.FaceOffset[tb.FaceShape[f]]+tb.FaceLocal[f] {
			t.Errorf("face %d breaks global = offset + local", f)
		}
	}
	if !tb.Dynamic[1] || tb.Dynamic[0] || !tb.EdgesDisabled[0] || tb.EdgesDisabled[1] {
		t.Errorf("switches: dynamic %v edges disabled %v", tb.Dynamic, tb.EdgesDisabled)
	}
	if tb.MeshVertexCount(1) != 3 || tb.MeshFaceCount(2) != 2 {
		t.Errorf("per-mesh counts %d %d", tb.MeshVertexCount(1), tb.MeshFaceCount(2))
	}
	p0, p1, p2 := tb.Triangle(2)
	if p0 != [3]float32{5, 5, 5} || p1 != [3]float32{6, 5, 5} || p2 != [3]float32{5, 6, 5} {
		t.Errorf("Triangle(2) = %v %v %v", p0, p1, p2)
	}
	// The tables own their data.
	q.Vertices[0] = 42
	if tb.Vertices[0] != 0 {
		t.Error("BuildTables aliases the mesh vertices")
	}
}

func TestBuildTablesErrors(t *testing.T) {
	if _, err := BuildTables(nil); !errors.Is(err, ErrNoMeshes) {
		t.Fatalf("no meshes: %v", err)
	}
	bad := Mesh{Vertices: []float32{0, 0, 0}, Faces: []int32{0, 0, 3}}
	_, err := BuildTables([]Mesh{quad(), quad(), bad})
	var me *MeshError
	if !errors.As(err, &me) || me.Mesh != 2 || me.Field != "faces" || me.Index != 2 {
		t.Fatalf("bad mesh: %v", err)
	}
	if !errors.Is(err, ErrInvalidMesh) || !strings.Contains(err.Error(), "mesh 2") {
		t.Fatalf("message %q", err)
	}
}

func TestUpdateVertices(t *testing.T) {
	dyn := quad()
	dyn.Dynamic = true
	tb, err := BuildTables([]Mesh{quad(), dyn})
	if err != nil {
		t.Fatal(err)
	}
	nv := []float32{0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1}
	if err := tb.UpdateVertices(1, nv); err != nil {
		t.Fatal(err)
	}
	if !equal(tb.Vertices[12:], nv) || tb.Vertices[2] != 0 {
		t.Fatalf("vertices after update: %v", tb.Vertices)
	}
	if err := tb.UpdateVertices(0, nv); !errors.Is(err, ErrNotDynamic) {
		t.Errorf("static mesh: %v", err)
	}
	if err := tb.UpdateVertices(2, nv); !errors.Is(err, ErrMeshIndex) {
		t.Errorf("bad index: %v", err)
	}
	if err := tb.UpdateVertices(-1, nv); !errors.Is(err, ErrMeshIndex) {
		t.Errorf("negative index: %v", err)
	}
	var me *MeshError
	if err := tb.UpdateVertices(1, nv[:9]); !errors.As(err, &me) || me.Mesh != 1 || me.Field != "vertices" {
		t.Errorf("short update: %v", err)
	}
	bad := append([]float32(nil), nv...)
	bad[7] = float32(math.NaN())
	if err := tb.UpdateVertices(1, bad); !errors.As(err, &me) || me.Index != 7 || me.Mesh != 1 {
		t.Errorf("nan update: %v", err)
	}
	if !equal(tb.Vertices[12:], nv) {
		t.Error("a rejected update wrote vertices")
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
