package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
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

	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
)

// raydBin names a built rayd command for the rayd-launch test (without it
// the test drives dist.Launch, the code behind `rayd launch`, in process).
const raydBin = "RAYD_BIN"

// jobTimeout bounds a whole launched job; on expiry its process group dies.
const jobTimeout = 900 * time.Second

// recipeArgs are the recipe test's arguments (spec §11.3).
var recipeArgs = []string{"--steps=6", "--check-every=3", "--rays=65536", "--cells=16", "--timeout=300"}

func needTwoGPUs(t *testing.T) {
	t.Helper()
	gputest.MustHaveDevices(t, 2)
	if err := driver.LoadNCCL(); err != nil {
		t.Fatalf("2 GPUs but no libnccl: %v", err)
	}
}

// jobEnv is the environment of a launched job: no launcher variables, no
// OPTIX_CACHE_PATH, a per-test OptiX cache root, NVLS off.
func jobEnv(t *testing.T) []string {
	_, extra := program()
	return append(append(launcherFree(), extra...), "RAYD_EXAMPLE_OPTIX_CACHE_ROOT="+t.TempDir(), "NCCL_NVLS_ENABLE=0")
}

// syncBuffer is a bytes.Buffer safe for the concurrent writers of a job.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runGroup runs cmd in its own process group and kills the group when it
// outlives jobTimeout.
func runGroup(t *testing.T, cmd *exec.Cmd) (string, error) {
	t.Helper()
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	timer := time.AfterFunc(jobTimeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	err := cmd.Wait()
	return out.String(), err
}

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
	needTwoGPUs(t)
	prog, _ := program()
	if bin := os.Getenv(raydBin); bin != "" {
		cmd := exec.Command(bin, append([]string{"launch", "-n", "2", prog}, recipeArgs...)...)
		cmd.Env = jobEnv(t)
		out, err := runGroup(t, cmd)
		require.NoError(t, err, out)
		checkRecipe(t, out, 2, 4)
		return
	}
	t.Logf("%s is not set: driving dist.Launch (the code behind rayd launch) in process", raydBin)
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	_, err := dist.Launch(ctx, dist.LaunchConfig{NProcs: 2, Program: prog, Args: recipeArgs, Env: jobEnv(t), Stdout: &out, Stderr: &out})
	require.NoError(t, err, out.String())
	checkRecipe(t, out.String(), 2, 4)
}

// freePortPair returns a port p such that p and p+1 were free (torchrun's
// agent store takes p, the rendezvous p+1).
func freePortPair(t *testing.T) int {
	for range 50 {
		p, err := dist.FreePort("127.0.0.1")
		require.NoError(t, err)
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1))); err == nil {
			_ = ln.Close()
			return p
		}
	}
	t.Fatal("no pair of free ports")
	return 0
}

// TestRecipeWithTorchrun runs the recipe on 2 GPUs under torchrun --no-python.
func TestRecipeWithTorchrun(t *testing.T) {
	needTwoGPUs(t)
	torchrun, err := exec.LookPath("torchrun")
	if err != nil {
		t.Skip("torchrun is not on PATH")
	}
	prog, _ := program()
	args := append([]string{"--nnodes=1", "--nproc_per_node=2", "--master_addr=127.0.0.1",
		fmt.Sprintf("--master_port=%d", freePortPair(t)), "--no-python", prog}, recipeArgs...)
	cmd := exec.Command(torchrun, args...)
	cmd.Env = jobEnv(t)
	out, err := runGroup(t, cmd)
	require.NoError(t, err, out)
	checkRecipe(t, out, 2, 4)
}

// TestKillingARankFailsTheOther starts two ranks directly, kills rank 1
// mid-run and requires rank 0 to exit with status 1 within the configured
// timeout: at once through the watchdog, or by the collective's deadline
// without it.
func TestKillingARankFailsTheOther(t *testing.T) {
	needTwoGPUs(t)
	for _, tc := range []struct {
		name    string
		args    []string
		timeout time.Duration
	}{
		{"watchdog", []string{"--check-every=1", "--timeout=60"}, 60 * time.Second},
		{"deadline only", []string{"--check-every=100000000", "--timeout=20", "--watchdog=false"}, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog, _ := program()
			port, err := dist.FreePort("127.0.0.1")
			require.NoError(t, err)
			args := append([]string{"--steps=100000000", "--rays=65536", "--cells=16"}, tc.args...)
			var cmds [2]*exec.Cmd
			var out0 syncBuffer
			started := make(chan struct{})
			for r := range 2 {
				cmds[r] = exec.Command(prog, args...)
				cmds[r].Env = dist.RankEnv(jobEnv(t), r, 2, "127.0.0.1", port, "kill-test-"+tc.name)
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
