package accel

import (
	"math"

	"github.com/rayd-go/rayd/rf"
)

func widen(dst []float64, src []float32) {
	for i, v := range src {
		dst[i] = float64(v)
	}
}

// DecodeDfrAccum converts downloaded DfrAccumOut contents (7·cells grid
// values, 7 counters) into an rf.AccumResult.
func DecodeDfrAccum(grids []float32, counters []int32, res0, res1 int) *rf.AccumResult {
	c := res0 * res1
	r := &rf.AccumResult{Res0: res0, Res1: res1}
	for k, p := range []*[]float64{&r.Power, &r.FieldXRe, &r.FieldXIm, &r.FieldYRe, &r.FieldYIm, &r.FieldZRe, &r.FieldZIm} {
		*p = make([]float64, c)
		widen(*p, grids[k*c:(k+1)*c])
	}
	r.DirectCount, r.KellerCount, r.SuffixCount = counters[0], counters[1], counters[2]
	r.VisRejects, r.EdgeVisRejects, r.UtdRejects, r.EdgeUses = counters[3], counters[4], counters[5], counters[6]
	return r
}

// DecodeDfrCoherent converts downloaded DfrCoherentOut contents (12·cells
// grid values, 3·cells counts) into an rf.CoherentResult.
func DecodeDfrCoherent(grids []float32, counts []int32, res0, res1 int) *rf.CoherentResult {
	c := res0 * res1
	r := &rf.CoherentResult{Res0: res0, Res1: res1}
	for k, p := range []*[]float64{&r.DirectFieldXRe, &r.DirectFieldXIm, &r.DirectFieldYRe, &r.DirectFieldYIm,
		&r.DirectFieldZRe, &r.DirectFieldZIm, &r.MultiFieldXRe, &r.MultiFieldXIm, &r.MultiFieldYRe, &r.MultiFieldYIm,
		&r.MultiFieldZRe, &r.MultiFieldZIm} {
		*p = make([]float64, c)
		widen(*p, grids[k*c:(k+1)*c])
	}
	r.DirectCount = append([]int32(nil), counts[:c]...)
	r.MultiCount = make([]int32, c)
	r.VisibilityRejectCount = append([]int32(nil), counts[c:2*c]...)
	r.UtdRejectCount = append([]int32(nil), counts[2*c:3*c]...)
	return r
}

// DecodeReflAccum converts downloaded ReflAccumOut contents into an
// rf.ReflResult for n rays: 7·cells grid values, the two counters and, when
// opt.CollectWedges, the wedge rows (min(count, capacity) of them are
// events; the rest stay inert).
func DecodeReflAccum(grids []float32, counters []int32, wedges []uint32, n, maxBounces int, g rf.AccumGrid, opt rf.ReflOptions) *rf.ReflResult {
	c := g.Res0 * g.Res1
	r := &rf.ReflResult{RayCount: n, MaxBounces: maxBounces, Res0: g.Res0, Res1: g.Res1, ReflectionCount: counters[0]}
	for k, p := range []*[]float64{&r.Power, &r.FieldXRe, &r.FieldXIm, &r.FieldYRe, &r.FieldYIm, &r.FieldZRe, &r.FieldZIm} {
		*p = make([]float64, c)
		widen(*p, grids[k*c:(k+1)*c])
	}
	if !opt.CollectWedges {
		return r
	}
	w := newWedgeEvents(opt.WedgeCapacity)
	w.Count = counters[1]
	f := func(x uint32) float64 { return float64(math.Float32frombits(x)) }
	for i := range min(int(w.Count), w.Capacity) {
		row := wedges[i*WedgeEventWords : (i+1)*WedgeEventWords]
		w.RayIndex[i], w.Prim[i], w.Depth[i] = int32(row[0]), int32(row[1]), int32(row[2])
		w.SourcePower[i] = f(row[16])
		for k := range 3 {
			w.Hit[3*i+k], w.Normal[3*i+k], w.Dir[3*i+k] = f(row[4+k]), f(row[7+k]), f(row[10+k])
			w.Source[3*i+k], w.InitialDir[3*i+k] = f(row[13+k]), f(row[17+k])
		}
	}
	r.Wedges = w
	return r
}

