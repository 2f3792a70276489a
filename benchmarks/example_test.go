package benchmarks_test

import (
	"fmt"
	"os"

	"github.com/rayd-go/rayd/benchmarks"
)

// The overlap model of spec §10.4, checked against its worked example: the
// light intersect row (1.27 ms on one GPU, 4.63 ms on two) at 49.1 GB/s,
// 524,288-row chunks of a 76-byte Intersection plus the 24-byte Ray.
func ExampleOverlapModel() {
	o := benchmarks.OverlapModel(1.27, 4.63, 4194304, 524288, 76, 49.1)
	fmt.Printf("%d B per row, %.2f ms per chunk\n", o.TripBytes, o.ChunkTripMS)
	fmt.Printf("no overlap %.2f ms, perfect overlap %.2f ms, residual %+.2f ms\n",
		o.SerialBoundMS, o.PipeBoundMS, o.ResidualMS)
	// Output:
	// 100 B per row, 1.07 ms per chunk
	// no overlap 4.91 ms, perfect overlap 1.70 ms, residual +2.93 ms
}

// A near-crossover calibration (the seed's light 1-bounce reflections): the
// 1/4 remote share measured 2.3% slower than the master alone, but inside
// the 3% tolerance, so the ladder kept it.
func ExampleMarginOf() {
	rungs := [][]float64{{1, 1}, {1, 0.5}, {1, 0.25}, {1, 0}}
	ms := []float64{1.52, 1.40, 1.311, 1.281}
	m := benchmarks.MarginOf(rungs, ms, []float64{1, 0.25})
	fmt.Printf("%s: best sharded %.3f ms vs master-only %.3f ms (%+.1f%%)\n",
		m.Verdict(), m.BestShardedMS, m.MasterOnlyMS, m.MarginPct)
	fmt.Println("near crossover:", m.NearCrossover)
	// Output:
	// kept a remote share on tolerance alone: best sharded 1.311 ms vs master-only 1.281 ms (-2.3%)
	// near crossover: true
}

// The printed table of a one-row-per-config record.
func ExampleWriteTable() {
	speedup, multi := 1.85, 18.83
	r := &benchmarks.Record{
		Machine: benchmarks.Machine{DeviceCount: 2},
		Configs: map[string]benchmarks.Config{"compute": {
			AccumDfrDirect: &benchmarks.Row{
				Batch: "67108864 samples", SingleMS: 34.76, MultiMS: &multi, Speedup: &speedup,
				Dispatch: "lane-sharded", DriverCalls: 22, ChunkCount: 2,
			},
		}},
	}
	if err := benchmarks.WriteTable(os.Stdout, r); err != nil {
		fmt.Println(err)
	}
	// Output:
	// | Configuration | Operation | Batch | 1 GPU | 2 GPUs | speedup | dispatch | path | driver calls | chunks | weights | check |
	// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
	// | compute | accum_dfr_direct | 67108864 samples | 34.76 ms | 18.83 ms | 1.85x | lane-sharded | -- | 22 | 2 | -- | -- |
}
