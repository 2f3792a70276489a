package replica_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// TestGPUVisibilityVariantsMatchOneDevice: visible_pair (two ignored ids
// per row), visible_edge (default fractions) and visible_chain (five points
// per row, varying lengths, one ignored id per segment) on replicated
// layers in every mode equal the single-device accel blockers turned into
// records by the variant's Finish, which equal the CPU reference's
// (ref.Scene.SegmentBlockers): as built, after an edge mask change (no
// effect), with a vertex update staged (the old geometry), after the sync
// and with the mask cleared.
func TestGPUVisibilityVariantsMatchOneDevice(t *testing.T) {
	for _, devs := range deviceLists(t) {
		t.Run(fmt.Sprint(devs), func(t *testing.T) {
			f := newFixtureOn(t, devs)
			f.stages(t, f.opModes(t), func(stage string, w *world, modes []modeLayer) {
				for _, n := range opSizes(stage) {
					checkSegments(t, f, w, modes, fmt.Sprintf("%s N=%d", stage, n), n)
				}
			})
		})
	}
}

func checkSegments(t *testing.T, f *fixture, w *world, modes []modeLayer, what string, n int) {
	t.Helper()
	pair, edges, chain := segmentBatches(t, f, w, n)
	wantPair, err := geom.PairFinish(pair, 0, n, w.blockers(pair))
	require.NoError(t, err)
	wantEdge, err := geom.EdgeFinish(edges, 0, n, w.blockers(edges))
	require.NoError(t, err)
	wantChain, err := geom.ChainFinish(chain, 0, n, w.blockers(chain))
	require.NoError(t, err)
	for _, m := range modes {
		name := fmt.Sprintf("%s %s", m.name, what)
		gotPair := runOp(t, m, shard.PairTask(pair), (*geom.PairVisibility).Len)
		require.Equal(t, wantPair, gotPair, name+" visible_pair")
		gotEdge := runOp(t, m, shard.EdgeVisibilityTask(edges), func(v []bool) int { return len(v) })
		require.Equal(t, wantEdge, gotEdge, name+" visible_edge")
		gotChain := runOp(t, m, shard.ChainTask(chain), (*geom.ChainVisibility).Len)
		require.Equal(t, wantChain, gotChain, name+" visible_chain")
	}
}

// segmentBatches expands random pair, edge and chain inputs of n rows:
// points from the ray generator's origins and scene vertices, every 9th
// row inactive and a non-finite row every 101 rows.
func segmentBatches(t *testing.T, f *fixture, w *world, n int) (pair, edges, chain *geom.SegmentBatch) {
	t.Helper()
	pt := func() []float32 {
		p := make([]float32, 3*n)
		for i := range n {
			if f.rng.IntN(2) == 0 {
				v := f.rng.IntN(w.tables.NumVertices())
				copy(p[3*i:], w.tables.Vertices[3*v:3*v+3])
			} else {
				for c := range 3 {
					p[3*i+c] = float32(f.rng.Float64()*3 - 1.5)
				}
			}
		}
		return p
	}
	act := make([]bool, n)
	for i := range act {
		act[i] = i%9 != 4
	}
	start := pt()
	for i := 0; i < n; i += 101 {
		start[3*i] = float32(math.NaN())
	}
	ids := func(m int) []int32 {
		v := make([]int32, m)
		for i := range v {
			v[i] = int32(f.rng.IntN(w.tables.NumFaces()+1)) - 1
		}
		return v
	}
	var ignore []int32
	if n > 0 {
		ignore = ids(2 * n)
	}
	pair, err := geom.PairSegments(start, pt(), pt(), ignore, act)
	require.NoError(t, err)
	dir := f32s(f, 3*n)
	tmin, tmax := f32s(f, n), f32s(f, n)
	edges, err = geom.EdgeSegments(geom.EdgeSamples{Source: start, Position: pt(), Direction: dir, TMin: tmin, TMax: tmax, Active: act})
	require.NoError(t, err)
	const p = 5
	points := make([]float32, 0, 3*p*n)
	for range p {
		points = append(points, pt()...)
	}
	length := make([]int32, n)
	for i := range length {
		length[i] = int32(f.rng.IntN(p+2)) - 1
	}
	var chainIgnore []int32
	if n > 0 {
		chainIgnore = ids((p - 1) * n)
	}
	chain, err = geom.ChainSegments(points, p, length, chainIgnore, act)
	require.NoError(t, err)
	return pair, edges, chain
}

// blockers runs the single-device blocker query over every segment of b
// (output poisoned) and checks it against the CPU reference.
func (w *world) blockers(b *geom.SegmentBatch) []int32 {
	t, s := w.t, w.single.s
	m := b.Segments()
	out := poisoned[int32](t, s, m)
	seg := accel.Segments{Start: upload(t, s, b.Start, false), End: upload(t, s, b.End, false),
		Active: upload(t, s, bytesOf(b.Active), true), N: m}
	require.NoError(t, w.single.bvh.SegmentBlockers(s, seg, upload(t, s, b.Ignore, true), b.K, out))
	got := fetch(t, s, out, m)
	want, err := w.triScene().SegmentBlockers(b.Start, b.End, b.Active, b.Ignore, b.K)
	require.NoError(t, err)
	require.Equal(t, want, got, "single-device blockers against the CPU")
	return got
}
