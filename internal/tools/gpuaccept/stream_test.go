package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// framed writes a stream the way a test binary does under
// -test.v=test2json: "^" stands for the framing byte.
func framed(lines ...string) *strings.Reader {
	return strings.NewReader(strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "^", frame))
}

func TestParseReadsResultsAttributesAndOutput(t *testing.T) {
	s, err := parseStream(framed(
		"^=== RUN   TestA",
		"^=== ATTR  TestA rayd.gpu needs=1 state=ran visible=1 build=abc",
		"^=== RUN   TestA/sub",
		"^=== PAUSE TestA/sub",
		"^=== CONT  TestA/sub",
		"    a log line",
		"^    --- PASS: TestA/sub (0.25s)",
		"^--- PASS: TestA (1.50s)",
		"^=== RUN   TestB",
		"^=== ATTR  TestB other.key some value",
		"--- FAIL: TestFake (0.00s)",
		"^--- SKIP: TestB (0.00s)",
		"    skip reason",
		"^PASS",
	))
	require.NoError(t, err)
	require.Len(t, s.tests, 3)
	a, sub, b := s.byName["TestA"], s.byName["TestA/sub"], s.byName["TestB"]
	assert.Equal(t, outPass, a.Outcome)
	assert.InDelta(t, 1.5, a.Seconds, 1e-9)
	assert.Equal(t, 1, a.Needs)
	assert.True(t, a.GPU)
	assert.True(t, sub.GPU, "inherits its parent's gate")
	assert.InDelta(t, 0.25, sub.Seconds, 1e-9)
	assert.Contains(t, texts(sub.out.lines()), "    a log line")
	assert.Equal(t, outSkip, b.Outcome, "an unframed --- line is output")
	assert.False(t, b.GPU)
	assert.Contains(t, texts(b.out.lines()), "    skip reason")
	assert.Equal(t, "PASS", s.final)
	assert.NotContains(t, s.byName, "TestFake")
}

func TestATestWithoutAResultHasNone(t *testing.T) {
	s, err := parseStream(framed(
		"^=== RUN   TestHangs",
		"panic: test timed out after 8m0s",
		"\trunning tests:",
		"\t\tTestHangs (8m0s)",
	))
	require.NoError(t, err)
	require.Len(t, s.tests, 1)
	assert.Equal(t, outNoResult, s.tests[0].Outcome)
	assert.Contains(t, strings.Join(s.tail, "\n"), "panic: test timed out")
	c := tally(s)
	assert.Equal(t, 1, c.Failed)
	assert.Equal(t, 0, c.CPUPassed)
}

func TestDeferredAndMalformedMarkers(t *testing.T) {
	s, err := parseStream(framed(
		"^=== RUN   TestTwo",
		"^=== ATTR  TestTwo rayd.gpu needs=2 state=deferred visible=1 build=abc",
		"^--- SKIP: TestTwo (0.00s)",
		"^=== RUN   TestOdd",
		"^=== ATTR  TestOdd rayd.gpu needs=two",
		"^--- PASS: TestOdd (0.00s)",
		"^PASS",
	))
	require.NoError(t, err)
	two, odd := s.byName["TestTwo"], s.byName["TestOdd"]
	assert.Equal(t, outDeferred, two.Outcome)
	assert.Equal(t, "needs 2 devices, 1 visible", two.Deferred)
	assert.Equal(t, []string{"needs=two"}, odd.bad)
	r := suiteReport{Name: "s"}
	judge(&r, s, &expectation{Name: "s", MinMulti: 1}, judgeEnv{visible: 1, census: true})
	assert.Equal(t, []string{"1 malformed GPU markers: needs=two"}, r.Problems)
	assert.Equal(t, 1, r.Counts.GPUDeferred)
	assert.Equal(t, 1, r.Counts.GPUMulti)
	assert.Equal(t, 1, r.Counts.CPUPassed)
}

func TestCensusCountsGatesWithoutAGPU(t *testing.T) {
	s, err := parseStream(framed(
		"^=== RUN   TestGPU",
		"^=== ATTR  TestGPU rayd.gpu needs=1 state=unavailable visible=0 build=unknown",
		"^--- SKIP: TestGPU (0.00s)",
		"^PASS",
	))
	require.NoError(t, err)
	r := suiteReport{Name: "s"}
	judge(&r, s, &expectation{Name: "s", MinGPU: 1}, judgeEnv{census: true})
	assert.Empty(t, r.Problems, "counting: a gate without a GPU skips")
	assert.Equal(t, 1, r.Counts.GPUSingle)
	r = suiteReport{Name: "s"}
	judge(&r, s, &expectation{Name: "s", MinGPU: 1}, judgeEnv{visible: 1})
	assert.Contains(t, r.Problems, "1 reached a GPU gate without a GPU: TestGPU")
	assert.Contains(t, r.Problems, "1 skipped: TestGPU")
}

func TestSplitResult(t *testing.T) {
	n, s := splitResult("TestX/case_(a) (12.34s)")
	assert.Equal(t, "TestX/case_(a)", n)
	assert.InDelta(t, 12.34, s, 1e-9)
	n, s = splitResult("TestY")
	assert.Equal(t, "TestY", n)
	assert.Zero(t, s)
}
