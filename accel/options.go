package accel

import "fmt"

// Options tunes the build. The zero value selects the defaults.
type Options struct {
	// MaxLeafSize is the largest leaf the SAH collapse may form, 1..8
	// (0 ⇒ DefaultMaxLeafSize).
	MaxLeafSize int
	// TraversalCost is the SAH cost of visiting a node relative to one
	// triangle test (0 ⇒ DefaultTraversalCost).
	TraversalCost float32
	// IntersectCost is the SAH cost of one triangle test (0 ⇒ DefaultIntersectCost).
	IntersectCost float32
	// Width selects the node layout: 2 (child-pair nodes, full-precision
	// boxes) or 4 (quad nodes: 4 quantized boxes in the same 64 bytes, half
	// the node fetches per ray) or 8 (compressed wide nodes of 80 bytes with
	// up to eight quantized children, MaxLeafSize ≤ WideMaxLeafSize; see
	// WideNodeWords); 0 ⇒ chosen per build by AutoWidth.
	Width int
	// Fetch is how persistent launches hand rows to warps (FetchAuto:
	// by the BVH's size against L2).
	Fetch Fetch
}

// AutoWidth picks the node layout for n triangles on a device with l2Bytes
// of L2 cache. Measured on an H200 (benchmarks/results/geometry-h200.json):
// when the whole BVH (≈ 112 B per triangle) fits in L2 the traversal is
// instruction-bound and the child-pair layout, with fewer instructions per
// node step, is faster (light: 0.49 vs 0.57 ms); when it does not, the
// traversal is bound by node fetches and the quad layout, with half of them,
// wins (compute: 12.3 vs 16.4 ms). l2Bytes ≤ 0 means unknown (quad layout).
// A scene of at least AutoWideTriangles triangles that does not fit gets
// the compressed wide layout (Width 8) instead: about 40% fewer node
// fetches per ray than quad nodes and, at 80 bytes per wide node, nodes that
// fit in L2 where the quad nodes do not. A build that keeps refit data or
// asks for leaves larger than WideMaxLeafSize keeps the quad layout.
func AutoWidth(n, l2Bytes int) int {
	return autoWidth(n, l2Bytes, AutoWideTriangles)
}

// AutoWideTriangles is the smallest triangle count for which AutoWidth
// picks Width 8 over Width 4 (when the BVH does not fit in L2); 0 disables
// the wide layout in AutoWidth (an explicit Options.Width 8 still selects
// it). It stays 0 until the wide traversal is measured faster on a device
// (benchmarks/geometry reports both layouts on the compute scene).
const AutoWideTriangles = 0

func autoWidth(n, l2Bytes, wideMin int) int {
	if l2Bytes > 0 && int64(n)*bytesPerTriangle <= int64(l2Bytes) {
		return 2
	}
	if wideMin > 0 && n >= wideMin {
		return 8
	}
	return 4
}

// bytesPerTriangle is the BVH footprint per triangle: one 64-byte node per
// triangle (n−1 child-pair nodes) plus its 48-byte record.
const bytesPerTriangle = 4*NodeWords + 4*TriWords

// Build defaults, chosen by host traversal statistics over the benchmark
// scenes (BenchmarkTraversalStats): with unit costs the SAH keeps the light
// grid's quads as 2-triangle leaves and splits the cloud to single
// triangles. DefaultWidth is the layout of a host build (BuildHost) that
// names none; device builds choose with AutoWidth.
const (
	DefaultMaxLeafSize   = 4
	DefaultTraversalCost = 1.0
	DefaultIntersectCost = 1.0
	DefaultWidth         = 4
)

// withDefaults fills unset fields and validates the rest.
func (o Options) withDefaults() (Options, error) {
	if o.MaxLeafSize == 0 {
		o.MaxLeafSize = DefaultMaxLeafSize
	}
	if o.TraversalCost == 0 {
		o.TraversalCost = DefaultTraversalCost
	}
	if o.IntersectCost == 0 {
		o.IntersectCost = DefaultIntersectCost
	}
	if o.Width == 0 {
		o.Width = DefaultWidth
	}
	if o.Width != 2 && o.Width != 4 && o.Width != 8 {
		return o, fmt.Errorf("accel: Options.Width %d, want 2, 4 or 8", o.Width)
	}
	if o.Fetch < FetchAuto || o.Fetch > FetchDynamic {
		return o, fmt.Errorf("accel: Options.Fetch %v, want FetchAuto, FetchBatch or FetchDynamic", o.Fetch)
	}
	if o.Width == 8 && o.MaxLeafSize > WideMaxLeafSize {
		return o, fmt.Errorf("accel: Options.MaxLeafSize %d exceeds %d, the limit of Width 8", o.MaxLeafSize, WideMaxLeafSize)
	}
	if o.MaxLeafSize < 1 || o.MaxLeafSize > MaxLeafSize {
		return o, fmt.Errorf("accel: Options.MaxLeafSize %d not in [1,%d]", o.MaxLeafSize, MaxLeafSize)
	}
	if !(o.TraversalCost > 0) || !(o.IntersectCost > 0) {
		return o, fmt.Errorf("accel: Options costs must be positive (TraversalCost %g, IntersectCost %g)",
			o.TraversalCost, o.IntersectCost)
	}
	return o, nil
}
