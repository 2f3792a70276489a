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
// For a call, in this order:
//
//  1. BeginLanes on every remote that runs a window, in layer order, then on
//     the master (a fixed order, so concurrent calls claim replicas without
//     deadlock);
//  2. LaunchLanes for every chunk: the remotes' chunks first, each device's
//     in ascending lane order, then the master's;
//  3. PartialLanes on every remote, in layer order, after its last chunk;
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

// dev returns the ResidentLanes of replica index i.
func (r *residentRun[R]) dev(i int) (ResidentLanes, error) {
	k := slices.Index(r.order, i)
	if k < 0 {
		return nil, fmt.Errorf("shard: %s: replica %d has no window", r.op.Key, i)
	}
	return r.devs[k], nil
}

// run executes the call (see ResidentLanes) and ends every begun replica.
func (r *residentRun[R]) run(ctx context.Context) (res R, err error) {
	defer func() { err = r.end(err) }()
	for _, d := range r.devs {
		if err := d.BeginLanes(r.t); err != nil {
			return res, r.fail(d, "replicate", 0, 0, err)
		}
		r.begun = append(r.begun, d)
	}
	chunks := slices.Clone(r.s.Chunks)
	slices.SortStableFunc(chunks, func(a, b Shard) int { return boolRank(a.Replica == 0) - boolRank(b.Replica == 0) })
	remotes := len(r.order) - 1
	var parts []Payload
	var ready []Event
	for i, c := range chunks {
		if err := cancelled(ctx, r.op.Key, i, len(chunks)); err != nil {
			return res, err
		}
		if c.Replica == 0 && len(parts) < remotes {
			if parts, ready, err = r.partials(); err != nil {
				return res, err
			}
		}
		d, err := r.dev(c.Replica)
		if err != nil {
			return res, err
		}
		if err := d.LaunchLanes(r.t, c.Start, c.Stop); err != nil {
			return res, r.fail(d, "launch", c.Start, c.Stop, err)
		}
	}
	if err := cancelled(ctx, r.op.Key, len(chunks), len(chunks)); err != nil {
		return res, err
	}
	if len(parts) < remotes {
		if parts, ready, err = r.partials(); err != nil {
			return res, err
		}
	}
	master := r.devs[len(r.devs)-1]
	v, err := master.FoldLanes(r.t, parts, ready)
	if err != nil {
		return res, r.fail(master, "fold", 0, 0, err)
	}
	rec, ok := v.(R)
	if !ok {
		return res, r.fail(master, "result", 0, 0, fmt.Errorf("result is %T, want %T", v, rec))
	}
	return rec, nil
}

// partials collects every remote's partial, in layer order.
func (r *residentRun[R]) partials() ([]Payload, []Event, error) {
	var parts []Payload
	var ready []Event
	for _, d := range r.devs[:len(r.devs)-1] {
		p, ev, err := d.PartialLanes(r.t)
		if err != nil {
			return nil, nil, r.fail(d, "gather", 0, 0, err)
		}
		parts, ready = append(parts, p), append(ready, ev)
	}
	return parts, ready, nil
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

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
