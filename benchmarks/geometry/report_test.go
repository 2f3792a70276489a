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
