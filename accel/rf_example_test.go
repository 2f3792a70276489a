package accel_test

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/rf"
)

// States are packed on the host once, with their material and suffix
// candidates resolved, and uploaded as one buffer of DfrStateWords words
// per state.
func ExamplePackDfrStates() {
	tables, _ := geom.BuildTables([]geom.Mesh{{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0},
		Faces: []int32{0, 1, 2, 1, 3, 2}}})
	states := &rf.DfrStates{
		EdgeIndex: []int32{7}, EdgePos: []float32{0, 0, 1}, EdgeDir: []float32{1, 0, 0},
		EdgeTMin: []float32{-1}, EdgeTMax: []float32{1}, N0: []float32{0, 0, 1}, N1: []float32{0, 1, 0},
		Prim0: []int32{1}, Prim1: []int32{0}, ExteriorAngle: []float32{1.5 * math.Pi},
		Src: []float32{0, -2, 2}, SrcPower: []float32{1},
	}
	m := rf.DefaultMaterial(2)
	m.Gain[1] = 0.5
	w := accel.PackDfrStates(states, 1, m, nil, tables.NumFaces(), tables.Triangle)
	fmt.Println(len(w) == accel.DfrStateWords)
	fmt.Println("state gain:", math.Float32frombits(w[19]))         // prim0's row
	fmt.Println("suffix faces:", w[24], int32(w[25]), int32(w[26])) // count, slot 0, slot 1
	// Output:
	// true
	// state gain: 0.5
	// suffix faces: 2 1 0
}

// A SourceLane export decoded on the host: lane g = (tx·R + rx)·M + s is row g.
func ExampleDecodePaths() {
	rows := make([]uint32, 2*accel.PathRowWords)
	for i := range 2 {
		w := rows[i*accel.PathRowWords:]
		w[1], w[2], w[4], w[5], w[6] = ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)
	}
	w := rows[accel.PathRowWords:] // lane 1 succeeded
	w[0], w[1], w[2], w[3], w[4] = 1, 0, 0, 1, 42
	w[7] = math.Float32bits(1e-8)
	p := accel.DecodePaths(rows, 1, 2, rf.SourceLane)
	fmt.Println(p.Valid, p.Edge0, p.Order, p.Delay[1])
	// Output: [false true] [-1 42] [0 1] 9.99999993922529e-09
}
