package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

type configResult struct {
	Name      string         `json:"name"`
	Note      string         `json:"note"`
	Triangles int            `json:"triangles"`
	Rays      int            `json:"rays"`
	Layouts   []layoutResult `json:"layouts"`
	// Reorder is the ray reordering probe (compute, when enabled).
	Reorder *reorderResult `json:"reorder,omitempty"`
	// sweep is the persistent-grid sweep (light, -light-blocks); the
	// report holds it as light_blocks_sweep.
	sweep *blocksSweep
}

type layoutResult struct {
	Backend    string        `json:"backend"` // "bvh" (rayd-go's CUDA BVH) or "optix"
	Width      int           `json:"width"`   // BVH node width; 0 for OptiX
	Nodes      int           `json:"nodes"`
	Height     int           `json:"height"`
	BVHBytes   int64         `json:"bvh_bytes"`
	BuildMs    timing        `json:"build_ms"`
	BuildWall  timing        `json:"build_wall_ms"`
	Queries    []queryResult `json:"queries"`
	FitsInL2   bool          `json:"bvh_fits_in_l2"`
	L2Bytes    int           `json:"l2_bytes"`
	Persistent bool          `json:"persistent_launch"`
}

type timing = benchhead.Timing

var summarize = benchhead.Summarize

type queryResult struct {
	Name string `json:"name"`
	// Launch is the launch configuration timed and checked.
	Launch      string  `json:"launch"`
	RowBytes    int     `json:"row_bytes"` // bytes read + written per row
	Ms          timing  `json:"ms"`
	RaysPerSec  float64 `json:"rays_per_s"`
	NsPerRay    float64 `json:"ns_per_ray"`
	GBPerSec    float64 `json:"gb_per_s"` // row bytes / median time
	Checked     int     `json:"checked_rows"`
	Mismatches  int     `json:"mismatched_rows"`
	BitwiseSame bool    `json:"bitwise_equal_to_reference"`
	// Compared lists the record fields the check compares.
	Compared []string `json:"compared_fields"`
}

func configs(only string, rays int) []workload.Config {
	var out []workload.Config
	for _, c := range []workload.Config{workload.Light, workload.Compute} {
		if only == "" || only == c.Name {
			out = append(out, c.Scaled(rays))
		}
	}
	return out
}

// fixture holds one configuration's device-resident inputs and outputs.
type fixture struct {
	d       *launch.Device
	s       *launch.Stream
	tables  *geom.Tables
	geo     accel.Geometry
	rays    accel.Rays
	ends    *launch.Buffer[float32]
	full    accel.Hits
	tOnly   accel.Hits
	refl    [2]accel.Reflections // B = 1, 4
	vis     *launch.Buffer[uint8]
	counter *launch.Buffer[uint32]
	o, dir  []float32
	bufs    []interface{ Close() error }
}

func upload[T launch.Elem](f *fixture, src []T) (*launch.Buffer[T], error) {
	b, err := launch.Alloc[T](f.d, len(src))
	if err != nil {
		return nil, err
	}
	f.bufs = append(f.bufs, b)
	return b, b.Upload(f.s, src)
}

func alloc[T launch.Elem](f *fixture, n int) *launch.Buffer[T] {
	b, err := launch.Alloc[T](f.d, n)
	if err != nil {
		panic(fmt.Sprintf("alloc %d: %v", n, err)) // sized for the benchmark; recovered in benchConfig
	}
	f.bufs = append(f.bufs, b)
	return b
}

func newFixture(d *launch.Device, cfg workload.Config) (f *fixture, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	mesh, o, dir := cfg.Build()
	t, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		return nil, err
	}
	s, err := d.NewStream()
	if err != nil {
		return nil, err
	}
	f = &fixture{d: d, s: s, tables: t, o: o, dir: dir}
	n := len(o) / 3
	ends := make([]float32, len(o))
	for i := range ends {
		ends[i] = o[i] + dir[i]
	}
	steps := []error{}
	var e error
	f.geo.Vertices, e = upload(f, t.Vertices)
	steps = append(steps, e)
	f.geo.Faces, e = upload(f, t.Faces)
	steps = append(steps, e)
	f.geo.FaceShape, e = upload(f, t.FaceShape)
	steps = append(steps, e)
	f.geo.FaceLocal, e = upload(f, t.FaceLocal)
	steps = append(steps, e)
	f.rays.O, e = upload(f, o)
	steps = append(steps, e)
	f.rays.D, e = upload(f, dir)
	steps = append(steps, e)
	f.ends, e = upload(f, ends)
	steps = append(steps, e)
	for _, e := range steps {
		if e != nil {
			return nil, e
		}
	}
	f.rays.N = n
	f.full = accel.Hits{T: alloc[float32](f, n), P: alloc[float32](f, 3*n), N: alloc[float32](f, 3*n), GeoN: alloc[float32](f, 3*n),
		UV: alloc[float32](f, 2*n), Bary: alloc[float32](f, 3*n), ShapeID: alloc[int32](f, n), PrimID: alloc[int32](f, n),
		LocalPrimID: alloc[int32](f, n), GlobalPrimID: alloc[int32](f, n)}
	f.tOnly = accel.Hits{T: alloc[float32](f, n)}
	for i, b := range []int{1, 4} {
		f.refl[i] = accel.Reflections{Valid: alloc[uint8](f, n*b), T: alloc[float32](f, n*b), Prim: alloc[int32](f, n*b)}
	}
	f.vis = alloc[uint8](f, n)
	f.counter = alloc[uint32](f, 1)
	return f, f.s.Synchronize()
}

