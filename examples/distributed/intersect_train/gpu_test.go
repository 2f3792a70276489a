package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/jobtest"

	"github.com/rayd-go/rayd/dist"
)

// raydBin names a built rayd command for the rayd-launch test (without it
// the test drives dist.Launch, the code behind `rayd launch`, in process).
const raydBin = "RAYD_BIN"

// jobTimeout bounds a whole launched job; on expiry its process group dies.
const jobTimeout = 900 * time.Second

// recipeArgs are the recipe test's arguments (spec §11.3).
var recipeArgs = []string{"--steps=6", "--check-every=3", "--rays=65536", "--cells=16", "--timeout=300"}

var (
	finalRE = regexp.MustCompile(`rank=(\d+) final_param_sha256=([0-9a-f]{64})`)
	checkRE = regexp.MustCompile(`rank=(\d+) step=(\d+) loss=(\S+) drift=0`)
)

// checkRecipe asserts the recipe's outcome: one final hash per rank, all
// equal; at least minDrift drift=0 tokens; the same loss on every rank at
// every check, and a lower loss at the last check than at the first.
func checkRecipe(t *testing.T, out string, ranks, minDrift int) {
	t.Helper()
	finals := finalRE.FindAllStringSubmatch(out, -1)
	require.Len(t, finals, ranks, out)
	for _, f := range finals {
		assert.Equal(t, finals[0][2], f[2], "rank %s's parameters differ from rank %s's", f[1], finals[0][1])
	}
	assert.GreaterOrEqual(t, strings.Count(out, "drift=0"), minDrift, out)
	byStep := map[int]map[string]string{}
	for _, m := range checkRE.FindAllStringSubmatch(out, -1) {
		s, _ := strconv.Atoi(m[2])
		if byStep[s] == nil {
			byStep[s] = map[string]string{}
		}
		byStep[s][m[1]] = m[3]
	}
	var steps []int
	for s, losses := range byStep {
		steps = append(steps, s)
		require.Len(t, losses, ranks, "step %d: a check line per rank", s)
		for r, l := range losses {
			assert.Equal(t, losses["0"], l, "step %d: rank %s reports another global loss", s, r)
		}
	}
	sort.Ints(steps)
	require.GreaterOrEqual(t, len(steps), 2, out)
	first, _ := strconv.ParseFloat(byStep[steps[0]]["0"], 64)
	last, _ := strconv.ParseFloat(byStep[steps[len(steps)-1]]["0"], 64)
	assert.Less(t, last, first, "the loss must decrease (step %d: %g, step %d: %g)", steps[0], first, steps[len(steps)-1], last)
	t.Logf("final hash %s; loss %g at step %d -> %g at step %d", finals[0][2][:16], first, steps[0], last, steps[len(steps)-1])
}

// TestRecipeWithRaydLaunch runs the recipe on 2 GPUs under rayd launch.
func TestRecipeWithRaydLaunch(t *testing.T) {
	jobtest.NeedTwoGPUs(t)
	prog, _ := example.Command()
	if bin := os.Getenv(raydBin); bin != "" {
		cmd := exec.Command(bin, append([]string{"launch", "-n", "2", prog}, recipeArgs...)...)
		cmd.Env = example.JobEnv(t)
		out, err := jobtest.RunGroup(t, cmd, jobTimeout)
		require.NoError(t, err, out)
		checkRecipe(t, out, 2, 4)
		return
	}
	t.Logf("%s is not set: driving dist.Launch (the code behind rayd launch) in process", raydBin)
	var out jobtest.SyncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	_, err := dist.Launch(ctx, dist.LaunchConfig{NProcs: 2, Program: prog, Args: recipeArgs, Env: example.JobEnv(t), Stdout: &out, Stderr: &out})
	require.NoError(t, err, out.String())
	checkRecipe(t, out.String(), 2, 4)
}

