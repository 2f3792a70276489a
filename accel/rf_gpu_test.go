package accel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/stretchr/testify/require"
)

// rfFixture is a small random RF problem over a ground quad and a soup.
type rfFixture struct {
	tables *geom.Tables
	states *rf.DfrStates
	grid   rf.DfrGrid
	opt    rf.AccumOptions
	rx, tx []float32
}

func newRFFixture(t *testing.T, seed uint64) rfFixture {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	u := func(lo, hi float64) float32 { return float32(lo + (hi-lo)*r.Float64()) }
	m := geom.Mesh{Vertices: []float32{-3, -3, 0, 3, -3, 0, 3, 3, 0, -3, 3, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	for i := range 40 {
		c := [3]float32{u(-1.5, 1.5), u(-1.5, 1.5), u(0.3, 1.8)}
		for range 3 {
			m.Vertices = append(m.Vertices, c[0]+u(-0.3, 0.3), c[1]+u(-0.3, 0.3), c[2]+u(-0.3, 0.3))
		}
		m.Faces = append(m.Faces, int32(4+3*i), int32(5+3*i), int32(6+3*i))
	}
	tb, err := geom.BuildTables([]geom.Mesh{m})
	if err != nil {
		t.Fatal(err)
	}
	st := &rf.DfrStates{}
	for s := range 5 {
		st.EdgeIndex = append(st.EdgeIndex, int32(s))
		st.EdgePos = append(st.EdgePos, u(-1, 1), u(-1, 1), u(0.3, 1.5))
		st.EdgeDir = append(st.EdgeDir, u(-1, 1), u(-1, 1), u(-0.3, 0.3))
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, u(-1, 0)), append(st.EdgeTMax, u(0.1, 1))
		st.N0, st.N1 = append(st.N0, 0, 0, 1), append(st.N1, u(-1, 1), u(-1, 1), u(-1, 0))
		st.Prim0, st.Prim1 = append(st.Prim0, int32(s%2)), append(st.Prim1, int32(r.IntN(8)))
		st.ExteriorAngle = append(st.ExteriorAngle, u(3, 6))
		st.Src = append(st.Src, u(-2, 2), u(-2, 2), u(2, 3))
		st.SrcPower = append(st.SrcPower, u(0.5, 2))
	}
	f := rfFixture{tables: tb, states: st,
		grid: rf.DfrGrid{Axis: 2, Position: 0.4, Coord0Min: -2.5, Coord0Max: 2.5, Coord1Min: -2, Coord1Max: 2.2, Res0: 7, Res1: 5}}
	f.opt = rf.DefaultAccumOptions()
	f.opt.DirectSamples, f.opt.KellerSamples, f.opt.SuffixSamples, f.opt.Seed = 3001, 1999, 2500, 11
	f.opt.LaneCount = 7500
	for range 2 {
		f.tx = append(f.tx, u(-1, 1), u(-1, 1), 2.5)
	}
	for range 9 {
		f.rx = append(f.rx, u(-2.5, 2.5), u(-2.5, 2.5), u(0.05, 1))
	}
	return f
}

func (f rfFixture) bvh(t *testing.T, s *launch.Stream, width int) *BVH {
	t.Helper()
	b, err := BuildWith(s, f.tables, Options{Width: width})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func windowCuts(total int) map[string][]int {
	return map[string][]int{
		"1": {0, total}, "2-aligned": {0, 2048, total}, "2-odd": {0, 2049, total},
		"3-aligned": {0, 32, 4096, total}, "3-odd": {0, 1, 3333, total},
		"7-aligned": {0, 64, 640, 1280, 1280, 4000, 6400, total}, "7-odd": {0, 7, 99, 1001, 2500, 2501, 6999, total},
	}
}

// TestRFGPUWindowsAccumulateIntoOneOutput: windows launched one after
// another with Accumulate into the same device outputs equal one launch
// (counters exactly, grids to float32 rounding), on every node layout,
// which agree with each other.
func TestRFGPUWindowsAccumulateIntoOneOutput(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		f := newRFFixture(t, 1)
		faces := f.tables.NumFaces()
		packed := devBuf(t, s, PackDfrStates(f.states, 5, nil, nil, faces, f.tables.Triangle))
		cells := f.grid.Cells()
		var byWidth []*rf.AccumResult
		for _, width := range []int{2, 4, 8} {
			b := f.bvh(t, s, width)
			full, err := b.AccumDfrDirectHost(s, f.states, f.grid, nil, nil, f.opt, faces, f.tables.Triangle)
			if err != nil {
				t.Fatal(err)
			}
			byWidth = append(byWidth, full)
			for name, cuts := range windowCuts(7500) {
				out := DfrAccumOut{Grids: devOut[float32](t, s, 7*cells), Counters: devOut[int32](t, s, 7)}
				for w := 0; w+1 < len(cuts); w++ {
					o := f.opt
					o.LaneOffset, o.LaneCount = cuts[w], cuts[w+1]-cuts[w]
					in := DfrAccumLaunch{States: packed, NumStates: 5, Grid: f.grid, Options: o, Accumulate: w > 0}
					if err := b.AccumDfrDirect(s, in, out); err != nil {
						t.Fatal(err)
					}
				}
				got := DecodeDfrAccum(download(t, s, out.Grids, 7*cells), download(t, s, out.Counters, 7), f.grid.Res0, f.grid.Res1)
				sameAccum(t, full, got, fmt.Sprintf("w%d %s", width, name))
			}
		}
		sameAccum(t, byWidth[0], byWidth[1], "width 2 vs 4")
		sameAccum(t, byWidth[0], byWidth[2], "width 2 vs 8")
		if byWidth[0].EdgeUses == 0 || byWidth[0].VisRejects == 0 {
			t.Errorf("fixture too easy: %+v", byWidth[0])
		}
	})
}

