package rayd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/shard"
)

// CalibrationRecord is the outcome of Scene.Calibrate: per-device probe
// times, the refinement ladder with its times, the chosen weights and the
// margin to the master alone. String prints RayD's describe() lines; the
// record marshals to JSON.
type CalibrationRecord = calibrate.Record

// Probe runs and times a calibration workload (see package calibrate).
// Scene.NewProbe makes one from a function of the scene.
type Probe = calibrate.Probe

// CalibrateOptions are the arguments of Scene.Calibrate: calibrate.Options
// (operation, probe rows, bounces, repeats, warm-up, decision mode, ...) and
// an optional custom probe.
type CalibrateOptions struct {
	calibrate.Options
	// Probe is a custom probe, which must name its Operation; nil is the
	// built-in probe: calibrate.DefaultRays through full intersect (or
	// trace_reflections with MaxBounces bounces), which measures
	// calibrate.DefaultOperation(MaxBounces) only.
	Probe Probe
}

// Calibrate measures how to split an operation across the scene's devices
// and stores the chosen weights under the operation's exact key, where
// every later call of that operation (and DeviceWeights) finds them; the
// other operations keep their split, and the weights survive a rebuild of
// the replicas. It needs a replicated scene of at least two devices
// (calibrate.ErrNeedsDevices otherwise; nothing changes on any error).
//
// Stage 1 times the probe on every device alone and stage 2 times the real
// multi-device dispatch on the ladder of remote shares (see package
// calibrate). Both run on a calibration layer over the scene's own replicas
// whose per-device row floor is 1, so every rung really runs split. The
// built-in probe on CUDA replicas keeps its rays resident on each device
// for stage 1 and on the master for stage 2 and times with CUDA events.
func (s *Scene) Calibrate(ctx context.Context, o CalibrateOptions) (*CalibrationRecord, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if s.layer == nil || len(s.layer.Devices()) < 2 {
		return calibrate.Calibrate(ctx, nil, o.Probe, o.Options)
	}
	views := s.newViews()
	defer views.close()
	probe := o.Probe
	if p, ok := probe.(*sceneProbe); ok && p.s != s {
		return nil, fmt.Errorf("%w: the probe was made by another scene", ErrInvalidArgument)
	}
	if probe == nil {
		bp, err := s.builtinProbe(views, o.Options)
		if err != nil {
			return nil, err
		}
		defer bp.close()
		probe = calibrate.BuiltIn(bp)
	} else if p, ok := probe.(*sceneProbe); ok {
		probe = p.bind(views)
	}
	rec, err := calibrate.Calibrate(ctx, s.layer, probe, o.Options)
	if err != nil {
		return nil, err
	}
	s.calMu.Lock()
	s.lastCal = rec
	s.calMu.Unlock()
	return rec, nil
}

// LastCalibration is the record of the scene's latest successful
// calibration, or nil.
func (s *Scene) LastCalibration() *CalibrationRecord {
	s.calMu.Lock()
	defer s.calMu.Unlock()
	return s.lastCal
}

// NewProbe makes a custom probe from run, which must run the workload once
// on the scene it is given, positionally, with inputs it builds itself (it
// may cache them across calls): in stage 1 a view of this scene that runs
// every operation on one device alone, in stage 2 one that dispatches at
// the rung's weights. Each call is timed from a synchronized start to its
// return (CUDA events on the master when the scene has CUDA replicas, the
// host clock otherwise). Pass it in CalibrateOptions.Probe with the
// Operation it measures.
func (s *Scene) NewProbe(run func(ctx context.Context, on *Scene) error) Probe {
	return &sceneProbe{s: s, run: run}
}

// sceneProbe is NewProbe's probe; bind attaches the views of one
// calibration.
type sceneProbe struct {
	s     *Scene
	run   func(ctx context.Context, on *Scene) error
	views *views
}

func (p *sceneProbe) bind(v *views) *sceneProbe { return &sceneProbe{s: p.s, run: p.run, views: v} }

// TimeReplica runs the workload on device's view alone.
func (p *sceneProbe) TimeReplica(ctx context.Context, device int) (time.Duration, error) {
	if p.views == nil {
		return 0, fmt.Errorf("%w: a scene probe runs inside Scene.Calibrate only", ErrInvalidArgument)
	}
	w, err := p.views.oneHot(device)
	if err != nil {
		return 0, err
	}
	return p.timeOn(ctx, w)
}

// TimeDispatch runs the workload on the view at weights.
func (p *sceneProbe) TimeDispatch(ctx context.Context, weights []float64) (time.Duration, error) {
	if p.views == nil {
		return 0, fmt.Errorf("%w: a scene probe runs inside Scene.Calibrate only", ErrInvalidArgument)
	}
	return p.timeOn(ctx, weights)
}

func (p *sceneProbe) timeOn(ctx context.Context, weights []float64) (time.Duration, error) {
	v, err := p.views.at(ctx, weights)
	if err != nil {
		return 0, err
	}
	return p.views.timer.time(func() error { return p.run(ctx, v) })
}

// views are scenes over the scene's own replicas, one per weight vector,
// planned with the scene's options but a row floor of 1 and those weights
// for every operation. They live for one calibration.
type views struct {
	s     *Scene
	timer *callTimer
	mu    sync.Mutex
	byKey map[string]*Scene
}

func (s *Scene) newViews() *views {
	return &views{s: s, timer: s.newCallTimer(), byKey: map[string]*Scene{}}
}

// oneHot is the weight vector that runs everything on device.
func (v *views) oneHot(device int) ([]float64, error) {
	devs := v.s.layer.Devices()
	i := slices.Index(devs, device)
	if i < 0 {
		return nil, fmt.Errorf("%w: device %d is not one of the scene's %v", ErrInvalidArgument, device, devs)
	}
	w := make([]float64, len(devs))
	w[i] = 1
	return w, nil
}

// at returns the view dispatching at weights, planning it on first use.
func (v *views) at(ctx context.Context, weights []float64) (*Scene, error) {
	key := weightKey(weights)
	v.mu.Lock()
	defer v.mu.Unlock()
	if sc, ok := v.byKey[key]; ok {
		return sc, nil
	}
	le, ok := v.s.eng.(*layerEngine)
	if !ok || le.topo == nil {
		return nil, fmt.Errorf("%w: the scene has no replica topology to calibrate on", ErrMultiDeviceUnavailable)
	}
	reps, err := v.s.layer.Replicas()
	if err != nil {
		return nil, err
	}
	o := v.s.layer.Options()
	o.Weights, o.OperationWeights = slices.Clone(weights), nil
	o.MinRaysPerDevice, o.SkipWarmUp = 1, true
	l, err := shard.Plan(v.s.layer.Devices(), le.topo, o)
	if err != nil {
		return nil, err
	}
	if err := l.Build(ctx, shard.Borrow(reps)); err != nil {
		_ = l.Close()
		return nil, err
	}
	sc := &Scene{tables: v.s.tables, backend: v.s.backend, device: v.s.device, log: v.s.log,
		layer: l, eng: &layerEngine{l: l, dev: le.dev, topo: le.topo, streams: make(chan *masterSlot, streamSlots)}}
	v.byKey[key] = sc
	return sc, nil
}

// close closes every view (the borrowed replicas stay open).
func (v *views) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, sc := range v.byKey {
		_ = sc.Close()
	}
	v.byKey = nil
	_ = v.timer.close()
}

func weightKey(w []float64) string {
	parts := make([]string, len(w))
	for i, x := range w {
		parts[i] = fmt.Sprintf("%x", x)
	}
	return strings.Join(parts, ",")
}
