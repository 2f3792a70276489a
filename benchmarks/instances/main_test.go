package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
)

// The benchmark's instance set is deterministic, valid, a quarter of the
// cube wide per instance, and the incoherent rays hit it often (on the CPU
// reference, a small batch).
func TestPlacementIsDenseAndDeterministic(t *testing.T) {
	a, b := placement(1024, 7), placement(1024, 7)
	require.Equal(t, a, b)
	require.NotEqual(t, a, placement(1024, 8))
	light, _, _ := workload.Light.Build()
	lt, err := geom.BuildTables([]geom.Mesh{light})
	require.NoError(t, err)
	x, err := geom.BuildInstances(lt, a)
	require.NoError(t, err)
	for _, r := range x.Records {
		for j := range 3 {
			c := float64(r.Transform[j])*float64(r.Transform[j]) + float64(r.Transform[4+j])*float64(r.Transform[4+j]) +
				float64(r.Transform[8+j])*float64(r.Transform[8+j])
			require.InDelta(t, 1.0/64, c, 1e-6, "columns of length 1/8")
		}
	}
	s, err := ref.NewInstancedScene(context.Background(), lt, x)
	require.NoError(t, err)
	o, d := workload.VolumeRays(2000, workload.VolumeRaySeed)
	h, err := s.Intersect(context.Background(), o, d, nil, nil, geom.FlagGeometric)
	require.NoError(t, err)
	hits := 0
	for i := range h.Len() {
		if h.Valid(i) {
			hits++
		}
	}
	require.Greater(t, hits, 1000, "most incoherent rays hit the instances")
}

// The update breakdown drops the warm-up calls, takes each part's median
// and the medians of the per-call host and upload sums.
func TestUpdatePartsAreMediansAfterWarmup(t *testing.T) {
	var u updateSamples
	ms := time.Millisecond
	u.add(100*ms, accel.UpdateTimes{Wait: 100 * ms, Host: 100 * ms, Queue: 100 * ms}, 100*ms) // warm-up
	for k := range 3 {
		d := time.Duration(k+1) * ms
		u.add(d, accel.UpdateTimes{Wait: 0, Host: 2 * d, Queue: d / 2, DeviceBuild: true}, 3*d)
	}
	p := u.parts(1)
	require.Equal(t, updateParts{Host: 6, SetTransforms: 2, StagingWait: 0, HostWork: 4, UploadSync: 7, Queue: 1, Sync: 6,
		DeviceBuild: true, Samples: 3}, p)
	require.Equal(t, updateParts{}, (&updateSamples{}).parts(2), "no samples past the warm-up")
	u.add(ms, accel.UpdateTimes{Host: ms}, ms)
	require.False(t, u.parts(1).DeviceBuild, "a counted update built on the host")
}
