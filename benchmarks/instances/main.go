// Command instances benchmarks intersect over instances on rayd-go's CUDA
// BVH: 1,024 instances of the light grid (72,962 triangles each, 74.7M
// instanced triangles; each scaled to a quarter of the cube, randomly
// rotated and placed in [−1, 1]³) against the compute configuration's
// 4,194,304 incoherent rays, next to the compute scene's intersect
// (2.1M-triangle cloud, the same rays) timed in the same run.
//
// It times, with CUDA events and interleaved rounds after warm-up rounds,
// the full 76-byte record plus instance ids on the instanced scene, the
// compute scene's intersect, a transform update of every instance alone
// (records upload and top-level build) and the update followed by the
// query; every timed update is split into its host side (SetTransforms,
// the wait for the previous copy, the host work into the staging memory:
// the records and the slab scale, plus the top level when it is built on
// the host) and its device side (queueing the one copy and, up to
// accel.TLASDeviceMax instances, the build kernel; the synchronization
// that waits for both), reported as medians.
// The instanced launch is then rerun as timed on poisoned outputs, every
// row must be written, and a random sample of rows is compared with the
// CPU reference (ref.InstancedScene) bit for bit, every field.
//
//	instances -out benchmarks/results/instances-h200.json
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

type report struct {
	benchhead.Header
	Rounds         int              `json:"rounds"`
	Warmup         int              `json:"warmup"`
	Rays           int              `json:"rays"`
	Instances      int              `json:"instances"`
	GeometryTris   int              `json:"geometry_triangles"`
	InstancedTris  int64            `json:"instanced_triangles"`
	BLASWidth      int              `json:"blas_width"`
	BuildWallMs    float64          `json:"layer_build_wall_ms"`
	Instanced      benchhead.Timing `json:"instanced_intersect_ms"`
	Compute        benchhead.Timing `json:"compute_intersect_ms"`
	Update         benchhead.Timing `json:"update_all_transforms_ms"`
	UpdateAndQuery benchhead.Timing `json:"update_then_intersect_ms"`
	Ratio          float64          `json:"instanced_over_compute"`
	UpdateOverhead float64          `json:"update_overhead_ms"`
	UpdateParts    updateParts      `json:"update_breakdown_ms"`
	Checked        int              `json:"checked_rows"`
	Mismatches     int              `json:"mismatched_rows"`
	Verdicts       []string         `json:"verdicts"`
}

// updateParts is where a timed update's wall time goes (medians over
// every timed update, alone or before the query, in milliseconds): the
// host side (SetTransforms, waiting for the previous copy, the host work:
// records and slab scale into the staging memory, plus the top level when
// DeviceBuild is false) and the device side (queueing the one copy and,
// when DeviceBuild, the top-level build kernel, then the stream
// synchronization that waits for them).
type updateParts struct {
	Host          float64 `json:"host"`
	SetTransforms float64 `json:"set_transforms"`
	StagingWait   float64 `json:"staging_wait"`
	HostWork      float64 `json:"host_work"`
	UploadSync    float64 `json:"upload_and_sync"`
	Queue         float64 `json:"queue"`
	Sync          float64 `json:"sync"`
	DeviceBuild   bool    `json:"device_build"`
	Samples       int     `json:"samples"`
}

// updateSamples collects the parts of every update, in call order.
type updateSamples struct {
	set, wait, work, queue, sync []float64
	device                       []bool
}

func (u *updateSamples) add(set time.Duration, t accel.UpdateTimes, sync time.Duration) {
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	u.set, u.wait, u.work = append(u.set, ms(set)), append(u.wait, ms(t.Wait)), append(u.work, ms(t.Host))
	u.queue, u.sync = append(u.queue, ms(t.Queue)), append(u.sync, ms(sync))
	u.device = append(u.device, t.DeviceBuild)
}

