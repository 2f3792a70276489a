package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// Host mirror of the compact intersect records (IntersectCompact,
// ExpandHits) over a Layout, for tests and diagnostics: the same traversal
// as Closest, the same record words and the epilogue of the CPU reference.

// Compact returns h's compact record (CompactWords words): a hit with
// Prim < 0 is a miss.
func (h Hit) Compact() [CompactWords]uint32 {
	if h.Prim < 0 {
		return [CompactWords]uint32{math.Float32bits(float32(math.Inf(1))), 0, 0, CompactMiss}
	}
	return [CompactWords]uint32{math.Float32bits(h.T), math.Float32bits(h.U), math.Float32bits(h.V), uint32(h.Slot)}
}

// IntersectCompact is the host mirror of BVH.IntersectCompact over l: one
// compact record per row (tmin geom.TMin, tmax per row or geom.DefaultTMax;
// inactive rows, rows with a non-finite origin or direction and an empty
// layout miss). The slices are checked as geom.CheckRays does.
func (l *Layout) IntersectCompact(o, d, tmax []float32, active []bool) ([]uint32, error) {
	n, err := geom.CheckRays(o, d, tmax, active)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, CompactWords*n)
	for i := range n {
		h := Hit{Slot: -1, Prim: -1}
		if (len(active) == 0 || active[i]) && l.NumTris > 0 {
			tm := geom.DefaultTMax
			if len(tmax) > 0 {
				tm = tmax[i]
			}
			h = l.Closest(row3(o, i), row3(d, i), geom.TMin, tm, nil)
		}
		rec := h.Compact()
		copy(out[CompactWords*i:], rec[:])
	}
	return out, nil
}

// ExpandHits is the host mirror of BVH.ExpandHits over l: the record of
// spec §1.6 with the fields flags select, from compact records and the rays
// they were traced for (p = o + t·d per component, n = geo_n = the unit face
// normal, bary = ((1−u)−v, u, v), the slot's ids). A slot outside l's
// triangles is a miss.
func (l *Layout) ExpandHits(o, d []float32, compact []uint32, flags geom.Flags) (*geom.Hits, error) {
	n, err := geom.CheckRays(o, d, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(compact) != CompactWords*n {
		return nil, fmt.Errorf("accel: ExpandHits: %d compact words for %d rows, want %d", len(compact), n, CompactWords*n)
	}
	if !flags.Valid() {
		return nil, fmt.Errorf("accel: flags %#x outside FlagsAll", uint32(flags))
	}
	h := geom.NewHits(n, flags)
	for i := range n {
		rec := compact[CompactWords*i : CompactWords*(i+1)]
		slot := rec[3]
		if slot >= uint32(l.NumTris) {
			h.SetMiss(i)
			continue
		}
		t, u, v := math.Float32frombits(rec[0]), math.Float32frombits(rec[1]), math.Float32frombits(rec[2])
		tri := l.Triangle(int(slot))
		h.T[i] = t
		var nrm [3]float32
		if flags&(geom.FlagGeometric|geom.FlagShadingN) != 0 {
			nrm = geom.FaceNormal(tri.V[0], tri.V[1], tri.V[2], geom.NormalFloor)
		}
		if flags.Has(geom.FlagGeometric) {
			oi, di := row3(o, i), row3(d, i)
			for k := range 3 {
				h.P[3*i+k] = float32(oi[k] + float32(t*di[k]))
			}
			copy(h.GeoN[3*i:3*i+3], nrm[:])
			h.Bary[3*i], h.Bary[3*i+1], h.Bary[3*i+2] = float32(float32(1-u)-v), u, v
			h.ShapeID[i], h.PrimID[i], h.LocalPrimID[i], h.GlobalPrimID[i] = tri.Shape, tri.Prim, tri.LocalP, tri.Prim
		}
		if flags.Has(geom.FlagShadingN) {
			copy(h.N[3*i:3*i+3], nrm[:])
		}
		if flags.Has(geom.FlagUV) {
			h.UV[2*i], h.UV[2*i+1] = u, v
		}
	}
	return h, nil
}

// row3 returns row i of a 3-wide slice.
func row3(s []float32, i int) [3]float32 { return [3]float32{s[3*i], s[3*i+1], s[3*i+2]} }
