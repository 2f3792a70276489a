package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/internal/workload"
)

// Every chord starts and ends on the box's surface, and the ray's origin
// lies on it between the two.
func TestChordsSpanTheBox(t *testing.T) {
	o, d := workload.VolumeRays(2000, workload.VolumeRaySeed)
	s, e := chords(o, d)
	onFace := func(p []float32) bool {
		m := 0.0
		for _, v := range p {
			m = math.Max(m, math.Abs(float64(v)))
		}
		return math.Abs(m-boxHalf) < 1e-5
	}
	for i := range len(o) / 3 {
		a, b, p := s[3*i:3*i+3], e[3*i:3*i+3], o[3*i:3*i+3]
		require.True(t, onFace(a) && onFace(b), "row %d: %v → %v", i, a, b)
		var ab, ap, pb float64
		for k := range 3 {
			ab += sq(float64(b[k] - a[k]))
			ap += sq(float64(p[k] - a[k]))
			pb += sq(float64(b[k] - p[k]))
		}
		require.InDelta(t, math.Sqrt(ab), math.Sqrt(ap)+math.Sqrt(pb), 1e-5, "row %d: the origin is on the chord", i)
	}
}

func sq(x float64) float64 { return x * x }

// The extra crossings row runs the fetch mode FetchAuto does not pick.
func TestFetchModesPairTheOtherMode(t *testing.T) {
	mode, other := fetchModes(true)
	require.Equal(t, accel.FetchDynamic, mode)
	require.Equal(t, accel.FetchBatch, other)
	mode, other = fetchModes(false)
	require.Equal(t, accel.FetchBatch, mode)
	require.Equal(t, accel.FetchDynamic, other)
}
