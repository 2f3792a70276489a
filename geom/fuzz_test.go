package geom

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// floatsFrom decodes b as little-endian float32 values.
func floatsFrom(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func intsFrom(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesOf(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func bytesOfInts(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// FuzzBuildTables: any mesh bytes end in valid tables or a typed error,
// never a panic; valid tables satisfy the indexing invariants.
func FuzzBuildTables(f *testing.F) {
	f.Add(bytesOf([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0}), bytesOfInts([]int32{0, 1, 2}), true)
	f.Add(bytesOf([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0}), bytesOfInts([]int32{0, 1, 3}), false)
	f.Add(bytesOf([]float32{float32(math.NaN()), 0, 0, 1, 0, 0, 0, 1, 0}), bytesOfInts([]int32{0, 1, 2}), false)
	f.Add(bytesOf([]float32{0, 0, 0, 0, 0, 0, 0, 0, 0}), bytesOfInts([]int32{0, 0, 0, -1, 2, 1}), true)
	f.Add([]byte{}, []byte{}, false)
	f.Fuzz(func(t *testing.T, vb, fb []byte, two bool) {
		m := Mesh{Vertices: floatsFrom(vb), Faces: intsFrom(fb), Dynamic: two}
		meshes := []Mesh{m}
		if two {
			meshes = append(meshes, m)
		}
		tb, err := BuildTables(meshes)
		if err != nil {
			if !errors.Is(err, ErrInvalidMesh) && !errors.Is(err, ErrNoMeshes) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for f := 0; f < tb.NumFaces(); f++ {
			if tb.FaceOffset[tb.FaceShape[f]]+tb.FaceLocal[f] != int32(f) {
				t.Fatalf("face %d: offset invariant broken", f)
			}
			for k := 0; k < 3; k++ {
				if v := tb.Faces[3*f+k]; v < 0 || int(v) >= tb.NumVertices() {
					t.Fatalf("face %d: vertex %d out of range", f, v)
				}
			}
		}
		if two {
			err := tb.UpdateVertices(1, m.Vertices)
			if err != nil {
				t.Fatalf("same vertices refused: %v", err)
			}
		}
	})
}

// FuzzCheckRays: any batch lengths give a row count or a typed error.
func FuzzCheckRays(f *testing.F) {
	f.Add(3, 3, 1, 1)
	f.Add(3, 6, 0, 0)
	f.Add(7, 7, 2, 3)
	f.Add(0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, no, nd, nt, na int) {
		if no < 0 || nd < 0 || nt < 0 || na < 0 || no > 1<<16 || nd > 1<<16 || nt > 1<<16 || na > 1<<16 {
			return
		}
		n, err := CheckRays(make([]float32, no), make([]float32, nd), make([]float32, nt), make([]bool, na))
		if err != nil {
			if !errors.Is(err, ErrLength) && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if 3*n != no || nd != no || (nt != 0 && nt != n) || (na != 0 && na != n) {
			t.Fatalf("accepted inconsistent lengths o=%d d=%d tmax=%d active=%d as %d rows", no, nd, nt, na, n)
		}
	})
}

// FuzzWatertight: any ray/triangle gives a miss or a hit with t in range
// and barycentrics summing to about 1; never NaN on a hit.
func FuzzWatertight(f *testing.F) {
	f.Add(bytesOf([]float32{0.25, 0.25, -1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0}))
	f.Add(bytesOf([]float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v := floatsFrom(b)
		if len(v) < 15 {
			return
		}
		var o, d, p0, p1, p2 [3]float32
		copy(o[:], v[0:3])
		copy(d[:], v[3:6])
		copy(p0[:], v[6:9])
		copy(p1[:], v[9:12])
		copy(p2[:], v[12:15])
		tt, u, w, ok := Watertight(o, d, p0, p1, p2, TMin, DefaultTMax)
		if !ok {
			return
		}
		if tt != tt || u != u || w != w || tt < TMin || tt > DefaultTMax {
			t.Fatalf("hit with t=%v u=%v v=%v", tt, u, w)
		}
	})
}
