// Command geometry benchmarks rayd-go's single-device GPU BVH on the seed's
// two workloads (spec/multidevice.md §10.1): "light" (the 192-vertex grid,
// 72,962 triangles, 4,194,304 plane rays, 1 bounce) and "compute" (2.1M
// triangles scattered in a cube, 4,194,304 incoherent rays, 4 bounces).
//
// For each node layout (2-wide child-pair, 4-wide quantized, compressed
// 8-wide) it times, with CUDA events, the BVH build from device-resident
// tables and the queries on device-resident rays: intersect with the full
// 76-byte record and with flags=0, trace_reflections with 1 and 4 bounces,
// and visibility. Variants are interleaved inside each round, after warm-up
// rounds; the table reports the median and minimum over rounds. A
// correctness column reruns each timed launch exactly as timed (the same
// launcher, node layout, flags and persistent-launch counter) on poisoned
// outputs, requires every row to be written, and compares a random sample of
// rows with the CPU reference bit for bit, every field of the record
// (compared_fields in the JSON). The verdicts state the compressed 8-wide
// layout beside the quad layout, on the compute scene against its targets.
//
// On the compute scene the ray reordering probe (-reorder, on by default;
// the "reorder" object) times, in the same rounds as the quad layout's
// plain intersect (76 B), the whole device pipeline of accel.Reorderer
// (keys, radix sort, gather, intersect on the sorted rays, scatter back to
// ray order) and each of its parts alone; reordering pays only when the
// pipeline's median is below the plain intersect's (pipeline_net_ms > 0).
// It also keeps the estimate: the rays sorted on the host by the same key,
// the device radix sort of the keys (accel.RadixSort) and a copy of the ray
// buffers standing in for the gather (net = gain − sort − copy).
//
// On the light scene -light-blocks (a list of blocks per multiprocessor,
// off by default) times the 2-wide intersect (76 B) with each persistent
// grid size in the same rounds, each checked like the other queries (the
// "light_blocks_sweep" object).
//
//	geometry -out benchmarks/results/geometry-h200.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
)

type report struct {
	benchhead.Header
	Rounds   int               `json:"rounds"`
	Warmup   int               `json:"warmup"`
	Configs  []configResult    `json:"configs"`
	Peers    map[string]string `json:"reference_figures"`
	Verdicts []string          `json:"verdicts"`
	// LightBlocksSweep is the persistent-grid sweep (-light-blocks).
	LightBlocksSweep *blocksSweep `json:"light_blocks_sweep,omitempty"`
}

func main() {
	ordinal := flag.Int("device", 0, "device ordinal")
	rounds := flag.Int("rounds", 15, "timed rounds")
	warmup := flag.Int("warmup", 2, "warm-up rounds")
	sample := flag.Int("check", 65536, "rows checked against the CPU reference per query")
	rays := flag.Int("rays", 1<<22, "rays per batch")
	only := flag.String("config", "", "light or compute (default both)")
	out := flag.String("out", "", "JSON output path")
	reorder := flag.Bool("reorder", true, "time the ray reordering probe on the compute scene")
	lightBlocks := flag.String("light-blocks", "", "comma-separated blocks per SM: time the light scene's 2-wide intersect with each persistent grid size (e.g. 4,6,8,10,12; default off)")
	flag.Parse()
	perSM, err := parseBlocks(*lightBlocks)
	if err != nil {
		fmt.Fprintln(os.Stderr, "geometry:", err)
		os.Exit(2)
	}
	if err := run(*ordinal, *rounds, *warmup, *sample, *rays, *only, *out, *reorder, perSM); err != nil {
		fmt.Fprintln(os.Stderr, "geometry:", err)
		os.Exit(1)
	}
}

func run(ordinal, rounds, warmup, sample, rays int, only, out string, reorder bool, perSM []int) error {
	d, err := launch.Open(ordinal)
	if err != nil {
		return err
	}
	defer d.Close()
	h, err := benchhead.New(ordinal)
	if err != nil {
		return err
	}
	info, ver := h.Device, h.Driver
	rep := report{Header: h, Rounds: rounds, Warmup: warmup, Peers: peerFigures}
	fmt.Printf("# rayd-go geometry benchmark on %s (cuda:%d, %d SMs, driver %d), build %s\n", info.Name, ordinal, info.SMs, ver, h.Build)
	fmt.Printf("# %d rays, %d warm-up + %d timed rounds, variants interleaved; median (min) ms via CUDA events\n", rays, warmup, rounds)
	for _, cfg := range configs(only, rays) {
		res, err := benchConfig(d, cfg, rounds, warmup, sample, reorder, perSM)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Name, err)
		}
		rep.Configs = append(rep.Configs, *res)
		printConfig(res)
		if res.Reorder != nil {
			printReorder(res.Reorder)
		}
		if res.sweep != nil {
			rep.LightBlocksSweep = res.sweep
		}
	}
	rep.Verdicts = append(verdicts(rep.Configs), wideVerdicts(rep.Configs)...)
	for _, c := range rep.Configs {
		if c.Reorder != nil {
			rep.Verdicts = append(rep.Verdicts, reorderVerdict(c.Name, c.Reorder))
		}
	}
	if rep.LightBlocksSweep != nil {
		rep.Verdicts = append(rep.Verdicts, sweepVerdict(rep.LightBlocksSweep))
	}
	for _, v := range rep.Verdicts {
		fmt.Println("verdict:", v)
	}
	if out != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if err := mismatched(rep.Configs); err != nil {
		return err
	}
	return sweepMismatched(rep.LightBlocksSweep)
}

// mismatched fails the run when a BVH row differs from the CPU reference
// (OptiX rows are held to the tie rule and reported, not failed on), or
// the reordering probe's rows (host-sorted or from the device pipeline) or
// device orders differ from the reference's and the host's.
func mismatched(cs []configResult) error {
	for _, c := range cs {
		if r := c.Reorder; r != nil && (r.Mismatches > 0 || !r.SortMatchesHost) {
			return fmt.Errorf("%s reorder: %d of %d checked rows differ from the CPU reference, device sort order equal to the host's: %v", c.Name, r.Mismatches, r.Checked, r.SortMatchesHost)
		}
		if r := c.Reorder; r != nil && (r.PipelineMismatches > 0 || !r.PipelineOrderMatchesHost) {
			return fmt.Errorf("%s reorder pipeline: %d of %d checked rows differ from the CPU reference, device order equal to the host's: %v", c.Name, r.PipelineMismatches, r.PipelineChecked, r.PipelineOrderMatchesHost)
		}
		for _, l := range c.Layouts {
			for _, q := range l.Queries {
				if l.Backend != "optix" && q.Mismatches > 0 {
					return fmt.Errorf("%s w%d %s: %d of %d checked rows differ from the CPU reference", c.Name, l.Width, q.Name, q.Mismatches, q.Checked)
				}
			}
		}
	}
	return nil
}
