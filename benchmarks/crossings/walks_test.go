package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
)

// smallCloud is the compute scene's cloud with fewer, larger triangles, so
// that a chord meets several.
func smallCloud() workload.Config {
	cfg := workload.Compute.Scaled(4096)
	cfg.Size, cfg.Extent = 20000, 0.05
	return cfg
}

// On both layouts the full walk finds every reference hit (walks fails
// otherwise) and does at least the any-hit walk's work, strictly more on
// the chords, where most rows are blocked before their end.
func TestWalksFullWalkCoversTheAnyHitWalk(t *testing.T) {
	var got []walkResult
	rep, err := walks(smallCloud(), 3000, func(r walkResult) { got = append(got, r) })
	require.NoError(t, err)
	require.Len(t, rep.Results, 4)
	assert.Equal(t, rep.Results, got)
	for _, r := range rep.Results {
		assert.Equal(t, 3000, r.Rows)
		assert.Greater(t, r.MeanHits, 0.0, "w%d %s", r.Width, r.Segments)
		assert.GreaterOrEqual(t, r.Full.Nodes, r.AnyHit.Nodes, "w%d %s", r.Width, r.Segments)
		assert.GreaterOrEqual(t, r.Full.Tris, r.AnyHit.Tris, "w%d %s", r.Width, r.Segments)
		if r.Segments == "chords across the box" {
			assert.Greater(t, r.Blocked, 0.5)
			assert.Greater(t, r.NodeRatio, 1.5, "w%d", r.Width)
		}
	}
}

// A reference count the full walk does not reproduce fails the batch.
func TestWalkBatchRefusesAMissedHit(t *testing.T) {
	mesh, o, d := smallCloud().Build()
	tb, err := geom.BuildTables([]geom.Mesh{mesh})
	require.NoError(t, err)
	cs, ce := chords(o[:3*500], d[:3*500])
	rs, err := ref.NewScene(tb)
	require.NoError(t, err)
	want, err := rs.Crossings(cs, ce, nil, 1)
	require.NoError(t, err)
	l, err := accel.BuildHost(tb, accel.Options{Width: 2})
	require.NoError(t, err)
	_, err = walkBatch(l, cs, ce, want.Count)
	require.NoError(t, err)
	want.Count[17]++
	_, err = walkBatch(l, cs, ce, want.Count)
	require.ErrorContains(t, err, "differs from the reference on 1 rows (row 17")
	want.Count[400]++ // another row block: the count is the batch's, the row the lowest
	_, err = walkBatch(l, cs, ce, want.Count)
	require.ErrorContains(t, err, "differs from the reference on 2 rows (row 17")
}
