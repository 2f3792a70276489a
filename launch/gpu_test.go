package launch_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

const poison = 0x7fc00bad // a NaN payload no kernel writes

// runBasicKernels drives every kernel of the basic module on d and compares
// each result with Go, on fresh random inputs with poisoned outputs.
func runBasicKernels(d *launch.Device, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := 1<<20 + rng.IntN(1<<16) // odd sizes exercise the tails
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i], y[i] = rng.Float32()*2-1, rng.Float32()*2-1
	}
	a := rng.Float32()*4 - 2
	value := rng.Float32()
	start := rng.Uint32() >> 4

	bx, err := launch.Alloc[float32](d, n)
	if err != nil {
		return err
	}
	defer bx.Close()
	by, err := launch.Alloc[float32](d, n)
	if err != nil {
		return err
	}
	defer by.Close()
	bu, err := launch.Alloc[uint32](d, n)
	if err != nil {
		return err
	}
	defer bu.Close()

	k := func(name string) *launch.Kernel {
		kk, e := d.Kernel("basic", name)
		if e != nil && err == nil {
			err = e
		}
		return kk
	}
	fill, iota, axpy, reduce := k("rayd_fill_f32"), k("rayd_iota_u32"), k("rayd_axpy_f32"), k("rayd_reduce_sum_f32")
	if err != nil {
		return err
	}
	grid, block := launch.Blocks(n, 256), launch.Threads(256)

	// fill
	if err := by.Memset32(s, poison); err != nil {
		return err
	}
	if err := fill.Launch(s, grid, block, 0, by, uint32(n), value); err != nil {
		return err
	}
	got := make([]float32, n)
	if err := by.Download(s, got); err != nil {
		return err
	}
	for i, v := range got {
		if v != value {
			return fmt.Errorf("fill[%d] = %v, want %v", i, v, value)
		}
	}
	// iota (half a grid: the grid-stride loop must cover the rest)
	if err := bu.Memset32(s, poison); err != nil {
		return err
	}
	if err := iota.Launch(s, launch.Blocks(n/2, 256), block, 0, bu, uint32(n), start); err != nil {
		return err
	}
	gu := make([]uint32, n)
	if err := bu.Download(s, gu); err != nil {
		return err
	}
	for i, v := range gu {
		if v != start+uint32(i) {
			return fmt.Errorf("iota[%d] = %d, want %d", i, v, start+uint32(i))
		}
	}
	// axpy: bitwise equal to a single-rounding fma in Go.
	if err := bx.Upload(s, x); err != nil {
		return err
	}
	if err := by.Upload(s, y); err != nil {
		return err
	}
	if err := axpy.Launch(s, grid, block, 0, by, bx, a, uint32(n)); err != nil {
		return err
	}
	if err := by.Download(s, got); err != nil {
		return err
	}
	for i := range got {
		want := float32(math.FMA(float64(a), float64(x[i]), float64(y[i])))
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			return fmt.Errorf("axpy[%d] = %v, want %v", i, got[i], want)
		}
	}
	// reduce: two passes, compared with a float64 sum.
	const blocks = 264
	part, err := launch.Alloc[float32](d, blocks)
	if err != nil {
		return err
	}
	defer part.Close()
	total, err := launch.Alloc[float32](d, 1)
	if err != nil {
		return err
	}
	defer total.Close()
	if err := total.Memset32(s, poison); err != nil {
		return err
	}
	if err := reduce.Launch(s, launch.Dim3{X: blocks}, block, 0, bx, uint32(n), part); err != nil {
		return err
	}
	if err := reduce.Launch(s, launch.Dim3{X: 1}, block, 0, part, uint32(blocks), total); err != nil {
		return err
	}
	sum := make([]float32, 1)
	if err := total.Download(s, sum); err != nil {
		return err
	}
	var ref float64
	for _, v := range x {
		ref += float64(v)
	}
	if math.Abs(float64(sum[0])-ref) > 1e-5*math.Max(1, math.Abs(ref)) {
		return fmt.Errorf("reduce = %v, want %v", sum[0], ref)
	}
	return nil
}

func TestBasicKernelsEveryDeviceConcurrently(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	seed := testscene.Seed(t)
	t.Logf("%d device(s)", len(ords))
	var wg sync.WaitGroup
	errs := make([]error, 2*len(ords))
	for i, o := range ords {
		d, err := launch.Open(o)
		require.NoError(t, err)
		defer d.Close()
		// Two goroutines per device, all devices at once.
		for j := 0; j < 2; j++ {
			wg.Add(1)
			go func(slot int, d *launch.Device) {
				defer wg.Done()
				errs[slot] = runBasicKernels(d, seed+uint64(slot))
			}(2*i+j, d)
		}
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "device %d goroutine %d", i/2, i%2)
	}
}

