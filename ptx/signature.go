package ptx

import (
	"regexp"
	"strings"
)

// CParam is a kernel parameter as written in the CUDA source.
type CParam struct {
	Name    string
	Pointer bool
}

var kernelRE = regexp.MustCompile(`__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)`)

// ParseKernelSignatures reads the __global__ kernels of a CUDA source and
// returns each kernel's parameters in order (names and pointer-ness), which
// PTX alone does not record (a pointer is just a .u64 there).
func ParseKernelSignatures(src []byte) map[string][]CParam {
	out := map[string][]CParam{}
	text := stripComments(string(src))
	for _, m := range kernelRE.FindAllStringSubmatch(text, -1) {
		var ps []CParam
		for _, raw := range strings.Split(m[2], ",") {
			raw = strings.TrimSpace(raw)
			if raw == "" || raw == "void" {
				continue
			}
			fields := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '*' || r == '&' || r == '\t' || r == '\n' })
			name := ""
			if len(fields) > 0 {
				name = fields[len(fields)-1]
			}
			ps = append(ps, CParam{Name: name, Pointer: strings.Contains(raw, "*")})
		}
		out[m[1]] = ps
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 4
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}
