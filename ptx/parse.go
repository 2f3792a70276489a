package ptx

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Param is one kernel parameter as declared in PTX.
type Param struct {
	Name    string `json:"name,omitempty"` // name in the CUDA source
	Type    string `json:"type"`           // PTX type without the dot: u64, u32, s32, f32, f64, b8, ...
	Size    int    `json:"size"`           // bytes
	Align   int    `json:"align"`          // bytes
	Pointer bool   `json:"pointer"`        // a device pointer in the CUDA source (PTX says u64)
}

// Entry is one kernel entry point (.entry) and its parameter layout.
type Entry struct {
	Name   string  `json:"name"`
	Params []Param `json:"params"`
}

// Header is the module-level facts of a PTX file.
type Header struct {
	ISA         string // .version, e.g. "9.0"
	Target      string // .target, e.g. "sm_90"
	AddressSize int    // .address_size
}

var scalarSizes = map[string]int{
	"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2,
	"b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8,
}

// ParsePTX extracts the header and the entry points of a PTX module, in the
// order they appear.
func ParsePTX(src []byte) (Header, []Entry, error) {
	var h Header
	var entries []Entry
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var cur *Entry
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case strings.HasPrefix(line, ".version "):
			h.ISA = strings.TrimSpace(strings.TrimPrefix(line, ".version "))
		case strings.HasPrefix(line, ".target "):
			h.Target = strings.TrimSpace(strings.Split(strings.TrimPrefix(line, ".target "), ",")[0])
		case strings.HasPrefix(line, ".address_size "):
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, ".address_size ")))
			if err != nil {
				return h, nil, fmt.Errorf("ptx: bad .address_size %q", line)
			}
			h.AddressSize = n
		case cur == nil && strings.Contains(line, ".entry "):
			rest := line[strings.Index(line, ".entry ")+len(".entry "):]
			name := strings.TrimSpace(strings.SplitN(rest, "(", 2)[0])
			entries = append(entries, Entry{Name: name, Params: []Param{}})
			cur = &entries[len(entries)-1]
			if strings.Contains(rest, ")") || !strings.Contains(rest, "(") {
				cur = nil // no parameters, or a declaration without a list
			}
		case cur != nil && strings.HasPrefix(line, ".param"):
			p, err := parseParam(line)
			if err != nil {
				return h, nil, fmt.Errorf("ptx: entry %s: %w", cur.Name, err)
			}
			cur.Params = append(cur.Params, p)
		case cur != nil && strings.HasPrefix(line, ")"):
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return h, nil, err
	}
	if h.ISA == "" || h.Target == "" {
		return h, nil, fmt.Errorf("ptx: missing .version or .target")
	}
	return h, entries, nil
}

// parseParam parses ".param [.align N] .type [.ptr .space .align N] name[ [n] ]".
func parseParam(line string) (Param, error) {
	fields := strings.Fields(strings.TrimSuffix(line, ","))
	var p Param
	explicitAlign := 0
	for i := 1; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == ".align" && i+1 < len(fields):
			n, err := strconv.Atoi(fields[i+1])
			if err != nil {
				return p, fmt.Errorf("bad .align in %q", line)
			}
			if p.Type == "" { // .align after the type belongs to .ptr
				explicitAlign = n
			}
			i++
		case strings.HasPrefix(f, ".") && p.Type == "":
			if sz, ok := scalarSizes[f[1:]]; ok {
				p.Type, p.Size = f[1:], sz
			}
		case !strings.HasPrefix(f, "."):
			if lb := strings.Index(f, "["); lb >= 0 {
				n, err := strconv.Atoi(strings.TrimSuffix(f[lb+1:], "]"))
				if err != nil {
					return p, fmt.Errorf("bad array size in %q", line)
				}
				p.Size *= n
			}
		}
	}
	if p.Type == "" {
		return p, fmt.Errorf("no type in %q", line)
	}
	p.Align = scalarSizes[p.Type]
	if explicitAlign > 0 {
		p.Align = explicitAlign
	}
	return p, nil
}
