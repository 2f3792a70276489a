package rayd_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// simScene is a replicated scene of a grid and a sphere on n simulated
// devices.
func simScene(t *testing.T, n int, o rayd.MultiDeviceOptions) *rayd.Scene {
	t.Helper()
	meshes := []rayd.Mesh{testscene.Grid(16, 2, 0), testscene.Sphere([3]float32{0, 0, 0.4}, 0.3, 12, 6)}
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithDevices(rfOrdinals(n)...),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: n})), rayd.WithMultiDevice(o))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestCalibrateStoresWeightsUnderTheOperation(t *testing.T) {
	ctx := context.Background()
	s := simScene(t, 2, rayd.MultiDeviceOptions{})
	before, err := s.DeviceWeights("trace_reflections:2")
	require.NoError(t, err)
	for _, b := range []int{0, 2} {
		o := rayd.CalibrateOptions{Options: calibrate.Options{Rows: 2048, MaxBounces: b, Repeats: 2, MaxRounds: 4}}
		rec, err := s.Calibrate(ctx, o)
		require.NoError(t, err)
		assert.Equal(t, calibrate.DefaultOperation(b), rec.Operation)
		assert.Equal(t, []int{0, 1}, rec.Devices)
		assert.Len(t, rec.Seconds, 2)
		for _, sec := range rec.Seconds {
			assert.Greater(t, sec, 0.0, "every device was timed")
		}
		require.NotEmpty(t, rec.Candidates, "the ladder ran")
		assert.Equal(t, []float64{rec.ThroughputWeights[0], 0}, rec.Candidates[len(rec.Candidates)-1], "last rung is the master alone")
		got, err := s.DeviceWeights(rec.Operation)
		require.NoError(t, err)
		assert.Equal(t, rec.Weights, got, "stored under %s", rec.Operation)
		assert.Same(t, rec, s.LastCalibration())
		assert.True(t, strings.HasPrefix(rec.String(), rec.Operation+" probe, 2048 rows"), rec.String())
	}
	after, err := s.DeviceWeights("trace_reflections:2")
	require.NoError(t, err)
	assert.NotEqual(t, before, after, "trace_reflections:2 got its own split")
	w, err := s.DeviceWeights("visible")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 1}, w, "other operations keep their split")
}

func TestCalibrateRefusals(t *testing.T) {
	ctx := context.Background()
	cpu := cpuScene(t, unitTriangle())
	_, err := cpu.Calibrate(ctx, rayd.CalibrateOptions{})
	assert.ErrorIs(t, err, calibrate.ErrNeedsDevices)

	s := simScene(t, 2, rayd.MultiDeviceOptions{})
	probe := s.NewProbe(func(ctx context.Context, on *rayd.Scene) error { return nil })
	_, err = s.Calibrate(ctx, rayd.CalibrateOptions{Probe: probe})
	assert.ErrorIs(t, err, calibrate.ErrProbeNeedsOperation)
	_, err = s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Operation: "visible"}})
	assert.ErrorIs(t, err, calibrate.ErrRelabelledProbe)
	_, err = s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Repeats: -1}})
	assert.ErrorIs(t, err, calibrate.ErrInvalidArgument)
	assert.Nil(t, s.LastCalibration(), "nothing stored after refusals")

	other := simScene(t, 2, rayd.MultiDeviceOptions{})
	_, err = s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Operation: "visible"},
		Probe: other.NewProbe(func(context.Context, *rayd.Scene) error { return nil })})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)

	boom := errors.New("probe exploded")
	_, err = s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Operation: "visible"},
		Probe: s.NewProbe(func(context.Context, *rayd.Scene) error { return boom })})
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, err, calibrate.ErrProbe)
	require.NoError(t, s.Close())
	_, err = s.Calibrate(ctx, rayd.CalibrateOptions{})
	assert.ErrorIs(t, err, rayd.ErrClosed)
}

// A custom probe sees a view per device in stage 1 (everything on that
// device) and a view at the rung's weights in stage 2; its weights land
// under its own operation key.
func TestCalibrateCustomProbe(t *testing.T) {
	ctx := context.Background()
	s := simScene(t, 2, rayd.MultiDeviceOptions{})
	r := rand.New(rand.NewPCG(5, 6))
	n := 4096
	o, d := make([]float32, 3*n), make([]float32, 3*n)
	for i := range o {
		o[i], d[i] = float32(r.Float64()*2-1), float32(r.NormFloat64())
	}
	calls := 0
	probe := s.NewProbe(func(ctx context.Context, on *rayd.Scene) error {
		calls++
		assert.NotSame(t, s, on, "the probe runs on a calibration view")
		_, err := on.Visible(ctx, o, d, nil)
		return err
	})
	rec, err := s.Calibrate(ctx, rayd.CalibrateOptions{Probe: probe,
		Options: calibrate.Options{Operation: "visible", Rows: n, Repeats: 2, MaxProbeTime: time.Second}})
	require.NoError(t, err)
	assert.Positive(t, calls)
	assert.Equal(t, "visible", rec.Operation)
	got, err := s.DeviceWeights("visible")
	require.NoError(t, err)
	assert.Equal(t, rec.Weights, got)
	_, err = probe.TimeReplica(ctx, 0)
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument, "outside Calibrate a scene probe refuses")
}

// Calibrate a replicated scene (here on two simulated devices; on GPUs the
// same call times CUDA replicas with events), then read the decision.
func ExampleScene_Calibrate() {
	ctx := context.Background()
	meshes := []rayd.Mesh{testscene.Grid(16, 2, 0)}
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rec, err := s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Rows: 4096, MaxBounces: 1}})
	if err != nil {
		panic(err)
	}
	w, _ := s.DeviceWeights(rec.Operation)
	fmt.Println(rec.Operation, len(rec.Candidates) > 0, len(w))
	// Output: trace_reflections:1 true 2
}
