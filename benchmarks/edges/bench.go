package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

type configResult struct {
	Name        string `json:"name"`
	MaxLeafSize int    `json:"max_leaf_size"`
	// BruteDevices is how many devices shared the brute-force check (its
	// time is then wall clock, not CUDA events).
	BruteDevices int           `json:"brute_force_devices"`
	Edges        int           `json:"edges"`
	Nodes        int           `json:"bvh_nodes"`
	Height       int           `json:"bvh_height"`
	BuildWallMs  timing        `json:"build_wall_ms"`
	Queries      []queryResult `json:"queries"`
}

type timing = benchhead.Timing

var summarize = benchhead.Summarize

type queryResult struct {
	Name string `json:"name"` // point, segment, half_ray; ray queries by a kernel other than pruned: segment_exact, ...
	// Kernel is the ray kernel (accel.EdgeRayKernel: pruned, rows, exact, phased, phased_top, ops, spec);
	// empty for points.
	Kernel          string  `json:"kernel,omitempty"`
	Ms              timing  `json:"ms"`
	RowsPerSec      float64 `json:"rows_per_s"` // rows / median
	Misses          int     `json:"miss_rows"`
	BruteMs         float64 `json:"brute_force_ms"` // one brute-force launch over the checked rows
	BruteChecked    int     `json:"rows_checked_vs_device_brute_force"`
	BruteMismatches int     `json:"mismatched_rows_vs_device_brute_force"`
	RefChecked      int     `json:"rows_checked_vs_cpu_reference"`
	RefMismatches   int     `json:"mismatched_rows_vs_cpu_reference"`
	// UnwrittenBVH and UnwrittenBrute count rows still holding their
	// output's poison after the BVH query (all rows) and the brute force
	// (the checked rows); either fails the run.
	UnwrittenBVH   int `json:"unwritten_rows_bvh"`
	UnwrittenBrute int `json:"unwritten_rows_brute_force"`
	// Compared lists the record fields compared bit for bit (±0 equal).
	Compared []string `json:"compared_fields"`
}

func configs(only string) []workload.Config {
	var out []workload.Config
	for _, c := range []workload.Config{workload.Light, workload.Compute} {
		if only == "" || only == c.Name {
			out = append(out, c)
		}
	}
	return out
}

// batch is one query batch: host rows and their device copies, and for a
// ray batch the kernel that runs it.
type batch struct {
	name    string // base, or base_kernel for a kernel other than pruned
	base    string // point, segment, half_ray
	rows    string // the rows' name: base, or base@order for rows sorted by -orders (kernel variants keep it)
	kernel  accel.EdgeRayKernel
	p, d    []float32 // points / origins, directions (nil for points)
	tmax    []float32 // nil: half rays
	devP    *launch.Buffer[float32]
	devD    *launch.Buffer[float32]
	devTMax *launch.Buffer[float32]
}

