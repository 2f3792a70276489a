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
