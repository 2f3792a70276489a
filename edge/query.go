package edge

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/par"
)

// PointResult is the NearestPointEdge record of spec §5.1, one row per
// query point. EdgePoint holds 3 values per row. A miss has Distance +Inf,
// EdgePoint and EdgeT 0 and all ids −1.
type PointResult struct {
	Distance     []float32
	EdgePoint    []float32
	EdgeT        []float32
	ShapeID      []int32
	EdgeID       []int32
	GlobalEdgeID []int32
}

// Len is the number of rows.
func (r *PointResult) Len() int { return len(r.Distance) }

// Valid reports whether row i found an edge.
func (r *PointResult) Valid(i int) bool { return r.GlobalEdgeID[i] >= 0 }

// NewPointResult returns n miss rows.
func NewPointResult(n int) *PointResult {
	r := &PointResult{
		Distance:     make([]float32, n),
		EdgePoint:    make([]float32, 3*n),
		EdgeT:        make([]float32, n),
		ShapeID:      make([]int32, n),
		EdgeID:       make([]int32, n),
		GlobalEdgeID: make([]int32, n),
	}
	setMisses(r.Distance, r.ShapeID, r.EdgeID, r.GlobalEdgeID)
	return r
}

// RayResult is the NearestRayEdge record of spec §5.2, one row per ray.
// Point (= o + RayT·d) and EdgePoint hold 3 values per row. A miss has
// Distance +Inf, RayT, EdgeT and the vectors 0 and all ids −1.
type RayResult struct {
	Distance     []float32
	RayT         []float32
	Point        []float32
	EdgeT        []float32
	EdgePoint    []float32
	ShapeID      []int32
	EdgeID       []int32
	GlobalEdgeID []int32
}

// Len is the number of rows.
func (r *RayResult) Len() int { return len(r.Distance) }

// Valid reports whether row i found an edge.
func (r *RayResult) Valid(i int) bool { return r.GlobalEdgeID[i] >= 0 }

// NewRayResult returns n miss rows.
func NewRayResult(n int) *RayResult {
	r := &RayResult{
		Distance:     make([]float32, n),
		RayT:         make([]float32, n),
		Point:        make([]float32, 3*n),
		EdgeT:        make([]float32, n),
		EdgePoint:    make([]float32, 3*n),
		ShapeID:      make([]int32, n),
		EdgeID:       make([]int32, n),
		GlobalEdgeID: make([]int32, n),
	}
	setMisses(r.Distance, r.ShapeID, r.EdgeID, r.GlobalEdgeID)
	return r
}

// TopK is the NearestEdgesTopK record of spec §5.3: N rows of K slots,
// slot j of row i at index i*K+j (vectors at 3*(i*K+j)). Valid slots are
// ordered by ascending (distance², global edge id); Point repeats the query
// point. Invalid slots have Valid false, Distance +Inf, ids −1, Boundary
// false and zero vectors and parameters.
type TopK struct {
	K            int
	Valid        []bool
	Distance     []float32
	Point        []float32
	EdgeT        []float32
	EdgePoint    []float32
	ShapeID      []int32
	EdgeID       []int32
	GlobalEdgeID []int32
	Boundary     []bool
}

// Len is the number of rows N.
func (r *TopK) Len() int {
	if r.K == 0 {
		return 0
	}
	return len(r.Valid) / r.K
}

// NewTopK returns n rows of k invalid slots.
func NewTopK(n, k int) *TopK {
	m := n * k
	r := &TopK{
		K:            k,
		Valid:        make([]bool, m),
		Distance:     make([]float32, m),
		Point:        make([]float32, 3*m),
		EdgeT:        make([]float32, m),
		EdgePoint:    make([]float32, 3*m),
		ShapeID:      make([]int32, m),
		EdgeID:       make([]int32, m),
		GlobalEdgeID: make([]int32, m),
		Boundary:     make([]bool, m),
	}
	setMisses(r.Distance, r.ShapeID, r.EdgeID, r.GlobalEdgeID)
	return r
}

// setMisses writes the miss sentinels of spec §0.3 into fresh result
// slices: distance +Inf and ids −1 (vectors and parameters stay 0).
func setMisses(dist []float32, ids ...[]int32) {
	for i := range dist {
		dist[i] = float32(math.Inf(1))
	}
	for _, id := range ids {
		for i := range id {
			id[i] = geom.InvalidID
		}
	}
}

// checkPoints validates the scene and a point batch and returns N.
func (s *Scene) checkPoints(p []float32, active []bool) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return CheckPointBatch(p, active)
}

// CheckPointBatch validates a point batch alone (whole rows of 3, an active
// slice of N or none) and returns N. A device implementation whose copy of
// the edge table was validated when it was built runs this per query
// instead of the O(E) check of the scene.
func CheckPointBatch(p []float32, active []bool) (int, error) {
	n, err := rows3("p", p)
	if err != nil {
		return 0, err
	}
	if err := checkLen("active", len(active), n, 1, true); err != nil {
		return 0, err
	}
	return n, nil
}

