package shard

import (
	"fmt"
	"strconv"

	"github.com/rayd-go/rayd/geom"
)

// OpCrossings is the crossings query (per_ray: every row's record depends
// on its segment and the scene alone); its key carries k ("crossings:8").
const OpCrossings = "crossings"

// CrossingsOp is the byte model of crossings with k slots per row: key
// "crossings:<k>", 12 bytes per slot plus 5 per row (count and overflow)
// of output, 24 input bytes (two float3) and 1 of active mask transferred.
func CrossingsOp(k int) Op {
	out := geom.CrossingSlotBytes*max(k, 1) + geom.CrossingRowBytes
	return Op{Key: OpCrossings + ":" + strconv.Itoa(k), Class: PerRay, RowBytes: out, ResultRowBytes: out,
		TransferRowBytes: rayInBytes + 1 + out}
}

// Crossings is the crossings task over segments start → end with K slots
// per row (geom.Crossings).
type Crossings struct {
	Start, End []float32
	Active     []bool
	K          int
}

// Op returns CrossingsOp(t.K).
func (t *Crossings) Op() Op { return CrossingsOp(t.K) }

// Rows validates k and the batch.
func (t *Crossings) Rows() (int, error) {
	if err := geom.CheckCrossingsK(t.K); err != nil {
		return 0, err
	}
	return geom.CheckSegments(t.Start, t.End, t.Active)
}

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *Crossings) Slice(lo, hi int) *Crossings {
	return &Crossings{Start: t.Start[3*lo : 3*hi], End: t.End[3*lo : 3*hi], Active: rows1(t.Active, lo, hi), K: t.K}
}

// Assemble places the parts' rows in row order.
func (t *Crossings) Assemble(total int, parts []Part[*geom.Crossings]) (*geom.Crossings, error) {
	r := geom.NewCrossings(total, t.K)
	for _, p := range parts {
		c := p.Record
		if c == nil || c.Rows() != p.Stop-p.Start || len(c.T) != c.Rows()*c.K {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) is not a record of its rows", OpCrossings, p.Start, p.Stop)
		}
		if err := r.Place(p.Start, c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// RecordRowBytes is 12·K + 5.
func (t *Crossings) RecordRowBytes(*geom.Crossings) int {
	return geom.CrossingSlotBytes*t.K + geom.CrossingRowBytes
}

var _ RowTask[*geom.Crossings] = (*Crossings)(nil)
