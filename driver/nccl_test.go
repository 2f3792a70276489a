package driver

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gpumark"
)

func TestCommInitRankArgumentLayout(t *testing.T) {
	var id NCCLUniqueID
	for i := range id {
		id[i] = byte(i)
	}
	args := commInitRankArgs(0xc0ffee, 4, 3, &id)
	require.Len(t, args, 22) // 3 integers, 3 fillers, 16 words
	assert.Equal(t, []uintptr{0xc0ffee, 4, 3, 0, 0, 0}, args[:6])
	for w := 0; w < 16; w++ {
		assert.Equal(t, uintptr(binary.LittleEndian.Uint64(id[8*w:])), args[6+w], "word %d", w)
	}
	assert.Equal(t, uintptr(0x0706050403020100), args[6])
}

// TestNCCLWithoutTheLibraryIsALoadError re-runs itself with a library path
// that cannot exist, so it checks the no-NCCL behaviour on every machine.
func TestNCCLWithoutTheLibraryIsALoadError(t *testing.T) {
	if os.Getenv("RAYD_TEST_NO_NCCL") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNCCLWithoutTheLibraryIsALoadError$", "-test.v")
		cmd.Env = append(os.Environ(), "RAYD_TEST_NO_NCCL=1", "RAYD_LIBNCCL=/nonexistent/libnccl.so.2")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestNCCLWithoutTheLibraryIsALoadError")
		return
	}
	require.Error(t, LoadNCCL())
	_, err := NCCLGetUniqueID()
	assert.ErrorIs(t, err, ErrNoDriver)
	_, err = NCCLCommInitRank(2, NCCLUniqueID{}, 0)
	assert.ErrorIs(t, err, ErrNoDriver)
	assert.ErrorIs(t, NCCLGroupStart(), ErrNoDriver)
	assert.ErrorIs(t, NCCLComm{}.Abort(), ErrNoDriver)
	_, err = NCCLComm{}.AsyncError()
	assert.ErrorIs(t, err, ErrNoDriver)
	assert.Equal(t, "ncclRemoteError", NCCLErrorString(NCCLRemoteError))
}

func TestNCCLErrorNames(t *testing.T) {
	err := ncclCheck("ncclAllReduce", Result(NCCLRemoteError))
	var ne *NCCLError
	require.True(t, errors.As(err, &ne))
	assert.Equal(t, NCCLRemoteError, ne.Code)
	assert.Contains(t, err.Error(), "ncclAllReduce: ncclRemoteError")
	assert.NoError(t, ncclCheck("ncclAllReduce", 0))
	_, err = NCCLCommInitAll(nil)
	assert.Error(t, err)
}

// needTwoGPUsAndNCCL gates a test on two devices and libnccl, as
// internal/gputest.MustHaveDevices does (which this package's tests cannot
// import): with one device the test is deferred to a 2-GPU machine; without
// a driver or device it skips, or fails when RAYD_REQUIRE_GPU=1; with two
// devices and no libnccl it fails under RAYD_REQUIRE_GPU=1.
func needTwoGPUsAndNCCL(t *testing.T) {
	t.Helper()
	strict := os.Getenv("RAYD_REQUIRE_GPU") == "1"
	n, err := DeviceCount()
	reason := ""
	switch {
	case err != nil:
		reason = "no CUDA driver: " + err.Error()
	case n == 0:
		reason = "no CUDA device visible"
	case n < 2:
		gpumark.Mark(t, 2, n, gpumark.Deferred)
		t.Skip(gpumark.DeferReason(2, n))
	}
	if reason != "" {
		gpumark.Mark(t, 2, 0, gpumark.Unavailable)
		if strict {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	gpumark.Mark(t, 2, n, gpumark.Ran)
	if err := LoadNCCL(); err != nil {
		if strict {
			t.Fatal("no libnccl: " + err.Error())
		}
		t.Skip("no libnccl: " + err.Error())
	}
}

// TestNCCLTwoRanksOneThread initialises two ranks from one thread (grouped,
// each with its device's context current) and sums 1 and 2 on both GPUs.
func TestNCCLTwoRanksOneThread(t *testing.T) {
	needTwoGPUsAndNCCL(t)
	t.Setenv("NCCL_NVLS_ENABLE", "0")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ctxs [2]Context
	var streams [2]Stream
	var bufs [2]DevicePtr
	for r := range 2 {
		d, err := DeviceGet(r)
		require.NoError(t, err)
		ctxs[r], err = PrimaryContext(d)
		require.NoError(t, err)
		defer ctxs[r].Release()
		require.NoError(t, ctxs[r].SetCurrent())
		streams[r], err = NewStream(r, StreamNonBlocking)
		require.NoError(t, err)
		defer streams[r].Destroy()
		bufs[r], err = MemAlloc(r, 4)
		require.NoError(t, err)
		defer MemFree(r, bufs[r])
		require.NoError(t, CopyHtoD(r, bufs[r], []float32{float32(r + 1)}))
	}
	id, err := NCCLGetUniqueID()
	require.NoError(t, err)
	var comms [2]NCCLComm
	require.NoError(t, NCCLGroupStart())
	for r := range 2 {
		require.NoError(t, ctxs[r].SetCurrent())
		comms[r], err = NCCLCommInitRank(2, id, r)
		require.NoError(t, err)
	}
	require.NoError(t, NCCLGroupEnd())
	require.NoError(t, NCCLGroupStart())
	for r := range 2 {
		require.NoError(t, ctxs[r].SetCurrent())
		require.NoError(t, comms[r].AllReduce(bufs[r], bufs[r], 1, NCCLFloat32, NCCLSum, streams[r]))
	}
	require.NoError(t, NCCLGroupEnd())
	for r := range 2 {
		require.NoError(t, ctxs[r].SetCurrent())
		require.NoError(t, streams[r].Synchronize())
		code, err := comms[r].AsyncError()
		require.NoError(t, err)
		assert.Equal(t, NCCLSuccess, code)
		got := make([]float32, 1)
		require.NoError(t, CopyDtoH(r, got, bufs[r]))
		assert.Equal(t, float32(3), got[0], "rank %d", r)
	}
	// Destroy each rank from its own thread, as one process per GPU would.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if errs[r] = ctxs[r].SetCurrent(); errs[r] == nil {
				errs[r] = comms[r].Destroy()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("ncclCommDestroy did not return within 60 s")
	}
	assert.NoError(t, errors.Join(errs...))
	assert.NotEmpty(t, NCCLErrorString(NCCLRemoteError))
}
