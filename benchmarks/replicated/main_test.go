package main

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/simdev"
)

// simScenes is the comparison's factory on the CPU: a CPU scene and a
// same-device replicated scene of simulated devices.
func simScenes(ctx context.Context, meshes []rayd.Mesh, o rayd.MultiDeviceOptions) (*rayd.Scene, *rayd.Scene, error) {
	single, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		return nil, nil, err
	}
	o.AllowSameDevice, o.MinRaysPerDevice = true, 1
	repl, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 0), rayd.WithMultiDevice(o),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 1})))
	if err != nil {
		return nil, nil, errJoin(err, single.Close())
	}
	return single, repl, nil
}

func errJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// The acceptance logic itself, on simulated devices: every operation is
// compared, all equal, every offloaded row arrives once.
func TestCompareAllOnSimulatedDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every operation on the CPU reference three times")
	}
	rep := &report{Failures: []string{}}
	require.NoError(t, compareAll(context.Background(), rep, sceneMeshes(24), 2001, 512, simScenes, false))
	require.Empty(t, rep.Failures)
	require.Len(t, rep.Operations, len(ops())+6) // the six edge queries and VJPs again under a mask
	for _, r := range rep.Operations {
		require.True(t, r.BitwiseEqual, r.Op)
		require.NotEmpty(t, r.Fields, r.Op)
		require.Nil(t, r.FirstCPUMismatch, r.Op)
		require.NotZero(t, r.BatchSeed, r.Op)
		require.Equal(t, r.BatchSeed+1, r.CPUBatchSeed, r.Op)
	}
	require.NotEmpty(t, rep.Offload)
	for _, o := range rep.Offload {
		require.True(t, o.Once, o.Op)
		require.Positive(t, o.Chunks, o.Op)
	}
}

// diff names the first differing element of a record, by field and index,
// with both values and their bits; equal records give none, and newBatch
// replays a batch from its seed.
func TestDiffNamesTheFirstDifferingElement(t *testing.T) {
	type rec struct {
		Origins, Directions []float64
		Hits                []int32
		N                   int
	}
	first := func(want, got any) *mismatch {
		_, _, m, err := diff(want, got)
		require.NoError(t, err)
		return m
	}
	a := &rec{Origins: []float64{1, 2, 3}, Directions: []float64{0, 1}, Hits: []int32{4, 5}, N: 2}
	b := &rec{Origins: []float64{1, 2, 3}, Directions: []float64{0, 1}, Hits: []int32{4, 5}, N: 2}
	require.Nil(t, first(a, b))
	b.Directions[0] = math.Copysign(0, -1) // −0: equal as numbers, not bit for bit
	b.Hits[1] = 6
	m := first(a, b)
	require.NotNil(t, m)
	require.Equal(t, mismatch{Field: "Directions", Index: 0, Want: "0 (0x0000000000000000)", Got: "-0 (0x8000000000000000)"}, *m)
	_, n, _, err := diff(a, b)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	b.Directions[0] = 0
	require.Equal(t, mismatch{Field: "Hits", Index: 1, Want: "5", Got: "6"}, *first(a, b))
	b.Hits[1], b.N = 5, 3
	require.Equal(t, mismatch{Field: "N", Index: -1, Want: "2", Got: "3"}, *first(a, b))
	require.Equal(t, mismatch{Field: "values", Index: 2, Want: "3 (0x40400000)", Got: "4 (0x40800000)"},
		*first([]float32{1, 2, 3}, []float32{1, 2, 4}))

	require.Equal(t, newBatch(64, 42), newBatch(64, 42))
	require.NotEqual(t, newBatch(64, 42).o, newBatch(64, 43).o)
}
