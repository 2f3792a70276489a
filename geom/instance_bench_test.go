package geom_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// BenchmarkSetTransforms replaces all 1,024 transforms of the instanced
// benchmark's placement, alternating between two sets so every call
// changes every instance.
func BenchmarkSetTransforms(b *testing.B) {
	tb, err := geom.BuildTables([]geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(b, err)
	in := testscene.Placement(1024, 7)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(b, err)
	var sets [2][]geom.Transform
	for k, seed := range []uint64{7, 8} {
		for _, v := range testscene.Placement(1024, seed) {
			sets[k] = append(sets[k], v.Transform)
		}
	}
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		k ^= 1
		if err := x.SetTransforms(0, sets[k]); err != nil {
			b.Fatal(err)
		}
	}
}