// parts summarizes the samples after the first skip (the warm-up calls).
func (u *updateSamples) parts(skip int) updateParts {
	med := func(v []float64) float64 {
		if len(v) <= skip {
			return 0
		}
		return benchhead.Summarize(append([]float64(nil), v[skip:]...)).Median
	}
	host, up := make([]float64, len(u.set)), make([]float64, len(u.set))
	for i := range u.set {
		host[i] = u.set[i] + u.wait[i] + u.work[i]
		up[i] = u.queue[i] + u.sync[i]
	}
	// The top level is built where it was for every counted update (the
	// instance count fixes the path).
	device := len(u.device) > skip
	for _, d := range u.device[min(skip, len(u.device)):] {
		device = device && d
	}
	return updateParts{Host: med(host), SetTransforms: med(u.set), StagingWait: med(u.wait), HostWork: med(u.work),
		UploadSync: med(up), Queue: med(u.queue), Sync: med(u.sync), DeviceBuild: device, Samples: max(len(u.set)-skip, 0)}
}

func main() {
	ordinal := flag.Int("device", 0, "device ordinal")
	rounds := flag.Int("rounds", 15, "timed rounds")
	warmup := flag.Int("warmup", 2, "warm-up rounds")
	sample := flag.Int("check", 65536, "rows checked against the CPU reference")
	rays := flag.Int("rays", 1<<22, "rays per batch")
	count := flag.Int("instances", 1024, "instances of the light grid")
	out := flag.String("out", "", "JSON output path")
	flag.Parse()
	if err := run(*ordinal, *rounds, *warmup, *sample, *rays, *count, *out); err != nil {
		fmt.Fprintln(os.Stderr, "instances:", err)
		os.Exit(1)
	}
}

// placement is the benchmark's deterministic instance set
// (testscene.Placement): the light grid scaled by 1/8 (a quarter of the
// cube wide) through a random rotation, translated uniformly in [−1, 1]³.
func placement(n int, seed uint64) []geom.Instance { return testscene.Placement(n, seed) }

