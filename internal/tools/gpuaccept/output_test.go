package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// texts is the text of lines.
func texts(lines []outLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.text)
	}
	return out
}

// TestAFailedTestKeepsItsOutput: the record of a failed test holds what it
// and its subtests printed, its message and its seed among it, and not what
// a parallel test printed in between; a passing test's record holds none.
func TestAFailedTestKeepsItsOutput(t *testing.T) {
	s, err := parseStream(framed(
		"^=== RUN   TestRFMultiGPUMatchesSingleDevice",
		"^=== PAUSE TestRFMultiGPUMatchesSingleDevice",
		"^=== RUN   TestRFSingle",
		"^=== PAUSE TestRFSingle",
		"^=== CONT  TestRFMultiGPUMatchesSingleDevice",
		"^=== ATTR  TestRFMultiGPUMatchesSingleDevice rayd.gpu needs=2 state=ran visible=2 build=abc",
		"^=== CONT  TestRFSingle",
		"    rf_test.go:20: single: 4096 rays",
		"^=== NAME  TestRFMultiGPUMatchesSingleDevice",
		"    rf_multi_test.go:88: row 17: power 1.25 on 2 devices, 1.5 on one",
		"^=== RUN   TestRFMultiGPUMatchesSingleDevice/batch",
		"    rf_multi_test.go:95: batch mismatch",
		"^--- FAIL: TestRFMultiGPUMatchesSingleDevice/batch (0.10s)",
		"^=== NAME  TestRFSingle",
		"    rf_test.go:21: single: done",
		"^--- PASS: TestRFSingle (0.20s)",
		"^=== NAME  TestRFMultiGPUMatchesSingleDevice",
		"    seed_test.go:31: random seed: RAYD_TEST_SEED=123",
		"^--- FAIL: TestRFMultiGPUMatchesSingleDevice (0.50s)",
		"^=== NAME  ",
		"^=== RUN   ExampleScene",
		"^--- PASS: ExampleScene (0.00s)",
		"^FAIL",
	))
	require.NoError(t, err)
	multi, batch, single := s.byName["TestRFMultiGPUMatchesSingleDevice"], s.byName["TestRFMultiGPUMatchesSingleDevice/batch"], s.byName["TestRFSingle"]
	require.Equal(t, outFail, multi.Outcome)
	assert.Equal(t, []string{
		"    rf_multi_test.go:88: row 17: power 1.25 on 2 devices, 1.5 on one",
		"=== RUN   TestRFMultiGPUMatchesSingleDevice/batch",
		"    rf_multi_test.go:95: batch mismatch",
		"--- FAIL: TestRFMultiGPUMatchesSingleDevice/batch (0.10s)",
		"=== NAME  TestRFMultiGPUMatchesSingleDevice",
		"    seed_test.go:31: random seed: RAYD_TEST_SEED=123",
	}, multi.Output)
	assert.Zero(t, multi.OutputCut)
	assert.Equal(t, []string{"    rf_multi_test.go:95: batch mismatch"}, batch.Output)
	assert.Equal(t, outPass, single.Outcome)
	assert.Empty(t, single.Output, "a passing test keeps no output")
	assert.Equal(t, []string{"    rf_test.go:20: single: 4096 rays", "    rf_test.go:21: single: done"}, texts(single.out.lines()))

	r := suiteReport{Name: "rayd"}
	judge(&r, s, &expectation{Name: "rayd", MinMulti: 1}, judgeEnv{visible: 2, census: true})
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var got struct {
		Tests []map[string]any `json:"tests"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	records := map[string]map[string]any{}
	for _, rec := range got.Tests {
		records[rec["name"].(string)] = rec
	}
	require.Contains(t, records, "TestRFMultiGPUMatchesSingleDevice")
	out := fmt.Sprint(records["TestRFMultiGPUMatchesSingleDevice"]["output"])
	assert.Contains(t, out, "rf_multi_test.go:88: row 17")
	assert.Contains(t, out, "random seed: RAYD_TEST_SEED=123")
	assert.NotContains(t, out, "single")
	assert.NotContains(t, records["TestRFMultiGPUMatchesSingleDevice"], "output_lines_cut")
	for _, name := range []string{"TestRFSingle", "ExampleScene"} {
		require.Contains(t, records, name)
		assert.NotContains(t, records[name], "output", name)
		assert.NotContains(t, records[name], "output_lines_cut", name)
	}
}

// TestATestWithoutAResultKeepsItsOutput: a test that hangs fails with no
// result, and its record keeps the timeout's panic.
func TestATestWithoutAResultKeepsItsOutput(t *testing.T) {
	s, err := parseStream(framed(
		"^=== RUN   TestHangs",
		"    hang_test.go:9: waiting",
		"panic: test timed out after 8m0s",
		"\trunning tests:",
		"\t\tTestHangs (8m0s)",
	))
	require.NoError(t, err)
	assert.Equal(t, []string{"    hang_test.go:9: waiting", "panic: test timed out after 8m0s", "\trunning tests:", "\t\tTestHangs (8m0s)"},
		s.byName["TestHangs"].Output)
}

// TestAFailedTestsOutputIsCut: the first and the last lines are kept, and
// a line in their place says how many were left out.
func TestAFailedTestsOutputIsCut(t *testing.T) {
	lines := []string{"^=== RUN   TestLoud"}
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("    loud_test.go:5: line %d", i))
	}
	lines = append(lines,
		"    loud_test.go:9: "+strings.Repeat("x", 10000),
		"    seed_test.go:31: random seed: RAYD_TEST_SEED=7",
		"^--- FAIL: TestLoud (1.00s)",
		"^FAIL",
	)
	s, err := parseStream(framed(lines...))
	require.NoError(t, err)
	loud := s.byName["TestLoud"]
	out := loud.Output
	require.Len(t, out, maxOutputHead+maxOutputTail+1)
	assert.Equal(t, "    loud_test.go:5: line 0", out[0])
	assert.Equal(t, "    loud_test.go:5: line 49", out[maxOutputHead-1])
	assert.Equal(t, 1002-maxOutputHead-maxOutputTail, loud.OutputCut)
	assert.Equal(t, fmt.Sprintf("[gpuaccept: %d lines left out here: a record keeps the first 50 and the last 150 lines, 32 KiB in all]", loud.OutputCut), out[maxOutputHead])
	assert.Equal(t, "    loud_test.go:5: line 852", out[maxOutputHead+1])
	assert.Equal(t, "    seed_test.go:31: random seed: RAYD_TEST_SEED=7", out[len(out)-1])
	long := out[len(out)-2]
	assert.True(t, strings.HasPrefix(long, "    loud_test.go:9: xxx"))
	assert.True(t, strings.HasSuffix(long, fmt.Sprintf("x [gpuaccept: %d bytes cut]", len("    loud_test.go:9: ")+10000-maxLineBytes)), long)
	n := 0
	for _, l := range out {
		n += len(l) + 1
	}
	assert.LessOrEqual(t, n, maxOutputBytes+200, "the cut line aside, within the byte bound")

	// Lines long enough to meet the byte bound first.
	lines = []string{"^=== RUN   TestWide"}
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("    wide_test.go:5: %03d %s", i, strings.Repeat("y", 1000)))
	}
	s, err = parseStream(framed(append(lines, "^--- FAIL: TestWide (1.00s)")...))
	require.NoError(t, err)
	wide := s.byName["TestWide"]
	assert.Positive(t, wide.OutputCut)
	assert.Equal(t, 100, len(wide.Output)-1+wide.OutputCut)
	assert.Contains(t, wide.Output[0], ": 000 ")
	assert.Contains(t, wide.Output[len(wide.Output)-1], ": 099 ")
	n = 0
	for _, l := range wide.Output {
		n += len(l) + 1
	}
	assert.LessOrEqual(t, n, maxOutputBytes+200)
}

// TestClipCutsAtARuneBoundary: a cut line stays valid UTF-8.
func TestClipCutsAtARuneBoundary(t *testing.T) {
	line := strings.Repeat("é", maxLineBytes) // two bytes each
	c := clip(line)
	assert.True(t, strings.HasSuffix(c, fmt.Sprintf(" [gpuaccept: %d bytes cut]", len(line)-maxLineBytes)), c[len(c)-40:])
	assert.Equal(t, "short", clip("short"))
	c = clip("a" + line)
	assert.True(t, strings.HasSuffix(c, fmt.Sprintf("é [gpuaccept: %d bytes cut]", len(line)+1-(maxLineBytes-1))), c[len(c)-40:])
}
