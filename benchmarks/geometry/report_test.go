package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func layout(backend string, width int, build, intersect float64, mismatches int) layoutResult {
	return layoutResult{Backend: backend, Width: width, BuildMs: timing{Median: build},
		Queries: []queryResult{{Name: "intersect (76 B)", Ms: timing{Median: intersect}, Checked: 10, Mismatches: mismatches, BitwiseSame: mismatches == 0}}}
}

// TestVerdictQuotesTheBuildOfTheFastestIntersectLayout: the build time
// beside an intersect time is the same layout's, not the fastest build.
func TestVerdictQuotesTheBuildOfTheFastestIntersectLayout(t *testing.T) {
	c := configResult{Name: "compute", Layouts: []layoutResult{
		layout("bvh", 2, 1.18, 16.0, 0), layout("bvh", 4, 1.42, 12.3, 0), layout("optix", 0, 7.9, 36.5, 0)}}
	v := verdicts([]configResult{c})
	assert.Len(t, v, 1)
	assert.Contains(t, v[0], "12.300 ms (w4)")
	assert.Contains(t, v[0], "w4 build 1.420 ms vs OptiX GAS build 7.900 ms measured here")
	assert.NotContains(t, v[0], "1.180")
}

func TestMismatchedFailsOnBVHRowsOnly(t *testing.T) {
	ok := configResult{Name: "light", Layouts: []layoutResult{layout("bvh", 2, 0.2, 0.5, 0), layout("optix", 0, 1.3, 0.9, 3)}}
	assert.NoError(t, mismatched([]configResult{ok}))
	bad := configResult{Name: "light", Layouts: []layoutResult{layout("bvh", 4, 0.2, 0.5, 2)}}
	assert.ErrorContains(t, mismatched([]configResult{bad}), "light w4 intersect (76 B): 2 of 10")
}

func TestEveryBVHQueryNamesItsPersistentLaunch(t *testing.T) {
	assert.Contains(t, backendSpec{name: "bvh", width: 4}.launch(), "persistent launch")
	assert.Contains(t, backendSpec{name: "optix"}.launch(), "OptiX")
}

// TestWideVerdictsStateTheComputeTargets: the 8-wide layout is reported
// beside the quad layout, against its compute targets, with its check.
func TestWideVerdictsStateTheComputeTargets(t *testing.T) {
	w4 := layout("bvh", 4, 1.4, 12.3, 0)
	w8 := layout("bvh", 8, 1.9, 9.2, 0)
	w8.Nodes, w8.Height = 1000, 7
	c := configResult{Name: "compute", Layouts: []layoutResult{layout("bvh", 2, 1.1, 16, 0), w4, w8}}
	v := wideVerdicts([]configResult{c})
	assert.Len(t, v, 1)
	assert.Contains(t, v[0], "intersect (76 B) 9.200 ms (w4 12.300 ms, 1.34x) vs target 9.5 ms: MET, 10/10 rows bitwise equal")
	w8.Queries[0].Ms.Median = 9.6
	c.Name, c.Layouts[2] = "compute", w8
	assert.Contains(t, wideVerdicts([]configResult{c})[0], "MISSED")
	c.Name = "light"
	assert.NotContains(t, wideVerdicts([]configResult{c})[0], "target")
	assert.Empty(t, wideVerdicts([]configResult{{Name: "light", Layouts: []layoutResult{w4}}}))
}
