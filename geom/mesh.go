package geom

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidMesh is matched (errors.Is) by every *MeshError.
var ErrInvalidMesh = errors.New("geom: invalid mesh")

// MeshError describes why a mesh was rejected. It names the mesh (its index
// in the scene, or -1 when a single mesh was validated on its own), the field
// ("vertices" or "faces"), the position in that flat slice (-1 when the error
// concerns the slice as a whole) and the reason.
type MeshError struct {
	Mesh   int
	Field  string
	Index  int
	Reason string
}

// Error implements error.
func (e *MeshError) Error() string {
	msg := "geom: invalid mesh"
	if e.Mesh >= 0 {
		msg += fmt.Sprintf(" %d", e.Mesh)
	}
	msg += ": " + e.Field
	if e.Index >= 0 {
		msg += fmt.Sprintf("[%d]", e.Index)
	}
	return msg + ": " + e.Reason
}

// Is reports whether target is ErrInvalidMesh.
func (e *MeshError) Is(target error) bool { return target == ErrInvalidMesh }

// Mesh is a triangle mesh as the host hands it to a scene.
//
// Vertices holds 3 float32 per vertex (x, y, z); Faces holds 3 int32 per
// triangle, each a local vertex index in [0, V). The winding of a face
// defines the orientation of its normal e1×e2 (e1 = v1−v0, e2 = v2−v0).
// Dynamic meshes may have their vertices replaced after the scene is built
// (Tables.UpdateVertices); EdgesDisabled removes the mesh from edge queries.
// Degenerate (zero-area) triangles are valid; they are never hit.
//
// Mask is the mesh's 8-bit visibility mask: a ray hits the mesh only when
// its own mask (Rays.Mask, 0xFF by default) shares a bit with it. nil
// means DefaultMask (0xFF, visible to every ray); Mask(0) hides the
// mesh from every traced query. It can be changed after the build
// (Tables.SetMask).
type Mesh struct {
	Vertices      []float32
	Faces         []int32
	Dynamic       bool
	EdgesDisabled bool
	Mask          *uint8
}

// NumVertices is len(Vertices)/3.
func (m *Mesh) NumVertices() int { return len(m.Vertices) / 3 }

// NumFaces is len(Faces)/3.
func (m *Mesh) NumFaces() int { return len(m.Faces) / 3 }

// Validate checks that the mesh has at least one vertex and one face, that
// both slices hold whole rows of 3, that every vertex coordinate is finite
// and that every face index lies in [0, V). The first violation is returned
// as a *MeshError with Mesh = -1.
func (m *Mesh) Validate() error {
	if err := m.validate(); err != nil {
		return err
	}
	return nil
}

func (m *Mesh) validate() *MeshError {
	switch {
	case len(m.Vertices) == 0:
		return &MeshError{Mesh: -1, Field: "vertices", Index: -1, Reason: "mesh has no vertices"}
	case len(m.Vertices)%3 != 0:
		return &MeshError{Mesh: -1, Field: "vertices", Index: -1,
			Reason: fmt.Sprintf("length %d is not a multiple of 3", len(m.Vertices))}
	case len(m.Faces) == 0:
		return &MeshError{Mesh: -1, Field: "faces", Index: -1, Reason: "mesh has no faces"}
	case len(m.Faces)%3 != 0:
		return &MeshError{Mesh: -1, Field: "faces", Index: -1,
			Reason: fmt.Sprintf("length %d is not a multiple of 3", len(m.Faces))}
	}
	if err := checkFinite(m.Vertices); err != nil {
		return err
	}
	nv := int64(len(m.Vertices) / 3)
	for i, f := range m.Faces {
		if f < 0 || int64(f) >= nv {
			return &MeshError{Mesh: -1, Field: "faces", Index: i,
				Reason: fmt.Sprintf("face %d: vertex index %d out of range [0,%d)", i/3, f, nv)}
		}
	}
	return nil
}

// checkFinite reports the first NaN or infinite coordinate of v.
func checkFinite(v []float32) *MeshError {
	for i, x := range v {
		if !isFinite32(x) {
			return &MeshError{Mesh: -1, Field: "vertices", Index: i,
				Reason: fmt.Sprintf("vertex %d: coordinate %v is not finite", i/3, x)}
		}
	}
	return nil
}

// isFinite32 reports whether x is neither NaN nor ±Inf.
func isFinite32(x float32) bool {
	// NaN and ±Inf are the values whose exponent bits are all ones.
	return math.Float32bits(x)&0x7f800000 != 0x7f800000
}

// IsFinite3 reports whether all three components of v are finite.
func IsFinite3(v [3]float32) bool {
	return isFinite32(v[0]) && isFinite32(v[1]) && isFinite32(v[2])
}
