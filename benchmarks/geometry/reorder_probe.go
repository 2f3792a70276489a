package main

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// reorderResult is the ray reordering probe of a configuration: intersect
// on the rays in their order and sorted by keyNote's key, timed in the same
// interleaved rounds as the device work a reorder would pay at the least,
// and the whole device pipeline (pipelineResult) against the plain
// intersect. Verdict is the pipeline's: reordering pays only when the
// pipeline's median is below the plain intersect's.
type reorderResult struct {
	Keys string `json:"keys"`
	// Launch is the intersect timed on both orders: the headline's.
	Launch      string `json:"launch"`
	OriginalMs  timing `json:"original_ms"`
	ReorderedMs timing `json:"reordered_ms"`
	// GainMs is original − reordered, medians.
	GainMs float64 `json:"gain_ms"`
	Sort   string  `json:"sort"`
	SortMs timing  `json:"sort_ms"`
	// RayCopy stands in for the gather: it is not the gather.
	RayCopy   string  `json:"ray_copy"`
	RayCopyMs timing  `json:"ray_copy_ms"`
	NetMs     float64 `json:"net_ms"` // gain − sort − ray copy, medians
	// Verdict: "pays" when pipeline_ms's median is below original_ms's.
	Verdict string `json:"verdict"`
	// NotCounted is the work a reorder also needs that net_ms leaves out
	// (the pipeline counts it).
	NotCounted string `json:"not_counted"`
	Checked    int    `json:"checked_rows"`
	Mismatches int    `json:"mismatched_rows"`
	// SortMatchesHost: the timed device sort's last result is the host's
	// stable order of the same keys.
	SortMatchesHost bool `json:"device_sort_matches_host_order"`
	pipelineResult
}

// reorderProbe holds the probe's device buffers and its timed variants.
type reorderProbe struct {
	f                  *fixture
	bvh                *accel.BVH
	launch             string
	order              []int32
	keys               []uint32
	sortKeys, sortVals *launch.Buffer[uint32]
	original, sorted   *variant
	sort, copy         *variant
	dev                *pipelineVariants
}

// newReorderProbe sorts f's rays by rayKey on the host, uploads them in
// that order, and makes the probe's variants on bvh: intersect (76 B) on
// the original and on the sorted rays, the device radix sort of the keys
// with their row numbers (restored before each round, untimed), and a copy
// of the ray buffers.
func (f *fixture) newReorderProbe(bvh *accel.BVH, launchDesc string) (p *reorderProbe, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	n := f.rays.N
	p = &reorderProbe{f: f, bvh: bvh, launch: launchDesc, keys: rayKeys(f.o, f.dir)}
	p.order = stableOrder(p.keys)
	rows := make([]uint32, n)
	for i := range rows {
		rows[i] = uint32(i)
	}
	permuted := f.rays
	permuted.Counter = f.counter
	if permuted.O, err = upload(f, gather3(f.o, p.order)); err != nil {
		return nil, err
	}
	if permuted.D, err = upload(f, gather3(f.dir, p.order)); err != nil {
		return nil, err
	}
	keys0, err := upload(f, p.keys)
	if err != nil {
		return nil, err
	}
	rows0, err := upload(f, rows)
	if err != nil {
		return nil, err
	}
	p.sortKeys, p.sortVals = alloc[uint32](f, n), alloc[uint32](f, n)
	sc, err := accel.NewRadixSortScratch(f.d, n)
	if err != nil {
		return nil, err
	}
	f.bufs = append(f.bufs, sc)
	copyO, copyD := alloc[float32](f, 3*n), alloc[float32](f, 3*n)
	rays := f.rays
	rays.Counter = f.counter
	p.original = &variant{name: "reorder: intersect (original order)", run: func() error {
		return bvh.Intersect(f.s, rays, geom.FlagsAll, f.full)
	}}
	p.sorted = &variant{name: "reorder: intersect (reordered)", run: func() error {
		return bvh.Intersect(f.s, permuted, geom.FlagsAll, f.full)
	}}
	p.sort = &variant{name: "reorder: radix sort", prep: func() error {
		if err := p.sortKeys.CopyFrom(f.s, keys0); err != nil {
			return err
		}
		return p.sortVals.CopyFrom(f.s, rows0)
	}, run: func() error { return accel.RadixSort(f.s, p.sortKeys, p.sortVals, n, sc) }}
	p.copy = &variant{name: "reorder: ray copy", run: func() error {
		if err := copyO.CopyFrom(f.s, f.rays.O); err != nil {
			return err
		}
		return copyD.CopyFrom(f.s, f.rays.D)
	}}
	if p.dev, err = f.newPipelineVariants(bvh); err != nil {
		return nil, err
	}
	return p, f.s.Synchronize()
}