func run(ordinal, rounds, warmup, sample, rays, count int, out string) error {
	h, err := benchhead.New(ordinal)
	if err != nil {
		return err
	}
	clock, err := benchhead.NewClock([]int{ordinal})
	if err != nil {
		return err
	}
	defer clock.Close()
	d := clock.Devices()[0]
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()

	light, _, _ := workload.Light.Build()
	cloud, o, dir := workload.Compute.Scaled(rays).Build()
	lt, err := geom.BuildTables([]geom.Mesh{light})
	if err != nil {
		return err
	}
	ct, err := geom.BuildTables([]geom.Mesh{cloud})
	if err != nil {
		return err
	}
	x, err := geom.BuildInstances(lt, placement(count, 7))
	if err != nil {
		return err
	}
	rep := report{Header: h, Rounds: rounds, Warmup: warmup, Rays: rays, Instances: count,
		GeometryTris: lt.NumFaces(), InstancedTris: int64(count) * int64(lt.NumFaces())}
	fmt.Printf("# rayd-go instanced intersect on %s (cuda:%d), build %s\n", h.Device.Name, ordinal, h.Build)
	fmt.Printf("# %d instances of %d triangles (%d instanced), %d incoherent rays\n", count, lt.NumFaces(), rep.InstancedTris, rays)

	t0 := time.Now()
	layer, err := accel.NewInstanceLayer(s, lt, x, accel.Options{})
	if err != nil {
		return err
	}
	defer layer.Close()
	rep.BuildWallMs = float64(time.Since(t0).Microseconds()) / 1000
	rep.BLASWidth = layer.Width()
	bvh, err := accel.Build(s, ct)
	if err != nil {
		return err
	}
	defer bvh.Close()

	var bufs []interface{ Close() error }
	defer func() {
		for _, b := range bufs {
			_ = b.Close()
		}
	}()
	f32 := func(n int) *launch.Buffer[float32] {
		b, e := launch.Alloc[float32](d, n)
		if e != nil && err == nil {
			err = e
		}
		if b != nil {
			bufs = append(bufs, b)
		}
		return b
	}
	i32 := func(n int) *launch.Buffer[int32] {
		b, e := launch.Alloc[int32](d, n)
		if e != nil && err == nil {
			err = e
		}
		if b != nil {
			bufs = append(bufs, b)
		}
		return b
	}
	n := rays
	// Both intersects run persistent launches, as a CUDA scene runs them
	// (the compute BVH, larger than L2, with dynamic row fetching).
	dr := accel.Rays{O: f32(3 * n), D: f32(3 * n), N: n}
	counter, err := launch.Alloc[uint32](d, 1)
	if err != nil {
		return err
	}
	bufs = append(bufs, counter)
	dr.Counter = counter
	full := func() accel.Hits {
		return accel.Hits{T: f32(n), P: f32(3 * n), N: f32(3 * n), GeoN: f32(3 * n), UV: f32(2 * n), Bary: f32(3 * n),
			ShapeID: i32(n), PrimID: i32(n), LocalPrimID: i32(n), GlobalPrimID: i32(n)}
	}
	hi, hc, ids := full(), full(), i32(n)
	if err != nil {
		return err
	}
	if err := dr.O.Upload(s, o); err != nil {
		return err
	}
	if err := dr.D.Upload(s, dir); err != nil {
		return err
	}

	// Two transform sets to alternate between, so every update changes
	// every instance.
	sets := [2][]geom.Transform{make([]geom.Transform, count), make([]geom.Transform, count)}
	alt := placement(count, 8)
	for i := range count {
		sets[0][i], sets[1][i] = x.Records[i].Transform, alt[i].Transform
	}
	k := 0
	instanced := func() error {
		if err := layer.Intersect(s, dr, geom.FlagsAll, hi, ids); err != nil {
			return err
		}
		return s.Synchronize()
	}
	compute := func() error {
		if err := bvh.Intersect(s, dr, geom.FlagsAll, hc); err != nil {
			return err
		}
		return s.Synchronize()
	}
	var parts updateSamples
	update := func() error {
		k ^= 1
		t0 := time.Now()
		if err := x.SetTransforms(0, sets[k]); err != nil {
			return err
		}
		t1 := time.Now()
		if err := layer.Update(s, x); err != nil {
			return err
		}
		t2 := time.Now()
		if err := s.Synchronize(); err != nil {
			return err
		}
		parts.add(t1.Sub(t0), layer.LastUpdate(), time.Since(t2))
		return nil
	}
	both := func() error {
		if err := update(); err != nil {
			return err
		}
		return instanced()
	}
	res, err := clock.Interleaved(warmup, rounds, instanced, compute, update, both)
	if err != nil {
		return err
	}
	rep.Instanced, rep.Compute = benchhead.Summarize(res[0]), benchhead.Summarize(res[1])
	rep.Update, rep.UpdateAndQuery = benchhead.Summarize(res[2]), benchhead.Summarize(res[3])
	rep.Ratio = rep.Instanced.Median / rep.Compute.Median
	rep.UpdateOverhead = rep.UpdateAndQuery.Median - rep.Instanced.Median
	rep.UpdateParts = parts.parts(2 * warmup) // update runs alone and before the query in every round

	if err := check(s, layer, lt, x, dr, hi, ids, o, dir, sample, &rep); err != nil {
		return err
	}
	rep.Verdicts = verdicts(&rep)
	fmt.Printf("instanced intersect %.3f ms (min %.3f), compute intersect %.3f ms: ratio %.2f\n",
		rep.Instanced.Median, rep.Instanced.Min, rep.Compute.Median, rep.Ratio)
	fmt.Printf("update of %d transforms %.3f ms; update + intersect %.3f ms: +%.3f ms over the query\n",
		count, rep.Update.Median, rep.UpdateAndQuery.Median, rep.UpdateOverhead)
	p := rep.UpdateParts
	where := "host"
	if p.DeviceBuild {
		where = "device"
	}
	fmt.Printf("update breakdown (medians of %d, top level built on the %s): host %.3f ms (SetTransforms %.3f, staging wait %.3f, host work %.3f), device %.3f ms (queue %.3f, sync %.3f)\n",
		p.Samples, where, p.Host, p.SetTransforms, p.StagingWait, p.HostWork, p.UploadSync, p.Queue, p.Sync)
	fmt.Printf("checked %d rows against the CPU reference: %d differ\n", rep.Checked, rep.Mismatches)
	for _, v := range rep.Verdicts {
		fmt.Println("verdict:", v)
	}
	if out != "" {
		if err := benchhead.WriteJSON(out, rep); err != nil {
			return err
		}
	}
	if rep.Mismatches > 0 {
		return fmt.Errorf("%d of %d checked rows differ from the CPU reference", rep.Mismatches, rep.Checked)
	}
	return nil
}

