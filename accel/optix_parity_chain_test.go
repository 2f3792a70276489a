package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// hostReflections is a downloaded reflection record (uint8 valid flags).
type hostReflections struct {
	valid  []uint8
	t      []float32
	prim   []int32
	images []float32
}

func dot3f(a, b [3]float32) float32 {
	return float32(float32(float32(a[0]*b[0])+float32(a[1]*b[1])) + float32(a[2]*b[2]))
}

// emptySlots reports whether slots [from, to) of got are the empty record.
func emptySlots(got hostReflections, from, to int) bool {
	for s := from; s < to; s++ {
		if got.valid[s] != 0 || got.t[s] != geom.ReflectionMiss || got.prim[s] != -1 ||
			got.images[3*s] != 0 || got.images[3*s+1] != 0 || got.images[3*s+2] != 0 {
			return false
		}
	}
	return true
}

// checkReflections compares a reflection record with the reference under
// the tie rule. The reference chain is replayed bounce by bounce (spec §3.2)
// so that the first difference of a row is judged on the ray of its bounce;
// a row is not compared past an accepted difference (the chains diverge).
func (ps *parityScene) checkReflections(o, d, tmax []float32, active []bool, bounces int, got hostReflections,
	want *geom.Reflections) (parityStats, error) {
	st := parityStats{Rows: want.Len()}
	for i := range want.Len() {
		orig, dir := row3f(o, i), row3f(d, i)
		alive := (len(active) == 0 || active[i]) && geom.IsFinite3(orig) && geom.IsFinite3(dir)
		base := i * bounces
		if !alive {
			if !emptySlots(got, base, base+bounces) {
				return st, fmt.Errorf("row %d: inactive or non-finite row has non-empty slots", i)
			}
			continue
		}
		slack := 0.0 // how far the backend's bounce origin may be from the reference's
		for b := range bounces {
			s := base + b
			tm := geom.ReflectionMiss
			if b == 0 && tmax != nil && !math.IsInf(float64(tmax[i]), 0) && !math.IsNaN(float64(tmax[i])) {
				tm = tmax[i]
			}
			tmin := geom.MultipathTMin
			if b == 0 {
				tmin = ps.tminAt(i, tmin)
			}
			wh := rowHit{want.Valid[s], want.T[s], want.PrimIDs[s]}
			gh := rowHit{got.valid[s] != 0, got.t[s], got.prim[s]}
			if err := ps.seen(i, gh); err != nil {
				return st, fmt.Errorf("row %d bounce %d: %w", i, b, err)
			}
			if !wh.hit && !gh.hit {
				if !emptySlots(got, s, base+bounces) {
					return st, fmt.Errorf("row %d: slots after the chain's end are not empty", i)
				}
				break
			}
			if gh.hit {
				st.Hits++
			}
			tie, edge, err := ps.consistent(orig, dir, tmin, tm, slack, wh, gh)
			if err != nil {
				return st, fmt.Errorf("row %d bounce %d (o %v d %v): %w", i, b, orig, dir, err)
			}
			if tie || edge || wh.prim != gh.prim || wh.hit != gh.hit {
				if tie {
					st.Ties++
				} else {
					st.EdgeCases++
				}
				last := s + 1
				if !gh.hit {
					last = s
				}
				for last < base+bounces && got.valid[last] != 0 {
					last++
				}
				if !emptySlots(got, last, base+bounces) {
					return st, fmt.Errorf("row %d: slots after the chain's end are not empty", i)
				}
				break
			}
			// The hit point is known to within the face's point tolerance;
			// the image and every later bounce inherit that uncertainty.
			slack += 2 * ps.faceTol(orig, dir, wh.prim, float64(wh.t), slack).point
			img, wimg := got.images[3*s:3*s+3], want.ImageSources[3*s:3*s+3]
			for k := range 3 {
				if math.Abs(float64(img[k])-float64(wimg[k])) > parityBary*(1+math.Abs(float64(wimg[k])))+2*slack {
					return st, fmt.Errorf("row %d bounce %d: image %v, reference %v (slack %.3g)", i, b, img, wimg, slack)
				}
			}
			// Follow the reference chain to the next bounce's ray.
			hit, ok := ps.sc.ClosestMasked(orig, dir, tmin, tm, ps.maskAt(i))
			if !ok || hit.Prim != wh.prim {
				return st, fmt.Errorf("row %d bounce %d: replay of the reference chain diverged", i, b)
			}
			p0, p1, p2 := ps.tb.Triangle(int(hit.Prim))
			p := geom.Interpolate(p0, p1, p2, hit.U, hit.V)
			n := geom.FaceNormal(p0, p1, p2, geom.ReflectionNormalFloor)
			if dot3f(dir, n) > 0 {
				n = [3]float32{-n[0], -n[1], -n[2]}
			}
			q := float32(2 * dot3f(dir, n))
			for k := range 3 {
				dir[k] = float32(dir[k] - float32(q*n[k]))
				orig[k] = float32(p[k] + float32(geom.MultipathBias*dir[k]))
			}
		}
	}
	return st, nil
}