func sameAccum(t *testing.T, want, got *rf.AccumResult, msg string) {
	t.Helper()
	wc := []int32{want.DirectCount, want.KellerCount, want.SuffixCount, want.VisRejects, want.EdgeVisRejects, want.UtdRejects, want.EdgeUses}
	gc := []int32{got.DirectCount, got.KellerCount, got.SuffixCount, got.VisRejects, got.EdgeVisRejects, got.UtdRejects, got.EdgeUses}
	if fmt.Sprint(wc) != fmt.Sprint(gc) {
		t.Fatalf("%s: counters %v, want %v", msg, gc, wc)
	}
	var num, den float64
	for k, g := range [][]float64{want.Power, want.FieldXRe} {
		o := [][]float64{got.Power, got.FieldXRe}[k]
		for i := range g {
			num += (g[i] - o[i]) * (g[i] - o[i])
			den += g[i] * g[i]
		}
	}
	if math.Sqrt(num) > 1e-6*math.Sqrt(den) {
		t.Fatalf("%s: grids differ (relative L2 %g)", msg, math.Sqrt(num/den))
	}
}

// TestRFGPUPathWindows: SourceLane windows land at their global rows (bit
// for bit the rows of one launch); Compact windows append the same rows.
func TestRFGPUPathWindows(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		f := newRFFixture(t, 2)
		faces := f.tables.NumFaces()
		active := []bool{true, true, false, true, true}
		packed := devBuf(t, s, PackDfrStates(f.states, 5, nil, active, faces, f.tables.Triangle))
		rx := devBuf(t, s, f.rx)
		T, R, M := len(f.tx)/3, len(f.rx)/3, 5
		total := T * R * M
		b := f.bvh(t, s, 2)
		run := func(layout rf.PathLayout, cuts []int) ([]uint32, int32) {
			out := DfrPathsOut{Rows: devOut[uint32](t, s, total*PathRowWords), Count: devOut[int32](t, s, 1), Capacity: total}
			for w := 0; w+1 < len(cuts); w++ {
				in := DfrPathsLaunch{States: packed, NumStates: M, Rx: rx, NumRx: R, NumTx: T, Wavelength: 0.3, Layout: layout,
					LaneOffset: cuts[w], LaneCount: cuts[w+1] - cuts[w], Accumulate: w > 0}
				if err := b.TraceDfrPaths(s, in, out); err != nil {
					t.Fatal(err)
				}
			}
			return download(t, s, out.Rows, total*PathRowWords), download(t, s, out.Count, 1)[0]
		}
		cutsOf := map[string][]int{"1": {0, total}, "2": {0, 32, total}, "3": {0, 5, 40, total},
			"7": {0, 1, 2, 2, 33, 64, total - 1, total}}
		for _, layout := range []rf.PathLayout{rf.SourceLane, rf.Compact} {
			wantRows, wantCount := run(layout, cutsOf["1"])
			if wantCount == 0 {
				t.Fatalf("fixture has no valid path")
			}
			for name, cuts := range cutsOf {
				rows, count := run(layout, cuts)
				if count != wantCount {
					t.Fatalf("layout %d %s: count %d, want %d", layout, name, count, wantCount)
				}
				if layout == rf.Compact {
					rows, wantRows = sortedRows(rows, int(count)), sortedRows(wantRows, int(count))
				}
				for i := range rows {
					if rows[i] != wantRows[i] {
						t.Fatalf("layout %d %s: row %d word %d differs", layout, name, i/PathRowWords, i%PathRowWords)
					}
				}
			}
		}
		// SourceLane rows sit at ((tx·R + rx)·M + s).
		rows, _ := run(rf.SourceLane, cutsOf["3"])
		p := DecodePaths(rows, 0, total, rf.SourceLane)
		for g := range total {
			tx, r, st := rf.PathLane(uint32(g), M, R)
			if p.Valid[g] && (int(p.TxID[g]) != tx || int(p.RxID[g]) != r || int(p.Edge0[g]) != st || !active[st]) {
				t.Fatalf("row %d holds (%d, %d, %d), lane is (%d, %d, %d)", g, p.TxID[g], p.RxID[g], p.Edge0[g], tx, r, st)
			}
		}
	})
}

