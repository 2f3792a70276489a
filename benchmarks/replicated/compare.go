package main

import (
	"fmt"
	"math"
	"reflect"
)

// diff compares two records field by field, bit for bit (float32 and
// float64 by their bits, so NaN payloads and signed zeros count), and
// returns the names of the fields compared, the number of differing
// elements and the first of them (nil: none). Records are pointers to
// structs of slices, or slices.
func diff(want, got any) (fields []string, mismatches int, first *mismatch, err error) {
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	if wv.Kind() == reflect.Pointer {
		wv, gv = wv.Elem(), gv.Elem()
	}
	if wv.Type() != gv.Type() {
		return nil, 0, nil, fmt.Errorf("records of types %v and %v", wv.Type(), gv.Type())
	}
	if wv.Kind() == reflect.Slice {
		n, m, err := diffSlice("values", wv, gv)
		return []string{"values"}, n, m, err
	}
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		switch wv.Field(i).Kind() {
		case reflect.Slice:
			n, m, err := diffSlice(f.Name, wv.Field(i), gv.Field(i))
			if err != nil {
				return nil, 0, nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			fields = append(fields, f.Name)
			mismatches += n
			if first == nil {
				first = m
			}
		case reflect.Int:
			fields = append(fields, f.Name)
			if w, g := wv.Field(i).Int(), gv.Field(i).Int(); w != g {
				mismatches++
				if first == nil {
					first = &mismatch{Field: f.Name, Index: -1, Want: fmt.Sprint(w), Got: fmt.Sprint(g)}
				}
			}
		}
	}
	return fields, mismatches, first, nil
}

// diffSlice counts the differing elements of the slices a and b (field
// names them) and returns the first.
func diffSlice(field string, a, b reflect.Value) (int, *mismatch, error) {
	if a.Len() != b.Len() {
		return 0, nil, fmt.Errorf("lengths %d and %d", a.Len(), b.Len())
	}
	n := 0
	var first *mismatch
	for i := range a.Len() {
		x, y := a.Index(i), b.Index(i)
		var same bool
		switch x.Kind() {
		case reflect.Float32:
			same = math.Float32bits(float32(x.Float())) == math.Float32bits(float32(y.Float()))
		case reflect.Float64:
			same = math.Float64bits(x.Float()) == math.Float64bits(y.Float())
		default:
			same = x.Equal(y)
		}
		if !same {
			n++
			if first == nil {
				first = &mismatch{Field: field, Index: i, Want: showValue(x), Got: showValue(y)}
			}
		}
	}
	return n, first, nil
}

// mismatch is the first element at which two records differ: the field
// (the record's struct field, or "values" for a slice record), its index in
// that slice (−1 for an int field), and both values (%v, and their bits for
// floats).
type mismatch struct {
	Field string `json:"field"`
	Index int    `json:"index"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// showValue prints v, with the bits of a float (so that ±0 and NaN
// payloads show).
func showValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Float32:
		return fmt.Sprintf("%v (%#08x)", float32(v.Float()), math.Float32bits(float32(v.Float())))
	case reflect.Float64:
		return fmt.Sprintf("%v (%#016x)", v.Float(), math.Float64bits(v.Float()))
	}
	return fmt.Sprint(v.Interface())
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
