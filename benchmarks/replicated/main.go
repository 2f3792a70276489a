// Command replicated is the one-GPU acceptance of the replicated engine: it
// builds the same scene as a single-device CUDA scene and as a replicated
// scene of two replicas on the same device (MultiDeviceOptions
// AllowSameDevice, row floor 1, so every call really runs the replicated
// path: planning, scatter, launch, gather, placement) and compares every
// per_ray operation between the two, bit for bit in every field, on fresh
// random inputs: intersect (all flags), trace_reflections, visible, the
// three visibility variants, the three nearest-edge queries without and
// with an edge mask, and the backward passes (per-row gradients bitwise,
// vertex sums by relative L2). The device fast paths run on outputs
// poisoned with 0xFF bytes first. A smaller batch of every operation is
// compared with the CPU reference too. With ChunkRays and Offload set, it
// checks that every row of every per_ray operation reaches the hook exactly
// once. Last it times NearestEdgeRay over 4,194,304 half rays on the
// compute mesh (6,291,456 edges) on both scenes, wall clock of the host
// call, minimum of rounds.
//
// Each operation's row records the seeds of its row batches and edge mask
// (newBatch(rows, seed) replays a batch) and, where the CPU check found a
// difference, the first differing element with both values and their bits.
//
//	replicated -out tests/evidence/replicated-1gpu.json
//
// Any mismatch makes it exit 1 after writing the evidence.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/benchhead"
)

type report struct {
	benchhead.Header
	Mode       string       `json:"mode"`
	Rows       int          `json:"rows"`
	CPURows    int          `json:"cpu_rows"`
	Operations []opRow      `json:"operations"`
	Offload    []offloadRow `json:"offload"`
	Timing     *timingRow   `json:"half_ray_timing,omitempty"`
	Failures   []string     `json:"failures"`
}

type opRow struct {
	Op            string   `json:"op"`
	Config        string   `json:"config"`
	Rows          int      `json:"rows"`
	Dispatch      string   `json:"dispatch"`
	Fields        []string `json:"fields_compared"`
	Mismatches    int      `json:"mismatches"`
	BitwiseEqual  bool     `json:"bitwise_equal"`
	Poisoned      bool     `json:"outputs_poisoned"`
	VertexRelL2   *float64 `json:"vertex_rel_l2,omitempty"`
	VertexTol     float64  `json:"vertex_tolerance,omitempty"`
	CPURows       int      `json:"cpu_rows_checked"`
	CPUMismatches int      `json:"cpu_mismatches"`
	// FirstCPUMismatch is the first differing element against the CPU
	// reference (nil: none, or a comparison by relative L2).
	FirstCPUMismatch *mismatch `json:"first_cpu_mismatch,omitempty"`
	// Seeds of the row batches (the timed batch, the CPU-checked batch)
	// and of the edge mask, to replay a failure: newBatch(rows, seed).
	BatchSeed    uint64  `json:"batch_seed,omitempty"`
	CPUBatchSeed uint64  `json:"cpu_batch_seed,omitempty"`
	MaskSeed     uint64  `json:"edge_mask_seed,omitempty"`
	SingleMs     float64 `json:"single_ms"`
	ReplicatedMs float64 `json:"replicated_ms"`
}

type offloadRow struct {
	Op       string `json:"op"`
	Rows     int    `json:"rows"`
	Streamed int    `json:"rows_streamed"`
	Once     bool   `json:"every_row_once"`
	Chunks   int    `json:"chunks"`
}

type timingRow struct {
	Op           string    `json:"op"`
	Config       string    `json:"config"`
	Rows         int       `json:"rows"`
	Edges        int       `json:"edges"`
	SingleMs     []float64 `json:"single_ms"`
	ReplicatedMs []float64 `json:"replicated_ms"`
	Ratio        float64   `json:"ratio_min"`
	Target       float64   `json:"target_ratio"`
	Met          bool      `json:"met"`
}

func main() {
	out := flag.String("out", "tests/evidence/replicated-1gpu.json", "evidence file")
	rows := flag.Int("rows", 300001, "rows of every compared operation")
	cpuRows := flag.Int("cpu-rows", 16384, "rows compared with the CPU reference")
	halfRays := flag.Int("half-rays", 1<<22, "half rays of the timed nearest-edge query (0: skip)")
	rounds := flag.Int("rounds", 3, "timed rounds")
	ordinal := flag.Int("device", 0, "device ordinal")
	flag.Parse()
	if err := run(*out, *rows, *cpuRows, *halfRays, *rounds, *ordinal); err != nil {
		fmt.Fprintln(os.Stderr, "replicated:", err)
		os.Exit(1)
	}
}

func run(out string, rows, cpuRows, halfRays, rounds, ordinal int) error {
	ctx := context.Background()
	h, err := benchhead.New(ordinal)
	if err != nil {
		return fmt.Errorf("no CUDA device: %w", err)
	}
	rep := &report{Header: h, Mode: "same-device replicas [d, d] vs single device", Rows: rows, CPURows: cpuRows,
		Failures: []string{}}
	build := cudaScenes(ordinal)
	if err := compareAll(ctx, rep, sceneMeshes(191), rows, cpuRows, build, true); err != nil {
		return err
	}
	if halfRays > 0 {
		t, err := timeHalfRays(ctx, halfRays, rounds, build)
		if err != nil {
			return err
		}
		rep.Timing = t
		fmt.Printf("half rays %d on %d edges: single %.1f ms, replicated %.1f ms (%.2fx, target <= %.1fx: %v)\n",
			t.Rows, t.Edges, minOf(t.SingleMs), minOf(t.ReplicatedMs), t.Ratio, t.Target, t.Met)
	}
	if err := benchhead.WriteJSON(out, rep); err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("%d failures: %v", len(rep.Failures), rep.Failures)
	}
	fmt.Printf("all %d operations bitwise equal; evidence in %s\n", len(rep.Operations), out)
	return nil
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// factory builds the two scenes a comparison runs on: the single-device
// scene and the replicated one (with o's knobs).
type factory func(ctx context.Context, meshes []rayd.Mesh, o rayd.MultiDeviceOptions) (single, repl *rayd.Scene, err error)

// cudaScenes builds a single-device CUDA scene and a replicated scene of two
// replicas on the same device, row floor 1.
func cudaScenes(ordinal int) factory {
	return func(ctx context.Context, meshes []rayd.Mesh, o rayd.MultiDeviceOptions) (single, repl *rayd.Scene, err error) {
		if single, err = rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ordinal)); err != nil {
			return nil, nil, err
		}
		o.AllowSameDevice = true
		o.MinRaysPerDevice = 1
		if repl, err = rayd.NewScene(ctx, meshes, rayd.WithDevices(ordinal, ordinal), rayd.WithMultiDevice(o)); err != nil {
			_ = single.Close()
			return nil, nil, err
		}
		return single, repl, nil
	}
}
