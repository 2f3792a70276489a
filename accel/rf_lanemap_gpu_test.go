package accel

import (
	"fmt"
	"math"
	"testing"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// TestRFGPUStridedLanesMatchReference runs the accumulation kernels on a
// launch of one SM's worth of blocks, so that every thread runs several
// lanes a grid stride apart (the incremental state/cell mapping, the cell
// centre and weight caches), over windows of direct lanes only
// (rf_accum_direct_only), mixed windows and whole lane spaces, and
// compares them with package rf: counters exactly, grids to 1e-6 relative
// L2. Several state counts and grids make the state, column and row
// counters carry.
func TestRFGPUStridedLanesMatchReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		f := newRFFixture(t, 3)
		faces := f.tables.NumFaces()
		ref := rf.NewTablesScene(f.tables)
		for _, width := range []int{2, 4} {
			b := f.bvh(t, s, width)
			b.sms = 1 // grid stride 16·128 lanes
			for _, c := range []struct {
				states     int
				res0, res1 int
			}{{5, 7, 5}, {3, 4, 4}, {1, 13, 1}, {4, 1, 9}} {
				st := firstStates(f.states, c.states)
				g := f.grid
				g.Res0, g.Res1 = c.res0, c.res1
				for _, w := range [][2]int{{0, 3001}, {17, 2900}, {0, 7500}, {2999, 3000}, {5000, 2500}} {
					o := f.opt
					o.LaneOffset, o.LaneCount = w[0], w[1]
					name := fmt.Sprintf("w%d S%d %dx%d window %v", width, c.states, c.res0, c.res1, w)
					want, err := rf.AccumDfrDirect(ref, st, g, nil, nil, o)
					if err != nil {
						t.Fatal(err)
					}
					got, err := b.AccumDfrDirectHost(s, st, g, nil, nil, o, faces, f.tables.Triangle)
					if err != nil {
						t.Fatal(err)
					}
					sameAccum(t, want, got, name)
				}
				// The coherent lane space is S·cells: a finer grid gives it several strides.
				cg := g
				cg.Res0, cg.Res1 = 9*c.res0, 7*c.res1
				co := rf.DefaultCoherentOptions()
				co.Wavelength, co.LaneCount = 0.05, c.states*cg.Cells()
				want, err := rf.AccumDfrCoherentDirect(ref, st, cg, nil, nil, co)
				if err != nil {
					t.Fatal(err)
				}
				got, err := b.AccumDfrCoherentHost(s, st, cg, nil, nil, co, faces, f.tables.Triangle)
				if err != nil {
					t.Fatal(err)
				}
				sameCoherent(t, want, got, fmt.Sprintf("coherent w%d S%d %dx%d", width, c.states, c.res0, c.res1))
			}
		}
	})
}

// firstStates is the first n states of st.
func firstStates(st *rf.DfrStates, n int) *rf.DfrStates {
	return &rf.DfrStates{EdgeIndex: st.EdgeIndex[:n], EdgePos: st.EdgePos[:3*n], EdgeDir: st.EdgeDir[:3*n],
		EdgeTMin: st.EdgeTMin[:n], EdgeTMax: st.EdgeTMax[:n], N0: st.N0[:3*n], N1: st.N1[:3*n],
		Prim0: st.Prim0[:n], Prim1: st.Prim1[:n], ExteriorAngle: st.ExteriorAngle[:n], Src: st.Src[:3*n], SrcPower: st.SrcPower[:n]}
}

func sameCoherent(t *testing.T, want, got *rf.CoherentResult, msg string) {
	t.Helper()
	wc := fmt.Sprint(want.DirectCount, want.VisibilityRejectCount, want.UtdRejectCount)
	if gc := fmt.Sprint(got.DirectCount, got.VisibilityRejectCount, got.UtdRejectCount); gc != wc {
		t.Fatalf("%s: counts %s, want %s", msg, gc, wc)
	}
	var num, den float64
	for k, g := range [][]float64{want.DirectFieldXRe, want.DirectFieldXIm} {
		o := [][]float64{got.DirectFieldXRe, got.DirectFieldXIm}[k]
		for i := range g {
			num += (g[i] - o[i]) * (g[i] - o[i])
			den += g[i] * g[i]
		}
	}
	if den == 0 || math.Sqrt(num) > 1e-6*math.Sqrt(den) {
		t.Fatalf("%s: fields differ (relative L2 %g of %g)", msg, math.Sqrt(num), math.Sqrt(den))
	}
}
