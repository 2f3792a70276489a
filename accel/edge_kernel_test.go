package accel

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEdgeRayKernelChoice: EdgeRayAuto resolves by the BVH's edge count,
// an explicit kernel stays itself, and every kernel names its own entry.
func TestEdgeRayKernelChoice(t *testing.T) {
	small := &EdgeBVH{numEdges: EdgeRaySpecBelow - 1}
	large := &EdgeBVH{numEdges: EdgeRaySpecBelow}
	assert.Equal(t, EdgeRaySpec, small.RayKernel(EdgeRayAuto))
	assert.Equal(t, EdgeRayOps, large.RayKernel(EdgeRayAuto))
	for _, k := range []EdgeRayKernel{EdgeRayPruned, EdgeRayPrunedRows, EdgeRayExact, EdgeRayPhased, EdgeRayPhasedTop, EdgeRayOps, EdgeRaySpec} {
		assert.Equal(t, k, small.RayKernel(k))
		assert.Equal(t, k, large.RayKernel(k))
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
