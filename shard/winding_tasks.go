package shard

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// OpWindingSums is the winding-number query (per_ray): each row's sum
// depends on that row and the scene alone, so the placed parts of a
// sharded call are bitwise the single-device record.
const OpWindingSums = "winding_sums"

// windingOutBytes is a winding row: the float64 sum and its bound.
const windingOutBytes = 16

// WindingSumsOp is the byte model of winding_sums: 16 bytes out per row, a
// point and an active flag in.
func WindingSumsOp() Op {
	return Op{Key: OpWindingSums, Class: PerRay, RowBytes: windingOutBytes, ResultRowBytes: windingOutBytes,
		TransferRowBytes: pointInBytes + 1 + windingOutBytes}
}

// WindingSums is the winding_sums task: query points (3 per row) and an
// optional active mask (geom.WindingSums).
type WindingSums struct {
	Points []float32
	Active []bool
}

// Op returns WindingSumsOp().
func (t *WindingSums) Op() Op { return WindingSumsOp() }

// Rows validates the batch (geom.CheckPoints).
func (t *WindingSums) Rows() (int, error) { return geom.CheckPoints(t.Points, t.Active) }

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *WindingSums) Slice(lo, hi int) *WindingSums {
	return &WindingSums{Points: t.Points[3*lo : 3*hi], Active: rows1(t.Active, lo, hi)}
}

// Assemble places the parts' rows in row order.
func (t *WindingSums) Assemble(total int, parts []Part[*geom.WindingSums]) (*geom.WindingSums, error) {
	r := &geom.WindingSums{Sum: make([]float64, total), Bound: make([]float64, total)}
	for _, p := range parts {
		c := p.Record
		if c == nil || c.Len() != p.Stop-p.Start || len(c.Bound) != c.Len() {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) is not a record of its rows", OpWindingSums, p.Start, p.Stop)
		}
		place(r.Sum, c.Sum, p.Start, 1)
		place(r.Bound, c.Bound, p.Start, 1)
	}
	return r, nil
}

// RecordRowBytes is 16.
func (t *WindingSums) RecordRowBytes(*geom.WindingSums) int { return windingOutBytes }

var _ RowTask[*geom.WindingSums] = (*WindingSums)(nil)
