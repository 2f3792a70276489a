package rayd

import (
	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// hitBuffers returns the slot's scratch record for n rows and flags.
func hitBuffers(d *launch.Device, sl *slot, n int, flags Flags) (accel.Hits, error) {
	var h accel.Hits
	var err error
	f := func(name string, per int) *launch.Buffer[float32] {
		if err != nil {
			return nil
		}
		var b *launch.Buffer[float32]
		b, err = scratch(d, sl.f32, name, per*n)
		return b
	}
	i := func(name string) *launch.Buffer[int32] {
		if err != nil {
			return nil
		}
		var b *launch.Buffer[int32]
		b, err = scratch(d, sl.i32, name, n)
		return b
	}
	h.T = f("t", 1)
	if flags.Has(FlagGeometric) {
		h.P, h.GeoN, h.Bary = f("p", 3), f("geo_n", 3), f("bary", 3)
		h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID = i("shape"), i("prim"), i("local"), i("global")
	}
	if flags.Has(FlagShadingN) {
		h.N = f("n", 3)
	}
	if flags.Has(FlagUV) {
		h.UV = f("uv", 2)
	}
	return h, err
}

// downloadHits copies a device record into a new host record.
func downloadHits(s *launch.Stream, h accel.Hits, n int, flags Flags) (*Hits, error) {
	res := geom.NewHits(n, flags)
	type pair struct {
		dst []float32
		src *launch.Buffer[float32]
	}
	type ipair struct {
		dst []int32
		src *launch.Buffer[int32]
	}
	for _, p := range []pair{{res.T, h.T}, {res.P, h.P}, {res.N, h.N}, {res.GeoN, h.GeoN}, {res.UV, h.UV}, {res.Bary, h.Bary}} {
		if p.src != nil && len(p.dst) > 0 {
			if err := p.src.Download(s, p.dst); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range []ipair{{res.ShapeID, h.ShapeID}, {res.PrimID, h.PrimID}, {res.LocalPrimID, h.LocalPrimID}, {res.GlobalPrimID, h.GlobalPrimID}} {
		if p.src != nil && len(p.dst) > 0 {
			if err := p.src.Download(s, p.dst); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}