func verdicts(r *report) []string {
	pass := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	return []string{
		fmt.Sprintf("instanced intersect within 1.5x of the compute scene's: %.2fx, %s", r.Ratio, pass(r.Ratio <= 1.5)),
		fmt.Sprintf("updating every transform and re-querying adds at most 0.3 ms: %+.3f ms, %s", r.UpdateOverhead, pass(r.UpdateOverhead <= 0.3)),
		fmt.Sprintf("sampled rows bitwise equal to the CPU reference: %d of %d differ, %s", r.Mismatches, r.Checked, pass(r.Mismatches == 0)),
	}
}

// check reruns the timed launch on poisoned outputs with the current
// transforms and compares sampled rows with the CPU reference.
func check(s *launch.Stream, layer *accel.InstanceLayer, lt *geom.Tables, x *geom.Instances, dr accel.Rays,
	out accel.Hits, ids *launch.Buffer[int32], o, d []float32, sample int, rep *report) error {
	for _, b := range []*launch.Buffer[float32]{out.T, out.P, out.N, out.GeoN, out.UV, out.Bary} {
		if err := b.Memset32(s, 0x7fc00bad); err != nil {
			return err
		}
	}
	for _, b := range []*launch.Buffer[int32]{out.ShapeID, out.PrimID, out.LocalPrimID, out.GlobalPrimID, ids} {
		if err := b.Memset32(s, 0x7fc00bad); err != nil {
			return err
		}
	}
	if err := layer.Intersect(s, dr, geom.FlagsAll, out, ids); err != nil {
		return err
	}
	n := dr.N
	got := geom.NewHits(n, geom.FlagsAll)
	got.InstanceID = make([]int32, n)
	for _, p := range []struct {
		dst []float32
		src *launch.Buffer[float32]
	}{{got.T, out.T}, {got.P, out.P}, {got.N, out.N}, {got.GeoN, out.GeoN}, {got.UV, out.UV}, {got.Bary, out.Bary}} {
		if err := p.src.Download(s, p.dst); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		dst []int32
		src *launch.Buffer[int32]
	}{{got.ShapeID, out.ShapeID}, {got.PrimID, out.PrimID}, {got.LocalPrimID, out.LocalPrimID},
		{got.GlobalPrimID, out.GlobalPrimID}, {got.InstanceID, ids}} {
		if err := p.src.Download(s, p.dst); err != nil {
			return err
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	sample = min(sample, n)
	rows := r.Perm(n)[:sample]
	so, sd := make([]float32, 0, 3*sample), make([]float32, 0, 3*sample)
	for _, i := range rows {
		so = append(so, o[3*i:3*i+3]...)
		sd = append(sd, d[3*i:3*i+3]...)
	}
	want, err := ref.NewInstancedScene(context.Background(), lt, x)
	if err != nil {
		return err
	}
	exp, err := want.Intersect(context.Background(), so, sd, nil, nil, geom.FlagsAll)
	if err != nil {
		return err
	}
	rep.Checked = sample
	for k, i := range rows {
		if !sameRow(exp, k, got, i) {
			rep.Mismatches++
		}
	}
	return nil
}

// sameRow compares row a of ha with row b of hb, every field bit for bit.
func sameRow(ha *geom.Hits, a int, hb *geom.Hits, b int) bool {
	eq := func(x, y []float32, per int) bool {
		for k := range per {
			if math.Float32bits(x[per*a+k]) != math.Float32bits(y[per*b+k]) {
				return false
			}
		}
		return true
	}
	return eq(ha.T, hb.T, 1) && eq(ha.P, hb.P, 3) && eq(ha.N, hb.N, 3) && eq(ha.GeoN, hb.GeoN, 3) &&
		eq(ha.UV, hb.UV, 2) && eq(ha.Bary, hb.Bary, 3) && ha.ShapeID[a] == hb.ShapeID[b] &&
		ha.PrimID[a] == hb.PrimID[b] && ha.LocalPrimID[a] == hb.LocalPrimID[b] &&
		ha.GlobalPrimID[a] == hb.GlobalPrimID[b] && ha.InstanceID[a] == hb.InstanceID[b]
}
