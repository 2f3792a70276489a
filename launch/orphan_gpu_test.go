package launch_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
)

// Closing a device before its buffers frees them: while another Device of
// the same ordinal keeps the primary context, the memory still returns.
func TestGPUDeviceCloseFreesOrphanedBuffers(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	holder, err := launch.Open(ords[0])
	require.NoError(t, err)
	defer holder.Close()
	used := func() int64 {
		require.NoError(t, holder.Synchronize())
		require.NoError(t, holder.TrimPool())
		free, total, err := holder.MemInfo()
		require.NoError(t, err)
		return int64(total) - int64(free)
	}
	warm, err := launch.Open(ords[0])
	require.NoError(t, err)
	require.NoError(t, warm.Close())
	base := used()
	for range 20 {
		d, err := launch.Open(ords[0])
		require.NoError(t, err)
		a, err := launch.Alloc[float32](d, 8<<20)
		require.NoError(t, err)
		s, err := d.NewStream()
		require.NoError(t, err)
		b, err := launch.AllocAsync[float32](s, 8<<20)
		require.NoError(t, err)
		require.NoError(t, s.Synchronize())
		require.NoError(t, s.Close())
		require.NoError(t, d.Close()) // before the buffers
		assert.NoError(t, a.Close(), "a buffer freed by its device closes quietly")
		assert.NoError(t, b.Close())
		cur, _ := d.Allocated()
		assert.Zero(t, cur)
	}
	assert.LessOrEqual(t, used()-base, int64(4<<20), "orphaned buffers pinned device memory")
}
