package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

const poison = 0x7fc00bad

func nowMs() float64 { return float64(time.Now().UnixNano()) / 1e6 }

// check reruns variant v's launch, exactly as timed (v.run: the same
// launcher, layout, flags, outputs and persistent-launch counter), on
// poisoned outputs, verifies every row was written, and compares a random
// sample of rows with the CPU reference: bit for bit, or, when tolerant
// (OptiX, whose triangle test is not watertight), under the tie rule: the
// same t to 1e-5 relative, or a reference hit within 1e-4 (barycentric) of
// a triangle's boundary.
func (f *fixture) check(v *variant, oracle *ref.Scene, q *queryResult, sample int, tolerant bool) error {
	n := f.rays.N
	rows := sampleRows(n, sample)
	so, sd, se := make([]float32, 0, 3*len(rows)), make([]float32, 0, 3*len(rows)), make([]float32, 0, 3*len(rows))
	for _, i := range rows {
		so = append(so, f.o[3*i:3*i+3]...)
		sd = append(sd, f.dir[3*i:3*i+3]...)
		for k := 0; k < 3; k++ {
			se = append(se, f.o[3*i+k]+f.dir[3*i+k])
		}
	}
	q.Checked = len(rows)
	bad := 0
	switch {
	case strings.HasPrefix(q.Name, "intersect"):
		flags, out := geom.FlagsAll, f.full
		if strings.Contains(q.Name, "flags=0") {
			flags, out = geom.FlagsNone, f.tOnly
		}
		q.Compared = []string{"t"}
		if flags != geom.FlagsNone {
			q.Compared = []string{"t", "p", "n", "geo_n", "uv", "bary", "shape_id", "prim_id", "local_prim_id", "global_prim_id"}
		}
		if err := poisonHits(f.s, out); err != nil {
			return err
		}
		if err := v.run(); err != nil {
			return err
		}
		got, err := cuda.DownloadHits(f.s, out, n, flags)
		if err != nil {
			return err
		}
		for i, v := range got.T {
			if math.Float32bits(v) == poison {
				return fmt.Errorf("row %d of t was never written", i)
			}
		}
		want, err := oracle.Intersect(so, sd, nil, nil, flags)
		if err != nil {
			return err
		}
		for j, i := range rows {
			if !sameHitRow(got, i, want, j) && !(tolerant && closeHitRow(got, i, want, j)) {
				bad++
			}
		}
	case strings.HasPrefix(q.Name, "trace_reflections"):
		bounces, out := 1, f.refl[0]
		if strings.Contains(q.Name, "(4)") {
			bounces, out = 4, f.refl[1]
		}
		q.Compared = []string{"valid", "t", "prim"}
		for _, e := range []error{out.T.Memset32(f.s, poison), out.Prim.Memset32(f.s, poison), out.Valid.Memset8(f.s, 0xee)} {
			if e != nil {
				return e
			}
		}
		if err := v.run(); err != nil {
			return err
		}
		valid := make([]uint8, n*bounces)
		t := make([]float32, n*bounces)
		prim := make([]int32, n*bounces)
		for _, e := range []error{out.Valid.Download(f.s, valid), out.T.Download(f.s, t), out.Prim.Download(f.s, prim)} {
			if e != nil {
				return e
			}
		}
		for i := range valid {
			if valid[i] == 0xee || math.Float32bits(t[i]) == poison {
				return fmt.Errorf("slot %d was never written", i)
			}
		}
		want, err := oracle.TraceReflections(so, sd, nil, nil, bounces)
		if err != nil {
			return err
		}
		for j, i := range rows {
			for k := 0; k < bounces; k++ {
				g, w := i*bounces+k, j*bounces+k
				same := (valid[g] != 0) == want.Valid[w] && math.Float32bits(t[g]) == math.Float32bits(want.T[w]) && prim[g] == want.PrimIDs[w]
				if !same && !(tolerant && relClose(t[g], want.T[w], 1e-5)) {
					bad++
					break
				}
			}
		}
	case q.Name == "visible":
		q.Compared = []string{"visible"}
		if err := f.vis.Memset8(f.s, 0xee); err != nil {
			return err
		}
		if err := v.run(); err != nil {
			return err
		}
		got := make([]uint8, n)
		if err := f.vis.Download(f.s, got); err != nil {
			return err
		}
		for i, v := range got {
			if v == 0xee {
				return fmt.Errorf("row %d of visible was never written", i)
			}
		}
		want, err := oracle.Visible(so, se, nil)
		if err != nil {
			return err
		}
		for j, i := range rows {
			if (got[i] != 0) != want[j] {
				bad++
			}
		}
	default:
		return fmt.Errorf("no check for %q", q.Name)
	}
	q.Mismatches = bad
	q.BitwiseSame = bad == 0
	return nil
}

func poisonHits(s *launch.Stream, h accel.Hits) error {
	for _, b := range []*launch.Buffer[float32]{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary} {
		if b != nil {
			if err := b.Memset32(s, poison); err != nil {
				return err
			}
		}
	}
	for _, b := range []*launch.Buffer[int32]{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID} {
		if b != nil {
			if err := b.Memset32(s, poison); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameHitRow(a *geom.Hits, i int, b *geom.Hits, j int) bool {
	eq := func(x, y []float32, per int) bool {
		for k := 0; k < per && len(x) > 0; k++ {
			if math.Float32bits(x[per*i+k]) != math.Float32bits(y[per*j+k]) {
				return false
			}
		}
		return true
	}
	ieq := func(x, y []int32) bool { return len(x) == 0 || x[i] == y[j] }
	return eq(a.T, b.T, 1) && eq(a.P, b.P, 3) && eq(a.N, b.N, 3) && eq(a.GeoN, b.GeoN, 3) && eq(a.UV, b.UV, 2) &&
		eq(a.Bary, b.Bary, 3) && ieq(a.ShapeID, b.ShapeID) && ieq(a.PrimID, b.PrimID) &&
		ieq(a.LocalPrimID, b.LocalPrimID) && ieq(a.GlobalPrimID, b.GlobalPrimID)
}

// closeHitRow is the tie rule for a backend that is not watertight: t within
// 1e-5 relative (the same surface, perhaps a tied face), or a reference hit
// on a triangle's boundary, where either answer is acceptable.
func closeHitRow(a *geom.Hits, i int, b *geom.Hits, j int) bool {
	if relClose(a.T[i], b.T[j], 1e-5) {
		return true
	}
	if len(b.Bary) == 0 {
		return false
	}
	for k := 0; k < 3; k++ {
		if b.Bary[3*j+k] < 1e-4 {
			return true
		}
	}
	return false
}

func relClose(a, b float32, tol float64) bool {
	if math.IsInf(float64(a), 1) || math.IsInf(float64(b), 1) {
		return a == b
	}
	return math.Abs(float64(a)-float64(b)) <= tol*math.Max(math.Abs(float64(b)), 1e-30)
}