// queries draws the three batches: points and origins uniform in the mesh's
// box grown by 10% of its diagonal on every side, Gaussian directions, and
// segment lengths uniform in [0, diagonal/4].
func queries(t *geom.Tables, n int, seed uint64) []*batch {
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i, v := range t.Vertices {
		lo[i%3], hi[i%3] = min(lo[i%3], float64(v)), max(hi[i%3], float64(v))
	}
	diag := math.Sqrt((hi[0]-lo[0])*(hi[0]-lo[0]) + (hi[1]-lo[1])*(hi[1]-lo[1]) + (hi[2]-lo[2])*(hi[2]-lo[2]))
	r := rand.New(rand.NewPCG(seed, 0xed6e))
	box := func() []float32 {
		v := make([]float32, 3*n)
		for i := range v {
			k := i % 3
			v[i] = float32(lo[k] - 0.1*diag + r.Float64()*(hi[k]-lo[k]+0.2*diag))
		}
		return v
	}
	dirs := func() []float32 {
		v := make([]float32, 3*n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	seg := make([]float32, n)
	for i := range seg {
		seg[i] = float32(r.Float64() * diag / 4)
	}
	return []*batch{{name: "point", base: "point", rows: "point", p: box()},
		{name: "segment", base: "segment", rows: "segment", p: box(), d: dirs(), tmax: seg},
		{name: "half_ray", base: "half_ray", rows: "half_ray", p: box(), d: dirs()}}
}

// kernelNames lists the ray kernels' names, comma-separated.
func kernelNames() string {
	var names []string
	for _, k := range accel.EdgeRayKernels {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

// variants returns, for each ray batch of bs, one batch per kernel named in
// kernels (comma-separated names of accel.EdgeRayKernels), sharing its rows;
// the default kernel (auto, what NearestRay runs) keeps the batch's name; point
// batches once.
func variants(bs []*batch, kernels string) ([]*batch, error) {
	var ks []accel.EdgeRayKernel
	for _, name := range strings.Split(kernels, ",") {
		i := slices.IndexFunc(accel.EdgeRayKernels, func(k accel.EdgeRayKernel) bool { return k.String() == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown ray kernel %q in -kernels (%s)", name, kernelNames())
		}
		ks = append(ks, accel.EdgeRayKernels[i])
	}
	var out []*batch
	for _, b := range bs {
		if b.d == nil {
			out = append(out, b)
			continue
		}
		for _, k := range ks {
			v := *b
			v.kernel = k
			if k != accel.EdgeRayAuto {
				v.name = b.name + "_" + k.String()
			}
			out = append(out, &v)
		}
	}
	return out, nil
}

// edgeScene is the configuration's mesh (its edges enabled), its tables
// and its edge scene: what the timed run and the host mirror both query.
func edgeScene(cfg workload.Config) (*geom.Tables, *edge.Scene, error) {
	mesh, _, _ := cfg.Build()
	mesh.EdgesDisabled = false
	tb, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		return nil, nil, err
	}
	return tb, edge.NewScene(tb), nil
}

func benchConfig(d *launch.Device, cfg workload.Config, o options) (*configResult, error) {
	tb, es, err := edgeScene(cfg)
	if err != nil {
		return nil, err
	}
	s, err := d.NewStream()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &configResult{Name: cfg.Name, Edges: es.Edges.Len(), MaxLeafSize: o.leaf}
	if res.MaxLeafSize == 0 {
		res.MaxLeafSize = accel.DefaultMaxLeafSize
	}
	var bvh *accel.EdgeBVH
	var builds []float64
	for range 3 {
		if bvh != nil {
			if err := bvh.Close(); err != nil {
				return nil, err
			}
		}
		t0 := time.Now()
		opt := accel.EdgeOptions
		opt.MaxLeafSize = o.leaf
		if bvh, err = accel.BuildEdgesWith(s, tb.Vertices, accel.EdgeTablesOf(es.Edges), opt); err != nil {
			return nil, err
		}
		builds = append(builds, float64(time.Since(t0).Microseconds())/1e3)
	}
	defer bvh.Close()
	res.BuildWallMs = summarize(builds)
	res.Nodes, res.Height = bvh.Tree().NumNodes(), bvh.Tree().Height()

	f := &fixture{d: d, s: s, bvh: bvh, n: o.queries}
	defer f.close()
	var bs []*batch
	for _, b := range queries(tb, o.queries, 0x5eed+uint64(len(cfg.Name))) {
		if slices.Contains(strings.Split(o.kinds, ","), b.name) {
			bs = append(bs, b)
		}
	}
	if len(bs) == 0 {
		return nil, fmt.Errorf("no query among -kinds %q", o.kinds)
	}
	bs, err = withOrders(bs, o.orders)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		if err := f.upload(b); err != nil {
			return nil, err
		}
	}
	if err := f.allocOut(); err != nil {
		return nil, err
	}
	for ord := 1; ord < o.bruteDevices; ord++ {
		p, err := newPeer(o.ordinal+ord, es, bs, o.queries)
		if err != nil {
			return nil, fmt.Errorf("brute-force peer cuda:%d: %w", o.ordinal+ord, err)
		}
		defer p.close()
		f.peers = append(f.peers, p)
	}
	res.BruteDevices = 1 + len(f.peers)
	if bs, err = variants(bs, o.kernels); err != nil {
		return nil, err
	}
	times, err := f.time(bs, o.warmup, o.rounds)
	if err != nil {
		return nil, err
	}
	bruteRows := o.queries
	if cfg.Name != workload.Light.Name || !o.bruteAllLight {
		bruteRows = min(o.bruteRows, o.queries)
	}
	for i, b := range bs {
		q := queryResult{Name: b.name, Ms: summarize(times[i])}
		if b.d != nil {
			q.Kernel = b.kernel.String()
			if r := f.bvh.RayKernel(b.kernel, b.tmax != nil); r != b.kernel {
				q.Kernel += " (" + r.String() + ")" // what auto ran on this BVH
			}
		}
		q.RowsPerSec = float64(o.queries) / (q.Ms.Median / 1e3)
		if err := f.check(es, b, &q, bruteRows, o.check); err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		res.Queries = append(res.Queries, q)
	}
	return res, nil
}