func TestTwoDevicesFromTwoGoroutines(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	seed := testscene.Seed(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for o := 0; o < 2; o++ {
		wg.Add(1)
		go func(o int) {
			defer wg.Done()
			d, err := launch.Open(o)
			if err != nil {
				errs[o] = err
				return
			}
			defer d.Close()
			for r := 0; r < 3 && errs[o] == nil; r++ {
				errs[o] = runBasicKernels(d, seed+uint64(10*o+r))
			}
		}(o)
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
}

func TestPeerCopyRoundTrip(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	d0, err := launch.Open(0)
	require.NoError(t, err)
	defer d0.Close()
	d1, err := launch.Open(1)
	require.NoError(t, err)
	defer d1.Close()
	require.NoError(t, launch.EnablePeerAccess(d0, d1))
	n := 3<<20 + 17
	src := make([]uint32, n)
	rng := rand.New(rand.NewPCG(testscene.Seed(t), 1))
	for i := range src {
		src[i] = rng.Uint32()
	}
	s0, err := d0.NewStream()
	require.NoError(t, err)
	defer s0.Close()
	s1, err := d1.NewStream()
	require.NoError(t, err)
	defer s1.Close()
	a, err := launch.Alloc[uint32](d0, n)
	require.NoError(t, err)
	defer a.Close()
	b, err := launch.Alloc[uint32](d1, n)
	require.NoError(t, err)
	defer b.Close()
	back, err := launch.Alloc[uint32](d0, n)
	require.NoError(t, err)
	defer back.Close()
	require.NoError(t, back.Memset32(s0, poison))
	require.NoError(t, b.Memset32(s1, poison))
	require.NoError(t, s1.Synchronize())
	require.NoError(t, a.Upload(s0, src))
	ev, err := d0.NewEvent(false)
	require.NoError(t, err)
	defer ev.Close()
	require.NoError(t, b.CopyFrom(s0, a)) // 0 -> 1 on device 0's stream
	require.NoError(t, ev.Record(s0))
	require.NoError(t, s1.Wait(ev)) // cross-device dependency by event
	require.NoError(t, back.CopyFrom(s1, b))
	require.NoError(t, s1.Synchronize())
	got := make([]uint32, n)
	require.NoError(t, back.Download(s0, got))
	assert.Equal(t, src, got)
}

func TestDeviceErrorsAreTyped(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(0)
	require.NoError(t, err)
	_, err = launch.Alloc[float32](d, 1<<46) // 256 TiB
	require.Error(t, err)
	assert.ErrorIs(t, err, driver.ErrOutOfMemory)
	var ce *driver.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cuMemAlloc_v2", ce.Func)
	assert.Equal(t, 0, ce.Device)

	_, err = d.Kernel("basic", "rayd_missing")
	assert.ErrorContains(t, err, "no entry")
	_, err = d.Kernel("nosuchmodule", "x")
	assert.Error(t, err)

	n, err := launch.Count()
	require.NoError(t, err)
	_, err = launch.Open(n)
	assert.ErrorIs(t, err, driver.ErrInvalidDevice)

	s, err := d.NewStream()
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close()) // idempotent
	assert.ErrorIs(t, s.Synchronize(), launch.ErrClosed)

	before, _ := d.Allocated()
	b, err := launch.Alloc[float64](d, 1000)
	require.NoError(t, err)
	cur, peak := d.Allocated()
	assert.Equal(t, before+8000, cur)
	assert.GreaterOrEqual(t, peak, cur)
	require.NoError(t, b.Close())
	cur, _ = d.Allocated()
	assert.Equal(t, before, cur)

	require.NoError(t, d.Close())
	require.NoError(t, d.Close())
	_, err = launch.Alloc[float32](d, 1)
	assert.ErrorIs(t, err, launch.ErrClosed)
}

func TestExecutorRunsWithContextCurrent(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(0)
	require.NoError(t, err)
	defer d.Close()
	var h uintptr
	require.NoError(t, d.Do(func() error {
		var e error
		h, e = driver.CurrentContextHandle()
		return e
	}))
	assert.NotZero(t, h)
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Close()
	// Work queued from the executor and from the caller's goroutine mixes freely.
	b, err := launch.Alloc[float32](d, 1024)
	require.NoError(t, err)
	defer b.Close()
	k, err := d.Kernel("basic", "rayd_fill_f32")
	require.NoError(t, err)
	require.NoError(t, d.Do(func() error {
		return k.Launch(s, launch.Blocks(1024, 256), launch.Threads(256), 0, b, uint32(1024), float32(3))
	}))
	got := make([]float32, 1024)
	require.NoError(t, b.Download(s, got))
	for _, v := range got {
		require.Equal(t, float32(3), v)
	}
}

func TestAllocAsyncIsStreamOrderedAndReturnsToBaseline(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(0)
	require.NoError(t, err)
	defer d.Close()
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, d.TrimPool())
	free0, _, err := d.MemInfo()
	require.NoError(t, err)
	fill, err := d.Kernel("basic", "rayd_fill_f32")
	require.NoError(t, err)
	const n = 64 << 20 // 256 MiB of float32
	for round := 0; round < 3; round++ {
		b, err := launch.AllocAsync[float32](s, n)
		require.NoError(t, err)
		require.NoError(t, b.Memset32(s, poison))
		require.NoError(t, fill.Launch(s, launch.Blocks(n, 256), launch.Threads(256), 0, b, uint32(n), float32(round)))
		got := make([]float32, n)
		require.NoError(t, b.Download(s, got))
		for i := 0; i < n; i += 4099 {
			require.Equal(t, float32(round), got[i], "round %d element %d", round, i)
		}
		require.NoError(t, b.Close()) // freed in stream order
	}
	require.NoError(t, d.TrimPool())
	free1, _, err := d.MemInfo()
	require.NoError(t, err)
	assert.InDelta(t, float64(free0), float64(free1), 8<<20, "device memory did not return to its baseline")
	cur, _ := d.Allocated()
	assert.Zero(t, cur)
}

