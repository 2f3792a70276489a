package replica

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// Replica is one device's copy of the scene: a BVH built from its own copy
// of the meshes' global tables (and, from the first edge task on, an edge
// BVH), and the streams of the multi-device executor, created once at
// build and reused by every call. It implements shard.Replica for the
// per_ray tasks of package shard (Intersect, TraceReflections, Visible, the
// nearest-edge queries, the visibility variants and the backward passes),
// for the RF tasks, and for this package's device-resident tasks
// (DeviceIntersect, DeviceReflections, DeviceVisible). Its methods are safe
// for concurrent use.
//
// Streams (all non-blocking): on its own device, main (builds, refits, the
// edge mask and the exit edges: the replica's "current" stream), compute
// and side (launches), in (host uploads) and gather (copies of results
// toward the master); on the master device, result (the master's downloads
// of host results) for the master, and for a remote scatter (copies of the
// caller's device inputs to it) and recv (stream-ordered allocation of its
// gathered results). A remote may live on the master's own device (a layer
// that names a device twice): it keeps its own streams, structures and
// counters, and its copies to and from the master are device-to-device
// copies instead of peer copies.
type Replica struct {
	src      *Source
	dev      *device // this replica's device
	master   *device // the master's device (dev on the master)
	isMaster bool
	// geomReady is recorded on main after every build, refit and mask
	// change (beforeLaunches): launches on the replica's own streams wait
	// on it there, and Enter hands it to callers launching elsewhere.
	// Owned by the replica, destroyed at Close.
	geomReady *launch.Event

	// lane is the state of the resident grid_reduce RF calls (rf_lanes.go),
	// created by the first one and freed at Close.
	laneMu sync.Mutex
	lane   *laneState

	// group holds the replicas one Builder built (one layer's), so that a
	// remote can find its master's structures (nil for Source.Build).
	group *group
	// direct is set on a remote that can address the master's memory (its
	// own device, or peer access and pool access granted): device tasks
	// then run peer-direct (Route).
	direct bool

	main, compute, in, gather *launch.Stream
	// side is a second launch stream: per_ray launches alternate between
	// compute and side, so the next chunk's kernel fills the SMs that the
	// tail of the previous one leaves idle. Every edge compute has, side
	// has too (entry, master entry, exit).
	side          *launch.Stream
	result        *launch.Stream // master only
	scatter, recv *launch.Stream // remotes only, on the master

	// staging holds the staging blocks of the copy path on this device, and
	// masterStage those on the master (a remote's gathered results; staging
	// itself on the master's device).
	staging, masterStage *stagingPool

	counter  *launch.Buffer[uint32] // persistent-launch counter of compute
	sideCtr  *launch.Buffer[uint32] // persistent-launch counter of side
	flip     bool                   // the next per_ray launch goes to side (under launchMu)
	launchMu sync.Mutex             // a launch and its counter reset stay together
	resultMu sync.Mutex             // one host download sequence at a time

	mu     sync.Mutex // guards tables, pending, mask and the edge state
	tables *geom.Tables
	bvh    *accel.BVH
	// pending are the vertex updates staged since the last SyncGeometry;
	// tables hold the synced geometry (the one every structure reflects).
	pending []shard.UpdateVertices
	mask    []bool
	edge    edgeState

	version atomic.Uint64
	closed  atomic.Bool

	errMu    sync.Mutex
	asyncErr error

	stats struct {
		launches, rows, uploaded, scattered, gathered, downloaded atomic.Int64
	}
}

// The interfaces this package implements.
var (
	_ shard.Replica  = (*Replica)(nil)
	_ shard.Topology = (*Topology)(nil)
	_ shard.Payload  = (*payload)(nil)
	_ shard.Event    = (*event)(nil)

	_ shard.RowTask[accel.Hits]            = (*DeviceIntersect)(nil)
	_ shard.RowTask[accel.Reflections]     = (*DeviceReflections)(nil)
	_ shard.RowTask[*launch.Buffer[uint8]] = (*DeviceVisible)(nil)
)

