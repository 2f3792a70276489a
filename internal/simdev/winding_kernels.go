package simdev

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// windingKernel runs winding_sums on the replica's reference scene (its
// vertices as of the last SyncGeometry): the exact reference sums, bound 0.
type windingKernel struct{ *shard.WindingSums }

func (k windingKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in, _ := rowWidths(k.Op())
	return &shard.WindingSums{Points: clone(s.Points, copied), Active: clone(s.Active, copied)}, in * (hi - lo)
}

func (k windingKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.WindingSums)
	return d.scene.WindingSumsContext(context.Background(), t.Points, t.Active)
}

func (k windingKernel) Output(out any, copied bool) (any, int) {
	r := out.(*geom.WindingSums)
	if copied {
		r = &geom.WindingSums{Sum: clone(r.Sum, true), Bound: clone(r.Bound, true)}
	}
	return r, k.OutputBytes(0, r.Len())
}

func (k windingKernel) OutputBytes(lo, hi int) int {
	_, out := rowWidths(k.Op())
	return out * (hi - lo)
}

func (windingKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
