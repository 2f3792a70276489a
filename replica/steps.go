package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// Scatter implements shard.Replica. Host task rows are uploaded straight to
// this device on its in stream (the caller's data is on the host, so a
// detour through the master would only double the traffic on the master's
// link). Device task rows are views of the caller's buffers on the master
// and, for a remote, copied on the master's scatter stream for this remote
// (a peer copy, or a device-to-device copy for a remote on the master's
// own device) into memory allocated on this device's in stream. The returned
// event orders the launch after the copy (and, for device tasks, after the
// work queued on the task's Stream).
func (r *Replica) Scatter(t shard.Task, lo, hi int) (shard.Payload, shard.Event, error) {
	if rj, ok := rfJobOf(t); ok {
		return r.scatterRF(rj, lo, hi)
	}
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, nil, err
	}
	if lo < 0 || hi < lo {
		return nil, nil, fmt.Errorf("replica: scatter of rows [%d,%d)", lo, hi)
	}
	if j.device {
		return r.scatterDevice(j, lo, hi)
	}
	return r.scatterHost(j, lo, hi)
}

func (r *Replica) scatterHost(j *job, lo, hi int) (shard.Payload, shard.Event, error) {
	if err := j.host.check(j.in, hi); err != nil {
		return nil, nil, err
	}
	if err := r.checkVertices(j); err != nil {
		return nil, nil, err
	}
	s := r.in
	cols, err := allocCols(r.staging, s, j.in, hi-lo)
	if err != nil {
		return nil, nil, err
	}
	p := &payload{rep: r, dev: r.dev.d, cols: cols, owned: true, lo: lo, hi: hi, last: s}
	fail := func(err error) (shard.Payload, shard.Event, error) {
		p.Release()
		return nil, nil, err
	}
	if err := j.host.upload(s, j.in, cols, lo, hi); err != nil {
		return fail(err)
	}
	ev, err := r.record(s)
	if err != nil {
		return fail(err)
	}
	r.stats.uploaded.Add(cols.bytes())
	return p, ev, nil
}

// checkVertices checks the vertex count a backward pass was given against
// the replica's scene (its vertex partial holds 3 values per vertex).
func (r *Replica) checkVertices(j *job) error {
	if j.vertices < 0 {
		return nil
	}
	if nv := r.tables.NumVertices(); j.vertices != nv {
		return &geom.ArgumentError{Field: "Vertices", Reason: fmt.Sprintf("%d, the scene has %d", j.vertices, nv)}
	}
	return nil
}