// TestRecipeWithTorchrun runs the recipe on 2 GPUs under torchrun --no-python.
func TestRecipeWithTorchrun(t *testing.T) {
	jobtest.NeedTwoGPUs(t)
	torchrun, err := exec.LookPath("torchrun")
	if err != nil {
		t.Skip("torchrun is not on PATH")
	}
	prog, _ := example.Command()
	args := append([]string{"--nnodes=1", "--nproc_per_node=2", "--master_addr=127.0.0.1",
		fmt.Sprintf("--master_port=%d", jobtest.FreePortPair(t)), "--no-python", prog}, recipeArgs...)
	cmd := exec.Command(torchrun, args...)
	cmd.Env = example.JobEnv(t)
	out, err := jobtest.RunGroup(t, cmd, jobTimeout)
	require.NoError(t, err, out)
	checkRecipe(t, out, 2, 4)
}

// TestKillingARankFailsTheOther starts two ranks directly, kills rank 1
// mid-run and requires rank 0 to exit with status 1 within the configured
// timeout: at once through the watchdog, or by the collective's deadline
// without it.
func TestKillingARankFailsTheOther(t *testing.T) {
	jobtest.NeedTwoGPUs(t)
	for _, tc := range []struct {
		name    string
		args    []string
		timeout time.Duration
	}{
		{"watchdog", []string{"--check-every=1", "--timeout=60"}, 60 * time.Second},
		{"deadline only", []string{"--check-every=100000000", "--timeout=20", "--watchdog=false"}, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog, _ := example.Command()
			port, err := dist.FreePort("127.0.0.1")
			require.NoError(t, err)
			args := append([]string{"--steps=100000000", "--rays=65536", "--cells=16"}, tc.args...)
			var cmds [2]*exec.Cmd
			var out0 jobtest.SyncBuffer
			started := make(chan struct{})
			for r := range 2 {
				cmds[r] = exec.Command(prog, args...)
				cmds[r].Env = dist.RankEnv(example.JobEnv(t), r, 2, "127.0.0.1", port, "kill-test-"+tc.name)
				cmds[r].SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			}
			cmds[0].Stdout, cmds[0].Stderr = &out0, &out0
			pr, pw := io.Pipe()
			cmds[1].Stdout, cmds[1].Stderr = pw, pw
			go func() { // rank 1 is training once it has printed its start line
				sc := bufio.NewScanner(pr)
				once := sync.Once{}
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "rank=1 world=2") {
						once.Do(func() { close(started) })
					}
				}
			}()
			for _, c := range cmds {
				require.NoError(t, c.Start())
				pid := c.Process.Pid
				t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
			}
			exited := make(chan error, 1)
			go func() { exited <- cmds[0].Wait() }()
			select {
			case <-started:
			case err := <-exited:
				t.Fatalf("rank 0 ended before rank 1 started training: %v\n%s", err, out0.String())
			case <-time.After(5 * time.Minute):
				t.Fatalf("rank 1 did not start training\n%s", out0.String())
			}
			time.Sleep(2 * time.Second) // mid-run
			require.NoError(t, cmds[1].Process.Kill())
			killed := time.Now()
			_ = cmds[1].Wait()
			_ = pw.Close()
			select {
			case err := <-exited:
				elapsed := time.Since(killed)
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, out0.String())
				assert.Equal(t, 1, ee.ExitCode(), out0.String())
				assert.Contains(t, out0.String(), "rank=0 FAILED")
				assert.Less(t, elapsed, tc.timeout+30*time.Second, "rank 0 must fail within the timeout (plus teardown)")
				t.Logf("rank 0 exited %v after rank 1 was killed:\n%s", elapsed, lastLines(out0.String(), 3))
			case <-time.After(tc.timeout + 2*time.Minute):
				t.Fatalf("rank 0 still running %v after rank 1 was killed\n%s", tc.timeout+2*time.Minute, out0.String())
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
