package main

import (
	"errors"
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// Poison values of the two outputs (0: the timed walk's, 1: the brute
// force's): NaN payloads and ids no kernel writes.
var (
	poisonF = [2]uint32{0x7fc0dead, 0x7fc0beef}
	poisonI = [2]int32{0x5eadbeef, 0x6eadbeef}
)

// fixture holds the device points, the persistent counter and two output
// records.
type fixture struct {
	d    *launch.Device
	s    *launch.Stream
	bvh  *accel.BVH
	p    []float32
	q    accel.ClosestPoints
	out  [2]accel.ClosestOut
	bufs []interface{ Close() error }
	clk  benchhead.StreamTimer // timed's events
}

func alloc[T launch.Elem](f *fixture, n int, err *error) *launch.Buffer[T] {
	if *err != nil {
		return nil
	}
	b, e := launch.Alloc[T](f.d, max(n, 1))
	if e != nil {
		*err = e
		return nil
	}
	f.bufs = append(f.bufs, b)
	return b
}

func newFixture(d *launch.Device, s *launch.Stream, bvh *accel.BVH, p []float32) (*fixture, error) {
	f := &fixture{d: d, s: s, bvh: bvh, p: p}
	n := len(p) / 3
	var err error
	f.q = accel.ClosestPoints{P: alloc[float32](f, 3*n, &err), N: n, Limit: math.Inf(1), Counter: alloc[uint32](f, 1, &err)}
	for k := range f.out {
		f.out[k] = accel.ClosestOut{Distance: alloc[float32](f, n, &err), Point: alloc[float32](f, 3*n, &err),
			Bary: alloc[float32](f, 3*n, &err), ShapeID: alloc[int32](f, n, &err), LocalFaceID: alloc[int32](f, n, &err),
			GlobalFaceID: alloc[int32](f, n, &err)}
	}
	if err == nil {
		err = f.q.P.Upload(s, p)
	}
	if err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *fixture) close() {
	for _, b := range f.bufs {
		_ = b.Close()
	}
	_ = f.clk.Close()
}

// timed returns the milliseconds fn's work takes on the stream (CUDA events).
func (f *fixture) timed(fn func() error) (float64, error) { return f.clk.MS(f.s, fn) }

func (f *fixture) poison(k int) error {
	o := f.out[k]
	var errs []error
	for _, b := range []*launch.Buffer[float32]{o.Distance, o.Point, o.Bary} {
		errs = append(errs, b.Memset32(f.s, poisonF[k]))
	}
	for _, b := range []*launch.Buffer[int32]{o.ShapeID, o.LocalFaceID, o.GlobalFaceID} {
		errs = append(errs, b.Memset32(f.s, uint32(poisonI[k])))
	}
	return errors.Join(errs...)
}

// download copies the first n rows of output k.
func (f *fixture) download(k, n int) (*geom.ClosestPoints, error) {
	o, c := f.out[k], geom.NewClosestPointsZeroed(n)
	var errs []error
	for _, p := range []struct {
		b   *launch.Buffer[float32]
		dst []float32
	}{{o.Distance, c.Dist}, {o.Point, c.Point}, {o.Bary, c.Bary}} {
		errs = append(errs, p.b.Download(f.s, p.dst))
	}
	for _, p := range []struct {
		b   *launch.Buffer[int32]
		dst []int32
	}{{o.ShapeID, c.ShapeID}, {o.LocalFaceID, c.LocalFaceID}, {o.GlobalFaceID, c.GlobalFaceID}} {
		errs = append(errs, p.b.Download(f.s, p.dst))
	}
	return c, errors.Join(errs...)
}

// sameRow reports whether row i of a equals row j of b in every bit.
func sameRow(a *geom.ClosestPoints, i int, b *geom.ClosestPoints, j int) bool {
	eq := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	if !eq(a.Dist[i], b.Dist[j]) || a.ShapeID[i] != b.ShapeID[j] || a.LocalFaceID[i] != b.LocalFaceID[j] ||
		a.GlobalFaceID[i] != b.GlobalFaceID[j] {
		return false
	}
	for k := range 3 {
		if !eq(a.Point[3*i+k], b.Point[3*j+k]) || !eq(a.Bary[3*i+k], b.Bary[3*j+k]) {
			return false
		}
	}
	return true
}

// unwritten reports whether row i of output k still holds its poison.
func unwritten(c *geom.ClosestPoints, i, k int) bool {
	p := func(v float32) bool { return math.Float32bits(v) == poisonF[k] }
	if p(c.Dist[i]) || c.ShapeID[i] == poisonI[k] || c.LocalFaceID[i] == poisonI[k] || c.GlobalFaceID[i] == poisonI[k] {
		return true
	}
	for j := range 3 {
		if p(c.Point[3*i+j]) || p(c.Bary[3*i+j]) {
			return true
		}
	}
	return false
}

// check reruns the timed launch into poisoned outputs and compares it with
// the CPU reference on a random sample and with the device brute force on
// the leading rows.
func (f *fixture) check(tb *geom.Tables, res *configResult, o options) error {
	n := f.q.N
	if err := f.poison(0); err != nil {
		return err
	}
	if err := f.bvh.ClosestPoint(f.s, f.q, f.out[0]); err != nil {
		return err
	}
	got, err := f.download(0, n)
	if err != nil {
		return err
	}
	for i := range n {
		if unwritten(got, i, 0) {
			res.Unwritten++
		} else if !got.Valid(i) {
			res.Misses++
		}
	}
	// CPU reference on a random sample (without replacement).
	m := min(o.check, n)
	rows := rand.New(rand.NewPCG(uint64(n), 0xc4ec)).Perm(n)[:m]
	sample := make([]float32, 3*m)
	for j, i := range rows {
		copy(sample[3*j:3*j+3], f.p[3*i:3*i+3])
	}
	rs, err := ref.NewScene(tb)
	if err != nil {
		return err
	}
	want, err := rs.ClosestPoints(sample, 0, nil)
	if err != nil {
		return err
	}
	res.RefChecked = m
	for j, i := range rows {
		if !sameRow(want, j, got, i) {
			res.RefMismatches++
		}
	}
	// Device brute force on the leading rows.
	b := min(o.bruteRows, n)
	if b == 0 {
		return nil
	}
	if err := f.poison(1); err != nil {
		return err
	}
	q := f.q
	q.N = b
	ms, err := f.timed(func() error { return f.bvh.ClosestPointBrute(f.s, q, f.out[1]) })
	if err != nil {
		return err
	}
	res.BruteMs = ms
	brute, err := f.download(1, b)
	if err != nil {
		return err
	}
	res.BruteChecked = b
	for i := range b {
		if unwritten(brute, i, 1) || !sameRow(brute, i, got, i) {
			res.BruteMismatches++
		}
	}
	return nil
}
