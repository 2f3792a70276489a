package main

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStableOrderSortsKeysKeepingTiesInInputOrder(t *testing.T) {
	assert.Equal(t, []int32{3, 1, 4, 0, 2}, stableOrder([]uint32{3, 1, 3, 0, 1}))
	assert.Empty(t, stableOrder(nil))
	r := rand.New(rand.NewPCG(7, 11))
	for _, tied := range []bool{false, true} {
		keys := make([]uint32, 20_000)
		for i := range keys {
			keys[i] = r.Uint32()
			if tied {
				keys[i] = r.Uint32N(8)<<29 | r.Uint32N(3)<<8
			}
		}
		want := make([]int32, len(keys))
		for i := range want {
			want[i] = int32(i)
		}
		sort.SliceStable(want, func(a, b int) bool { return keys[want[a]] < keys[want[b]] })
		assert.Equal(t, want, stableOrder(keys), "tied=%v", tied)
	}
}

// TestGatherAndOriginalRowsAgree: row j of the gathered rays is the
// original ray originalRows maps j to, so the check compares each sampled
// output row with the reference of the ray it answers.
func TestGatherAndOriginalRowsAgree(t *testing.T) {
	src := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8}
	order := []int32{2, 0, 1}
	assert.Equal(t, []float32{6, 7, 8, 0, 1, 2, 3, 4, 5}, gather3(src, order))
	assert.Equal(t, []int{2, 1}, originalRows(order, []int{0, 2}))

	r := rand.New(rand.NewPCG(3, 5))
	n := 1000
	o := make([]float32, 3*n)
	for i := range o {
		o[i] = r.Float32()
	}
	order = stableOrder(rayKeys(o, o))
	got := gather3(o, order)
	rows := sampleRows(n, 100)
	for k, i := range originalRows(order, rows) {
		j := rows[k]
		assert.Equal(t, o[3*i:3*i+3], got[3*j:3*j+3], "row %d", j)
	}
}

// TestReorderNetAndVerdict: the verdict is the end-to-end pipeline's
// (pays only below the plain intersect's median), the estimate keeps
// net = gain − sort − copy with its own verdict.
func TestReorderNetAndVerdict(t *testing.T) {
	r := &reorderResult{OriginalMs: timing{Median: 9}, ReorderedMs: timing{Median: 7}, SortMs: timing{Median: 0.5}, RayCopyMs: timing{Median: 0.25},
		Checked: 10, SortMatchesHost: true, Launch: "quad"}
	r.PipelineMs = timing{Median: 8.5}
	r.KeysMs, r.DeviceSortMs, r.GatherMs = timing{Median: 0.125}, timing{Median: 0.5}, timing{Median: 0.25}
	r.SortedIntersectMs, r.ScatterMs = timing{Median: 7}, timing{Median: 0.5}
	r.PipelineChecked, r.PipelineOrderMatchesHost = 12, true
	finishReorder(r)
	assert.InDelta(t, 2, r.GainMs, 1e-12)
	assert.InDelta(t, 1.25, r.NetMs, 1e-12)
	assert.Equal(t, "pays", r.EstimateVerdict)
	assert.InDelta(t, 0.5, r.PipelineNetMs, 1e-12)
	assert.InDelta(t, 8.375, r.PartsMs, 1e-12)
	assert.Equal(t, "pays", r.Verdict)
	v := reorderVerdict("compute", r)
	assert.Contains(t, v, "measured end to end (not a target)")
	assert.Contains(t, v, "8.500 ms: net 0.500 ms, reordering pays")
	assert.Contains(t, v, "(sum 8.375 ms)")
	assert.Contains(t, v, "12/12 sampled rows of its output bitwise equal")
	assert.Contains(t, v, "estimate net 1.250 ms, pays")
	assert.Contains(t, v, "10/10 sampled reordered rows bitwise equal")

	// The estimate pays, the pipeline does not: the verdict follows the
	// pipeline.
	r.PipelineMs.Median = 9.25
	finishReorder(r)
	assert.InDelta(t, -0.25, r.PipelineNetMs, 1e-12)
	assert.Equal(t, "does not pay", r.Verdict)
	assert.Equal(t, "pays", r.EstimateVerdict)
	assert.Contains(t, reorderVerdict("compute", r), "net -0.250 ms, reordering does not pay")

	r.ReorderedMs.Median = 8.9
	finishReorder(r)
	assert.InDelta(t, -0.65, r.NetMs, 1e-12)
	assert.Equal(t, "does not pay", r.EstimateVerdict)

	// A pipeline never timed does not pay.
	r.PipelineMs = timing{}
	finishReorder(r)
	assert.Equal(t, "does not pay", r.Verdict)
}

func TestMismatchedFailsOnTheReorderProbe(t *testing.T) {
	c := configResult{Name: "compute", Layouts: []layoutResult{layout("bvh", 4, 1.4, 8.7, 0)},
		Reorder: &reorderResult{Checked: 10, SortMatchesHost: true,
			pipelineResult: pipelineResult{PipelineChecked: 10, PipelineOrderMatchesHost: true}}}
	assert.NoError(t, mismatched([]configResult{c}))
	c.Reorder.Mismatches = 1
	assert.ErrorContains(t, mismatched([]configResult{c}), "compute reorder: 1 of 10")
	c.Reorder.Mismatches, c.Reorder.SortMatchesHost = 0, false
	assert.ErrorContains(t, mismatched([]configResult{c}), "device sort order equal to the host's: false")
	c.Reorder.SortMatchesHost = true
	c.Reorder.PipelineMismatches = 2
	assert.ErrorContains(t, mismatched([]configResult{c}), "compute reorder pipeline: 2 of 10")
	c.Reorder.PipelineMismatches, c.Reorder.PipelineOrderMatchesHost = 0, false
	assert.ErrorContains(t, mismatched([]configResult{c}), "device order equal to the host's: false")
	c.Reorder.PipelineOrderMatchesHost = true
	assert.NoError(t, mismatched([]configResult{c}))
}

// TestReorderJSONKeepsTheEstimateAndAddsThePipeline: the estimate's fields
// keep their names beside the pipeline's, flattened into one object.
func TestReorderJSONKeepsTheEstimateAndAddsThePipeline(t *testing.T) {
	r := &reorderResult{OriginalMs: timing{Median: 9}, ReorderedMs: timing{Median: 7}}
	r.PipelineMs = timing{Median: 8}
	finishReorder(r)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(b, &fields))
	for _, k := range []string{"keys", "launch", "original_ms", "reordered_ms", "gain_ms", "sort_ms", "ray_copy_ms", "net_ms",
		"verdict", "not_counted", "checked_rows", "mismatched_rows", "device_sort_matches_host_order",
		"pipeline", "pipeline_ms", "pipeline_net_ms", "pipeline_keys_ms", "pipeline_sort_ms", "pipeline_gather_ms",
		"pipeline_intersect_ms", "pipeline_scatter_ms", "pipeline_parts_sum_ms", "pipeline_checked_rows",
		"pipeline_mismatched_rows", "pipeline_order_matches_host", "estimate_verdict", "verdict_basis"} {
		assert.Contains(t, fields, k)
	}
	assert.Equal(t, "pays", fields["verdict"])
	assert.InDelta(t, 1.0, fields["pipeline_net_ms"], 1e-12)
}
