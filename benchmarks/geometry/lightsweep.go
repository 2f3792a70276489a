package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
)

// The persistent-grid sweep (-light-blocks): the light scene's headline
// intersect (2-wide BVH, 76-byte record, persistent launch) with its grid
// set to each listed number of blocks per multiprocessor
// (Rays.PersistentBlocks = blocks per SM × SMs), timed in the same rounds
// as every other variant and checked like them.

// defaultBlocksPerSM is the grid of a persistent launch with
// Rays.PersistentBlocks 0 (accel's default), in blocks per multiprocessor.
const defaultBlocksPerSM = 8

// maxBlocksPerSM bounds a sweep entry: 2048 threads per multiprocessor
// at most, in blocks of accel.TraceThreads.
const maxBlocksPerSM = 2048 / accel.TraceThreads

// parseBlocks reads a comma-separated list of blocks per multiprocessor
// ("4,6,8,10,12"); "" is no sweep. Entries are distinct, in 1..16.
func parseBlocks(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-light-blocks: %q is not an integer", f)
		}
		if v < 1 || v > maxBlocksPerSM {
			return nil, fmt.Errorf("-light-blocks: %d blocks per SM not in [1,%d]", v, maxBlocksPerSM)
		}
		if seen[v] {
			return nil, fmt.Errorf("-light-blocks: %d listed twice", v)
		}
		seen[v] = true
		out = append(out, v)
	}
	return out, nil
}

// blocksSweep is the "light_blocks_sweep" object of the JSON.
type blocksSweep struct {
	Scene   string `json:"scene"`
	Query   string `json:"query"`
	Width   int    `json:"width"`
	Launch  string `json:"launch"`
	SMs     int    `json:"sms"`
	Threads int    `json:"threads_per_block"`
	// DefaultBlocksPerSM is the grid accel picks with PersistentBlocks 0.
	DefaultBlocksPerSM int          `json:"default_blocks_per_sm"`
	Entries            []sweepEntry `json:"entries"`
	// BestBlocksPerSM is the entry with the lowest median.
	BestBlocksPerSM int `json:"best_blocks_per_sm"`
}

// sweepEntry is one grid size of the sweep.
type sweepEntry struct {
	BlocksPerSM int     `json:"blocks_per_sm"`
	Blocks      int     `json:"blocks"` // Rays.PersistentBlocks
	Ms          timing  `json:"ms"`
	RaysPerSec  float64 `json:"rays_per_s"`
	Checked     int     `json:"checked_rows"`
	Mismatches  int     `json:"mismatched_rows"`
	BitwiseSame bool    `json:"bitwise_equal_to_reference"`
	// Compared lists the record fields the check compares.
	Compared []string `json:"compared_fields"`
}

// sweepName is the variant name of one sweep entry; it starts with the
// headline query's name so check treats it as that query.
func sweepName(perSM int) string {
	return fmt.Sprintf("intersect (76 B), %d blocks/SM", perSM)
}

// sweepVariants are the sweep's timed launches on the 2-wide BVH b of the
// light scene: one per entry of perSM, each with its own grid.
func (f *fixture) sweepVariants(b tracer, perSM []int, sms int) []*variant {
	var out []*variant
	for _, k := range perSM {
		rays := f.rays
		rays.Counter = f.counter
		rays.PersistentBlocks = k * sms
		out = append(out, &variant{name: sweepName(k), rowBytes: 24 + 76,
			run: func() error { return b.Intersect(f.s, rays, geom.FlagsAll, f.full) }})
	}
	return out
}

// wantsSweep reports whether cfg gets the sweep.
func wantsSweep(cfg workload.Config, perSM []int) bool {
	return len(perSM) > 0 && cfg.Name == workload.Light.Name
}

// sweepResult checks every sweep variant against the CPU reference and
// summarizes them.
func (f *fixture) sweepResult(vs []*variant, perSM []int, sms int, check func(*variant, *queryResult) error) (*blocksSweep, error) {
	sw := &blocksSweep{Scene: workload.Light.Name, Query: "intersect (76 B)", Width: 2,
		Launch: backendSpec{name: "bvh", width: 2}.launch() + ", dynamic row fetching", SMs: sms,
		Threads: accel.TraceThreads, DefaultBlocksPerSM: defaultBlocksPerSM}
	for i, v := range vs {
		q := queryResult{Name: v.name, RowBytes: v.rowBytes, Ms: summarize(v.times)}
		if err := check(v, &q); err != nil {
			return nil, fmt.Errorf("check %s: %w", v.name, err)
		}
		sw.Entries = append(sw.Entries, newSweepEntry(perSM[i], sms, f.rays.N, q))
	}
	sw.BestBlocksPerSM = bestEntry(sw.Entries)
	return sw, nil
}

func newSweepEntry(perSM, sms, n int, q queryResult) sweepEntry {
	e := sweepEntry{BlocksPerSM: perSM, Blocks: perSM * sms, Ms: q.Ms, Checked: q.Checked,
		Mismatches: q.Mismatches, BitwiseSame: q.BitwiseSame, Compared: q.Compared}
	if q.Ms.Median > 0 {
		e.RaysPerSec = float64(n) / (q.Ms.Median / 1e3)
	}
	return e
}

// bestEntry is the blocks per SM of the entry with the lowest median (0
// when there is none).
func bestEntry(es []sweepEntry) int {
	best, bestMs := 0, 0.0
	for _, e := range es {
		if best == 0 || e.Ms.Median < bestMs {
			best, bestMs = e.BlocksPerSM, e.Ms.Median
		}
	}
	return best
}

// sweepVerdict states the sweep: each entry's median beside the default
// grid's, and the rows' check.
func sweepVerdict(sw *blocksSweep) string {
	var def float64
	for _, e := range sw.Entries {
		if e.BlocksPerSM == sw.DefaultBlocksPerSM {
			def = e.Ms.Median
		}
	}
	var parts []string
	for _, e := range sw.Entries {
		p := fmt.Sprintf("%d/SM %.3f ms", e.BlocksPerSM, e.Ms.Median)
		if def > 0 && e.BlocksPerSM != sw.DefaultBlocksPerSM {
			p += fmt.Sprintf(" (%.3fx of %d/SM)", e.Ms.Median/def, sw.DefaultBlocksPerSM)
		}
		p += fmt.Sprintf(", %d/%d rows bitwise equal", e.Checked-e.Mismatches, e.Checked)
		parts = append(parts, p)
	}
	return fmt.Sprintf("%s w%d %s persistent grid sweep (%d SMs × %d threads a block): %s; fastest %d blocks/SM",
		sw.Scene, sw.Width, sw.Query, sw.SMs, sw.Threads, strings.Join(parts, "; "), sw.BestBlocksPerSM)
}

// sweepMismatched fails the run when a sweep entry's rows differ from the
// CPU reference.
func sweepMismatched(sw *blocksSweep) error {
	if sw == nil {
		return nil
	}
	for _, e := range sw.Entries {
		if e.Mismatches > 0 {
			return fmt.Errorf("%s w%d %s: %d of %d checked rows differ from the CPU reference", sw.Scene, sw.Width, sweepName(e.BlocksPerSM), e.Mismatches, e.Checked)
		}
	}
	return nil
}
