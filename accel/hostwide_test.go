package accel

import (
	"math/bits"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// The wide layout finds exactly the brute-force hits (closest hit with the
// lowest-prim tie rule, any-hit) and the hits of the child-pair and quad
// traversals, on the grid (shared edges, equal-t ties) and the cloud.
func TestWideTraversalMatchesBruteForce(t *testing.T) {
	grid := tables(t, gridMesh(24, 2))
	cloud := tables(t, cloudMesh(3000, 0.05, 5))
	for _, opt := range []Options{{MaxLeafSize: 1, Width: 8}, {MaxLeafSize: 2, Width: 8}, {MaxLeafSize: 4, Width: 8},
		{MaxLeafSize: 4, TraversalCost: 3, Width: 8}} {
		checkTraversal(t, "grid", grid, planeRays(400, 1), geom.TMin, geom.DefaultTMax, opt)
		checkTraversal(t, "cloud", cloud, volumeRays(300, 2), geom.TMin, geom.DefaultTMax, opt)
		checkTraversal(t, "cloud tmax", cloud, volumeRays(300, 3), geom.MultipathTMin, 0.3, opt)
	}
}

func TestWideMatchesNarrowLayouts(t *testing.T) {
	for seed := range uint64(6) {
		tb := tables(t, cloudMesh(200+int(seed)*700, 0.08, seed+11), gridMesh(6+int(seed), 1.5))
		var lays []*Layout
		for _, w := range []int{2, 4, 8} {
			lay, err := BuildHost(tb, Options{Width: w})
			if err != nil {
				t.Fatal(err)
			}
			lays = append(lays, lay)
		}
		var st2, st8 TraceStats
		for i, r := range volumeRays(500, seed+100) {
			want := lays[0].Closest(r.o, r.d, geom.TMin, geom.DefaultTMax, &st2)
			for _, lay := range lays[1:] {
				var st *TraceStats
				if lay.Width == 8 {
					st = &st8
				}
				if got := lay.Closest(r.o, r.d, geom.TMin, geom.DefaultTMax, st); got != want {
					if got.Prim != want.Prim || got.T != want.T || got.U != want.U || got.V != want.V ||
						lay.Order[got.Slot] != lays[0].Order[want.Slot] {
						t.Fatalf("seed %d ray %d width %d: %+v, child-pair %+v", seed, i, lay.Width, got, want)
					}
				}
			}
		}
		if st8.Nodes >= st2.Nodes {
			t.Errorf("seed %d: wide traversal fetched %d nodes, child-pair %d", seed, st8.Nodes, st2.Nodes)
		}
	}
}

// Structure of the wide layout: every node reached once, node groups
// contiguous, every triangle slot in exactly one leaf, the prim order a
// permutation, each child box inside the quantized slot box, and the
// height as reported.
func TestWideLayoutStructure(t *testing.T) {
	for _, mesh := range []int{1, 2, 3, 9, 300, 5000} {
		tb := tables(t, cloudMesh(mesh, 0.05, uint64(mesh)))
		lay, err := BuildHost(tb, Options{Width: 8})
		if err != nil {
			t.Fatal(err)
		}
		if len(lay.Nodes) != lay.NumNodes*WideNodeWords {
			t.Fatalf("%d tris: %d node words for %d nodes", mesh, len(lay.Nodes), lay.NumNodes)
		}
		seenNode := make([]bool, lay.NumNodes)
		seenSlot := make([]bool, lay.NumTris)
		var walk func(i, depth int) int
		walk = func(i, depth int) int {
			if seenNode[i] {
				t.Fatalf("%d tris: node %d reached twice", mesh, i)
			}
			seenNode[i] = true
			w := lay.WideNode(i)
			h := depth
			children := 0
			for c := range wideSlots {
				node, first, count, internal := w.Child(c)
				if internal {
					if int(node) != int(w.ChildBase)+children {
						t.Fatalf("%d tris: node %d slot %d -> %d, not contiguous from %d", mesh, i, c, node, w.ChildBase)
					}
					children++
					h = max(h, walk(int(node), depth+1))
					continue
				}
				for k := first; k < first+count; k++ {
					if seenSlot[k] {
						t.Fatalf("%d tris: slot %d in two leaves", mesh, k)
					}
					seenSlot[k] = true
					tri := lay.Triangle(k)
					if tri.Prim != lay.Order[k] {
						t.Fatalf("%d tris: slot %d prim %d, Order %d", mesh, k, tri.Prim, lay.Order[k])
					}
					for _, v := range tri.V {
						for a := range 3 {
							if float64(v[a]) < w.Lo[c][a] || float64(v[a]) > w.Hi[c][a] {
								t.Fatalf("%d tris: node %d slot %d box misses a vertex of slot %d", mesh, i, c, k)
							}
						}
					}
				}
			}
			if bits.OnesCount32(w.IMask) != children {
				t.Fatalf("%d tris: node %d imask %#x", mesh, i, w.IMask)
			}
			return h
		}
		if h := walk(0, 1); h != lay.Height {
			t.Fatalf("%d tris: height %d, layout says %d", mesh, h, lay.Height)
		}
		for i, s := range seenNode {
			if !s {
				t.Fatalf("%d tris: node %d unreachable", mesh, i)
			}
		}
		for k, s := range seenSlot {
			if !s {
				t.Fatalf("%d tris: slot %d in no leaf", mesh, k)
			}
		}
	}
}

func TestWideOptions(t *testing.T) {
	tb := tables(t, cloudMesh(10, 0.05, 1))
	if _, err := BuildHost(tb, Options{Width: 8, MaxLeafSize: 5}); err == nil {
		t.Fatal("Width 8 with MaxLeafSize 5 accepted")
	}
	if _, err := BuildHost(tb, Options{Width: 6}); err == nil {
		t.Fatal("Width 6 accepted")
	}
}
