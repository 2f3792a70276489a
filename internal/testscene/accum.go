package testscene

import (
	"math"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/rf"
)

// AccumFixture is the accumulation fixture of the multi-device benchmark
// (multidevice spec §10.1): one triangle (−1,−1,0), (1,−1,0), (−1,1,0), two
// diffraction states on edges along x at the origin and at x = 0.25 (t in
// [−1, 1], faces' normals ±z, exterior angle π, a source at (0, −1, 0.25) of
// power 1) and a 4×4 grid on the plane z = 0 over [−1, 1]². The material is
// the default (nil).
func AccumFixture() (geom.Mesh, *rf.DfrStates, rf.DfrGrid) {
	tri := geom.Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2}}
	st := &rf.DfrStates{
		EdgeIndex: []int32{0, 1}, EdgePos: []float32{0, 0, 0, 0.25, 0, 0}, EdgeDir: []float32{1, 0, 0, 1, 0, 0},
		EdgeTMin: []float32{-1, -1}, EdgeTMax: []float32{1, 1}, N0: []float32{0, 0, 1, 0, 0, 1}, N1: []float32{0, 0, -1, 0, 0, -1},
		Prim0: []int32{0, 0}, Prim1: []int32{0, 0}, ExteriorAngle: []float32{math.Pi, math.Pi},
		Src: []float32{0, -1, 0.25, 0, -1, 0.25}, SrcPower: []float32{1, 1},
	}
	g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 4}
	return tri, st, g
}

// AccumOptions are the accumulation options of the multi-device benchmark
// on AccumFixture: λ = 1, samples direct samples, seed 17, the whole lane
// space.
func AccumOptions(samples int) rf.AccumOptions {
	opt := rf.DefaultAccumOptions()
	opt.Wavelength, opt.DirectSamples, opt.Seed = 1.0, samples, 17
	return opt
}
