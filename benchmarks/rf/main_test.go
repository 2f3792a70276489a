package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
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

// TestDirectReferenceWindowsEqualOneCall: the reference run in concurrent
// lane windows gives the single call's counters exactly and its grids up to
// summation order, for a window that does not start at lane 0.
func TestDirectReferenceWindowsEqualOneCall(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	cpu, err := ref.NewScene(tb)
	require.NoError(t, err)
	sc := refScene{cpu}
	_, st, _ := testscene.AccumFixture()
	g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 4}
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.Seed = 1<<19, 17
	opt.LaneOffset, opt.LaneCount = 12345, 1<<18+7
	want, err := rf.AccumDfrDirect(sc, st, g, nil, nil, opt)
	require.NoError(t, err)
	got, err := directReference(sc, st, g, opt, 5)
	require.NoError(t, err)
	assert.Equal(t, counters(want), counters(got))
	assert.Equal(t, int32(opt.LaneCount), got.DirectCount)
	assert.Less(t, relL2([][]float64{want.Power, want.FieldXRe}, [][]float64{got.Power, got.FieldXRe}), 1e-13)
	assert.Positive(t, relL2([][]float64{want.Power}, [][]float64{make([]float64, len(want.Power))}))
}
