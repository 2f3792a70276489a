package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// Options configure the replicas a Source builds.
type Options struct {
	// Accel are the BVH build options, the same on every device. Width 0
	// lets each device choose its node layout (AutoWidth), which agrees
	// across identical devices; query results do not depend on it.
	Accel accel.Options
	// SkipWarmUp skips the warm-up each replica runs at every build (one
	// query of every operation, which loads the query kernels on the
	// device so that the first call does not pay for it). It mirrors
	// shard.Options.SkipWarmUp.
	SkipWarmUp bool
	// AllowNoPeerAccess builds remotes that lack peer access to the master
	// in either direction; their copies still use cuMemcpyPeerAsync, which
	// the driver then stages through the host. It mirrors
	// shard.Options.AllowNoPeerAccess.
	AllowNoPeerAccess bool
}

// device is one opened device of a Source and its event pool.
type device struct {
	d      *launch.Device
	events eventPool
}

// Source supplies the CUDA devices of replicated scenes: it opens each
// device once, on first use (primary context, executor goroutine, module
// cache), keeps it open until Close, and builds replicas on it. Its
// Topology and Builder methods make it the replica source of a replicated
// rayd.Scene. Devices outlive the replicas built on them (a rebuild keeps
// its modules loaded); close the layers, and so their replicas, before the
// Source. A process-wide Source that is never closed is the analogue of
// Torch keeping its primary contexts for the life of the process. Safe for
// concurrent use; several layers may share a Source.
type Source struct {
	opts Options
	topo *Topology

	// calls counts the running calls (and mutations and builds) of every
	// replica of the Source; when it drops to zero every device's event
	// pool takes back the events recorded meanwhile (eventPool).
	callMu sync.Mutex
	calls  int

	mu     sync.Mutex
	devs   map[int]*device
	order  []int // devices in the order they were opened
	reps   []*Replica
	closed bool
}

// NewSource returns a Source whose replicas are built with o. It opens no
// device yet.
func NewSource(o Options) *Source {
	return &Source{opts: o, topo: NewTopology(), devs: map[int]*device{}}
}

// Topology returns the machine's topology (shard.Plan's argument).
func (s *Source) Topology() shard.Topology { return s.topo }

// Device returns the opened device of ordinal ord, opening it on first
// use. Buffers and streams of device tasks must belong to the master's.
func (s *Source) Device(ord int) (*launch.Device, error) {
	dv, err := s.device(ord)
	if err != nil {
		return nil, err
	}
	return dv.d, nil
}

func (s *Source) device(ord int) (*device, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("replica: source %w", launch.ErrClosed)
	}
	if dv := s.devs[ord]; dv != nil {
		return dv, nil
	}
	d, err := launch.Open(ord)
	if err != nil {
		return nil, fmt.Errorf("replica: opening cuda:%d: %w", ord, err)
	}
	dv := &device{d: d, events: eventPool{d: d}}
	s.devs[ord] = dv
	s.order = append(s.order, ord)
	return dv, nil
}

// enter opens a call: events recorded until the matching exit stay valid.
func (s *Source) enter() {
	if s == nil {
		return
	}
	s.callMu.Lock()
	s.calls++
	s.callMu.Unlock()
}

// exit closes a call opened by enter; the last one out recycles the events
// of every device (no running call can name them any more).
func (s *Source) exit() {
	if s == nil {
		return
	}
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if s.calls--; s.calls > 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, dv := range s.devs {
		dv.events.recycle()
	}
}

// EventsCreated returns the number of CUDA events the Source's pools have
// created so far (a steady-state call creates none).
func (s *Source) EventsCreated() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, dv := range s.devs {
		n += dv.events.created.Load()
	}
	return n
}

// Builder returns the shard.Builder of a layer whose master is device
// master: for each slot it copies meshes into that replica's own global
// tables and builds their BVH on the slot's device, so every replica
// answers bit for bit like the others. Slot 0 is the master; every other
// slot is a remote, also one on the master's device. meshes is read at every build; pass the current
// vertices.
func (s *Source) Builder(master int, meshes []geom.Mesh) shard.Builder {
	return s.BuilderWith(master, meshes, s.opts)
}

