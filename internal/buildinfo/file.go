package buildinfo

import (
	debugbi "debug/buildinfo"
	"fmt"
	"runtime/debug"
	"strings"
)

const pkgPath = "github.com/rayd-go/rayd/internal/buildinfo"

// ReadFile returns the stamp of another Go binary, read from the build
// information the toolchain records in it (the -ldflags it was linked with,
// or its VCS stamp): what Get would return inside that binary. Test
// binaries (go test -c) record their -ldflags too, so a harness can check
// the stamp of a suite before running it.
func ReadFile(path string) (Stamp, error) {
	bi, err := debugbi.ReadFile(path)
	if err != nil {
		return Stamp{}, fmt.Errorf("buildinfo: %s: %w", path, err)
	}
	c, d := linked(bi)
	return get(c, d, func() (*debug.BuildInfo, bool) { return bi, true }), nil
}

// linked extracts the -X values of this package from the -ldflags setting.
func linked(bi *debug.BuildInfo) (commitVal, dirtyVal string) {
	for _, kv := range bi.Settings {
		if kv.Key != "-ldflags" {
			continue
		}
		fields := splitFlags(kv.Value)
		for i, f := range fields {
			v := f
			if f == "-X" || f == "--X" {
				if i+1 >= len(fields) {
					break
				}
				v = fields[i+1]
			} else if rest, ok := strings.CutPrefix(f, "-X="); ok {
				v = rest
			} else {
				continue
			}
			switch name, val, _ := strings.Cut(v, "="); name {
			case pkgPath + ".commit":
				commitVal = val
			case pkgPath + ".dirty":
				dirtyVal = val
			}
		}
	}
	return commitVal, dirtyVal
}

// splitFlags splits a linker flag string on spaces, keeping single- or
// double-quoted parts together (the way go build quotes -ldflags).
func splitFlags(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	inField := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inField = r, true
		case r == ' ' || r == '\t':
			if inField {
				out = append(out, cur.String())
				cur.Reset()
				inField = false
			}
		default:
			cur.WriteRune(r)
			inField = true
		}
	}
	if inField {
		out = append(out, cur.String())
	}
	return out
}
