package accel

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	cudasrc "github.com/rayd-go/rayd/ptx/src"
)

// cParam is a kernel parameter as declared in ptx/src/<module>.cu.
type cParam struct {
	name, kind string // kind: "ptr", "s32", "u32", "s64", "u64", "f32", "f64"
}

var (
	kernelDeclRE = regexp.MustCompile(`__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)`)
	commentRE    = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
)

// parseKernels reads the extern "C" kernels of a CUDA source (by name, from
// the sources embedded in package ptx/src, so the test binary runs from any
// directory) with the parameter kinds the launch layer packs.
func parseKernels(t *testing.T, name string) map[string][]cParam {
	t.Helper()
	src, err := cudasrc.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]cParam{}
	for _, m := range kernelDeclRE.FindAllStringSubmatch(commentRE.ReplaceAllString(string(src), ""), -1) {
		var ps []cParam
		for _, raw := range strings.Split(m[2], ",") {
			raw = strings.Join(strings.Fields(raw), " ")
			if raw == "" {
				continue
			}
			fields := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '*' })
			p := cParam{name: fields[len(fields)-1]}
			typ := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(raw, "const", ""), "__restrict__", ""))
			typ = strings.Join(strings.Fields(strings.TrimSuffix(typ, p.name)), " ")
			switch {
			case strings.Contains(raw, "*"):
				p.kind = "ptr"
			case typ == "int":
				p.kind = "s32"
			case typ == "unsigned int":
				p.kind = "u32"
			case typ == "long long":
				p.kind = "s64"
			case typ == "unsigned long long":
				p.kind = "u64"
			case typ == "float":
				p.kind = "f32"
			case typ == "double":
				p.kind = "f64"
			default:
				t.Fatalf("ptx/src/%s: kernel %s parameter %q has a type the launch layer does not take", name, m[1], raw)
			}
			ps = append(ps, p)
		}
		out[m[1]] = ps
	}
	return out
}

// recorder is a runner that checks every launch against the CUDA signatures
// the way launch.Kernel.Launch checks it against the PTX layout.
type recorder struct {
	t       *testing.T
	kernels map[string]map[string][]cParam // module → entry → params
	seen    map[string]int
}

func (r *recorder) launch(module, entry string, grid, block launch.Dim3, args ...any) error {
	r.t.Helper()
	ps, ok := r.kernels[module][entry]
	if !ok {
		return fmt.Errorf("no kernel %s.%s in the sources", module, entry)
	}
	if len(args) != len(ps) {
		return fmt.Errorf("%s: %d arguments, kernel has %d", entry, len(args), len(ps))
	}
	if grid.X == 0 || block.X == 0 || block.X%32 != 0 {
		return fmt.Errorf("%s: launch shape %v × %v", entry, grid, block)
	}
	for i, a := range args {
		p := ps[i]
		got := "?"
		switch v := a.(type) {
		case int32:
			got = "s32"
		case uint32:
			got = "u32"
		case float32:
			got = "f32"
		case uint64:
			got = "u64"
		default:
			if a == launch.Null {
				got = "ptr"
				break
			}
			rv := reflect.ValueOf(v)
			if rv.Kind() == reflect.Pointer && strings.Contains(rv.Type().String(), "launch.Buffer") {
				if rv.IsNil() {
					return fmt.Errorf("%s: argument %d (%s) is a nil buffer", entry, i, p.name)
				}
				got = "ptr"
			}
		}
		want := p.kind
		if got == "s32" && want == "u32" || got == "u32" && want == "s32" {
			got = want // 32-bit integers pack alike
		}
		if got != want {
			return fmt.Errorf("%s: argument %d (%s) is %T, kernel wants %s", entry, i, p.name, a, want)
		}
	}
	r.seen[module+"."+entry]++
	return nil
}

func (r *recorder) memset32(b *launch.Buffer[uint32], _ uint32) error {
	if b == nil {
		return fmt.Errorf("memset of a nil buffer")
	}
	return nil
}

func (r *recorder) zero(b zeroer) error {
	if b == nil {
		return fmt.Errorf("zeroing a nil buffer")
	}
	return nil
}

func buf[T launch.Elem]() *launch.Buffer[T] { return new(launch.Buffer[T]) }

// TestLaunchArgumentsMatchKernels drives every launch of a build, a refit and
// the queries through the recorder, so an argument list that disagrees with
// its kernel fails here rather than on a GPU.
func TestLaunchArgumentsMatchKernels(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleBuild:      parseKernels(t, "bvh_build.cu"),
		ModuleTrace:      parseKernels(t, "trace.cu"),
		ModuleEdge:       parseKernels(t, "edge.cu"),
		ModuleEdgeVJP:    parseKernels(t, "edge_vjp.cu"),
		ModuleVisibility: parseKernels(t, "visibility.cu"),
		ModuleCrossings:  parseKernels(t, "crossings.cu"),
	}}
	for _, tc := range []struct{ n, width int }{{1, 2}, {2, 2}, {5000, 2}, {1, 4}, {5000, 4}, {1, 8}, {5000, 8}} {
		n := tc.n
		b := &BVH{numTris: n, nodes: buf[uint32](), tris: buf[uint32](),
			geo: Geometry{Vertices: buf[float32](), Faces: buf[int32](), FaceShape: buf[int32]()}}
		opt, _ := Options{Width: tc.width}.withDefaults()
		b.opt = opt
		v := &b.kept
		for _, p := range []**launch.Buffer[uint32]{&v.status, &v.faceBoxes, &v.keys, &v.vals, &v.keys2, &v.vals2,
			&v.hist, &v.histSums, &v.child, &v.parent, &v.first, &v.count, &v.counter, &v.nodeBox, &v.cost, &v.info,
			&v.flags, &v.idx, &v.idxSums, &v.wideSlots, &v.wideCounts, &v.wideRoot, &v.wideBase,
			&v.wideOrder} {
			*p = buf[uint32]()
		}
		if err := b.runBuild(rec, 1, 1, 1); err != nil {
			t.Fatalf("build n=%d: %v", n, err)
		}
		if err := b.runRefit(rec); tc.width != 8 && err != nil {
			t.Fatalf("refit n=%d: %v", n, err)
		} else if tc.width == 8 && !errors.Is(err, ErrNotRefittable) {
			t.Fatalf("refit of a Width 8 BVH: %v, want ErrNotRefittable", err)
		}
	}
	// Queries (the launch paths behind the length checks), with and without
	// a persistent counter, every optional buffer set and unset.
	for _, width := range []int{2, 4, 8} {
		for _, f := range []Fetch{FetchAuto, FetchDynamic} {
			queries(t, rec, width, f)
		}
	}
	edgeLaunches(t, rec)
	for module, entries := range rec.kernels {
		for entry := range entries {
			if rec.seen[module+"."+entry] == 0 {
				t.Errorf("kernel %s.%s is never launched by the Go side", module, entry)
			}
		}
	}
}