// Stats counts the work of one replica since it was built.
type Stats struct {
	// Launches is the number of query launches (empty launches included)
	// and Rows the rows they covered.
	Launches, Rows int64
	// Uploaded is the bytes copied from the host to this device (host
	// task inputs).
	Uploaded int64
	// Scattered is the bytes peer-copied from the master to this device
	// (device task inputs); Gathered the bytes peer-copied from this
	// device to the master (results of a remote).
	Scattered, Gathered int64
	// Downloaded is the bytes the master copied to the host (host results).
	Downloaded int64
	// StagingBytes is the device memory the replica's staging pools hold
	// for reuse (free blocks, on its device and the master's), and
	// StagingInUse the blocks handed out to chunks still in flight (0
	// between calls).
	StagingBytes int64
	StagingInUse int
}

// Stats returns the replica's counters.
func (r *Replica) Stats() Stats {
	s := &r.stats
	st := Stats{Launches: s.launches.Load(), Rows: s.rows.Load(), Uploaded: s.uploaded.Load(),
		Scattered: s.scattered.Load(), Gathered: s.gathered.Load(), Downloaded: s.downloaded.Load()}
	for _, p := range r.pools() {
		b, n := p.held()
		st.StagingBytes += b
		st.StagingInUse += n
	}
	return st
}

// pools are the replica's distinct staging pools.
func (r *Replica) pools() []*stagingPool {
	switch {
	case r.staging == nil:
		return nil
	case r.masterStage == nil || r.masterStage == r.staging:
		return []*stagingPool{r.staging}
	}
	return []*stagingPool{r.staging, r.masterStage}
}

// Device implements shard.Replica: the device ordinal.
func (r *Replica) Device() int { return r.dev.d.Ordinal() }

// Version implements shard.Replica: the number of mutations applied.
func (r *Replica) Version() uint64 { return r.version.Load() }

// Master reports whether the replica lives on the master device.
func (r *Replica) Master() bool { return r.isMaster }

// LaunchDevice returns the replica's opened device.
func (r *Replica) LaunchDevice() *launch.Device { return r.dev.d }

// BVH returns the replica's acceleration structure (for inspection; it must
// not be mutated or closed).
func (r *Replica) BVH() *accel.BVH { return r.bvh }

// EdgeMask returns the last mask set by a shard.SetEdgeMask mutation.
func (r *Replica) EdgeMask() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.mask)
}

// note records an asynchronous failure for the next Exit.
func (r *Replica) note(err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	r.asyncErr = errors.Join(r.asyncErr, err)
}

func (r *Replica) takeErr() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	err := r.asyncErr
	r.asyncErr = nil
	return err
}

func (r *Replica) live() error {
	if r.closed.Load() {
		return fmt.Errorf("replica: cuda:%d: %w", r.Device(), launch.ErrClosed)
	}
	return nil
}

// record records an event on s, a stream of this replica's device or of the
// master's.
func (r *Replica) record(s *launch.Stream) (*event, error) {
	switch s.Device() {
	case r.dev.d:
		return r.dev.events.record(s)
	case r.master.d:
		return r.master.events.record(s)
	}
	return nil, fmt.Errorf("replica: stream on %v is on neither cuda:%d nor the master: %w",
		s.Device(), r.Device(), launch.ErrWrongDevice)
}

// Enter implements shard.Replica: it opens the call on this replica's
// Source (the events the call records stay valid until every running call
// has exited), records nothing and returns the event of the replica's
// latest geometry work on main, for a caller that launches on a stream of
// its own (the engine's single-device call on the master waits on it). The ordering a call needs is set up
// elsewhere, once: Apply makes compute and side wait on every mutation it
// issues on main, and a launch that reads the edge BVH is ordered after its
// build (edgeBVH); a device task's launches wait on the caller's stream.
func (r *Replica) Enter(shard.Event) (shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, err
	}
	r.src.enter()
	if r.geomReady == nil {
		return nil, nil
	}
	return &event{e: r.geomReady}, nil
}

// Exit implements shard.Replica: it closes the call opened by Enter and
// returns the failures of stream-ordered frees recorded since the last
// Exit. Later mutations order themselves after the call's launches (Apply).
func (r *Replica) Exit() error {
	r.src.exit()
	return r.takeErr()
}

// launchStreams are the streams whose kernels read the replica's geometry.
func (r *Replica) launchStreams() []*launch.Stream { return []*launch.Stream{r.compute, r.side} }

