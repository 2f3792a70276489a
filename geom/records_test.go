package geom

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestFlags(t *testing.T) {
	cases := []struct {
		f     Flags
		bytes int
		name  string
	}{
		{FlagsNone, 4, "None"},
		{FlagGeometric, 56, "Geometric"},
		{FlagShadingN, 16, "ShadingN"},
		{FlagUV, 12, "UV"},
		{FlagsAll, 76, "All"},
		{FlagGeometric | FlagUV, 64, "Geometric|UV"},
		{FlagShadingN | 8, 16, "ShadingN|0x8"},
	}
	for _, c := range cases {
		if got := c.f.RowBytes(); got != c.bytes {
			t.Errorf("%v.RowBytes() = %d, want %d", c.f, got, c.bytes)
		}
		if got := c.f.String(); got != c.name {
			t.Errorf("String(%d) = %q, want %q", uint32(c.f), got, c.name)
		}
	}
	if !FlagsAll.Valid() || Flags(8).Valid() || !FlagsAll.Has(FlagUV) || FlagUV.Has(FlagsAll) {
		t.Error("Valid/Has")
	}
}

func TestNewHits(t *testing.T) {
	for _, f := range []Flags{FlagsNone, FlagGeometric, FlagShadingN, FlagUV, FlagsAll} {
		h := NewHits(3, f)
		if h.Len() != 3 || h.Flags != f || h.RowBytes() != f.RowBytes() {
			t.Fatalf("%v: len %d flags %v", f, h.Len(), h.Flags)
		}
		lens := map[string][2]int{
			"P": {len(h.P), 9}, "GeoN": {len(h.GeoN), 9}, "Bary": {len(h.Bary), 9},
			"ShapeID": {len(h.ShapeID), 3}, "PrimID": {len(h.PrimID), 3},
			"LocalPrimID": {len(h.LocalPrimID), 3}, "GlobalPrimID": {len(h.GlobalPrimID), 3},
			"N": {len(h.N), 9}, "UV": {len(h.UV), 6},
		}
		owner := map[string]Flags{"N": FlagShadingN, "UV": FlagUV}
		bytes := 4 * len(h.T)
		for name, l := range lens {
			o, ok := owner[name]
			if !ok {
				o = FlagGeometric
			}
			want := 0
			if f.Has(o) {
				want = l[1]
			}
			if l[0] != want {
				t.Errorf("%v: len(%s) = %d, want %d", f, name, l[0], want)
			}
			bytes += 4 * l[0]
		}
		if bytes != 3*f.RowBytes() {
			t.Errorf("%v: %d bytes allocated, want %d", f, bytes, 3*f.RowBytes())
		}
		for i := range 3 {
			if !math.IsInf(float64(h.T[i]), 1) || h.Valid(i) {
				t.Errorf("%v: row %d is not a miss", f, i)
			}
			if h.ShapeID != nil && (h.ShapeID[i] != -1 || h.PrimID[i] != -1 || h.LocalPrimID[i] != -1 || h.GlobalPrimID[i] != -1) {
				t.Errorf("%v: ids of row %d not -1", f, i)
			}
		}
	}
	if NewHits(2, Flags(0xff)).Flags != FlagsAll {
		t.Error("unknown bits are not dropped")
	}
}

func TestHitsSetMissAndValid(t *testing.T) {
	h := NewHits(2, FlagsAll)
	h.T[1] = 2
	for i := range 3 {
		h.P[3+i], h.N[3+i], h.GeoN[3+i], h.Bary[3+i] = 1, 1, 1, 1
	}
	h.UV[2], h.UV[3] = .5, .5
	h.ShapeID[1], h.PrimID[1], h.LocalPrimID[1], h.GlobalPrimID[1] = 0, 4, 4, 4
	if !h.Valid(1) || h.Valid(0) {
		t.Fatal("Valid before SetMiss")
	}
	h.SetMiss(1)
	want := NewHits(2, FlagsAll)
	for name, pair := range map[string][2][]float32{"T": {h.T, want.T}, "P": {h.P, want.P}, "N": {h.N, want.N},
		"GeoN": {h.GeoN, want.GeoN}, "Bary": {h.Bary, want.Bary}, "UV": {h.UV, want.UV}} {
		if !equal(pair[0], pair[1]) {
			t.Errorf("%s after SetMiss: %v", name, pair[0])
		}
	}
	if !equal(h.ShapeID, want.ShapeID) || !equal(h.PrimID, want.PrimID) || h.Valid(1) {
		t.Error("ids after SetMiss")
	}
	tOnly := NewHits(1, FlagsNone)
	tOnly.T[0] = 3
	if !tOnly.Valid(0) {
		t.Error("flags=0: a finite t is a hit")
	}
	tOnly.SetMiss(0)
	if tOnly.Valid(0) {
		t.Error("flags=0: SetMiss")
	}
}

