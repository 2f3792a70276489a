// Package jobtest holds what the tests of the distributed examples share:
// running the test binary itself as a rank, a launcher-free environment,
// a job started in its own process group with a deadline, free ports.
//
// Place in the package graph: internal test support; imports dist, driver,
// gputest and testify.
package jobtest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
)

// Program is an example command run as a rank: the test binary itself
// with AsMain=1 in its environment (its TestMain then runs the command), or
// the built binary named by the variable Bin when that is set.
type Program struct {
	AsMain, Bin string
}

// Command returns the path to launch and the environment that makes it the
// command.
func (p Program) Command() (string, []string) {
	if b := os.Getenv(p.Bin); b != "" {
		return b, nil
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return self, []string{p.AsMain + "=1"}
}

// LauncherFree is the environment minus every launcher variable (and minus
// OPTIX_CACHE_PATH and AsMain).
func (p Program) LauncherFree() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "RANK", name == "WORLD_SIZE", name == "LOCAL_RANK", name == "LOCAL_WORLD_SIZE",
			name == "MASTER_ADDR", name == "MASTER_PORT", name == "OPTIX_CACHE_PATH", name == p.AsMain,
			strings.HasPrefix(name, "SLURM_"), strings.HasPrefix(name, "OMPI_"), strings.HasPrefix(name, "TORCHELASTIC_"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// JobEnv is the environment of a launched job: no launcher variables, no
// OPTIX_CACHE_PATH, a per-test OptiX cache root, NVLS off.
func (p Program) JobEnv(t *testing.T) []string {
	_, extra := p.Command()
	return append(append(p.LauncherFree(), extra...), "RAYD_EXAMPLE_OPTIX_CACHE_ROOT="+t.TempDir(), "NCCL_NVLS_ENABLE=0")
}

// NeedTwoGPUs gates a test on two GPUs (internal/gputest.MustHaveDevices:
// deferred on a one-GPU machine; skipped without a driver, or failed under
// RAYD_REQUIRE_GPU=1), and fails when two GPUs are present without libnccl.
func NeedTwoGPUs(t *testing.T) {
	t.Helper()
	gputest.MustHaveDevices(t, 2)
	if err := driver.LoadNCCL(); err != nil {
		t.Fatalf("2 GPUs but no libnccl: %v", err)
	}
}

// SyncBuffer is a bytes.Buffer safe for the concurrent writers of a job.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RunGroup runs cmd in its own process group, collecting its output, and
// kills the group when it outlives limit.
func RunGroup(t *testing.T, cmd *exec.Cmd, limit time.Duration) (string, error) {
	t.Helper()
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	timer := time.AfterFunc(limit, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	err := cmd.Wait()
	return out.String(), err
}

// FreePortPair returns a port p such that p and p+1 were free (torchrun's
// agent store takes p, the rendezvous p+1).
func FreePortPair(t *testing.T) int {
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
