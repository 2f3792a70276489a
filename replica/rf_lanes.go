package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The grid_reduce RF tasks (accum_dfr_direct, accum_dfr_coherent_direct and
// accumulate_reflections without wedge collection) run resident
// (shard.ResidentLanes) on each replica's compute stream, with the
// replica's laneState (rf_lane_state.go):
//
//   - BeginLanes: the replicated inputs are packed and uploaded unless
//     resident, and the partial is zeroed (one launch). Compute already
//     waits for every build and refit of main (Apply orders the replica's
//     launch streams after its mutations), so a call records no entry edge;
//   - LaunchLanes: the window's accumulation kernel adds into the partial
//     (a reflection window first uploads its rays);
//   - PartialLanes (a remote): the state's done event is recorded after the
//     remote's launches;
//   - FoldLanes (the master): compute waits for every remote's done event
//     and folds the remotes' partials into its own in layer order, reading
//     each where it lies (device memory of the master's device, or a peer's
//     through peer access; without peer access a copy of it on the master),
//     one launch per remote, the last writing the total as float32 grids
//     and counters; one download brings them to the host;
//   - EndLanes: after a failed call compute is synchronised.
//
// A steady-state accum_dfr_direct call on two replicas, inputs unchanged,
// so makes 13 driver calls (context binds apart): per replica an event
// record on main, a stream wait and a zeroing launch (6); a window launch
// per chunk (2 unchunked); the remote's done record and the master's wait
// on it (2); one fold launch (1); the download and its stream
// synchronisation (2). It allocates nothing and creates no event. A
// successful call needs no exit edge: the master's download waits for its
// fold, which waited for every remote's launches, so no work of the call
// is left on any stream when FoldLanes returns.

// LanesResident implements shard.ResidentLanes: the two DFR accumulations,
// and accumulate_reflections without wedge collection, on a live replica.
func (r *Replica) LanesResident(t shard.Task) bool {
	if r.live() != nil {
		return false
	}
	_, ok := laneJobOf(t)
	if ok {
		r.lanes()
	}
	return ok
}

// BeginLanes implements shard.ResidentLanes.
func (r *Replica) BeginLanes(t shard.Task) error {
	if err := r.live(); err != nil {
		return err
	}
	j, ok := laneJobOf(t)
	if !ok {
		return fmt.Errorf("replica: %T does not run resident: %w", t, shard.ErrUnsupported)
	}
	st := r.lanes()
	st.claim.Lock()
	st.held.Store(true)
	if err := st.begin(j); err != nil {
		st.statesOK, st.matOK = false, false
		err = errors.Join(err, r.compute.Synchronize())
		st.release()
		return fmt.Errorf("replica: starting %s on cuda:%d: %w", t.Op().Key, r.Device(), err)
	}
	return nil
}

// begin queues the inputs and the zeroing of the partial
// on compute (and, on the master, sizes the folded output).
func (st *laneState) begin(j *laneJob) error {
	r, s := st.r, st.r.compute
	for _, e := range []**launch.Event{&st.done} {
		if *e == nil {
			ev, err := r.dev.d.NewEvent(false)
			if err != nil {
				return err
			}
			*e = ev
		}
	}
	if err := st.resident(s, j); err != nil {
		return err
	}
	if err := growPartial(s, &st.part, j.shape); err != nil {
		return err
	}
	if err := accel.ZeroPartial(s, st.part, j.shape); err != nil {
		return err
	}
	if r.isMaster {
		if err := grow(s, &st.out, j.shape.Words()); err != nil {
			return err
		}
		st.host = growHost(st.host, j.shape.Words())
	}
	st.job, st.rays = j, 0
	return nil
}

// release ends the claim of a call.
func (st *laneState) release() {
	st.job, st.rays = nil, 0
	st.held.Store(false)
	st.claim.Unlock()
}

// current returns the state of the call t that this replica began.
func (r *Replica) current(t shard.Task) (*laneState, error) {
	if err := r.live(); err != nil {
		return nil, err
	}
	st := r.lanes()
	if !st.held.Load() || st.job == nil || st.job.task != t {
		return nil, fmt.Errorf("replica: cuda:%d has not begun this %T", r.Device(), t)
	}
	return st, nil
}

// LaunchLanes implements shard.ResidentLanes: lanes (rows) [lo, hi) add
// into the partial on compute.
func (r *Replica) LaunchLanes(t shard.Task, lo, hi int) error {
	st, err := r.current(t)
	if err != nil {
		return err
	}
	if lo < 0 || hi < lo {
		return fmt.Errorf("replica: launch of [%d,%d)", lo, hi)
	}
	s, j := r.compute, st.job
	switch {
	case j.direct != nil:
		err = r.bvh.AccumDfrDirectPartial(s, accel.DfrAccumLaunch{States: st.states, NumStates: st.statesKey.rows,
			Grid: j.direct.Grid, Options: j.direct.Window(lo, hi)}, st.part)
	case j.coherent != nil:
		err = r.bvh.AccumDfrCoherentPartial(s, accel.DfrCoherentLaunch{States: st.states, NumStates: st.statesKey.rows,
			Grid: j.coherent.Grid, Options: j.coherent.Window(lo, hi)}, st.part)
	default:
		var in accel.ReflAccumLaunch
		if in, err = st.reflRows(s, j.refl, lo, hi); err == nil {
			err = r.bvh.AccumulateReflectionsPartial(s, in, st.part)
		}
	}
	if err != nil {
		return fmt.Errorf("replica: %s [%d,%d) on cuda:%d: %w", t.Op().Key, lo, hi, r.Device(), err)
	}
	st.rays += hi - lo
	r.stats.launches.Add(1)
	r.stats.rows.Add(int64(hi - lo))
	return nil
}

// PartialLanes implements shard.ResidentLanes on a remote: the done event
// recorded on compute after its launches, and its partial.
func (r *Replica) PartialLanes(t shard.Task) (shard.Payload, shard.Event, error) {
	st, err := r.current(t)
	if err != nil {
		return nil, nil, err
	}
	if r.isMaster {
		return nil, nil, errors.New("replica: the master folds the partials, it hands none out")
	}
	if err := st.done.Record(r.compute); err != nil {
		return nil, nil, err
	}
	return &lanePart{st: st, job: st.job, rays: st.rays, shape: st.job.shape}, &laneEvent{e: st.done}, nil
}

// EndLanes implements shard.ResidentLanes: after a failed call compute is
// synchronised and the resident inputs are considered lost.
func (r *Replica) EndLanes(failed bool) error {
	r.laneMu.Lock()
	st := r.lane
	r.laneMu.Unlock()
	if st == nil || !st.held.Load() {
		return fmt.Errorf("replica: EndLanes on cuda:%d without BeginLanes", r.Device())
	}
	defer st.release()
	if !failed {
		return nil
	}
	st.statesOK, st.matOK = false, false
	if err := r.compute.Synchronize(); err != nil {
		return fmt.Errorf("replica: ending a failed call on cuda:%d: %w", r.Device(), err)
	}
	return nil
}
