package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// crossingsInputs are random segments (degenerate and non-finite rows
// among them) over the visibility meshes, with every eleventh row
// inactive.
func crossingsInputs(t *testing.T, r *rand.Rand, meshes []rayd.Mesh, n int) (start, end []float32, active []bool) {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	start, end = testscene.RandomSegments(r, tb, n)
	active = make([]bool, n)
	for i := range active {
		active[i] = i%11 != 0
	}
	return start, end, active
}

// checkCrossings requires every scene to give want's crossings record bit
// for bit for several k, and want's record to agree with Visible.
func checkCrossings(t *testing.T, want *rayd.Scene, scenes map[string]*rayd.Scene, start, end []float32, active []bool) {
	t.Helper()
	ctx := context.Background()
	vis, err := want.Visible(ctx, start, end, active)
	require.NoError(t, err)
	for _, k := range []int{1, 8, 9, rayd.MaxCrossingsK} {
		w, err := want.Crossings(ctx, start, end, k, active)
		require.NoError(t, err)
		over := 0
		for i := range w.Rows() {
			if active[i] {
				require.Equal(t, vis[i], w.Count[i] == 0, "row %d: visible %v, count %d", i, vis[i], w.Count[i])
			}
			if w.Overflow[i] {
				over++
			}
		}
		if k == 1 {
			require.Greater(t, over, w.Rows()/20, "rows overflowing k = 1")
		}
		for name, s := range scenes {
			g, err := s.Crossings(ctx, start, end, k, active)
			require.NoError(t, err, name)
			i := testscene.CrossingsDiff(g, w)
			require.Equal(t, -1, i, "%s k=%d: first differing row", name, k)
		}
	}
}

func TestCrossingsCPUAndReplicated(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	meshes := visibilityMeshes(r)
	want := cpuScene(t, meshes...)
	sim, err := rayd.NewScene(context.Background(), meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})), rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	start, end, active := crossingsInputs(t, r, meshes, 3000)
	checkCrossings(t, want, map[string]*rayd.Scene{"replicated": sim}, start, end, active)
	rec := sim.LastDispatch()
	require.NotNil(t, rec)
	require.Equal(t, "crossings:64", rec.Operation)
	require.Len(t, rec.Shards, 2, "the rows were split")
	v := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.1
	}
	require.NoError(t, want.UpdateVertices(context.Background(), 0, v))
	require.NoError(t, sim.UpdateVertices(context.Background(), 0, v))
	checkCrossings(t, want, map[string]*rayd.Scene{"replicated": sim}, start, end, active)
}

func TestCrossingsErrors(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, unitTriangle())
	p := []float32{0.2, 0.2, 1}
	q := []float32{0.2, 0.2, -1}
	for _, k := range []int{0, -3, rayd.MaxCrossingsK + 1} {
		_, err := s.Crossings(ctx, p, q, k, nil)
		require.ErrorIs(t, err, rayd.ErrInvalidArgument, "k=%d", k)
	}
	_, err := s.Crossings(ctx, p, q[:2], 1, nil)
	require.ErrorIs(t, err, rayd.ErrLength)
	_, err = s.Crossings(ctx, p, q, 1, []bool{true, false})
	require.ErrorIs(t, err, rayd.ErrLength)
	c, err := s.Crossings(ctx, nil, nil, 3, nil)
	require.NoError(t, err)
	require.Zero(t, c.Rows())
	c, err = s.Crossings(ctx, p, q, 2, nil)
	require.NoError(t, err)
	require.Equal(t, []int32{1}, c.Count)
	require.Equal(t, []int32{0, -1}, c.Prim)
	require.Equal(t, []int32{0, -1}, c.Shape)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Crossings(cancelled, p, q, 1, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close())
	_, err = s.Crossings(ctx, p, q, 1, nil)
	require.ErrorIs(t, err, rayd.ErrClosed)
}
