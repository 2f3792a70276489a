package accel

import "testing"

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
