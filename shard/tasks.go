package shard

import (
	"fmt"
	"strconv"

	"github.com/rayd-go/rayd/geom"
)

// Part is one retired chunk of a per_ray result: rows [Start, Stop) of the
// batch.
type Part[R any] struct {
	Start, Stop int
	Record      R
}

// RowTask is a per_ray task whose result record has type R.
type RowTask[R any] interface {
	Task
	// Rows validates the inputs and returns the batch size.
	Rows() (int, error)
	// Assemble places parts (sorted by Start, disjoint, covering
	// [0, total)) into one record of total rows.
	Assemble(total int, parts []Part[R]) (R, error)
	// RecordRowBytes is the size of one row of a record
	// (ChunkPlan.MeasuredRowBytes).
	RecordRowBytes(rec R) int
}

// Per-row widths of the byte model (spec §3.2): one ray (two float3) is 24
// input bytes, a ray with its tmax 28; a reflection bounce charges 50 bytes
// of tape and returns 21.
const (
	rayInBytes     = 24
	rayTmaxInBytes = 28
	reflTapeBytes  = 50
	reflOutBytes   = 21
)

// IntersectOp is the byte model of intersect: key "intersect_full" with a
// row of flags.RowBytes() output bytes (76 for geom.FlagsAll), or
// "intersect_reduced" with 4 bytes for geom.FlagsNone; 24 input bytes.
func IntersectOp(flags geom.Flags) Op {
	key := OpIntersectFull
	if flags&geom.FlagsAll == geom.FlagsNone {
		key = OpIntersectReduced
	}
	row := flags.RowBytes()
	return Op{Key: key, Class: PerRay, RowBytes: row, ResultRowBytes: row, TransferRowBytes: rayInBytes + row}
}

// TraceReflectionsOp is the byte model of trace_reflections with b bounces:
// key "trace_reflections:<b>", 71·b bytes of output and tape, 21·b of
// output, 28 + 21·b transferred (memory cost 71·b + 28).
func TraceReflectionsOp(b int) Op {
	return Op{Key: OpTraceReflections + ":" + strconv.Itoa(b), Class: PerRay,
		RowBytes: (reflTapeBytes + reflOutBytes) * b, ResultRowBytes: reflOutBytes * b,
		TransferRowBytes: rayTmaxInBytes + reflOutBytes*b}
}

// VisibleOp is the byte model of visible: key "visible", 1 output byte,
// 26 transferred.
func VisibleOp() Op {
	return Op{Key: OpVisible, Class: PerRay, RowBytes: 1, ResultRowBytes: 1, TransferRowBytes: 26}
}

// Intersect is the host-path intersect task: rays with optional per-row
// tmax and active mask (empty slices mean none), and the fields to return.
type Intersect struct {
	O, D, TMax []float32
	Active     []bool
	Flags      geom.Flags
	// TMin and Mask are the optional per-ray limits (geom.RayLimits).
	TMin []float32
	Mask []uint8
}

// Op returns IntersectOp(t.Flags).
func (t *Intersect) Op() Op { return IntersectOp(t.Flags) }

// Rows validates the batch (geom.CheckRays, then the flags).
func (t *Intersect) Rows() (int, error) {
	n, err := geom.CheckRays(t.O, t.D, t.TMax, t.Active)
	if err != nil {
		return 0, err
	}
	if err := geom.CheckRayLimits(n, t.TMax, geom.RayLimits{TMin: t.TMin, Mask: t.Mask}); err != nil {
		return 0, err
	}
	if !t.Flags.Valid() {
		return 0, &geom.ArgumentError{Field: "flags", Reason: fmt.Sprintf("unknown bits %#x", uint32(t.Flags&^geom.FlagsAll))}
	}
	return n, nil
}

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *Intersect) Slice(lo, hi int) *Intersect {
	return &Intersect{O: t.O[3*lo : 3*hi], D: t.D[3*lo : 3*hi], TMax: rows1(t.TMax, lo, hi),
		Active: rows1(t.Active, lo, hi), Flags: t.Flags, TMin: rows1(t.TMin, lo, hi), Mask: rows1(t.Mask, lo, hi)}
}

// Assemble concatenates the parts' fields in row order.
func (t *Intersect) Assemble(total int, parts []Part[*geom.Hits]) (*geom.Hits, error) {
	h := geom.NewHits(total, t.Flags)
	for _, p := range parts {
		r := p.Record
		if r.Len() != p.Stop-p.Start || r.Flags != h.Flags {
			return nil, fmt.Errorf("shard: intersect chunk [%d,%d) has %d rows with flags %v", p.Start, p.Stop, r.Len(), r.Flags)
		}
		place(h.T, r.T, p.Start, 1)
		place(h.P, r.P, p.Start, 3)
		place(h.N, r.N, p.Start, 3)
		place(h.GeoN, r.GeoN, p.Start, 3)
		place(h.Bary, r.Bary, p.Start, 3)
		place(h.UV, r.UV, p.Start, 2)
		place(h.ShapeID, r.ShapeID, p.Start, 1)
		place(h.PrimID, r.PrimID, p.Start, 1)
		place(h.LocalPrimID, r.LocalPrimID, p.Start, 1)
		place(h.GlobalPrimID, r.GlobalPrimID, p.Start, 1)
	}
	return h, nil
}

