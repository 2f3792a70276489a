package rayd

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// cpuEngine runs queries on the pure-Go reference.
type cpuEngine struct{ s *ref.Scene }

func newCPUEngine(t *geom.Tables) (engine, error) {
	s, err := ref.NewScene(t)
	if err != nil {
		return nil, err
	}
	return &cpuEngine{s: s}, nil
}

func (e *cpuEngine) intersect(ctx context.Context, r Rays, flags Flags) (*Hits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.s.Intersect(r.Origins, r.Directions, r.TMax, r.Active, flags)
}

func (e *cpuEngine) traceReflections(ctx context.Context, r Rays, b int) (*Reflections, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.s.TraceReflections(r.Origins, r.Directions, r.TMax, r.Active, b)
}

func (e *cpuEngine) visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.s.Visible(start, end, active)
}

func (e *cpuEngine) refit(ctx context.Context, _ int, _ []float32, _ *geom.Tables) error {
	e.s.Refit()
	return ctx.Err()
}

func (e *cpuEngine) close() error { return nil }
