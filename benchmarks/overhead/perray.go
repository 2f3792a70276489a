package main

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/launch"
)

// resident is one scene's device-resident input and output of a per_ray
// operation (the fast path: inputs and outputs on the master's device).
type resident struct {
	s    *rayd.Scene
	op   string
	rays *rayd.DeviceRays
	hits *rayd.DeviceHits
	refl *rayd.DeviceReflections
	vis  *rayd.Buffer[uint8]
}

// newResident uploads the batch (segments for visible: starts in Origins,
// ends in Directions) and allocates op's output on s's master device:
// the full intersect record, a one-bounce reflections record without
// image sources, or the visibility bytes.
func newResident(ctx context.Context, s *rayd.Scene, op string, rays rayd.Rays) (_ *resident, err error) {
	v := &resident{s: s, op: op}
	defer func() {
		if err != nil {
			err = errors.Join(err, v.close())
		}
	}()
	if v.rays, err = s.UploadRays(ctx, rays); err != nil {
		return nil, err
	}
	n := rays.Len()
	switch op {
	case opIntersect:
		v.hits, err = s.AllocHits(n, rayd.FlagsAll)
	case opReflect:
		v.refl, err = s.AllocReflections(n, 1, false)
	case opVisible:
		v.vis, err = s.AllocVisible(n)
	}
	return v, err
}

func (v *resident) close() error {
	var errs []error
	if v.hits != nil {
		errs = append(errs, v.hits.Close())
	}
	if v.refl != nil {
		errs = append(errs, v.refl.Close())
	}
	if v.vis != nil {
		errs = append(errs, v.vis.Close())
	}
	if v.rays != nil {
		errs = append(errs, v.rays.Close())
	}
	return errors.Join(errs...)
}

// call is the timed call: it returns once the results are in place.
func (v *resident) call(ctx context.Context) func() error {
	switch v.op {
	case opIntersect:
		return func() error { return v.s.IntersectInto(ctx, v.rays, v.hits) }
	case opReflect:
		return func() error { return v.s.TraceReflectionsInto(ctx, v.rays, v.refl) }
	}
	return func() error { return v.s.VisibleInto(ctx, v.rays, v.vis) }
}

// output is one output buffer of a record with its field name and width.
type output struct {
	name   string
	perRow int
	f32    *launch.Buffer[float32]
	i32    *launch.Buffer[int32]
	u8     *launch.Buffer[uint8]
}

// outputs lists every field the operation writes (every allocated field
// of its record).
func (v *resident) outputs() []output {
	return slices.DeleteFunc(v.record(), func(o output) bool { return o.f32 == nil && o.i32 == nil && o.u8 == nil })
}

// record lists the fields of the operation's record, allocated or not.
func (v *resident) record() []output {
	switch v.op {
	case opIntersect:
		h := v.hits
		return []output{{name: "t", perRow: 1, f32: h.T}, {name: "p", perRow: 3, f32: h.P}, {name: "normal", perRow: 3, f32: h.Normal},
			{name: "geo_n", perRow: 3, f32: h.GeoN}, {name: "uv", perRow: 2, f32: h.UV}, {name: "bary", perRow: 3, f32: h.Bary},
			{name: "shape_id", perRow: 1, i32: h.ShapeID}, {name: "prim_id", perRow: 1, i32: h.PrimID},
			{name: "local_prim_id", perRow: 1, i32: h.LocalPrimID}, {name: "global_prim_id", perRow: 1, i32: h.GlobalPrimID}}
	case opReflect:
		r := v.refl
		return []output{{name: "valid", perRow: r.Bounces, u8: r.Valid}, {name: "t", perRow: r.Bounces, f32: r.T},
			{name: "prim_ids", perRow: r.Bounces, i32: r.PrimIDs}, {name: "image_sources", perRow: 3 * r.Bounces, f32: r.ImageSources}}
	}
	return []output{{name: "visible", perRow: 1, u8: v.vis}}
}

// poison fills every output with p (the word in 32-bit fields, the byte in
// one-byte fields) on a stream of the output's device and waits for it.
func (v *resident) poison(p poison) error {
	for _, o := range v.outputs() {
		var err error
		switch {
		case o.f32 != nil:
			err = fill(o.f32, func(b *launch.Buffer[float32], st *launch.Stream) error { return b.Memset32(st, p.Word) })
		case o.i32 != nil:
			err = fill(o.i32, func(b *launch.Buffer[int32], st *launch.Stream) error { return b.Memset32(st, p.Word) })
		case o.u8 != nil:
			err = fill(o.u8, func(b *launch.Buffer[uint8], st *launch.Stream) error { return b.Memset8(st, p.Byte) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func fill[T launch.Elem](b *launch.Buffer[T], set func(*launch.Buffer[T], *launch.Stream) error) error {
	st, err := b.Device().NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := set(b, st); err != nil {
		return err
	}
	return st.Synchronize()
}

// words downloads every output as raw element bits, in outputs() order.
func (v *resident) words() ([][]uint32, error) {
	var out [][]uint32
	for _, o := range v.outputs() {
		var w []uint32
		var err error
		switch {
		case o.f32 != nil:
			w, err = download(o.f32, math.Float32bits)
		case o.i32 != nil:
			w, err = download(o.i32, func(x int32) uint32 { return uint32(x) })
		case o.u8 != nil:
			w, err = download(o.u8, func(x uint8) uint32 { return uint32(x) })
		}
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

func download[T launch.Elem](b *launch.Buffer[T], bits func(T) uint32) ([]uint32, error) {
	st, err := b.Device().NewStream()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	host := make([]T, b.Len())
	if err := b.Download(st, host); err != nil {
		return nil, err
	}
	out := make([]uint32, len(host))
	for i, x := range host {
		out[i] = bits(x)
	}
	return out, nil
}
