package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// Fetch selects how a persistent launch (Rays.Counter or Segments.Counter
// set) hands rows to the warps of the 2- and 4-wide intersect, compact,
// trace_reflections, visible and crossings kernels.
type Fetch int

const (
	// FetchAuto picks FetchDynamic for intersect (and its compact form)
	// and crossings on every persistent launch, and for trace_reflections
	// and visible when the BVH (nodes and triangle records) is larger
	// than the device's L2 cache. Measured on an H200 (geometry-h200.json at
	// c2e04fd against 944ec92's batch kernels): compute intersect 8.73
	// against 12.3 ms, trace_reflections(4) 24.4 against 40.2 ms, visible
	// 7.06 against 8.8 ms; light intersect 0.418 against 0.499 ms. The
	// split for L2-resident scenes comes from one earlier run of both
	// kinds built from the same sources (PTX JIT, a first version of the
	// dynamic kernels): on the light scene trace_reflections(4) was
	// slower dynamically (0.70 against 0.51 ms) and visible no faster, so
	// those keep the batch kernels there. Crossings walks run to the
	// segment's end, longer than intersect's, so they fetch dynamically
	// on every scene; the crossings benchmark times both kinds (its
	// crossings_batch row).
	FetchAuto Fetch = iota
	// FetchBatch: each warp takes 32 rows at a time and runs them to the
	// end of the longest (the kernels without a suffix).
	FetchBatch
	// FetchDynamic: each lane takes a new row as soon as its own is
	// answered, a warp refilling once enough of its lanes idle (the _dyn
	// kernels; dyn_rows in ptx/src/rayd.cuh). Widths 2 and 4 only: a
	// width-8 BVH keeps the batch kernels.
	FetchDynamic
)

// String names the mode.
func (f Fetch) String() string {
	switch f {
	case FetchAuto:
		return "auto"
	case FetchBatch:
		return "batch"
	case FetchDynamic:
		return "dynamic"
	}
	return fmt.Sprintf("Fetch(%d)", int(f))
}

// dynamic reports whether a launch of b with counter (nil: not
// persistent) runs the dynamic-fetch kernels; short says the query's walks
// lose to the batch kernels on an L2-resident BVH (trace_reflections,
// visible). FetchAuto on a BVH whose device or size is unknown keeps the
// batch kernels.
func (b *BVH) dynamic(counter any, short bool) bool {
	if c, ok := counter.(*launch.Buffer[uint32]); !ok || c == nil || b.opt.Width == 8 {
		return false
	}
	switch b.opt.Fetch {
	case FetchDynamic:
		return true
	case FetchBatch:
		return false
	}
	if b.dev == nil || b.nodes == nil || b.tris == nil {
		return false
	}
	if !short {
		return true
	}
	l2 := int64(b.dev.L2Bytes())
	return l2 > 0 && int64(b.nodes.Bytes())+int64(b.tris.Bytes()) > l2
}

// walkEntry is entry(base) for a launch with counter (the second result
// of grid): the _dyn kernel when dynamic says so (short: as dynamic).
func (b *BVH) walkEntry(base string, counter any, short bool) string {
	if b.dynamic(counter, short) {
		return b.entry(base) + "_dyn"
	}
	return b.entry(base)
}

// DynamicFetch reports whether a persistent launch of intersect and
// crossings (short false) or of trace_reflections and visible (short true)
// on b runs the dynamic-fetch kernels.
func (b *BVH) DynamicFetch(short bool) bool {
	return b.dynamic(new(launch.Buffer[uint32]), short)
}
