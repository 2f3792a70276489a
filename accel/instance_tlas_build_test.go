package accel

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// tlasCase is a random instance set over three geometries: random affine
// maps, with a share of instances that repeat another's transform or sit
// on a coarse grid of translations, so that centroid ties are common.
func tlasCase(t *testing.T, r *rand.Rand, n int) (*geom.Instances, [][3]float64, [][3]float64) {
	t.Helper()
	tb, x := tlasCaseTables(t, r, n)
	lo, hi := ObjectBounds(tb)
	return x, lo, hi
}

// tlasCaseTables is tlasCase with the geometries' tables.
func tlasCaseTables(t *testing.T, r *rand.Rand, n int) (*geom.Tables, *geom.Instances) {
	t.Helper()
	meshes := []geom.Mesh{testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 8), testscene.Soup(r, 50, 0.6),
		testscene.Sphere([3]float32{3, -1, 0.5}, 2, 6, 5)}
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	in := testscene.RandomInstances(r, len(meshes), n, 1.5)
	for i := range in {
		switch r.IntN(4) {
		case 0:
			in[i] = in[r.IntN(i+1)]
		case 1:
			in[i].Transform = testscene.Translation(float32(r.IntN(3)), float32(r.IntN(3)), float32(r.IntN(3)))
		}
	}
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	return tb, x
}

// The build produces the reference build's tree bit for bit (nodes, order,
// scale, depth) on random instance sets of every size up to a few
// thousand, and serial and parallel builders reused across sets of
// different sizes do too.
func TestBuildTLASMatchesTheReference(t *testing.T) {
	r := testscene.Rand(t)
	builders := []*tlasBuilder{{serial: true}, {serial: false}}
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 1000, 1024, 3001}
	for range 20 {
		sizes = append(sizes, 1+r.IntN(600))
	}
	for _, n := range sizes {
		x, lo, hi := tlasCase(t, r, n)
		want := refBuildTLAS(x, lo, hi)
		got := BuildTLAS(x, lo, hi)
		require.Equal(t, want, got, "n=%d", n)
		require.Len(t, got.Nodes, NodeWords*TLASNodeCount(n), "n=%d", n)

		// Reused scratch, dirty destination words.
		for _, tb := range builders {
			nodes, order := make([]uint32, len(want.Nodes)), make([]int32, n)
			for k := range nodes {
				nodes[k] = 0xdeadbeef
			}
			scale, depth := tb.build(x, lo, hi, nodes, order)
			require.Equal(t, want, &TLAS{Nodes: nodes, Order: order, Scale: scale, Depth: depth}, "reused builder (serial %v), n=%d", tb.serial, n)
		}
	}
}

// TLASNodeCount counts the nodes of the median-split shape.
func TestTLASNodeCount(t *testing.T) {
	var count func(c int) int
	count = func(c int) int {
		k := 1
		for _, h := range []int{c / 2, c - c/2} {
			if h > TLASLeafSize {
				k += count(h)
			}
		}
		return k
	}
	for _, n := range []int{1, 4, 5, 8, 9, 10, 17, 1023, 1024, 1025, 4099} {
		want := 1
		if n > TLASLeafSize {
			want = count(n)
		}
		require.Equal(t, want, TLASNodeCount(n), "n=%d", n)
	}
	require.Equal(t, 1, TLASNodeCount(TLASLeafSize))
	if TLASLeafSize == 1 { // a binary tree over single-instance leaves
		for _, n := range []int{2, 3, 9, 1024, 1025} {
			require.Equal(t, n-1, TLASNodeCount(n), "n=%d", n)
		}
	}
}
