package accel

import (
	"math"
	"testing"

	"github.com/rayd-go/rayd/launch"
)

// TestClosestLaunchesMatchKernel drives every closest-point launch (both
// node layouts, persistent or not, with and without a mask, and the brute
// force) through the signature recorder, and checks that every kernel of
// closest.cu is launched.
func TestClosestLaunchesMatchKernel(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleClosest: parseKernels(t, "closest.cu"),
	}}
	out := ClosestOut{Distance: buf[float32](), Point: buf[float32](), Bary: buf[float32](), ShapeID: buf[int32](),
		LocalFaceID: buf[int32](), GlobalFaceID: buf[int32]()}
	for _, width := range []int{2, 4} {
		b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: width}}
		for _, counter := range []*launch.Buffer[uint32]{nil, buf[uint32]()} {
			for _, active := range []*launch.Buffer[uint8]{nil, buf[uint8]()} {
				q := ClosestPoints{P: buf[float32](), Active: active, N: 10, Limit: math.Inf(1), Counter: counter}
				for _, brute := range []bool{false, true} {
					if err := b.launchClosest(rec, q, out, brute); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	for entry := range rec.kernels[ModuleClosest] {
		if rec.seen[ModuleClosest+"."+entry] == 0 {
			t.Errorf("kernel %s.%s is never launched by the Go side", ModuleClosest, entry)
		}
	}
}

// TestClosestRejectsBadBatches checks the launcher's own validation.
func TestClosestRejectsBadBatches(t *testing.T) {
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 2}}
	out := ClosestOut{Distance: buf[float32](), Point: buf[float32](), Bary: buf[float32](), ShapeID: buf[int32](),
		LocalFaceID: buf[int32](), GlobalFaceID: buf[int32]()}
	for name, q := range map[string]ClosestPoints{
		"negative rows": {P: buf[float32](), N: -1},
		"no points":     {N: 1},
		"NaN limit":     {P: buf[float32](), N: 1, Limit: math.NaN()},
		"short points":  {P: buf[float32](), N: 1},
	} {
		if err := b.closest(&recorder{t: t, seen: map[string]int{}}, q, out, false); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := b.closest(&recorder{t: t}, ClosestPoints{P: buf[float32](), N: 1}, ClosestOut{}, false); err == nil {
		t.Error("missing outputs: accepted")
	}
}
