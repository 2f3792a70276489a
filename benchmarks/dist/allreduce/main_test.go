package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
)

// asMainEnv makes the test binary run the command itself, so a launcher
// can start it as a rank.
const asMainEnv = "RAYD_ALLREDUCE_BENCH_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// launcherFree is the environment minus every launcher variable, plus the
// variable that makes the test binary the command.
func launcherFree() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "RANK", name == "WORLD_SIZE", name == "LOCAL_RANK", name == "LOCAL_WORLD_SIZE",
			name == "MASTER_ADDR", name == "MASTER_PORT", name == asMainEnv,
			strings.HasPrefix(name, "SLURM_"), strings.HasPrefix(name, "OMPI_"), strings.HasPrefix(name, "TORCHELASTIC_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, asMainEnv+"=1", "NCCL_NVLS_ENABLE=0")
}

func TestFlags(t *testing.T) {
	var errb bytes.Buffer
	c, err := parseFlags(nil, &errb)
	require.NoError(t, err)
	assert.Equal(t, config{vertices: []int{16641, 262144, 2097152}, warmup: 5, rounds: 25, iters: 20, timeout: 600 * time.Second}, c)
	assert.Equal(t, 129*129, c.vertices[0], "the 128-cell grid's vertex count")
	for _, args := range [][]string{{"--vertices=0"}, {"--vertices=1,x"}, {"--vertices=715827883"}, {"--rounds=0"},
		{"--iters=0"}, {"--warmup=-1"}, {"--timeout=0s"}, {"stray"}, {"--nope"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errb), "%v", args)
	}
	var out bytes.Buffer
	errb.Reset()
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "-vertices")
}

func TestWithoutALauncherItExplains(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = launcherFree()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, stderr.String(), "rayd launch -n 2 allreduce")
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 7.0, median([]float64{7}))
}

// TestTwoRanks runs a short benchmark on 2 GPUs through dist.Launch (the
// code behind rayd launch) and checks the records rank 0 prints.
func TestTwoRanks(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	require.NoError(t, driver.LoadNCCL(), "2 GPUs but no libnccl")
	self, err := os.Executable()
	require.NoError(t, err)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := dist.Launch(ctx, dist.LaunchConfig{NProcs: 2, Program: self,
		Args: []string{"--vertices=16641,262144", "--warmup=1", "--rounds=3", "--iters=2", "--timeout=120s"},
		Env:  launcherFree(), Stdout: &out, Stderr: &errb})
	require.NoError(t, err, errb.String())
	assert.Equal(t, []int{0, 0}, res.ExitCodes)
	var recs []record
	text := out.String()
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte("{")) {
			continue // library chatter
		}
		var r record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		recs = append(recs, r)
	}
	require.Len(t, recs, 2, "one record per size, from rank 0 only:\n%s", text)
	for i, v := range []int{16641, 262144} {
		r := recs[i]
		assert.Equal(t, impl, r.Impl)
		assert.Equal(t, v, r.Vertices)
		assert.Equal(t, int64(12*v), r.Bytes)
		assert.Positive(t, r.MedianUS)
		assert.LessOrEqual(t, r.MinUS, r.MedianUS)
		assert.InDelta(t, float64(r.Bytes)/r.MedianUS/1e3, r.AlgBWGBps, 1e-9*r.AlgBWGBps)
		assert.InDelta(t, r.AlgBWGBps, r.BusBWGBps, 1e-9*r.AlgBWGBps, "2(W−1)/W = 1 for W = 2")
		assert.Equal(t, 2, r.WorldSize)
		assert.Positive(t, r.NCCLVersion)
		t.Logf("V=%d: %.1f µs, %.2f GB/s", v, r.MedianUS, r.AlgBWGBps)
	}
}