// prepare runs v.prep, if any, and waits for it.
func (v *variant) prepare(s *launch.Stream) error {
	if v.prep == nil {
		return nil
	}
	if err := v.prep(); err != nil {
		return err
	}
	return s.Synchronize()
}

// reorderOnQuad is the reordering probe on the built quad BVH (the
// headline intersect's layout and launch).
func (f *fixture) reorderOnQuad(backends []backendSpec, built []tracer) (*reorderProbe, error) {
	for i, be := range backends {
		if bvh, ok := built[i].(*accel.BVH); ok && be.name == "bvh" && be.width == 4 {
			desc := be.launch()
			if bvh.DynamicFetch(false) {
				desc += ", dynamic row fetching"
			} else {
				desc += ", 32-row batches per warp"
			}
			return f.newReorderProbe(bvh, desc+" (Fetch auto)")
		}
	}
	return nil, fmt.Errorf("no quad BVH built")
}

// variants are the probe's timed variants: the plain intersect and the
// device pipeline side by side, the host-sorted rows, then the pipeline's
// parts in its order.
func (p *reorderProbe) variants() []*variant {
	return append([]*variant{p.original, p.dev.pipeline, p.sorted, p.sort, p.copy}, p.dev.parts()...)
}

// result checks the sorted run and the device sort and states the probe.
func (p *reorderProbe) result(oracle *ref.Scene, sample int) (*reorderResult, error) {
	n := p.f.rays.N
	r := &reorderResult{
		Keys: keyNote, Launch: p.launch,
		OriginalMs: summarize(p.original.times), ReorderedMs: summarize(p.sorted.times),
		Sort:       fmt.Sprintf("accel.RadixSort (the BVH build's stable device radix sort, %d passes of %d bits) of %d uint32 keys with uint32 row numbers, keys and rows restored before each round (untimed)", accel.RadixPasses, accel.RadixBits, n),
		SortMs:     summarize(p.sort.times),
		RayCopy:    "device-to-device copy of the origin and direction buffers (24 B read and 24 B written per ray): a stand-in lower bound for the gather, which also reads the order and reads rows scattered; not the gather",
		RayCopyMs:  summarize(p.copy.times),
		NotCounted: "computing the keys on the device (here on the host), the gather's scattered reads and its read of the order, and returning the hits to the caller's order",
	}
	p.dev.summarize(r)
	finishReorder(r)
	got := make([]uint32, n)
	if err := p.sortVals.Download(p.f.s, got); err != nil {
		return nil, err
	}
	r.SortMatchesHost = sameOrder(got, p.order)
	if err := p.check(r, oracle, sample); err != nil {
		return nil, err
	}
	if err := p.checkPipeline(r, oracle, sample); err != nil {
		return nil, err
	}
	return r, nil
}

// finishReorder works out gain, nets and verdicts from the medians: the
// verdict is the end-to-end pipeline's (a pipeline not timed does not
// pay), the estimate's is net_ms's.
func finishReorder(r *reorderResult) {
	r.GainMs = r.OriginalMs.Median - r.ReorderedMs.Median
	r.NetMs = r.GainMs - r.SortMs.Median - r.RayCopyMs.Median
	r.EstimateVerdict = verdictOf(r.NetMs > 0)
	r.PipelineNetMs = r.OriginalMs.Median - r.PipelineMs.Median
	r.PartsMs = r.KeysMs.Median + r.DeviceSortMs.Median + r.GatherMs.Median + r.SortedIntersectMs.Median + r.ScatterMs.Median
	r.Verdict = verdictOf(r.PipelineMs.Median > 0 && r.PipelineNetMs > 0)
	r.VerdictBasis = "end to end: pays only when pipeline_ms's median is below original_ms's (pipeline_net_ms > 0); estimate_verdict is net_ms's"
}

