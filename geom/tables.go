package geom

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors of scene construction and vertex updates. ErrMeshIndex
// and ErrNotDynamic are arguments outside their domain: both also match
// ErrInvalidArgument.
var (
	// ErrNoMeshes is returned by BuildTables for an empty mesh list.
	ErrNoMeshes = errors.New("geom: scene has no meshes")
	// ErrMeshIndex is returned for a mesh index outside [0, NumMeshes).
	ErrMeshIndex = fmt.Errorf("%w: mesh index out of range", ErrInvalidArgument)
	// ErrNotDynamic is returned when the vertices of a static mesh are updated.
	ErrNotDynamic = fmt.Errorf("%w: the mesh is not dynamic", ErrInvalidArgument)
)

// Tables is the scene-global indexing of spec §1.2: the meshes concatenated in
// mesh-id order.
//
// Vertices holds 3 float32 per global vertex and Faces 3 global vertex
// indices per global face (local index + VertexOffset of its mesh).
// VertexOffset[m] and FaceOffset[m] are the number of vertices and faces of
// the meshes before m. FaceShape[f] is the mesh of global face f and
// FaceLocal[f] its index within that mesh, so that
// f == FaceOffset[FaceShape[f]] + FaceLocal[f]. Dynamic and EdgesDisabled
// copy the per-mesh switches; Mask holds each mesh's visibility mask (its
// Mesh.Mask, DefaultMask when unset), indexed by shape id.
//
// Tables owns its slices (BuildTables copies the meshes). Only
// UpdateVertices mutates it; callers serialize it against readers.
type Tables struct {
	Vertices      []float32
	Faces         []int32
	VertexOffset  []int32
	FaceOffset    []int32
	FaceShape     []int32
	FaceLocal     []int32
	Dynamic       []bool
	EdgesDisabled []bool
	Mask          []uint8
}

// BuildTables validates every mesh and concatenates them. A rejected mesh is
// reported as a *MeshError carrying its index; an empty list is ErrNoMeshes.
// The totals must fit int32 indexing.
func BuildTables(meshes []Mesh) (*Tables, error) {
	if len(meshes) == 0 {
		return nil, ErrNoMeshes
	}
	var nv, nf int64
	for i := range meshes {
		if err := meshes[i].validate(); err != nil {
			err.Mesh = i
			return nil, err
		}
		nv += int64(meshes[i].NumVertices())
		nf += int64(meshes[i].NumFaces())
	}
	if 3*nv > math.MaxInt32 || 3*nf > math.MaxInt32 {
		return nil, &MeshError{Mesh: len(meshes) - 1, Field: "faces", Index: -1,
			Reason: fmt.Sprintf("scene of %d vertices and %d faces exceeds int32 indexing", nv, nf)}
	}
	m := len(meshes)
	t := &Tables{
		Vertices:      make([]float32, 0, 3*nv),
		Faces:         make([]int32, 0, 3*nf),
		VertexOffset:  make([]int32, m),
		FaceOffset:    make([]int32, m),
		FaceShape:     make([]int32, 0, nf),
		FaceLocal:     make([]int32, 0, nf),
		Dynamic:       make([]bool, m),
		EdgesDisabled: make([]bool, m),
		Mask:          make([]uint8, m),
	}
	for i := range meshes {
		mesh := &meshes[i]
		vo := int32(len(t.Vertices) / 3)
		t.VertexOffset[i] = vo
		t.FaceOffset[i] = int32(len(t.FaceShape))
		t.Dynamic[i] = mesh.Dynamic
		t.EdgesDisabled[i] = mesh.EdgesDisabled
		t.Mask[i] = DefaultMask
		if mesh.Mask != nil {
			t.Mask[i] = *mesh.Mask
		}
		t.Vertices = append(t.Vertices, mesh.Vertices...)
		for _, f := range mesh.Faces {
			t.Faces = append(t.Faces, f+vo)
		}
		for f := range mesh.NumFaces() {
			t.FaceShape = append(t.FaceShape, int32(i))
			t.FaceLocal = append(t.FaceLocal, int32(f))
		}
	}
	return t, nil
}

