package accel

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEdgeRayKernelChoice: EdgeRayAuto resolves to the speculative kernel
// for segments and, for half rays, by the BVH's edge count; an explicit
// kernel stays itself, and every kernel names its own entry.
func TestEdgeRayKernelChoice(t *testing.T) {
	small := &EdgeBVH{numEdges: EdgeRaySpecBelow - 1}
	large := &EdgeBVH{numEdges: EdgeRaySpecBelow}
	assert.Equal(t, EdgeRaySpec, small.RayKernel(EdgeRayAuto, false))
	assert.Equal(t, EdgeRaySpec, small.RayKernel(EdgeRayAuto, true))
	assert.Equal(t, EdgeRayOps, large.RayKernel(EdgeRayAuto, false))
	assert.Equal(t, EdgeRaySpec, large.RayKernel(EdgeRayAuto, true))
	for _, k := range []EdgeRayKernel{EdgeRayPruned, EdgeRayPrunedRows, EdgeRayExact, EdgeRayPhased, EdgeRayPhasedTop, EdgeRayOps, EdgeRaySpec} {
		for _, segments := range []bool{false, true} {
			assert.Equal(t, k, small.RayKernel(k, segments))
			assert.Equal(t, k, large.RayKernel(k, segments))
		}
	}
	names := map[string]bool{}
	entries := map[string]bool{}
	for _, k := range EdgeRayKernels {
		names[k.String()] = true
		if k != EdgeRayAuto {
			entries[k.entry()] = true
		}
	}
	assert.Len(t, names, len(EdgeRayKernels))
	assert.Len(t, entries, len(EdgeRayKernels)-1)
	assert.Equal(t, "phased", EdgeRayPhased.String())
	assert.Equal(t, "rayd_edge_nearest_ray_phased", EdgeRayPhased.entry())
	assert.Equal(t, "phased_top", EdgeRayPhasedTop.String())
	assert.Equal(t, "rayd_edge_nearest_ray_phased_top", EdgeRayPhasedTop.entry())
	assert.Equal(t, "ops", EdgeRayOps.String())
	assert.Equal(t, "rayd_edge_nearest_ray_ops", EdgeRayOps.entry())
	assert.Equal(t, "spec", EdgeRaySpec.String())
	assert.Equal(t, "rayd_edge_nearest_ray_spec", EdgeRaySpec.entry())
}

// TestEdgeRayUnknownKernel: a kernel outside EdgeRayKernels is refused
// before anything is queued.
func TestEdgeRayUnknownKernel(t *testing.T) {
	b := &EdgeBVH{numEdges: 10}
	err := b.NearestRayWith(nil, Rays{N: 1}, EdgeRayOut{}, EdgeRayKernel(99))
	assert.ErrorContains(t, err, "unknown edge ray kernel")
}

// TestPersistentBlocks: a large batch gets ceil(n / (rpl·EdgeThreads))
// blocks; a small one as many as fill the device while every lane has a row.
func TestPersistentBlocks(t *testing.T) {
	const sms, perSM = 132, 4
	cases := []struct {
		n, rpl int
		want   uint32
	}{
		{1 << 22, 32, 1 << 22 / (32 * EdgeThreads)},            // 1024 blocks: more than the 528 held at once
		{1 << 22, 8, 1 << 22 / (8 * EdgeThreads)},              // 4096
		{100_000, 32, 528},                                     // 25 blocks would leave most SMs idle
		{10_000, 32, (10_000 + EdgeThreads - 1) / EdgeThreads}, // 79: one row per lane
		{1, 32, 1},
		{0, 32, 1},
	}
	for _, c := range cases {
		g := persistentBlocks(c.n, c.rpl, sms, perSM)
		assert.Equal(t, c.want, g.X, "n=%d rpl=%d", c.n, c.rpl)
		assert.Equal(t, uint32(1), g.Y)
	}
	assert.Equal(t, uint32(25), persistentBlocks(100_000, 32, 0, perSM).X, "no device: the plain grid")
	assert.Equal(t, 4, edgeRayBlocksPerSM(EdgeRaySpec.entry()))
	assert.Equal(t, 8, edgeRayBlocksPerSM(EdgeRayOps.entry()))
}
