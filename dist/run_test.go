package dist

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
)

// Without a usable communicator Run returns Init's error and never calls
// fn.
func TestRunReturnsInitFailures(t *testing.T) {
	t.Setenv(EnvNVLS, "0")
	called := false
	// Device 1<<20 exists on no machine (and without NCCL Init fails before
	// that). A local rank past the device count is no failure on a
	// machine with one visible device: that is the CUDA_VISIBLE_DEVICES
	// pinning of a launcher, and the rank takes device 0.
	err := Run(context.Background(), Env{Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1, MasterAddr: "127.0.0.1", MasterPort: 1},
		Options{Timeout: time.Second, PinDevice: true, Device: 1 << 20}, func(context.Context, *Comm) error { called = true; return nil })
	require.Error(t, err)
	assert.False(t, called)
}

// A rank whose work fails aborts the communicator: its peer's pending
// collective fails at once with the reason instead of hanging.
func TestGPURunAbortsPeersOnFailure(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	if err := driver.LoadNCCL(); err != nil {
		t.Fatalf("2 GPUs but no libnccl: %v", err)
	}
	t.Setenv(EnvNVLS, "0")
	t.Setenv(EnvOptiXCachePath, t.TempDir())
	port, err := FreePort("127.0.0.1")
	require.NoError(t, err)
	boom := errors.New("rank 1 gave up")
	errs := make([]error, 2)
	done := make(chan int, 2)
	for r := range 2 {
		go func() {
			env := Env{Rank: r, WorldSize: 2, LocalRank: r, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: port,
				Launcher: LauncherEnv, RunID: t.Name()}
			errs[r] = Run(context.Background(), env, Options{Timeout: time.Minute}, func(ctx context.Context, c *Comm) error {
				if r == 1 {
					return boom
				}
				return c.Barrier(ctx)
			})
			done <- r
		}()
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(50 * time.Second):
			t.Fatal("a rank is still waiting: the abort did not reach it")
		}
	}
	assert.ErrorIs(t, errs[1], boom)
	assert.Error(t, errs[0], "rank 0's barrier must fail once rank 1 aborted")
}
