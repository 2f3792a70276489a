package replica

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// laneState is what a replica keeps on its device between the grid_reduce
// RF calls it runs as shard.ResidentLanes (rf_lanes.go): an event (done),
// created once and recorded again by every call, and grow-only buffers,
// allocated by the first call that needs them (or needs them larger) and
// freed when the replica closes:
//
//   - part: the call's partial (float64 grid sums and int32 counters), which
//     BeginLanes zeroes and every window adds into;
//   - states and material: the packed replicated inputs of the last DFR
//     call and of the last reflection call, each reused while the inputs'
//     content key (and, for the states, the geometry version) stays the
//     same (the states are packed on the host into packed, kept too);
//   - rows and active: a reflection window's rays, uploaded per launch;
//   - out and host (the master): the folded result, as device words and as
//     their one download;
//   - mirror (a remote the master cannot read in place): a copy of part on
//     the master's device.
//
// A call holds claim from BeginLanes to EndLanes; every field below it is
// used under the claim only (the master's FoldLanes reads a remote's part
// and mirror under that remote's claim, which the same call holds).
type laneState struct {
	r     *Replica
	claim sync.Mutex
	held  atomic.Bool // claim is held by a call

	done *launch.Event
	part accel.RFPartial
	out  *launch.Buffer[uint32]
	host []uint32

	packed    []uint32
	states    *launch.Buffer[uint32]
	statesKey inputsKey // what states hold, when statesOK
	statesOK  bool
	material  *launch.Buffer[float32]
	matKey    inputsKey // what material holds, when matOK
	matOK     bool

	rows       *launch.Buffer[float32]
	active     *launch.Buffer[uint8]
	rowHost    []float32
	activeHost []uint8

	mirror accel.RFPartial // on the master's device
	peer   int8            // whether the master reads part in place: 0 not asked yet, 1 yes, −1 no

	job  *laneJob // the call's task, nil between calls
	rays int      // rows launched by the call (reflections)
}

// inputsKey identifies resident replicated inputs: the task's content key,
// the geometry version they were packed against (0 for the material, which
// does not depend on it) and their row count (states or faces).
type inputsKey struct {
	key, version uint64
	rows         int
}

// laneJob is a grid_reduce RF task as a replica runs it resident.
type laneJob struct {
	task     shard.Task
	direct   *shard.AccumDfrDirect
	coherent *shard.AccumDfrCoherentDirect
	refl     *shard.AccumulateReflections
	shape    accel.PartialShape
}

// laneJobOf returns the job of a task the replica runs resident: the two
// DFR accumulations, and accumulate_reflections without wedge collection
// (its event buffer has one global capacity: it runs on the master through
// the steps).
func laneJobOf(t shard.Task) (*laneJob, bool) {
	switch t := t.(type) {
	case *shard.AccumDfrDirect:
		if t != nil {
			return &laneJob{task: t, direct: t, shape: accel.DfrDirectShape(t.Grid.Cells())}, true
		}
	case *shard.AccumDfrCoherentDirect:
		if t != nil {
			return &laneJob{task: t, coherent: t, shape: accel.DfrCoherentShape(t.Grid.Cells())}, true
		}
	case *shard.AccumulateReflections:
		if t != nil && !t.Options.CollectWedges {
			return &laneJob{task: t, refl: t, shape: accel.ReflShape(t.Grid.Res0 * t.Grid.Res1)}, true
		}
	}
	return nil, false
}

// states returns the job's DFR states, material and active mask, and their
// content key.
func (j *laneJob) states() (*rf.DfrStates, *rf.DfrMaterial, []bool, uint64) {
	if j.direct != nil {
		return j.direct.States, j.direct.Material, j.direct.Active, j.direct.InputKey()
	}
	return j.coherent.States, j.coherent.Material, j.coherent.Active, j.coherent.InputKey()
}

// lanes returns the replica's laneState, creating it on first use.
func (r *Replica) lanes() *laneState {
	r.laneMu.Lock()
	defer r.laneMu.Unlock()
	if r.lane == nil {
		r.lane = &laneState{r: r}
	}
	return r.lane
}

