package replicated

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// noInstances is why an engine over simulated replicas refuses instances.
const noInstances = "instanced scenes need CUDA replicas"

// instances is the instance layer of a replicated engine: one
// accel.InstanceLayer per layer position (its own stream, so two positions
// on one device stay independent). Instanced intersect shards rows across
// the positions by the layer's intersect weights, each position answering
// its contiguous rows with the single-device kernel: the record is the one
// device's bit for bit. Transform updates are broadcast to every position;
// a failed broadcast poisons the instance layer until it is rebuilt
// (Scene.Rebuild).
type instances struct {
	table  *geom.Instances
	pos    []instancePos
	poison error
}

type instancePos struct {
	s     *launch.Stream
	layer *accel.InstanceLayer
}

// SetInstances builds an instance layer on every replica (CUDA replicas
// only).
func (e *Engine) SetInstances(ctx context.Context, x *geom.Instances) error {
	if e.cuda == nil {
		return engine.Unsupported(e.Describe(), "instances", noInstances)
	}
	reps, err := e.l.Replicas()
	if err != nil {
		return err
	}
	in := &instances{table: x}
	for _, rep := range reps {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, in.close())
		}
		cr, ok := e.cuda.Lookup(rep)
		if !ok {
			return errors.Join(engine.Unsupported(e.Describe(), "instances", noInstances), in.close())
		}
		s, err := cr.LaunchDevice().NewStream()
		if err != nil {
			return errors.Join(err, in.close())
		}
		l, err := accel.NewInstanceLayer(s, e.tables, x, accel.Options{})
		if err != nil {
			return errors.Join(err, s.Close(), in.close())
		}
		if err := l.FollowMeshMasks(s, e.tables); err != nil {
			return errors.Join(err, l.Close(), s.Close(), in.close())
		}
		in.pos = append(in.pos, instancePos{s: s, layer: l})
	}
	old := e.inst
	e.inst = in
	if old != nil {
		return old.close()
	}
	return nil
}

