package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/launch"
)

// ModuleClosest is the PTX module of the closest-point query
// (ptx/src/closest.cu).
const ModuleClosest = "closest"

// ClosestPoints is a device-resident batch of N query points for
// ClosestPoint.
type ClosestPoints struct {
	P      *launch.Buffer[float32] // 3N
	Active *launch.Buffer[uint8]   // N or nil (all active)
	N      int
	// Limit is the squared distance bound in float64 (+Inf: unbounded).
	Limit float64
	// Counter and PersistentBlocks as Rays.Counter and Rays.PersistentBlocks.
	Counter          *launch.Buffer[uint32]
	PersistentBlocks int
}

// ClosestOut is the device record of ClosestPoint: N rows of Distance,
// ShapeID, LocalFaceID and GlobalFaceID, 3N of Point and Bary. Every field
// is required.
type ClosestOut struct {
	Distance, Point, Bary              *launch.Buffer[float32]
	ShapeID, LocalFaceID, GlobalFaceID *launch.Buffer[int32]
}

// ClosestPoint queues the closest-point query on s: for every point the
// face of least float64 squared distance d² ≤ Limit, ties to the lowest
// global face id, exactly as ref.Scene.ClosestPoints (bit for bit); an
// inactive, non-finite or unmatched row gets the miss record (distance
// +Inf, zero point and weights, ids −1).
func (b *BVH) ClosestPoint(s *launch.Stream, q ClosestPoints, out ClosestOut) error {
	return b.closest(streamRunner{s}, q, out, false)
}

// ClosestPointBrute is ClosestPoint by a scan of every triangle (for tests:
// the walk must give the identical record). Counter is ignored.
func (b *BVH) ClosestPointBrute(s *launch.Stream, q ClosestPoints, out ClosestOut) error {
	return b.closest(streamRunner{s}, q, out, true)
}

func (b *BVH) closest(run runner, q ClosestPoints, out ClosestOut, brute bool) error {
	if q.N < 0 || q.N > 1<<31-1-31 {
		return fmt.Errorf("accel: point count %d out of range", q.N)
	}
	if q.P == nil || out.Distance == nil || out.Point == nil || out.Bary == nil || out.ShapeID == nil ||
		out.LocalFaceID == nil || out.GlobalFaceID == nil {
		return fmt.Errorf("accel: ClosestPoints.P and every ClosestOut field are required")
	}
	if math.IsNaN(q.Limit) || q.Limit < 0 {
		return fmt.Errorf("accel: squared distance bound %v", q.Limit)
	}
	n := q.N
	if err := firstErr(needLen("ClosestPoints.P", q.P, 3*n), needLen("ClosestPoints.Active", q.Active, n),
		needLen("ClosestOut.Distance", out.Distance, n), needLen("ClosestOut.Point", out.Point, 3*n),
		needLen("ClosestOut.Bary", out.Bary, 3*n), needLen("ClosestOut.ShapeID", out.ShapeID, n),
		needLen("ClosestOut.LocalFaceID", out.LocalFaceID, n), needLen("ClosestOut.GlobalFaceID", out.GlobalFaceID, n),
		needLen("ClosestPoints.Counter", q.Counter, 1)); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return b.launchClosest(run, q, out, brute)
}

func (b *BVH) launchClosest(run runner, q ClosestPoints, out ClosestOut, brute bool) error {
	if b.opt.Width == 8 && !brute {
		return fmt.Errorf("closest point on width %d: %w", b.opt.Width, ErrWidth)
	}
	entry := b.entry("rayd_closest_point")
	counter := q.Counter
	if brute {
		entry, counter = "rayd_closest_point_brute", nil
	}
	g, c, err := b.grid(run, q.N, counter, q.PersistentBlocks)
	if err != nil {
		return err
	}
	return run.launch(ModuleClosest, entry, g, launch.Threads(TraceThreads), b.nodes, b.tris, int32(b.numTris),
		q.P, nullable(q.Active), int32(q.N), math.Float64bits(q.Limit), out.Distance, out.Point, out.Bary,
		out.ShapeID, out.LocalFaceID, out.GlobalFaceID, c)
}