func TestReflections(t *testing.T) {
	r := NewReflections(2, 3)
	if r.Len() != 2 || r.Bounces != 3 || len(r.ImageSources) != 18 {
		t.Fatalf("shape: len %d bounces %d images %d", r.Len(), r.Bounces, len(r.ImageSources))
	}
	for s := range 6 {
		if r.Valid[s] || r.T[s] != 1e8 || r.PrimIDs[s] != -1 {
			t.Fatalf("slot %d not empty", s)
		}
	}
	r.Valid[4], r.T[4], r.PrimIDs[4], r.ImageSources[13] = true, 1, 7, 2
	r.Valid[1] = true
	r.SetMiss(1)
	if r.Valid[4] || r.T[4] != 1e8 || r.PrimIDs[4] != -1 || r.ImageSources[13] != 0 || !r.Valid[1] {
		t.Fatal("SetMiss touched the wrong row or left data")
	}
	if ReflectionRowBytes(1, false) != 9 || ReflectionRowBytes(4, false) != 36 || ReflectionRowBytes(4, true) != 84 {
		t.Error("ReflectionRowBytes")
	}
	if (&Reflections{}).Len() != 0 {
		t.Error("zero Reflections")
	}
}

func TestCheckRays(t *testing.T) {
	o := make([]float32, 6)
	if n, err := CheckRays(o, o, nil, nil); n != 2 || err != nil {
		t.Fatalf("valid: %d %v", n, err)
	}
	if n, err := CheckRays(o, o, []float32{1, 2}, []bool{true, false}); n != 2 || err != nil {
		t.Fatalf("valid with tmax/active: %d %v", n, err)
	}
	if n, err := CheckRays(nil, nil, nil, nil); n != 0 || err != nil {
		t.Fatalf("empty: %d %v", n, err)
	}
	cases := []struct {
		name            string
		o, d, tmax      []float32
		active          []bool
		field           string
		want, got, rows int
	}{
		{"ragged o", o[:5], o, nil, nil, "o", -1, 5, 3},
		{"short d", o, o[:3], nil, nil, "d", 6, 3, 3},
		{"long tmax", o, o, make([]float32, 3), nil, "tmax", 2, 3, 1},
		{"short active", o, o, nil, []bool{true}, "active", 2, 1, 1},
	}
	for _, c := range cases {
		_, err := CheckRays(c.o, c.d, c.tmax, c.active)
		var le *LengthError
		if !errors.Is(err, ErrLength) || !errors.As(err, &le) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if le.Field != c.field || le.Want != c.want || le.Got != c.got || le.PerRow != c.rows {
			t.Errorf("%s: %+v", c.name, *le)
		}
		if err.Error() == "" {
			t.Error("empty message")
		}
	}
	if _, err := CheckSegments(o, o[:3], nil); !errors.Is(err, ErrLength) {
		t.Errorf("segments: %v", err)
	}
	if _, err := CheckSegments(o[:4], o, nil); !errors.Is(err, ErrLength) {
		t.Errorf("segments ragged start: %v", err)
	}
	if _, err := CheckSegments(o, o, []bool{true}); !errors.Is(err, ErrLength) {
		t.Errorf("segments active: %v", err)
	}
	ae := &ArgumentError{Field: "maxBounces", Reason: "must be at least 1"}
	if !errors.Is(ae, ErrInvalidArgument) || errors.Is(ae, ErrLength) || ae.Error() == "" {
		t.Error("ArgumentError")
	}
}

func TestTablesMeshesRoundTrip(t *testing.T) {
	a := Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}, Dynamic: true}
	b := Mesh{Vertices: []float32{0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1}, Faces: []int32{0, 1, 2, 1, 3, 2}, EdgesDisabled: true}
	tb, err := BuildTables([]Mesh{a, b})
	if err != nil {
		t.Fatal(err)
	}
	got := tb.Meshes()
	if !reflect.DeepEqual(got, []Mesh{a, b}) {
		t.Fatalf("Meshes() = %+v", got)
	}
	again, err := BuildTables(got)
	if err != nil || !reflect.DeepEqual(again, tb) {
		t.Fatalf("rebuilt tables differ: %v", err)
	}
	got[0].Vertices[0] = 9
	if tb.Vertices[0] != 0 {
		t.Fatal("Meshes shares the tables' memory")
	}
}