// afterLaunches makes main wait for every launch queued so far, so that a
// mutation issued on main next cannot change geometry a launch still
// reads. r.mu is held; the layer holds its replicas exclusively.
func (r *Replica) afterLaunches() error {
	for _, s := range r.launchStreams() {
		done, err := r.record(s)
		if err == nil {
			err = done.enqueueOn(r.main)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// beforeLaunches makes every later launch wait for the work queued on main
// so far (a build, refit or mask). r.mu is held.
func (r *Replica) beforeLaunches() error {
	if r.geomReady == nil {
		var err error
		if r.geomReady, err = r.dev.d.NewEvent(false); err != nil {
			return err
		}
	}
	if err := r.geomReady.Record(r.main); err != nil {
		return err
	}
	for _, s := range r.launchStreams() {
		if err := s.Wait(r.geomReady); err != nil {
			return err
		}
	}
	return nil
}

// Apply implements shard.Replica. UpdateVertices is validated against the
// replica's host tables and staged; SyncGeometry writes the staged vertices
// into the tables and refits the BVH (and the edge BVH, once built) from
// them on main (uploading the vertices, then the refit kernels), after
// every query already issued (the exit edges) and before every later one
// (the entry edges); SetEdgeMask records the mask, checks its length
// against the edge table and, once the edge BVH is built, installs it there
// on main. Every successful mutation advances the version.
func (r *Replica) Apply(m shard.Mutation) error {
	if err := r.live(); err != nil {
		return err
	}
	r.src.enter()
	defer r.src.exit()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m := m.(type) {
	case shard.UpdateVertices:
		if err := r.stage(m); err != nil {
			return err
		}
	case shard.SyncGeometry:
		if err := r.sync(); err != nil {
			return err
		}
	case shard.SetEdgeMask:
		if err := r.setEdgeMask(m.Mask); err != nil {
			return err
		}
	case shard.SetMeshMask:
		if err := r.setMeshMask(m); err != nil {
			return err
		}
	default:
		return fmt.Errorf("replica: mutation %T: %w", m, shard.ErrUnsupported)
	}
	r.version.Add(1)
	return nil
}

// stage validates a vertex update against the tables (the checks and
// errors of geom.Tables.UpdateVertices) and queues a copy of it for the
// next sync; the tables keep the synced vertices. r.mu is held.
func (r *Replica) stage(m shard.UpdateVertices) error {
	t := r.tables
	var old []float32
	off := 0
	if m.Mesh >= 0 && m.Mesh < t.NumMeshes() {
		off = 3 * int(t.VertexOffset[m.Mesh])
		old = slices.Clone(t.Vertices[off : off+3*t.MeshVertexCount(m.Mesh)])
	}
	if err := t.UpdateVertices(m.Mesh, m.Vertices); err != nil {
		return err
	}
	copy(t.Vertices[off:], old)
	r.pending = append(r.pending, shard.UpdateVertices{Mesh: m.Mesh, Vertices: slices.Clone(m.Vertices)})
	return nil
}

// sync writes the staged updates into the tables and refits the BVH and
// the edge BVH on main. r.mu is held.
func (r *Replica) sync() error {
	if len(r.pending) == 0 {
		return nil
	}
	for _, u := range r.pending {
		if err := r.tables.UpdateVertices(u.Mesh, u.Vertices); err != nil {
			return err
		}
	}
	r.pending = nil
	if err := r.afterLaunches(); err != nil {
		return err
	}
	if err := r.bvh.Refit(r.main, r.tables); err != nil {
		return fmt.Errorf("replica: refit on cuda:%d: %w", r.Device(), err)
	}
	if err := r.refitEdges(); err != nil {
		return err
	}
	return r.beforeLaunches()
}

// Close implements shard.Replica: it waits for the replica's streams, then
// frees the BVH and the edge BVH and destroys the streams. Idempotent.
func (r *Replica) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	streams := []*launch.Stream{r.compute, r.side, r.in, r.gather, r.result, r.scatter, r.recv, r.main}
	var errs []error
	for _, s := range streams {
		if s != nil {
			errs = append(errs, s.Synchronize())
		}
	}
	if r.bvh != nil {
		errs = append(errs, r.bvh.Close())
	}
	errs = append(errs, r.closeEdges(), r.closeLanes())
	if r.geomReady != nil {
		errs = append(errs, r.geomReady.Close())
	}
	for _, p := range r.pools() {
		errs = append(errs, p.close())
	}
	errs = append(errs, r.counter.Close(), r.sideCtr.Close())
	for _, s := range streams {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	errs = append(errs, r.takeErr())
	r.src.forget(r)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("replica: closing cuda:%d: %w", r.Device(), err)
	}
	return nil
}
