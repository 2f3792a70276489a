package main

import (
	"context"
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
	}
	require.NotEmpty(t, rep.Offload)
	for _, o := range rep.Offload {
		require.True(t, o.Once, o.Op)
		require.Positive(t, o.Chunks, o.Op)
	}
}
