package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ResidentLanes is a Replica that keeps a grid_reduce call's inputs and its
// partial resident on its device between calls and folds the partials on
// the master's device, so that a steady-state call neither allocates, nor
// re-uploads unchanged inputs, nor brings a remote's partial to the master
// by a copy (package replica's CUDA replicas implement it). RunLanes and
// RunAccumulateReflections drive the replicas through it, instead of the
// Enter, Replicate, Launch, Fold, Gather, Result and Exit steps, when every
// replica of the plan (and the master) implements it and accepts the task.
// For a call:
//
//  1. LaunchLanes for every chunk, in rounds: round j holds the j-th chunk
//     of every device (each device's in ascending lane order), the remotes'
//     in layer order before the master's, so a remote is launched first;
//     BeginLanes on a device right before its first chunk, so devices are
//     begun in a fixed order (the remotes in layer order, then the master:
//     concurrent calls claim replicas without deadlock) and a remote's
//     first window is queued before the master prepares its inputs;
//  2. BeginLanes on the master if it has no window;
//  3. PartialLanes on every remote, in layer order;
//  4. FoldLanes on the master with those partials and events;
//  5. EndLanes on every replica whose BeginLanes succeeded, failed or not.
//
// Lane windows, chunks, the dispatch record and the chunk plan are those of
// the step protocol; only the execution differs. Each layer call drives a
// replica from one goroutine; a replica serialises concurrent calls between
// BeginLanes and EndLanes.
type ResidentLanes interface {
	Replica
	// LanesResident reports whether the replica runs t through this
	// interface. It queues nothing and does not fail.
	LanesResident(t Task) bool
	// BeginLanes starts t on this device: it claims the replica's resident
	// state for the call (a concurrent call waits until EndLanes), orders
	// the device's work for the call after its latest geometry, makes t's
	// whole inputs resident (reusing the previous call's when their key and
	// the geometry version are unchanged) and starts the call's partial
	// from zero. A failed BeginLanes has released its claim.
	BeginLanes(t Task) error
	// LaunchLanes queues lanes (rows) [lo, hi) of t, which add into the
	// device's partial.
	LaunchLanes(t Task, lo, hi int) error
	// PartialLanes, on a remote, returns its partial where it lies and the
	// event of its completion, for the master's FoldLanes. The payload stays
	// the replica's (its Release does nothing) until EndLanes.
	PartialLanes(t Task) (Payload, Event, error)
	// FoldLanes, on the master, adds parts (the remotes' partials in layer
	// order, each once its event has completed) into its own partial on its
	// device, in that order after its own, and returns t's result. It
	// returns once the result is on the host.
	FoldLanes(t Task, parts []Payload, ready []Event) (any, error)
	// EndLanes ends the call on this device and releases the claim. After a
	// failed call (failed) the replica first waits for the call's work it
	// queued, so nothing of the call runs once EndLanes returns; a failure
	// there poisons the layer like a failed exit edge.
	EndLanes(failed bool) error
}

// residentOrder returns the replicas of s (the remotes with a window, in
// layer order, then the master) as ResidentLanes, or false when one of them
// does not run t that way. Borrowed replicas are reached through Unwrap.
func residentOrder(reps []Replica, s *Schedule, t Task) ([]int, []ResidentLanes, bool) {
	var order []int
	for _, sh := range s.Dispatch.Shards {
		if sh.Replica > 0 && !slices.Contains(order, sh.Replica) {
			order = append(order, sh.Replica)
		}
	}
	slices.Sort(order)
	order = append(order, 0)
	devs := make([]ResidentLanes, len(order))
	for k, i := range order {
		if i < 0 || i >= len(reps) {
			return nil, nil, false
		}
		d, ok := Unwrap(reps[i]).(ResidentLanes)
		if !ok || !d.LanesResident(t) {
			return nil, nil, false
		}
		devs[k] = d
	}
	return order, devs, true
}

