package shard

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// SegmentTask is implemented by the per_ray tasks that answer each row with
// the closest-blocker query over a fixed number of segments: the visibility
// variants (visible_pair, visible_edge, visible_chain). A replica runs the
// blocker query over the segments of its rows [lo, hi) — segments
// [lo·PerRow, hi·PerRow) of the batch — and hands the blockers to
// FinishRows, which returns the task's record for those rows.
type SegmentTask interface {
	Task
	// SegmentBatch is the expanded batch (the same value on every call).
	SegmentBatch() *geom.SegmentBatch
	// FinishRows turns the blockers of rows [lo, hi) into the record of
	// those rows.
	FinishRows(lo, hi int, blockers []int32) (any, error)
}

// Segments is a visibility variant as a per_ray task: Batch holds the
// variant expanded into segments (geom.PairSegments, EdgeSegments or
// ChainSegments), Finish reduces a row range's blockers to its record and
// Join places the parts of a sharded call in row order. Key is the
// operation key (OpVisiblePair, OpVisibleEdge or OpVisibleChain) and
// RowBytes the size of one row of the record.
type Segments[R any] struct {
	Key      string
	Batch    *geom.SegmentBatch
	Finish   func(b *geom.SegmentBatch, lo, hi int, blockers []int32) (R, error)
	Join     func(total int, parts []Part[R]) (R, error)
	RowBytes int
}

// Per-segment widths of the byte model: a segment (two float3) is 24 input
// bytes plus its active byte, an ignored id 4; a blocker id is 4 bytes.
const (
	segInBytes  = 25
	segOutBytes = 4
)

// Op is the byte model of the variant: per row, PerRow segments in (and
// their ignore ids) and PerRow blocker ids out.
func (t *Segments[R]) Op() Op {
	per, k := 1, 0
	if t.Batch != nil {
		per, k = max(t.Batch.PerRow, 1), t.Batch.K
	}
	out := segOutBytes * per
	return Op{Key: t.Key, Class: PerRay, RowBytes: out, ResultRowBytes: max(t.RowBytes, 1),
		TransferRowBytes: per*(segInBytes+4*k) + out}
}

// Rows returns the batch's row count.
func (t *Segments[R]) Rows() (int, error) {
	if t.Batch == nil || t.Finish == nil || t.Join == nil {
		return 0, fmt.Errorf("%w: %s: a segment task needs a batch, Finish and Join", ErrInvalidOption, t.Key)
	}
	return t.Batch.Rows, nil
}

// SegmentBatch implements SegmentTask.
func (t *Segments[R]) SegmentBatch() *geom.SegmentBatch { return t.Batch }

// FinishRows implements SegmentTask.
func (t *Segments[R]) FinishRows(lo, hi int, blockers []int32) (any, error) {
	return t.Finish(t.Batch, lo, hi, blockers)
}

// Assemble places the parts in row order (Join).
func (t *Segments[R]) Assemble(total int, parts []Part[R]) (R, error) { return t.Join(total, parts) }

// RecordRowBytes is RowBytes.
func (t *Segments[R]) RecordRowBytes(R) int { return t.RowBytes }

// PairTask is visible_pair over a geom.PairSegments batch.
func PairTask(b *geom.SegmentBatch) *Segments[*geom.PairVisibility] {
	return &Segments[*geom.PairVisibility]{Key: OpVisiblePair, Batch: b, Finish: geom.PairFinish, RowBytes: 2,
		Join: func(total int, parts []Part[*geom.PairVisibility]) (*geom.PairVisibility, error) {
			r := &geom.PairVisibility{A: make([]bool, total), B: make([]bool, total)}
			for _, p := range parts {
				if p.Record.Len() != p.Stop-p.Start {
					return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows", OpVisiblePair, p.Start, p.Stop, p.Record.Len())
				}
				copy(r.A[p.Start:], p.Record.A)
				copy(r.B[p.Start:], p.Record.B)
			}
			return r, nil
		}}
}

// EdgeVisibilityTask is visible_edge over a geom.EdgeSegments batch.
func EdgeVisibilityTask(b *geom.SegmentBatch) *Segments[[]bool] {
	return &Segments[[]bool]{Key: OpVisibleEdge, Batch: b, Finish: geom.EdgeFinish, RowBytes: 1,
		Join: func(total int, parts []Part[[]bool]) ([]bool, error) {
			return (&Visible{}).Assemble(total, parts)
		}}
}

// ChainTask is visible_chain over a geom.ChainSegments batch.
func ChainTask(b *geom.SegmentBatch) *Segments[*geom.ChainVisibility] {
	return &Segments[*geom.ChainVisibility]{Key: OpVisibleChain, Batch: b, Finish: geom.ChainFinish, RowBytes: 9,
		Join: func(total int, parts []Part[*geom.ChainVisibility]) (*geom.ChainVisibility, error) {
			r := &geom.ChainVisibility{AllVisible: make([]bool, total), FirstBlockedSegment: make([]int32, total),
				FirstBlockedPrim: make([]int32, total)}
			for _, p := range parts {
				c := p.Record
				if c.Len() != p.Stop-p.Start {
					return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows", OpVisibleChain, p.Start, p.Stop, c.Len())
				}
				copy(r.AllVisible[p.Start:], c.AllVisible)
				copy(r.FirstBlockedSegment[p.Start:], c.FirstBlockedSegment)
				copy(r.FirstBlockedPrim[p.Start:], c.FirstBlockedPrim)
			}
			return r, nil
		}}
}