func (f *fixture) close() {
	for _, b := range f.bufs {
		_ = b.Close()
	}
	_ = f.s.Close()
}

// variant is one timed operation of a round. run is the exact launch that
// is timed; the check reruns it. prep, when set, runs before each timed
// run, untimed (the stream is synchronized after it).
type variant struct {
	name     string
	rowBytes int
	prep     func() error
	run      func() error
	times    []float64
}

// benchConfig times and checks cfg's layouts; reorder adds the ray
// reordering probe on the quad layout when cfg is the compute scene, and
// perSM (blocks per SM) the persistent-grid sweep of the 2-wide intersect
// when it is the light scene.
func benchConfig(d *launch.Device, cfg workload.Config, rounds, warmup, sample int, reorder bool, perSM []int) (*configResult, error) {
	f, err := newFixture(d, cfg)
	if err != nil {
		return nil, err
	}
	defer f.close()
	n := f.rays.N
	res := &configResult{Name: cfg.Name, Note: cfg.Note, Triangles: f.tables.NumFaces(), Rays: n}
	var built []tracer
	defer func() {
		for _, b := range built {
			_ = b.Close()
		}
	}()
	var all []*variant
	var perLayout [][]*variant
	backends := []backendSpec{
		{name: "bvh", width: 2, build: f.bvhBuilder(2)},
		{name: "bvh", width: 4, build: f.bvhBuilder(4)},
		{name: "bvh", width: 8, build: f.bvhBuilder(8)},
		{name: "optix", build: func() (tracer, error) { return accel.BuildOptiXGeometry(f.s, f.geo, false) }},
	}
	for _, be := range backends {
		b, err := be.build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", be.label(), err)
		}
		built = append(built, b)
		vs := f.variants(b, be)
		perLayout = append(perLayout, vs)
		all = append(all, vs...)
	}
	var probe *reorderProbe
	if reorder && cfg.Name == workload.Compute.Name {
		if probe, err = f.reorderOnQuad(backends, built); err != nil {
			return nil, fmt.Errorf("reorder probe: %w", err)
		}
		all = append(all, probe.variants()...)
	}
	var sweepVs []*variant
	if wantsSweep(cfg, perSM) {
		if d.SMs() <= 0 {
			return nil, fmt.Errorf("persistent grid sweep: the device reports no multiprocessor count")
		}
		sweepVs = f.sweepVariants(built[0], perSM, d.SMs())
		all = append(all, sweepVs...)
	}
	start, err := d.NewEvent(true)
	if err != nil {
		return nil, err
	}
	defer start.Close()
	end, err := d.NewEvent(true)
	if err != nil {
		return nil, err
	}
	defer end.Close()
	for r := 0; r < warmup+rounds; r++ {
		for _, v := range all {
			if err := v.prepare(f.s); err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			if err := start.Record(f.s); err != nil {
				return nil, err
			}
			if err := v.run(); err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			if err := end.Record(f.s); err != nil {
				return nil, err
			}
			if err := end.Synchronize(); err != nil {
				return nil, err
			}
			ms, err := launch.Elapsed(start, end)
			if err != nil {
				return nil, err
			}
			if r >= warmup {
				v.times = append(v.times, float64(ms))
			}
		}
	}
	oracle, err := ref.NewScene(f.tables)
	if err != nil {
		return nil, err
	}
	for i, b := range built {
		be := backends[i]
		lr := layoutResult{Backend: be.name, Width: be.width, L2Bytes: d.L2Bytes(), Persistent: be.name == "bvh"}
		switch v := b.(type) {
		case *accel.BVH:
			lr.Nodes, lr.Height, lr.BVHBytes = v.NumNodes(), v.Height(), int64(v.Nodes().Bytes())+int64(v.Tris().Bytes())
		case *accel.OptiX:
			lr.BVHBytes = int64(v.GASBytes())
		}
		lr.FitsInL2 = lr.BVHBytes <= int64(lr.L2Bytes)
		for _, v := range perLayout[i] {
			if v.name == "build" {
				lr.BuildMs = summarize(v.times)
				continue
			}
			q := queryResult{Name: v.name, Launch: be.launch(), RowBytes: v.rowBytes, Ms: summarize(v.times)}
			if bvh, ok := b.(*accel.BVH); ok {
				short := strings.HasPrefix(v.name, "trace_reflections") || v.name == "visible"
				if bvh.DynamicFetch(short) {
					q.Launch += ", dynamic row fetching"
				} else {
					q.Launch += ", 32-row batches per warp"
				}
			}
			q.RaysPerSec = float64(n) / (q.Ms.Median / 1e3)
			q.NsPerRay = q.Ms.Median * 1e6 / float64(n)
			q.GBPerSec = float64(v.rowBytes) * float64(n) / (q.Ms.Median / 1e3) / 1e9
			if err := f.check(v, oracle, &q, sample, be.name == "optix"); err != nil {
				return nil, fmt.Errorf("check %s %s: %w", v.name, be.label(), err)
			}
			lr.Queries = append(lr.Queries, q)
		}
		wall, err := f.buildWall(be, rounds)
		if err != nil {
			return nil, err
		}
		lr.BuildWall = wall
		res.Layouts = append(res.Layouts, lr)
	}
	if sweepVs != nil {
		check := func(v *variant, q *queryResult) error { return f.check(v, oracle, q, sample, false) }
		if res.sweep, err = f.sweepResult(sweepVs, perSM, d.SMs(), check); err != nil {
			return nil, fmt.Errorf("persistent grid sweep: %w", err)
		}
	}
	if probe != nil {
		if res.Reorder, err = probe.result(oracle, sample); err != nil {
			return nil, fmt.Errorf("reorder probe: %w", err)
		}
	}
	return res, nil
}

