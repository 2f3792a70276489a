package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"

	"golang.org/x/perf/benchfmt"

	"github.com/rayd-go/rayd/internal/benchhead"
)

// record is benchrecord's output; the head's fields sit at the top level.
type record struct {
	benchhead.Header
	Command    string            `json:"command"`
	Note       string            `json:"note,omitempty"`
	Config     map[string]string `json:"config"`
	Benchmarks []result          `json:"benchmarks"`
}

// result is one benchmark line.
type result struct {
	// Name is the benchmark's full name as printed (Benchmark…, with its
	// sub-benchmarks) without its GOMAXPROCS suffix.
	Name       string  `json:"name"`
	Procs      int     `json:"gomaxprocs,omitempty"`
	Iterations int     `json:"iterations"`
	NsPerOp    float64 `json:"ns_per_op"`
	// Other holds the line's other measurements by their printed unit
	// (B/op, allocs/op, custom metrics).
	Other map[string]float64 `json:"other,omitempty"`
}

// refused are the line prefixes of a run that did not do everything asked:
// a skipped or failed benchmark or test, a failed package, a panic.
var refused = [][]byte{[]byte("--- SKIP"), []byte("--- FAIL"), []byte("FAIL"), []byte("panic:")}

// parse reads a printed benchmark run (the Go benchmark format, through
// golang.org/x/perf/benchfmt): its file configuration of the last result
// and every result, in order.
func parse(text []byte) (map[string]string, []result, error) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		for _, p := range refused {
			if bytes.HasPrefix(line, p) {
				return nil, nil, fmt.Errorf("line %d: %q: the run did not do everything asked", n, line)
			}
		}
	}
	cfg := map[string]string{}
	var out []result
	r := benchfmt.NewReader(bytes.NewReader(text), "run")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, nil, rec
		case *benchfmt.Result:
			res, err := fromResult(rec)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, res)
			for _, c := range rec.Config {
				if c.File {
					cfg[c.Key] = string(c.Value)
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("the run holds no benchmark result")
	}
	return cfg, out, nil
}

// fromResult is one result with its units as printed (benchfmt tidies
// ns/op to sec/op and keeps the printed value beside it).
func fromResult(rec *benchfmt.Result) (result, error) {
	base, parts := rec.Name.Parts()
	res := result{Name: "Benchmark" + string(base), Iterations: rec.Iters} // benchfmt drops the prefix
	for _, p := range parts {
		if p[0] == '-' {
			procs, err := strconv.Atoi(string(p[1:]))
			if err != nil {
				return result{}, fmt.Errorf("%s: GOMAXPROCS suffix %q: %w", rec.Name, p, err)
			}
			res.Procs = procs
			continue
		}
		res.Name += string(p)
	}
	ns := false
	for _, v := range rec.Values {
		unit, val := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, val = v.OrigUnit, v.OrigValue
		}
		if unit == "ns/op" {
			res.NsPerOp, ns = val, true
			continue
		}
		if res.Other == nil {
			res.Other = map[string]float64{}
		}
		res.Other[unit] = val
	}
	if !ns {
		return result{}, fmt.Errorf("%s: no ns/op measurement", rec.Name)
	}
	return res, nil
}
