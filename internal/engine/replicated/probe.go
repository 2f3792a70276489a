package replicated

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/launch"
)

// builtinProbe is calibration's default workload (spec §8.4): the probe
// rays through full intersect, or trace_reflections when bounces > 0. On
// CUDA replicas the rays are copied once to every device: stage 1 launches
// on each replica's BVH with resident rays on that device's stream, stage 2
// runs the view's device fast path on the master's copy. On other sources
// both stages run the host path through the views.
type builtinProbe struct {
	c       *calibration
	bounces int
	host    engine.Rays
	devs    []*probeDevice // in the layer's order; nil off CUDA
}

// probeDevice is one replica's resident probe inputs and outputs.
type probeDevice struct {
	ord        int
	bvh        *accel.BVH
	st         *launch.Stream
	start, end *launch.Event
	counter    *launch.Buffer[uint32]
	rays       engine.DeviceRays
	bufs       []interface{ Close() error }
	hits       engine.DeviceHits
	refl       engine.DeviceReflections
}

// BuiltinProbe returns the built-in probe over the probe rays r.
func (c *calibration) BuiltinProbe(o calibrate.Options, r engine.Rays) (calibrate.Probe, error) {
	p := &builtinProbe{c: c, bounces: o.MaxBounces, host: r}
	devs := c.e.devices()
	if len(devs) == 0 {
		return calibrate.BuiltIn(p), nil
	}
	reps, err := c.e.l.Replicas()
	if err != nil {
		return nil, err
	}
	for _, rep := range reps {
		cr, ok := c.e.cuda.Lookup(rep)
		if !ok {
			p.close()
			return nil, engine.Unsupported(c.e.Describe(), "calibration", "a replica is not a CUDA device")
		}
		pd, err := newProbeDevice(cr.LaunchDevice(), cr.BVH(), r, p.bounces)
		if pd != nil {
			pd.ord = rep.Device()
			p.devs = append(p.devs, pd)
		}
		if err != nil {
			p.close()
			return nil, err
		}
	}
	c.probe = p
	return calibrate.BuiltIn(p), nil
}

// runOn runs the probe's host path on an engine.
func (p *builtinProbe) runOn(ctx context.Context, e engine.Engine) error {
	if p.bounces > 0 {
		_, err := e.TraceReflections(ctx, p.host, p.bounces)
		return err
	}
	_, err := e.Intersect(ctx, p.host, geom.FlagsAll)
	return err
}

// TimeReplica times the probe on device's replica alone.
func (p *builtinProbe) TimeReplica(ctx context.Context, device int) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if p.devs == nil {
		w, err := p.c.oneHot(device)
		if err != nil {
			return 0, err
		}
		return p.TimeDispatch(ctx, w)
	}
	for _, d := range p.devs {
		if d.ord == device {
			return d.time(p.bounces)
		}
	}
	return 0, fmt.Errorf("rayd: device %d is not one of the scene's", device)
}

// TimeDispatch times the probe through the dispatch at weights, its rays
// resident on the master.
func (p *builtinProbe) TimeDispatch(ctx context.Context, weights []float64) (time.Duration, error) {
	v, err := p.c.view(ctx, weights)
	if err != nil {
		return 0, err
	}
	if p.devs == nil {
		return p.c.Time(func() error { return p.runOn(ctx, v) })
	}
	m := p.devs[0]
	return p.c.Time(func() error {
		if p.bounces > 0 {
			return v.TraceReflectionsInto(ctx, m.rays, p.bounces, m.refl)
		}
		return v.IntersectInto(ctx, m.rays, geom.FlagsAll, m.hits)
	})
}

func (p *builtinProbe) close() {
	for _, d := range p.devs {
		d.close()
	}
	p.devs = nil
}

// newProbeDevice copies the probe rays to dev and allocates the outputs.
func newProbeDevice(dev *launch.Device, bvh *accel.BVH, host engine.Rays, bounces int) (_ *probeDevice, err error) {
	d := &probeDevice{bvh: bvh}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	n := host.Len()
	f32 := func(k int) *launch.Buffer[float32] {
		if err != nil {
			return nil
		}
		var b *launch.Buffer[float32]
		if b, err = launch.Alloc[float32](dev, k); err == nil {
			d.bufs = append(d.bufs, b)
		}
		return b
	}
	i32 := func(k int) *launch.Buffer[int32] {
		if err != nil {
			return nil
		}
		var b *launch.Buffer[int32]
		if b, err = launch.Alloc[int32](dev, k); err == nil {
			d.bufs = append(d.bufs, b)
		}
		return b
	}
	if d.st, err = dev.NewStream(); err != nil {
		return nil, err
	}
	if d.start, err = dev.NewEvent(true); err != nil {
		return d, err
	}
	if d.end, err = dev.NewEvent(true); err != nil {
		return d, err
	}
	if d.counter, err = launch.Alloc[uint32](dev, 1); err != nil {
		return d, err
	}
	d.rays = engine.DeviceRays{Origins: f32(3 * n), Directions: f32(3 * n), N: n}
	if bounces > 0 {
		d.refl = engine.DeviceReflections{T: f32(n * bounces), PrimIDs: i32(n * bounces)}
		if err == nil {
			var v *launch.Buffer[uint8]
			if v, err = launch.Alloc[uint8](dev, n*bounces); err == nil {
				d.bufs = append(d.bufs, v)
				d.refl.Valid = v
			}
		}
	} else {
		d.hits = engine.DeviceHits{T: f32(n), P: f32(3 * n), Normal: f32(3 * n), GeoN: f32(3 * n), UV: f32(2 * n), Bary: f32(3 * n),
			ShapeID: i32(n), PrimID: i32(n), LocalPrimID: i32(n), GlobalPrimID: i32(n)}
	}
	if err != nil {
		return d, err
	}
	if err = d.rays.Origins.Upload(d.st, host.Origins); err != nil {
		return d, err
	}
	if err = d.rays.Directions.Upload(d.st, host.Directions); err != nil {
		return d, err
	}
	return d, d.st.Synchronize()
}

// time runs the probe once on this device's BVH with its resident rays.
func (d *probeDevice) time(bounces int) (time.Duration, error) {
	r := cuda.RaysOf(d.rays)
	r.Counter = d.counter
	return timeEvents(d.st, d.start, d.end, func() error {
		if bounces > 0 {
			return d.bvh.TraceReflections(d.st, r, bounces, cuda.ReflectionsOf(d.refl))
		}
		return d.bvh.Intersect(d.st, r, geom.FlagsAll, cuda.HitsOf(d.hits))
	})
}

func (d *probeDevice) close() {
	var errs []error
	if d.st != nil {
		errs = append(errs, d.st.Synchronize())
	}
	for _, b := range d.bufs {
		errs = append(errs, b.Close())
	}
	if d.counter != nil {
		errs = append(errs, d.counter.Close())
	}
	for _, ev := range []*launch.Event{d.start, d.end} {
		if ev != nil {
			errs = append(errs, ev.Close())
		}
	}
	if d.st != nil {
		errs = append(errs, d.st.Close())
	}
	_ = errors.Join(errs...)
}
