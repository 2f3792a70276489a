package main

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
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

func TestReorderNetAndVerdict(t *testing.T) {
	r := &reorderResult{OriginalMs: timing{Median: 9}, ReorderedMs: timing{Median: 7}, SortMs: timing{Median: 0.5}, RayCopyMs: timing{Median: 0.25},
		Checked: 10, SortMatchesHost: true, Launch: "quad"}
	finishReorder(r)
	assert.InDelta(t, 2, r.GainMs, 1e-12)
	assert.InDelta(t, 1.25, r.NetMs, 1e-12)
	assert.Equal(t, "pays", r.Verdict)
	v := reorderVerdict("compute", r)
	assert.Contains(t, v, "measured (not a target)")
	assert.Contains(t, v, "net 1.250 ms, reordering pays")
	assert.Contains(t, v, "10/10 sampled reordered rows bitwise equal")

	r.ReorderedMs.Median = 8.9
	finishReorder(r)
	assert.InDelta(t, -0.65, r.NetMs, 1e-12)
	assert.Equal(t, "does not pay", r.Verdict)
	assert.Contains(t, reorderVerdict("compute", r), "reordering does not pay")
}

func TestMismatchedFailsOnTheReorderProbe(t *testing.T) {
	c := configResult{Name: "compute", Layouts: []layoutResult{layout("bvh", 4, 1.4, 8.7, 0)},
		Reorder: &reorderResult{Checked: 10, SortMatchesHost: true}}
	assert.NoError(t, mismatched([]configResult{c}))
	c.Reorder.Mismatches = 1
	assert.ErrorContains(t, mismatched([]configResult{c}), "compute reorder: 1 of 10")
	c.Reorder.Mismatches, c.Reorder.SortMatchesHost = 0, false
	assert.ErrorContains(t, mismatched([]configResult{c}), "device sort order equal to the host's: false")
}
