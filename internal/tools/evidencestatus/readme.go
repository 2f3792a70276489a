package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// citeRE finds the README's source notes: "`path`, commit `abc1234`".
var citeRE = regexp.MustCompile("`([A-Za-z0-9_./-]+)`,?\\s+(?:at\\s+)?commit\\s+`?([0-9a-f]{7,40})`?")

// citation is one source note of the README and what the file records.
type citation struct {
	path, commit string
	recorded     []string // distinct commits the cited file(s) record
	missing      bool     // no such evidence file or folder
}

// ok reports whether every cited file records the cited commit.
func (c citation) ok() bool {
	if c.missing || len(c.recorded) == 0 {
		return false
	}
	for _, r := range c.recorded {
		if !samePrefix(r, c.commit) {
			return false
		}
	}
	return true
}

func samePrefix(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }

// citations reads the source notes of readme against the records (a
// folder cites every record under it).
func citations(readme string, recs []*record) []citation {
	var out []citation
	for _, m := range citeRE.FindAllStringSubmatch(readme, -1) {
		c := citation{path: m[1], commit: m[2], missing: true}
		seen := map[string]bool{}
		for _, r := range recs {
			under := strings.HasSuffix(c.path, "/") && strings.HasPrefix(r.Path, c.path)
			if r.Path != c.path && !under {
				continue
			}
			c.missing = false
			if r.Commit != "" && !seen[r.Commit] {
				seen[r.Commit] = true
				c.recorded = append(c.recorded, r.Commit)
			}
		}
		sort.Strings(c.recorded)
		out = append(out, c)
	}
	return out
}

func (c citation) String() string {
	short := func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	}
	switch {
	case c.missing:
		return fmt.Sprintf("README cites %s at %s: NO SUCH EVIDENCE FILE", c.path, c.commit)
	case len(c.recorded) == 0:
		return fmt.Sprintf("README cites %s at %s: the file records no commit", c.path, c.commit)
	case c.ok():
		return fmt.Sprintf("README cites %s at %s: matches the file", c.path, c.commit)
	}
	var rs []string
	for _, r := range c.recorded {
		rs = append(rs, short(r))
	}
	return fmt.Sprintf("README cites %s at %s: the file records %s", c.path, c.commit, strings.Join(rs, ", "))
}
