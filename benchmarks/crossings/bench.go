package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

type layoutResult struct {
	Width  int `json:"width"`
	Nodes  int `json:"nodes"`
	Height int `json:"height"`
	// Launch is the launch configuration timed and checked.
	Launch  string        `json:"launch"`
	Queries []queryResult `json:"queries"`
	// RatioChords and RatioGeometry are the crossings median on the chords
	// over the visibility median on the same chords and on the geometry
	// segments; RatioSameGeometry is crossings over visibility, both on the
	// geometry segments.
	RatioChords       float64 `json:"crossings_over_visible_chords"`
	RatioGeometry     float64 `json:"crossings_chords_over_visible_geometry_segments"`
	RatioSameGeometry float64 `json:"crossings_over_visible_geometry_segments"`
	// MeanCount and OverflowShare describe the crossings record on the
	// chords (every row).
	MeanCount     float64 `json:"mean_count"`
	OverflowShare float64 `json:"overflow_share"`
	// DynamicOverBatch is the crossings median on the chords with dynamic
	// row fetching over the one with 32-row batches (the headline query and
	// the extra one, whichever is which).
	DynamicOverBatch float64 `json:"crossings_dynamic_over_batch_chords"`
}

type queryResult struct {
	Name        string           `json:"name"`
	Segments    string           `json:"segments"`
	Fetch       string           `json:"fetch,omitempty"` // crossings: "dynamic" or "batch" (accel.Fetch)
	Ms          benchhead.Timing `json:"ms"`
	NsPerRow    float64          `json:"ns_per_row"`
	Checked     int              `json:"checked_rows"`
	Mismatches  int              `json:"mismatched_rows"`
	BitwiseSame bool             `json:"bitwise_equal_to_reference"`
	Compared    []string         `json:"compared_fields"`
}

const poison = 0x7fc00bad

// fixture holds the scene tables, the host segments and their device copies.
type fixture struct {
	d                  *launch.Device
	s                  *launch.Stream
	tables             *geom.Tables
	geo                accel.Geometry
	n                  int
	cs, ce, gs, ge     []float32 // chords and geometry segments (start, end)
	chords, geometry   accel.Segments
	cross              accel.Crossings
	visChords, visGeom *launch.Buffer[uint8]
	counter            *launch.Buffer[uint32]
	oracle             *ref.Scene
	bufs               []interface{ Close() error }
}

func upload[T launch.Elem](f *fixture, src []T) *launch.Buffer[T] {
	b, err := launch.Alloc[T](f.d, len(src))
	if err != nil {
		panic(fmt.Sprintf("alloc %d: %v", len(src), err)) // recovered in newFixture
	}
	f.bufs = append(f.bufs, b)
	if err := b.Upload(f.s, src); err != nil {
		panic(fmt.Sprintf("upload: %v", err))
	}
	return b
}

func alloc[T launch.Elem](f *fixture, n int) *launch.Buffer[T] {
	b, err := launch.Alloc[T](f.d, n)
	if err != nil {
		panic(fmt.Sprintf("alloc %d: %v", n, err))
	}
	f.bufs = append(f.bufs, b)
	return b
}

// newFixture builds the scene's tables and uploads them, the segments and
// the outputs (a crossings record of k slots per row).
func newFixture(d *launch.Device, cfg workload.Config, k int) (f *fixture, err error) {
	defer func() {
		if r := recover(); r != nil {
			f.close()
			f, err = nil, fmt.Errorf("%v", r)
		}
	}()
	mesh, o, dir := cfg.Build()
	t, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		return nil, err
	}
	s, err := d.NewStream()
	if err != nil {
		return nil, err
	}
	f = &fixture{d: d, s: s, tables: t, n: len(o) / 3}
	f.cs, f.ce = chords(o, dir)
	f.gs, f.ge = o, make([]float32, len(o))
	for i := range f.ge {
		f.ge[i] = o[i] + dir[i]
	}
	f.geo = accel.Geometry{Vertices: upload(f, t.Vertices), Faces: upload(f, t.Faces), FaceShape: upload(f, t.FaceShape),
		FaceLocal: upload(f, t.FaceLocal)}
	f.counter = alloc[uint32](f, 1)
	f.chords = accel.Segments{Start: upload(f, f.cs), End: upload(f, f.ce), N: f.n, Counter: f.counter}
	f.geometry = accel.Segments{Start: upload(f, f.gs), End: upload(f, f.ge), N: f.n, Counter: f.counter}
	f.visChords, f.visGeom = alloc[uint8](f, f.n), alloc[uint8](f, f.n)
	f.cross = accel.Crossings{T: alloc[float32](f, f.n*k), Prim: alloc[int32](f, f.n*k), Shape: alloc[int32](f, f.n*k),
		Count: alloc[int32](f, f.n)}
	return f, f.s.Synchronize()
}