// A kernel takes a buffer of another device only once peer access from its
// device to that one is enabled; it then writes the peer's memory in place,
// also memory of the peer's stream-ordered pool once the pool is opened.
func TestKernelWritesPeerMemoryOnceAccessIsEnabled(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	d0, err := launch.Open(0)
	require.NoError(t, err)
	defer d0.Close()
	d1, err := launch.Open(1)
	require.NoError(t, err)
	defer d1.Close()
	s0, err := d0.NewStream()
	require.NoError(t, err)
	defer s0.Close()
	s1, err := d1.NewStream()
	require.NoError(t, err)
	defer s1.Close()
	k, err := d0.Kernel("basic", "rayd_fill_f32")
	require.NoError(t, err)
	plain, err := launch.Alloc[float32](d1, 4099)
	require.NoError(t, err)
	defer plain.Close()
	err = k.Launch(s0, launch.Blocks(4099, 256), launch.Threads(256), 0, plain, uint32(4099), float32(5))
	require.ErrorIs(t, err, launch.ErrWrongDevice)
	require.NoError(t, launch.EnablePeerAccess(d0, d1))
	require.NoError(t, launch.GrantPoolAccess(d1, d0))
	pooled, err := launch.AllocAsync[float32](s1, 4099)
	require.NoError(t, err)
	require.NoError(t, s1.Synchronize())
	for _, b := range []*launch.Buffer[float32]{plain, pooled} {
		require.NoError(t, k.Launch(s0, launch.Blocks(4099, 256), launch.Threads(256), 0, b, uint32(4099), float32(5)))
		require.NoError(t, s0.Synchronize())
		got := make([]float32, 4099)
		require.NoError(t, b.Download(s1, got))
		for i, v := range got {
			require.Equal(t, float32(5), v, "element %d", i)
		}
	}
	require.NoError(t, pooled.CloseOn(s1))
}

// TestResidentBlocksPerSMAsksTheDriverOnce: the first question for a block
// size and shared size reaches the driver, the same question again makes
// no driver call and gets the same answer, and a new shared size asks again.
func TestResidentBlocksPerSMAsksTheDriverOnce(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(ords[0])
	require.NoError(t, err)
	defer d.Close()
	k, err := d.Kernel("basic", "rayd_fill_f32")
	require.NoError(t, err)
	c0, _ := driver.CallCounts()
	first, err := k.ResidentBlocksPerSM(launch.Threads(256), 0)
	require.NoError(t, err)
	require.Positive(t, first)
	c1, _ := driver.CallCounts()
	assert.Positive(t, c1-c0, "the first question made no driver call")
	again, err := k.ResidentBlocksPerSM(launch.Dim3{X: 128, Y: 2}, 0)
	require.NoError(t, err)
	c2, _ := driver.CallCounts()
	assert.Equal(t, first, again)
	assert.Zero(t, c2-c1, "the same question asked the driver again")
	withShared, err := k.ResidentBlocksPerSM(launch.Threads(256), 16<<10)
	require.NoError(t, err)
	c3, _ := driver.CallCounts()
	assert.Positive(t, c3-c2, "a new shared size was answered from the cache")
	assert.LessOrEqual(t, withShared, first)
}