// segmentRay is the traced ray of visible(a, b) (spec §4.1, ref.Visible):
// ok is false when the segment is not traced (non-finite or degenerate).
func segmentRay(a, b [3]float32) (origin, dir [3]float32, tmax float32, ok bool) {
	if !geom.IsFinite3(a) || !geom.IsFinite3(b) {
		return origin, dir, 0, false
	}
	D := [3]float32{float32(b[0] - a[0]), float32(b[1] - a[1]), float32(b[2] - a[2])}
	L := float32(math.Sqrt(float64(dot3f(D, D))))
	if L <= geom.MinSegmentLength {
		return origin, dir, 0, false
	}
	for k := range 3 {
		dir[k] = float32(D[k] / L)
		origin[k] = float32(a[k] + float32(geom.MultipathBias*dir[k]))
	}
	return origin, dir, max(float32(L-geom.MinSegmentLength), 0), true
}

// checkVisible compares visibility answers with the reference under the tie
// rule: a differing row needs a blocker on an edge or at a bound of the
// segment's ray interval.
func (ps *parityScene) checkVisible(start, end []float32, active []bool, got []uint8, want []bool) (parityStats, error) {
	st := parityStats{Rows: len(want)}
	for i := range want {
		g := got[i] != 0
		if len(active) > 0 && !active[i] {
			if g {
				return st, fmt.Errorf("row %d: inactive row visible", i)
			}
			continue
		}
		if g == want[i] {
			continue
		}
		o, dir, tm, traced := segmentRay(row3f(start, i), row3f(end, i))
		if !traced {
			return st, fmt.Errorf("row %d: untraced segment reported blocked", i)
		}
		st.EdgeCases++
		if !want[i] { // the reference is blocked, the backend not
			h, ok := ps.sc.Closest(o, dir, geom.MultipathTMin, tm)
			if !ok || !ps.edgeOrBound(o, dir, geom.MultipathTMin, tm, 0, rowHit{true, h.T, h.Prim}) {
				return st, fmt.Errorf("row %d: blocker %d at t %v missed and not on an edge", i, h.Prim, h.T)
			}
			continue
		}
		found := false // the backend is blocked, the reference not: look for a marginal blocker
		lo, hi := float64(geom.MultipathTMin), float64(tm)
		for f := range ps.tb.NumFaces() {
			if ps.tb.MaskOf(int(ps.tb.FaceShape[f])) == 0 {
				continue // a face of mask 0 never blocks a segment
			}
			t, b, ok := ps.mt64(o, dir, int32(f))
			if !ok {
				continue
			}
			ft := ps.faceTol(o, dir, int32(f), t, 0)
			if b >= -ft.bary && t >= lo-ft.t && t <= hi+ft.t {
				found = true
				break
			}
		}
		if !found {
			return st, fmt.Errorf("row %d: blocked although no face is near the segment", i)
		}
	}
	return st, nil
}
