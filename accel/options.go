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
	// the node fetches per ray); 0 ⇒ DefaultWidth.
	Width int
}

// Build defaults, chosen by host traversal statistics over the benchmark
// scenes (TestTraversalStats): with unit costs the SAH keeps the light grid's
// quads as 2-triangle leaves and splits the cloud to single triangles; the
// quad layout halves node fetches and bytes per ray on both.
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
	if o.Width != 2 && o.Width != 4 {
		return o, fmt.Errorf("accel: Options.Width %d, want 2 or 4", o.Width)
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
