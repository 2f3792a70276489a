package simdev

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// ErrReleased is returned when a released payload is handed to a step.
var ErrReleased = errors.New("simdev: payload used after release")

// Replica is one simulated device's copy of the scene: its own tables and
// reference scene, a compute queue and, for a remote, one queue per link
// direction. It implements shard.Replica. The master serves its chunks from
// the caller's memory without copies; a remote deep-copies every input and
// output, so results are computed from distinct memory.
//
// A replica is identified by its device and its slot, its position in the
// layer's device list: with shard.Options.AllowSameDevice several replicas
// share a device. Each keeps its own tables, queues and edge mask; they
// share the device's modelled engines (its compute time and its link), and
// their steps are counted per device (Cluster.Stats) and per slot
// (Cluster.SlotStats), logged with their slot and targeted by Fault.Slots.
type Replica struct {
	c       *Cluster
	device  int
	slot    int
	master  bool
	shadow  *geom.Tables // host-side copy: validates mutations synchronously
	tables  *geom.Tables // the device copy, mutated on the compute queue
	scene   *ref.Scene
	dev     *state // what launches read, touched on the compute queue only
	compute queue
	in, out queue
	version atomic.Uint64
	maskMu  sync.Mutex
	mask    []bool
	closed  atomic.Bool
}

// Builder returns a shard.Builder that builds meshes on each device of the
// cluster; master is the layer's master device. The replica of the layer's
// first slot is the master; a later slot on the master's device (a
// same-device layer) is a remote like any other.
func (c *Cluster) Builder(master int, meshes []geom.Mesh) shard.Builder {
	return func(_ context.Context, slot shard.Slot) (shard.Replica, error) {
		return c.NewSlotReplica(slot, meshes)
	}
}

// NewReplica builds meshes on a simulated device outside a layer: a master
// gets slot 0, a remote slot −1.
func (c *Cluster) NewReplica(device int, master bool, meshes []geom.Mesh) (*Replica, error) {
	slot := shard.Slot{Index: -1, Device: device}
	if master {
		slot.Index = 0
	}
	return c.NewSlotReplica(slot, meshes)
}

// NewSlotReplica builds meshes for one slot of a layer: on slot.Device, the
// master when slot.Master().
func (c *Cluster) NewSlotReplica(slot shard.Slot, meshes []geom.Mesh) (*Replica, error) {
	device := slot.Device
	if device < 0 || device >= c.cfg.Devices {
		return nil, fmt.Errorf("simdev: no device %d in a cluster of %d", device, c.cfg.Devices)
	}
	if f := c.step(device, slot.Index, StageBuild, 0, 0, nil); f != nil {
		return nil, f.Err
	}
	shadow, err := geom.BuildTables(meshes)
	if err != nil {
		return nil, err
	}
	tables, _ := geom.BuildTables(meshes)
	var opts []ref.Option
	if c.cfg.BruteForce {
		opts = append(opts, ref.BruteForce())
	}
	scene, err := ref.NewScene(tables, opts...)
	if err != nil {
		return nil, err
	}
	r := &Replica{c: c, device: device, slot: slot.Index, master: slot.Master(), shadow: shadow, tables: tables,
		scene: scene, dev: newState(scene, tables)}
	e := c.engines(device)
	r.compute = queue{c: c, eng: &e.compute}
	r.in = queue{c: c, eng: &e.in}
	r.out = queue{c: c, eng: &e.out}
	return r, nil
}

// Device implements shard.Replica.
func (r *Replica) Device() int { return r.device }

// Slot is the replica's position in its layer's device list (0: the
// master), or −1 for a remote built by NewReplica.
func (r *Replica) Slot() int { return r.slot }

// name names the replica in errors.
func (r *Replica) name() string { return name(r.device, r.slot) }

// Version implements shard.Replica.
func (r *Replica) Version() uint64 { return r.version.Load() }

// EdgeMask returns the last edge mask applied (as recorded by Apply; the
// edge queries read it once the mutation has passed the compute queue).
func (r *Replica) EdgeMask() []bool {
	r.maskMu.Lock()
	defer r.maskMu.Unlock()
	return slices.Clone(r.mask)
}

// Scene returns the replica's reference scene (for inspection).
func (r *Replica) Scene() *ref.Scene { return r.scene }

