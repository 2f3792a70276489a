package accel

import (
	"testing"

	"github.com/rayd-go/rayd/launch"
)

func TestAutoWidthFollowsTheL2(t *testing.T) {
	const l2 = 60 << 20
	cases := []struct{ n, l2, want int }{
		{72962, l2, 2},    // light: 8 MB of BVH fits
		{2097152, l2, 4},  // compute: 235 MB does not
		{l2 / 112, l2, 2}, // exactly fits
		{l2/112 + 1, l2, 4},
		{10, 0, 4}, // unknown L2
	}
	for _, c := range cases {
		if got := AutoWidth(c.n, c.l2); got != c.want {
			t.Errorf("AutoWidth(%d, %d) = %d, want %d", c.n, c.l2, got, c.want)
		}
	}
	if bytesPerTriangle != 112 {
		t.Errorf("bytesPerTriangle = %d, want 112 (64-byte node + 48-byte record)", bytesPerTriangle)
	}
}

func TestAutoWidthWideThreshold(t *testing.T) {
	const l2 = 60 << 20
	cases := []struct{ n, l2, wideMin, want int }{
		{2097152, l2, 1 << 20, 8},   // compute with the wide layout enabled
		{2097152, l2, 0, 4},         // disabled
		{1<<20 - 1, l2, 1 << 20, 4}, // below the threshold
		{72962, l2, 1, 2},           // fits in L2: child-pair nodes regardless
		{1 << 20, 0, 1 << 20, 8},    // unknown L2
	}
	for _, c := range cases {
		if got := autoWidth(c.n, c.l2, c.wideMin); got != c.want {
			t.Errorf("autoWidth(%d, %d, %d) = %d, want %d", c.n, c.l2, c.wideMin, got, c.want)
		}
	}
	if got, want := AutoWidth(2097152, l2), autoWidth(2097152, l2, AutoWideTriangles); got != want {
		t.Errorf("AutoWidth = %d, autoWidth with AutoWideTriangles = %d", got, want)
	}
}

func TestOptionsFetch(t *testing.T) {
	for _, f := range []Fetch{FetchAuto, FetchBatch, FetchDynamic} {
		o, err := Options{Fetch: f}.withDefaults()
		if err != nil || o.Fetch != f {
			t.Fatalf("Fetch %v: %v, kept %v", f, err, o.Fetch)
		}
	}
	if _, err := (Options{Fetch: FetchDynamic + 1}).withDefaults(); err == nil {
		t.Fatal("an unknown Fetch must be refused")
	}
	if got := []string{FetchAuto.String(), FetchBatch.String(), FetchDynamic.String(), Fetch(9).String()}; got[0] != "auto" || got[1] != "batch" || got[2] != "dynamic" || got[3] != "Fetch(9)" {
		t.Fatalf("names %q", got)
	}
	// Without a device buffer as counter no launch fetches dynamically.
	b := &BVH{opt: Options{Width: 4, Fetch: FetchDynamic}}
	if b.dynamic(nil, false) || b.dynamic(launch.Null, false) {
		t.Fatal("a launch without a counter must keep the batch kernels")
	}
}
