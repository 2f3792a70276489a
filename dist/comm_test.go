package dist

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
)

// rankPair is two in-process ranks, one per GPU, each with its communicator
// and an opened launch.Device.
type rankPair struct {
	comms [2]*Comm
	devs  [2]*launch.Device
}

// twoRanks initialises two ranks on cuda:0 and cuda:1 from two goroutines,
// meeting on a loopback port (skipped without 2 GPUs and libnccl).
func twoRanks(t *testing.T, opt Options) *rankPair {
	t.Helper()
	gputest.MustHaveDevices(t, 2)
	if err := driver.LoadNCCL(); err != nil {
		t.Fatalf("2 GPUs but no libnccl: %v", err)
	}
	t.Setenv(EnvNVLS, "0")
	t.Setenv(EnvOptiXCachePath, t.TempDir())
	port, err := FreePort("127.0.0.1")
	require.NoError(t, err)
	if opt.Timeout == 0 {
		opt.Timeout = 2 * time.Minute
	}
	p := &rankPair{}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := Env{Rank: r, WorldSize: 2, LocalRank: r, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: port,
				Launcher: LauncherEnv, RunID: t.Name()}
			if p.comms[r], errs[r] = Init(context.Background(), env, opt); errs[r] == nil {
				p.devs[r], errs[r] = launch.Open(p.comms[r].Device())
			}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for r := range 2 {
			if p.comms[r] != nil {
				p.comms[r].Abort("test cleanup")
				_ = p.comms[r].Close()
			}
			if p.devs[r] != nil {
				_ = p.devs[r].Close()
			}
		}
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	return p
}

// both runs fn for each rank concurrently and returns the errors.
func both(fn func(r int) error) [2]error {
	var errs [2]error
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = fn(r) }()
	}
	wg.Wait()
	return errs
}

func upload[T launch.Elem](t *testing.T, d *launch.Device, v []T) *launch.Buffer[T] {
	t.Helper()
	b, err := launch.Alloc[T](d, len(v))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, b.Upload(s, v))
	require.NoError(t, s.Synchronize())
	return b
}

func download[T launch.Elem](t *testing.T, b *launch.Buffer[T]) []T {
	t.Helper()
	s, err := b.Device().NewStream()
	require.NoError(t, err)
	defer s.Close()
	out := make([]T, b.Len())
	require.NoError(t, b.Download(s, out))
	return out
}

func TestCommAllReduceOnTwoGPUs(t *testing.T) {
	p := twoRanks(t, Options{})
	const v = 625 // a 24-cell grid's vertex count
	grads, losses, counts := [2]*launch.Buffer[float32]{}, [2]*launch.Buffer[float64]{}, [2]*launch.Buffer[int32]{}
	for r := range 2 {
		g := make([]float32, 3*v)
		for i := range g {
			g[i] = float32(i%97) + float32(r)*0.5
		}
		grads[r] = upload(t, p.devs[r], g)
		losses[r] = upload(t, p.devs[r], []float64{1.25 * float64(r+1)})
		counts[r] = upload(t, p.devs[r], []int32{int32(10 * (r + 1)), -1})
	}
	ctx := context.Background()
	errs := both(func(r int) error { return p.comms[r].AllReduce(ctx, Sum, grads[r], losses[r], counts[r]) })
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	for r := range 2 {
		g := download(t, grads[r])
		for i := range g {
			require.Equal(t, 2*float32(i%97)+0.5, g[i], "rank %d element %d", r, i)
		}
		assert.Equal(t, []float64{3.75}, download(t, losses[r]))
		assert.Equal(t, []int32{30, -2}, download(t, counts[r]))
	}
	// Max and Min agree exactly when the ranks hold the same values.
	errs = both(func(r int) error { return p.comms[r].AllReduce(ctx, Max, counts[r]) })
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Equal(t, []int32{30, -2}, download(t, counts[1]))
	// A buffer on the wrong device is refused before any NCCL call.
	assert.ErrorContains(t, p.comms[0].AllReduce(ctx, Sum, grads[1]), "is on cuda:1")
	errs = both(func(r int) error { return p.comms[r].Barrier(ctx) })
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	errs = both(func(r int) error { return p.comms[r].Close() })
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.ErrorIs(t, p.comms[0].AllReduce(ctx, Sum, grads[0]), ErrClosed)
}

// TestCommDeadPeerFailsFast: rank 1 dies (its connections drop, it never
// joins the collective); rank 0's all-reduce must fail with ErrPeerLost
// long before the timeout, with its communicator aborted.
func TestCommDeadPeerFailsFast(t *testing.T) {
	p := twoRanks(t, Options{Timeout: time.Minute})
	buf := upload(t, p.devs[0], make([]float32, 3*625))
	time.AfterFunc(500*time.Millisecond, func() { _ = p.comms[1].sess.peers[0].c.Close() })
	start := time.Now()
	err := p.comms[0].AllReduce(context.Background(), Sum, buf)
	elapsed := time.Since(start)
	require.ErrorIs(t, err, ErrPeerLost)
	assert.Contains(t, err.Error(), "rank 1 disconnected")
	assert.Less(t, elapsed, 20*time.Second)
	assert.ErrorIs(t, p.comms[0].Err(), ErrPeerLost)
	assert.ErrorIs(t, p.comms[0].AllReduce(context.Background(), Sum, buf), ErrPeerLost, "a broken communicator stays broken")
	t.Logf("rank 0 failed %v after rank 1 died: %v", elapsed, err)
}

// TestCommStalledPeerTimesOut: without the watchdog, a peer that is alive
// but never joins the collective makes the all-reduce fail at its deadline
// (NCCL's stream never completes; the wait aborts the communicator).
func TestCommStalledPeerTimesOut(t *testing.T) {
	p := twoRanks(t, Options{NoWatchdog: true})
	buf := upload(t, p.devs[0], make([]float32, 3*625))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	err := p.comms[0].AllReduce(ctx, Sum, buf)
	elapsed := time.Since(start)
	require.ErrorIs(t, err, ErrTimeout)
	assert.Less(t, elapsed, 15*time.Second, "the abort must not hang")
	t.Logf("rank 0 timed out after %v: %v", elapsed, err)
}

// TestAllReduceBandwidth logs the all-reduce rate of a [V,3] float32
// vertex gradient, the per-step traffic of the training recipe.
func TestAllReduceBandwidth(t *testing.T) {
	p := twoRanks(t, Options{})
	for _, v := range []int{625, 16641, 1 << 18, 1 << 21} {
		bufs := [2]*launch.Buffer[float32]{upload(t, p.devs[0], make([]float32, 3*v)), upload(t, p.devs[1], make([]float32, 3*v))}
		iters := 50
		var timings [2]AllReduceTiming
		errs := both(func(r int) error {
			var err error
			timings[r], err = p.comms[r].MeasureAllReduce(context.Background(), bufs[r], iters)
			return err
		})
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		tm := timings[0]
		assert.Equal(t, int64(12*v), tm.Bytes)
		assert.Positive(t, tm.Seconds)
		t.Logf("all-reduce [%d,3] float32 (%s): %.1f µs, algbw %.2f GB/s, busbw %.2f GB/s",
			v, byteSize(tm.Bytes), tm.Seconds*1e6, tm.AlgBW, tm.BusBW)
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