// BuilderWith is Builder with options o instead of the Source's (for
// instance a layer's shard.Options.SkipWarmUp and AllowNoPeerAccess); the
// devices are still the Source's.
func (s *Source) BuilderWith(master int, meshes []geom.Mesh, o Options) shard.Builder {
	g := &group{}
	return func(ctx context.Context, slot shard.Slot) (shard.Replica, error) {
		r, err := s.build(ctx, master, slot, meshes, o)
		if err != nil {
			return nil, err
		}
		r.group = g
		if slot.Master() {
			g.setMaster(r)
		}
		return r, nil
	}
}

// Build builds the replica of meshes on device ord for a layer whose master
// is device master: the master's replica when ord is master, a remote
// otherwise (a remote on the master's own device, for a layer that names
// it twice, comes from Builder, which is given the slot). For a remote on
// another device it first enables peer access between the master and ord
// in both directions (or, with AllowNoPeerAccess and no access, goes on
// without it). It returns once the BVH is built and, unless SkipWarmUp, the
// warm-up has run.
func (s *Source) Build(ctx context.Context, master, ord int, meshes []geom.Mesh) (*Replica, error) {
	idx := 1
	if ord == master {
		idx = 0
	}
	return s.build(ctx, master, shard.Slot{Index: idx, Device: ord}, meshes, s.opts)
}

