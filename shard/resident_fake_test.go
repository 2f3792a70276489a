package shard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// residentStep is one ResidentLanes call of a fake replica.
type residentStep struct {
	Slot   int
	Stage  string // begin, launch, partial, fold, end
	Lo, Hi int
	Parts  []int // fold: the slots of the parts, in order
	Failed bool  // end: the call failed
}

// residentLog records the ResidentLanes calls of a layer's fake replicas.
type residentLog struct {
	mu    sync.Mutex
	steps []residentStep
}

func (l *residentLog) add(s residentStep) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, s)
}

// take returns the steps recorded since the last take.
func (l *residentLog) take() []residentStep {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.steps
	l.steps = nil
	return s
}

// residentKey is what a fake replica's resident inputs were made from.
type residentKey struct {
	key, version uint64
}

// residentSim is a simulated replica that also implements
// shard.ResidentLanes over package rf's CPU references: its partial is the
// rf result of its windows, merged in launch order with package shard's
// merges, and the master folds the remotes' partials into its own in the
// order given. It records every call, fails the stages named in faults and
// counts how often its resident inputs were reused (the key of the task and
// the replica's version unchanged).
type residentSim struct {
	*simdev.Replica
	slot  int
	scene rf.Scene
	log   *residentLog

	mu       sync.Mutex // guards faults, refuse and onLaunch
	faults   map[string]error
	refuse   bool
	onLaunch func() // called after every launch

	claim  sync.Mutex // held from BeginLanes to EndLanes
	part   any
	inputs residentKey
	valid  bool
	reused int
}

var _ shard.ResidentLanes = (*residentSim)(nil)

// residentPart is a fake replica's partial handed to the master.
type residentPart struct {
	slot int
	v    any
}

func (*residentPart) Release() {}

func (r *residentSim) fault(stage string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.faults[stage]
}

func (r *residentSim) inject(stage string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.faults == nil {
		r.faults = map[string]error{}
	}
	r.faults[stage] = err
}

func (r *residentSim) LanesResident(t shard.Task) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch t := t.(type) {
	case *shard.AccumDfrDirect, *shard.AccumDfrCoherentDirect:
		return !r.refuse
	case *shard.AccumulateReflections:
		return !r.refuse && !t.Options.CollectWedges
	}
	return false
}

// inputKey is the key of the task's replicated inputs.
func inputKey(t shard.Task) uint64 {
	switch t := t.(type) {
	case *shard.AccumDfrDirect:
		return t.InputKey()
	case *shard.AccumDfrCoherentDirect:
		return t.InputKey()
	case *shard.AccumulateReflections:
		return t.MaterialKey()
	}
	return 0
}

func (r *residentSim) BeginLanes(t shard.Task) error {
	r.claim.Lock()
	if err := r.fault("begin"); err != nil {
		r.valid = false
		r.claim.Unlock()
		return err
	}
	k := residentKey{key: inputKey(t), version: r.Version()}
	if r.valid && r.inputs == k {
		r.reused++
	}
	r.inputs, r.valid = k, true
	part, err := r.run(t, 0, 0) // the zero partial
	if err != nil {
		r.claim.Unlock()
		return err
	}
	r.part = part
	r.log.add(residentStep{Slot: r.slot, Stage: "begin"})
	return nil
}

func (r *residentSim) run(t shard.Task, lo, hi int) (any, error) {
	switch t := t.(type) {
	case *shard.AccumDfrDirect:
		return rf.AccumDfrDirect(r.scene, t.States, t.Grid, t.Material, t.Active, t.Window(lo, hi))
	case *shard.AccumDfrCoherentDirect:
		return rf.AccumDfrCoherentDirect(r.scene, t.States, t.Grid, t.Material, t.Active, t.Window(lo, hi))
	case *shard.AccumulateReflections:
		return rf.AccumulateReflections(r.scene, t.Window(lo, hi), t.Grid, t.Material, t.MaxBounces, t.Options)
	}
	return nil, fmt.Errorf("task %T", t)
}

func mergePartial(acc, part any) error {
	switch a := acc.(type) {
	case *rf.AccumResult:
		return shard.MergeAccum(a, part.(*rf.AccumResult))
	case *rf.CoherentResult:
		return shard.MergeCoherent(a, part.(*rf.CoherentResult))
	case *rf.ReflResult:
		return shard.MergeReflections(a, part.(*rf.ReflResult))
	}
	return fmt.Errorf("partial %T", acc)
}

func (r *residentSim) LaunchLanes(t shard.Task, lo, hi int) error {
	r.log.add(residentStep{Slot: r.slot, Stage: "launch", Lo: lo, Hi: hi})
	if err := r.fault("launch"); err != nil {
		return err
	}
	v, err := r.run(t, lo, hi)
	if err != nil {
		return err
	}
	r.mu.Lock()
	hook := r.onLaunch
	r.mu.Unlock()
	if hook != nil {
		hook()
	}
	return mergePartial(r.part, v)
}

func (r *residentSim) PartialLanes(shard.Task) (shard.Payload, shard.Event, error) {
	r.log.add(residentStep{Slot: r.slot, Stage: "partial"})
	if err := r.fault("partial"); err != nil {
		return nil, nil, err
	}
	return &residentPart{slot: r.slot, v: r.part}, nil, nil
}

