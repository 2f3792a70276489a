package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// wavelength is the fixture's λ.
const wavelength = 1.0

// gridNames and counterNames are the fields of the accumulation (RayD's
// DfrAccum), in the order partial holds them.
var (
	gridNames    = [...]string{"power", "field_x_re", "field_x_im", "field_y_re", "field_y_im", "field_z_re", "field_z_im"}
	counterNames = [...]string{"direct_count", "keller_count", "suffix_count", "vis_rejects", "edge_vis_rejects",
		"utd_rejects", "edge_uses"}
)

const (
	numGrids    = len(gridNames)
	numCounters = len(counterNames)
)

// fixture is the accumulation fixture of the multi-device benchmark with
// state 1's edge at (0.2, 0, 0): the triangle (−1,−1,0), (1,−1,0), (−1,1,0);
// two states on edges along x through (0,0,0) and (0.2,0,0), t ∈ [−1, 1],
// faces with normals ±z, both on face 0, exterior angle π, seen from the
// source (0, −1, 0.25) with power 1; the default material on the one face;
// and a res×res grid on the plane z = 0 over [−1, 1]².
func fixture(res int) (rayd.Mesh, *rf.DfrStates, *rf.DfrMaterial, rf.DfrGrid) {
	tri := rayd.Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2}}
	st := &rf.DfrStates{
		EdgeIndex: []int32{0, 1}, EdgePos: []float32{0, 0, 0, 0.2, 0, 0}, EdgeDir: []float32{1, 0, 0, 1, 0, 0},
		EdgeTMin: []float32{-1, -1}, EdgeTMax: []float32{1, 1},
		N0: []float32{0, 0, 1, 0, 0, 1}, N1: []float32{0, 0, -1, 0, 0, -1},
		Prim0: []int32{0, 0}, Prim1: []int32{0, 0}, ExteriorAngle: []float32{math.Pi, math.Pi},
		Src: []float32{0, -1, 0.25, 0, -1, 0.25}, SrcPower: []float32{1, 1},
	}
	g := rf.DfrGrid{Axis: 2, Position: 0, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: res, Res1: res}
	return tri, st, rf.DefaultMaterial(1), g
}

// window is one rank's share [begin, begin+count) of the lane space total.
type window struct{ begin, count, total int }

// laneWindow is rank's window of the lane space for requested samples over
// world ranks (dist.LaneWindow).
func laneWindow(requested, rank, world int) window {
	b, c, t := dist.LaneWindow(requested, rank, world)
	return window{b, c, t}
}

// options are the accum_dfr_direct arguments of window w: the global sample
// count and seed, only the window differs between ranks.
func options(seed int64, w window) rf.AccumOptions {
	opt := rf.DefaultAccumOptions()
	opt.Wavelength = wavelength
	opt.DirectSamples, opt.Seed = w.total, seed
	opt.LaneOffset, opt.LaneCount = w.begin, w.count
	return opt
}

// accumulate runs window w of the fixture on s.
func accumulate(ctx context.Context, s *rayd.Scene, cfg config, w window) (partial, error) {
	_, st, m, g := fixture(cfg.resolution)
	r, err := s.AccumDfrDirect(ctx, st, g, m, nil, options(cfg.seed, w))
	if err != nil {
		return partial{}, err
	}
	return fromResult(r), nil
}

// accumulateOnDevice runs window w of the fixture on a scene of its own on
// CUDA device ordinal.
func accumulateOnDevice(ctx context.Context, ordinal int, cfg config, w window) (_ partial, err error) {
	tri, _, _, _ := fixture(cfg.resolution)
	s, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ordinal))
	if err != nil {
		return partial{}, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	return accumulate(ctx, s, cfg, w)
}

// partial is an accumulation as it is reduced: the seven grids (Res1×Res0,
// row-major) and the seven counters widened to int64, which sum exactly.
type partial struct {
	res      int
	grids    [numGrids][]float64
	counters [numCounters]int64
}

func fromResult(r *rf.AccumResult) partial {
	p := partial{res: r.Res0}
	for k, g := range [numGrids][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm} {
		p.grids[k] = append([]float64(nil), g...)
	}
	for k, c := range [numCounters]int32{r.DirectCount, r.KellerCount, r.SuffixCount, r.VisRejects, r.EdgeVisRejects,
		r.UtdRejects, r.EdgeUses} {
		p.counters[k] = int64(c)
	}
	return p
}

