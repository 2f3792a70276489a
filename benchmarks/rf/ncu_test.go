package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawPage is the shape of `ncu --import R --csv --page raw`: a header row,
// a units row, one row per launch (a non-accumulation launch among them);
// rawPageFull the full set's names and units (ms, thread_inst_executed).
const rawPage = `==PROF== a line before the table
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","smsp__inst_executed.sum","smsp__thread_inst_executed.sum","sm__cycles_elapsed.avg","launch__registers_per_thread","smsp__issue_active.avg.pct_of_peak_sustained_active","sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active","sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"
"","","","","","","","","","","","usecond","Kinst","inst","cycle","register/thread","%","%","%","inst"
"0","1","rfbench","127.0.0.1","rf_accum_direct_only","1","13","(128, 1, 1)","(2640, 1, 1)","0","9.0","4,000.00","2,112,000.00","67,108,864,000","8,000,000","96","80.5","62.5","31.0","1.25"
"1","1","rfbench","127.0.0.1","rf_add_f64_to_f32","1","13","(128, 1, 1)","(1, 1, 1)","0","9.0","2.00","1.00","32","4,000","16","1","0","1","0"
`

const rawPageFull = `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","FBSP.x","gpu__time_duration.sum","sm__cycles_elapsed.avg","smsp__inst_executed.sum","thread_inst_executed","smsp__cycles_elapsed.avg.per_second"
"","","","","","","","","","","","%","ms","cycle","inst","inst","Ghz"
"0","473","rfbench","127.0.0.1","rf_accum_direct_only","1","13","(128, 1, 1)","(2112, 1, 1)","0","9.0","","4.000000","8,000,000.000000","2112000000.000000","67108864000","2.000000"
`

func TestProfileFromFullSetPage(t *testing.T) {
	rows, err := parseNcuRaw([]byte(rawPageFull))
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.InDelta(t, 2e9, rows[0].m["smsp__cycles_elapsed.avg.per_second"], 1e-3)
	p, err := profileOf(rows, caseResult{Name: "direct_fixture_67108864", Lanes: 67108864, Ms: timing{Median: 4.1}}, 132, "raw")
	require.NoError(t, err)
	assert.InDelta(t, 4.0, p.DurationMs, 1e-12)
	assert.InDelta(t, 1000, p.ThreadInstPerSample, 1e-9)
	assert.InDelta(t, 2.0, p.IssueBoundMs, 1e-9)
	assert.Contains(t, p.verdict(), "4.5 ms target: met")
	p.TimedMs = 4.6
	assert.Contains(t, p.verdict(), "4.5 ms target: MISSED")
}

func TestProfileFromRawPage(t *testing.T) {
	rows, err := parseNcuRaw([]byte(rawPage))
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.InDelta(t, 4e-3, rows[0].m["gpu__time_duration.sum"], 1e-12)
	assert.InDelta(t, 2.112e9, rows[0].m["smsp__inst_executed.sum"], 1)

	c := caseResult{Name: "direct_fixture_67108864", Lanes: 67108864, Ms: timing{Median: 4.4}}
	p, err := profileOf(rows, c, 132, "raw")
	require.NoError(t, err)
	assert.Equal(t, "rf_accum_direct_only", p.Kernel)
	assert.Equal(t, "(2640, 1, 1)", p.Grid)
	assert.InDelta(t, 2.112e9*32/67108864, p.WarpInstPer32, 1e-9)
	assert.InDelta(t, 1000, p.ThreadInstPerSample, 1e-9)
	assert.InDelta(t, 2.0, p.ClockGHz, 1e-12)
	// 2.112e9 warp instructions over 528 schedulers at 2 GHz: 2 ms.
	assert.InDelta(t, 2.0, p.IssueBoundMs, 1e-9)
	assert.InDelta(t, 0.5, p.ShareOfKernel, 1e-12)
	assert.InDelta(t, 2.0/4.4, p.ShareOfTimed, 1e-12)
	assert.Equal(t, "fp64", p.BusiestPipe)
	assert.InDelta(t, 1.25, p.Stalls["wait"], 1e-12)
	assert.InDelta(t, 80.5, p.IssueActivePct, 1e-12)
	assert.Contains(t, p.verdict(), "50% of the instruction-issue bound")
	assert.Contains(t, p.verdict(), "4.5 ms target: met")
	assert.Len(t, p.lines(), 3)
}

func TestProfileRejectsWhatItCannotJudge(t *testing.T) {
	_, err := parseNcuRaw([]byte("no table here"))
	assert.Error(t, err)
	rows, err := parseNcuRaw([]byte(rawPage))
	require.NoError(t, err)
	two := append(rows, rows[0])
	_, err = profileOf(two, caseResult{Name: "x", Lanes: 1}, 132, "raw")
	assert.ErrorContains(t, err, "want exactly 1")
	delete(rows[0].m, "smsp__inst_executed.sum")
	_, err = profileOf(rows, caseResult{Name: "x", Lanes: 1}, 132, "raw")
	assert.ErrorContains(t, err, "smsp__inst_executed.sum")

	dir := t.TempDir()
	path := filepath.Join(dir, "p.csv")
	require.NoError(t, os.WriteFile(path, []byte(rawPage), 0o644))
	_, err = attachProfile(path, []caseResult{{Name: "a"}, {Name: "b"}}, 132)
	assert.ErrorContains(t, err, "want exactly one")
	p, err := attachProfile(path, []caseResult{{Name: "direct_fixture_8192", Lanes: 8192, Ms: timing{Median: 0.02}}}, 132)
	require.NoError(t, err)
	assert.Equal(t, "Nsight Compute raw page p.csv", p.Source)
}
