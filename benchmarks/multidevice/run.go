package multidevice

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

// Run runs the benchmark on the GPUs and returns its record (not yet
// validated or written). A setup, driver or correctness failure is an
// error; speedups are never thresholded.
func Run(ctx context.Context, o Options) (*benchmarks.Record, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Devices == nil {
		n, err := launch.Count()
		if err != nil {
			return nil, err
		}
		for i := range n {
			o.Devices = append(o.Devices, i)
		}
	}
	if len(o.Devices) == 0 {
		return nil, fmt.Errorf("%w: no device", ErrInvalidOptions)
	}
	c, err := newClock(o.Devices)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rec := &benchmarks.Record{
		SchemaVersion: benchmarks.SchemaVersion, Benchmark: benchmarks.BenchmarkName,
		Provenance: benchmarks.Provenance{Kind: benchmarks.ProvenanceLive, GeneratedAt: time.Now().UTC().Format(time.RFC3339),
			Commit: o.Commit},
		Parameters: benchmarks.Parameters{SelectedConfigs: o.Configs, Devices: o.Devices, Warmup: o.Warmup, Repeat: o.Repeat,
			CalibrationRays: o.CalibrationRays, CalibrationRepeats: o.CalibrationRepeats, CalibrationMode: string(o.CalibrationMode),
			AccumOnly: o.AccumOnly, Rays: o.Rays, AccumSamples: o.AccumSamples, Backend: string(rayd.BackendCUDA)},
		Configs: map[string]benchmarks.Config{},
	}
	if rec.Provenance.PTXManifestSHA256, err = ptxManifestDigest(); err != nil {
		return nil, err
	}
	o.stages = &stageCounter{total: plannedStages(o, len(o.Devices))}
	o.logf("measuring %d devices %v", len(o.Devices), o.Devices)
	if rec.Machine, err = machine(c, o.Devices); err != nil {
		return nil, err
	}
	for _, name := range o.Configs {
		cfg, _ := configNamed(name)
		if o.Rays > 0 {
			cfg = cfg.Scaled(o.Rays)
		}
		if o.AccumSamples > 0 {
			cfg.AccumSamples = o.AccumSamples
		}
		r := &configRun{o: o, cfg: cfg, c: c, devs: o.Devices, d2d: rec.Machine.D2DGBps}
		conf, err := r.run(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rec.Configs[name] = *conf
	}
	return rec, nil
}

// configRun measures one configuration.
type configRun struct {
	o    Options
	cfg  workload.Config
	c    *clock
	devs []int
	d2d  float64
}

// counts are the device counts measured: 1, then 2 … n.
func (r *configRun) counts() []int {
	var out []int
	for k := 2; k <= len(r.devs); k++ {
		out = append(out, k)
	}
	return out
}

func (r *configRun) run(ctx context.Context) (*benchmarks.Config, error) {
	conf := &benchmarks.Config{Note: r.cfg.Note, Triangles: r.cfg.Triangles(), Rays: r.cfg.Rays, MaxBounces: r.cfg.MaxBounces}
	if !r.o.AccumOnly {
		if err := r.perRay(ctx, conf); err != nil {
			return nil, err
		}
	}
	var err error
	if conf.AccumDfrDirect, conf.AccumDfrDirectCalibrated, err = r.accum(ctx); err != nil {
		return nil, err
	}
	return conf, nil
}

// perRay measures the per_ray rows: intersect and trace_reflections on one
// device and on every device count, then (with two or more devices) their
// calibrated rows and the chunked + offload row.
func (r *configRun) perRay(ctx context.Context, conf *benchmarks.Config) (err error) {
	r.o.logf("%s: building %d triangles and %d rays", r.cfg.Name, r.cfg.Triangles(), r.cfg.Rays)
	mesh, org, dir := r.cfg.Build()
	meshes := []rayd.Mesh{mesh}
	rays := rayd.Rays{Origins: org, Directions: dir}
	var vs []*variant
	defer func() {
		for _, v := range vs {
			v.close()
			_ = v.s.Close()
		}
	}()
	add := func(opts ...rayd.Option) error {
		s, err := rayd.NewScene(ctx, meshes, opts...)
		if err != nil {
			return err
		}
		v, err := newVariant(ctx, s, rays, r.cfg.MaxBounces)
		if err != nil {
			_ = s.Close()
			return err
		}
		vs = append(vs, v)
		return nil
	}
	if err := add(rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(r.devs[0])); err != nil {
		return err
	}
	for _, k := range r.counts() {
		if err := add(rayd.WithDevices(r.devs[:k]...)); err != nil {
			return err
		}
	}
	r.o.logf("%s: intersect", r.cfg.Name)
	if conf.Intersect, err = r.perRayRow(ctx, vs, false); err != nil {
		return err
	}
	r.o.logf("%s: trace_reflections(%d)", r.cfg.Name, r.cfg.MaxBounces)
	if conf.TraceReflections, err = r.perRayRow(ctx, vs, true); err != nil {
		return err
	}
	if len(vs) < 2 {
		return nil
	}
	full := vs[len(vs)-1]
	r.o.logf("%s: calibrating intersect", r.cfg.Name)
	if conf.IntersectCalibrated, err = r.calibratedRow(ctx, vs[0], full, false); err != nil {
		return err
	}
	r.o.logf("%s: calibrating trace_reflections(%d)", r.cfg.Name, r.cfg.MaxBounces)
	if conf.TraceReflectionsCalibrated, err = r.calibratedRow(ctx, vs[0], full, true); err != nil {
		return err
	}
	r.o.logf("%s: chunked + offload", r.cfg.Name)
	conf.IntersectOffload, err = r.offloadRow(ctx, meshes, rays)
	return err
}

// newRow starts a row from the single-device rounds.
func (r *configRun) newRow(single timed, batch string, rows int) *benchmarks.Row {
	row := &benchmarks.Row{Batch: batch, SingleMS: single.min(), SingleRoundsMS: single.rounds, Dispatch: "single-device"}
	if rows > 0 {
		row.NsPerRaySingle = row.SingleMS * 1e6 / float64(rows)
	}
	return row
}

// addMulti adds one multi-device variant's figures: the full set fills the
// row (spec §10.3) with the dispatch, transfer path and driver calls of
// the scene's last call (the last timed round), a smaller set a Scaling
// entry.
func (r *configRun) addMulti(row *benchmarks.Row, s *rayd.Scene, t timed, full bool) {
	multi := t.min()
	speed := 0.0
	if multi > 0 {
		speed = row.SingleMS / multi
	}
	d := s.LastDispatch()
	mode, chunks := "", 0
	if d != nil {
		mode = string(d.Mode)
		chunks = len(d.Shards)
	}
	plan := s.LastChunkPlan()
	if plan != nil && mode != "master" {
		chunks = plan.ChunkCount
	}
	if !full {
		row.Scaling = append(row.Scaling, benchmarks.Scale{Devices: len(s.Devices()), MultiMS: multi, Speedup: speed,
			Dispatch: mode, ChunkCount: chunks})
		return
	}
	over := multi - row.SingleMS/2
	row.MultiMS, row.MultiRoundsMS, row.Speedup, row.OverheadMS = &multi, t.rounds, &speed, &over
	row.Devices = len(s.Devices())
	row.Dispatch = mode
	if d != nil {
		row.Path, row.DriverCalls = string(d.Path), d.DriverCalls
	}
	if mode == "master" || d == nil {
		return
	}
	if chunks > 0 {
		row.ChunkCount = chunks
	}
	if plan == nil {
		return
	}
	row.ChunkSource, row.ChunkRows, row.RowBytes = string(plan.Source), plan.ChunkRays, plan.RowBytes
	if plan.MeasuredRowBytes != nil {
		row.MeasuredRowBytes = *plan.MeasuredRowBytes
	}
	if slices.Contains([]string{"pipelined", "chunked", "sharded"}, mode) {
		rb := row.MeasuredRowBytes
		if rb == 0 {
			rb = row.RowBytes
		}
		row.Overlap = benchmarks.OverlapModel(row.SingleMS, multi, plan.TotalRows, plan.ChunkRays, rb, r.d2d)
	}
}
