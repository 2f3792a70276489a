package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

func TestParseBlocks(t *testing.T) {
	got, err := parseBlocks("4,6, 8,10,12")
	require.NoError(t, err)
	assert.Equal(t, []int{4, 6, 8, 10, 12}, got)
	got, err = parseBlocks("")
	require.NoError(t, err)
	assert.Nil(t, got, "an empty flag is no sweep")
	for _, bad := range []string{"4,x", "0", "17", "8,8", "4,,6", "-2"} {
		_, err := parseBlocks(bad)
		assert.Error(t, err, bad)
	}
}

// recordingTracer records the persistent grid of each Intersect.
type recordingTracer struct {
	tracer
	blocks []int
	flags  []geom.Flags
}

func (r *recordingTracer) Intersect(_ *launch.Stream, rays accel.Rays, flags geom.Flags, _ accel.Hits) error {
	r.blocks = append(r.blocks, rays.PersistentBlocks)
	r.flags = append(r.flags, flags)
	return nil
}

// TestSweepVariantsSetTheGrid: each variant launches the full-record
// intersect with blocks per SM × SMs blocks, persistent (counter set), and
// carries a name check treats as the headline intersect.
func TestSweepVariantsSetTheGrid(t *testing.T) {
	f := &fixture{counter: new(launch.Buffer[uint32])}
	rt := &recordingTracer{}
	vs := f.sweepVariants(rt, []int{4, 12}, 132)
	require.Len(t, vs, 2)
	for _, v := range vs {
		require.NoError(t, v.run())
		assert.Equal(t, 100, v.rowBytes)
	}
	assert.Equal(t, []int{4 * 132, 12 * 132}, rt.blocks)
	assert.Equal(t, []geom.Flags{geom.FlagsAll, geom.FlagsAll}, rt.flags)
	assert.Equal(t, "intersect (76 B), 12 blocks/SM", vs[1].name)
	assert.True(t, wantsSweep(workload.Light, []int{8}))
	assert.False(t, wantsSweep(workload.Compute, []int{8}))
	assert.False(t, wantsSweep(workload.Light, nil))
}

// TestSweepJSONShape: the report carries light_blocks_sweep with one entry
// per grid size, their timings and checks, and the fastest; it is left out
// without a sweep.
func TestSweepJSONShape(t *testing.T) {
	f := &fixture{}
	f.rays.N = 1 << 22
	vs := []*variant{{name: sweepName(6), rowBytes: 100, times: []float64{0.43, 0.42, 0.44}},
		{name: sweepName(8), rowBytes: 100, times: []float64{0.45, 0.44, 0.46}}}
	check := func(v *variant, q *queryResult) error {
		q.Checked, q.BitwiseSame, q.Compared = 65536, true, []string{"t", "prim_id"}
		return nil
	}
	sw, err := f.sweepResult(vs, []int{6, 8}, 132, check)
	require.NoError(t, err)
	b, err := json.Marshal(report{LightBlocksSweep: sw})
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	obj, ok := got["light_blocks_sweep"].(map[string]any)
	require.True(t, ok, "light_blocks_sweep object")
	assert.Equal(t, "light", obj["scene"])
	assert.Equal(t, "intersect (76 B)", obj["query"])
	assert.EqualValues(t, 2, obj["width"])
	assert.EqualValues(t, 132, obj["sms"])
	assert.EqualValues(t, 8, obj["default_blocks_per_sm"])
	assert.EqualValues(t, 6, obj["best_blocks_per_sm"])
	entries := obj["entries"].([]any)
	require.Len(t, entries, 2)
	e0 := entries[0].(map[string]any)
	assert.EqualValues(t, 6, e0["blocks_per_sm"])
	assert.EqualValues(t, 6*132, e0["blocks"])
	assert.EqualValues(t, 65536, e0["checked_rows"])
	assert.Equal(t, true, e0["bitwise_equal_to_reference"])
	assert.InDelta(t, 0.43, e0["ms"].(map[string]any)["median"], 1e-12)
	assert.InDelta(t, float64(1<<22)/0.43e-3, e0["rays_per_s"], 1)

	b, err = json.Marshal(report{})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "light_blocks_sweep")
}

func TestSweepVerdictAndMismatch(t *testing.T) {
	sw := &blocksSweep{Scene: "light", Query: "intersect (76 B)", Width: 2, SMs: 132, Threads: 128, DefaultBlocksPerSM: 8,
		Entries: []sweepEntry{{BlocksPerSM: 8, Ms: timing{Median: 0.42}, Checked: 10}, {BlocksPerSM: 12, Ms: timing{Median: 0.462}, Checked: 10}}}
	sw.BestBlocksPerSM = bestEntry(sw.Entries)
	v := sweepVerdict(sw)
	assert.Contains(t, v, "8/SM 0.420 ms, 10/10 rows bitwise equal")
	assert.Contains(t, v, "12/SM 0.462 ms (1.100x of 8/SM)")
	assert.Contains(t, v, "fastest 8 blocks/SM")
	assert.NoError(t, sweepMismatched(sw))
	assert.NoError(t, sweepMismatched(nil))
	sw.Entries[1].Mismatches = 3
	assert.ErrorContains(t, sweepMismatched(sw), "intersect (76 B), 12 blocks/SM: 3 of 10")
}
