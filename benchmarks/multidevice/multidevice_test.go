package multidevice

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

func TestOptionsDefaultsAndRefusals(t *testing.T) {
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, []string{"light", "compute"}, o.Configs)
	assert.Equal(t, 2, o.Warmup)
	assert.Equal(t, 7, o.Repeat)
	assert.Equal(t, calibrate.DefaultRepeats, o.CalibrationRepeats)
	assert.Equal(t, calibrate.ModeNoiseAware, o.CalibrationMode)
	o, err = Options{NoWarmup: true}.withDefaults()
	require.NoError(t, err)
	assert.Zero(t, o.Warmup)
	for _, bad := range []Options{{Configs: []string{"heavy"}}, {Repeat: -1}, {Rays: -5}} {
		_, err := bad.withDefaults()
		assert.ErrorIs(t, err, ErrInvalidOptions, "%+v", bad)
	}
}

func TestAgreementCountsBitsAndCatchesPoison(t *testing.T) {
	a := []float32{1, 2, float32(math.Inf(1)), 4}
	b := []float32{1, 2, float32(math.Inf(1)), 5}
	got, err := agreement(a, b)
	require.NoError(t, err)
	assert.Equal(t, 0.75, got)
	b[1] = math.Float32frombits(poison)
	_, err = agreement(a, b)
	assert.ErrorIs(t, err, ErrMismatch)
	_, err = agreement(a, b[:2])
	assert.ErrorIs(t, err, ErrMismatch)
	assert.Zero(t, relDeviation([]float64{0, 0}, []float64{1, 2}))
	assert.InDelta(t, 0.1, relDeviation([]float64{10, 10}, []float64{11, 9}), 1e-12)
}

func TestRunCPUValidates(t *testing.T) {
	rec, err := RunCPU(context.Background(), Options{Repeat: 1, NoWarmup: true})
	require.NoError(t, err)
	require.NoError(t, rec.Validate())
	assert.Equal(t, "cpu", rec.Parameters.Backend)
	_, err = RunCPU(context.Background(), Options{Configs: []string{"nope"}})
	assert.True(t, errors.Is(err, ErrInvalidOptions))
}
