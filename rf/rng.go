package rf

// Random numbers and lane mappings (spec §6.1, §6.2, §6.4, §7.2). Everything
// here is integer arithmetic on uint32 (wrap-around multiplication, logical
// shifts), so a CUDA kernel written with unsigned int reproduces it bit for
// bit.

// Golden is the stream multiplier 0x9e3779b9 (⌊2³²/φ⌋).
const Golden uint32 = 0x9e3779b9

// Random streams of accum_dfr_direct.
const (
	// StreamEdge draws the edge parameter u of every lane.
	StreamEdge uint32 = 0
	// StreamKeller draws the Keller-cone angle φ = 2π·U of a Keller lane.
	StreamKeller uint32 = 1
	// StreamSuffix keys the face choice of a suffix lane (SuffixHash).
	StreamSuffix uint32 = 17
)

// Hash is the 32-bit integer finalizer of the diffraction kernels:
//
//	x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16
//
// with uint32 wrap-around multiplication and logical shifts.
func Hash(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

// Uniform is U(lane, stream, seed) = (Hash(lane ^ (stream·Golden) ^ seed) &
// 0xFFFFFF) / 2²⁴, a 24-bit uniform in [0, 1). The product stream·Golden
// wraps in uint32. The result is exact in float32 (the CUDA kernel computes
// float(h & 0xFFFFFF) * (1.f/16777216.f), which is exact too).
func Uniform(lane, stream, seed uint32) float32 {
	h := Hash(lane ^ (stream * Golden) ^ seed)
	return float32(h&0xFFFFFF) * (1.0 / 16777216.0)
}

// SuffixHash is the hash that picks the reflecting face of a suffix lane:
// Hash(lane ^ (17·Golden) ^ seed) (17·Golden = 0x81af1549 in uint32). The
// face is candidate SuffixHash % count among the valid candidates.
func SuffixHash(lane, seed uint32) uint32 {
	stream := StreamSuffix
	return Hash(lane ^ (stream * Golden) ^ seed)
}

// LaneKind is the sampling strategy of a global lane of accum_dfr_direct.
type LaneKind int

// Lane kinds, in lane-space order: lanes [0, D) are direct, [D, D+K) Keller,
// [D+K, D+K+X) suffix.
const (
	LaneDirect LaneKind = iota
	LaneKeller
	LaneSuffix
)

// String names the kind.
func (k LaneKind) String() string {
	switch k {
	case LaneDirect:
		return "direct"
	case LaneKeller:
		return "keller"
	case LaneSuffix:
		return "suffix"
	}
	return "invalid"
}

// KindOf is the kind of global lane g for D direct and K Keller samples.
func KindOf(g uint32, direct, keller int) LaneKind {
	switch {
	case int64(g) < int64(direct):
		return LaneDirect
	case int64(g) < int64(direct)+int64(keller):
		return LaneKeller
	}
	return LaneSuffix
}

// DirectLane maps global lane g of accum_dfr_direct to its state
// s = g mod S and its default cell (g div S) mod C (a Keller lane replaces
// the cell by the one its cone sample hits). S and C must be positive.
func DirectLane(g uint32, stateCount, cells int) (s, cell int) {
	S, C := uint32(stateCount), uint32(cells)
	return int(g % S), int((g / S) % C)
}

// CoherentLane maps global lane g of accum_dfr_coherent_direct (lane space
// S·C) to its state s = g mod S and cell g div S.
func CoherentLane(g uint32, stateCount int) (s, cell int) {
	S := uint32(stateCount)
	return int(g % S), int(g / S)
}

// PathLane maps global lane g of trace_dfr_paths (lane space T·R·M) to its
// state s = g mod M, receiver rx = (g div M) mod R and transmitter
// tx = (g div M) div R. The SourceLane layout writes lane g to row g.
func PathLane(g uint32, stateLimit, rxCount int) (tx, rx, s int) {
	M, R := uint32(stateLimit), uint32(rxCount)
	pair := g / M
	return int(pair / R), int(pair % R), int(g % M)
}

// ResolveWindow resolves a lane window (spec §6.2) over a lane space of
// total lanes: it returns the number of lanes n the window runs, lanes
// [offset, offset+n). count < 0 selects every lane from offset on. Errors
// (ErrLaneWindow, with RayD's messages): offset < 0, offset > total, or
// offset + count > total.
func ResolveWindow(offset, count, total int) (int, error) {
	return resolveWindow("lane_window", offset, count, total)
}

func resolveWindow(op string, offset, count, total int) (int, error) {
	if offset < 0 {
		return 0, newErr(op, "lane_offset", ErrLaneWindow, "lane_offset must be non-negative. (got %d)", offset)
	}
	if offset > total {
		return 0, newErr(op, "lane_offset", ErrLaneWindow,
			"lane_offset must not exceed the total sample count. (%d > %d)", offset, total)
	}
	rest := total - offset
	if count < 0 {
		return rest, nil
	}
	if count > rest {
		return 0, newErr(op, "lane_count", ErrLaneWindow,
			"lane_offset + lane_count must not exceed the total sample count. (%d + %d > %d)", offset, count, total)
	}
	return count, nil
}
