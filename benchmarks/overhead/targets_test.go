package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The specification's bounds, row by row.
func TestTargetsAreTheSpecificationsBounds(t *testing.T) {
	for _, c := range []struct {
		config, op string
		ms         float64
		calls      int64
	}{
		{"light", opIntersect, 0.05, 20},
		{"light", opReflect, 0.05, 20},
		{"light", opAccum, 0.02, 30},
		{"compute", opIntersect, 0.10, 20},
		{"compute", opAccum, 0.05, 30},
	} {
		got := targetFor(c.config, c.op)
		require.NotNil(t, got.OverheadMS, "%s %s", c.config, c.op)
		assert.Equal(t, c.ms, *got.OverheadMS, "%s %s", c.config, c.op)
		assert.Equal(t, c.calls, got.DriverCalls, "%s %s", c.config, c.op)
	}
	v := targetFor("light", opVisible)
	assert.Nil(t, v.OverheadMS, "the specification sets no overhead bound for visible")
	assert.Equal(t, int64(20), v.DriverCalls)
}

// Every row the benchmark runs has a driver-call bound, and every overhead
// bound belongs to a row it runs.
func TestEveryTargetBelongsToARow(t *testing.T) {
	runs := map[string]bool{}
	for _, cfg := range []string{"light", "compute"} {
		for _, op := range append(perRayOps(cfg), opAccum) {
			runs[cfg+"/"+op] = true
			assert.Positive(t, targetFor(cfg, op).DriverCalls)
		}
	}
	for key := range overheadTargets {
		assert.True(t, runs[key], "target %s has no row", key)
	}
	assert.Len(t, runs, 6)
}
