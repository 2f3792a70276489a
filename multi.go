package rayd

import (
	"errors"
	"fmt"
	"sync"

	"log/slog"

	"github.com/rayd-go/rayd/internal/engine/replicated"
	"github.com/rayd-go/rayd/shard"
)

// MultiDeviceOptions are the knobs of a replicated multi-device scene; the
// zero value means the seed's defaults (equal weights, peer access and
// identical devices required, pipelined dispatch with 4 chunks per device,
// floors of 262,144 rows and lanes per remote device). See package shard.
// AllowSameDevice admits a device list that repeats a device, for tests and
// diagnosis on one GPU (WithDevices(0, 0)).
type MultiDeviceOptions = shard.Options

// DispatchRecord and ChunkPlan describe how the last replicated call ran.
type (
	DispatchRecord = shard.DispatchRecord
	ChunkPlan      = shard.ChunkPlan
)

// ReplicaSource supplies the devices of a replicated scene: their topology
// (peer access, identities) and a builder of one replica per slot from the
// scene's meshes. The default source is the CUDA devices of this machine;
// tests and experiments can pass simulated devices.
type ReplicaSource interface {
	Topology() shard.Topology
	Builder(master int, meshes []Mesh) shard.Builder
}

var _ replicated.Source = ReplicaSource(nil)

// ErrMultiDeviceUnavailable is returned when a replicated scene is asked for
// and no replica source can serve it (no CUDA device visible, a failed
// topology query); the cause is wrapped.
var ErrMultiDeviceUnavailable = errors.New("rayd: multi-device layer unavailable")

// ErrPoisoned matches the refusal of a replicated scene whose replicas may
// disagree after a failed mutation; Scene.Rebuild recovers it.
var ErrPoisoned = shard.ErrPoisoned

// multiError classifies the failures of building a replicated scene: a
// machine that cannot serve the device list (no driver, no device, a failed
// topology query) matches ErrMultiDeviceUnavailable and
// ErrBackendUnavailable, and the cause.
func multiError(err error) error {
	for _, cause := range []error{shard.ErrNoDevices, shard.ErrTopologyQuery} {
		if errors.Is(err, cause) {
			return fmt.Errorf("%w: %w: %w", ErrMultiDeviceUnavailable, ErrBackendUnavailable, err)
		}
	}
	return err
}

// WithDevices builds the scene on these CUDA devices (the first is the
// master). One device and no chunking knob is the plain single-device scene;
// two or more make a replicated scene whose queries are sharded.
func WithDevices(ordinals ...int) Option {
	return func(c *config) error {
		c.devices = append([]int(nil), ordinals...)
		if c.devices == nil {
			c.devices = []int{}
		}
		return nil
	}
}

// WithMultiDevice sets the multi-device knobs (requires WithDevices).
func WithMultiDevice(o MultiDeviceOptions) Option {
	return func(c *config) error {
		c.multi = &o
		return nil
	}
}

// WithReplicaSource replaces the CUDA devices behind a replicated scene.
func WithReplicaSource(src ReplicaSource) Option {
	return func(c *config) error {
		c.source = src
		return nil
	}
}

// Devices returns the scene's device ordinals (master first); nil on the CPU
// backend.
func (s *Scene) Devices() []int { return s.eng.Devices() }

// LastDispatch describes how the last replicated call was dispatched
// (master, sharded, pipelined, chunked, lane-sharded, …); nil on a scene
// without a multi-device layer or before its first call.
func (s *Scene) LastDispatch() *DispatchRecord { return s.eng.LastDispatch() }

// LastChunkPlan is the chunk plan of the last chunked or pipelined call.
func (s *Scene) LastChunkPlan() *ChunkPlan { return s.eng.LastChunkPlan() }

// DeviceWeights returns the split weights the layer uses for operation op
// ("intersect", "trace_reflections:4", ...); [1] on a single-device scene.
func (s *Scene) DeviceWeights(op string) ([]float64, error) { return s.eng.Weights(op) }

// fallbackOnce makes the CPU-fallback warning once per process.
var fallbackOnce sync.Once

// warnFallback logs, once per process, that BackendAuto found no usable
// CUDA device and runs on the CPU reference.
func warnFallback(l *slog.Logger, reason error) {
	fallbackOnce.Do(func() {
		l.Warn("rayd: no usable CUDA device; falling back to the CPU reference backend (slow); later scenes fall back silently", "reason", reason)
	})
}
