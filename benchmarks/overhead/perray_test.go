package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rayd-go/rayd"
)

// bufferFields counts the device buffers of a record type.
func bufferFields(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		if f := t.Field(i).Type; f.Kind() == reflect.Pointer && strings.HasPrefix(f.Elem().Name(), "Buffer[") {
			n++
		}
	}
	return n
}

// Every buffer of every record is a compared field: a field added to a
// record and not to the comparison fails here.
func TestEveryRecordFieldIsCompared(t *testing.T) {
	for _, c := range []struct {
		op  string
		rec reflect.Type
		v   *resident
	}{
		{opIntersect, reflect.TypeFor[rayd.DeviceHits](), &resident{op: opIntersect, hits: &rayd.DeviceHits{}}},
		{opReflect, reflect.TypeFor[rayd.DeviceReflections](), &resident{op: opReflect, refl: &rayd.DeviceReflections{Bounces: 1}}},
	} {
		assert.Len(t, c.v.record(), bufferFields(c.rec), c.op)
		assert.Empty(t, c.v.outputs(), "%s: fields not allocated are not compared", c.op)
	}
	v := &resident{op: opVisible}
	assert.Len(t, v.record(), 1)
	var names []string
	for _, o := range (&resident{op: opIntersect, hits: &rayd.DeviceHits{}}).record() {
		names = append(names, o.name)
	}
	assert.Equal(t, []string{"t", "p", "normal", "geo_n", "uv", "bary", "shape_id", "prim_id", "local_prim_id", "global_prim_id"}, names)
}