// nearestPoint is the brute-force scan of one point: the enabled edge of
// least squared distance, ties to the lowest id; id −1 if none.
func (s *Scene) nearestPoint(p vec) (id int, sBest float64, q vec, d2 float64) {
	id, d2 = -1, math.Inf(1)
	for i := range s.Edges.Len() {
		if !s.enabled(i) {
			continue
		}
		a, b := s.endpoints(i)
		si, qi, di := pointSegment(p, a, b)
		if di < d2 {
			id, sBest, q, d2 = i, si, qi, di
		}
	}
	return id, sBest, q, d2
}

// NearestPoint finds, for every point of p (3 values per row), the nearest
// enabled edge (spec §5.1) by brute force. active is nil or holds one entry
// per row; inactive rows and rows with a non-finite coordinate are misses,
// as is every row of a scene without enabled edges. Distances are computed
// in float64; ties go to the lowest global edge id.
func (s *Scene) NearestPoint(p []float32, active []bool) (*PointResult, error) {
	return s.NearestPointContext(context.Background(), p, active)
}

// NearestPointContext is NearestPoint honouring ctx: checked before the
// result is allocated, after the index is built and between blocks of
// rows; once ctx is done it returns no result and an error wrapping
// ctx.Err().
func (s *Scene) NearestPointContext(ctx context.Context, p []float32, active []bool) (*PointResult, error) {
	n, err := s.checkPoints(p, active)
	if err != nil {
		return nil, err
	}
	if err := cancelled(ctx, "nearest_edge(point)"); err != nil {
		return nil, err
	}
	r := NewPointResult(n)
	find := s.nearestPoint
	if x := s.indexFor(n); x != nil {
		find = x.nearestPoint
	}
	if err := parallelRows(ctx, "nearest_edge(point)", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pi, ok := load3(p, i)
			if !ok || (len(active) != 0 && !active[i]) {
				continue
			}
			id, sp, q, d2 := find(pi)
			if id < 0 {
				continue
			}
			r.Distance[i] = float32(math.Sqrt(d2))
			store3(r.EdgePoint, i, q)
			r.EdgeT[i] = float32(sp)
			r.ShapeID[i], r.EdgeID[i], r.GlobalEdgeID[i] = s.Edges.ShapeID[id], s.Edges.LocalID[id], int32(id)
		}
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// rayLimit returns the query range of row i: tmax (clamped at 0) when
// finite, +Inf when tmax is absent or +Inf; ok is false for NaN.
func rayLimit(tmax []float32, i int) (float64, bool) {
	if len(tmax) == 0 {
		return math.Inf(1), true
	}
	t := float64(tmax[i])
	if math.IsNaN(t) {
		return 0, false
	}
	if math.IsInf(t, 1) {
		return t, true
	}
	return max(t, 0), true
}

// NearestRay finds, for every ray (o, d, tmax), the enabled edge closest to
// the ray's query set (spec §5.2, CUDA backend semantics): the segment
// o + t·d, t ∈ [0, max(tmax,0)] for a finite tmax, the half ray t ≥ 0 for
// tmax +Inf or absent. o and d hold 3 values per row, tmax and active one
// or none. Directions are not normalized. Inactive rows and rows with a
// non-finite o or d or a NaN tmax are misses. Ties go to the lowest global
// edge id.
func (s *Scene) NearestRay(o, d, tmax []float32, active []bool) (*RayResult, error) {
	return s.NearestRayContext(context.Background(), o, d, tmax, active)
}

// NearestRayContext is NearestRay honouring ctx (see NearestPointContext).
func (s *Scene) NearestRayContext(ctx context.Context, o, d, tmax []float32, active []bool) (*RayResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	n, err := geom.CheckRays(o, d, tmax, active)
	if err != nil {
		return nil, err
	}
	if err := cancelled(ctx, "nearest_edge(ray)"); err != nil {
		return nil, err
	}
	r := NewRayResult(n)
	find := s.nearestRay
	if x := s.indexFor(n); x != nil {
		find = x.nearestRay
	}
	if err := parallelRows(ctx, "nearest_edge(ray)", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			oi, ok1 := load3(o, i)
			di, ok2 := load3(d, i)
			T, ok3 := rayLimit(tmax, i)
			if !ok1 || !ok2 || !ok3 || (len(active) != 0 && !active[i]) {
				continue
			}
			id, t, se, d2 := find(oi, di, T)
			if id < 0 {
				continue
			}
			a, b := s.endpoints(id)
			r.Distance[i] = float32(math.Sqrt(d2))
			r.RayT[i] = float32(t)
			store3(r.Point, i, axpy(t, di, oi))
			r.EdgeT[i] = float32(se)
			store3(r.EdgePoint, i, axpy(se, sub(b, a), a))
			r.ShapeID[i], r.EdgeID[i], r.GlobalEdgeID[i] = s.Edges.ShapeID[id], s.Edges.LocalID[id], int32(id)
		}
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// blockRows is the number of rows a goroutine takes at a time; the
// context is checked between blocks.
const blockRows = 512

// parallelRows runs fn over blocks of [0, n) on up to GOMAXPROCS goroutines
// and stops starting blocks once ctx is done (the error names op and wraps
// ctx.Err()).
func parallelRows(ctx context.Context, op string, n int, fn func(lo, hi int)) error {
	if err := par.Rows(ctx, n, blockRows, fn); err != nil {
		return fmt.Errorf("edge: %s cancelled: %w", op, err)
	}
	return nil
}

// cancelled is the error of a call whose context is already done, or nil.
func cancelled(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("edge: %s cancelled: %w", op, err)
	}
	return nil
}

// indexWork is the query work (rows × edges) above which a query builds an
// Index instead of scanning every edge for every row.
const indexWork = 1 << 15

// indexFor returns a fresh Index when n rows make it pay, else nil.
func (s *Scene) indexFor(n int) *Index {
	if n*s.Edges.Len() < indexWork {
		return nil
	}
	return NewIndex(s)
}

// nearestK is the brute-force top-k scan of one point.
func (s *Scene) nearestK(p vec, k int, best []kslot) []kslot {
	best = best[:0]
	for id := range s.Edges.Len() {
		if s.enabled(id) {
			a, b := s.endpoints(id)
			si, qi, di := pointSegment(p, a, b)
			best = insertK(best, k, kslot{d2: di, s: si, id: id, q: qi})
		}
	}
	return best
}

func (s *Scene) nearestRay(o, d vec, tmax float64) (id int, t, se, d2 float64) {
	id, d2 = -1, math.Inf(1)
	for i := range s.Edges.Len() {
		if !s.enabled(i) {
			continue
		}
		a, b := s.endpoints(i)
		ti, si, di := raySegment(o, d, tmax, a, b)
		if di < d2 {
			id, t, se, d2 = i, ti, si, di
		}
	}
	return id, t, se, d2
}

// NearestK finds, for every point of p, the k nearest enabled edges
// (spec §5.3), 1 ≤ k ≤ MaxK, ordered by ascending (distance², global edge
// id). Rows with fewer than k enabled edges leave the trailing slots
// invalid; inactive rows and rows with a non-finite coordinate have every
// slot invalid. k outside [1, MaxK] is a *geom.ArgumentError.
func (s *Scene) NearestK(p []float32, k int, active []bool) (*TopK, error) {
	return s.NearestKContext(context.Background(), p, k, active)
}

// NearestKContext is NearestK honouring ctx (see NearestPointContext). The
// record of N × k slots is checked against geom.HostMemoryLimit() before it
// is allocated (CheckTopK).
func (s *Scene) NearestKContext(ctx context.Context, p []float32, k int, active []bool) (*TopK, error) {
	if err := CheckK(k); err != nil {
		return nil, err
	}
	n, err := s.checkPoints(p, active)
	if err != nil {
		return nil, err
	}
	if err := CheckTopK(n, k, geom.HostMemoryLimit()); err != nil {
		return nil, err
	}
	if err := cancelled(ctx, "nearest_edges"); err != nil {
		return nil, err
	}
	r := NewTopK(n, k)
	find := s.nearestK
	if x := s.indexFor(n); x != nil {
		find = x.nearestK
	}
	if err := parallelRows(ctx, "nearest_edges", n, func(lo, hi int) {
		best := make([]kslot, 0, k)
		for i := lo; i < hi; i++ {
			pi, ok := load3(p, i)
			if !ok || (len(active) != 0 && !active[i]) {
				continue
			}
			best = find(pi, k, best)
			for j, b := range best {
				x := i*k + j
				r.Valid[x] = true
				r.Distance[x] = float32(math.Sqrt(b.d2))
				store3(r.Point, x, pi)
				r.EdgeT[x] = float32(b.s)
				store3(r.EdgePoint, x, b.q)
				r.ShapeID[x], r.EdgeID[x], r.GlobalEdgeID[x] = s.Edges.ShapeID[b.id], s.Edges.LocalID[b.id], int32(b.id)
				r.Boundary[x] = s.Edges.IsBoundary(b.id)
			}
		}
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// CheckK validates the k of NearestK.
func CheckK(k int) error {
	if k < 1 || k > MaxK {
		return &geom.ArgumentError{Field: "k", Reason: fmt.Sprintf("%d not in [1,%d]", k, MaxK)}
	}
	return nil
}

// TopKSlotBytes is the size of one slot of a TopK record (valid 1,
// distance 4, point 12, edge_t 4, edge_point 12, three ids 12, boundary 1).
const TopKSlotBytes = 46

// CheckTopK validates a nearest_edges request before anything is
// allocated: k by CheckK, n ≥ 0, and a record of n × k slots of
// TopKSlotBytes within limit bytes (pass geom.HostMemoryLimit() for the
// host record, the device's free memory for a device one). Errors: an
// *geom.ArgumentError (geom.ErrInvalidArgument) or a *geom.AllocationError
// (geom.ErrTooLarge).
func CheckTopK(n, k int, limit int64) error {
	if err := CheckK(k); err != nil {
		return err
	}
	_, err := geom.CheckAlloc("nearest_edges record", limit, n, k, TopKSlotBytes)
	return err
}
