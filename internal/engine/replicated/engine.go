// Package replicated is the engine of a replicated multi-device scene: one
// replica of the scene per position of the device list (package replica on
// CUDA devices, or any other shard.Replica source such as the simulated
// devices of tests), driven by a shard.Layer. Every operation runs on the
// replicas: per_ray operations (intersect, trace_reflections, visible, the
// visibility variants, the nearest-edge queries and the rows of the
// backward passes) are sharded by rows and placed in row order, bitwise
// the single-device result; the RF operations are lane- or row-sharded and
// summed on the master in device order; mutations are broadcast. An
// operation the replicas cannot run fails with an error matching
// engine.ErrUnsupported; nothing falls back to the host.
//
// A broadcast that fails poisons the layer; Rebuild rebuilds every replica
// from the scene's current tables and re-applies the edge mask.
//
// Place in the package graph: replicated → engine, engine/cuda (record
// helpers), shard, replica, accel, launch, calibrate, geom, edge, rf.
package replicated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// Source supplies the devices of a replicated engine: their topology and a
// builder of one replica per slot from the scene's meshes.
type Source interface {
	Topology() shard.Topology
	Builder(master int, meshes []geom.Mesh) shard.Builder
}

// Config describes a replicated engine.
type Config struct {
	// Devices is the device list, master first.
	Devices []int
	// Options are the layer's knobs.
	Options shard.Options
	// Source supplies the replicas; nil is the CUDA devices of this
	// machine.
	Source Source
	// Tables are the scene's tables (the façade keeps them current).
	Tables *geom.Tables
}

// Engine runs a scene through a replicated layer.
type Engine struct {
	l      *shard.Layer
	src    Source
	owned  io.Closer       // the CUDA source the engine opened, or nil
	cuda   *replica.Source // the CUDA source, or nil on other sources
	dev    *launch.Device  // the master's device on CUDA sources
	tables *geom.Tables
	mask   []bool // the last edge mask broadcast (re-applied by Rebuild)
	slots  chan *masterSlot
	inst   *instances // the instance layer of a scene with instances, or nil
}

var _ engine.Engine = (*Engine)(nil)

// cudaSource serves the layer from this machine's CUDA devices with the
// layer's own warm-up and peer-access choices.
type cudaSource struct {
	src  *replica.Source
	opts replica.Options
}

func (c *cudaSource) Topology() shard.Topology { return c.src.Topology() }

func (c *cudaSource) Builder(master int, meshes []geom.Mesh) shard.Builder {
	return c.src.BuilderWith(master, meshes, c.opts)
}

// Plan validates a replicated scene request against src's topology without
// building anything; a nil layer means the plain single-device path.
func Plan(devices []int, src Source, o shard.Options) (*shard.Layer, error) {
	return shard.Plan(devices, src.Topology(), o)
}

// DefaultSource is the CUDA devices of this machine, with the layer's
// warm-up and peer-access options.
func DefaultSource(o shard.Options) Source {
	opts := replica.Options{SkipWarmUp: o.SkipWarmUp, AllowNoPeerAccess: o.AllowNoPeerAccess}
	return &cudaSource{src: replica.NewSource(opts), opts: opts}
}

// New plans the layer and builds the replicas. It returns a nil engine and
// no error when the request is the plain single-device path (one device
// and no chunking knob).
func New(ctx context.Context, cfg Config) (*Engine, error) {
	src := cfg.Source
	owned := src == nil
	if owned {
		src = DefaultSource(cfg.Options)
	}
	e := &Engine{src: src, tables: cfg.Tables, slots: make(chan *masterSlot, slotCount)}
	if cs, ok := src.(*cudaSource); ok {
		e.cuda = cs.src
		if owned {
			e.owned = cs.src
		}
	}
	l, err := Plan(cfg.Devices, src, cfg.Options)
	if err != nil || l == nil {
		return nil, errors.Join(err, e.closeSource())
	}
	e.l = l
	if err := l.Build(ctx, src.Builder(l.Master(), cfg.Tables.Meshes())); err != nil {
		return nil, errors.Join(err, l.Close(), e.closeSource())
	}
	if e.cuda != nil {
		if e.dev, err = e.cuda.Device(l.Master()); err != nil {
			return nil, errors.Join(err, l.Close(), e.closeSource())
		}
		l.SetCallCounter(launch.DriverCalls)
	}
	return e, nil
}

// view is an engine over the replicas of e under another layer (a
// calibration view); it owns neither source nor replicas.
func (e *Engine) view(l *shard.Layer) *Engine {
	return &Engine{l: l, src: e.src, cuda: e.cuda, dev: e.dev, tables: e.tables, slots: make(chan *masterSlot, slotCount)}
}

func (e *Engine) closeSource() error {
	if e.owned == nil {
		return nil
	}
	return e.owned.Close()
}

// Describe returns "replicated [d0 d1 …]".
func (e *Engine) Describe() string { return fmt.Sprintf("replicated %v", e.l.Devices()) }

// Layer returns the engine's layer.
func (e *Engine) Layer() *shard.Layer { return e.l }

// Refit broadcasts the vertex update and the refit to every replica.
func (e *Engine) Refit(ctx context.Context, mesh int, vertices []float32) error {
	if err := e.l.Broadcast(ctx, shard.UpdateVertices{Mesh: mesh, Vertices: vertices}); err != nil {
		return e.poisonNote(err)
	}
	return e.poisonNote(e.l.Broadcast(ctx, shard.SyncGeometry{}))
}

// SetEdgeMask broadcasts the mask to every replica.
func (e *Engine) SetEdgeMask(ctx context.Context, ed engine.Edges) error {
	mask := slices.Clone(ed.Scene.Mask)
	if err := e.l.Broadcast(ctx, shard.SetEdgeMask{Mask: mask}); err != nil {
		return e.poisonNote(err)
	}
	e.mask = mask
	return nil
}

// Rebuild rebuilds every replica from the scene's current tables (the
// recovery of a poisoned layer) and re-applies the edge mask.
func (e *Engine) Rebuild(ctx context.Context) error {
	if err := e.l.Build(ctx, e.src.Builder(e.l.Master(), e.tables.Meshes())); err != nil {
		return err
	}
	if e.mask != nil {
		return e.l.Broadcast(ctx, shard.SetEdgeMask{Mask: slices.Clone(e.mask)})
	}
	return nil
}

// ErrPoisoned matches the refusal of a replicated scene whose replicas may
// disagree after a failed mutation; Scene.Rebuild recovers it.
var ErrPoisoned = shard.ErrPoisoned

// poisonNote adds the recovery call to an error that poisoned the layer.
func (e *Engine) poisonNote(err error) error {
	if err == nil || !errors.Is(err, shard.ErrPoisoned) {
		return err
	}
	return fmt.Errorf("%w (the replicas may disagree: call Scene.Rebuild to rebuild them from the scene's geometry)", err)
}

// Close closes the layer, the master slots and the source it opened.
func (e *Engine) Close() error {
	err := errors.Join(e.closeInstances(), e.l.Close())
	close(e.slots)
	for m := range e.slots {
		m.close()
	}
	return errors.Join(err, e.closeSource())
}