// newWedgeEvents is capacity inert event rows (rf's layout).
func newWedgeEvents(capacity int) rf.WedgeEvents {
	w := rf.WedgeEvents{Capacity: capacity,
		RayIndex: make([]int32, capacity), Prim: make([]int32, capacity), Depth: make([]int32, capacity),
		Hit: make([]float64, 3*capacity), Normal: make([]float64, 3*capacity), Dir: make([]float64, 3*capacity),
		Source: make([]float64, 3*capacity), SourcePower: make([]float64, capacity), InitialDir: make([]float64, 3*capacity)}
	for i := range capacity {
		w.RayIndex[i], w.Prim[i], w.Depth[i] = -1, -1, -1
	}
	return w
}

// widenWords converts float32 bit patterns into dst.
func widenWords(dst []float64, src []uint32) {
	for i, v := range src {
		dst[i] = float64(math.Float32frombits(v))
	}
}

// DecodeDfrAccumWords converts a folded accum_dfr_direct partial
// (FoldPartial's output for DfrDirectShape(res0·res1): the power and field
// x re rows, then the seven counters) into an rf.AccumResult; the other
// five grids are zero, as the kernel leaves them.
func DecodeDfrAccumWords(words []uint32, res0, res1 int) *rf.AccumResult {
	c := res0 * res1
	r := &rf.AccumResult{Res0: res0, Res1: res1}
	for k, p := range []*[]float64{&r.Power, &r.FieldXRe, &r.FieldXIm, &r.FieldYRe, &r.FieldYIm, &r.FieldZRe, &r.FieldZIm} {
		*p = make([]float64, c)
		if k < 2 {
			widenWords(*p, words[k*c:(k+1)*c])
		}
	}
	n := words[2*c : 2*c+7]
	r.DirectCount, r.KellerCount, r.SuffixCount = int32(n[0]), int32(n[1]), int32(n[2])
	r.VisRejects, r.EdgeVisRejects, r.UtdRejects, r.EdgeUses = int32(n[3]), int32(n[4]), int32(n[5]), int32(n[6])
	return r
}

// DecodeDfrCoherentWords converts a folded accum_dfr_coherent_direct
// partial (DfrCoherentShape: the direct field x re and x im rows, then the
// three count rows) into an rf.CoherentResult; the other fields and
// multi_count are zero.
func DecodeDfrCoherentWords(words []uint32, res0, res1 int) *rf.CoherentResult {
	c := res0 * res1
	r := &rf.CoherentResult{Res0: res0, Res1: res1}
	for k, p := range []*[]float64{&r.DirectFieldXRe, &r.DirectFieldXIm, &r.DirectFieldYRe, &r.DirectFieldYIm,
		&r.DirectFieldZRe, &r.DirectFieldZIm, &r.MultiFieldXRe, &r.MultiFieldXIm, &r.MultiFieldYRe, &r.MultiFieldYIm,
		&r.MultiFieldZRe, &r.MultiFieldZIm} {
		*p = make([]float64, c)
		if k < 2 {
			widenWords(*p, words[k*c:(k+1)*c])
		}
	}
	counts := func(row int) []int32 {
		out := make([]int32, c)
		for i, v := range words[(2+row)*c : (3+row)*c] {
			out[i] = int32(v)
		}
		return out
	}
	r.DirectCount, r.VisibilityRejectCount, r.UtdRejectCount = counts(0), counts(1), counts(2)
	r.MultiCount = make([]int32, c)
	return r
}

// DecodeReflAccumWords converts a folded accumulate_reflections partial
// (ReflShape: the seven grids, then reflection_count and the wedge count)
// of n rays into an rf.ReflResult without wedge events.
func DecodeReflAccumWords(words []uint32, n, maxBounces int, g rf.AccumGrid) *rf.ReflResult {
	c := g.Res0 * g.Res1
	r := &rf.ReflResult{RayCount: n, MaxBounces: maxBounces, Res0: g.Res0, Res1: g.Res1, ReflectionCount: int32(words[7*c])}
	for k, p := range []*[]float64{&r.Power, &r.FieldXRe, &r.FieldXIm, &r.FieldYRe, &r.FieldYIm, &r.FieldZRe, &r.FieldZIm} {
		*p = make([]float64, c)
		widenWords(*p, words[k*c:(k+1)*c])
	}
	return r
}