func queries(t *testing.T, rec *recorder, width int, f Fetch) {
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: width, Fetch: f}}
	for _, counter := range []*launch.Buffer[uint32]{nil, buf[uint32]()} {
		for _, full := range []bool{false, true} {
			r := Rays{O: buf[float32](), D: buf[float32](), N: 10, Counter: counter}
			hits := Hits{T: buf[float32]()}
			refl := Reflections{Valid: buf[uint8](), T: buf[float32](), Prim: buf[int32]()}
			seg := Segments{Start: buf[float32](), End: buf[float32](), N: 10, Counter: counter}
			if full {
				r.TMax, r.Active, seg.Active = buf[float32](), buf[uint8](), buf[uint8]()
				hits = Hits{T: buf[float32](), P: buf[float32](), N: buf[float32](), GeoN: buf[float32](),
					UV: buf[float32](), Bary: buf[float32](), ShapeID: buf[int32](), PrimID: buf[int32](),
					LocalPrimID: buf[int32](), GlobalPrimID: buf[int32]()}
				refl.Images = buf[float32]()
			}
			for _, err := range []error{
				b.launchIntersect(rec, r, geom.FlagsAll, hits, false),
				b.launchIntersect(rec, r, geom.FlagsAll, hits, true),
				b.launchIntersectCompact(rec, r, buf[uint32]()),
				b.launchExpandHits(rec, r, buf[uint32](), geom.FlagsAll, hits),
				b.launchReflections(rec, r, 4, refl),
				b.launchVisible(rec, seg, buf[uint8]()),
				b.launchBlockers(rec, seg, nil, 0, buf[int32]()),
				b.launchBlockers(rec, seg, buf[int32](), 3, buf[int32]()),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			cross := Crossings{T: buf[float32](), Prim: buf[int32](), Shape: buf[int32](), Count: buf[int32]()}
			for _, k := range []int{1, 8, 9, 16, 17, 32, 33, geom.MaxCrossingsK} {
				err := b.launchCrossings(rec, seg, k, cross)
				if b.opt.Width == 8 {
					if !errors.Is(err, ErrWidth) {
						t.Fatalf("crossings on a width-8 BVH: %v, want ErrWidth", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, err := range []error{
				b.crossings(rec, seg, 0, cross),
				b.crossings(rec, seg, geom.MaxCrossingsK+1, cross),
				b.crossings(rec, seg, 1, Crossings{T: cross.T}),
				b.crossings(rec, seg, 1, cross), // the buffers hold no elements
			} {
				if err == nil {
					t.Fatal("a bad crossings launch was accepted")
				}
			}
			masked(t, rec, b, r, hits, refl, seg)
		}
	}
}

// masked drives the masked variants: per-ray limits (each alone, both), a
// face mask table alone and with limits.
func masked(t *testing.T, rec *recorder, b *BVH, r Rays, hits Hits, refl Reflections, seg Segments) {
	t.Helper()
	limits := []Rays{r, r, r}
	limits[0].TMin = buf[float32]()
	limits[1].Mask = buf[uint8]()
	limits[2].TMin, limits[2].Mask = buf[float32](), buf[uint8]()
	for _, faces := range []*launch.Buffer[uint8]{nil, buf[uint8]()} {
		b.faceMask = faces
		for _, lr := range append(limits, r) {
			if !b.maskedFor(lr) {
				continue
			}
			for _, err := range []error{b.launchIntersect(rec, lr, geom.FlagsAll, hits, false),
				b.launchReflections(rec, lr, 2, refl)} {
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := b.launchIntersect(rec, lr, geom.FlagsAll, hits, true); err != errBruteMasked {
				t.Fatalf("the brute-force intersect must refuse masks, got %v", err)
			}
		}
		if err := b.launchVisible(rec, seg, buf[uint8]()); err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{b.launchBlockers(rec, seg, nil, 0, buf[int32]()),
			b.launchBlockers(rec, seg, buf[int32](), 3, buf[int32]())} {
			if err != nil {
				t.Fatal(err)
			}
		}
		cross := Crossings{T: buf[float32](), Prim: buf[int32](), Shape: buf[int32](), Count: buf[int32]()}
		for _, k := range []int{1, 9, 17, geom.MaxCrossingsK} {
			if err := b.launchCrossings(rec, seg, k, cross); err != nil && (b.opt.Width != 8 || !errors.Is(err, ErrWidth)) {
				t.Fatal(err)
			}
		}
	}
	b.faceMask = nil
}
