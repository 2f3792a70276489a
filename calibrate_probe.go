package rayd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// callTimer times one synchronous call from a synchronized start: with
// CUDA events on a stream of the master when the scene has CUDA replicas
// (every device synchronized first), with the host clock otherwise.
type callTimer struct {
	devs       []*launch.Device // master first; nil on other sources
	st         *launch.Stream
	start, end *launch.Event
}

// launchDevicer is a replica on a CUDA device.
type launchDevicer interface{ LaunchDevice() *launch.Device }

// cudaReplica is a replica with a BVH on a CUDA device.
type cudaReplica interface {
	launchDevicer
	BVH() *accel.BVH
}

func (s *Scene) newCallTimer() *callTimer {
	t := &callTimer{}
	reps, err := s.layer.Replicas()
	if err != nil {
		return t
	}
	for _, r := range reps {
		ld, ok := shard.Unwrap(r).(launchDevicer)
		if !ok {
			return &callTimer{}
		}
		t.devs = append(t.devs, ld.LaunchDevice())
	}
	return t
}

// time runs fn once and returns its duration.
func (t *callTimer) time(fn func() error) (time.Duration, error) {
	if len(t.devs) == 0 {
		start := time.Now()
		err := fn()
		return time.Since(start), err
	}
	if t.st == nil {
		var err error
		if t.st, err = t.devs[0].NewStream(); err != nil {
			return 0, err
		}
		if t.start, err = t.devs[0].NewEvent(true); err != nil {
			return 0, err
		}
		if t.end, err = t.devs[0].NewEvent(true); err != nil {
			return 0, err
		}
	}
	for _, d := range t.devs {
		if err := d.Synchronize(); err != nil {
			return 0, err
		}
	}
	return timeEvents(t.st, t.start, t.end, fn)
}

