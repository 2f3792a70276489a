package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/rayd-go/rayd/benchmarks"
)

// cmdBenchSummarize reads records of repeated runs and prints the
// min/median/max of every row (the seed's stability table).
func cmdBenchSummarize(args []string, stdout, stderr io.Writer) int {
	f := newFlags("bench summarize", "rayd bench summarize [-json PATH] [-plot PATH] RECORD.json...", `
Reads the JSON records of repeated benchmark runs (each validated against
the schema) and prints the min/median/max of every row and the calibration
tallies; -json writes the summary, -plot the speedup plot of every run's
points (records without a measured speedup give nothing to plot).`)
	jsonPath := f.String("json", "", "write the summary as JSON here")
	plotPath := f.String("plot", "", "plot every run's points here (.png or .svg)")
	if code, done := f.parse(args, stdout, stderr); done {
		return code
	}
	if f.NArg() == 0 {
		usageError(stderr, "bench summarize", "no record given")
		f.usage(stderr)
		return exitUsage
	}
	var recs []*benchmarks.Record
	for _, p := range f.Args() {
		b, err := os.ReadFile(p)
		if err == nil {
			err = benchmarks.Validate(b)
		}
		var r benchmarks.Record
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			return failure(stderr, "bench summarize", fmt.Errorf("%s: %w", p, err))
		}
		recs = append(recs, &r)
	}
	s := benchmarks.Summarize(recs)
	if err := s.WriteTable(stdout); err != nil {
		return failure(stderr, "bench summarize", err)
	}
	if *jsonPath != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonPath, append(b, '\n'), 0o644)
		}
		if err != nil {
			return failure(stderr, "bench summarize", err)
		}
	}
	if *plotPath != "" {
		if err := benchmarks.Plot(*plotPath, recs); err != nil {
			return failure(stderr, "bench summarize", err)
		}
	}
	return exitOK
}

// cmdBenchPin adds (or refreshes) records in the benchmark manifest, run
// from the repository root: every record must validate; the manifest is
// then verified as a whole.
func cmdBenchPin(args []string, stdout, stderr io.Writer) int {
	f := newFlags("bench pin", "rayd bench pin [-manifest PATH] RECORD.json...", `
Adds (or refreshes) benchmark records in the manifest, run from the
repository root with paths relative to it: every record must validate, and
the manifest is then verified as a whole before it is written.`)
	manifest := f.String("manifest", benchmarks.ManifestPath, "the manifest, relative to the repository root")
	if code, done := f.parse(args, stdout, stderr); done {
		return code
	}
	if f.NArg() == 0 {
		usageError(stderr, "bench pin", "no record given")
		f.usage(stderr)
		return exitUsage
	}
	m, err := benchmarks.ReadManifest(*manifest)
	if err != nil {
		return failure(stderr, "bench pin", err)
	}
	for _, p := range f.Args() {
		if err := m.Pin(".", p); err != nil {
			return failure(stderr, "bench pin", err)
		}
	}
	if err := m.Verify("."); err != nil {
		return failure(stderr, "bench pin", err)
	}
	if err := m.WriteFile(*manifest); err != nil {
		return failure(stderr, "bench pin", err)
	}
	fmt.Fprintf(stdout, "%s: %d records pinned\n", *manifest, len(m.Records))
	return exitOK
}
