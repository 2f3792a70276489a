package rf

import (
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/stretchr/testify/require"
)

// sceneOf builds a brute-force scene from triangles given as 9 coordinates.
func sceneOf(t testing.TB, tris ...[9]float32) *TablesScene {
	t.Helper()
	m := geom.Mesh{}
	for i, tr := range tris {
		m.Vertices = append(m.Vertices, tr[:]...)
		m.Faces = append(m.Faces, int32(3*i), int32(3*i+1), int32(3*i+2))
	}
	tab, err := geom.BuildTables([]geom.Mesh{m})
	require.NoError(t, err)
	return NewTablesScene(tab)
}

// benchFixture is the accumulation fixture of the multi-device benchmark
// (multidevice §10.1): one triangle, two states on the line y = z = 0, a
// 4×4 grid on z = 0 spanning [−1, 1]².
func benchFixture(t testing.TB) (*TablesScene, *DfrStates, DfrGrid) {
	t.Helper()
	sc := sceneOf(t, [9]float32{-1, -1, 0, 1, -1, 0, -1, 1, 0})
	st := &DfrStates{
		EdgeIndex:     []int32{0, 1},
		EdgePos:       []float32{0, 0, 0, 0.25, 0, 0},
		EdgeDir:       []float32{1, 0, 0, 1, 0, 0},
		EdgeTMin:      []float32{-1, -1},
		EdgeTMax:      []float32{1, 1},
		N0:            []float32{0, 0, 1, 0, 0, 1},
		N1:            []float32{0, 0, -1, 0, 0, -1},
		Prim0:         []int32{0, 0},
		Prim1:         []int32{0, 0},
		ExteriorAngle: []float32{math.Pi, math.Pi},
		Src:           []float32{0, -1, 0.25, 0, -1, 0.25},
		SrcPower:      []float32{1, 1},
	}
	g := DfrGrid{Axis: 2, Position: 0, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 4}
	return sc, st, g
}

// richFixture has a ground of two faces on z = 0, a blocking face (prim 2)
// and three states whose lanes hit every outcome: commits of the three
// kinds, visibility and UTD rejects.
func richFixture(t testing.TB) (*TablesScene, *DfrStates, DfrGrid, *DfrMaterial) {
	t.Helper()
	sc := sceneOf(t,
		[9]float32{-4, -4, 0, 4, -4, 0, 4, 4, 0},
		[9]float32{-4, -4, 0, 4, 4, 0, -4, 4, 0},
		[9]float32{0.2, 0.8, 0.3, 1.5, 0.8, 0.3, 0.8, 0.8, 1.4},
	)
	st := &DfrStates{
		EdgeIndex:     []int32{10, 11, 12},
		EdgePos:       []float32{0, 0, 1, -0.5, 0.5, 1.2, 0.2, -0.3, 0.9},
		EdgeDir:       []float32{2, 0, 0, 0.6, 0.8, 0, 0, 1, 0.1},
		EdgeTMin:      []float32{-1, -0.5, -0.8},
		EdgeTMax:      []float32{1, 0.7, 0.6},
		N0:            []float32{0, -1, 0, 0, 0, 1, 1, 0, 0},
		N1:            []float32{0, 0, 1, 0.8, -0.6, 0, 0, 0, 1},
		Prim0:         []int32{0, 1, -1},
		Prim1:         []int32{1, 1, 0},
		ExteriorAngle: []float32{1.5 * math.Pi, 1.2 * math.Pi, 1.7 * math.Pi},
		Src:           []float32{0.3, -2, 1.6, -1, -1.5, 2, 1.5, -0.5, 1.8},
		SrcPower:      []float32{1, 2, 0.5},
	}
	g := DfrGrid{Axis: 2, Position: 0.5, Coord0Min: -2, Coord0Max: 2, Coord1Min: -1.5, Coord1Max: 2.5, Res0: 5, Res1: 4}
	m := &DfrMaterial{
		EtaR: []float32{3, 4, 5}, Sigma: []float32{0.01, 0.02, 0}, MuR: []float32{1, 1, 1},
		Gain: []float32{0.8, 0.9, 1.1}, Valid: []bool{true, true, true},
	}
	return sc, st, g, m
}

// richOptions are the sample counts used with richFixture.
func richOptions() AccumOptions {
	o := DefaultAccumOptions()
	o.DirectSamples, o.KellerSamples, o.SuffixSamples, o.Seed = 300, 200, 150, 5
	return o
}

// relClose asserts |a−b| ≤ tol·max(|a|, |b|, floor) element-wise.
func relClose(t testing.TB, want, got []float64, tol, floor float64, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg)
	for i := range want {
		scale := math.Max(math.Max(math.Abs(want[i]), math.Abs(got[i])), floor)
		require.LessOrEqualf(t, math.Abs(want[i]-got[i]), tol*scale, "%s[%d]: want %v got %v", msg, i, want[i], got[i])
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
