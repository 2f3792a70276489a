package ref

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/rayd-go/rayd/geom"
)

// Errors returned by the batch operations. They are the values of package
// geom, re-exported so that callers of ref need not import geom to test them.
var (
	// ErrLength is matched by every *LengthError.
	ErrLength = geom.ErrLength
	// ErrInvalidArgument is matched by every *ArgumentError.
	ErrInvalidArgument = geom.ErrInvalidArgument
)

// LengthError names a batch slice of the wrong length (see geom.LengthError).
type LengthError = geom.LengthError

// ArgumentError names an argument outside its domain (see geom.ArgumentError).
type ArgumentError = geom.ArgumentError

// Option configures NewScene.
type Option func(*options)

type options struct {
	bruteForce bool
}

// BruteForce makes the scene test every triangle for every ray instead of
// traversing a BVH. Answers are identical; only the cost differs.
func BruteForce() Option { return func(o *options) { o.bruteForce = true } }

// triangle holds the three vertices of a global face.
type triangle [3][3]float32

// Hit is the closest accepted intersection of one ray: its parameter T, the
// barycentric weights U (of v1) and V (of v2), and the global face Prim.
type Hit struct {
	T, U, V float32
	Prim    int32
}

// Scene is the CPU reference scene over a set of geom.Tables. It copies the
// triangle geometry at construction and at Refit, so later edits of the
// tables are invisible until Refit. A Scene is safe for concurrent queries;
// Refit waits for running queries and blocks new ones while it runs.
type Scene struct {
	mu     sync.RWMutex
	tables *geom.Tables
	tris   []triangle
	masks  []uint8 // per global face: the visibility mask of its mesh
	bvh    *bvh    // nil for a brute-force scene
}

// NewScene builds a reference scene over t (which must hold at least one
// face; otherwise geom.ErrNoMeshes). Unless BruteForce is given it builds a
// BVH.
func NewScene(t *geom.Tables, opts ...Option) (*Scene, error) {
	return NewSceneContext(context.Background(), t, opts...)
}

// NewSceneContext is NewScene honouring ctx: the BVH build checks it before
// splitting every large subtree, and once ctx is done it returns no scene
// and an error wrapping ctx.Err() (errors.Is context.Canceled or
// context.DeadlineExceeded).
func NewSceneContext(ctx context.Context, t *geom.Tables, opts ...Option) (*Scene, error) {
	if t == nil || t.NumFaces() == 0 {
		return nil, geom.ErrNoMeshes
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: scene build cancelled: %w", err)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Scene{tables: t}
	s.loadTriangles()
	s.masks = t.FaceMasks()
	if !o.bruteForce {
		b, err := buildBVH(ctx, s.tris)
		if err != nil {
			return nil, fmt.Errorf("ref: scene build cancelled: %w", err)
		}
		s.bvh = b
	}
	return s, nil
}

// loadTriangles copies the vertices of every global face out of the tables.
func (s *Scene) loadTriangles() {
	n := s.tables.NumFaces()
	if cap(s.tris) < n {
		s.tris = make([]triangle, n)
	}
	s.tris = s.tris[:n]
	for f := range n {
		p0, p1, p2 := s.tables.Triangle(f)
		s.tris[f] = triangle{p0, p1, p2}
	}
}

// Refit reloads the vertices from the tables (after geom.Tables.UpdateVertices)
// and refits the BVH bounds; the tree topology is kept.
func (s *Scene) Refit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadTriangles()
	if s.bvh != nil {
		s.bvh.refit(s.tris)
	}
}

// ReloadMasks reloads the meshes' visibility masks from the tables (after
// geom.Tables.SetMask). It waits for running queries.
func (s *Scene) ReloadMasks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.masks = s.tables.FaceMasks()
}

// Tables returns the tables the scene was built on.
func (s *Scene) Tables() *geom.Tables { return s.tables }

// NumFaces is the number of triangles of the scene.
func (s *Scene) NumFaces() int { return len(s.tris) }

