package main

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/rf"
)

// poison is the fill of one scene's outputs before the checked run: a
// 32-bit word for float32 and int32 fields (a NaN no kernel writes, an id
// beyond every scene) and a byte for one-byte fields (neither 0 nor 1).
// The two scenes get different patterns, so that a row left unwritten by
// either differs from the other scene's row even when both left it.
type poison struct {
	Word uint32
	Byte uint8
}

var (
	singlePoison = poison{Word: 0x7fc00bad, Byte: 0xbd}
	replPoison   = poison{Word: 0x7fc0dead, Byte: 0xde}
)

// of is the pattern of a field's elements: the byte for one-byte fields.
func (p poison) of(bytes bool) uint32 {
	if bytes {
		return uint32(p.Byte)
	}
	return p.Word
}

// field is one output field of both scenes as raw element bits (float32
// and int32 bits, or bytes widened), PerRow elements per row.
type field struct {
	Name         string
	PerRow       int
	Bytes        bool
	Single, Repl []uint32
}

// check is the correctness outcome of a row: per_ray rows compare every
// field of every row bit for bit, accumulation rows the counters exactly
// and every grid by relative L2.
type check struct {
	OutputsPoisoned bool           `json:"outputs_poisoned"`
	Fields          []string       `json:"fields_compared"`
	RowsCompared    int            `json:"rows_compared,omitempty"`
	RowsMismatched  int            `json:"rows_mismatched"`
	RowsPoisoned    int            `json:"rows_left_poisoned"`
	FieldMismatches map[string]int `json:"field_mismatches,omitempty"`
	CountersEqual   *bool          `json:"counters_equal,omitempty"`
	GridRelL2       *float64       `json:"grid_rel_l2_max,omitempty"`
	GridTolerance   float64        `json:"grid_tolerance,omitempty"`
	Pass            bool           `json:"pass"`
}

// compareFields compares n rows of every field of the single-device and
// the replicated outputs: a row mismatches when any element of any field
// differs in its bits, and is left poisoned when any element still holds
// its scene's poison (single or replicated); either fails the check.
func compareFields(n int, fs []field) (check, error) {
	c := check{OutputsPoisoned: true, RowsCompared: n, FieldMismatches: map[string]int{}}
	if len(fs) == 0 {
		return c, fmt.Errorf("no field to compare")
	}
	for _, f := range fs {
		if f.PerRow < 1 || len(f.Single) != n*f.PerRow || len(f.Repl) != n*f.PerRow {
			return c, fmt.Errorf("field %s: %d and %d elements for %d rows of %d", f.Name, len(f.Single), len(f.Repl), n, f.PerRow)
		}
		c.Fields = append(c.Fields, f.Name)
	}
	for i := range n {
		bad, poisoned := false, false
		for _, f := range fs {
			ps, pr := singlePoison.of(f.Bytes), replPoison.of(f.Bytes)
			differs := false
			for k := i * f.PerRow; k < (i+1)*f.PerRow; k++ {
				s, r := f.Single[k], f.Repl[k]
				differs = differs || s != r
				poisoned = poisoned || s == ps || r == pr
			}
			if differs {
				c.FieldMismatches[f.Name]++
				bad = true
			}
		}
		if bad {
			c.RowsMismatched++
		}
		if poisoned {
			c.RowsPoisoned++
		}
	}
	c.Pass = c.RowsMismatched == 0 && c.RowsPoisoned == 0
	return c, nil
}

// gridTolerance bounds the relative L2 deviation of every merged grid.
const gridTolerance = 1e-6

// compareAccum compares a replicated accumulation with the single-device
// one: every counter exactly, every grid within gridTolerance relative L2.
func compareAccum(want, got *rf.AccumResult) (check, error) {
	c := check{GridTolerance: gridTolerance}
	if want == nil || got == nil {
		return c, fmt.Errorf("no accumulation result")
	}
	wg, gg := accumGrids(want), accumGrids(got)
	worst := 0.0
	for i, g := range wg {
		if len(g.v) != len(gg[i].v) {
			return c, fmt.Errorf("grid %s: %d and %d cells", g.name, len(g.v), len(gg[i].v))
		}
		worst = max(worst, benchhead.RelL2(g.v, gg[i].v))
		c.Fields = append(c.Fields, g.name)
	}
	wc, gc := accumCounters(want), accumCounters(got)
	equal := true
	for i, x := range wc {
		c.Fields = append(c.Fields, x.name)
		equal = equal && x.v == gc[i].v
	}
	if math.IsNaN(worst) || math.IsInf(worst, 0) {
		worst = math.MaxFloat64 // a non-finite cell: as far off as JSON can say
	}
	c.CountersEqual, c.GridRelL2 = &equal, &worst
	c.Pass = equal && worst <= gridTolerance
	return c, nil
}

type namedGrid struct {
	name string
	v    []float64
}

func accumGrids(r *rf.AccumResult) []namedGrid {
	return []namedGrid{{"power", r.Power}, {"field_x_re", r.FieldXRe}, {"field_x_im", r.FieldXIm},
		{"field_y_re", r.FieldYRe}, {"field_y_im", r.FieldYIm}, {"field_z_re", r.FieldZRe}, {"field_z_im", r.FieldZIm}}
}

type namedCounter struct {
	name string
	v    int32
}

func accumCounters(r *rf.AccumResult) []namedCounter {
	return []namedCounter{{"direct_count", r.DirectCount}, {"keller_count", r.KellerCount}, {"suffix_count", r.SuffixCount},
		{"edge_uses", r.EdgeUses}, {"vis_rejects", r.VisRejects}, {"utd_rejects", r.UtdRejects}, {"edge_vis_rejects", r.EdgeVisRejects}}
}
