package rayd_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/gputest"
)

// WarmUp's refusals happen before any device is touched.
func TestWarmUpValidatesFirst(t *testing.T) {
	ctx := context.Background()
	got, err := rayd.WarmUp(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = rayd.WarmUp(ctx, []int{0}, []string{}...)
	require.NoError(t, err)
	assert.Empty(t, got, "an empty op list does no device work")
	_, err = rayd.WarmUp(ctx, []int{0, 0})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = rayd.WarmUp(ctx, []int{-1})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = rayd.WarmUp(ctx, nil, "visible")
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument, "unknown ops are refused even without devices")
	_, err = rayd.WarmUp(ctx, []int{1 << 20})
	assert.Error(t, err)
}

func TestGPUWarmUp(t *testing.T) {
	devs := gputest.MustHaveDevices(t, 1)
	times, err := rayd.WarmUp(context.Background(), devs)
	require.NoError(t, err)
	require.Len(t, times, len(devs))
	for _, d := range times {
		assert.Positive(t, d)
	}
	t.Logf("warm-up times %v", times)
}