// callerEvent records an event on the device task's stream, or returns nil
// when it has none (its inputs are then complete before the call).
func (r *Replica) callerEvent(j *job) (shard.Event, error) {
	if j.stream == nil {
		return nil, nil
	}
	if j.stream.Device() != r.master.d {
		return nil, fmt.Errorf("replica: the task's Stream is on %v, the master is %v: %w",
			j.stream.Device(), r.master.d, launch.ErrWrongDevice)
	}
	ev, err := r.master.events.record(j.stream)
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// onMaster checks that a device task's buffers live on the master device
// (opened by the Source: buffers of another launch.Device value do not
// qualify).
func (r *Replica) onMaster(l layout, c columns, what string) error {
	d, err := c.device(l)
	if err != nil {
		return err
	}
	if d != nil && d != r.master.d {
		return fmt.Errorf("replica: the task's %s are on %v, not the master's %v (allocate them on Source.Device): %w",
			what, d, r.master.d, launch.ErrWrongDevice)
	}
	return nil
}

// callerRows returns rows [lo, hi) of a device task's inputs (views of the
// caller's buffers, which must be the master's) and the event after which
// they are ready on the caller's stream.
func (r *Replica) callerRows(j *job, lo, hi int) (columns, shard.Event, error) {
	if err := r.onMaster(j.in, j.devIn, "inputs"); err != nil {
		return columns{}, nil, err
	}
	src, err := j.devIn.view(j.in, lo, hi)
	if err != nil {
		return columns{}, nil, err
	}
	caller, err := r.callerEvent(j)
	if err != nil {
		return columns{}, nil, err
	}
	return src, caller, nil
}

func (r *Replica) scatterDevice(j *job, lo, hi int) (shard.Payload, shard.Event, error) {
	src, caller, err := r.callerRows(j, lo, hi)
	if err != nil {
		return nil, nil, err
	}
	if r.isMaster {
		return &payload{rep: r, dev: r.dev.d, cols: src, lo: lo, hi: hi}, caller, nil
	}
	dst, err := allocCols(r.staging, r.in, j.in, hi-lo)
	if err != nil {
		return nil, nil, err
	}
	p := &payload{rep: r, dev: r.dev.d, cols: dst, owned: true, lo: lo, hi: hi, last: r.in}
	fail := func(err error) (shard.Payload, shard.Event, error) {
		p.Release()
		return nil, nil, err
	}
	allocated, err := r.record(r.in)
	if err != nil {
		return fail(err)
	}
	if err := allocated.enqueueOn(r.scatter); err != nil {
		return fail(err)
	}
	if err := waitOn(r.scatter, caller); err != nil {
		return fail(err)
	}
	copyErr := dst.copyFrom(r.scatter, src)
	copied, err := r.record(r.scatter)
	if err != nil {
		p.owned = false // the copies cannot be ordered: leak rather than free under them
		return nil, nil, errors.Join(copyErr, err)
	}
	p.after = copied // the copy ran on the master: order a free after it
	if copyErr != nil {
		return fail(copyErr)
	}
	r.stats.scattered.Add(dst.bytes())
	return p, copied, nil
}

// Replicate implements shard.Replica for the RF grid_reduce tasks (their
// replicated inputs); per_ray tasks have nothing to replicate.
func (r *Replica) Replicate(t shard.Task) (shard.Payload, shard.Event, error) {
	if rj, ok := rfJobOf(t); ok {
		return r.replicateRF(rj)
	}
	return nil, nil, fmt.Errorf("replica: replicate %T: %w", t, shard.ErrUnsupported)
}

// Fold implements shard.Replica: RF partial grids fold in place on their
// device; per_ray outputs are placed, not folded.
func (r *Replica) Fold(t shard.Task, acc shard.Payload, accReady shard.Event, part shard.Payload, partReady shard.Event) (shard.Payload, shard.Event, error) {
	if rj, ok := rfJobOf(t); ok {
		return r.foldRF(rj, acc, accReady, part, partReady)
	}
	return nil, nil, fmt.Errorf("replica: fold %T: %w", t, shard.ErrUnsupported)
}

// Launch implements shard.Replica: compute (or side) waits on ready and,
// for an edge task, on the build of the replica's edge BVH (built here on
// the first edge task); the outputs are allocated there (on the master, a
// device task writes straight into its Out rows) and the query is queued
// there. The inputs' last use becomes the launch stream, so releasing them
// frees after the launch.
func (r *Replica) Launch(t shard.Task, in shard.Payload, lo, hi int, ready shard.Event) (shard.Payload, shard.Event, error) {
	if rj, ok := rfJobOf(t); ok {
		return r.launchRF(rj, in, lo, hi, ready)
	}
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, nil, err
	}
	p, err := payloadOf(in, r.dev.d)
	if err != nil {
		return nil, nil, err
	}
	if p.lo != lo || p.hi != hi {
		return nil, nil, fmt.Errorf("replica: launch of rows [%d,%d) on inputs of rows [%d,%d)", lo, hi, p.lo, p.hi)
	}
	// An edge task reads the replica's edge BVH, built on its first use.
	k := kernels{bvh: r.bvh}
	if j.edges {
		if k.edges, err = r.edgeBVH(); err != nil {
			return nil, nil, err
		}
	}
	// Alternate the launch stream (see Replica.side); the pick and the
	// launch stay together under launchMu so each stream's counter is
	// reset and used in its stream's order.
	r.launchMu.Lock()
	defer r.launchMu.Unlock()
	s := r.compute
	k.counter = r.counter
	if r.flip {
		s, k.counter = r.side, r.sideCtr
	}
	r.flip = !r.flip
	if err := waitOn(s, ready); err != nil {
		return nil, nil, err
	}
	if p.after != nil {
		if err := p.after.enqueueOn(s); err != nil {
			return nil, nil, err
		}
	}
	if p.path == shard.PathCompact {
		di, ok := t.(*DeviceIntersect)
		if !ok {
			return nil, nil, fmt.Errorf("replica: the compact path runs intersect only, not %T: %w", t, shard.ErrUnsupported)
		}
		out, err := r.launchCompact(di, k, s, p, lo, hi)
		p.used(s)
		if err != nil {
			return nil, nil, fmt.Errorf("replica: %s rows [%d,%d) on cuda:%d: %w", j.key, lo, hi, r.Device(), err)
		}
		return r.launched(out, s, lo, hi)
	}
	out := &payload{rep: r, dev: r.dev.d, lo: lo, hi: hi, last: s, path: p.path}
	if p.path.Direct() {
		// A direct remote writes the caller's rows on the master, where
		// the result stays.
		out.dev = r.master.d
	}
	if j.device && (r.isMaster || p.path.Direct()) {
		if err := r.onMaster(j.out, j.devOut, "outputs"); err != nil {
			return nil, nil, err
		}
		out.cols, err = j.devOut.view(j.out, lo, hi)
	} else {
		out.cols, err = allocCols(r.staging, s, j.out, hi-lo)
		out.owned = true
	}
	if err != nil {
		return nil, nil, err
	}
	err = j.run(k, s, p.cols, out.cols, hi-lo)
	p.used(s)
	if err != nil {
		out.Release()
		return nil, nil, fmt.Errorf("replica: %s rows [%d,%d) on cuda:%d: %w", j.key, lo, hi, r.Device(), err)
	}
	return r.launched(out, s, lo, hi)
}

