package launch_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
)

// Pinned memory uploads asynchronously: a copy queued after a poisoning
// memset lands in full once its event completes, views read through
// ViewAs see the same bits, a second round with new contents (written only
// after the first copy's event) replaces them, and the error paths are
// typed. Closing the device before the Pinned frees it; Close is then a
// no-op.
func TestGPUPinnedUploadRoundTrip(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(ords[0])
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			_ = d.Close()
		}
	}()
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Close()
	r := rand.New(rand.NewPCG(5, 6))
	n := 1<<16 + 37
	p, err := launch.AllocPinned[uint32](d, n)
	require.NoError(t, err)
	require.Equal(t, n, p.Len())
	b, err := launch.Alloc[uint32](d, n+5)
	require.NoError(t, err)
	defer b.Close()
	ev, err := d.NewEvent(false)
	require.NoError(t, err)
	defer ev.Close()
	got := make([]uint32, n+5)
	for round := range 2 {
		if round > 0 {
			require.NoError(t, ev.Synchronize())
		}
		want := p.Slice()
		for i := range want {
			want[i] = r.Uint32()
		}
		require.NoError(t, b.Memset32(s, poison))
		require.NoError(t, b.UploadPinned(s, p))
		require.NoError(t, ev.Record(s))
		require.NoError(t, b.Download(s, got))
		require.Equal(t, want, got[:n], "round %d", round)
		require.Equal(t, []uint32{poison, poison, poison, poison, poison}, got[n:], "past the copy")
		v, err := launch.ViewAs[float32](b, 7, 3)
		require.NoError(t, err)
		f := make([]float32, 3)
		require.NoError(t, v.Download(s, f))
		for k := range f {
			require.Equal(t, want[7+k], math.Float32bits(f[k]))
		}
	}

	big, err := launch.AllocPinned[uint32](d, n+6)
	require.NoError(t, err)
	require.ErrorIs(t, b.UploadPinned(s, big), launch.ErrLength)
	require.NoError(t, big.Close())
	require.ErrorIs(t, b.UploadPinned(s, big), launch.ErrClosed)
	require.NoError(t, big.Close(), "idempotent")
	_, err = launch.AllocPinned[uint32](d, -1)
	require.Error(t, err)

	require.NoError(t, s.Synchronize())
	require.NoError(t, b.Close())
	require.NoError(t, ev.Close())
	require.NoError(t, s.Close())
	require.NoError(t, d.Close())
	closed = true
	require.NoError(t, p.Close(), "freed with its device")
	require.Nil(t, p.Slice())
}
