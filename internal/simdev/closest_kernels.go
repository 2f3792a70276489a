package simdev

import (
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// closestKernel runs closest_point on the replica's reference scene (its
// vertices as of the last SyncGeometry). A row's answer depends on that row
// and the scene alone, so the placed parts of a sharded call are bitwise
// one reference run over the whole batch.
type closestKernel struct{ *shard.ClosestPoint }

func (k closestKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in, _ := rowWidths(k.Op())
	return &shard.ClosestPoint{Points: clone(s.Points, copied), MaxDist: s.MaxDist, Active: clone(s.Active, copied)},
		in * (hi - lo)
}

func (k closestKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.ClosestPoint)
	return d.scene.ClosestPoints(t.Points, t.MaxDist, t.Active)
}

func (k closestKernel) Output(out any, copied bool) (any, int) {
	r := out.(*geom.ClosestPoints)
	if copied {
		r = &geom.ClosestPoints{Dist: clone(r.Dist, true), Point: clone(r.Point, true), Bary: clone(r.Bary, true),
			ShapeID: clone(r.ShapeID, true), LocalFaceID: clone(r.LocalFaceID, true),
			GlobalFaceID: clone(r.GlobalFaceID, true)}
	}
	return r, k.OutputBytes(0, r.Len())
}

func (k closestKernel) OutputBytes(lo, hi int) int {
	_, out := rowWidths(k.Op())
	return out * (hi - lo)
}

func (closestKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