func (s *Source) build(ctx context.Context, master int, slot shard.Slot, meshes []geom.Mesh, o Options) (_ *Replica, err error) {
	ord := slot.Device
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mdv, err := s.device(master)
	if err != nil {
		return nil, err
	}
	dv, err := s.device(ord)
	if err != nil {
		return nil, err
	}
	s.enter()
	defer s.exit()
	r := &Replica{src: s, dev: dv, master: mdv, isMaster: slot.Master()}
	if slot.Master() && dv != mdv {
		return nil, fmt.Errorf("replica: slot 0 is on cuda:%d, not the master cuda:%d", ord, master)
	}
	defer func() {
		if err != nil {
			_ = r.Close()
		}
	}()
	switch {
	case r.isMaster:
	case dv == mdv:
		r.direct = true // a remote on the master's own device
	default:
		if r.direct, err = peer(mdv.d, dv.d, o.AllowNoPeerAccess); err != nil {
			return nil, err
		}
	}
	if r.tables, err = geom.BuildTables(meshes); err != nil {
		return nil, err
	}
	if err := r.openStreams(); err != nil {
		return nil, err
	}
	r.staging = &stagingPool{d: dv.d}
	r.masterStage = r.staging
	if dv != mdv {
		r.masterStage = &stagingPool{d: mdv.d}
	}
	if r.counter, err = launch.Alloc[uint32](dv.d, 1); err != nil {
		return nil, err
	}
	if r.sideCtr, err = launch.Alloc[uint32](dv.d, 1); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.bvh, err = accel.BuildWith(r.main, r.tables, o.Accel); err != nil {
		return nil, fmt.Errorf("replica: building the BVH on cuda:%d: %w", ord, err)
	}
	if err := r.applyMeshMasks(); err != nil {
		return nil, err
	}
	if err := r.beforeLaunches(); err != nil {
		return nil, err
	}
	if !o.SkipWarmUp {
		if err := r.warmUp(); err != nil {
			return nil, fmt.Errorf("replica: warm-up on cuda:%d: %w", ord, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("replica: build on cuda:%d: source %w", ord, launch.ErrClosed)
	}
	s.reps = append(s.reps, r)
	return r, nil
}

// peer enables access between the master and a remote in both directions
// and reports whether the remote can then work in the master's memory
// (peer-direct): access enabled, and the master's stream-ordered pool
// opened to the remote. Without access it fails, or with allowNone goes on
// without it (copies only).
func peer(master, remote *launch.Device, allowNone bool) (direct bool, err error) {
	for _, p := range [][2]int{{master.Ordinal(), remote.Ordinal()}, {remote.Ordinal(), master.Ordinal()}} {
		ok, err := launch.CanAccessPeer(p[0], p[1])
		if err != nil {
			return false, err
		}
		if !ok {
			if allowNone {
				return false, nil
			}
			return false, fmt.Errorf("replica: cuda:%d cannot access cuda:%d (set AllowNoPeerAccess to stage copies through the host): %w",
				p[0], p[1], shard.ErrNoPeerAccess)
		}
	}
	if err := launch.EnablePeerAccess(master, remote); err != nil {
		return false, fmt.Errorf("replica: enabling peer access between %v and %v: %w", master, remote, err)
	}
	// Without pool access the remote could not touch the caller's pool
	// buffers; copies still work, so the remote only loses the direct path.
	return launch.GrantPoolAccess(master, remote) == nil, nil
}

// openStreams creates the replica's streams (see Replica).
func (r *Replica) openStreams() error {
	mine := []**launch.Stream{&r.main, &r.compute, &r.side, &r.in, &r.gather}
	var onMaster []**launch.Stream
	if r.isMaster {
		onMaster = []**launch.Stream{&r.result}
	} else {
		onMaster = []**launch.Stream{&r.scatter, &r.recv}
	}
	for _, set := range []struct {
		d       *launch.Device
		streams []**launch.Stream
	}{{r.dev.d, mine}, {r.master.d, onMaster}} {
		for _, s := range set.streams {
			var err error
			if *s, err = set.d.NewStream(); err != nil {
				return err
			}
		}
	}
	return nil
}

// warmUp runs one row of every query of the triangle BVH (intersect,
// trace_reflections, visible, the segment blockers and the intersect VJP)
// on compute and waits for it. The edge kernels load with the edge BVH, at
// the first edge task.
func (r *Replica) warmUp() (err error) {
	s := r.compute
	k := kernels{bvh: r.bvh, counter: r.counter}
	o, d := []float32{0, 0, -1}, []float32{0, 0, 1}
	seg := &geom.SegmentBatch{Rows: 1, PerRow: 1, Start: o, End: d, Active: []bool{true}, RowOK: []bool{true}}
	tasks := []shard.Task{
		&shard.Intersect{O: o, D: d, Flags: geom.FlagsAll},
		&shard.TraceReflections{O: o, D: d, Bounces: 1},
		&shard.Visible{Start: o, End: d},
		shard.EdgeVisibilityTask(seg),
		&shard.IntersectVJP{O: o, D: d, Prim: []int32{-1}, G: geom.IntersectCotangents{T: []float32{1}},
			Vertices: r.tables.NumVertices()},
	}
	var held []columns
	defer func() {
		errs := []error{err}
		for _, c := range held {
			errs = append(errs, c.closeOn(s))
		}
		err = errors.Join(errs...)
	}()
	for _, t := range tasks {
		j, err := jobOf(t)
		if err != nil {
			return err
		}
		in, err := allocCols(r.staging, s, j.in, 1)
		if err != nil {
			return err
		}
		held = append(held, in)
		if err := j.host.upload(s, j.in, in, 0, 1); err != nil {
			return err
		}
		out, err := allocCols(r.staging, s, j.out, 1)
		if err != nil {
			return err
		}
		held = append(held, out)
		if err := j.run(k, s, in, out, 1); err != nil {
			return fmt.Errorf("%s: %w", j.key, err)
		}
	}
	return s.Synchronize()
}

// forget drops a closed replica from the source's list.
func (s *Source) forget(r *Replica) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reps = slices.DeleteFunc(s.reps, func(x *Replica) bool { return x == r })
}

// Close closes every replica still open, then the devices. Idempotent.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	reps := slices.Clone(s.reps)
	s.mu.Unlock()
	var errs []error
	for _, r := range reps {
		errs = append(errs, r.Close())
	}
	for _, ord := range s.order {
		dv := s.devs[ord]
		errs = append(errs, dv.events.close(), dv.d.Close())
	}
	return errors.Join(errs...)
}
