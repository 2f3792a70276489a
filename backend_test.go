package rayd

import "testing"

func TestRTCoreTable(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		rt           bool
	}{{7, 0, false}, {7, 5, true}, {8, 0, false}, {8, 6, true}, {8, 9, true}, {9, 0, false}, {10, 0, false}, {12, 0, true}} {
		if got := hasRTCores(c.major, c.minor); got != c.rt {
			t.Errorf("cc %d.%d: RT cores %v, want %v", c.major, c.minor, got, c.rt)
		}
	}
	if b := AutoBackend(1 << 20); b != BackendCUDA {
		t.Errorf("AutoBackend of a missing device = %s, want cuda", b)
	}
}
