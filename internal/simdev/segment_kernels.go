package simdev

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// segmentKernel runs a visibility variant (shard.SegmentTask): the
// closest-blocker query of the replica's reference scene
// (ref.Scene.SegmentBlockers) over the segments of the launch's rows — rows
// [lo, hi) own segments [lo·PerRow, hi·PerRow) of the expanded batch — then
// the task's FinishRows on the device, so a gather brings back the record of
// those rows.
type segmentKernel struct{ shard.SegmentTask }

// checkSegments refuses a batch whose slices do not hold Rows·PerRow
// segments (a batch not made by geom's constructors), which the kernel
// would otherwise slice out of range.
func checkSegments(b *geom.SegmentBatch) error {
	if b == nil {
		return &geom.ArgumentError{Field: "segments", Reason: "no segment batch"}
	}
	m := b.Rows * b.PerRow
	for _, f := range []struct {
		name      string
		got, want int
	}{{"start", len(b.Start), 3 * m}, {"end", len(b.End), 3 * m}, {"active", len(b.Active), m},
		{"ignore", len(b.Ignore), b.K * m}, {"row_ok", len(b.RowOK), b.Rows}} {
		if b.Rows < 0 || b.PerRow < 1 || b.K < 0 || f.got != f.want {
			return &geom.ArgumentError{Field: "segments",
				Reason: fmt.Sprintf("%s holds %d values for %d rows of %d segments", f.name, f.got, b.Rows, b.PerRow)}
		}
	}
	return nil
}

// segments are the scattered segments of a row range.
type segments struct {
	start, end []float32
	active     []bool
	ignore     []int32
	k          int
}

func (k segmentKernel) Input(lo, hi int, copied bool) (any, int) {
	b := k.SegmentBatch()
	s0, s1 := lo*b.PerRow, hi*b.PerRow
	in := &segments{start: clone(b.Start[3*s0:3*s1], copied), end: clone(b.End[3*s0:3*s1], copied),
		active: clone(b.Active[s0:s1], copied), k: b.K}
	if b.K > 0 {
		in.ignore = clone(b.Ignore[s0*b.K:s1*b.K], copied)
	}
	w, _ := rowWidths(k.Op())
	return in, w * (hi - lo)
}

func (k segmentKernel) run(d *state, in any, lo, hi int) (any, error) {
	s := in.(*segments)
	blk, err := d.scene.SegmentBlockers(s.start, s.end, s.active, s.ignore, s.k)
	if err != nil {
		return nil, err
	}
	return k.FinishRows(lo, hi, blk)
}

// Output copies the records of the built-in variants; a record of another
// variant is handed over as it is (FinishRows made it from the device's
// blockers alone).
func (k segmentKernel) Output(out any, copied bool) (any, int) {
	n := 0
	switch r := out.(type) {
	case *geom.PairVisibility:
		if copied {
			out = &geom.PairVisibility{A: clone(r.A, true), B: clone(r.B, true)}
		}
		n = r.Len()
	case []bool:
		out, n = clone(r, copied), len(r)
	case *geom.ChainVisibility:
		if copied {
			out = &geom.ChainVisibility{AllVisible: clone(r.AllVisible, true),
				FirstBlockedSegment: clone(r.FirstBlockedSegment, true), FirstBlockedPrim: clone(r.FirstBlockedPrim, true)}
		}
		n = r.Len()
	case interface{ Len() int }:
		n = r.Len()
	}
	return out, k.OutputBytes(0, n)
}

// OutputBytes is the variant's record (ResultRowBytes per row).
func (k segmentKernel) OutputBytes(lo, hi int) int {
	_, out := rowWidths(k.Op())
	return out * (hi - lo)
}

func (segmentKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
