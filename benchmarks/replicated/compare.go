package main

import (
	"fmt"
	"math"
	"reflect"
)

// diff compares two records field by field, bit for bit (float32 and
// float64 by their bits, so NaN payloads and signed zeros count), and
// returns the names of the fields compared and the number of differing
// elements. Records are pointers to structs of slices, or slices.
func diff(want, got any) (fields []string, mismatches int, err error) {
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	if wv.Kind() == reflect.Pointer {
		wv, gv = wv.Elem(), gv.Elem()
	}
	if wv.Type() != gv.Type() {
		return nil, 0, fmt.Errorf("records of types %v and %v", wv.Type(), gv.Type())
	}
	if wv.Kind() == reflect.Slice {
		n, err := diffSlice(wv, gv)
		return []string{"values"}, n, err
	}
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		switch wv.Field(i).Kind() {
		case reflect.Slice:
			n, err := diffSlice(wv.Field(i), gv.Field(i))
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", f.Name, err)
			}
			fields = append(fields, f.Name)
			mismatches += n
		case reflect.Int:
			fields = append(fields, f.Name)
			if wv.Field(i).Int() != gv.Field(i).Int() {
				mismatches++
			}
		}
	}
	return fields, mismatches, nil
}

func diffSlice(a, b reflect.Value) (int, error) {
	if a.Len() != b.Len() {
		return 0, fmt.Errorf("lengths %d and %d", a.Len(), b.Len())
	}
	n := 0
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
		}
	}
	return n, nil
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// mismatch is the first element at which two records differ: the field
// (the record's struct field, or "values" for a slice record), its index in
// that slice, and both values (%v, and their bits for floats).
type mismatch struct {
	Field string `json:"field"`
	Index int    `json:"index"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// firstDiff returns the first element, in field order and then index order,
// at which want and got differ under diff's rule, or nil when they are
// equal (or not comparable: diff reports that).
func firstDiff(want, got any) *mismatch {
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	if wv.Kind() == reflect.Pointer {
		wv, gv = wv.Elem(), gv.Elem()
	}
	if wv.Type() != gv.Type() {
		return nil
	}
	if wv.Kind() == reflect.Slice {
		return firstDiffSlice("values", wv, gv)
	}
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		switch wv.Field(i).Kind() {
		case reflect.Slice:
			if m := firstDiffSlice(f.Name, wv.Field(i), gv.Field(i)); m != nil {
				return m
			}
		case reflect.Int:
			if wv.Field(i).Int() != gv.Field(i).Int() {
				return &mismatch{Field: f.Name, Index: -1, Want: fmt.Sprint(wv.Field(i).Int()), Got: fmt.Sprint(gv.Field(i).Int())}
			}
		}
	}
	return nil
}

func firstDiffSlice(field string, a, b reflect.Value) *mismatch {
	if a.Len() != b.Len() {
		return nil
	}
	for i := range a.Len() {
		if n, _ := diffSlice(a.Slice(i, i+1), b.Slice(i, i+1)); n > 0 {
			return &mismatch{Field: field, Index: i, Want: showValue(a.Index(i)), Got: showValue(b.Index(i))}
		}
	}
	return nil
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
