package calibrate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

// untouchable is a probe that fails the test if it is ever run.
func untouchable(t *testing.T) calibrate.Probe {
	return calibrate.ProbeFuncs{
		Replica: func(context.Context, int) (time.Duration, error) {
			t.Error("a refused calibration ran the probe")
			return time.Millisecond, nil
		},
		Dispatch: func(context.Context, []float64) (time.Duration, error) {
			t.Error("a refused calibration ran the probe")
			return time.Millisecond, nil
		},
	}
}

// §13 rows 58 to 63: every argument error is typed, matches its row's
// sentinel (and ErrInvalidArgument for rows 59-63), carries RayD's anchor
// phrase, runs no probe and changes nothing.
func TestArgumentErrors(t *testing.T) {
	l := newLayer(2)
	one := newLayer(1)  // a one-device chunked layer
	var none *fakeLayer // a single-device scene has no layer
	custom := untouchable(t)
	builtin := calibrate.BuiltIn(custom)
	for _, tc := range []struct {
		name   string
		layer  calibrate.Layer
		probe  calibrate.Probe
		o      calibrate.Options
		kind   error
		phrase string
	}{
		{"58 no layer", nil, custom, calibrate.Options{Rows: -1}, calibrate.ErrNeedsDevices, "more than one device"},
		{"58 nil layer", none, custom, calibrate.Options{}, calibrate.ErrNeedsDevices, "more than one device"},
		{"58 one device", one, custom, calibrate.Options{}, calibrate.ErrNeedsDevices, "devices=[0]"},
		{"59 custom probe without operation", l, custom, calibrate.Options{Rows: -1}, calibrate.ErrProbeNeedsOperation, "required with a custom probe"},
		{"60 built-in probe relabelled", l, builtin, calibrate.Options{Operation: "visible"}, calibrate.ErrRelabelledProbe, "Pass a custom probe"},
		{"60 built-in reflections probe relabelled", l, builtin, calibrate.Options{Operation: "intersect_full", MaxBounces: 4}, calibrate.ErrRelabelledProbe, "trace_reflections:4"},
		{"61 blank operation", l, custom, calibrate.Options{Operation: " \t"}, calibrate.ErrEmptyOperation, "non-empty string"},
		{"62 rows", l, custom, calibrate.Options{Operation: "visible", Rows: -1}, calibrate.ErrNotPositive, "must be at least 1"},
		{"62 repeats", l, custom, calibrate.Options{Operation: "visible", Repeats: -3}, calibrate.ErrNotPositive, "Repeats: must be at least 1"},
		{"63 warm-up", l, custom, calibrate.Options{Operation: "visible", WarmUp: -1}, calibrate.ErrNegative, "must not be negative"},
		{"bounces", l, builtin, calibrate.Options{MaxBounces: -1}, calibrate.ErrNegative, "MaxBounces"},
		{"no probe", l, nil, calibrate.Options{Operation: "visible"}, calibrate.ErrInvalidArgument, "needs a probe"},
		{"mode", l, custom, calibrate.Options{Operation: "visible", Mode: "fast"}, calibrate.ErrInvalidArgument, "unknown mode"},
		{"confidence", l, custom, calibrate.Options{Operation: "visible", Confidence: 1}, calibrate.ErrInvalidArgument, "(0.5, 1)"},
		{"rounds", l, custom, calibrate.Options{Operation: "visible", MaxRounds: -1}, calibrate.ErrNotPositive, "MaxRounds"},
		{"probe time", l, custom, calibrate.Options{Operation: "visible", MaxProbeTime: -time.Second}, calibrate.ErrNegative, "MaxProbeTime"},
		{"contention", l, custom, calibrate.Options{Operation: "visible", ContentionTolerance: -0.1}, calibrate.ErrNegative, "ContentionTolerance"},
		{"identities", l, custom, calibrate.Options{Operation: "visible", Identities: []string{"A"}}, calibrate.ErrInvalidArgument, "1 entries but 2 devices"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := calibrate.Calibrate(t.Context(), tc.layer, tc.probe, tc.o)
			require.Nil(t, rec)
			require.ErrorIs(t, err, tc.kind)
			require.ErrorContains(t, err, tc.phrase)
			if tc.kind != calibrate.ErrNeedsDevices {
				require.ErrorIs(t, err, calibrate.ErrInvalidArgument)
				var ae *calibrate.ArgumentError
				require.ErrorAs(t, err, &ae)
			}
			require.Empty(t, l.stores, "nothing changes")
		})
	}
}

