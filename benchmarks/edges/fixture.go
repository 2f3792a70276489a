package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
)

// fixture holds one mesh's edge BVH, the device query batches and two
// output records (the BVH kernels' and the brute force's).
type fixture struct {
	d    *launch.Device
	s    *launch.Stream
	bvh  *accel.EdgeBVH
	n    int
	out  [2]accel.EdgeRayOut
	bufs []interface{ Close() error }
	clk  benchhead.StreamTimer // timed's events
	// peers split the brute-force check (-brute-devices): fixtures on
	// further devices with their own BVH and copies of the batches.
	peers []*peer
}

func alloc[T launch.Elem](f *fixture, n int) (*launch.Buffer[T], error) {
	b, err := launch.Alloc[T](f.d, max(n, 1))
	if err == nil {
		f.bufs = append(f.bufs, b)
	}
	return b, err
}

func (f *fixture) close() {
	for _, b := range f.bufs {
		_ = b.Close()
	}
	_ = f.clk.Close()
}

func (f *fixture) upload(b *batch) error {
	var err error
	put := func(src []float32) *launch.Buffer[float32] {
		if err != nil || src == nil {
			return nil
		}
		var buf *launch.Buffer[float32]
		if buf, err = alloc[float32](f, len(src)); err == nil {
			err = buf.Upload(f.s, src)
		}
		return buf
	}
	b.devP, b.devD, b.devTMax = put(b.p), put(b.d), put(b.tmax)
	return err
}

func (f *fixture) allocOut() error {
	var err error
	fl := func(c int) *launch.Buffer[float32] {
		if err != nil {
			return nil
		}
		var b *launch.Buffer[float32]
		b, err = alloc[float32](f, c)
		return b
	}
	in := func() *launch.Buffer[int32] {
		if err != nil {
			return nil
		}
		var b *launch.Buffer[int32]
		b, err = alloc[int32](f, f.n)
		return b
	}
	n := f.n
	for k := range f.out {
		f.out[k] = accel.EdgeRayOut{Distance: fl(n), RayT: fl(n), Point: fl(3 * n), EdgeT: fl(n), EdgePoint: fl(3 * n),
			ShapeID: in(), EdgeID: in(), GlobalEdgeID: in()}
	}
	return err
}

func pointOut(o accel.EdgeRayOut) accel.EdgePointOut {
	return accel.EdgePointOut{Distance: o.Distance, EdgePoint: o.EdgePoint, EdgeT: o.EdgeT, ShapeID: o.ShapeID,
		EdgeID: o.EdgeID, GlobalEdgeID: o.GlobalEdgeID}
}

// launch runs b's query over its first m rows into output k, by the BVH or
// by brute force.
func (f *fixture) launch(b *batch, m, k int, brute bool) error {
	return f.launchRange(b, 0, m, k, brute)
}

// launchRange runs b's query over rows [lo, hi) into the same rows of
// output k.
func (f *fixture) launchRange(b *batch, lo, hi, k int, brute bool) error {
	var errs []error
	view := func(buf *launch.Buffer[float32], per int) *launch.Buffer[float32] {
		if buf == nil {
			return nil
		}
		v, err := buf.View(per*lo, per*(hi-lo))
		errs = append(errs, err)
		return v
	}
	viewi := func(buf *launch.Buffer[int32]) *launch.Buffer[int32] {
		v, err := buf.View(lo, hi-lo)
		errs = append(errs, err)
		return v
	}
	o := f.out[k]
	out := accel.EdgeRayOut{Distance: view(o.Distance, 1), RayT: view(o.RayT, 1), Point: view(o.Point, 3),
		EdgeT: view(o.EdgeT, 1), EdgePoint: view(o.EdgePoint, 3), ShapeID: viewi(o.ShapeID), EdgeID: viewi(o.EdgeID),
		GlobalEdgeID: viewi(o.GlobalEdgeID)}
	p, d, tmax := view(b.devP, 3), view(b.devD, 3), view(b.devTMax, 1)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if b.d == nil {
		q := accel.EdgePoints{P: p, N: hi - lo}
		if brute {
			return f.bvh.BrutePoint(f.s, q, pointOut(out))
		}
		return f.bvh.NearestPoint(f.s, q, pointOut(out))
	}
	r := accel.Rays{O: p, D: d, TMax: tmax, N: hi - lo}
	if brute {
		return f.bvh.BruteRay(f.s, r, out)
	}
	return f.bvh.NearestRayWith(f.s, r, out, b.kernel)
}