// NumMeshes is the number of meshes.
func (t *Tables) NumMeshes() int { return len(t.VertexOffset) }

// NumVertices is the number of global vertices.
func (t *Tables) NumVertices() int { return len(t.Vertices) / 3 }

// NumFaces is the number of global faces.
func (t *Tables) NumFaces() int { return len(t.FaceShape) }

// MeshVertexCount is the number of vertices of mesh m.
func (t *Tables) MeshVertexCount(m int) int {
	end := t.NumVertices()
	if m+1 < t.NumMeshes() {
		end = int(t.VertexOffset[m+1])
	}
	return end - int(t.VertexOffset[m])
}

// MeshFaceCount is the number of faces of mesh m.
func (t *Tables) MeshFaceCount(m int) int {
	end := t.NumFaces()
	if m+1 < t.NumMeshes() {
		end = int(t.FaceOffset[m+1])
	}
	return end - int(t.FaceOffset[m])
}

// Triangle returns the three vertices of global face f.
func (t *Tables) Triangle(f int) (p0, p1, p2 [3]float32) {
	i0, i1, i2 := t.Faces[3*f], t.Faces[3*f+1], t.Faces[3*f+2]
	return t.vertex(i0), t.vertex(i1), t.vertex(i2)
}

func (t *Tables) vertex(i int32) [3]float32 {
	return [3]float32{t.Vertices[3*i], t.Vertices[3*i+1], t.Vertices[3*i+2]}
}

// UpdateVertices replaces the vertices of dynamic mesh m in the global table,
// in place. v must hold exactly as many finite coordinates as the mesh has
// (the topology is fixed). Errors: ErrMeshIndex, ErrNotDynamic, or a
// *MeshError naming the offending coordinate. On error nothing is written.
// Scenes built on t must be refit afterwards.
func (t *Tables) UpdateVertices(m int, v []float32) error {
	if m < 0 || m >= t.NumMeshes() {
		return fmt.Errorf("%w: %d not in [0,%d)", ErrMeshIndex, m, t.NumMeshes())
	}
	if !t.Dynamic[m] {
		return fmt.Errorf("%w: mesh %d", ErrNotDynamic, m)
	}
	want := 3 * t.MeshVertexCount(m)
	if len(v) != want {
		return &MeshError{Mesh: m, Field: "vertices", Index: -1,
			Reason: fmt.Sprintf("length %d, want %d (the vertex count of a mesh is fixed)", len(v), want)}
	}
	if err := checkFinite(v); err != nil {
		err.Mesh = m
		return err
	}
	copy(t.Vertices[3*int(t.VertexOffset[m]):], v)
	return nil
}

// Meshes returns the scene's meshes as they are now (current vertices,
// local face indices, the per-mesh switches), in mesh order; the slices are
// copies. BuildTables(t.Meshes()) rebuilds equal tables.
func (t *Tables) Meshes() []Mesh {
	out := make([]Mesh, t.NumMeshes())
	for m := range out {
		vo, fo := int(t.VertexOffset[m]), int(t.FaceOffset[m])
		nv, nf := t.MeshVertexCount(m), t.MeshFaceCount(m)
		faces := make([]int32, 3*nf)
		for i, f := range t.Faces[3*fo : 3*(fo+nf)] {
			faces[i] = f - int32(vo)
		}
		out[m] = Mesh{Vertices: append([]float32(nil), t.Vertices[3*vo:3*(vo+nv)]...), Faces: faces,
			Dynamic: t.Dynamic[m], EdgesDisabled: t.EdgesDisabled[m]}
		if mask := t.MaskOf(m); mask != DefaultMask {
			out[m].Mask = &mask
		}
	}
	return out
}
