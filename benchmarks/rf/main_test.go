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
