package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// hostIn holds a host job's inputs, aligned with its input layout: one
// slice per column (nil where the column is absent). Masks are bool slices,
// uploaded as one byte per element; a byte column (a ray's visibility
// mask) is given in raw at its u8 index instead, uploaded as is. Input
// columns are row columns.
type hostIn struct {
	f32 [][]float32
	i32 [][]int32
	u8  [][]bool
	f64 [][]float64
	raw [][]uint8
}

// check verifies that every present column of l holds rows [0, hi).
func (h hostIn) check(l layout, hi int) error {
	return errors.Join(checkRows(l.f32, h.f32, hi), checkRows(l.i32, h.i32, hi), h.checkBytes(l.u8, hi),
		checkRows(l.f64, h.f64, hi))
}

// checkBytes is checkRows over the byte columns (bool or raw).
func (h hostIn) checkBytes(l []spec, hi int) error {
	for i, c := range l {
		if raw := h.rawAt(i); raw != nil && c.per > 0 && !c.fixed {
			if len(raw) < c.per*hi {
				return fmt.Errorf("replica: rows [0,%d) exceed %s", hi, c.name)
			}
			continue
		}
		if err := checkRows(l[i:i+1], h.u8[min(i, len(h.u8)):min(i+1, len(h.u8))], hi); err != nil {
			return err
		}
	}
	return nil
}

// rawAt is the raw byte column at u8 index i, or nil.
func (h hostIn) rawAt(i int) []uint8 {
	if i < len(h.raw) {
		return h.raw[i]
	}
	return nil
}

func checkRows[T any](l []spec, src [][]T, hi int) error {
	for i, c := range l {
		if c.per == 0 {
			continue
		}
		if c.fixed {
			return fmt.Errorf("replica: input %s is per chunk, not per row", c.name)
		}
		if i >= len(src) || len(src[i]) < c.per*hi {
			return fmt.Errorf("replica: rows [0,%d) exceed %s", hi, c.name)
		}
	}
	return nil
}

// upload queues the copies of rows [lo, hi) of every present column into
// cols (allocated for hi − lo rows on s's device) on s.
func (h hostIn) upload(s *launch.Stream, l layout, cols columns, lo, hi int) error {
	if hi == lo {
		return nil
	}
	if err := uploadRows(s, l.f32, cols.f32, h.f32, lo, hi); err != nil {
		return err
	}
	if err := uploadRows(s, l.i32, cols.i32, h.i32, lo, hi); err != nil {
		return err
	}
	if err := uploadRows(s, l.f64, cols.f64, h.f64, lo, hi); err != nil {
		return err
	}
	for i, c := range l.u8 {
		if c.per == 0 {
			continue
		}
		src := h.rawAt(i)
		if src != nil {
			src = src[c.per*lo : c.per*hi]
		} else {
			src = boolBytes(h.u8[i][c.per*lo : c.per*hi])
		}
		if err := cols.u8[i].Upload(s, src); err != nil {
			return err
		}
	}
	return nil
}

func uploadRows[T launch.Elem](s *launch.Stream, l []spec, bufs []*launch.Buffer[T], src [][]T, lo, hi int) error {
	for i, c := range l {
		if c.per > 0 {
			if err := bufs[i].Upload(s, src[i][c.per*lo:c.per*hi]); err != nil {
				return err
			}
		}
	}
	return nil
}

// boolBytes converts a mask to one byte per element.
func boolBytes(v []bool) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		if x {
			out[i] = 1
		}
	}
	return out
}

// present is 1 when a slice is given, 0 otherwise (an optional column's
// width multiplier).
func present[T any](v []T) int {
	if len(v) > 0 {
		return 1
	}
	return 0
}
