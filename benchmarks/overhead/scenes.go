package main

import (
	"context"
	"errors"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/shard"
)

// weights is the split of the replicated scenes: half the rows each.
var weights = []float64{0.5, 0.5}

// pair is the two scenes of a row on one GPU: the single-device CUDA scene
// and the replicated scene of two replicas on the same device.
type pair struct {
	single, repl *rayd.Scene
}

// newPair builds both scenes of meshes on device ordinal; the replicated
// one with weights [0.5, 0.5], same-device replicas allowed, the layer's
// default floors and the given transfer choice.
func newPair(ctx context.Context, meshes []rayd.Mesh, ordinal int, transfer shard.Transfer) (*pair, error) {
	single, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ordinal))
	if err != nil {
		return nil, err
	}
	repl, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(ordinal, ordinal),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{AllowSameDevice: true, Weights: weights, Transfer: transfer}))
	if err != nil {
		return nil, errors.Join(err, single.Close())
	}
	return &pair{single: single, repl: repl}, nil
}

func (p *pair) close() error { return errors.Join(p.repl.Close(), p.single.Close()) }

// counted runs fn and returns the driver calls and context binds made
// meanwhile (driver.CallCounts before and after): the call's own, or an
// upper bound when another goroutine used the driver at the same time.
func counted(fn func() error) (calls, error) {
	c0, b0 := driver.CallCounts()
	err := fn()
	c1, b1 := driver.CallCounts()
	return calls{DriverCalls: c1 - c0, ContextBinds: b1 - b0}, err
}

// dispatched copies the replicated scene's last dispatch record into r:
// mode, transfer path, resolved weights, and the layer's driver calls.
func dispatched(r *row, s *rayd.Scene) {
	d := s.LastDispatch()
	if d == nil {
		return
	}
	r.Dispatch, r.Path, r.Weights = string(d.Mode), string(d.Path), d.Weights
	r.DriverCalls, r.ContextBinds = d.DriverCalls, d.ContextBinds
}
