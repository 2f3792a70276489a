package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/jobtest"

	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/internal/gputest"
)

// raydBin names a built rayd command for the rayd-launch test (without it
// the test drives dist.Launch, the code behind `rayd launch`, in process).
const raydBin = "RAYD_BIN"

// jobTimeout bounds a whole launched job; on expiry its process group dies.
const jobTimeout = 900 * time.Second

// The recipe test's run (spec §11.3).
const (
	recipeSamples    = 1 << 20
	recipeSeed       = 7
	recipeResolution = 8
)

func recipeArgs(out string) []string {
	return []string{fmt.Sprintf("--samples=%d", recipeSamples), fmt.Sprintf("--seed=%d", recipeSeed),
		fmt.Sprintf("--resolution=%d", recipeResolution), "--out=" + out, "--timeout=300s"}
}

// reference is the single-process, single-device launch of the whole lane
// space (lane_offset 0, lane_count −1) on device 0, computed once.
var reference = sync.OnceValues(func() (partial, error) {
	total := dist.LaneTotal(recipeSamples, 2)
	cfg := config{samples: recipeSamples, resolution: recipeResolution, seed: recipeSeed}
	return accumulateOnDevice(context.Background(), 0, cfg, window{0, -1, total})
})

var sumsRE = regexp.MustCompile(`rank=(\d+) local_power_sum=(\S+) merged_power_sum=(\S+) merged_direct_count=(\d+) merged_grid_checksum=(\S+)`)

// checkRecipe asserts the recipe's outcome (spec §11.3): the file has
// total_samples = 1048576 and world_size 2; its counters equal the
// reference's exactly and its grids are within rtol 1e-4 / atol 1e-9; the
// reference deposits power; every rank prints merged_grid_checksum= with
// the same merged values, and the local power sums add up to the merged
// one.
func checkRecipe(t *testing.T, out, path string) {
	t.Helper()
	o := readOutput(t, path)
	assert.Equal(t, recipeSamples, o.TotalSamples)
	assert.Equal(t, 2, o.WorldSize)
	assert.Equal(t, int64(recipeSeed), o.Seed)
	assert.Equal(t, recipeResolution, o.Resolution)

	ref, err := reference()
	require.NoError(t, err)
	assert.Greater(t, sum(ref.grids[0]), 0.0, "reference power sum")
	got := o.toPartial()
	comparePartials(t, ref, got, 1e-4, 1e-9, "merged vs single launch")
	assert.Equal(t, int64(recipeSamples), got.counters[0]+got.counters[3]+got.counters[5], "every lane is accounted for")

	assert.Contains(t, out, "merged_grid_checksum=")
	lines := sumsRE.FindAllStringSubmatch(out, -1)
	require.Len(t, lines, 2, out)
	ranks, localPower := map[string]bool{}, 0.0
	for _, m := range lines {
		ranks[m[1]] = true
		assert.Equal(t, lines[0][3:], m[3:], "rank %s's merged values differ from rank %s's", m[1], lines[0][1])
		lp, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		localPower += lp
	}
	assert.Equal(t, map[string]bool{"0": true, "1": true}, ranks)
	mp, err := strconv.ParseFloat(lines[0][3], 64)
	require.NoError(t, err)
	assert.InDelta(t, mp, localPower, 1e-12*mp)
	assert.Equal(t, o.PowerSum, mp)
	assert.Equal(t, strconv.FormatInt(ref.counters[0], 10), lines[0][4], "merged_direct_count")
	t.Logf("merged: power sum %.9g, direct_count %s, checksum %s; reference power sum %.9g",
		mp, lines[0][4], lines[0][5], sum(ref.grids[0]))
}

// TestRecipeWithRaydLaunch runs the recipe on 2 GPUs under rayd launch.
func TestRecipeWithRaydLaunch(t *testing.T) {
	jobtest.NeedTwoGPUs(t)
	prog, _ := example.Command()
	path := filepath.Join(t.TempDir(), "grids.json")
	if bin := os.Getenv(raydBin); bin != "" {
		cmd := exec.Command(bin, append([]string{"launch", "-n", "2", prog}, recipeArgs(path)...)...)
		cmd.Env = example.JobEnv(t)
		out, err := jobtest.RunGroup(t, cmd, jobTimeout)
		require.NoError(t, err, out)
		checkRecipe(t, out, path)
		return
	}
	t.Logf("%s is not set: driving dist.Launch (the code behind rayd launch) in process", raydBin)
	var out jobtest.SyncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	res, err := dist.Launch(ctx, dist.LaunchConfig{NProcs: 2, Program: prog, Args: recipeArgs(path), Env: example.JobEnv(t),
		Stdout: &out, Stderr: &out})
	require.NoError(t, err, out.String())
	assert.Equal(t, []int{0, 0}, res.ExitCodes, out.String())
	checkRecipe(t, out.String(), path)
}

// TestRecipeWithTorchrun runs the recipe on 2 GPUs under torchrun --no-python.
func TestRecipeWithTorchrun(t *testing.T) {
	jobtest.NeedTwoGPUs(t)
	torchrun, err := exec.LookPath("torchrun")
	if err != nil {
		if os.Getenv(gputest.RequireEnv) == "1" {
			t.Fatalf("torchrun is not on PATH (and %s=1 forbids skipping)", gputest.RequireEnv)
		}
		t.Skip("torchrun is not on PATH")
	}
	prog, _ := example.Command()
	path := filepath.Join(t.TempDir(), "grids.json")
	args := append([]string{"--nnodes=1", "--nproc_per_node=2", "--master_addr=127.0.0.1",
		fmt.Sprintf("--master_port=%d", jobtest.FreePortPair(t)), "--no-python", prog}, recipeArgs(path)...)
	cmd := exec.Command(torchrun, args...)
	cmd.Env = example.JobEnv(t)
	out, err := jobtest.RunGroup(t, cmd, jobTimeout)
	require.NoError(t, err, out)
	checkRecipe(t, out, path)
}
