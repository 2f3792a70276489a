package geom

import (
	"strconv"
	"strings"
)

// Flags selects which fields of an intersection record are materialized
// (spec §1.5). T is always produced; a field that is not selected has length 0.
type Flags uint32

// The RayFlags members.
const (
	// FlagsNone materializes t only.
	FlagsNone Flags = 0
	// FlagGeometric materializes p, geo_n, barycentric, shape_id, prim_id,
	// local_prim_id and global_prim_id.
	FlagGeometric Flags = 1
	// FlagShadingN materializes n.
	FlagShadingN Flags = 2
	// FlagUV materializes uv.
	FlagUV Flags = 4
	// FlagsAll materializes every field (the default of intersect).
	FlagsAll Flags = FlagGeometric | FlagShadingN | FlagUV
)

// Per-row byte sizes of the record fields (spec §1.6).
const (
	bytesT         = 4
	bytesGeometric = 12 + 12 + 12 + 4*4 // p, geo_n, barycentric, four ids
	bytesShadingN  = 12
	bytesUV        = 8
)

// Has reports whether every bit of g is set in f.
func (f Flags) Has(g Flags) bool { return f&g == g }

// Valid reports whether f uses only the bits of FlagsAll.
func (f Flags) Valid() bool { return f&^FlagsAll == 0 }

// RowBytes is the number of bytes one row of the record occupies when f
// selects its fields: 4 for FlagsNone, 56 for FlagGeometric, 16 for
// FlagShadingN, 12 for FlagUV and 76 for FlagsAll. Bits outside FlagsAll
// are ignored.
func (f Flags) RowBytes() int {
	n := bytesT
	if f.Has(FlagGeometric) {
		n += bytesGeometric
	}
	if f.Has(FlagShadingN) {
		n += bytesShadingN
	}
	if f.Has(FlagUV) {
		n += bytesUV
	}
	return n
}

// String spells f as its member names joined by "|" ("None", "All",
// "Geometric|UV"); bits outside FlagsAll are appended in hexadecimal.
func (f Flags) String() string {
	switch f {
	case FlagsNone:
		return "None"
	case FlagsAll:
		return "All"
	}
	var parts []string
	for _, m := range []struct {
		bit  Flags
		name string
	}{{FlagGeometric, "Geometric"}, {FlagShadingN, "ShadingN"}, {FlagUV, "UV"}} {
		if f.Has(m.bit) {
			parts = append(parts, m.name)
		}
	}
	if extra := f &^ FlagsAll; extra != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(uint64(extra), 16))
	}
	return strings.Join(parts, "|")
}