// timed launches fn between two events and returns the milliseconds.
func (f *fixture) timed(fn func() error) (float64, error) { return f.clk.MS(f.s, fn) }

// time runs warm-up and timed rounds, every batch once per round.
func (f *fixture) time(bs []*batch, warmup, rounds int) ([][]float64, error) {
	out := make([][]float64, len(bs))
	for r := range warmup + rounds {
		for i, b := range bs {
			ms, err := f.timed(func() error { return f.launch(b, f.n, 0, false) })
			if err != nil {
				return nil, err
			}
			if r >= warmup {
				out[i] = append(out[i], ms)
			}
		}
	}
	return out, nil
}

// Poison values of the two outputs (index 0: the BVH kernels', 1: the
// brute force's): NaN payloads and ids no kernel writes, different for
// each output, so that a row neither kernel wrote compares unequal.
var (
	poisonF = [2]uint32{0x7fc0dead, 0x7fc0beef}
	poisonI = [2]int32{0x5eadbeef, 0x6eadbeef}
)

// poison fills output k with its NaN payload and impossible id.
func (f *fixture) poison(k int) error {
	o := f.out[k]
	var errs []error
	for _, b := range []*launch.Buffer[float32]{o.Distance, o.RayT, o.Point, o.EdgeT, o.EdgePoint} {
		errs = append(errs, b.Memset32(f.s, poisonF[k]))
	}
	for _, b := range []*launch.Buffer[int32]{o.ShapeID, o.EdgeID, o.GlobalEdgeID} {
		errs = append(errs, b.Memset32(f.s, uint32(poisonI[k])))
	}
	return errors.Join(errs...)
}

// unwritten reports whether row i of r (downloaded from output k) still
// holds output k's poison in any field the query writes.
func unwritten(r *edge.RayResult, i, k int, ray bool) bool {
	p := func(v float32) bool { return math.Float32bits(v) == poisonF[k] }
	if p(r.Distance[i]) || p(r.EdgeT[i]) || r.ShapeID[i] == poisonI[k] || r.EdgeID[i] == poisonI[k] || r.GlobalEdgeID[i] == poisonI[k] {
		return true
	}
	for c := range 3 {
		if p(r.EdgePoint[3*i+c]) || (ray && p(r.Point[3*i+c])) {
			return true
		}
	}
	return ray && p(r.RayT[i])
}

// comparedFields are the fields sameRow compares for a query.
func comparedFields(ray bool) []string {
	if ray {
		return []string{"distance", "ray_t", "point", "edge_t", "edge_point", "shape_id", "edge_id", "global_edge_id"}
	}
	return []string{"distance", "edge_t", "edge_point", "shape_id", "edge_id", "global_edge_id"}
}

// download copies the first m rows of output k into a host ray record
// (RayT and Point stay zero for points).
func (f *fixture) download(k, m int, ray bool) (*edge.RayResult, error) {
	r := edge.NewRayResult(m)
	return r, f.downloadRange(k, 0, m, ray, r)
}

// downloadRange copies rows [lo, hi) of output k into the same rows of dst.
func (f *fixture) downloadRange(k, lo, hi int, ray bool, dst *edge.RayResult) error {
	o := f.out[k]
	var steps []error
	get := func(b *launch.Buffer[float32], per int, to []float32) {
		v, err := b.View(per*lo, per*(hi-lo))
		if err == nil {
			err = v.Download(f.s, to[per*lo:per*hi])
		}
		steps = append(steps, err)
	}
	geti := func(b *launch.Buffer[int32], to []int32) {
		v, err := b.View(lo, hi-lo)
		if err == nil {
			err = v.Download(f.s, to[lo:hi])
		}
		steps = append(steps, err)
	}
	get(o.Distance, 1, dst.Distance)
	get(o.EdgeT, 1, dst.EdgeT)
	get(o.EdgePoint, 3, dst.EdgePoint)
	if ray {
		get(o.RayT, 1, dst.RayT)
		get(o.Point, 3, dst.Point)
	} else {
		clear(dst.RayT[lo:hi])
		clear(dst.Point[3*lo : 3*hi])
	}
	geti(o.ShapeID, dst.ShapeID)
	geti(o.EdgeID, dst.EdgeID)
	geti(o.GlobalEdgeID, dst.GlobalEdgeID)
	return errors.Join(steps...)
}

