package accel

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	cudasrc "github.com/rayd-go/rayd/ptx/src"
)

// fakeReorderer is a Reorderer of n rays whose buffers hold no device
// memory (for the signature recorder and the argument checks).
func fakeReorderer(n int) *Reorderer {
	r := &Reorderer{n: n, box: buf[uint32](), keys: buf[uint32](), vals: buf[uint32](),
		sort: &RadixSortScratch{keys: buf[uint32](), vals: buf[uint32](), hist: buf[uint32](), sums: buf[uint32](), n: n},
		o:    buf[float32](), dir: buf[float32](), tmax: buf[float32](), tmin: buf[float32](),
		active: buf[uint8](), mask: buf[uint8]()}
	r.hits = fullHits()
	return r
}

// fullHits is a record with every column (no device memory).
func fullHits() Hits {
	return Hits{T: buf[float32](), P: buf[float32](), N: buf[float32](), GeoN: buf[float32](),
		UV: buf[float32](), Bary: buf[float32](), ShapeID: buf[int32](), PrimID: buf[int32](),
		LocalPrimID: buf[int32](), GlobalPrimID: buf[int32]()}
}

// capture is the signature recorder that also keeps the arguments of the
// last launch of each entry.
type capture struct {
	*recorder
	args map[string][]any
}

func (c *capture) launch(module, entry string, grid, block launch.Dim3, args ...any) error {
	c.args[entry] = args
	return c.recorder.launch(module, entry, grid, block, args...)
}

func newCapture(t *testing.T) *capture {
	return &capture{args: map[string][]any{}, recorder: &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleReorder: parseKernels(t, "reorder.cu"),
		ModuleBuild:   parseKernels(t, "bvh_build.cu"),
		ModuleTrace:   parseKernels(t, "trace.cu"),
	}}}
}

// TestReorderLaunchesMatchKernels drives the reordered intersect (every
// optional ray column set and unset, with and without a persistent
// counter, full and partial records, every flag combination) through the
// signature recorder; every kernel of reorder.cu is launched.
func TestReorderLaunchesMatchKernels(t *testing.T) {
	rec := newCapture(t)
	for _, width := range []int{2, 4, 8} {
		b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: width}}
		for _, counter := range []*launch.Buffer[uint32]{nil, buf[uint32]()} {
			for _, full := range []bool{false, true} {
				rays := Rays{O: buf[float32](), D: buf[float32](), N: 10, Counter: counter}
				out := Hits{T: buf[float32](), UV: buf[float32]()}
				if full {
					rays.TMax, rays.Active, rays.TMin, rays.Mask = buf[float32](), buf[uint8](), buf[float32](), buf[uint8]()
					out = fullHits()
				}
				for _, flags := range allFlags() {
					name := fmt.Sprintf("width %d counter %v full %v %s", width, counter != nil, full, flags)
					require.NoError(t, fakeReorderer(10).intersectOn(rec, b, rays, flags, out), name)
				}
			}
		}
	}
	for entry := range rec.kernels[ModuleReorder] {
		assert.Positive(t, rec.seen[ModuleReorder+"."+entry], "kernel %s.%s is never launched", ModuleReorder, entry)
	}
}

// isNull reports whether a launch argument is the null pointer.
func isNull(a any) bool { return a == launch.Null }

// TestReorderMovesOnlyTheColumnsPresent: the gather passes null for the
// ray columns the batch lacks; the scatter moves a column only when flags
// select it and the caller's record holds it, so the words a plain
// Intersect leaves alone stay untouched.
func TestReorderMovesOnlyTheColumnsPresent(t *testing.T) {
	rec := newCapture(t)
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 4}}
	rays := Rays{O: buf[float32](), D: buf[float32](), Active: buf[uint8](), N: 10}
	out := fullHits()
	out.Bary = nil
	require.NoError(t, fakeReorderer(10).intersectOn(rec, b, rays, geom.FlagGeometric|geom.FlagUV, out))
	// gather: perm, n, o, d, tmax, active, tmin, mask, then the sorted six.
	g := rec.args["rayd_reorder_gather"]
	require.Len(t, g, 14)
	for k, col := range []string{"tmax", "active", "tmin", "mask"} {
		assert.Equal(t, col != "active", isNull(g[4+k]), "source %s", col)
		assert.Equal(t, col != "active", isNull(g[10+k]), "sorted %s", col)
	}
	// scatter: perm, n, ten sorted columns, ten outputs.
	sc := rec.args["rayd_reorder_scatter_hits"]
	require.Len(t, sc, 22)
	//                  t      p      n     geo_n  uv     bary  shape  prim   local  global
	want := []bool{false, false, true, false, false, true, false, false, false, false}
	for c, null := range want {
		assert.Equal(t, null, isNull(sc[2+c]), "sorted column %s", hitFieldNames[c])
		assert.Equal(t, null, isNull(sc[12+c]), "output column %s", hitFieldNames[c])
	}
}

