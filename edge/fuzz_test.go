package edge

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// FuzzIndexQueries builds a small scene, a mask and queries from arbitrary
// bytes: the Index answers every point, top-k and ray query exactly as the
// scan, and the public queries end in a result or a typed error, never a
// panic.
func FuzzIndexQueries(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add(make([]byte, 200))
	seed := make([]byte, 400)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() float32 {
			if len(data) < 2 {
				return 0
			}
			v := binary.LittleEndian.Uint16(data)
			data = data[2:]
			return float32(int16(v)) / 4096 // [-8, 8), exact, many repeats and ties
		}
		nt := 1 + int(next()*4096)%24
		if nt < 1 {
			nt = -nt + 1
		}
		m := geom.Mesh{}
		for range 3 * nt {
			m.Vertices = append(m.Vertices, next(), next(), next())
		}
		for i := range nt {
			m.Faces = append(m.Faces, int32(3*i), int32(3*i+(int(next()*4096)&1)+1), int32(3*i+2))
		}
		tb, err := geom.BuildTables([]geom.Mesh{m})
		if err != nil {
			if !errors.Is(err, geom.ErrInvalidMesh) && !errors.Is(err, geom.ErrInvalidArgument) {
				t.Fatalf("untyped mesh error %v", err)
			}
			return
		}
		s := NewScene(tb)
		if e := s.Edges.Len(); e > 0 && next() > 0 {
			mask := make([]bool, e)
			for i := range mask {
				mask[i] = next() >= 0
			}
			if err := s.SetMask(mask); err != nil {
				t.Fatal(err)
			}
		}
		x := NewIndex(s)
		for range 8 {
			p := vec{float64(next()), float64(next()), float64(next())}
			id0, s0, q0, d0 := s.nearestPoint(p)
			id1, s1, q1, d1 := x.nearestPoint(p)
			if id0 != id1 || s0 != s1 || q0 != q1 || d0 != d1 {
				t.Fatalf("point %v: scan (%d %v %v) index (%d %v %v)", p, id0, s0, d0, id1, s1, d1)
			}
			k := 1 + int(math.Abs(float64(next()))*16)%MaxK
			b0, b1 := s.nearestK(p, k, nil), x.nearestK(p, k, nil)
			if len(b0) != len(b1) {
				t.Fatalf("top-%d: %d vs %d", k, len(b0), len(b1))
			}
			for j := range b0 {
				if b0[j] != b1[j] {
					t.Fatalf("top-%d slot %d: %+v vs %+v", k, j, b0[j], b1[j])
				}
			}
			d := vec{float64(next()), float64(next()), float64(next())}
			T := math.Inf(1)
			if v := next(); v >= 0 {
				T = float64(v)
			}
			i0, t0, e0, dd0 := s.nearestRay(p, d, T)
			i1, t1, e1, dd1 := x.nearestRay(p, d, T)
			if i0 != i1 || t0 != t1 || e0 != e1 || dd0 != dd1 {
				t.Fatalf("ray %v %v %v: scan (%d %v %v %v) index (%d %v %v %v)", p, d, T, i0, t0, e0, dd0, i1, t1, e1, dd1)
			}
		}
		// The public entry points on raw (possibly malformed) slices.
		raw := make([]float32, len(data)/4)
		for i := range raw {
			raw[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		if _, err := s.NearestPoint(raw, nil); err != nil && !errors.Is(err, geom.ErrLength) {
			t.Fatalf("NearestPoint: untyped error %v", err)
		}
		if _, err := s.NearestK(raw, 3, nil); err != nil && !errors.Is(err, geom.ErrLength) {
			t.Fatalf("NearestK: untyped error %v", err)
		}
		if _, err := s.NearestRay(raw, raw, nil, nil); err != nil && !errors.Is(err, geom.ErrLength) && !errors.Is(err, geom.ErrInvalidArgument) {
			t.Fatalf("NearestRay: untyped error %v", err)
		}
	})
}