// closeLanes frees the replica's laneState (its buffers and events); its
// streams must have completed (Replica.Close calls it after synchronizing
// them). A state still claimed by a call is an error: the layer closes a
// replica only once no call holds it.
func (r *Replica) closeLanes() error {
	r.laneMu.Lock()
	st := r.lane
	r.laneMu.Unlock()
	if st == nil {
		return nil
	}
	if !st.claim.TryLock() {
		return fmt.Errorf("replica: cuda:%d: RF buffers still in use by a call at close", r.Device())
	}
	defer st.claim.Unlock()
	r.laneMu.Lock()
	r.lane = nil
	r.laneMu.Unlock()
	errs := []error{st.part.Acc.Close(), st.part.Ints.Close(), st.out.Close(), st.states.Close(), st.material.Close(),
		st.rows.Close(), st.active.Close(), st.mirror.Acc.Close(), st.mirror.Ints.Close()}
	for _, e := range []*launch.Event{st.done} {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	st.part, st.out, st.states, st.material, st.rows, st.active = accel.RFPartial{}, nil, nil, nil, nil, nil
	st.mirror, st.done, st.statesOK, st.matOK = accel.RFPartial{}, nil, false, false
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("replica: freeing the resident RF state of cuda:%d: %w", r.Device(), err)
	}
	return nil
}

// grow makes *b hold at least n elements (at least one). A buffer too small
// is freed after the work queued on s (a stream of its device; no earlier
// call still uses it, calls end after their work) and replaced by one with
// at most an eighth more than n, so that calls of growing sizes allocate a
// few times and then never. The memory comes from cuMemAlloc, not from the
// stream-ordered pool: a remote's partial is read by the master's kernels
// through peer access, which covers cuMemAlloc memory only (pool memory
// would need cuMemPoolSetAccess).
func grow[T launch.Elem](s *launch.Stream, b **launch.Buffer[T], n int) error {
	n = max(n, 1)
	if *b != nil && (*b).Len() >= n {
		return nil
	}
	if old := *b; old != nil {
		*b = nil
		if err := old.CloseOn(s); err != nil {
			return err
		}
	}
	nb, err := launch.Alloc[T](s.Device(), roundUp(n))
	if err != nil {
		return err
	}
	*b = nb
	return nil
}

// roundUp is n rounded up to a multiple of a sixteenth of the power of two
// at or above it (less than n/8 more).
func roundUp(n int) int {
	step := max(1, (1<<bits.Len(uint(n-1)))/16)
	return (n + step - 1) / step * step
}

// growPartial makes p hold shape, as grow.
func growPartial(s *launch.Stream, p *accel.RFPartial, shape accel.PartialShape) error {
	if err := grow(s, &p.Acc, shape.Acc); err != nil {
		return err
	}
	return grow(s, &p.Ints, shape.Ints)
}

// growHost returns v resized to n elements, reusing its memory when it can.
func growHost[T any](v []T, n int) []T {
	if cap(v) < n {
		return make([]T, n)
	}
	return v[:n]
}

// lanePart is a remote's partial handed to the master's FoldLanes: the
// remote's state, which the call holds, and what the remote launched.
type lanePart struct {
	st    *laneState
	job   *laneJob
	rays  int
	shape accel.PartialShape
}

// Release implements shard.Payload; the partial stays the replica's.
func (*lanePart) Release() {}

// laneEvent is the completion of a remote's launches of a call: its done
// event. The event is recorded again by the replica's next call, so Wait
// is meaningful until the replica's EndLanes only.
type laneEvent struct{ e *launch.Event }

// Wait blocks until the remote's launches have completed.
func (e *laneEvent) Wait() error { return e.e.Synchronize() }

// The interfaces of the resident RF calls.
var (
	_ shard.ResidentLanes = (*Replica)(nil)
	_ shard.Payload       = (*lanePart)(nil)
	_ shard.Event         = (*laneEvent)(nil)
)