// TestReordererRefusesBadArguments: every refusal matches
// ErrReorderArgument, before anything is queued.
func TestReordererRefusesBadArguments(t *testing.T) {
	_, err := NewReorderer(nil, 0)
	assert.ErrorIs(t, err, ErrReorderArgument)
	_, err = NewReorderer(nil, 10)
	assert.ErrorIs(t, err, ErrReorderArgument)
	s := new(launch.Stream) // no device: the checks refuse before any launch
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 4}}
	rays := Rays{O: buf[float32](), D: buf[float32](), N: 10}
	out := Hits{T: buf[float32]()}
	closed := fakeReorderer(10)
	closed.closed = true
	var nilR *Reorderer
	none := Rays{O: rays.O, D: rays.D} // no rows: the batch itself passes
	for _, c := range []struct {
		name, want string
		err        error
	}{
		{"nil Reorderer", "nil Reorderer", nilR.Intersect(s, b, rays, geom.FlagsAll, out)},
		{"closed", "closed Reorderer", closed.Intersect(s, b, rays, geom.FlagsAll, out)},
		{"nil stream", "nil stream", fakeReorderer(10).Intersect(nil, b, rays, geom.FlagsAll, out)},
		{"nil BVH", "nil BVH", fakeReorderer(10).Intersect(s, nil, rays, geom.FlagsAll, out)},
		{"BVH elsewhere", "BVH of another device", fakeReorderer(10).Intersect(s, &BVH{dev: new(launch.Device)}, none, geom.FlagsAll, out)},
		{"over capacity", "10 rays, scratch for 9", fakeReorderer(9).Intersect(s, b, rays, geom.FlagsAll, out)},
		{"no origins", "Rays.O and Rays.D are required", fakeReorderer(10).Intersect(s, b, Rays{D: rays.D, N: 10}, geom.FlagsAll, out)},
		{"negative rows", "ray count -1", fakeReorderer(10).Intersect(s, b, Rays{O: rays.O, D: rays.D, N: -1}, geom.FlagsAll, out)},
		{"short rays", "Rays.O holds 0 elements", fakeReorderer(10).Intersect(s, b, rays, geom.FlagsAll, out)},
		{"no t", "Hits.T is required", fakeReorderer(10).Intersect(s, b, none, geom.FlagsAll, Hits{})},
		{"bad flags", "outside FlagsAll", fakeReorderer(10).Intersect(s, b, none, geom.Flags(8), out)},
		{"keys nil stream", "nil stream", fakeReorderer(10).Keys(nil, rays)},
		{"sort over cap", "11 rays, scratch for 10", fakeReorderer(10).Sort(s, 11)},
		{"gather closed", "closed Reorderer", closed.Gather(s, rays)},
		{"sorted nil BVH", "nil BVH", fakeReorderer(10).IntersectSorted(s, nil, rays, geom.FlagsAll, out)},
		{"scatter no t", "Hits.T is required", fakeReorderer(10).Scatter(s, 0, geom.FlagsAll, Hits{})},
	} {
		assert.ErrorIs(t, c.err, ErrReorderArgument, c.name)
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
	// An empty batch queues nothing and succeeds.
	empty := none
	r := fakeReorderer(10)
	for name, err := range map[string]error{
		"intersect": r.Intersect(s, b, empty, geom.FlagsAll, out), "keys": r.Keys(s, empty), "sort": r.Sort(s, 0),
		"gather": r.Gather(s, empty), "sorted": r.IntersectSorted(s, b, empty, geom.FlagsAll, out),
		"scatter": r.Scatter(s, 0, geom.FlagsAll, out),
	} {
		assert.NoError(t, err, name)
	}
	assert.NoError(t, nilR.Close())
	assert.Equal(t, 10, r.Cap())
	assert.False(t, errors.Is(ErrReorderArgument, ErrSortArgument), "the sentinels are distinct")
}

// TestReorderThreadsMirrorTheKernels: the block size of the launches is
// reorder.cu's REORDER_THREADS.
func TestReorderThreadsMirrorTheKernels(t *testing.T) {
	src, err := cudasrc.Read("reorder.cu")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(src), fmt.Sprintf("#define REORDER_THREADS %d\n", reorderThreads)))
	assert.True(t, strings.Contains(string(src), fmt.Sprintf("uint32[%d]", boxWords)), "the box record's length")
}