// UpdateInstances broadcasts the table's transforms to every position (the
// top levels only); a failure poisons the instance layer.
func (e *Engine) UpdateInstances(ctx context.Context, _, _ int) error {
	if e.inst == nil {
		return engine.Unsupported(e.Describe(), "SetInstanceTransforms", "the scene has no instances")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	errs := e.inst.each(func(p instancePos, _ int) error {
		if err := p.layer.Update(p.s, e.inst.table); err != nil {
			return err
		}
		return p.s.Synchronize()
	})
	if errs != nil {
		e.inst.poison = &shard.PoisonedError{Operation: "SetInstanceTransforms", Cause: errs}
		return e.poisonNote(e.inst.poison)
	}
	return nil
}

// IntersectInstanced splits the rows across the positions by the layer's
// intersect weights and runs each part on its position.
func (e *Engine) IntersectInstanced(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	if e.inst == nil {
		return nil, engine.Unsupported(e.Describe(), "IntersectInstanced", "the scene has no instances")
	}
	if e.inst.poison != nil {
		return nil, e.poisonNote(e.inst.poison)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := r.Len()
	h := geom.NewHitsZeroed(n, flags)
	if h.Flags.Has(geom.FlagGeometric) {
		h.InstanceID = make([]int32, n)
	}
	if n == 0 {
		return h, nil
	}
	w, err := e.l.WeightsFor("intersect")
	if err != nil {
		return nil, e.poisonNote(err)
	}
	bounds := splitRows(n, w, len(e.inst.pos))
	err = e.inst.each(func(p instancePos, k int) error {
		lo, hi := bounds[k], bounds[k+1]
		if lo == hi {
			return nil
		}
		return intersectPart(p, r, flags, h, lo, hi)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// splitRows cuts n rows into m contiguous parts proportional to w (equal
// parts when w does not have m positive entries): part k is
// [out[k], out[k+1]).
func splitRows(n int, w []float64, m int) []int {
	out := make([]int, m+1)
	var sum float64
	ok := len(w) == m
	for _, x := range w {
		ok = ok && x > 0
		sum += x
	}
	acc := 0.0
	for k := range m {
		share := 1.0 / float64(m)
		if ok {
			share = w[k] / sum
		}
		acc += share
		out[k+1] = min(n, int(acc*float64(n)+0.5))
	}
	out[m] = n
	for k := 1; k <= m; k++ {
		out[k] = max(out[k], out[k-1])
	}
	return out
}

// intersectPart runs rows [lo, hi) of r, with their limits (tmin, mask),
// on position p and writes them into h.
func intersectPart(p instancePos, r engine.Rays, flags geom.Flags, h *geom.Hits, lo, hi int) (err error) {
	n := hi - lo
	d := p.s.Device()
	var bufs []interface{ Close() error }
	defer func() {
		for _, b := range bufs {
			err = errors.Join(err, b.Close())
		}
	}()
	alloc32 := func(n int) *launch.Buffer[float32] {
		if err != nil {
			return nil
		}
		b, e := launch.Alloc[float32](d, max(n, 1))
		if b != nil {
			bufs = append(bufs, b)
		}
		err = e
		return b
	}
	f32 := func(src []float32) *launch.Buffer[float32] {
		b := alloc32(len(src))
		if err == nil && len(src) > 0 {
			err = b.Upload(p.s, src)
		}
		return b
	}
	out32 := func(dst []float32) *launch.Buffer[float32] {
		if dst == nil {
			return nil
		}
		return alloc32(len(dst))
	}
	i32 := func(dst []int32) *launch.Buffer[int32] {
		if dst == nil || err != nil {
			return nil
		}
		b, e := launch.Alloc[int32](d, max(len(dst), 1))
		if b != nil {
			bufs = append(bufs, b)
		}
		err = e
		return b
	}
	dr := accel.Rays{O: f32(r.Origins[3*lo : 3*hi]), D: f32(r.Directions[3*lo : 3*hi]), N: n}
	if len(r.TMax) > 0 {
		dr.TMax = f32(r.TMax[lo:hi])
	}
	if len(r.TMin) > 0 {
		dr.TMin = f32(r.TMin[lo:hi])
	}
	if len(r.Mask) > 0 && err == nil {
		b, e := launch.Alloc[uint8](d, n)
		if b != nil {
			bufs = append(bufs, b)
		}
		if err = e; err == nil {
			err = b.Upload(p.s, r.Mask[lo:hi])
		}
		dr.Mask = b
	}
	if len(r.Active) > 0 && err == nil {
		a := make([]uint8, n)
		for i, v := range r.Active[lo:hi] {
			if v {
				a[i] = 1
			}
		}
		b, e := launch.Alloc[uint8](d, n)
		if b != nil {
			bufs = append(bufs, b)
		}
		if err = e; err == nil {
			err = b.Upload(p.s, a)
		}
		dr.Active = b
	}
	sub := func(v []float32, per int) []float32 {
		if v == nil {
			return nil
		}
		return v[per*lo : per*hi]
	}
	subI := func(v []int32) []int32 {
		if v == nil {
			return nil
		}
		return v[lo:hi]
	}
	f := []struct {
		dst []float32
		buf **launch.Buffer[float32]
	}{}
	out := accel.Hits{}
	for _, c := range []struct {
		dst []float32
		buf **launch.Buffer[float32]
	}{{sub(h.T, 1), &out.T}, {sub(h.P, 3), &out.P}, {sub(h.N, 3), &out.N}, {sub(h.GeoN, 3), &out.GeoN},
		{sub(h.UV, 2), &out.UV}, {sub(h.Bary, 3), &out.Bary}} {
		*c.buf = out32(c.dst)
		f = append(f, c)
	}
	ids := []struct {
		dst []int32
		buf **launch.Buffer[int32]
	}{{subI(h.ShapeID), &out.ShapeID}, {subI(h.PrimID), &out.PrimID}, {subI(h.LocalPrimID), &out.LocalPrimID},
		{subI(h.GlobalPrimID), &out.GlobalPrimID}}
	for _, c := range ids {
		*c.buf = i32(c.dst)
	}
	inst := i32(subI(h.InstanceID))
	if err != nil {
		return err
	}
	if err := p.layer.Intersect(p.s, dr, flags, out, inst); err != nil {
		return err
	}
	for _, c := range f {
		if *c.buf != nil {
			if err := (*c.buf).Download(p.s, c.dst); err != nil {
				return err
			}
		}
	}
	ids = append(ids, struct {
		dst []int32
		buf **launch.Buffer[int32]
	}{subI(h.InstanceID), &inst})
	for _, c := range ids {
		if *c.buf != nil {
			if err := (*c.buf).Download(p.s, c.dst); err != nil {
				return err
			}
		}
	}
	return nil
}

// InstanceTransformVJP refuses: the transform gradient runs on the CPU
// backend only for now.
func (e *Engine) InstanceTransformVJP(context.Context, engine.Rays, []int32, []int32, []float32, []float32) ([]float64, error) {
	return nil, engine.Unsupported(e.Describe(), "InstanceTransformVJP", "the transform gradient runs on the CPU backend only for now")
}

// each runs fn on every position at once and joins their errors.
func (in *instances) each(fn func(p instancePos, k int) error) error {
	errs := make([]error, len(in.pos))
	var wg sync.WaitGroup
	for k, p := range in.pos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(p, k); err != nil {
				errs[k] = fmt.Errorf("position %d (%v): %w", k, p.s.Device(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// close releases every position's layer and stream.
func (in *instances) close() error {
	var errs []error
	for _, p := range in.pos {
		errs = append(errs, p.layer.Close(), p.s.Close())
	}
	in.pos = nil
	return errors.Join(errs...)
}

// closeInstances releases the instance layer.
func (e *Engine) closeInstances() error {
	if e.inst == nil {
		return nil
	}
	err := e.inst.close()
	e.inst = nil
	return err
}
