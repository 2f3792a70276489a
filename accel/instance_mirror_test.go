package accel

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// slab32 is the world slab test of instance.cu in float32: the reciprocal
// direction, the origin term scaled by the TLAS scale, fmaf plane
// distances and CUDA's fminf/fmaxf (a NaN operand yields the other).
type slab32 struct{ ix, nl, nh [3]float32 }

func fminf(a, b float32) float32 {
	if a != a {
		return b
	}
	if b != b || a < b {
		return a
	}
	return b
}

func fmaxf(a, b float32) float32 {
	if a != a {
		return b
	}
	if b != b || a > b {
		return a
	}
	return b
}

func newSlab32(o, d [3]float32, scale float32) slab32 {
	var s slab32
	m := float32(0)
	for k := range 3 {
		if a := float32(math.Abs(float64(o[k]))); a > m {
			m = a
		}
	}
	e := float32(m * scale)
	for k := range 3 {
		if math.Abs(float64(d[k])) < 1e-20 {
			s.ix[k] = float32(math.Copysign(1e20, float64(d[k])))
		} else {
			s.ix[k] = float32(1 / d[k])
		}
		s.nl[k] = -float32(float32(o[k]+e) * s.ix[k])
		s.nh[k] = -float32(float32(o[k]-e) * s.ix[k])
	}
	return s
}

func (s *slab32) span(lo, hi [3]float32, tmin, tcap float32) (float32, float32) {
	var a, b [3]float32
	for k := range 3 {
		a[k] = geom.FMA32(lo[k], s.ix[k], s.nl[k])
		b[k] = geom.FMA32(hi[k], s.ix[k], s.nh[k])
	}
	tn := fmaxf(fmaxf(fminf(a[0], b[0]), fminf(a[1], b[1])), fmaxf(fminf(a[2], b[2]), tmin))
	tf := fminf(fminf(fmaxf(a[0], b[0]), fmaxf(a[1], b[1])), fminf(fmaxf(a[2], b[2]), tcap))
	return tn, tf
}

// mirrorLimits are a row's limits in the masked kernels: tmin, the ray
// mask and the meshes' masks (nil: all default).
type mirrorLimits struct {
	tmin      float32
	mask      uint8
	meshMasks []uint8
}

var noLimits = mirrorLimits{tmin: geom.TMin, mask: geom.DefaultMask}

// mirrorClosest is closest_instanced of instance.cu on the host: the same
// node order, stack and pruning, with each instance's geometry walked by
// the reference (which the GPU BLAS walk matches bit for bit).
func mirrorClosest(tl *TLAS, x *geom.Instances, geos []*ref.Scene, faceOff []int32, o, d [3]float32, tmax float32, lim mirrorLimits) (t float32, inst, prim int32) {
	best := struct {
		t          float32
		inst, prim int32
	}{tmax, -1, -1}
	testInst := func(id int32) {
		rec := &x.Records[id]
		if rec.Mask&lim.mask == 0 || (lim.meshMasks != nil && lim.meshMasks[rec.Geometry]&lim.mask == 0) {
			return
		}
		oo, dd := geom.ObjectRay(rec, o, d)
		h, ok := geos[rec.Geometry].Closest(oo, dd, lim.tmin, best.t)
		if !ok {
			return
		}
		if best.inst < 0 || h.T < best.t || (h.T == best.t && id < best.inst) {
			best.t, best.inst, best.prim = h.T, id, h.Prim+faceOff[rec.Geometry]
		}
	}
	leaf := func(ref int32) {
		p := uint32(^ref)
		first, count := int(p>>LeafCountBits), int(p&(1<<LeafCountBits-1))+1
		for _, id := range tl.Order[first : first+count] {
			testInst(id)
		}
	}
	s := newSlab32(o, d, tl.Scale)
	f := func(w uint32) float32 { return math.Float32frombits(w) }
	type entry struct {
		node int32
		near float32
	}
	var stack []entry
	node := int32(0)
	for {
		w := tl.Nodes[NodeWords*int(node) : NodeWords*int(node+1)]
		tn0, tf0 := s.span([3]float32{f(w[0]), f(w[2]), f(w[8])}, [3]float32{f(w[1]), f(w[3]), f(w[9])}, lim.tmin, best.t)
		tn1, tf1 := s.span([3]float32{f(w[4]), f(w[6]), f(w[10])}, [3]float32{f(w[5]), f(w[7]), f(w[11])}, lim.tmin, best.t)
		c0, c1 := int32(w[12]), int32(w[13])
		h0, h1 := tn0 <= tf0, tn1 <= tf1
		if h0 && c0 < 0 {
			leaf(c0)
			h0 = false
		}
		if h1 && c1 < 0 {
			leaf(c1)
			h1 = false
		}
		switch {
		case h0 && h1:
			if tn0 <= tn1 {
				stack = append(stack, entry{c1, tn1})
				node = c0
			} else {
				stack = append(stack, entry{c0, tn0})
				node = c1
			}
			continue
		case h0:
			node = c0
			continue
		case h1:
			node = c1
			continue
		}
		found := false
		for len(stack) > 0 {
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if e.near <= best.t {
				node, found = e.node, true
				break
			}
		}
		if !found {
			return best.t, best.inst, best.prim
		}
	}
}

