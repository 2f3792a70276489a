package rf_test

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/rf"
)

func ExampleHash() {
	fmt.Printf("%#08x\n", rf.Hash(1))
	fmt.Println(rf.Uniform(5, rf.StreamKeller, 17))
	// Output:
	// 0x688990c0
	// 0.3206975
}

func ExampleResolveWindow() {
	n, _ := rf.ResolveWindow(4096, -1, 8192) // the second of two windows
	fmt.Println(n)
	_, err := rf.ResolveWindow(16, 64, 64)
	fmt.Println(err)
	// Output:
	// 4096
	// rf: lane_window: lane_count: lane_offset + lane_count must not exceed the total sample count. (16 + 64 > 64)
}

// The accumulation fixture of the multi-device benchmark.
func ExampleAccumDfrDirect() {
	tables, _ := geom.BuildTables([]geom.Mesh{{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2}}})
	states := &rf.DfrStates{
		EdgeIndex: []int32{0, 1}, EdgePos: []float32{0, 0, 0, 0.25, 0, 0}, EdgeDir: []float32{1, 0, 0, 1, 0, 0},
		EdgeTMin: []float32{-1, -1}, EdgeTMax: []float32{1, 1},
		N0: []float32{0, 0, 1, 0, 0, 1}, N1: []float32{0, 0, -1, 0, 0, -1},
		Prim0: []int32{0, 0}, Prim1: []int32{0, 0}, ExteriorAngle: []float32{math.Pi, math.Pi},
		Src: []float32{0, -1, 0.25, 0, -1, 0.25}, SrcPower: []float32{1, 1},
	}
	grid := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 4}
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.Seed = 8192, 17
	r, err := rf.AccumDfrDirect(rf.NewTablesScene(tables), states, grid, nil, nil, opt)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.DirectCount, r.VisRejects, r.UtdRejects, r.EdgeUses)
	// Output: 8192 0 0 8192
}

func ExampleAccumDfrDirectVJP() {
	states := &rf.DfrStates{
		EdgeIndex: []int32{0}, EdgePos: []float32{0, 0, 1}, EdgeDir: []float32{1, 0, 0},
		EdgeTMin: []float32{-1}, EdgeTMax: []float32{1}, N0: []float32{0, 1, 0}, N1: []float32{0, 0, 1},
		Prim0: []int32{-1}, Prim1: []int32{-1}, ExteriorAngle: []float32{1.5 * math.Pi},
		Src: []float32{0, -2, 2}, SrcPower: []float32{1},
	}
	grid := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples = 256
	ones := []float64{1, 1, 1, 1}
	r, _ := rf.AccumDfrDirect(nil, states, grid, nil, nil, opt)
	g, _ := rf.AccumDfrDirectVJP(nil, states, grid, nil, nil, opt, ones, nil)
	// Power is linear in src_power: its gradient is the total power.
	total := r.Power[0] + r.Power[1] + r.Power[2] + r.Power[3]
	fmt.Println(math.Abs(g.SrcPower[0]-total) < 1e-15*total)
	// Output: true
}

func ExampleAccumulateReflections() {
	rays := rf.ReflRays{O: []float32{0, 0, 2}, D: []float32{0, 0, -1}, TxPosition: []float32{0, 0, 2}}
	grid := rf.AccumGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 1, Res1: 1}
	opt := rf.DefaultReflOptions()
	opt.IncludeLOS = true
	r, _ := rf.AccumulateReflections(nil, rays, grid, nil, 0, opt)
	// |Ec|² = (λ/4π)²·Ω/A_cell/|cos θ| for a unit field.
	fmt.Printf("%d %.6f\n", r.ReflectionCount, r.Power[0]*16*math.Pi*math.Pi*4)
	// Output: 1 1.000000
}

func ExampleStationaryParameter() {
	// Source and target at equal distances from the x axis: the Fermat
	// point is midway between their axial coordinates.
	p := rf.StationaryParameter([3]float64{0, -1, 0}, [3]float64{4, 0, 1}, [3]float64{}, [3]float64{1, 0, 0})
	fmt.Println(p)
	// Output: 2
}

// One edge, one cell: the coherent field is √c·e^{−ik(s'+s)} at the Fermat
// point.
func ExampleAccumDfrCoherentDirect() {
	states := &rf.DfrStates{
		EdgeIndex: []int32{0}, EdgePos: []float32{0, 0, 0}, EdgeDir: []float32{1, 0, 0},
		EdgeTMin: []float32{-2}, EdgeTMax: []float32{2}, N0: []float32{0, 1, 0}, N1: []float32{0, 0, 1},
		Prim0: []int32{-1}, Prim1: []int32{-1}, ExteriorAngle: []float32{1.5 * math.Pi},
		Src: []float32{0, -3, 4}, SrcPower: []float32{1},
	}
	grid := rf.DfrGrid{Axis: 2, Position: -4, Coord0Min: -1, Coord0Max: 1, Coord1Min: 2, Coord1Max: 4, Res0: 1, Res1: 1}
	r, _ := rf.AccumDfrCoherentDirect(nil, states, grid, nil, nil, rf.DefaultCoherentOptions())
	// Path 5 + 5 = 10 wavelengths: the phase is a multiple of 2π.
	fmt.Println(r.DirectCount[0], r.DirectFieldXIm[0]/r.DirectFieldXRe[0] < 1e-9)
	// Output: 1 true
}

// A conducting half-plane in free space: one transmitter, a lit and a
// shadowed receiver, SourceLane rows at (tx·R + rx)·M + s.
func ExampleTraceDfrPaths() {
	states := &rf.DfrStates{
		EdgeIndex: []int32{7}, EdgePos: []float32{0, 0, 0}, EdgeDir: []float32{0, 0, 1},
		EdgeTMin: []float32{-10}, EdgeTMax: []float32{10}, N0: []float32{0, 1, 0}, N1: []float32{0, -1, 0},
		Prim0: []int32{-1}, Prim1: []int32{-1}, ExteriorAngle: []float32{2 * math.Pi},
		Src: []float32{1, 1.7, 0}, SrcPower: []float32{1},
	}
	rx := []float32{-2, 1, 0, 2, -2, 0}
	opt := rf.DefaultPathOptions()
	opt.Layout = rf.SourceLane
	p, _ := rf.TraceDfrPaths(nil, []float32{0, 0, 0}, rx, states, nil, []bool{true}, opt)
	for row := range p.Capacity {
		fmt.Println(p.Valid[row], p.RxID[row], p.Edge0[row], p.Order[row])
	}
	// Output:
	// true 0 7 1
	// true 1 7 1
}
