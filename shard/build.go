package shard

import (
	"context"
	"errors"
	"fmt"
)

// Slot is one position of a layer's device list: Index 0 is the master.
// Device is the ordinal there; with Options.AllowSameDevice several slots
// may name one device, and the replica of each slot but the master acts as
// a remote (its rows are scattered to it and gathered back).
type Slot struct {
	Index  int
	Device int
}

// Master reports whether the slot is the master's.
func (s Slot) Master() bool { return s.Index == 0 }

// Builder makes the replica of one slot: the same meshes built on its
// device (the master's from the caller's own data). It is called once per
// slot, in layer order.
type Builder func(ctx context.Context, slot Slot) (Replica, error)

// Build (re)creates the replica set: it closes the current replicas, builds
// one per device in order and checks that their versions agree. Success
// clears the poison marker; any failure leaves the layer without replicas
// and poisoned by "build" (weights set by SetOperationWeights survive
// either way). Build waits for running calls.
func (l *Layer) Build(ctx context.Context, build Builder) error {
	l.rw.Lock()
	defer l.rw.Unlock()
	closeErr := closeAll(l.replicas)
	l.replicas = nil
	reps := make([]Replica, 0, len(l.devices))
	fail := func(err error) error {
		err = errors.Join(err, closeAll(reps))
		return errJoin(err, l.poisonWith("build", err))
	}
	for i, d := range l.devices {
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("shard: build cancelled before cuda:%d: %w", d, err))
		}
		r, err := build(ctx, Slot{Index: i, Device: d})
		if err == nil && r == nil {
			err = errors.New("builder returned no replica")
		}
		if err == nil && r.Device() != d {
			err = fmt.Errorf("builder returned the replica of cuda:%d", r.Device())
			reps = append(reps, r)
		}
		if err != nil {
			return fail(&ReplicaError{Device: d, Stage: "build", Operation: "build", Err: err})
		}
		reps = append(reps, r)
	}
	if err := lockstep(reps); err != nil {
		return fail(err)
	}
	l.replicas = reps
	l.mu.Lock()
	l.poison = nil
	l.mu.Unlock()
	return closeErr
}

// Broadcast applies a mutation to every replica in device order, then
// checks that their versions still agree. The first failure stops the
// broadcast and poisons the layer (by m.Operation()), as does a version
// divergence: replicas may then disagree, so every later call refuses with
// a *PoisonedError until Build succeeds. ctx is checked once, before the
// first replica: a broadcast is never interrupted half-way. Broadcast waits
// for running calls; queries issued after it see the new state.
func (l *Layer) Broadcast(ctx context.Context, m Mutation) error {
	l.rw.Lock()
	defer l.rw.Unlock()
	reps, err := l.ready()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("shard: %s cancelled before the broadcast: %w", m.Operation(), err)
	}
	for _, r := range reps {
		if err := r.Apply(m); err != nil {
			err = &ReplicaError{Device: r.Device(), Stage: "apply", Operation: m.Operation(), Err: err}
			return errJoin(err, l.poisonWith(m.Operation(), err))
		}
	}
	if err := lockstep(reps); err != nil {
		return errJoin(err, l.poisonWith(m.Operation(), err))
	}
	return nil
}

// Close releases the replicas; the layer then refuses calls with
// ErrNotBuilt until the next Build. Idempotent.
func (l *Layer) Close() error {
	l.rw.Lock()
	defer l.rw.Unlock()
	err := closeAll(l.replicas)
	l.replicas = nil
	return err
}

// lockstep checks that every replica reports the same version.
func lockstep(reps []Replica) error {
	for _, r := range reps[1:] {
		if r.Version() != reps[0].Version() {
			e := &DivergedError{}
			for _, x := range reps {
				e.Devices = append(e.Devices, x.Device())
				e.Versions = append(e.Versions, x.Version())
			}
			return e
		}
	}
	return nil
}

func closeAll(reps []Replica) error {
	var errs []error
	for _, r := range reps {
		if err := r.Close(); err != nil {
			errs = append(errs, fmt.Errorf("shard: closing cuda:%d: %w", r.Device(), err))
		}
	}
	return errors.Join(errs...)
}
