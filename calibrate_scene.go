package rayd

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/internal/engine"
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
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	cal, ok := s.eng.Calibration()
	if !ok {
		return calibrate.Calibrate(ctx, nil, o.Probe, o.Options)
	}
	defer cal.Close()
	probe := o.Probe
	switch p := probe.(type) {
	case nil:
		rows := o.Rows
		if rows <= 0 {
			rows = calibrate.DefaultRows
		}
		first := Mesh{Vertices: s.tables.Vertices[:3*s.tables.MeshVertexCount(0)]}
		org, dir := calibrate.DefaultRays(first, rows)
		bp, err := cal.BuiltinProbe(o.Options, engine.Rays{Origins: org, Directions: dir})
		if err != nil {
			return nil, err
		}
		probe = bp
	case *sceneProbe:
		if p.s != s {
			return nil, fmt.Errorf("%w: the probe was made by another scene", ErrInvalidArgument)
		}
		probe = p.bind(&views{s: s, cal: cal, byKey: map[string]*Scene{}})
	}
	rec, err := calibrate.Calibrate(ctx, cal.Layer(), probe, o.Options)
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
// Operation it measures (for example "nearest_edge" for a probe that runs
// NearestEdge).
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
	devs := p.s.eng.Devices()
	i := slices.Index(devs, device)
	if i < 0 {
		return 0, fmt.Errorf("%w: device %d is not one of the scene's %v", ErrInvalidArgument, device, devs)
	}
	w := make([]float64, len(devs))
	w[i] = 1
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
	return p.views.cal.Time(func() error { return p.run(ctx, v) })
}

// views are scenes over the engine's calibration views (engines over the
// scene's own replicas at given weights); they live for one calibration
// and share the scene's tables and edge table.
type views struct {
	s     *Scene
	cal   engine.Calibration
	mu    sync.Mutex
	byKey map[string]*Scene
}

// at returns the view scene dispatching at weights.
func (v *views) at(ctx context.Context, weights []float64) (*Scene, error) {
	key := fmt.Sprint(weights)
	v.mu.Lock()
	defer v.mu.Unlock()
	if sc, ok := v.byKey[key]; ok {
		return sc, nil
	}
	e, err := v.cal.View(ctx, weights)
	if err != nil {
		return nil, err
	}
	sc := &Scene{tables: v.s.tables, backend: v.s.backend, device: v.s.device, log: v.s.log, eng: viewEngine{e},
		edges: v.s.edgeScene(), edgeGen: v.s.edgeGen}
	sc.edgeOnce.Do(func() {})
	v.byKey[key] = sc
	return sc, nil
}

// viewEngine is a calibration view: the calibration closes it, so the view
// scene's Close does not.
type viewEngine struct{ engine.Engine }

func (viewEngine) Close() error { return nil }