// arrive counts a step and logs it. It returns the step's synchronous
// failure (a closed replica, a released payload, a fault), or the fault
// that the step's event must report (Async on an enqueued stage) or that
// makes it a no-op (Silent).
func (r *Replica) arrive(stage Stage, lo, hi int, update func(*Stats), ps ...shard.Payload) (*Fault, error) {
	if r.closed.Load() {
		return nil, fmt.Errorf("simdev: %s: replica is closed", r.name())
	}
	for _, p := range ps {
		if sp, ok := p.(*payload); ok && sp.released.Load() {
			return nil, fmt.Errorf("%s %s: %w", r.name(), stage, ErrReleased)
		}
	}
	f := r.c.step(r.device, r.slot, stage, lo, hi, update)
	switch {
	case f == nil:
		return nil, nil
	case f.Silent && stage == StageApply:
		return f, nil
	case f.Async && enqueued(stage):
		return f, nil
	}
	return nil, f.Err
}

// enqueued reports whether a stage runs on a queue (and can fail through
// its event).
func enqueued(s Stage) bool {
	switch s {
	case StageScatter, StageReplicate, StageLaunch, StageFold, StageGather:
		return true
	}
	return false
}

func asyncErr(f *Fault) error {
	if f == nil {
		return nil
	}
	return f.Err
}

// Enter implements shard.Replica; the simulated entry edge is immediate.
func (r *Replica) Enter(shard.Event) (shard.Event, error) {
	_, err := r.arrive(StageEnter, 0, 0, func(s *Stats) { s.Enters++ })
	return nil, err
}

// Exit implements shard.Replica.
func (r *Replica) Exit() error {
	_, err := r.arrive(StageExit, 0, 0, func(s *Stats) { s.Exits++ })
	return err
}

// Scatter implements shard.Replica.
func (r *Replica) Scatter(t shard.Task, lo, hi int) (shard.Payload, shard.Event, error) {
	return r.load(t, StageScatter, lo, hi)
}

// Replicate implements shard.Replica.
func (r *Replica) Replicate(t shard.Task) (shard.Payload, shard.Event, error) {
	return r.load(t, StageReplicate, 0, 0)
}

func (r *Replica) load(t shard.Task, stage Stage, lo, hi int) (shard.Payload, shard.Event, error) {
	k, err := kernelOf(t)
	if err != nil {
		return nil, nil, err
	}
	var bytes int
	if !r.master {
		_, bytes = k.Input(lo, hi, false)
	}
	f, err := r.arrive(stage, lo, hi, func(s *Stats) {
		if stage == StageScatter {
			s.Scatters++
		} else {
			s.Replicates++
		}
		s.BytesIn += int64(bytes)
	})
	if err != nil {
		return nil, nil, err
	}
	p := r.newPayload(lo, hi)
	if r.master && f == nil {
		p.v, _ = k.Input(lo, hi, false) // a view of the caller's memory
		return p, nil, nil
	}
	ev := r.in.enqueue(nil, r.c.copyTime(bytes), asyncErr(f), func() error {
		p.v, _ = k.Input(lo, hi, !r.master)
		return nil
	})
	return p, ev, nil
}

// Launch implements shard.Replica.
func (r *Replica) Launch(t shard.Task, in shard.Payload, lo, hi int, ready shard.Event) (shard.Payload, shard.Event, error) {
	k, err := kernelOf(t)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.arrive(StageLaunch, lo, hi, func(s *Stats) { s.Launches++; s.RowsLaunched += hi - lo }, in)
	if err != nil {
		return nil, nil, err
	}
	src := in.(*payload)
	p := r.newPayload(lo, hi)
	ev := r.compute.enqueue([]shard.Event{ready}, r.c.computeTime(r.device, hi-lo), asyncErr(f), func() error {
		out, err := k.run(r.dev, src.v, lo, hi)
		p.v = out
		return err
	})
	return p, ev, nil
}