// checksum is the float64 sum over every cell of the seven grids.
func (p partial) checksum() float64 {
	s := 0.0
	for _, g := range p.grids {
		s += sum(g)
	}
	return s
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// reducer sums grids and counters in place over every rank of the job.
type reducer interface {
	sum(ctx context.Context, grids [][]float64, counters []int64) error
}

// reduce returns the sum of local over every rank.
func reduce(ctx context.Context, r reducer, local partial) (partial, error) {
	merged := partial{res: local.res, counters: local.counters}
	grids := make([][]float64, numGrids)
	for k, g := range local.grids {
		merged.grids[k] = append([]float64(nil), g...)
		grids[k] = merged.grids[k]
	}
	if err := r.sum(ctx, grids, merged.counters[:]); err != nil {
		return partial{}, err
	}
	return merged, nil
}

// ncclReducer reduces through the job's NCCL communicator: the grids are
// copied to one float64 device buffer and the counters to one int64 buffer,
// and a single NCCL group all-reduces (SUM) each grid and each counter.
type ncclReducer struct {
	comm   *dist.Comm
	dev    *launch.Device
	stream *launch.Stream
}

func newNCCLReducer(comm *dist.Comm) (*ncclReducer, error) {
	dev, err := launch.Open(comm.Device())
	if err != nil {
		return nil, err
	}
	s, err := dev.NewStream()
	if err != nil {
		return nil, errors.Join(err, dev.Close())
	}
	return &ncclReducer{comm: comm, dev: dev, stream: s}, nil
}

func (r *ncclReducer) sum(ctx context.Context, grids [][]float64, counters []int64) (err error) {
	var flat []float64
	for _, g := range grids {
		flat = append(flat, g...)
	}
	fb, err := launch.Alloc[float64](r.dev, len(flat))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, fb.Close()) }()
	cb, err := launch.Alloc[int64](r.dev, len(counters))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cb.Close()) }()
	if err := fb.Upload(r.stream, flat); err != nil {
		return err
	}
	if err := cb.Upload(r.stream, counters); err != nil {
		return err
	}
	if err := r.stream.Synchronize(); err != nil {
		return err
	}
	var bufs []dist.Buffer
	off := 0
	for _, g := range grids {
		v, err := fb.View(off, len(g))
		if err != nil {
			return err
		}
		bufs, off = append(bufs, v), off+len(g)
	}
	for i := range counters {
		v, err := cb.View(i, 1)
		if err != nil {
			return err
		}
		bufs = append(bufs, v)
	}
	if err := r.comm.AllReduce(ctx, dist.Sum, bufs...); err != nil {
		return err
	}
	if err := fb.Download(r.stream, flat); err != nil {
		return err
	}
	if err := cb.Download(r.stream, counters); err != nil {
		return err
	}
	off = 0
	for _, g := range grids {
		off += copy(g, flat[off:])
	}
	return nil
}

func (r *ncclReducer) close() error {
	return errors.Join(r.stream.Close(), r.dev.Close())
}

// output is the JSON file rank 0 writes: the run's parameters, the merged
// grids (Res1 rows of Res0 cells) and counters, and the sums the ranks
// print.
type output struct {
	TotalSamples     int     `json:"total_samples"`
	RequestedSamples int     `json:"requested_samples"`
	WorldSize        int     `json:"world_size"`
	Seed             int64   `json:"seed"`
	Resolution       int     `json:"resolution"`
	Wavelength       float64 `json:"wavelength"`

	Power    [][]float64 `json:"power"`
	FieldXRe [][]float64 `json:"field_x_re"`
	FieldXIm [][]float64 `json:"field_x_im"`
	FieldYRe [][]float64 `json:"field_y_re"`
	FieldYIm [][]float64 `json:"field_y_im"`
	FieldZRe [][]float64 `json:"field_z_re"`
	FieldZIm [][]float64 `json:"field_z_im"`

	DirectCount    int64 `json:"direct_count"`
	KellerCount    int64 `json:"keller_count"`
	SuffixCount    int64 `json:"suffix_count"`
	VisRejects     int64 `json:"vis_rejects"`
	EdgeVisRejects int64 `json:"edge_vis_rejects"`
	UtdRejects     int64 `json:"utd_rejects"`
	EdgeUses       int64 `json:"edge_uses"`

	PowerSum     float64 `json:"merged_power_sum"`
	GridChecksum float64 `json:"merged_grid_checksum"`
}

// grids and counters list the fields in gridNames and counterNames order.
func (o *output) grids() [numGrids]*[][]float64 {
	return [numGrids]*[][]float64{&o.Power, &o.FieldXRe, &o.FieldXIm, &o.FieldYRe, &o.FieldYIm, &o.FieldZRe, &o.FieldZIm}
}

func (o *output) counters() [numCounters]*int64 {
	return [numCounters]*int64{&o.DirectCount, &o.KellerCount, &o.SuffixCount, &o.VisRejects, &o.EdgeVisRejects,
		&o.UtdRejects, &o.EdgeUses}
}

func newOutput(merged partial, cfg config, total, world int) *output {
	o := &output{TotalSamples: total, RequestedSamples: cfg.samples, WorldSize: world, Seed: cfg.seed,
		Resolution: cfg.resolution, Wavelength: wavelength, PowerSum: sum(merged.grids[0]), GridChecksum: merged.checksum()}
	for k, dst := range o.grids() {
		g, n := merged.grids[k], merged.res
		rows := make([][]float64, len(g)/n)
		for j := range rows {
			rows[j] = g[j*n : (j+1)*n]
		}
		*dst = rows
	}
	for k, dst := range o.counters() {
		*dst = merged.counters[k]
	}
	return o
}

// writeOutput writes o to path through a temporary file in the same
// directory, so a reader never sees half a file.
func writeOutput(path string, o *output) (err error) {
	b, err := json.MarshalIndent(o, "", " ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".accum_grids-*.json")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		_ = f.Close()
		return err
	}
	if _, err = f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
