package main

import (
	"fmt"
	"strings"

	"github.com/rayd-go/rayd/accel"
)

// wideTargets are the compressed 8-wide layout's targets on the compute
// scene (milliseconds, median), per query.
var wideTargets = map[string]float64{
	"intersect (76 B)":      9.5,
	"trace_reflections (4)": 31,
	"visible":               7,
}

// wideVerdicts reports the compressed 8-wide layout beside the quad layout:
// on the compute scene each targeted query against its target, elsewhere
// the intersect ratio; with the rows' check of the timed launch.
func wideVerdicts(cs []configResult) []string {
	var out []string
	for _, c := range cs {
		var w4, w8 *layoutResult
		for i := range c.Layouts {
			l := &c.Layouts[i]
			if l.Backend != "bvh" {
				continue
			}
			switch l.Width {
			case 4:
				w4 = l
			case 8:
				w8 = l
			}
		}
		if w4 == nil || w8 == nil {
			continue
		}
		var parts []string
		for _, q8 := range w8.Queries {
			q4 := findQuery(w4, q8.Name)
			if q4 == nil {
				continue
			}
			part := fmt.Sprintf("%s %.3f ms (w4 %.3f ms, %.2fx)", q8.Name, q8.Ms.Median, q4.Ms.Median, q4.Ms.Median/q8.Ms.Median)
			if target, ok := wideTargets[q8.Name]; ok && c.Name == "compute" {
				part += fmt.Sprintf(" vs target %.3g ms: %s", target, pass(q8.Ms.Median <= target))
			}
			part += fmt.Sprintf(", %d/%d rows bitwise equal", q8.Checked-q8.Mismatches, q8.Checked)
			parts = append(parts, part)
		}
		out = append(out, fmt.Sprintf("%s w8 (nodes %.1f MB of %.1f MB BVH, height %d): %s", c.Name,
			float64(w8.Nodes)*4*accel.WideNodeWords/1e6, float64(w8.BVHBytes)/1e6, w8.Height, strings.Join(parts, "; ")))
	}
	return out
}

func findQuery(l *layoutResult, name string) *queryResult {
	for i := range l.Queries {
		if l.Queries[i].Name == name {
			return &l.Queries[i]
		}
	}
	return nil
}
