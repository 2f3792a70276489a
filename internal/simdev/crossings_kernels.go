package simdev

import (
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// crossingsKernel runs the crossings query on the device's reference scene.
type crossingsKernel struct{ *shard.Crossings }

func (k crossingsKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in, _ := rowWidths(k.Op())
	return &shard.Crossings{Start: clone(s.Start, copied), End: clone(s.End, copied), Active: clone(s.Active, copied), K: s.K},
		in * (hi - lo)
}

func (k crossingsKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.Crossings)
	return d.scene.Crossings(t.Start, t.End, t.Active, t.K)
}

func (k crossingsKernel) Output(out any, copied bool) (any, int) {
	r := out.(*geom.Crossings)
	if copied {
		r = &geom.Crossings{K: r.K, T: clone(r.T, true), Prim: clone(r.Prim, true), Shape: clone(r.Shape, true),
			Count: clone(r.Count, true), Overflow: clone(r.Overflow, true)}
	}
	return r, k.OutputBytes(0, r.Rows())
}

// OutputBytes is K slots and the count and overflow per row.
func (k crossingsKernel) OutputBytes(lo, hi int) int {
	_, out := rowWidths(k.Op())
	return out * (hi - lo)
}

func (crossingsKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