// tracer is what both backends offer the benchmark.
type tracer interface {
	Intersect(s *launch.Stream, r accel.Rays, flags geom.Flags, out accel.Hits) error
	TraceReflections(s *launch.Stream, r accel.Rays, maxBounces int, out accel.Reflections) error
	Visible(s *launch.Stream, seg accel.Segments, out *launch.Buffer[uint8]) error
	Close() error
}

// backendSpec is one backend (and node layout) under test.
type backendSpec struct {
	name  string
	width int
	build func() (tracer, error)
}

// launch describes the launch configuration the queries of b use.
func (b backendSpec) launch() string {
	if b.name == "optix" {
		return "OptiX pipeline launch (the persistent-launch counter does not apply)"
	}
	if b.width == 8 {
		return "persistent launch (Rays.Counter / Segments.Counter set), compressed 8-wide nodes"
	}
	return fmt.Sprintf("persistent launch (Rays.Counter / Segments.Counter set), %d-wide nodes", b.width)
}

func (b backendSpec) label() string {
	if b.name == "optix" {
		return "optix"
	}
	return fmt.Sprintf("w%d", b.width)
}

func (f *fixture) bvhBuilder(w int) func() (tracer, error) {
	return func() (tracer, error) { return accel.BuildGeometry(f.s, f.geo, accel.Options{Width: w}, false) }
}

func (f *fixture) variants(b tracer, be backendSpec) []*variant {
	rays := f.rays
	rays.Counter = f.counter
	seg := accel.Segments{Start: f.rays.O, End: f.ends, N: f.rays.N, Counter: f.counter}
	return []*variant{
		{name: "build", run: func() error {
			nb, err := be.build()
			if err != nil {
				return err
			}
			return nb.Close()
		}},
		{name: "intersect (76 B)", rowBytes: 24 + 76, run: func() error { return b.Intersect(f.s, rays, geom.FlagsAll, f.full) }},
		{name: "intersect (flags=0)", rowBytes: 24 + 4, run: func() error { return b.Intersect(f.s, rays, geom.FlagsNone, f.tOnly) }},
		{name: "trace_reflections (1)", rowBytes: 24 + 9, run: func() error { return b.TraceReflections(f.s, rays, 1, f.refl[0]) }},
		{name: "trace_reflections (4)", rowBytes: 24 + 36, run: func() error { return b.TraceReflections(f.s, rays, 4, f.refl[1]) }},
		{name: "visible", rowBytes: 24 + 1, run: func() error { return b.Visible(f.s, seg, f.vis) }},
	}
}

// buildWall times a build + Close on the host clock (allocation and the
// final status read included), median over rounds.
func (f *fixture) buildWall(be backendSpec, rounds int) (timing, error) {
	var v []float64
	for r := 0; r < rounds; r++ {
		t0 := nowMs()
		b, err := be.build()
		if err != nil {
			return timing{}, err
		}
		v = append(v, nowMs()-t0)
		if err := b.Close(); err != nil {
			return timing{}, err
		}
	}
	return summarize(v), f.s.Synchronize()
}

// sampleRows picks k distinct rows of n, sorted.
func sampleRows(n, k int) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	perm := r.Perm(n)[:k]
	sort.Ints(perm)
	return perm
}
