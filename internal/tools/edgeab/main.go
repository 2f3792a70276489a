// Command edgeab compares the nearest-edge benchmark's records
// (benchmarks/edges, -out JSON) of two builds measured in alternating
// processes on one GPU (make bench-edges-point-ab). For every configuration
// and query that both sides measured it gives each side's per-run medians,
// the median of those, the pooled median and minimum of every timed round,
// the rows checked and the mismatches, and the ratio of side b's pooled
// median to side a's; the summary's own commit is side b's.
//
//	edgeab -a 'dir/base-*.json' -b 'dir/head-*.json' [-out summary.json]
//
// It needs no GPU. It fails when a pattern matches no file, when a side's
// records name different commits, devices or query sizes, or when any run
// of either side reports a mismatched or unwritten row.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rayd-go/rayd/internal/benchhead"
)

func main() {
	a := flag.String("a", "", "glob of side a's records (the baseline)")
	b := flag.String("b", "", "glob of side b's records")
	out := flag.String("out", "", "summary JSON path (empty: none)")
	flag.Parse()
	if err := run(os.Stdout, *a, *b, *out); err != nil {
		fmt.Fprintln(os.Stderr, "edgeab:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, globA, globB, out string) error {
	if globA == "" || globB == "" {
		return fmt.Errorf("-a and -b are both required")
	}
	a, err := loadSide("a", globA)
	if err != nil {
		return err
	}
	b, err := loadSide("b", globB)
	if err != nil {
		return err
	}
	s, err := compare(a, b)
	if err != nil {
		return err
	}
	s.print(w)
	if out != "" {
		return benchhead.WriteJSON(out, s)
	}
	return nil
}
