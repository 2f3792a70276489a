package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/benchhead"
)

// writeRec writes an edge benchmark record with one point query per
// configuration; extra sets fields of the compute point entry.
func writeRec(t *testing.T, path, commit, uuid string, light, compute []float64, extra map[string]any) {
	t.Helper()
	q := func(rounds []float64, more map[string]any) map[string]any {
		m := map[string]any{"name": "point", "ms": map[string]any{"median": benchhead.Summarize(rounds).Median, "rounds": rounds},
			"rows_checked_vs_device_brute_force": 16384, "mismatched_rows_vs_device_brute_force": 0,
			"rows_checked_vs_cpu_reference": 65536, "mismatched_rows_vs_cpu_reference": 0}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	rec := map[string]any{"commit": commit, "date": "2026-12-02T12:00:00Z", "driver_version": 13000, "queries": 4194304,
		"device": map[string]any{"name": "H200", "uuid": uuid, "sms": 132},
		"configs": []any{
			map[string]any{"name": "light", "edges": 109825, "queries": []any{q(light, nil)}},
			map[string]any{"name": "compute", "edges": 6291456, "queries": []any{q(compute, extra)}},
		}}
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func TestCompareTwoSides(t *testing.T) {
	dir := t.TempDir()
	writeRec(t, filepath.Join(dir, "base-1.json"), "aaa", "GPU-1", []float64{2.2, 2.3, 2.1}, []float64{8.8, 8.7, 8.9}, nil)
	writeRec(t, filepath.Join(dir, "base-2.json"), "aaa", "GPU-1", []float64{2.25, 2.2, 2.3}, []float64{8.6, 8.7, 8.8}, nil)
	writeRec(t, filepath.Join(dir, "head-1.json"), "bbb", "GPU-1", []float64{2.0, 2.1, 2.2}, []float64{8.9, 9.0, 9.1}, nil)
	var out bytes.Buffer
	sum := filepath.Join(dir, "summary.json")
	require.NoError(t, run(&out, filepath.Join(dir, "base-*.json"), filepath.Join(dir, "head-*.json"), sum))
	assert.Contains(t, out.String(), "a: aaa (2 runs)   b: bbb (1 runs)")

	var s summary
	b, err := os.ReadFile(sum)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Equal(t, "bbb", s.Commit, "the summary is cited by side b's build")
	require.Len(t, s.Rows, 2)
	c := s.Rows[1]
	assert.Equal(t, "compute", c.Config)
	assert.Equal(t, 6291456, c.Edges)
	assert.Equal(t, []float64{8.8, 8.7}, c.A.RunMedians)
	assert.Equal(t, 8.8, c.A.MedianOfRuns) // upper median of two
	assert.Equal(t, 6, c.A.Rounds)
	assert.Equal(t, 8.8, c.A.PooledMedian) // 8.6 8.7 8.7 8.8 8.8 8.9
	assert.Equal(t, 8.6, c.A.Min)
	assert.Equal(t, 9.0, c.B.PooledMedian)
	assert.InDelta(t, 9.0/8.8, c.Ratio, 1e-12)
	assert.InDelta(t, 8.9/8.6, c.RatioMin, 1e-12)
	assert.Equal(t, 2*16384, c.A.BruteChecked)
	assert.Equal(t, 2*65536, c.A.RefChecked)
	assert.Equal(t, []string{filepath.Join(dir, "base-1.json"), filepath.Join(dir, "base-2.json")}, s.A.Files)
}

func TestCompareRefusesFailedOrMixedRuns(t *testing.T) {
	r := []float64{1, 2, 3}
	for _, tc := range []struct {
		name, commit2, uuid2, want string
		extra                      map[string]any
	}{
		{"mismatch", "aaa", "GPU-1", "3 rows differ from the device brute force",
			map[string]any{"mismatched_rows_vs_device_brute_force": 3}},
		{"ref mismatch", "aaa", "GPU-1", "1 rows differ from the CPU reference",
			map[string]any{"mismatched_rows_vs_cpu_reference": 1}},
		{"unwritten", "aaa", "GPU-1", "2 rows unwritten by the BVH query", map[string]any{"unwritten_rows_bvh": 2}},
		{"unwritten brute", "aaa", "GPU-1", "5 rows unwritten by the brute force",
			map[string]any{"unwritten_rows_brute_force": 5}},
		{"no rounds", "aaa", "GPU-1", "no timed rounds", map[string]any{"ms": map[string]any{"median": 1}}},
		{"two commits", "ccc", "GPU-1", `records commit "ccc"`, nil},
		{"two devices", "aaa", "GPU-2", "name different devices", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRec(t, filepath.Join(dir, "a-1.json"), "aaa", "GPU-1", r, r, nil)
			writeRec(t, filepath.Join(dir, "a-2.json"), tc.commit2, tc.uuid2, r, r, tc.extra)
			writeRec(t, filepath.Join(dir, "b-1.json"), "bbb", "GPU-1", r, r, nil)
			err := run(&bytes.Buffer{}, filepath.Join(dir, "a-*.json"), filepath.Join(dir, "b-*.json"), "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCompareNeedsBothSides(t *testing.T) {
	dir := t.TempDir()
	r := []float64{1}
	writeRec(t, filepath.Join(dir, "a-1.json"), "aaa", "GPU-1", r, r, nil)
	writeRec(t, filepath.Join(dir, "b-1.json"), "bbb", "GPU-2", r, r, nil)
	for _, tc := range []struct{ a, b, want string }{
		{"", "x", "both required"},
		{filepath.Join(dir, "none-*.json"), filepath.Join(dir, "b-*.json"), "side a: no file matches"},
		{filepath.Join(dir, "a-*.json"), filepath.Join(dir, "b-*.json"), "sides a and b name different devices"},
	} {
		err := run(&bytes.Buffer{}, tc.a, tc.b, "")
		require.Error(t, err, fmt.Sprint(tc))
		assert.Contains(t, err.Error(), tc.want)
	}
}
