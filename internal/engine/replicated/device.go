package replicated

import (
	"context"
	"errors"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// slotCount is how many master stream slots the fast paths keep.
const slotCount = cuda.Slots

// masterSlot is a stream of the master with its own persistent-launch
// counter (for a call the layer runs as the single-device call).
type masterSlot struct {
	st      *launch.Stream
	counter *launch.Buffer[uint32]
}

func (m *masterSlot) close() {
	_ = m.st.Close()
	_ = m.counter.Close()
}

// FastDevice is the master's device on CUDA replicas.
func (e *Engine) FastDevice() (*launch.Device, error) {
	if e.dev == nil {
		return nil, engine.NeedsGPU(e.Describe(), "device buffers")
	}
	return e.dev, nil
}

// acquire takes a master slot (created on first use, up to slotCount
// kept).
func (e *Engine) acquire(ctx context.Context) (*masterSlot, error) {
	select {
	case m := <-e.slots:
		return m, nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dev, err := e.FastDevice()
	if err != nil {
		return nil, err
	}
	st, err := dev.NewStream()
	if err != nil {
		return nil, err
	}
	c, err := launch.Alloc[uint32](dev, 1)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return &masterSlot{st: st, counter: c}, nil
}

// release returns m to the pool (or closes it when the pool is full).
func (e *Engine) release(m *masterSlot) {
	select {
	case e.slots <- m:
	default:
		m.close()
	}
}

// WithStream runs fn on a master stream and waits for it.
func (e *Engine) WithStream(ctx context.Context, fn func(*launch.Stream) error) error {
	m, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(m)
	if err := fn(m.st); err != nil {
		_ = m.st.Synchronize()
		return err
	}
	return m.st.Synchronize()
}

// masterBVH returns the master replica's BVH and the replica, for a call
// the plan keeps on the master.
func (e *Engine) masterBVH(rep shard.Replica) (*replica.Replica, error) {
	if e.cuda != nil {
		if r, ok := e.cuda.Lookup(rep); ok {
			return r, nil
		}
	}
	return nil, engine.Unsupported(e.Describe(), "device buffers", "the master replica is not a CUDA device")
}

// fast runs a device fast path: the whole batch on the master replica as
// the single-device call when the plan keeps it there
// (shard.RowsOnMaster), otherwise the device task through the layer, whose
// chunks are ordered on a master stream; one wait at the end.
func fast[R any](ctx context.Context, e *Engine, task func(st *launch.Stream) shard.RowTask[R],
	direct func(b *accel.BVH, st *launch.Stream, counter *launch.Buffer[uint32]) error) error {
	m, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(m)
	t := task(m.st)
	defer e.l.Count()()
	rep, onMaster, err := shard.RowsOnMaster(e.l, t)
	if err != nil {
		return err
	}
	if onMaster {
		r, err := e.masterBVH(rep)
		if err != nil {
			return err
		}
		err = onReplica(rep, func() error { return direct(r.BVH(), m.st, m.counter) })
		if err != nil {
			_ = m.st.Synchronize()
			return err
		}
		return m.st.Synchronize()
	}
	if _, err := shard.RunRows(ctx, e.l, t); err != nil {
		_ = m.st.Synchronize() // copies of the inputs may still be queued
		return err
	}
	return m.st.Synchronize()
}

// onReplica runs fn as the single-device call on replica rep: it first
// waits for the replica's latest geometry (its entry edge, after a refit
// that may still be queued on the replica's own stream), and records the
// exit edge afterwards, as a layer call does.
func onReplica(rep shard.Replica, fn func() error) error {
	entry, err := rep.Enter(nil)
	if err != nil {
		return err
	}
	if entry != nil {
		if err := entry.Wait(); err != nil {
			return err
		}
	}
	return errors.Join(fn(), rep.Exit())
}

// IntersectInto shards intersect over device rays into out.
func (e *Engine) IntersectInto(ctx context.Context, r engine.DeviceRays, flags geom.Flags, out engine.DeviceHits) error {
	rays, hits := cuda.RaysOf(r), cuda.HitsOf(out)
	return fast(ctx, e, func(st *launch.Stream) shard.RowTask[accel.Hits] {
		return &replica.DeviceIntersect{Rays: rays, Flags: flags, Out: hits, Stream: st}
	}, func(b *accel.BVH, st *launch.Stream, c *launch.Buffer[uint32]) error {
		rc := rays
		rc.Counter = c
		return b.Intersect(st, rc, flags, hits)
	})
}

// TraceReflectionsInto shards trace_reflections over device rays into out.
func (e *Engine) TraceReflectionsInto(ctx context.Context, r engine.DeviceRays, bounces int, out engine.DeviceReflections) error {
	rays, refl := cuda.RaysOf(r), cuda.ReflectionsOf(out)
	return fast(ctx, e, func(st *launch.Stream) shard.RowTask[accel.Reflections] {
		return &replica.DeviceReflections{Rays: rays, Bounces: bounces, Out: refl, Stream: st}
	}, func(b *accel.BVH, st *launch.Stream, c *launch.Buffer[uint32]) error {
		rc := rays
		rc.Counter = c
		return b.TraceReflections(st, rc, bounces, refl)
	})
}

// VisibleInto shards visible over device segments into out.
func (e *Engine) VisibleInto(ctx context.Context, r engine.DeviceRays, out *launch.Buffer[uint8]) error {
	seg := accel.Segments{Start: r.Origins, End: r.Directions, Active: r.Active, N: r.N}
	return fast(ctx, e, func(st *launch.Stream) shard.RowTask[*launch.Buffer[uint8]] {
		return &replica.DeviceVisible{Segments: seg, Out: out, Stream: st}
	}, func(b *accel.BVH, st *launch.Stream, c *launch.Buffer[uint32]) error {
		sc := seg
		sc.Counter = c
		return b.Visible(st, sc, out)
	})
}

// IntersectVJPInto runs the backward pass on the master replica's device:
// the caller's buffers are the master's and the vertex gradient stays
// there, ready for the caller's reduction.
func (e *Engine) IntersectVJPInto(ctx context.Context, r engine.DeviceRays, tape engine.DeviceTape, g engine.DeviceCotangents, out engine.DeviceGrads) error {
	m, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(m)
	rep, err := e.l.MasterReplica()
	if err != nil {
		return err
	}
	cr, err := e.masterBVH(rep)
	if err != nil {
		return err
	}
	rays := accel.Rays{O: r.Origins, D: r.Directions, Active: r.Active, N: r.N}
	cot := accel.Cotangents{T: g.T, P: g.P, N: g.N, GeoN: g.GeoN, UV: g.UV, Bary: g.Bary}
	grads := accel.Grads{Vertices: out.Vertices, Origins: out.Origins, Directions: out.Directions}
	err = onReplica(rep, func() error {
		return cr.BVH().IntersectVJP(m.st, rays, accel.Tape{Prim: tape.Prim, UV: tape.UV}, cot, grads)
	})
	return errors.Join(err, m.st.Synchronize())
}

// Memory reports every replica's device allocations, master first; nil
// when the replicas are not CUDA devices.
func (e *Engine) Memory() []engine.Memory {
	var out []engine.Memory
	for _, d := range e.devices() {
		cur, peak := d.Allocated()
		out = append(out, engine.Memory{Device: d.Ordinal(), Current: cur, Peak: peak})
	}
	return out
}

// ResetPeak resets every replica device's high-water mark.
func (e *Engine) ResetPeak() {
	for _, d := range e.devices() {
		d.ResetPeak()
	}
}

// devices are the replicas' devices in layer order (nil off CUDA).
func (e *Engine) devices() []*launch.Device {
	if e.cuda == nil {
		return nil
	}
	reps, err := e.l.Replicas()
	if err != nil {
		return nil
	}
	var devs []*launch.Device
	for _, r := range reps {
		cr, ok := e.cuda.Lookup(r)
		if !ok {
			return nil
		}
		devs = append(devs, cr.LaunchDevice())
	}
	return devs
}