// sortedRows sorts the first n rows (PathRowWords words each) bytewise.
func sortedRows(w []uint32, n int) []uint32 {
	rows := make([][]uint32, n)
	for i := range rows {
		rows[i] = w[i*PathRowWords : (i+1)*PathRowWords]
	}
	sort.Slice(rows, func(a, b int) bool {
		for k := range PathRowWords {
			if rows[a][k] != rows[b][k] {
				return rows[a][k] < rows[b][k]
			}
		}
		return false
	})
	out := append([]uint32(nil), w...)
	for i, r := range rows {
		copy(out[i*PathRowWords:], r)
	}
	return out
}

// TestRFGPUWaveGridsAreWholeWaves: the driver's occupancy for the
// binary-node direct-only kernel is the 5 blocks of 128 threads per
// multiprocessor its launch bounds ask for (96 registers: 6 blocks would
// need 73,728 of the 65,536), so an accumulation over many lanes launches
// 5 blocks per multiprocessor, and one over few lanes one block per 128.
func TestRFGPUWaveGridsAreWholeWaves(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		f := newRFFixture(t, 1)
		b := f.bvh(t, s, 2)
		run := rfStream{s}
		per, err := run.residentBlocks(ModuleRFAccum, "rf_accum_direct_only", launch.Threads(TraceThreads), 0)
		require.NoError(t, err)
		require.Equal(t, 5, per)
		g, err := b.rfWaveGrid(run, ModuleRFAccum, "rf_accum_direct_only", 1<<26, 0)
		require.NoError(t, err)
		require.Equal(t, uint32(5*rfWaves*b.sms), g.X)
		g, err = b.rfWaveGrid(run, ModuleRFAccum, "rf_accum_direct_only", 300, 0)
		require.NoError(t, err)
		require.Equal(t, uint32(3), g.X)
		_, err = b.rfWaveGrid(run, ModuleRFAccum, "no_such_kernel", 300, 0)
		require.Error(t, err)
	})
}
