package accel

import (
	"fmt"
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
)

// forEachDevice runs body on every visible device at once, each in its own
// parallel subtest with its own stream (skipped without a GPU).
func forEachDevice(t *testing.T, body func(t *testing.T, s *launch.Stream)) {
	for _, o := range gputest.MustHaveDevices(t, 1) {
		t.Run(fmt.Sprintf("cuda:%d", o), func(t *testing.T) {
			t.Parallel()
			body(t, deviceStream(t, o))
		})
	}
}

// deviceStream opens device ordinal and a stream, closed at cleanup.
func deviceStream(t testing.TB, ordinal int) *launch.Stream {
	t.Helper()
	d, err := launch.Open(ordinal)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		_ = d.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		_ = d.Close()
	})
	return s
}

// devBuf uploads src (nil for an empty slice when nilOK).
func devBuf[T launch.Elem](t testing.TB, s *launch.Stream, src []T) *launch.Buffer[T] {
	t.Helper()
	b, err := launch.Alloc[T](s.Device(), max(len(src), 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(src) > 0 {
		if err := b.Upload(s, src); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// devOut allocates n elements.
func devOut[T launch.Elem](t testing.TB, s *launch.Stream, n int) *launch.Buffer[T] {
	t.Helper()
	b, err := launch.Alloc[T](s.Device(), max(n, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func download[T launch.Elem](t testing.TB, s *launch.Stream, b *launch.Buffer[T], n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := b.Download(s, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// rayBatch is a host ray batch and its device copy.
type rayBatch struct {
	o, d, tmax []float32
	active     []bool
	dev        Rays
}

func newRayBatch(t testing.TB, s *launch.Stream, o, d, tmax []float32, active []bool) *rayBatch {
	rb := &rayBatch{o: o, d: d, tmax: tmax, active: active}
	rb.dev = Rays{O: devBuf(t, s, o), D: devBuf(t, s, d), N: len(o) / 3}
	if tmax != nil {
		rb.dev.TMax = devBuf(t, s, tmax)
	}
	if active != nil {
		a := make([]uint8, len(active))
		for i, v := range active {
			if v {
				a[i] = 1
			}
		}
		rb.dev.Active = devBuf(t, s, a)
	}
	return rb
}

// deviceHits runs a query into a full record and downloads it.
func deviceHits(t testing.TB, s *launch.Stream, n int, flags geom.Flags, run func(Hits) error) *geom.Hits {
	t.Helper()
	out := Hits{T: devOut[float32](t, s, n), P: devOut[float32](t, s, 3*n), N: devOut[float32](t, s, 3*n),
		GeoN: devOut[float32](t, s, 3*n), UV: devOut[float32](t, s, 2*n), Bary: devOut[float32](t, s, 3*n),
		ShapeID: devOut[int32](t, s, n), PrimID: devOut[int32](t, s, n), LocalPrimID: devOut[int32](t, s, n),
		GlobalPrimID: devOut[int32](t, s, n)}
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	h := geom.NewHits(n, flags)
	h.T = download(t, s, out.T, n)
	if flags.Has(geom.FlagGeometric) {
		h.P, h.GeoN, h.Bary = download(t, s, out.P, 3*n), download(t, s, out.GeoN, 3*n), download(t, s, out.Bary, 3*n)
		h.ShapeID, h.PrimID = download(t, s, out.ShapeID, n), download(t, s, out.PrimID, n)
		h.LocalPrimID, h.GlobalPrimID = download(t, s, out.LocalPrimID, n), download(t, s, out.GlobalPrimID, n)
	}
	if flags.Has(geom.FlagShadingN) {
		h.N = download(t, s, out.N, 3*n)
	}
	if flags.Has(geom.FlagUV) {
		h.UV = download(t, s, out.UV, 2*n)
	}
	return h
}

func sameBits32(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] == 0 && b[i] == 0) {
			return i
		}
	}
	return -1
}

func sameInts[T comparable](a, b []T) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// compareHits requires two records to agree bit for bit (±0 aside).
func compareHits(t testing.TB, name string, got, want *geom.Hits) {
	t.Helper()
	fields := []struct {
		name string
		g, w []float32
	}{{"t", got.T, want.T}, {"p", got.P, want.P}, {"n", got.N, want.N}, {"geo_n", got.GeoN, want.GeoN},
		{"uv", got.UV, want.UV}, {"bary", got.Bary, want.Bary}}
	for _, f := range fields {
		if i := sameBits32(f.g, f.w); i >= 0 {
			row := i * len(got.T) / max(len(f.g), 1)
			t.Fatalf("%s: %s differs at element %d (row %d): got %v, want %v (prims %v, %v)", name, f.name, i, row,
				elem(f.g, i), elem(f.w, i), elem(got.PrimID, row), elem(want.PrimID, row))
		}
	}
	ids := []struct {
		name string
		g, w []int32
	}{{"shape_id", got.ShapeID, want.ShapeID}, {"prim_id", got.PrimID, want.PrimID},
		{"local_prim_id", got.LocalPrimID, want.LocalPrimID}, {"global_prim_id", got.GlobalPrimID, want.GlobalPrimID}}
	for _, f := range ids {
		if i := sameInts(f.g, f.w); i >= 0 {
			t.Fatalf("%s: %s differs at row %d: got %v, want %v", name, f.name, i, elem(f.g, i), elem(f.w, i))
		}
	}
}

func elem[T any](s []T, i int) any {
	if i >= 0 && i < len(s) {
		return s[i]
	}
	return "<none>"
}
