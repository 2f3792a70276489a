package accel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rayd-go/rayd/launch"
	cudasrc "github.com/rayd-go/rayd/ptx/src"
)

// TestWindingLaunchMatchesKernel drives the winding launch (with and
// without a mask) through the signature recorder and checks that the
// kernel of winding.cu is launched; the launcher refuses bad batches.
func TestWindingLaunchMatchesKernel(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleWinding: parseKernels(t, "winding.cu"),
	}}
	b := &BVH{numTris: 3, geo: Geometry{Vertices: buf[float32](), Faces: buf[int32]()}}
	out := WindingOut{Sum: buf[float64](), Bound: buf[float64]()}
	for _, active := range []*launch.Buffer[uint8]{nil, buf[uint8]()} {
		if err := b.launchWinding(rec, WindingPoints{P: buf[float32](), Active: active, N: 10}, out); err != nil {
			t.Fatal(err)
		}
	}
	for entry := range rec.kernels[ModuleWinding] {
		if rec.seen[ModuleWinding+"."+entry] == 0 {
			t.Errorf("kernel %s.%s is never launched by the Go side", ModuleWinding, entry)
		}
	}
	for name, q := range map[string]WindingPoints{
		"negative rows": {P: buf[float32](), N: -1},
		"no points":     {N: 1},
		"short points":  {P: buf[float32](), N: 1},
	} {
		if err := b.windingSums(&recorder{t: t, seen: map[string]int{}}, q, out); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := b.windingSums(&recorder{t: t}, WindingPoints{P: buf[float32](), N: 1}, WindingOut{}); err == nil {
		t.Error("missing outputs: accepted")
	}
	if err := (&BVH{numTris: 3}).launchWinding(&recorder{t: t}, WindingPoints{P: buf[float32](), N: 1}, out); err == nil {
		t.Error("no geometry: accepted")
	}
}

// TestWindingThreadsMirrorTheKernel: the block size of the launch is the
// kernel's WIND_THREADS (one face per thread in each shared-memory tile).
func TestWindingThreadsMirrorTheKernel(t *testing.T) {
	src, err := cudasrc.Read("winding.cu")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("#define WIND_THREADS %d\n", windingThreads); !strings.Contains(string(src), want) {
		t.Fatalf("winding.cu does not declare %q", want)
	}
}