// launched records the end of a launch of rows [lo, hi) on s, whose output
// is out, and counts it.
func (r *Replica) launched(out *payload, s *launch.Stream, lo, hi int) (shard.Payload, shard.Event, error) {
	ev, err := r.record(s)
	if err != nil {
		out.Release()
		return nil, nil, err
	}
	r.stats.launches.Add(1)
	r.stats.rows.Add(int64(hi - lo))
	return out, ev, nil
}

// Gather implements shard.Replica. On the master it returns out and ready
// unchanged. A remote copies its outputs (row and fixed columns) on its
// gather stream, after ready, into the device task's Out rows or, for a
// host task, into memory allocated on the master's recv stream for this
// remote (a peer copy, or a device-to-device copy on the master's own
// device); the source is then freed on gather and the destination on recv
// once the copy is done.
func (r *Replica) Gather(t shard.Task, out shard.Payload, ready shard.Event) (shard.Payload, shard.Event, error) {
	if rj, ok := rfJobOf(t); ok {
		return r.gatherRF(rj, out, ready)
	}
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	if pp, ok := out.(*payload); ok && pp != nil && pp.path.Direct() {
		if di, ok := t.(*DeviceIntersect); ok && pp.path == shard.PathCompact {
			return r.gatherCompact(di, pp, ready)
		}
		return out, ready, nil // already in the master's memory
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, nil, err
	}
	p, err := payloadOf(out, r.dev.d)
	if err != nil {
		return nil, nil, err
	}
	if r.isMaster {
		return out, ready, nil
	}
	s := r.gather
	dst := &payload{rep: r, dev: r.master.d, lo: p.lo, hi: p.hi, last: r.recv}
	if j.device {
		if err := r.onMaster(j.out, j.devOut, "outputs"); err != nil {
			return nil, nil, err
		}
		dst.cols, err = j.devOut.view(j.out, p.lo, p.hi)
	} else {
		dst.cols, err = allocCols(r.masterStage, r.recv, j.out, p.rows())
		dst.owned = true
	}
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (shard.Payload, shard.Event, error) {
		dst.Release()
		return nil, nil, err
	}
	if dst.owned {
		allocated, err := r.record(r.recv)
		if err != nil {
			return fail(err)
		}
		if err := allocated.enqueueOn(s); err != nil {
			return fail(err)
		}
	}
	if err := waitOn(s, ready); err != nil {
		return fail(err)
	}
	p.used(s) // gather now follows the launch: the source is freed after the copy
	copyErr := dst.cols.copyFrom(s, p.cols)
	gathered, err := r.record(s)
	if err != nil {
		dst.owned = false // the copies cannot be ordered: leak rather than free under them
		return nil, nil, errors.Join(copyErr, err)
	}
	dst.after = gathered // the copy ran on this device: order the free after it
	if copyErr != nil {
		return fail(copyErr)
	}
	r.stats.gathered.Add(dst.cols.bytes())
	return dst, gathered, nil
}

// Result implements shard.Replica (master only). A host task's rows are
// downloaded on the result stream after ready; this is the one place a call
// waits on the host, because the contract asks for a host record. A device
// task's record is a view of its Out rows: the task's Stream waits on ready
// (no host wait), or, without a Stream, the host waits.
func (r *Replica) Result(t shard.Task, p shard.Payload, ready shard.Event) (any, error) {
	if rj, ok := rfJobOf(t); ok {
		return r.resultRF(rj, p, ready)
	}
	if err := r.live(); err != nil {
		return nil, err
	}
	if !r.isMaster {
		return nil, errors.New("replica: Result is called on the master only")
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, err
	}
	pp, err := payloadOf(p, r.dev.d)
	if err != nil {
		return nil, err
	}
	if j.device {
		if j.stream != nil {
			if err := waitOn(j.stream, ready); err != nil {
				return nil, err
			}
			if pp.after != nil {
				if err := pp.after.enqueueOn(j.stream); err != nil {
					return nil, err
				}
			}
		} else {
			if err := hostWait(ready); err != nil {
				return nil, err
			}
			if pp.after != nil {
				if err := pp.after.Wait(); err != nil {
					return nil, err
				}
			}
		}
		return j.view(pp.cols), nil
	}
	r.resultMu.Lock()
	defer r.resultMu.Unlock()
	s := r.result
	if err := waitOn(s, ready); err != nil {
		return nil, err
	}
	if pp.after != nil {
		if err := pp.after.enqueueOn(s); err != nil {
			return nil, err
		}
	}
	pp.used(s) // the downloads are the last use: free after them
	rec, err := j.record(s, pp.cols, pp.lo, pp.hi)
	if err != nil {
		return nil, err
	}
	r.stats.downloaded.Add(pp.cols.bytes())
	return rec, nil
}
