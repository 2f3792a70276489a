package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMismatchIsCountersOrGridDeviation(t *testing.T) {
	assert.False(t, mismatch(caseResult{Check: check{CountersEqual: true, GridRelL2: 3e-8}}))
	assert.True(t, mismatch(caseResult{Check: check{CountersEqual: false}}))
	assert.True(t, mismatch(caseResult{Check: check{CountersEqual: true, GridRelL2: 2e-4}}))
	v := verdicts([]caseResult{{Name: "direct_fixture_8192", Check: check{CountersEqual: false}}})
	assert.Contains(t, v[0], "MISMATCH")
}

// TestOnlySelectsCasesByTheirNames: -only prefixes select cases by their
// full names, so one urban case alone builds the urban scene.
func TestOnlySelectsCasesByTheirNames(t *testing.T) {
	for _, only := range []string{"", "direct_urban", "direct_urban_mixed", "direct_urban_windows", "coherent", "paths_urban"} {
		assert.True(t, (&bench{only: only}).wantsUrban(), "-only %q", only)
	}
	for _, only := range []string{"direct_fixture", "reflections", "direct_urban_mixedx"} {
		assert.False(t, (&bench{only: only}).wantsUrban(), "-only %q", only)
	}
	b := &bench{only: "direct_urban_mixed"}
	assert.True(t, b.wanted("direct_urban_mixed"))
	assert.False(t, b.wanted("direct_urban_windows"))
}
