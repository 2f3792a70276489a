package accel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// gpuRayKernel runs rb through ray kernel k into poisoned outputs.
func gpuRayKernel(t *testing.T, s *launch.Stream, b *EdgeBVH, k EdgeRayKernel, rb *rayBatch) *edge.RayResult {
	t.Helper()
	n := rb.dev.N
	f := func(c int) *launch.Buffer[float32] { return poisoned[float32](t, s, c, poisonF32) }
	i := func() *launch.Buffer[int32] { return poisoned[int32](t, s, n, poisonI32) }
	o := EdgeRayOut{f(n), f(n), f(3 * n), f(n), f(3 * n), i(), i(), i()}
	require.NoError(t, b.NearestRayWith(s, rb.dev, o, k))
	return &edge.RayResult{Distance: download(t, s, o.Distance, n), RayT: download(t, s, o.RayT, n),
		Point: download(t, s, o.Point, 3*n), EdgeT: download(t, s, o.EdgeT, n), EdgePoint: download(t, s, o.EdgePoint, 3*n),
		ShapeID: download(t, s, o.ShapeID, n), EdgeID: download(t, s, o.EdgeID, n), GlobalEdgeID: download(t, s, o.GlobalEdgeID, n)}
}

// TestGPUEdgeRayKernelsAgainstReference: on the adversarial scenes of the
// host checks (soup, flat grid, axis-aligned lattice, degenerate edges) at
// every scale (rows beyond the float32 tests' range take the deferred
// float64 walk), with and without an edge mask and an active mask, every
// ray kernel (pruned, rows, exact, phased) and the brute force write the CPU
// reference's records bit for bit; and the device's edge BVH is the host
// build the mirrors walk.
func TestGPUEdgeRayKernelsAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 8))
		for _, sc := range pruneScales {
			for name, es := range rayScenes(t, r, sc.c, sc.s) {
				b := buildEdgeBVH(t, s, es)
				dev, err := b.Tree().DownloadLayout(s)
				require.NoError(t, err)
				host, err := BuildEdgesHost(es.Tables.Vertices, EdgeTablesOf(es.Edges), EdgeOptions)
				require.NoError(t, err)
				require.NoError(t, dev.Equal(host), "%s/%s: device and host edge BVHs differ", sc.name, name)
				for _, drop := range []int{0, 3} {
					applyMask(t, r, s, es, b, drop)
					o, d, tmax := rayQueries(r, es, sc.c, sc.s, 2000)
					_, act := edgeQueryPoints(r, 2000, drop > 0)
					want, err := es.NearestRay(o, d, tmax, act)
					require.NoError(t, err)
					rb := newRayBatch(t, s, o, d, tmax, act)
					label := fmt.Sprintf("%s/%s drop=%d", sc.name, name, drop)
					for _, k := range EdgeRayKernels {
						compareRay(t, label+" "+k.String(), gpuRayKernel(t, s, b, k, rb), want)
					}
					compareRay(t, label+" brute", gpuRay(t, s, b, true, rb), want)
				}
			}
		}
	})
}