func (f *fixture) close() {
	if f == nil {
		return
	}
	for _, b := range f.bufs {
		_ = b.Close()
	}
	f.bufs = nil
	if f.s != nil {
		_ = f.s.Close()
	}
}

// bench builds the BVH of width w twice, with Options.Fetch FetchAuto (the
// headline queries) and with the fetch mode FetchAuto does not pick for
// crossings, times the four queries and crossings on the chords under the
// other mode in interleaved rounds, and checks each as timed.
func (f *fixture) bench(w, k, rounds, warmup, sample int) (*layoutResult, error) {
	b, err := accel.BuildGeometry(f.s, f.geo, accel.Options{Width: w}, false)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	mode, other := fetchModes(b.DynamicFetch(false))
	bo, err := accel.BuildGeometry(f.s, f.geo, accel.Options{Width: w, Fetch: other}, false)
	if err != nil {
		return nil, err
	}
	defer bo.Close()
	if bo.DynamicFetch(false) == b.DynamicFetch(false) {
		return nil, fmt.Errorf("crossings under Fetch %v run the same kernels as under FetchAuto", other)
	}
	cname := fmt.Sprintf("crossings (k=%d)", k)
	names := []string{cname, "visible", "visible", cname, fmt.Sprintf("crossings (k=%d, Fetch %v)", k, other)}
	const chordsName, geomName = "chords across the box", "o -> o + d (benchmarks/geometry)"
	segs := []string{chordsName, chordsName, geomName, geomName, chordsName}
	fetch := []string{mode.String(), "", "", mode.String(), other.String()}
	runs := []func() error{
		func() error { return b.Crossings(f.s, f.chords, k, f.cross) },
		func() error { return b.Visible(f.s, f.chords, f.visChords) },
		func() error { return b.Visible(f.s, f.geometry, f.visGeom) },
		func() error { return b.Crossings(f.s, f.geometry, k, f.cross) },
		func() error { return bo.Crossings(f.s, f.chords, k, f.cross) },
	}
	times, err := f.time(runs, rounds, warmup)
	if err != nil {
		return nil, err
	}
	lr := &layoutResult{Width: w, Nodes: b.NumNodes(), Height: b.Height(),
		Launch: fmt.Sprintf("persistent launch (Segments.Counter set), %d-wide nodes", w)}
	if f.oracle == nil {
		if f.oracle, err = ref.NewScene(f.tables); err != nil {
			return nil, err
		}
	}
	rows := sampleRows(f.n, sample)
	for i, name := range names {
		q := queryResult{Name: name, Segments: segs[i], Fetch: fetch[i], Ms: benchhead.Summarize(times[i])}
		q.NsPerRow = q.Ms.Median * 1e6 / float64(f.n)
		switch i {
		case 0:
			err = f.checkCrossings(runs[i], k, f.cs, f.ce, rows, &q, lr)
		case 3:
			err = f.checkCrossings(runs[i], k, f.gs, f.ge, rows, &q, nil)
		case 4:
			err = f.checkCrossings(runs[i], k, f.cs, f.ce, rows, &q, nil)
		default:
			out, s, e := f.visChords, f.cs, f.ce
			if i == 2 {
				out, s, e = f.visGeom, f.gs, f.ge
			}
			err = f.checkVisible(runs[i], out, s, e, rows, &q)
		}
		if err != nil {
			return nil, fmt.Errorf("check %s on %s: %w", name, segs[i], err)
		}
		lr.Queries = append(lr.Queries, q)
	}
	lr.RatioChords = lr.Queries[0].Ms.Median / lr.Queries[1].Ms.Median
	lr.RatioGeometry = lr.Queries[0].Ms.Median / lr.Queries[2].Ms.Median
	lr.RatioSameGeometry = lr.Queries[3].Ms.Median / lr.Queries[2].Ms.Median
	lr.DynamicOverBatch = lr.Queries[0].Ms.Median / lr.Queries[4].Ms.Median
	if mode == accel.FetchBatch {
		lr.DynamicOverBatch = 1 / lr.DynamicOverBatch
	}
	return lr, nil
}

// fetchModes returns the fetch mode of FetchAuto's crossings launches
// (dynamic says whether they fetch dynamically) and the other one.
func fetchModes(dynamic bool) (mode, other accel.Fetch) {
	if dynamic {
		return accel.FetchDynamic, accel.FetchBatch
	}
	return accel.FetchBatch, accel.FetchDynamic
}