// IsBruteForce reports whether the scene was built with BruteForce.
func (s *Scene) IsBruteForce() bool { return s.bvh == nil }

// Closest returns the closest hit of the ray o + t·d with t ∈ [tmin, tmax]
// (inclusive): the smallest t, ties broken by the lowest global prim id.
// Faces of meshes whose visibility mask is 0 are never hit.
func (s *Scene) Closest(o, d [3]float32, tmin, tmax float32) (Hit, bool) {
	return s.ClosestMasked(o, d, tmin, tmax, geom.DefaultMask)
}

// ClosestMasked is Closest for a ray of visibility mask mask: a face counts
// only when the mask of its mesh shares a bit with mask.
func (s *Scene) ClosestMasked(o, d [3]float32, tmin, tmax float32, mask uint8) (Hit, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closestSkipping(o, d, tmin, tmax, mask, nil)
}

// AnyHit reports whether the ray o + t·d hits any triangle with
// t ∈ [tmin, tmax] (inclusive). Faces of meshes whose visibility mask is 0
// are never hit.
func (s *Scene) AnyHit(o, d [3]float32, tmin, tmax float32) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.anyHit(o, d, tmin, tmax, geom.DefaultMask)
}

func (s *Scene) closest(o, d [3]float32, tmin, tmax float32, mask uint8) (Hit, bool) {
	return s.closestSkipping(o, d, tmin, tmax, mask, nil)
}

// closestSkipping is closest with the faces listed in skip ignored.
func (s *Scene) closestSkipping(o, d [3]float32, tmin, tmax float32, mask uint8, skip []int32) (Hit, bool) {
	best := Hit{T: tmax, Prim: geom.InvalidID}
	if s.bvh == nil {
		for p := range s.tris {
			s.consider(o, d, tmin, int32(p), mask, &best, skip)
		}
	} else {
		s.closestBVH(o, d, tmin, mask, &best, skip)
	}
	return best, best.Prim >= 0
}

// visibleTo reports whether face p counts for a ray of mask mask.
func (s *Scene) visibleTo(p int32, mask uint8) bool { return s.masks[p]&mask != 0 }

// consider tests face p and keeps it if it beats best: a smaller t, or the
// same t and a lower prim id. Before the first hit any t ≤ tmax is accepted.
// Faces in skip and faces whose mesh mask shares no bit with mask are never
// hits.
func (s *Scene) consider(o, d [3]float32, tmin float32, p int32, mask uint8, best *Hit, skip []int32) {
	if !s.visibleTo(p, mask) || slices.Contains(skip, p) {
		return
	}
	tr := &s.tris[p]
	t, u, v, ok := geom.Watertight(o, d, tr[0], tr[1], tr[2], tmin, best.T)
	if !ok {
		return
	}
	if best.Prim < 0 || t < best.T || (t == best.T && p < best.Prim) {
		*best = Hit{T: t, U: u, V: v, Prim: p}
	}
}

func (s *Scene) anyHit(o, d [3]float32, tmin, tmax float32, mask uint8) bool {
	if s.bvh == nil {
		for p := range s.tris {
			if !s.visibleTo(int32(p), mask) {
				continue
			}
			tr := &s.tris[p]
			if _, _, _, ok := geom.Watertight(o, d, tr[0], tr[1], tr[2], tmin, tmax); ok {
				return true
			}
		}
		return false
	}
	return s.anyHitBVH(o, d, tmin, tmax, mask)
}

// Small float32 vector helpers; every product is rounded before the sums so
// that the Go compiler cannot contract them into FMAs.

func row3(v []float32, i int) [3]float32 { return [3]float32{v[3*i], v[3*i+1], v[3*i+2]} }

func put3(v []float32, i int, x [3]float32) { v[3*i], v[3*i+1], v[3*i+2] = x[0], x[1], x[2] }

func dot3(a, b [3]float32) float32 {
	return float32(float32(float32(a[0]*b[0])+float32(a[1]*b[1])) + float32(a[2]*b[2]))
}

func finite32(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
}
