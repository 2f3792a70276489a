package workload

import (
	"math"
	"slices"
	"testing"
)

func TestLinspace(t *testing.T) {
	if got := Linspace(-1, 1, 5); !slices.Equal(got, []float32{-1, -.5, 0, .5, 1}) {
		t.Fatalf("Linspace(-1,1,5) = %v", got)
	}
	if Linspace(0, 1, 0) != nil || !slices.Equal(Linspace(3, 4, 1), []float32{3}) {
		t.Fatal("small n")
	}
	for _, n := range []int{2, 3, 7, 192, 1001} {
		a := Linspace(-1, 1, n)
		if a[0] != -1 || a[n-1] != 1 {
			t.Fatalf("n=%d: endpoints %g %g", n, a[0], a[n-1])
		}
		for i := range n {
			exact := -1 + 2*float64(i)/float64(n-1)
			if d := math.Abs(float64(a[i]) - exact); d > 2e-7 {
				t.Fatalf("n=%d i=%d: %g vs %g", n, i, a[i], exact)
			}
			if i > 0 && a[i] <= a[i-1] {
				t.Fatalf("n=%d: not increasing at %d", n, i)
			}
		}
	}
}

func TestGridMeshOrder(t *testing.T) {
	m := GridMesh(2, 2)
	wantV := []float32{
		-1, -1, 0, 0, -1, 0, 1, -1, 0,
		-1, 0, 0, 0, 0, 0, 1, 0, 0,
		-1, 1, 0, 0, 1, 0, 1, 1, 0,
	}
	// (a,b,c) for cells (0,0),(0,1),(1,0),(1,1), then (b,d,c) likewise.
	wantF := []int32{
		0, 1, 3, 1, 2, 4, 3, 4, 6, 4, 5, 7,
		1, 4, 3, 2, 5, 4, 4, 7, 6, 5, 8, 7,
	}
	if !slices.Equal(m.Vertices, wantV) || !slices.Equal(m.Faces, wantF) {
		t.Fatalf("GridMesh(2,2):\nV %v\nF %v", m.Vertices, m.Faces)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.Dynamic || m.EdgesDisabled {
		t.Error("GridMesh switches must be off")
	}
	// Every face is counter-clockwise seen from +z.
	for f := range m.NumFaces() {
		a, b, c := m.Faces[3*f], m.Faces[3*f+1], m.Faces[3*f+2]
		e1x, e1y := m.Vertices[3*b]-m.Vertices[3*a], m.Vertices[3*b+1]-m.Vertices[3*a+1]
		e2x, e2y := m.Vertices[3*c]-m.Vertices[3*a], m.Vertices[3*c+1]-m.Vertices[3*a+1]
		if e1x*e2y-e1y*e2x <= 0 {
			t.Fatalf("face %d is not +z", f)
		}
	}
	if g := GridMesh(0, 1); g.NumFaces() != 2 {
		t.Errorf("cells < 1: %d faces", g.NumFaces())
	}
}

func TestLightGrid(t *testing.T) {
	m := GridMesh(Light.Size, Light.Extent)
	if m.NumVertices() != 192*192 || m.NumFaces() != 72962 || Light.Triangles() != 72962 {
		t.Fatalf("%d vertices %d faces", m.NumVertices(), m.NumFaces())
	}
	if m.Vertices[0] != -1 || m.Vertices[len(m.Vertices)-3] != 1 || m.Vertices[len(m.Vertices)-2] != 1 {
		t.Fatal("grid corners")
	}
}

func TestCloudMesh(t *testing.T) {
	const n, edge = 5000, float32(0.005)
	m := CloudMesh(n, edge, MeshSeed)
	if m.NumFaces() != n || m.NumVertices() != 3*n {
		t.Fatalf("%d faces %d vertices", m.NumFaces(), m.NumVertices())
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Faces {
		if f != int32(i) {
			t.Fatalf("face index %d = %d", i, f)
		}
	}
	for tr := range n {
		for c := range 3 {
			lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
			for k := range 3 {
				x := m.Vertices[9*tr+3*k+c]
				lo, hi = min(lo, x), max(hi, x)
			}
			if hi-lo > 2*edge*1.0001 || lo < -1-edge || hi > 1+edge {
				t.Fatalf("triangle %d axis %d spans [%g,%g]", tr, c, lo, hi)
			}
		}
	}
	if g := CloudMesh(0, 1, 1); g.NumFaces() != 1 {
		t.Errorf("triangles < 1: %d faces", g.NumFaces())
	}
}

func TestPlaneRays(t *testing.T) {
	o, d := PlaneRays(20000, PlaneRaySeed)
	if len(o) != 60000 || len(d) != 60000 {
		t.Fatal("lengths")
	}
	for i := range 20000 {
		if o[3*i+2] != -1 || o[3*i] < -.9 || o[3*i] >= .9 || o[3*i+1] < -.9 || o[3*i+1] >= .9 {
			t.Fatalf("origin %d = %v", i, o[3*i:3*i+3])
		}
		checkUnit(t, d[3*i:3*i+3])
		if d[3*i+2] <= 0 {
			t.Fatalf("direction %d does not rise: %v", i, d[3*i:3*i+3])
		}
	}
	if o2, d2 := PlaneRays(0, 1); len(o2) != 0 || len(d2) != 0 {
		t.Error("n = 0")
	}
}

func TestVolumeRays(t *testing.T) {
	const n = 50000
	o, d := VolumeRays(n, VolumeRaySeed)
	var mean, sq [3]float64
	for i := range n {
		for k := range 3 {
			if o[3*i+k] < -1 || o[3*i+k] >= 1 {
				t.Fatalf("origin %d = %v", i, o[3*i:3*i+3])
			}
			mean[k] += float64(d[3*i+k]) / n
			sq[k] += float64(d[3*i+k]) * float64(d[3*i+k]) / n
		}
		checkUnit(t, d[3*i:3*i+3])
	}
	// Isotropic unit vectors: mean 0, E[x²] = 1/3 per axis.
	for k := range 3 {
		if math.Abs(mean[k]) > 0.02 || math.Abs(sq[k]-1.0/3) > 0.02 {
			t.Errorf("axis %d: mean %.4f, E[x²] %.4f", k, mean[k], sq[k])
		}
	}
}

func TestNormalStatistics(t *testing.T) {
	v := make([]float32, 100001)
	normals(newRand(7), v)
	var m, m2, m4 float64
	for _, x := range v {
		f := float64(x)
		m += f
		m2 += f * f
		m4 += f * f * f * f
	}
	n := float64(len(v))
	m, m2, m4 = m/n, m2/n, m4/n
	if math.Abs(m) > 0.02 || math.Abs(m2-1) > 0.02 || math.Abs(m4-3) > 0.1 {
		t.Errorf("mean %.4f, E[x²] %.4f, E[x⁴] %.4f; want 0, 1, 3", m, m2, m4)
	}
}

func checkUnit(t *testing.T, v []float32) {
	t.Helper()
	l := math.Sqrt(float64(v[0])*float64(v[0]) + float64(v[1])*float64(v[1]) + float64(v[2])*float64(v[2]))
	if math.Abs(l-1) > 1e-6 {
		t.Fatalf("|%v| = %g", v, l)
	}
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestDeterministic(t *testing.T) {
	o1, d1 := PlaneRays(1000, 42)
	o2, d2 := PlaneRays(1000, 42)
	o3, _ := PlaneRays(1000, 43)
	if !sameBits(o1, o2) || !sameBits(d1, d2) || sameBits(o1, o3) {
		t.Error("PlaneRays")
	}
	v1, w1 := VolumeRays(1000, 42)
	v2, w2 := VolumeRays(1000, 42)
	v3, _ := VolumeRays(1000, 43)
	if !sameBits(v1, v2) || !sameBits(w1, w2) || sameBits(v1, v3) {
		t.Error("VolumeRays")
	}
	c1 := CloudMesh(1000, .01, 42)
	c2 := CloudMesh(1000, .01, 42)
	c3 := CloudMesh(1000, .01, 43)
	if !sameBits(c1.Vertices, c2.Vertices) || sameBits(c1.Vertices, c3.Vertices) {
		t.Error("CloudMesh")
	}
	// A longer batch starts with a shorter one's origins (origins are drawn first).
	o4, _ := PlaneRays(2000, 42)
	if sameBits(o4[:3000], o1) != true {
		t.Error("origins are not drawn first")
	}
}

func TestConfigs(t *testing.T) {
	if Light.Kind != Grid || Light.Size != 191 || Light.Extent != 2 || Light.Rays != 4194304 ||
		Light.MaxBounces != 1 || Light.AccumSamples != 8192 || Light.ChunkRays != 524288 {
		t.Errorf("Light = %+v", Light)
	}
	if Compute.Kind != Cloud || Compute.Size != 2097152 || Compute.Extent != 0.005 || Compute.Rays != 1<<22 ||
		Compute.MaxBounces != 4 || Compute.AccumSamples != 67108864 || Compute.ChunkRays != 524288 {
		t.Errorf("Compute = %+v", Compute)
	}
	if Compute.Triangles() != 2097152 || Grid.String() != "grid" || Cloud.String() != "cloud" || Kind(0).String() != "unknown" {
		t.Error("Triangles/String")
	}
	s := Light.Scaled(100)
	if s.Rays != 100 || Light.Rays != 1<<22 || s.Size != Light.Size {
		t.Error("Scaled must copy")
	}
	mesh, o, d := s.Build()
	if mesh.NumFaces() != 72962 || len(o) != 300 || len(d) != 300 || !mesh.EdgesDisabled {
		t.Errorf("Light build: %d faces, %d/%d ray values", mesh.NumFaces(), len(o), len(d))
	}
	po, pd := PlaneRays(100, PlaneRaySeed)
	if !sameBits(o, po) || !sameBits(d, pd) {
		t.Error("Light rays are not PlaneRays(PlaneRaySeed)")
	}
	small := Compute.Scaled(64)
	small.Size = 1000
	mesh, o, d = small.Build()
	cm := CloudMesh(1000, 0.005, MeshSeed)
	vo, vd := VolumeRays(64, VolumeRaySeed)
	if !sameBits(mesh.Vertices, cm.Vertices) || !sameBits(o, vo) || !sameBits(d, vd) || !mesh.EdgesDisabled {
		t.Error("Compute build")
	}
}