// RecordRowBytes returns h.RowBytes().
func (t *Intersect) RecordRowBytes(h *geom.Hits) int { return h.RowBytes() }

// TraceReflections is the host-path trace_reflections task.
type TraceReflections struct {
	O, D, TMax []float32
	Active     []bool
	Bounces    int
	// TMin (first bounce) and Mask (every bounce) are the optional per-ray
	// limits (geom.RayLimits).
	TMin []float32
	Mask []uint8
}

// Op returns TraceReflectionsOp(t.Bounces).
func (t *TraceReflections) Op() Op { return TraceReflectionsOp(t.Bounces) }

// Rows validates the bounce count and the batch.
func (t *TraceReflections) Rows() (int, error) {
	if t.Bounces < 1 {
		return 0, &geom.ArgumentError{Field: "maxBounces", Reason: fmt.Sprintf("%d, must be at least 1", t.Bounces)}
	}
	n, err := geom.CheckRays(t.O, t.D, t.TMax, t.Active)
	if err != nil {
		return 0, err
	}
	return n, geom.CheckRayLimits(n, t.TMax, geom.RayLimits{TMin: t.TMin, Mask: t.Mask})
}

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *TraceReflections) Slice(lo, hi int) *TraceReflections {
	return &TraceReflections{O: t.O[3*lo : 3*hi], D: t.D[3*lo : 3*hi], TMax: rows1(t.TMax, lo, hi),
		Active: rows1(t.Active, lo, hi), Bounces: t.Bounces, TMin: rows1(t.TMin, lo, hi), Mask: rows1(t.Mask, lo, hi)}
}

// Assemble concatenates the parts' slots in row order.
func (t *TraceReflections) Assemble(total int, parts []Part[*geom.Reflections]) (*geom.Reflections, error) {
	r := geom.NewReflections(total, t.Bounces)
	b := t.Bounces
	for _, p := range parts {
		c := p.Record
		if c.Bounces != b || c.Len() != p.Stop-p.Start {
			return nil, fmt.Errorf("shard: trace_reflections chunk [%d,%d) has %d rows of %d bounces", p.Start, p.Stop, c.Len(), c.Bounces)
		}
		place(r.Valid, c.Valid, p.Start, b)
		place(r.T, c.T, p.Start, b)
		place(r.PrimIDs, c.PrimIDs, p.Start, b)
		place(r.ImageSources, c.ImageSources, p.Start, 3*b)
	}
	return r, nil
}

// RecordRowBytes is 21 bytes per bounce (the full record).
func (t *TraceReflections) RecordRowBytes(r *geom.Reflections) int {
	return geom.ReflectionRowBytes(r.Bounces, true)
}

// Visible is the host-path visible task over segments start → end.
type Visible struct {
	Start, End []float32
	Active     []bool
}

// Op returns VisibleOp().
func (t *Visible) Op() Op { return VisibleOp() }

// Rows validates the batch (geom.CheckSegments).
func (t *Visible) Rows() (int, error) { return geom.CheckSegments(t.Start, t.End, t.Active) }

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *Visible) Slice(lo, hi int) *Visible {
	return &Visible{Start: t.Start[3*lo : 3*hi], End: t.End[3*lo : 3*hi], Active: rows1(t.Active, lo, hi)}
}

// Assemble concatenates the parts in row order.
func (t *Visible) Assemble(total int, parts []Part[[]bool]) ([]bool, error) {
	out := make([]bool, total)
	for _, p := range parts {
		if len(p.Record) != p.Stop-p.Start {
			return nil, fmt.Errorf("shard: visible chunk [%d,%d) has %d rows", p.Start, p.Stop, len(p.Record))
		}
		copy(out[p.Start:], p.Record)
	}
	return out, nil
}

// RecordRowBytes is 1.
func (t *Visible) RecordRowBytes([]bool) int { return 1 }

// rows1 slices an optional one-per-row input (empty stays empty).
func rows1[T any](v []T, lo, hi int) []T {
	if len(v) == 0 {
		return v
	}
	return v[lo:hi]
}

// place copies a chunk's field into dst at row start (per values per row);
// a field the record does not materialize is nil on both sides.
func place[T any](dst, src []T, start, per int) {
	if dst != nil {
		copy(dst[per*start:], src)
	}
}