// The kernel's top-level walk, mirrored on the host in float32 with fmaf,
// finds exactly the reference's winner (t, instance, face) on every row:
// the stored inflation covers the slab test's rounding and the traversal
// never prunes a box holding the winner.
func TestTLASWalkMirrorEqualsReference(t *testing.T) {
	r := testscene.Rand(t)
	meshes := []geom.Mesh{testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 8), testscene.Soup(r, 100, 0.6), gridMesh(6, 1)}
	tb := tables(t, meshes...)
	var geos []*ref.Scene
	for _, m := range tb.Meshes() {
		sub := tables(t, m)
		s, err := ref.NewScene(sub)
		require.NoError(t, err)
		geos = append(geos, s)
	}
	for _, n := range []int{1, 4, 9, 150} {
		in := testscene.RandomInstances(r, len(meshes), n, 1.5)
		if n > 4 {
			in = append(in, in[1], in[1])
		}
		x, err := geom.BuildInstances(tb, in)
		require.NoError(t, err)
		lo, hi := ObjectBounds(tb)
		tl := BuildTLAS(x, lo, hi)
		want, err := ref.NewInstancedScene(context.Background(), tb, x)
		require.NoError(t, err)
		o, d, tmax := testscene.RandomRays(r, tb, 2500)
		h, err := want.Intersect(context.Background(), o, d, tmax, nil, geom.FlagGeometric)
		require.NoError(t, err)
		hits := 0
		for i := range h.Len() {
			oi := [3]float32{o[3*i], o[3*i+1], o[3*i+2]}
			di := [3]float32{d[3*i], d[3*i+1], d[3*i+2]}
			gt, gi, gp := mirrorClosest(tl, x, geos, tb.FaceOffset, oi, di, tmax[i], noLimits)
			if h.InstanceID[i] < 0 {
				require.Equal(t, int32(-1), gi, "row %d: the mirror hit where the reference missed", i)
				continue
			}
			hits++
			require.Equal(t, h.InstanceID[i], gi, "row %d instance", i)
			require.Equal(t, h.PrimID[i], gp, "row %d face", i)
			require.Equal(t, math.Float32bits(h.T[i]), math.Float32bits(gt), "row %d t", i)
		}
		require.Positive(t, hits)
	}
}

// The masked walk, mirrored: with per-row tmin (0 included, below the
// boxes' default lower bound) and masks, instance masks and mesh masks,
// the top level clipped at the row's tmin still finds exactly the
// reference's winner.
func TestTLASWalkMirrorWithLimitsEqualsReference(t *testing.T) {
	r := testscene.Rand(t)
	meshes := []geom.Mesh{testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 8), testscene.Soup(r, 100, 0.6), gridMesh(6, 1)}
	tb := tables(t, meshes...)
	var geos []*ref.Scene
	for _, m := range tb.Meshes() {
		s, err := ref.NewScene(tables(t, m))
		require.NoError(t, err)
		geos = append(geos, s)
	}
	meshMasks := []uint8{0xFF, 0x03, 0x06}
	for m, v := range meshMasks {
		require.NoError(t, tb.SetMask(m, v))
	}
	in := testscene.RandomInstances(r, len(meshes), 120, 1.5)
	in = append(in, in[1], in[1])
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	for i, v := range testscene.RandomInstanceMasks(r, len(in)) {
		require.NoError(t, x.SetMask(i, v))
	}
	lo, hi := ObjectBounds(tb)
	tl := BuildTLAS(x, lo, hi)
	want, err := ref.NewInstancedScene(context.Background(), tb, x)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 3000)
	tmin, mask := testscene.RandomLimits(r, 3000, tmax)
	h, err := want.IntersectLimits(context.Background(), o, d, tmax, nil, geom.RayLimits{TMin: tmin, Mask: mask}, geom.FlagGeometric)
	require.NoError(t, err)
	hits := 0
	for i := range h.Len() {
		oi := [3]float32{o[3*i], o[3*i+1], o[3*i+2]}
		di := [3]float32{d[3*i], d[3*i+1], d[3*i+2]}
		gt, gi, gp := mirrorClosest(tl, x, geos, tb.FaceOffset, oi, di, tmax[i], mirrorLimits{tmin[i], mask[i], meshMasks})
		require.Equal(t, h.InstanceID[i], gi, "row %d instance", i)
		if gi < 0 {
			continue
		}
		hits++
		require.Equal(t, h.PrimID[i], gp, "row %d face", i)
		require.Equal(t, math.Float32bits(h.T[i]), math.Float32bits(gt), "row %d t", i)
	}
	require.Greater(t, hits, 200)
}
