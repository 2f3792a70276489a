package accel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/launch"
)

// entryRunner is a runner that records the entry of every launch.
type entryRunner struct{ entries []string }

func (r *entryRunner) launch(_, entry string, _, _ launch.Dim3, _ ...any) error {
	r.entries = append(r.entries, entry)
	return nil
}

func (r *entryRunner) memset32(*launch.Buffer[uint32], uint32) error { return nil }

func (r *entryRunner) zero(zeroer) error { return nil }

// TestCrossingsEntryNames: the smallest slot count that holds k, the width
// suffix, then _masked, then _dyn.
func TestCrossingsEntryNames(t *testing.T) {
	for _, tc := range []struct {
		k, w        int
		masked, dyn bool
		want        string
	}{
		{1, 2, false, false, "rayd_crossings8"},
		{8, 2, false, true, "rayd_crossings8_dyn"},
		{9, 4, false, false, "rayd_crossings16_4"},
		{16, 4, false, true, "rayd_crossings16_4_dyn"},
		{17, 2, true, false, "rayd_crossings32_masked"},
		{32, 2, true, true, "rayd_crossings32_masked_dyn"},
		{33, 4, true, false, "rayd_crossings64_4_masked"},
		{64, 4, true, true, "rayd_crossings64_4_masked_dyn"},
		{65, 4, false, true, ""},
	} {
		assert.Equal(t, tc.want, crossingsEntry(tc.k, tc.w, tc.masked, tc.dyn), "k=%d w=%d masked=%v dyn=%v",
			tc.k, tc.w, tc.masked, tc.dyn)
	}
}

// TestCrossingsFetchChoice: which kernel a crossings launch runs under each
// Fetch mode. A persistent launch (Segments.Counter set) runs the _dyn
// kernels under FetchDynamic, and under FetchAuto on a BVH of a known
// device whatever its size (a zero L2 size here: no L2-residency rule);
// FetchBatch, a launch without a counter and a BVH of no known device keep
// the batch kernels.
func TestCrossingsFetchChoice(t *testing.T) {
	dev := new(launch.Device) // L2Bytes() == 0
	for _, tc := range []struct {
		name       string
		fetch      Fetch
		dev        *launch.Device
		persistent bool
		masked     bool
		want       string
	}{
		{"auto persistent", FetchAuto, dev, true, false, "rayd_crossings8_4_dyn"},
		{"auto persistent masked", FetchAuto, dev, true, true, "rayd_crossings8_4_masked_dyn"},
		{"auto one row a thread", FetchAuto, dev, false, false, "rayd_crossings8_4"},
		{"auto no device", FetchAuto, nil, true, false, "rayd_crossings8_4"},
		{"batch persistent", FetchBatch, dev, true, false, "rayd_crossings8_4"},
		{"batch persistent masked", FetchBatch, dev, true, true, "rayd_crossings8_4_masked"},
		{"dynamic persistent", FetchDynamic, dev, true, false, "rayd_crossings8_4_dyn"},
		{"dynamic one row a thread", FetchDynamic, dev, false, true, "rayd_crossings8_4_masked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), dev: tc.dev,
				opt: Options{Width: 4, Fetch: tc.fetch}}
			if tc.masked {
				b.faceMask = buf[uint8]()
			}
			seg := Segments{Start: buf[float32](), End: buf[float32](), N: 10}
			if tc.persistent {
				seg.Counter = buf[uint32]()
			}
			out := Crossings{T: buf[float32](), Prim: buf[int32](), Shape: buf[int32](), Count: buf[int32]()}
			run := &entryRunner{}
			require.NoError(t, b.launchCrossings(run, seg, 8, out))
			assert.Equal(t, []string{tc.want}, run.entries)
		})
	}
}