// check reruns the sorted intersect exactly as timed on poisoned outputs,
// requires every row written, and compares sampled rows of the sorted
// output bit for bit with the CPU reference of the original rows they hold
// (row j of the output answers original ray order[j]).
func (p *reorderProbe) check(r *reorderResult, oracle *ref.Scene, sample int) error {
	n := p.f.rays.N
	got, err := p.poisonedRun(p.sorted.run, "reordered")
	if err != nil {
		return err
	}
	rows := sampleRows(n, sample)
	r.Checked, r.Mismatches, err = p.compareRows(oracle, got, rows, originalRows(p.order, rows))
	return err
}

// originalRows maps rows of the reordered output to the original rays they
// answer.
func originalRows(order []int32, rows []int) []int {
	out := make([]int, len(rows))
	for k, j := range rows {
		out[k] = int(order[j])
	}
	return out
}

// reorderVerdict states the probe as a measurement.
func reorderVerdict(name string, r *reorderResult) string {
	return fmt.Sprintf("%s ray reordering, measured end to end (not a target): intersect (76 B) on %s %.3f ms in ray order; accel.Reorderer.Intersect (device keys + radix sort + gather + intersect on the sorted rays + scatter back to ray order) %.3f ms: net %.3f ms, reordering %s; its parts alone: keys %.3f, sort %.3f, gather %.3f, intersect %.3f, scatter %.3f ms (sum %.3f ms); %d/%d sampled rows of its output bitwise equal to the CPU reference in ray order, device order equal to the host's: %v. Host-sorted rays %.3f ms (gain %.3f ms; less sort %.3f and ray copy %.3f ms: estimate net %.3f ms, %s); %d/%d sampled reordered rows bitwise equal to the CPU reference, device sort order equal to the host's: %v",
		name, r.Launch, r.OriginalMs.Median, r.PipelineMs.Median, r.PipelineNetMs, r.Verdict,
		r.KeysMs.Median, r.DeviceSortMs.Median, r.GatherMs.Median, r.SortedIntersectMs.Median, r.ScatterMs.Median, r.PartsMs,
		r.PipelineChecked-r.PipelineMismatches, r.PipelineChecked, r.PipelineOrderMatchesHost,
		r.ReorderedMs.Median, r.GainMs, r.SortMs.Median, r.RayCopyMs.Median, r.NetMs, r.EstimateVerdict,
		r.Checked-r.Mismatches, r.Checked, r.SortMatchesHost)
}

func printReorder(r *reorderResult) {
	fmt.Printf("reorder (w4 intersect (76 B)): original %.3f (%.3f) ms, device pipeline %.3f (%.3f) ms, net %.3f ms: %s; parts keys %.3f, sort %.3f, gather %.3f, intersect %.3f, scatter %.3f ms (sum %.3f); pipeline check %d/%d, order equal to host: %v\n",
		r.OriginalMs.Median, r.OriginalMs.Min, r.PipelineMs.Median, r.PipelineMs.Min, r.PipelineNetMs, r.Verdict,
		r.KeysMs.Median, r.DeviceSortMs.Median, r.GatherMs.Median, r.SortedIntersectMs.Median, r.ScatterMs.Median, r.PartsMs,
		r.PipelineChecked-r.PipelineMismatches, r.PipelineChecked, r.PipelineOrderMatchesHost)
	fmt.Printf("reorder (host-sorted rays): reordered %.3f (%.3f) ms, gain %.3f ms; sort %.3f (%.3f) ms, ray copy %.3f (%.3f) ms; estimate net %.3f ms: %s; check %d/%d, sort order equal to host: %v\n",
		r.ReorderedMs.Median, r.ReorderedMs.Min, r.GainMs, r.SortMs.Median, r.SortMs.Min,
		r.RayCopyMs.Median, r.RayCopyMs.Min, r.NetMs, r.EstimateVerdict, r.Checked-r.Mismatches, r.Checked, r.SortMatchesHost)
}

// poisonedRun poisons the full hit record, runs run (a timed launch, as
// timed) and downloads the record, failing when a row of t was never
// written (what names the run in the error).
func (p *reorderProbe) poisonedRun(run func() error, what string) (*geom.Hits, error) {
	f := p.f
	if err := poisonHits(f.s, f.full); err != nil {
		return nil, err
	}
	if err := run(); err != nil {
		return nil, err
	}
	got, err := cuda.DownloadHits(f.s, f.full, f.rays.N, geom.FlagsAll)
	if err != nil {
		return nil, err
	}
	for i, v := range got.T {
		if math.Float32bits(v) == poison {
			return nil, fmt.Errorf("%s row %d of t was never written", what, i)
		}
	}
	return got, nil
}