// The built-in probe may be stored under its own operation, named or not.
func TestTheBuiltInProbeMayNameItsOwnOperation(t *testing.T) {
	for _, o := range []calibrate.Options{{}, {Operation: "intersect_full"}, {MaxBounces: 2, Operation: "trace_reflections:2"}, {MaxBounces: 2}} {
		l := newLayer(2)
		rec, err := calibrate.Calibrate(t.Context(), l, calibrate.BuiltIn(computeIntersect()), o)
		require.NoError(t, err)
		require.Equal(t, calibrate.DefaultOperation(o.MaxBounces), rec.Operation)
		require.Equal(t, calibrate.DefaultRows, rec.Rows)
		require.Equal(t, []string{rec.Operation}, l.stores)
	}
}

// §13 row 64: a probe that measures no time on any device.
func TestNoTimeOnAnyDevice(t *testing.T) {
	l := newLayer(2)
	zero := calibrate.ProbeFuncs{
		Replica:  func(context.Context, int) (time.Duration, error) { return 0, nil },
		Dispatch: func(context.Context, []float64) (time.Duration, error) { return 0, nil },
	}
	_, err := calibrate.Calibrate(t.Context(), l, zero, calibrate.Options{Operation: "visible"})
	require.ErrorIs(t, err, calibrate.ErrNoTime)
	require.ErrorContains(t, err, "measured no time on any device")
	require.Empty(t, l.stores)
}

// A device without timing gets no rate and no weight; the other carries on.
func TestADeviceWithoutTimingGetsNoWeight(t *testing.T) {
	l := newLayer(2)
	m := computeIntersect()
	p := calibrate.ProbeFuncs{
		Replica: func(ctx context.Context, d int) (time.Duration, error) {
			if d == 1 {
				return -time.Millisecond, nil
			}
			return m.TimeReplica(ctx, d)
		},
		Dispatch: m.TimeDispatch,
	}
	rec, err := calibrate.Calibrate(t.Context(), l, p, calibrate.Options{Operation: "visible"})
	require.NoError(t, err)
	require.Equal(t, []float64{2, 0}, rec.ThroughputWeights)
	require.Equal(t, [][]float64{{2, 0}}, rec.Candidates)
	require.Equal(t, []float64{2, 0}, rec.Weights)
	require.Contains(t, rec.String(), "  cuda:1  (no timing)  weight 0.0000")
}

// Probe failures are *ProbeError, unwrap to the probe's error and change
// nothing; a cancelled context stops between runs; a poisoned layer is
// refused with its own error; a refused store is returned.
func TestFailures(t *testing.T) {
	m := computeIntersect()
	for _, tc := range []struct {
		name  string
		probe calibrate.Probe
		stage string
	}{
		{"throughput", calibrate.ProbeFuncs{
			Replica:  func(_ context.Context, d int) (time.Duration, error) { return 0, boom },
			Dispatch: m.TimeDispatch}, "cuda:0 (throughput stage)"},
		{"refine", calibrate.ProbeFuncs{
			Replica:  m.TimeReplica,
			Dispatch: func(context.Context, []float64) (time.Duration, error) { return 0, boom }}, "at weights [1.0000, 1.0000]"},
	} {
		l := newLayer(2)
		_, err := calibrate.Calibrate(t.Context(), l, tc.probe, calibrate.Options{Operation: "visible"})
		require.ErrorIs(t, err, calibrate.ErrProbe, tc.name)
		require.ErrorIs(t, err, boom, tc.name)
		require.ErrorContains(t, err, tc.stage)
		var pe *calibrate.ProbeError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "visible", pe.Operation)
		require.Empty(t, l.stores)
	}

	l := newLayer(2)
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	p := calibrate.ProbeFuncs{
		Replica: func(ctx context.Context, d int) (time.Duration, error) {
			if calls++; calls == 3 {
				cancel()
			}
			return m.TimeReplica(ctx, d)
		},
		Dispatch: m.TimeDispatch,
	}
	_, err := calibrate.Calibrate(ctx, l, p, calibrate.Options{Operation: "visible"})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 3, calls)
	require.Empty(t, l.stores)

	l.poison = boom
	_, err = calibrate.Calibrate(t.Context(), l, m, calibrate.Options{Operation: "visible"})
	require.ErrorIs(t, err, boom)

	_, err = calibrate.Calibrate(t.Context(), refusing{newLayer(2)}, m, calibrate.Options{Operation: "visible"})
	require.ErrorIs(t, err, boom)
}

// refusing is a layer whose store fails.
type refusing struct{ *fakeLayer }

func (refusing) SetOperationWeights(string, []float64) error { return boom }

var boom = errors.New("boom")
