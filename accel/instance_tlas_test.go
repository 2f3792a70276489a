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

// tlasPaths decodes a TLAS: for every instance, the boxes on the path from
// the root's child slot down to its leaf (float64, as stored).
func tlasPaths(t *testing.T, tl *TLAS) map[int32][]box64 {
	t.Helper()
	out := map[int32][]box64{}
	var walk func(node int, path []box64, depth int)
	walk = func(node int, path []box64, depth int) {
		require.Less(t, depth, 64)
		w := tl.Nodes[NodeWords*node : NodeWords*(node+1)]
		for c := range 2 {
			f := func(k int) float64 { return float64(math.Float32frombits(w[k])) }
			b := box64{lo: [3]float64{f(4 * c), f(4*c + 2), f(8 + 2*c)}, hi: [3]float64{f(4*c + 1), f(4*c + 3), f(9 + 2*c)}}
			p := append(append([]box64(nil), path...), b)
			ref := int32(w[12+c])
			if ref >= 0 {
				walk(int(ref), p, depth+1)
				continue
			}
			payload := uint32(^ref)
			first, count := int(payload>>LeafCountBits), int(payload&(1<<LeafCountBits-1))+1
			for _, id := range tl.Order[first : first+count] {
				if _, seen := out[id]; !seen {
					out[id] = p
				}
			}
		}
	}
	walk(0, nil, 0)
	return out
}

// Every instance sits in exactly one leaf position (the one-leaf root
// repeats it), and the world point of every reference hit lies inside each
// stored box on its instance's path: the top level never culls a hit.
func TestTLASCoversEveryReferenceHit(t *testing.T) {
	r := testscene.Rand(t)
	meshes := []geom.Mesh{testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 8), testscene.Soup(r, 100, 0.6)}
	for _, n := range []int{1, 3, 5, 37, 200} {
		in := testscene.RandomInstances(r, len(meshes), n, 1.5)
		tb, err := geom.BuildTables(meshes)
		require.NoError(t, err)
		x, err := geom.BuildInstances(tb, in)
		require.NoError(t, err)
		lo, hi := ObjectBounds(tb)
		tl := BuildTLAS(x, lo, hi)
		require.Len(t, tl.Order, n)
		paths := tlasPaths(t, tl)
		require.Len(t, paths, n, "every instance is reachable")
		require.LessOrEqual(t, tl.Depth, 2+int(math.Log2(float64(n))))
		require.Positive(t, tl.Scale)
		s, err := ref.NewInstancedScene(context.Background(), tb, x)
		require.NoError(t, err)
		o, d, tmax := testscene.RandomRays(r, tb, 1500)
		h, err := s.Intersect(context.Background(), o, d, tmax, nil, geom.FlagGeometric)
		require.NoError(t, err)
		hits := 0
		for i := range h.Len() {
			if !h.Valid(i) {
				continue
			}
			hits++
			for _, b := range paths[h.InstanceID[i]] {
				for k := range 3 {
					p := float64(o[3*i+k]) + float64(h.T[i])*float64(d[3*i+k])
					require.GreaterOrEqual(t, p, b.lo[k], "row %d axis %d", i, k)
					require.LessOrEqual(t, p, b.hi[k], "row %d axis %d", i, k)
				}
			}
		}
		require.Positive(t, hits)
	}
}

func TestInstanceRecordsLayout(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{testscene.Grid(1, 1, 0), testscene.Grid(1, 1, 0)})
	require.NoError(t, err)
	xf := geom.Transform{2, 0, 0, 1, 0, 4, 0, 2, 0, 0, 8, 3}
	x, err := geom.BuildInstances(tb, []geom.Instance{{Geometry: 1, Transform: xf}})
	require.NoError(t, err)
	w := InstanceRecords(x)
	require.Len(t, w, InstanceRecordWords)
	require.Equal(t, xf[:], w[:12])
	require.Equal(t, []float32{0.5, 0, 0, 0, 0.25, 0, 0, 0, 0.125}, w[12:21])
	require.Equal(t, uint32(1), math.Float32bits(w[21]))
	require.Equal(t, uint32(geom.DefaultMask), math.Float32bits(w[22]), "word 22 is the instance mask")
	require.Zero(t, math.Float32bits(w[23]), "word 23 is padding")
}