// time runs every variant once per warm-up round, then times each once per
// round, in order, with CUDA events on the launch stream.
func (f *fixture) time(runs []func() error, rounds, warmup int) ([][]float64, error) {
	start, err := f.d.NewEvent(true)
	if err != nil {
		return nil, err
	}
	defer start.Close()
	end, err := f.d.NewEvent(true)
	if err != nil {
		return nil, err
	}
	defer end.Close()
	out := make([][]float64, len(runs))
	for r := 0; r < warmup+rounds; r++ {
		for i, run := range runs {
			if err := start.Record(f.s); err != nil {
				return nil, err
			}
			if err := run(); err != nil {
				return nil, err
			}
			if err := end.Record(f.s); err != nil {
				return nil, err
			}
			if err := end.Synchronize(); err != nil {
				return nil, err
			}
			ms, err := launch.Elapsed(start, end)
			if err != nil {
				return nil, err
			}
			if r >= warmup {
				out[i] = append(out[i], float64(ms))
			}
		}
	}
	return out, nil
}

// checkCrossings reruns the timed crossings launch on poisoned outputs,
// requires every slot and count written, and compares the sampled rows with
// ref.Crossings bit for bit (t, prim, shape, count, overflow). With lr set
// it records the record's mean count and overflow share there.
func (f *fixture) checkCrossings(run func() error, k int, start, end []float32, rows []int, q *queryResult, lr *layoutResult) error {
	c := f.cross
	for _, e := range []error{c.T.Memset32(f.s, poison), c.Prim.Memset32(f.s, poison), c.Shape.Memset32(f.s, poison),
		c.Count.Memset32(f.s, poison)} {
		if e != nil {
			return e
		}
	}
	if err := run(); err != nil {
		return err
	}
	n := f.n
	got := &geom.Crossings{K: k, T: make([]float32, n*k), Prim: make([]int32, n*k), Shape: make([]int32, n*k),
		Count: make([]int32, n), Overflow: make([]bool, n)}
	for _, e := range []error{c.T.Download(f.s, got.T), c.Prim.Download(f.s, got.Prim), c.Shape.Download(f.s, got.Shape),
		c.Count.Download(f.s, got.Count)} {
		if e != nil {
			return e
		}
	}
	got.SetOverflow()
	total, over := 0, 0
	for i := range n {
		if uint32(got.Count[i]) == poison || got.Count[i] < 0 {
			return fmt.Errorf("count of row %d was never written", i)
		}
		for j := i * k; j < i*k+k; j++ {
			if math.Float32bits(got.T[j]) == poison || uint32(got.Prim[j]) == poison || uint32(got.Shape[j]) == poison {
				return fmt.Errorf("slot %d of row %d was never written", j-i*k, i)
			}
		}
		total += int(got.Count[i])
		if got.Overflow[i] {
			over++
		}
	}
	if lr != nil {
		lr.MeanCount, lr.OverflowShare = float64(total)/float64(n), float64(over)/float64(n)
	}
	s, e := pick(start, rows), pick(end, rows)
	want, err := f.oracle.Crossings(s, e, nil, k)
	if err != nil {
		return err
	}
	q.Checked, q.Compared = len(rows), []string{"t", "prim", "shape", "count", "overflow"}
	for j, i := range rows {
		same := got.Count[i] == want.Count[j] && got.Overflow[i] == want.Overflow[j]
		for x := 0; x < k && same; x++ {
			g, w := i*k+x, j*k+x
			same = math.Float32bits(got.T[g]) == math.Float32bits(want.T[w]) && got.Prim[g] == want.Prim[w] && got.Shape[g] == want.Shape[w]
		}
		if !same {
			q.Mismatches++
		}
	}
	q.BitwiseSame = q.Mismatches == 0
	return nil
}

// checkVisible reruns a timed visibility launch on a poisoned output and
// compares the sampled rows with ref.Visible.
func (f *fixture) checkVisible(run func() error, out *launch.Buffer[uint8], start, end []float32, rows []int, q *queryResult) error {
	if err := out.Memset8(f.s, 0xee); err != nil {
		return err
	}
	if err := run(); err != nil {
		return err
	}
	got := make([]uint8, f.n)
	if err := out.Download(f.s, got); err != nil {
		return err
	}
	for i, v := range got {
		if v == 0xee {
			return fmt.Errorf("row %d of visible was never written", i)
		}
	}
	want, err := f.oracle.Visible(pick(start, rows), pick(end, rows), nil)
	if err != nil {
		return err
	}
	q.Checked, q.Compared = len(rows), []string{"visible"}
	for j, i := range rows {
		if (got[i] != 0) != want[j] {
			q.Mismatches++
		}
	}
	q.BitwiseSame = q.Mismatches == 0
	return nil
}

// pick gathers rows of a 3-per-row slice.
func pick(v []float32, rows []int) []float32 {
	out := make([]float32, 0, 3*len(rows))
	for _, i := range rows {
		out = append(out, v[3*i:3*i+3]...)
	}
	return out
}

// sampleRows picks k distinct rows of n, sorted.
func sampleRows(n, k int) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	perm := r.Perm(n)[:k]
	sort.Ints(perm)
	return perm
}
