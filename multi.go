package rayd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// MultiDeviceOptions are the knobs of a replicated multi-device scene; the
// zero value means the seed's defaults (equal weights, peer access and
// identical devices required, pipelined dispatch with 4 chunks per device,
// floors of 262,144 rows and lanes per remote device). See package shard.
type MultiDeviceOptions = shard.Options

// DispatchRecord and ChunkPlan describe how the last replicated call ran.
type (
	DispatchRecord = shard.DispatchRecord
	ChunkPlan      = shard.ChunkPlan
)

// ReplicaSource supplies the devices of a replicated scene: their topology
// (peer access, identities) and a builder of one replica per device from the
// scene's meshes. The default source is the CUDA devices of this machine;
// tests and experiments can pass simulated devices.
type ReplicaSource interface {
	Topology() shard.Topology
	Builder(master int, meshes []Mesh) shard.Builder
}

// cudaReplicaSource makes the default ReplicaSource, the CUDA devices of
// this machine (multi_cuda.go).
var cudaReplicaSource func(shard.Options) (ReplicaSource, error)

// ErrMultiDeviceUnavailable is returned when a replicated scene is asked for
// and no replica source can serve it.
var ErrMultiDeviceUnavailable = errors.New("rayd: multi-device layer unavailable")

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

// newLayer plans the replicated layer; a nil layer means the plain
// single-device path (on devices[0], if given).
func newLayer(ctx context.Context, cfg *config, meshes []Mesh) (*shard.Layer, ReplicaSource, error) {
	if cfg.devices == nil && cfg.multi == nil {
		return nil, nil, nil
	}
	var opts shard.Options
	if cfg.multi != nil {
		opts = *cfg.multi
	}
	src := cfg.source
	if src == nil {
		if cudaReplicaSource == nil {
			return nil, nil, fmt.Errorf("%w: this build has no CUDA replicas", ErrMultiDeviceUnavailable)
		}
		var err error
		if src, err = cudaReplicaSource(opts); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrMultiDeviceUnavailable, err)
		}
	}
	layer, err := shard.Plan(cfg.devices, src.Topology(), opts)
	if err != nil || layer == nil {
		closeSource(src, cfg.source)
		return nil, nil, err
	}
	if err := layer.Build(ctx, src.Builder(layer.Master(), meshes)); err != nil {
		_ = layer.Close()
		closeSource(src, cfg.source)
		return nil, nil, err
	}
	return layer, src, nil
}

// closeSource closes a source the scene created itself (never the caller's).
func closeSource(src, callers ReplicaSource) {
	if c, ok := src.(io.Closer); ok && src != callers {
		_ = c.Close()
	}
}

// layerEngine runs queries through the replicated layer; src is closed with
// it when the scene created it.
type layerEngine struct {
	l   *shard.Layer
	src io.Closer
	// dev is the master's device on CUDA replicas (the device of the fast
	// paths' buffers); nil on other sources.
	dev *launch.Device
	// topo is the source's topology (calibration plans its views on it).
	topo shard.Topology
	// streams are the master's stream slots the device fast paths use
	// (created on first use, up to streamSlots kept, reused).
	streams chan *masterSlot
}

// masterSlot is a stream of the master with its own persistent-launch
// counter (for a call the layer runs as the single-device call).
type masterSlot struct {
	st      *launch.Stream
	counter *launch.Buffer[uint32]
}

func (m *masterSlot) close() {
	_ = m.st.Close()
	_ = m.counter.Close()
}

// acquireStream takes a master slot for one device fast-path call.
func (e *layerEngine) acquireStream(ctx context.Context) (*masterSlot, error) {
	select {
	case m := <-e.streams:
		return m, nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := e.dev.NewStream()
	if err != nil {
		return nil, err
	}
	c, err := launch.Alloc[uint32](e.dev, 1)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &masterSlot{st: st, counter: c}, nil
}

// releaseStream returns m to the pool (or closes it when the pool is full).
func (e *layerEngine) releaseStream(m *masterSlot) {
	select {
	case e.streams <- m:
	default:
		m.close()
	}
}

func (e *layerEngine) intersect(ctx context.Context, r Rays, flags Flags) (*Hits, error) {
	return shard.RunRows(ctx, e.l, &shard.Intersect{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, Flags: flags})
}

func (e *layerEngine) traceReflections(ctx context.Context, r Rays, b int) (*Reflections, error) {
	return shard.RunRows(ctx, e.l, &shard.TraceReflections{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, Bounces: b})
}

func (e *layerEngine) visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	return shard.RunRows(ctx, e.l, &shard.Visible{Start: start, End: end, Active: active})
}

func (e *layerEngine) refit(ctx context.Context, mesh int, vertices []float32, _ *geom.Tables) error {
	if err := e.l.Broadcast(ctx, shard.UpdateVertices{Mesh: mesh, Vertices: vertices}); err != nil {
		return err
	}
	return e.l.Broadcast(ctx, shard.SyncGeometry{})
}

func (e *layerEngine) close() error {
	err := e.l.Close()
	if e.streams != nil {
		close(e.streams)
		for m := range e.streams {
			m.close()
		}
	}
	if e.src != nil {
		if cerr := e.src.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Devices returns the scene's device ordinals (master first); nil on the CPU
// backend.
func (s *Scene) Devices() []int {
	if s.layer != nil {
		return s.layer.Devices()
	}
	if s.device < 0 {
		return nil
	}
	return []int{s.device}
}

// LastDispatch describes how the last replicated call was dispatched
// (single-device, master, sharded, pipelined, chunked); nil on a scene
// without a multi-device layer or before its first call.
func (s *Scene) LastDispatch() *DispatchRecord {
	if s.layer == nil {
		return nil
	}
	return s.layer.LastDispatch()
}

// LastChunkPlan is the chunk plan of the last chunked or pipelined call.
func (s *Scene) LastChunkPlan() *ChunkPlan {
	if s.layer == nil {
		return nil
	}
	return s.layer.LastChunkPlan()
}

// DeviceWeights returns the split weights the layer uses for operation op
// ("intersect", "trace_reflections:4", ...); [1] on a single-device scene.
func (s *Scene) DeviceWeights(op string) ([]float64, error) {
	if s.layer == nil {
		return []float64{1}, nil
	}
	return s.layer.WeightsFor(op)
}
