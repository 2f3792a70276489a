package shard

import (
	"context"
	"fmt"
)

// LaneTask is a grid_reduce task whose merged result has type R.
type LaneTask[R any] interface {
	Task
	// Lanes validates the inputs and returns the size of the lane space and
	// the caller's window (count < 0: every lane from offset on).
	Lanes() (total, offset, count int, err error)
}

// RunLanes executes a grid_reduce task on the layer (spec §4.3, §4.4,
// §7.1): it plans the lane windows (PlanLanes) and records the plan, then
// replicates the task's whole inputs to every device with a window before
// any launch, issues the chunks round-robin (each launch receives its global
// lane range [lo, hi), never a re-seeded or shrunk lane space), folds each
// device's chunks into that device's partial in ascending lane order,
// gathers the partials to the master and sums them there in device order
// (the first partial is the accumulator). Replicas that keep the call
// resident on their devices (ResidentLanes) run the same plan through that
// interface instead. Cancellation of ctx is honoured at chunk boundaries
// and wraps ctx.Err(); Options.Offload is ignored.
func RunLanes[R any](ctx context.Context, l *Layer, t LaneTask[R]) (R, error) {
	var zero R
	total, offset, count, err := t.Lanes()
	if err != nil {
		return zero, err
	}
	op := t.Op()
	calls := l.startCount()
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return zero, err
	}
	s, err := l.PlanLanes(op, total, offset, count)
	if err != nil {
		return zero, err
	}
	defer l.counted(l.record(s), calls)
	if res, ok, err := runResident[R](ctx, l, reps, s, t); ok {
		return res, err
	}
	r := &laneRun[R]{call: l.newCall(op, reps), t: t, s: s}
	res, err := r.run(ctx)
	return res, r.exit(err)
}

type laneRun[R any] struct {
	*call
	t        LaneTask[R]
	s        *Schedule
	held     []Payload
	inputs   map[int]Payload // by replica index
	inputEv  map[int]Event
	partial  map[int]Payload
	partEv   map[int]Event
	order    []int // replica indices in layer order
	released bool
}

func (r *laneRun[R]) run(ctx context.Context) (res R, err error) {
	defer r.release()
	if _, err := r.enter(0); err != nil {
		return res, err
	}
	r.inputs, r.inputEv = map[int]Payload{}, map[int]Event{}
	r.partial, r.partEv = map[int]Payload{}, map[int]Event{}
	for _, sh := range r.s.Dispatch.Shards {
		if _, ok := r.inputs[sh.Replica]; ok {
			continue
		}
		rep, err := r.enter(sh.Replica)
		if err != nil {
			return res, err
		}
		in, ev, err := rep.Replicate(r.t)
		if err != nil {
			return res, r.fail(rep, "replicate", sh.Start, sh.Stop, err)
		}
		r.inputs[sh.Replica], r.inputEv[sh.Replica] = in, ev
		r.held = append(r.held, in)
		r.order = append(r.order, sh.Replica)
	}
	for i, c := range r.s.Chunks {
		if err := cancelled(ctx, r.op.Key, i, len(r.s.Chunks)); err != nil {
			return res, err
		}
		rep := r.reps[c.Replica]
		out, ev, err := rep.Launch(r.t, r.inputs[c.Replica], c.Start, c.Stop, r.inputEv[c.Replica])
		if err != nil {
			return res, r.fail(rep, "launch", c.Start, c.Stop, err)
		}
		acc, aev, err := rep.Fold(r.t, r.partial[c.Replica], r.partEv[c.Replica], out, ev)
		if err != nil {
			out.Release()
			return res, r.fail(rep, "fold", c.Start, c.Stop, err)
		}
		if acc != out {
			out.Release()
		}
		if r.partial[c.Replica] == nil {
			r.held = append(r.held, acc)
		}
		r.partial[c.Replica], r.partEv[c.Replica] = acc, aev
	}
	if err := cancelled(ctx, r.op.Key, len(r.s.Chunks), len(r.s.Chunks)); err != nil {
		return res, err
	}
	var total Payload
	var tev Event
	for _, d := range r.order { // replica (device) order: the merge order is fixed
		rep := r.reps[d]
		g, gev, err := rep.Gather(r.t, r.partial[d], r.partEv[d])
		if err != nil {
			return res, r.fail(rep, "gather", 0, 0, err)
		}
		if g != r.partial[d] {
			r.held = append(r.held, g)
		}
		acc, aev, err := r.master.Fold(r.t, total, tev, g, gev)
		if err != nil {
			return res, r.fail(r.master, "fold", 0, 0, err)
		}
		if total == nil {
			r.held = append(r.held, acc)
		}
		total, tev = acc, aev
	}
	v, err := r.master.Result(r.t, total, tev)
	if err != nil {
		return res, r.fail(r.master, "result", 0, 0, err)
	}
	rec, ok := v.(R)
	if !ok {
		return res, r.fail(r.master, "result", 0, 0, fmt.Errorf("result is %T, want %T", v, rec))
	}
	return rec, nil
}

// release frees every payload the call held (stream-ordered). Payloads
// appear once per role; Release is idempotent, so a payload that served as
// both a partial and the accumulator is safe.
func (r *laneRun[R]) release() {
	if r.released {
		return
	}
	r.released = true
	for _, p := range r.held {
		if p != nil {
			p.Release()
		}
	}
}

// LanesOnMaster plans a grid_reduce task and reports whether every lane
// runs on the master. When they do, it records that dispatch (LastDispatch,
// LastChunkPlan) and returns the master replica, so that the caller can run
// the single-device call it is (RayD's "dispatched as the single-device
// call") without the layer's replicate, fold and gather steps; ok false
// means run RunLanes. The caller must keep the replicas' geometry unchanged
// for the duration of its call, as a layer call would.
func LanesOnMaster[R any](l *Layer, t LaneTask[R]) (master Replica, ok bool, err error) {
	total, offset, count, err := t.Lanes()
	if err != nil {
		return nil, false, err
	}
	if l.chunked {
		return nil, false, nil
	}
	return l.onMaster(func() (*Schedule, error) { return l.PlanLanes(t.Op(), total, offset, count) })
}

// RowsOnMaster is LanesOnMaster for a per_ray task: when the plan runs the
// whole batch on the master (dispatch master: weights [w, 0, …], or every
// remote shard below the floor; never with a chunking knob), it records that
// dispatch and returns the master replica for the caller's single-device
// call; ok false means run RunRows.
func RowsOnMaster[R any](l *Layer, t RowTask[R]) (master Replica, ok bool, err error) {
	n, err := t.Rows()
	if err != nil {
		return nil, false, err
	}
	return l.onMaster(func() (*Schedule, error) { return l.PlanRows(t.Op(), n) })
}

// onMaster plans with plan and, when the dispatch is master, records it and
// returns the master replica.
func (l *Layer) onMaster(plan func() (*Schedule, error)) (Replica, bool, error) {
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return nil, false, err
	}
	s, err := plan()
	if err != nil {
		return nil, false, err
	}
	if s.Dispatch.Mode != ModeMaster {
		return nil, false, nil
	}
	l.record(s)
	return reps[0], true, nil
}
