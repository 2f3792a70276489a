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
