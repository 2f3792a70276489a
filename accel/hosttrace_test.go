package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// bruteTables is the reference closest hit straight from the global tables.
func bruteTables(tb *geom.Tables, o, d [3]float32, tmin, tmax float32) Hit {
	best := Hit{T: tmax, Slot: -1, Prim: -1}
	for f := range tb.NumFaces() {
		p0, p1, p2 := tb.Triangle(f)
		t, u, v, ok := geom.Watertight(o, d, p0, p1, p2, tmin, best.T)
		if ok && (t < best.T || uint32(f) < uint32(best.Prim)) {
			best = Hit{T: t, U: u, V: v, Prim: int32(f)}
		}
	}
	return best
}

func sameHit(a, b Hit) bool {
	return a.Prim == b.Prim && (a.Prim < 0 || (a.T == b.T && a.U == b.U && a.V == b.V))
}

func checkTraversal(t *testing.T, name string, tb *geom.Tables, rays []ray, tmin, tmax float32, opt Options) {
	t.Helper()
	lay, err := BuildHost(tb, opt)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for i, r := range rays {
		want := bruteTables(tb, r.o, r.d, tmin, tmax)
		got := lay.Closest(r.o, r.d, tmin, tmax, nil)
		if !sameHit(got, want) {
			t.Fatalf("%s ray %d (o=%v d=%v): BVH %+v, brute %+v", name, i, r.o, r.d, got, want)
		}
		if got.Prim >= 0 {
			hits++
			if lay.Triangle(got.Slot).Prim != got.Prim {
				t.Fatalf("%s ray %d: slot %d holds prim %d, hit says %d", name, i, got.Slot, lay.Triangle(got.Slot).Prim, got.Prim)
			}
		}
		if lb := lay.ClosestBrute(r.o, r.d, tmin, tmax); !sameHit(lb, want) {
			t.Fatalf("%s ray %d: layout brute %+v, tables brute %+v", name, i, lb, want)
		}
		if any := lay.AnyHit(r.o, r.d, tmin, tmax, nil); any != (want.Prim >= 0) {
			t.Fatalf("%s ray %d: any-hit %v, closest prim %d", name, i, any, want.Prim)
		}
	}
	if hits == 0 {
		t.Fatalf("%s: no ray hit anything", name)
	}
}

func TestTraversalMatchesBruteForce(t *testing.T) {
	grid := tables(t, gridMesh(24, 2))
	cloud := tables(t, cloudMesh(3000, 0.05, 5))
	for _, opt := range []Options{{MaxLeafSize: 1}, {MaxLeafSize: 4}, {MaxLeafSize: 8},
		{MaxLeafSize: 1, Width: 4}, {MaxLeafSize: 4, Width: 4}, {MaxLeafSize: 8, TraversalCost: 3, Width: 4}} {
		checkTraversal(t, "grid", grid, planeRays(400, 1), geom.TMin, geom.DefaultTMax, opt)
		checkTraversal(t, "cloud", cloud, volumeRays(300, 2), geom.TMin, geom.DefaultTMax, opt)
		checkTraversal(t, "cloud tmax", cloud, volumeRays(300, 3), geom.MultipathTMin, 0.3, opt)
	}
}

// Rays through grid vertices and along grid edges (shared-edge ties), axis
// aligned rays (zero direction components) and rays grazing the plane.
func TestTraversalEdgeCases(t *testing.T) {
	grid := tables(t, gridMesh(8, 2))
	var rays []ray
	for j := 0; j <= 8; j++ {
		for i := 0; i <= 8; i++ {
			x, y := -1+float32(i)*0.25, -1+float32(j)*0.25
			rays = append(rays,
				ray{[3]float32{x, y, -1}, [3]float32{0, 0, 1}},
				ray{[3]float32{x, y, 1}, [3]float32{0, 0, -2}},
				ray{[3]float32{x + 0.125, y, -1}, [3]float32{0, 0, 1}},
				ray{[3]float32{x, y - 1, -1}, [3]float32{0, 1, 1}},
			)
		}
	}
	rays = append(rays,
		ray{[3]float32{-2, 0.1, 0}, [3]float32{1, 0, 0}},        // in the plane
		ray{[3]float32{-2, 0.1, 1e-7}, [3]float32{1, 0, -1e-7}}, // grazing
		ray{[3]float32{0.3, 0.3, -1e30}, [3]float32{0, 0, 1}},   // far origin
		ray{[3]float32{0.3, 0.3, -1}, [3]float32{1e-30, 0, 1}},
	)
	for _, w := range []int{2, 4, 8} {
		checkTraversal(t, "grid edges", grid, rays, geom.TMin, geom.DefaultTMax, Options{Width: w})
	}

	// Far-away scene and origin: large coordinates stress the inflation.
	rng := rand.New(rand.NewPCG(9, 9))
	m := cloudMesh(500, 0.3, 11)
	for i := range m.Vertices {
		m.Vertices[i] = m.Vertices[i]*1000 + 5e5
	}
	far := tables(t, m)
	var frays []ray
	for range 300 {
		o := [3]float32{5e5 + float32(rng.NormFloat64())*800, 5e5 + float32(rng.NormFloat64())*800, 5e5 - 3000}
		frays = append(frays, ray{o, normalize([3]float32{float32(rng.NormFloat64()) * 0.2, float32(rng.NormFloat64()) * 0.2, 1})})
	}
	for _, w := range []int{2, 4, 8} {
		checkTraversal(t, "far", far, frays, geom.TMin, geom.DefaultTMax, Options{Width: w})
	}
}

func TestNonFiniteRaysMiss(t *testing.T) {
	for _, w := range []int{2, 4, 8} {
		testNonFinite(t, w)
	}
}

func testNonFinite(t *testing.T, width int) {
	lay, err := BuildHost(tables(t, gridMesh(4, 2)), Options{Width: width})
	if err != nil {
		t.Fatal(err)
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, r := range []ray{
		{[3]float32{nan, 0, -1}, [3]float32{0, 0, 1}},
		{[3]float32{0, 0, -1}, [3]float32{0, inf, 1}},
		{[3]float32{0, 0, -1}, [3]float32{0, 0, 0}},
	} {
		if h := lay.Closest(r.o, r.d, geom.TMin, geom.DefaultTMax, nil); h.Prim >= 0 {
			t.Errorf("ray %v hit %+v", r, h)
		}
	}
}
