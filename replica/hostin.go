package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// hostIn holds a host job's inputs, aligned with its input layout: one
// slice per column (nil where the column is absent). Masks are bool slices,
// uploaded as one byte per element. Input columns are row columns.
type hostIn struct {
	f32 [][]float32
	i32 [][]int32
	u8  [][]bool
	f64 [][]float64
}

// check verifies that every present column of l holds rows [0, hi).
func (h hostIn) check(l layout, hi int) error {
	return errors.Join(checkRows(l.f32, h.f32, hi), checkRows(l.i32, h.i32, hi), checkRows(l.u8, h.u8, hi),
		checkRows(l.f64, h.f64, hi))
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
		if c.per > 0 {
			if err := cols.u8[i].Upload(s, boolBytes(h.u8[i][c.per*lo:c.per*hi])); err != nil {
				return err
			}
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
