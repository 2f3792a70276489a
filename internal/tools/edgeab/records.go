package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// record is the part of one edge benchmark report that edgeab reads; the
// fields are those of benchmarks/edges' report at every commit that has
// -out, the unwritten-row counts only where the report has them.
type record struct {
	path    string
	Commit  string          `json:"commit"`
	Dirty   *bool           `json:"dirty"`
	Date    string          `json:"date"`
	Driver  json.RawMessage `json:"driver_version"`
	Device  device          `json:"device"`
	Queries int             `json:"queries"`
	Configs []struct {
		Name    string     `json:"name"`
		Edges   int        `json:"edges"`
		Queries []queryRec `json:"queries"`
	} `json:"configs"`
}

type queryRec struct {
	Name string `json:"name"`
	Ms   struct {
		Median float64   `json:"median"`
		Rounds []float64 `json:"rounds"`
	} `json:"ms"`
	BruteChecked    int  `json:"rows_checked_vs_device_brute_force"`
	BruteMismatches int  `json:"mismatched_rows_vs_device_brute_force"`
	RefChecked      int  `json:"rows_checked_vs_cpu_reference"`
	RefMismatches   int  `json:"mismatched_rows_vs_cpu_reference"`
	UnwrittenBVH    *int `json:"unwritten_rows_bvh"`
	UnwrittenBrute  *int `json:"unwritten_rows_brute_force"`
}

// device identifies the GPU a record was measured on.
type device struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	SMs  int    `json:"sms"`
}

// side is the records of one build, in path order.
type side struct {
	label string
	recs  []*record
}

// loadSide reads every file glob matches; they must name one commit, one
// device and one batch size.
func loadSide(label, glob string) (*side, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("side %s: %w", label, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("side %s: no file matches %q", label, glob)
	}
	sort.Strings(paths)
	s := &side{label: label}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("side %s: %w", label, err)
		}
		r := &record{path: p}
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("side %s: %s: %w", label, p, err)
		}
		if first := s.first(); first != nil {
			switch {
			case r.Commit != first.Commit:
				return nil, fmt.Errorf("side %s: %s records commit %q, %s %q", label, p, r.Commit, first.path, first.Commit)
			case r.Device != first.Device:
				return nil, fmt.Errorf("side %s: %s and %s name different devices", label, p, first.path)
			case r.Queries != first.Queries:
				return nil, fmt.Errorf("side %s: %s ran %d rows per query, %s %d", label, p, r.Queries, first.path, first.Queries)
			}
		}
		s.recs = append(s.recs, r)
	}
	return s, nil
}

func (s *side) first() *record {
	if len(s.recs) == 0 {
		return nil
	}
	return s.recs[0]
}

// runs returns, per record, the query's entry in config cfg (nil where the
// record lacks it).
func (s *side) runs(cfg, query string) []*queryRec {
	out := make([]*queryRec, len(s.recs))
	for i, r := range s.recs {
		for _, c := range r.Configs {
			if c.Name != cfg {
				continue
			}
			for j := range c.Queries {
				if c.Queries[j].Name == query {
					out[i] = &c.Queries[j]
				}
			}
		}
	}
	return out
}

// failures describes what q reports as failed: mismatched rows against
// either check, or unwritten rows.
func (q *queryRec) failures() []string {
	var f []string
	if q.BruteMismatches != 0 {
		f = append(f, fmt.Sprintf("%d rows differ from the device brute force", q.BruteMismatches))
	}
	if q.RefMismatches != 0 {
		f = append(f, fmt.Sprintf("%d rows differ from the CPU reference", q.RefMismatches))
	}
	if q.UnwrittenBVH != nil && *q.UnwrittenBVH != 0 {
		f = append(f, fmt.Sprintf("%d rows unwritten by the BVH query", *q.UnwrittenBVH))
	}
	if q.UnwrittenBrute != nil && *q.UnwrittenBrute != 0 {
		f = append(f, fmt.Sprintf("%d rows unwritten by the brute force", *q.UnwrittenBrute))
	}
	return f
}