// Fold implements shard.Replica.
func (r *Replica) Fold(t shard.Task, acc shard.Payload, accReady shard.Event, part shard.Payload, partReady shard.Event) (shard.Payload, shard.Event, error) {
	k, err := kernelOf(t)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.arrive(StageFold, 0, 0, func(s *Stats) { s.Folds++ }, acc, part)
	if err != nil {
		return nil, nil, err
	}
	if acc == nil {
		if f == nil {
			return part, partReady, nil
		}
		return part, r.compute.enqueue([]shard.Event{partReady}, 0, f.Err, func() error { return nil }), nil
	}
	a, b := acc.(*payload), part.(*payload)
	ev := r.compute.enqueue([]shard.Event{accReady, partReady}, 0, asyncErr(f), func() error {
		v, err := k.Add(a.v, b.v)
		a.v = v
		return err
	})
	return acc, ev, nil
}

// Gather implements shard.Replica.
func (r *Replica) Gather(t shard.Task, out shard.Payload, ready shard.Event) (shard.Payload, shard.Event, error) {
	k, err := kernelOf(t)
	if err != nil {
		return nil, nil, err
	}
	src, _ := out.(*payload)
	bytes := 0
	if !r.master && src != nil {
		if t.Op().Class == shard.GridReduce {
			bytes = k.OutputBytes(0, 0)
		} else {
			bytes = k.OutputBytes(src.lo, src.hi)
		}
	}
	f, err := r.arrive(StageGather, 0, 0, func(s *Stats) { s.Gathers++; s.BytesOut += int64(bytes) }, out)
	if err != nil {
		return nil, nil, err
	}
	if r.master {
		if f != nil {
			ready = r.compute.enqueue([]shard.Event{ready}, 0, f.Err, func() error { return nil })
		}
		return out, ready, nil
	}
	p := r.newPayload(src.lo, src.hi)
	ev := r.out.enqueue([]shard.Event{ready}, r.c.copyTime(bytes), asyncErr(f), func() error {
		p.v, _ = k.Output(src.v, true)
		return nil
	})
	return p, ev, nil
}

// Result implements shard.Replica: it waits for ready and returns the
// payload's value.
func (r *Replica) Result(_ shard.Task, p shard.Payload, ready shard.Event) (any, error) {
	if _, err := r.arrive(StageResult, 0, 0, func(s *Stats) { s.Results++ }, p); err != nil {
		return nil, err
	}
	if ready != nil {
		if err := ready.Wait(); err != nil {
			return nil, err
		}
	}
	return p.(*payload).v, nil
}

// Apply implements shard.Replica. The mutation is validated and recorded on
// the host side at once (errors are returned here), then applied to the
// device copy on the compute queue, after every query already enqueued.
func (r *Replica) Apply(m shard.Mutation) error {
	f, err := r.arrive(StageApply, 0, 0, func(s *Stats) { s.Applies++ })
	if err != nil {
		return err
	}
	if f != nil && f.Silent {
		return nil
	}
	var run func() error
	switch m := m.(type) {
	case shard.UpdateVertices:
		if err := r.shadow.UpdateVertices(m.Mesh, m.Vertices); err != nil {
			return err
		}
		v := slices.Clone(m.Vertices)
		run = func() error { return r.tables.UpdateVertices(m.Mesh, v) }
	case shard.SyncGeometry:
		run = func() error { r.scene.Refit(); r.dev.commit(r.tables); return nil }
	case shard.SetMeshMask:
		if err := r.shadow.SetMask(m.Mesh, m.Mask); err != nil {
			return err
		}
		run = func() error {
			if err := r.tables.SetMask(m.Mesh, m.Mask); err != nil {
				return err
			}
			r.scene.ReloadMasks()
			return nil
		}
	case shard.SetEdgeMask:
		r.maskMu.Lock()
		r.mask = slices.Clone(m.Mask)
		r.maskMu.Unlock()
		mask := slices.Clone(m.Mask)
		run = func() error { r.dev.mask = mask; return nil }
	default:
		return fmt.Errorf("simdev: unknown mutation %T", m)
	}
	r.compute.enqueue(nil, 0, nil, run)
	r.version.Add(1)
	return nil
}

// Close implements shard.Replica: it waits for the replica's queued work.
func (r *Replica) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	for _, q := range []*queue{&r.compute, &r.in, &r.out} {
		q.mu.Lock()
		tail := q.tail
		q.mu.Unlock()
		if tail != nil {
			<-tail.done
		}
	}
	return nil
}
