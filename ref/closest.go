package ref

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

var inf64 = math.Inf(1)

// Pruning margins of the closest-point walk: a node is skipped only when
// its squared box distance exceeds the best squared distance by the
// relative margin closestSlack plus the absolute margin closestAbs·M², M
// the larger of the scene's and the query's coordinate magnitudes. Every
// candidate point lies in its face's box up to a few ulps of M, so its
// computed squared distance is at least the box bound less about 1e-19·M²
// plus a relative 1e-10: no face that could win, or tie with the winner,
// is ever skipped, and the walk answers exactly like brute force.
const (
	closestSlack = 1e-9
	closestAbs   = 1e-12
)

// closestBlockRows is the row block of the closest-point walk: its rows
// cost several times an intersect row's, so its blocks are smaller.
const closestBlockRows = 64

// nearFace is the running answer of one closest-point row.
type nearFace struct {
	tp   triPoint
	face int32
}

// ClosestPoints is ClosestPointsContext with context.Background().
func (s *Scene) ClosestPoints(points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error) {
	return s.ClosestPointsContext(context.Background(), points, maxDist, active)
}

// ClosestPointsContext finds, for each row of points (3 values per row),
// the face of the scene nearest to the point within maxDist: the face
// whose float64 squared distance d² (closestOnTriangle on the float32
// vertices, promoted exactly) is least, ties at equal d² to the lowest
// global face id, among the faces with d² ≤ maxDist² (the square of the
// float32 bound, exact in float64). maxDist ≤ 0 and maxDist = +Inf mean
// unbounded.
//
// active holds one value per row or is empty (all active). Inactive rows,
// rows with a non-finite coordinate and rows with no face within maxDist
// hold the miss record (geom.ClosestPoints). A found row holds the global
// face id, its mesh and local face id, the barycentric weights of the
// face's vertices, the closest point and the distance √d², each the float64
// result rounded once to float32.
//
// Errors: a *LengthError (ErrLength) for mismatched slices, an
// *ArgumentError (ErrInvalidArgument) for a NaN maxDist. ctx is checked
// before the result is allocated and between blocks of rows; once it is
// done the call returns no record and an error wrapping ctx.Err(). An
// empty batch returns an empty record.
func (s *Scene) ClosestPointsContext(ctx context.Context, points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error) {
	n, err := geom.CheckPoints(points, active)
	if err != nil {
		return nil, err
	}
	limit, err := geom.CheckMaxDist(maxDist)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: closest points cancelled: %w", err)
	}
	c := geom.NewClosestPointsZeroed(n) // every row is written below
	if n == 0 {
		return c, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelBlocks(ctx, "closest points", n, closestBlockRows, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.closestRow(c, i, points, limit, active)
		}
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// closestRow answers row i into c (which starts zeroed).
func (s *Scene) closestRow(c *geom.ClosestPoints, i int, points []float32, limit float64, active []bool) {
	p := row3(points, i)
	if (len(active) > 0 && !active[i]) || !geom.IsFinite3(p) {
		c.SetMiss(i)
		return
	}
	best, ok := s.nearest(widen(p), limit)
	if !ok {
		c.SetMiss(i)
		return
	}
	s.writeClosest(c, i, best)
}

// writeClosest rounds the float64 answer of row i into c.
func (s *Scene) writeClosest(c *geom.ClosestPoints, i int, b nearFace) {
	for k := range 3 {
		c.Point[3*i+k] = float32(b.tp.q[k])
		c.Bary[3*i+k] = float32(b.tp.bary[k])
	}
	c.Dist[i] = float32(math.Sqrt(b.tp.d2))
	c.GlobalFaceID[i] = b.face
	c.ShapeID[i] = s.tables.FaceShape[b.face]
	c.LocalFaceID[i] = s.tables.FaceLocal[b.face]
}

// nearest is the nearest face to p with d² ≤ limit, through the BVH or by
// brute force.
func (s *Scene) nearest(p pvec, limit float64) (nearFace, bool) {
	best := nearFace{tp: triPoint{d2: limit}, face: geom.InvalidID}
	if s.bvh == nil {
		for f := range s.tris {
			s.considerPoint(p, int32(f), &best)
		}
	} else {
		s.nearestBVH(p, &best)
	}
	return best, best.face >= 0
}

// considerPoint keeps face f if it beats best: a smaller d², or the same d²
// and a lower id. Before the first face any d² ≤ the limit is accepted.
func (s *Scene) considerPoint(p pvec, f int32, best *nearFace) {
	tr := &s.tris[f]
	tp := closestOnTriangle(p, widen(tr[0]), widen(tr[1]), widen(tr[2]))
	if tp.d2 < best.tp.d2 || (tp.d2 == best.tp.d2 && (best.face < 0 || f < best.face)) {
		*best = nearFace{tp: tp, face: f}
	}
}

// boxDist2 is the squared distance from p to the box of n (0 inside).
func boxDist2(p pvec, n *bvhNode) float64 {
	d := 0.0
	for k := range 3 {
		g := max(n.box.lo[k]-p[k], p[k]-n.box.hi[k], 0)
		d += float64(g * g)
	}
	return d
}

type pointEntry struct {
	node  int32
	bound float64
}

// nearestBVH walks the tree nearer child first and skips a node whose box
// bound exceeds the best d² by the margins above.
func (s *Scene) nearestBVH(p pvec, best *nearFace) {
	nodes := s.bvh.nodes
	m := nodes[0].mag
	for k := range 3 {
		m = max(m, math.Abs(p[k]))
	}
	abs := max(closestAbs*m*m, math.SmallestNonzeroFloat64)
	pruned := func(bound float64) bool { return bound > best.tp.d2*(1+closestSlack)+abs }
	var buf [geom.BVHStackDepth]pointEntry
	stack := append(buf[:0], pointEntry{0, boxDist2(p, &nodes[0])})
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if pruned(e.bound) {
			continue
		}
		n := &nodes[e.node]
		if n.right < 0 {
			for _, f := range s.bvh.prims[n.start : n.start+n.count] {
				s.considerPoint(p, f, best)
			}
			continue
		}
		left, right := e.node+1, n.right
		bl, br := boxDist2(p, &nodes[left]), boxDist2(p, &nodes[right])
		// Push the farther child first so that the nearer one pops first.
		if bl <= br {
			stack = append(stack, pointEntry{right, br}, pointEntry{left, bl})
		} else {
			stack = append(stack, pointEntry{left, bl}, pointEntry{right, br})
		}
	}
}
