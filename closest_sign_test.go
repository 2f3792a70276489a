package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/ref"
)

// signBatch is n random points, some vertices of the meshes (on the
// surface), a NaN row and a random active mask.
func signBatch(r *rand.Rand, meshes []rayd.Mesh, n int) ([]float32, []bool) {
	p, active := closestBatch(r, n)
	for i := 8; i < n/10; i++ {
		m := meshes[r.IntN(len(meshes))]
		v := r.IntN(len(m.Vertices) / 3)
		copy(p[3*i:3*i+3], m.Vertices[3*v:3*v+3])
	}
	return p, active
}

// referenceSigns are the signs of the definitions: the parity of
// ref.CrossingCounts and the winding number of ref.WindingNumbers (≥ 1/2
// inside), 0 for inactive and non-finite rows.
func referenceSigns(t *testing.T, meshes []rayd.Mesh, points []float32, active []bool) (parity, winding []int8) {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	rs, err := ref.NewScene(tb, ref.BruteForce())
	require.NoError(t, err)
	c, err := rs.CrossingCounts(points, active)
	require.NoError(t, err)
	w, err := rs.WindingNumbers(points, active)
	require.NoError(t, err)
	parity, winding = make([]int8, len(c)), make([]int8, len(c))
	for i := range c {
		switch {
		case c[i] < 0:
		case c[i]%2 == 1:
			parity[i] = -1
		default:
			parity[i] = 1
		}
		switch {
		case w[i] != w[i]:
		case w[i] >= 0.5:
			winding[i] = -1
		default:
			winding[i] = 1
		}
	}
	return parity, winding
}

// On the CPU backend and on a replicated scene of simulated devices the
// signs are the reference definitions' (open grid and soup included,
// surface points included), before and after a vertex update; the parity
// sign is the parity of the scene's own Crossings over geom.ParityEnd
// segments.
func TestClosestPointSignsAreTheReferenceDefinitions(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(85, 86))
	meshes := closestMeshes(r)
	sim, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	scenes := map[string]*rayd.Scene{"cpu": cpuScene(t, meshes...), "replicated": sim}
	check := func(step string) {
		points, active := signBatch(r, meshes, 3000)
		parity, winding := referenceSigns(t, meshes, points, active)
		inside := 0
		for _, v := range winding {
			if v == -1 {
				inside++
			}
		}
		require.Positive(t, inside, step)
		tb, err := geom.BuildTables(meshes)
		require.NoError(t, err)
		ends := geom.ParityEnds(points, geom.ParityReach(tb.Vertices, tb.Faces))
		for name, s := range scenes {
			res, err := s.ClosestPoint(ctx, points, 0, rayd.ClosestOptions{Active: active, Sign: rayd.SignParity})
			require.NoError(t, err)
			assert.Equal(t, parity, res.Sign, "%s %s parity", step, name)
			c, err := s.Crossings(ctx, points, ends, 1, active)
			require.NoError(t, err)
			assert.Equal(t, geom.ParitySigns(points, active, c.Count), res.Sign, "%s %s: one Crossings call", step, name)
			res, err = s.ClosestPoint(ctx, points, 0, rayd.ClosestOptions{Active: active, Sign: rayd.SignWinding})
			require.NoError(t, err)
			assert.Equal(t, winding, res.Sign, "%s %s winding", step, name)
		}
	}
	check("built")
	moved := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] += 0.4 * float32(r.Float64())
	}
	for _, s := range scenes {
		require.NoError(t, s.UpdateVertices(ctx, 0, moved))
	}
	meshes[0].Vertices = moved
	check("moved")
}
