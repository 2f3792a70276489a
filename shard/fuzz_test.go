package shard

import (
	"errors"
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// FuzzPlanAndShards: arbitrary device lists, weights and knobs give a layer
// or a typed error; an accepted layer's row shards partition any batch.
func FuzzPlanAndShards(f *testing.F) {
	f.Add(uint8(2), uint8(0), 1.0, 1.0, 0, int64(0), 0, 0, 1000)
	f.Add(uint8(3), uint8(1), 0.5, 0.0, 4096, int64(1<<20), 3, 64, 99999)
	f.Add(uint8(1), uint8(0), math.NaN(), -1.0, -1, int64(-5), 1, -2, 7)
	f.Fuzz(func(t *testing.T, ndev, dup uint8, w0, w1 float64, chunk int, budget int64, chunks, floor, rows int) {
		n := int(ndev%9) + 1
		devs := make([]int, n)
		for i := range devs {
			devs[i] = i
		}
		if dup%5 == 1 && n > 1 {
			devs[1] = devs[0]
		}
		weights := make([]float64, n)
		for i := range weights {
			weights[i] = w0
			if i%2 == 1 {
				weights[i] = w1
			}
		}
		o := Options{Weights: weights, ChunkRays: chunk, MemoryBudgetBytes: budget,
			PipelineChunksPerDevice: chunks, MinRaysPerDevice: floor}
		l, err := Plan(devs, Uniform(8), o)
		if err != nil {
			var oe *OptionError
			var de *DeviceError
			if !errors.As(err, &oe) && !errors.As(err, &de) && !errors.Is(err, ErrInvalidOption) && !errors.Is(err, ErrInvalidDevices) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if l == nil {
			return
		}
		defer l.Close()
		if rows < 0 || rows > 1<<24 {
			return
		}
		w, err := l.WeightsFor("intersect")
		if err != nil {
			t.Fatalf("WeightsFor: %v", err)
		}
		covered := 0
		for _, s := range RowShards(l.Devices(), w, rows) {
			if s.Start != covered || s.Stop < s.Start {
				t.Fatalf("shards of %d rows do not partition: %+v", rows, s)
			}
			covered = s.Stop
		}
		if covered != rows && rows > 0 {
			t.Fatalf("shards cover %d of %d rows", covered, rows)
		}
		if _, err := l.PlanRows(IntersectOp(geom.FlagsAll), rows); err != nil && !errors.Is(err, ErrBudget) {
			t.Fatalf("PlanRows(%d): %v", rows, err)
		}
	})
}