// timeEvents records start on st, runs fn (which returns once its work is
// done, or enqueues it on st), records end and returns the elapsed time.
func timeEvents(st *launch.Stream, start, end *launch.Event, fn func() error) (time.Duration, error) {
	if err := start.Record(st); err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	if err := end.Record(st); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := launch.Elapsed(start, end)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

func (t *callTimer) close() error {
	var errs []error
	if t.start != nil {
		errs = append(errs, t.start.Close())
	}
	if t.end != nil {
		errs = append(errs, t.end.Close())
	}
	if t.st != nil {
		errs = append(errs, t.st.Close())
	}
	return errors.Join(errs...)
}

// builtinProbe is calibration's default workload (spec §8.4): rays from
// calibrate.DefaultRays inside the first mesh's box through full intersect,
// or trace_reflections when bounces > 0. On CUDA replicas the rays are
// copied once to every device: stage 1 launches on each replica's BVH with
// resident rays on that device's stream, stage 2 runs the view's device
// fast path on the master's copy. On other sources both stages run the host
// path through the views.
type builtinProbe struct {
	views   *views
	bounces int
	host    Rays
	devs    []*probeDevice // in the layer's device order; nil off CUDA
	generic Probe
}

// probeDevice is one device's resident probe inputs and outputs.
type probeDevice struct {
	ord        int
	bvh        *accel.BVH
	st         *launch.Stream
	start, end *launch.Event
	rays       *DeviceRays
	counter    *launch.Buffer[uint32]
	hits       *DeviceHits
	refl       *DeviceReflections
}

func (s *Scene) builtinProbe(v *views, o calibrate.Options) (*builtinProbe, error) {
	rows := o.Rows
	if rows <= 0 {
		rows = calibrate.DefaultRows
	}
	first := Mesh{Vertices: s.tables.Vertices[:3*s.tables.MeshVertexCount(0)]}
	org, dir := calibrate.DefaultRays(first, rows)
	p := &builtinProbe{views: v, bounces: o.MaxBounces, host: Rays{Origins: org, Directions: dir}}
	reps, err := s.layer.Replicas()
	if err != nil {
		return nil, err
	}
	cuda := len(v.timer.devs) > 0
	for _, r := range reps {
		if _, ok := shard.Unwrap(r).(cudaReplica); !ok {
			cuda = false
		}
	}
	if !cuda {
		p.generic = s.NewProbe(p.runHost).(*sceneProbe).bind(v)
		return p, nil
	}
	for _, r := range reps {
		cr := shard.Unwrap(r).(cudaReplica)
		pd, err := newProbeDevice(cr.LaunchDevice(), cr.BVH(), p.host, p.bounces)
		if pd != nil {
			pd.ord = r.Device()
			p.devs = append(p.devs, pd)
		}
		if err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

func (p *builtinProbe) runHost(ctx context.Context, on *Scene) error {
	if p.bounces > 0 {
		_, err := on.TraceReflections(ctx, p.host, p.bounces)
		return err
	}
	_, err := on.Intersect(ctx, p.host, FlagsAll)
	return err
}

// TimeReplica times the probe on device's replica alone.
func (p *builtinProbe) TimeReplica(ctx context.Context, device int) (time.Duration, error) {
	if p.generic != nil {
		return p.generic.TimeReplica(ctx, device)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, d := range p.devs {
		if d.ord == device {
			return d.time(p.bounces)
		}
	}
	return 0, fmt.Errorf("%w: device %d is not one of the scene's", ErrInvalidArgument, device)
}

// TimeDispatch times the probe through the dispatch at weights, its rays
// resident on the master.
func (p *builtinProbe) TimeDispatch(ctx context.Context, weights []float64) (time.Duration, error) {
	if p.generic != nil {
		return p.generic.TimeDispatch(ctx, weights)
	}
	v, err := p.views.at(ctx, weights)
	if err != nil {
		return 0, err
	}
	m := p.devs[0]
	return p.views.timer.time(func() error {
		if p.bounces > 0 {
			return v.TraceReflectionsInto(ctx, m.rays, m.refl)
		}
		return v.IntersectInto(ctx, m.rays, m.hits)
	})
}

func (p *builtinProbe) close() {
	for _, d := range p.devs {
		d.close()
	}
}

// newProbeDevice copies the probe rays to dev and allocates the outputs.
func newProbeDevice(dev *launch.Device, bvh *accel.BVH, host Rays, bounces int) (_ *probeDevice, err error) {
	d := &probeDevice{bvh: bvh}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
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
	n := host.Len()
	d.rays = &DeviceRays{N: n}
	if d.rays.Origins, err = launch.Alloc[float32](dev, 3*n); err != nil {
		return d, err
	}
	if d.rays.Directions, err = launch.Alloc[float32](dev, 3*n); err != nil {
		return d, err
	}
	if err = d.rays.Origins.Upload(d.st, host.Origins); err != nil {
		return d, err
	}
	if err = d.rays.Directions.Upload(d.st, host.Directions); err != nil {
		return d, err
	}
	if bounces > 0 {
		d.refl, err = allocReflections(dev, n, bounces, false)
	} else {
		d.hits, err = allocHits(dev, n, FlagsAll)
	}
	if err != nil {
		return d, err
	}
	return d, d.st.Synchronize()
}

// time runs the probe once on this device's BVH with its resident rays.
func (d *probeDevice) time(bounces int) (time.Duration, error) {
	r := accel.Rays{O: d.rays.Origins, D: d.rays.Directions, N: d.rays.N, Counter: d.counter}
	return timeEvents(d.st, d.start, d.end, func() error {
		if bounces > 0 {
			return d.bvh.TraceReflections(d.st, r, bounces, accel.Reflections{Valid: d.refl.Valid, T: d.refl.T, Prim: d.refl.PrimIDs})
		}
		h := d.hits
		return d.bvh.Intersect(d.st, r, FlagsAll, accel.Hits{T: h.T, P: h.P, N: h.Normal, GeoN: h.GeoN, UV: h.UV,
			Bary: h.Bary, ShapeID: h.ShapeID, PrimID: h.PrimID, LocalPrimID: h.LocalPrimID, GlobalPrimID: h.GlobalPrimID})
	})
}

func (d *probeDevice) close() {
	if d.st != nil {
		_ = d.st.Synchronize()
	}
	if d.rays != nil {
		_ = d.rays.Close()
	}
	if d.hits != nil {
		_ = d.hits.Close()
	}
	if d.refl != nil {
		_ = d.refl.Close()
	}
	_ = d.counter.Close()
	if d.start != nil {
		_ = d.start.Close()
	}
	if d.end != nil {
		_ = d.end.Close()
	}
	if d.st != nil {
		_ = d.st.Close()
	}
}