// sameRow compares row i of a with row j of b bit for bit (±0 aside).
func sameRow(a *edge.RayResult, i int, b *edge.RayResult, j int) bool {
	eq := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) || (x == 0 && y == 0) }
	if !eq(a.Distance[i], b.Distance[j]) || !eq(a.RayT[i], b.RayT[j]) || !eq(a.EdgeT[i], b.EdgeT[j]) ||
		a.ShapeID[i] != b.ShapeID[j] || a.EdgeID[i] != b.EdgeID[j] || a.GlobalEdgeID[i] != b.GlobalEdgeID[j] {
		return false
	}
	for k := range 3 {
		if !eq(a.Point[3*i+k], b.Point[3*j+k]) || !eq(a.EdgePoint[3*i+k], b.EdgePoint[3*j+k]) {
			return false
		}
	}
	return true
}

// check poisons, reruns the BVH query, compares its first bruteRows rows
// with the brute force and a random sample with the CPU reference.
func (f *fixture) check(es *edge.Scene, b *batch, q *queryResult, bruteRows, sample int) error {
	ray := b.d != nil
	if err := f.poison(0); err != nil {
		return err
	}
	if err := f.poison(1); err != nil {
		return err
	}
	if err := f.launch(b, f.n, 0, false); err != nil {
		return err
	}
	got, err := f.download(0, f.n, ray)
	if err != nil {
		return err
	}
	q.Compared = comparedFields(ray)
	for i := range f.n {
		if unwritten(got, i, 0, ray) {
			q.UnwrittenBVH++
		} else if got.GlobalEdgeID[i] < 0 {
			q.Misses++
		}
	}
	var brute *edge.RayResult
	if len(f.peers) == 0 {
		if q.BruteMs, err = f.timed(func() error { return f.launch(b, bruteRows, 1, true) }); err != nil {
			return err
		}
		if brute, err = f.download(1, bruteRows, ray); err != nil {
			return err
		}
	} else if brute, q.BruteMs, err = f.bruteOnAll(b, bruteRows, ray); err != nil {
		return err
	}
	q.BruteChecked = bruteRows
	for i := range bruteRows {
		if unwritten(brute, i, 1, ray) {
			q.UnwrittenBrute++
		}
		if !sameRow(got, i, brute, i) {
			if q.BruteMismatches == 0 {
				fmt.Printf("  %s row %d: BVH gid %d d %v, brute gid %d d %v\n", b.name, i,
					got.GlobalEdgeID[i], got.Distance[i], brute.GlobalEdgeID[i], brute.Distance[i])
			}
			q.BruteMismatches++
		}
	}
	rows := rand.New(rand.NewPCG(uint64(f.n), uint64(len(b.name)))).Perm(f.n)[:min(sample, f.n)]
	sub := func(v []float32, per int) []float32 {
		if v == nil {
			return nil
		}
		out := make([]float32, 0, per*len(rows))
		for _, i := range rows {
			out = append(out, v[per*i:per*i+per]...)
		}
		return out
	}
	var want *edge.RayResult
	if ray {
		want, err = es.NearestRay(sub(b.p, 3), sub(b.d, 3), sub(b.tmax, 1), nil)
	} else {
		var pr *edge.PointResult
		if pr, err = es.NearestPoint(sub(b.p, 3), nil); err == nil {
			want = edge.NewRayResult(len(rows))
			want.Distance, want.EdgeT, want.EdgePoint = pr.Distance, pr.EdgeT, pr.EdgePoint
			want.ShapeID, want.EdgeID, want.GlobalEdgeID = pr.ShapeID, pr.EdgeID, pr.GlobalEdgeID
		}
	}
	if err != nil {
		return err
	}
	q.RefChecked = len(rows)
	for j, i := range rows {
		if !sameRow(got, i, want, j) {
			if q.RefMismatches == 0 {
				fmt.Printf("  %s row %d: GPU gid %d d %v, CPU gid %d d %v\n", b.name, i,
					got.GlobalEdgeID[i], got.Distance[i], want.GlobalEdgeID[j], want.Distance[j])
			}
			q.RefMismatches++
		}
	}
	return nil
}
