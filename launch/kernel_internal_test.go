package launch

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/ptx"
)

// fakeKernel builds a Kernel for an embedded entry point without a GPU, so
// argument validation and packing are tested everywhere.
func fakeKernel(t *testing.T, d *Device, module, entry string) *Kernel {
	t.Helper()
	m, err := ptx.Load(module)
	require.NoError(t, err)
	e, ok := m.Record.Entry(entry)
	require.True(t, ok)
	k := &Kernel{d: d, name: module + "." + entry, entry: e, args: driver.NewArgs()}
	t.Cleanup(k.args.Free)
	return k
}

func packAll(k *Kernel, args ...any) error {
	k.args.Reset()
	for i, a := range args {
		if err := k.pack(i, a); err != nil {
			return err
		}
	}
	return nil
}

func TestPackValidatesAgainstManifest(t *testing.T) {
	d := &Device{ordinal: 0}
	other := &Device{ordinal: 1}
	k := fakeKernel(t, d, "basic", "rayd_axpy_f32")
	y := &Buffer[float32]{d: d, ptr: 0x1000, n: 4, owner: true}
	x := &Buffer[float32]{d: d, ptr: 0x2000, n: 4, owner: true}

	require.NoError(t, packAll(k, y, x, float32(2.5), uint32(4)))
	assert.Equal(t, uint64(0x1000), k.args.Slots()[0])
	assert.Equal(t, uint64(0x2000), k.args.Slots()[1])
	assert.Equal(t, uint64(math.Float32bits(2.5)), k.args.Slots()[2])
	assert.Equal(t, uint64(4), k.args.Slots()[3])

	// int is accepted for a 32-bit parameter when it fits, Null for a pointer.
	require.NoError(t, packAll(k, y, Null, float32(1), 7))

	cases := []struct {
		name string
		args []any
		want error
	}{
		{"float64 for f32", []any{y, x, 2.5, uint32(4)}, ErrArgument},
		{"uint64 for pointer", []any{uint64(0x1000), x, float32(1), uint32(4)}, ErrArgument},
		{"buffer for u32", []any{y, x, float32(1), x}, ErrArgument},
		{"int out of range", []any{y, x, float32(1), 1 << 40}, ErrArgument},
		{"buffer of another device", []any{y, &Buffer[float32]{d: other, ptr: 0x3000, n: 4}, float32(1), uint32(4)}, ErrWrongDevice},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := packAll(k, c.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
		})
	}
	var ae *ArgError
	err := packAll(k, y, x, 2.5, uint32(4))
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, 2, ae.Index)
	assert.Equal(t, "a", ae.Param)
	assert.Contains(t, err.Error(), "basic.rayd_axpy_f32: argument 2 (a): want f32, got float64")

	closed := &Buffer[float32]{d: d, ptr: 0x4000, n: 1}
	closed.closed.Store(true)
	assert.ErrorIs(t, packAll(k, closed, x, float32(1), uint32(1)), ErrClosed)
}

func TestLaunchRejectsWrongCountAndStream(t *testing.T) {
	d := &Device{ordinal: 0}
	k := fakeKernel(t, d, "basic", "rayd_fill_f32")
	s := &Stream{d: d}
	err := k.Launch(s, Blocks(1, 1), Threads(1), 0, Null)
	assert.ErrorIs(t, err, ErrArgument)
	assert.Contains(t, err.Error(), "3 arguments expected, got 1")
	err = k.Launch(&Stream{d: &Device{ordinal: 1}}, Blocks(1, 1), Threads(1), 0, Null, uint32(1), float32(0))
	assert.ErrorIs(t, err, ErrWrongDevice)
}

func TestBufferChecksWithoutGPU(t *testing.T) {
	d := &Device{ordinal: 0}
	s := &Stream{d: d}
	b := &Buffer[int32]{d: d, ptr: 0x1000, n: 2}
	assert.ErrorIs(t, b.Upload(s, make([]int32, 3)), ErrLength)
	assert.ErrorIs(t, b.Download(s, make([]int32, 3)), ErrLength)
	assert.ErrorIs(t, b.Upload(&Stream{d: &Device{ordinal: 1}}, nil), ErrWrongDevice)
	v, err := b.View(1, 1)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x1004), v.Addr())
	_, err = b.View(1, 2)
	assert.ErrorIs(t, err, ErrLength)
	_, err = b.View(-1, 1)
	assert.ErrorIs(t, err, ErrLength)
	assert.Equal(t, Dim3{X: 3, Y: 1, Z: 1}, Blocks(513, 256))
	assert.Equal(t, Dim3{X: 1, Y: 1, Z: 1}, Blocks(0, 256))
}

// TestResidentBlocksPerSMAnswersFromItsCache: a question asked before
// (threads per block, whatever the block's shape, and shared bytes) is
// answered from the kernel's cache without the driver; a closed device is
// refused first.
func TestResidentBlocksPerSMAnswersFromItsCache(t *testing.T) {
	d := &Device{ordinal: 0}
	k := fakeKernel(t, d, "basic", "rayd_fill_f32")
	k.occ = map[occupancyKey]int{{threads: 128, shared: 0}: 7, {threads: 128, shared: 4096}: 3}
	n, err := k.ResidentBlocksPerSM(Threads(128), 0)
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	n, err = k.ResidentBlocksPerSM(Dim3{X: 64, Y: 2}, 4096)
	require.NoError(t, err)
	assert.Equal(t, 3, n, "64×2 threads ask what 128 do")
	d.closed.Store(true)
	_, err = k.ResidentBlocksPerSM(Threads(128), 0)
	assert.ErrorIs(t, err, ErrClosed)
}
