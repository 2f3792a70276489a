package accel

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// hostCrossings mirrors the crossings kernels (ptx/src/crossings.cu) over a
// host-built layout: the device slab test with its cap held at tmax, every
// leaf reached tested in full, every accepted hit counted, the k least by
// (t, prim) kept. It is the kernels' walk on the CPU: equal to the
// reference here means the device walk's culling never loses a hit.
func hostCrossings(l *Layout, start, end []float32, k int) *geom.Crossings {
	n := len(start) / 3
	c := geom.NewCrossings(n, k)
	for i := range n {
		a := [3]float32{start[3*i], start[3*i+1], start[3*i+2]}
		b := [3]float32{end[3*i], end[3*i+1], end[3*i+2]}
		o, d, tmax, ok := segmentRay(a, b)
		if !ok || l.NumNodes == 0 {
			continue
		}
		var hits []Hit
		l.walkAll(o, d, geom.MultipathTMin, tmax, func(slot int) {
			tri := l.Triangle(slot)
			if t, _, _, ok := geom.Watertight(o, d, tri.V[0], tri.V[1], tri.V[2], geom.MultipathTMin, tmax); ok {
				hits = append(hits, Hit{T: t, Slot: slot, Prim: tri.Prim})
			}
		})
		c.Count[i] = int32(len(hits))
		sort.Slice(hits, func(x, y int) bool { return geom.CrossingLess(hits[x].T, hits[x].Prim, hits[y].T, hits[y].Prim) })
		for j, h := range hits[:min(len(hits), k)] {
			c.T[i*k+j], c.Prim[i*k+j], c.Shape[i*k+j] = h.T, h.Prim, l.Triangle(h.Slot).Shape
		}
	}
	c.SetOverflow()
	return c
}

// walkAll visits every triangle slot of every leaf the device walk reaches
// with the cap fixed at tmax (child-pair or quad layout).
func (l *Layout) walkAll(o, d [3]float32, tmin, tmax float32, visit func(slot int)) {
	r := newSlabRay(o, d)
	stack := []int32{0}
	for len(stack) > 0 {
		node := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if node < 0 {
			first, count := DecodeLeaf(node)
			for s := first; s < first+count; s++ {
				visit(s)
			}
			continue
		}
		if l.Width == 4 {
			q := l.QuadNode(int(node))
			_, hit := r.quadBoxes(&q, tmin, tmax)
			for c := range q.Slots {
				if hit[c] {
					stack = append(stack, q.Ref[c])
				}
			}
			continue
		}
		nd := l.Node(int(node))
		for c := range 2 {
			if _, hit := r.box(&nd, c, tmin, tmax); hit {
				stack = append(stack, nd.Ref[c])
			}
		}
	}
}

// TestHostCrossingsWalkMatchesReference: the kernels' walk over host-built
// child-pair and quad layouts finds exactly the reference's hits (count,
// order, t, prim, shape) on random segments through a cloud, a grid and a
// sphere, k below and above the typical count.
func TestHostCrossingsWalkMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(testscene.Seed(t), 12))
	tb := tables(t, cloudMesh(3000, 0.08, 47), gridMesh(16, 3), testscene.Sphere([3]float32{.2, 0, 0}, .7, 16, 8))
	rs, err := ref.NewScene(tb)
	require.NoError(t, err)
	start, end := testscene.RandomSegments(r, tb, 4000)
	for _, w := range []int{2, 4} {
		l, err := BuildHost(tb, Options{Width: w})
		require.NoError(t, err)
		for _, k := range []int{1, 8, geom.MaxCrossingsK} {
			want, err := rs.Crossings(start, end, nil, k)
			require.NoError(t, err)
			got := hostCrossings(l, start, end, k)
			i := testscene.CrossingsDiff(got, want)
			if i >= 0 {
				t.Fatalf("width %d k %d row %d: count %d / %d, t %v / %v", w, k, i, got.Count[i], want.Count[i],
					got.T[i*k:i*k+min(k, 4)], want.T[i*k:i*k+min(k, 4)])
			}
		}
	}
}