func (r *residentSim) FoldLanes(_ shard.Task, parts []shard.Payload, ready []shard.Event) (any, error) {
	step := residentStep{Slot: r.slot, Stage: "fold"}
	if len(parts) != len(ready) {
		return nil, fmt.Errorf("%d parts, %d events", len(parts), len(ready))
	}
	for _, p := range parts {
		rp, ok := p.(*residentPart)
		if !ok {
			return nil, fmt.Errorf("part %T", p)
		}
		step.Parts = append(step.Parts, rp.slot)
		if err := mergePartial(r.part, rp.v); err != nil {
			return nil, err
		}
	}
	r.log.add(step)
	if err := r.fault("fold"); err != nil {
		return nil, err
	}
	return r.part, nil
}

func (r *residentSim) EndLanes(failed bool) error {
	defer r.claim.Unlock()
	r.log.add(residentStep{Slot: r.slot, Stage: "end", Failed: failed})
	r.part = nil
	if failed {
		r.valid = false
	}
	return r.fault("end")
}

// residentLayer is rfLayer with every replica a residentSim.
func residentLayer(t testing.TB, f *rfFixture, count int, devices []int, o shard.Options) (*shard.Layer, *simdev.Cluster, []*residentSim, *residentLog) {
	t.Helper()
	c := simdev.New(simdev.Config{Devices: count})
	l, err := shard.Plan(devices, c, o)
	require.NoError(t, err)
	require.NotNil(t, l, "expected a layer")
	log := &residentLog{}
	sims := make([]*residentSim, len(devices))
	build := c.Builder(devices[0], f.meshes)
	require.NoError(t, l.Build(context.Background(), func(ctx context.Context, slot shard.Slot) (shard.Replica, error) {
		rep, err := build(ctx, slot)
		if err != nil {
			return nil, err
		}
		s := &residentSim{Replica: rep.(*simdev.Replica), slot: slot.Index, scene: rfRefScene{f.ref}, log: log}
		sims[slot.Index] = s
		return s, nil
	}))
	c.ResetStats()
	t.Cleanup(func() {
		require.NoError(t, l.Close())
		require.Zero(t, c.LivePayloads(), "payloads leaked")
	})
	return l, c, sims, log
}

// requireResidentOrder checks one call's steps against the protocol of
// shard.ResidentLanes for the dispatch d: every device begun before its
// first launch, the remotes with a window in slot order and then the
// master; launches in rounds (the j-th launch of a remote before the j-th
// of the master), each device's in ascending order, covering d's shards;
// one partial per remote, in slot order, after every launch and before the
// fold; the fold on the master with the parts in slot order; an end for
// every begin.
func requireResidentOrder(t *testing.T, d shard.DispatchRecord, steps []residentStep) {
	t.Helper()
	var remotes []int
	for _, sh := range d.Shards {
		if sh.Replica != 0 && !slices.Contains(remotes, sh.Replica) {
			remotes = append(remotes, sh.Replica)
		}
	}
	slices.Sort(remotes)
	var begins, partials, ends []int
	launched := map[int][][2]int{}
	at := map[int][]int{} // step positions of each device's launches
	var fold []int
	folded, partialSeen := false, false
	for i, s := range steps {
		switch s.Stage {
		case "begin":
			begins = append(begins, s.Slot)
		case "launch":
			require.Contains(t, begins, s.Slot, "replica %d launched before it began", s.Slot)
			require.False(t, partialSeen, "a launch after a partial")
			launched[s.Slot] = append(launched[s.Slot], [2]int{s.Lo, s.Hi})
			at[s.Slot] = append(at[s.Slot], i)
		case "partial":
			require.False(t, folded, "partial after the fold")
			partials, partialSeen = append(partials, s.Slot), true
		case "fold":
			require.Zero(t, s.Slot, "fold off the master")
			fold, folded = s.Parts, true
		case "end":
			require.False(t, s.Failed, "a successful call ended as failed")
			ends = append(ends, s.Slot)
		}
	}
	require.Equal(t, append(slices.Clone(remotes), 0), begins, "begin order")
	require.Equal(t, remotes, partials, "partials")
	require.Equal(t, remotes, fold, "fold order")
	require.ElementsMatch(t, begins, ends, "ends")
	for _, rem := range remotes {
		for j := range min(len(at[rem]), len(at[0])) {
			require.Less(t, at[rem][j], at[0][j], "round %d: the master launched before remote %d", j, rem)
		}
	}
	for _, sh := range d.Shards {
		w := launched[sh.Replica]
		require.NotEmpty(t, w, "replica %d never launched", sh.Replica)
		require.Equal(t, sh.Start, w[0][0], "replica %d", sh.Replica)
		for i := 1; i < len(w); i++ {
			require.Equal(t, w[i-1][1], w[i][0], "replica %d: windows not ascending and contiguous", sh.Replica)
		}
		require.Equal(t, sh.Stop, w[len(w)-1][1], "replica %d", sh.Replica)
	}
}

var errResident = errors.New("injected resident failure")
