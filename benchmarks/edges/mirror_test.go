package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/internal/workload"
)

// TestVariantsNameEveryKernelOfEveryRayBatch: each ray batch gets one
// variant per kernel, sharing its rows, the default kernel under the plain
// name; points once; an unknown kernel is refused.
func TestVariantsNameEveryKernelOfEveryRayBatch(t *testing.T) {
	bs := []*batch{{name: "point", base: "point", p: []float32{1, 2, 3}},
		{name: "segment@xyz", base: "segment", rows: "segment@xyz", p: []float32{0, 0, 0}, d: []float32{1, 0, 0}, tmax: []float32{1}}}
	vs, err := variants(bs, "auto,exact,rows,pruned")
	require.NoError(t, err)
	var names []string
	for _, v := range vs {
		names = append(names, v.name)
	}
	assert.Equal(t, []string{"point", "segment@xyz", "segment@xyz_exact", "segment@xyz_rows", "segment@xyz_pruned"}, names)
	assert.Equal(t, accel.EdgeRayAuto, vs[1].kernel)
	assert.Equal(t, accel.EdgeRayExact, vs[2].kernel)
	assert.Equal(t, "segment", vs[2].base)
	assert.Equal(t, "segment@xyz", vs[2].rows, "a variant keeps its rows' name (the brute-force peers' key)")
	assert.Equal(t, &bs[1].p[0], &vs[3].p[0], "variants share the batch's rows")
	_, err = variants(bs, "pruned,fast")
	assert.ErrorContains(t, err, "fast")
}

// TestMirrorModeCountsBothKernelsOnLight: the -mirror mode walks the light
// mesh's ray batches with both kernels' host mirrors, every row equal to
// the CPU reference, and the float32 tests evaluate fewer float64 closest
// pairs than the float64 bounds do.
func TestMirrorModeCountsBothKernelsOnLight(t *testing.T) {
	mc, err := mirrorConfigRun(workload.Light, options{mirror: 300, queries: 2000})
	require.NoError(t, err)
	require.Len(t, mc.Queries, 2)
	for _, q := range mc.Queries {
		require.Len(t, q.Kernels, 2)
		exact, pruned := q.Kernels[0], q.Kernels[1]
		assert.Equal(t, "exact", exact.Kernel)
		for _, k := range q.Kernels {
			assert.Zero(t, k.Mismatches, "%s %s", q.Name, k.Kernel)
			assert.Zero(t, k.Deferred, "%s %s", q.Name, k.Kernel)
			assert.Positive(t, k.PerRow["nodes"], "%s %s", q.Name, k.Kernel)
		}
		assert.Less(t, pruned.PerRow["exact"], exact.PerRow["exact"], q.Name)
	}
}