// runResident runs a planned grid_reduce call on ResidentLanes replicas
// when every replica of s accepts t; ok is false otherwise (nothing ran).
func runResident[R any](ctx context.Context, l *Layer, reps []Replica, s *Schedule, t Task) (res R, ok bool, err error) {
	order, devs, ok := residentOrder(reps, s, t)
	if !ok {
		return res, false, nil
	}
	r := &residentRun[R]{call: l.newCall(t.Op(), reps), t: t, s: s, order: order, devs: devs}
	res, err = r.run(ctx)
	return res, true, err
}

// residentRun is a grid_reduce call on ResidentLanes replicas.
type residentRun[R any] struct {
	*call
	t     Task
	s     *Schedule
	order []int           // replica indices: the remotes, then the master
	devs  []ResidentLanes // by position in order
	begun []ResidentLanes
}

// run executes the call (see ResidentLanes) and ends every begun replica.
func (r *residentRun[R]) run(ctx context.Context) (res R, err error) {
	defer func() { err = r.end(err) }()
	begun := make([]bool, len(r.devs))
	begin := func(k int) error {
		if begun[k] {
			return nil
		}
		if err := r.devs[k].BeginLanes(r.t); err != nil {
			return r.fail(r.devs[k], "replicate", 0, 0, err)
		}
		begun[k] = true
		r.begun = append(r.begun, r.devs[k])
		return nil
	}
	seq := r.rounds()
	for i, c := range seq {
		if err := cancelled(ctx, r.op.Key, i, len(seq)); err != nil {
			return res, err
		}
		k := slices.Index(r.order, c.Replica)
		if err := begin(k); err != nil {
			return res, err
		}
		d := r.devs[k]
		if err := d.LaunchLanes(r.t, c.Start, c.Stop); err != nil {
			return res, r.fail(d, "launch", c.Start, c.Stop, err)
		}
	}
	if err := cancelled(ctx, r.op.Key, len(seq), len(seq)); err != nil {
		return res, err
	}
	master := len(r.devs) - 1
	if err := begin(master); err != nil { // a master without a window
		return res, err
	}
	var parts []Payload
	var ready []Event
	for _, d := range r.devs[:master] {
		p, ev, err := d.PartialLanes(r.t)
		if err != nil {
			return res, r.fail(d, "gather", 0, 0, err)
		}
		parts, ready = append(parts, p), append(ready, ev)
	}
	v, err := r.devs[master].FoldLanes(r.t, parts, ready)
	if err != nil {
		return res, r.fail(r.devs[master], "fold", 0, 0, err)
	}
	rec, ok := v.(R)
	if !ok {
		return res, r.fail(r.devs[master], "result", 0, 0, fmt.Errorf("result is %T, want %T", v, rec))
	}
	return rec, nil
}

// rounds orders the chunks for issue: round j holds the j-th chunk of each
// device (in ascending lane order), the remotes' in layer order and then
// the master's. Every device with a window has a chunk in round 0, so the
// devices are first reached (and begun) in r.order.
func (r *residentRun[R]) rounds() []Shard {
	per := make([][]Shard, len(r.order))
	for _, c := range r.s.Chunks {
		if k := slices.Index(r.order, c.Replica); k >= 0 {
			per[k] = append(per[k], c)
		}
	}
	var seq []Shard
	for k := range per {
		slices.SortStableFunc(per[k], func(a, b Shard) int { return a.Start - b.Start })
	}
	for j := 0; ; j++ {
		more := false
		for k := range per {
			if j < len(per[k]) {
				seq, more = append(seq, per[k][j]), true
			}
		}
		if !more {
			return seq
		}
	}
}

// end ends every begun replica; a failed end poisons the layer ("stream
// handoff", as a failed exit edge does) and is attached to the call's error.
func (r *residentRun[R]) end(err error) error {
	var first error
	for _, d := range r.begun {
		if e := d.EndLanes(err != nil); e != nil && first == nil {
			first = r.fail(d, "exit", 0, 0, e)
		}
	}
	r.begun = nil
	if first != nil {
		return errJoin(err, errors.Join(first, r.l.poisonWith("stream handoff", first)))
	}
	return err
}
