package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// ModuleWinding is the PTX module of the winding sums
// (ptx/src/winding.cu).
const ModuleWinding = "winding"

// windingThreads is WIND_THREADS of winding.cu (one point per thread, one
// face per thread in each shared-memory tile).
const windingThreads = 128

// WindingPoints is a device-resident batch of N query points for
// WindingSums.
type WindingPoints struct {
	P      *launch.Buffer[float32] // 3N
	Active *launch.Buffer[uint8]   // N or nil (all active)
	N      int
}

// WindingOut is the device record of WindingSums: N float64 sums and N
// bounds. Both are required.
type WindingOut struct {
	Sum, Bound *launch.Buffer[float64]
}

// WindingSums queues the winding sums of the BVH's geometry (its vertices
// as of the last build or refit, faces in global order) on s: per point the
// float64 sum of every face's signed solid angle with the reference's
// operations and order (ref.Scene.WindingSumsContext), and a bound of its
// distance from the reference's sum (atan2 is the device's; see
// winding.cu). Inactive and non-finite rows get a NaN sum and bound 0. The
// work is N × faces solid angles, one thread per point, no BVH.
func (b *BVH) WindingSums(s *launch.Stream, q WindingPoints, out WindingOut) error {
	return b.windingSums(streamRunner{s}, q, out)
}

func (b *BVH) windingSums(run runner, q WindingPoints, out WindingOut) error {
	if q.N < 0 || q.N > 1<<31-1-windingThreads {
		return fmt.Errorf("accel: point count %d out of range", q.N)
	}
	if q.P == nil || out.Sum == nil || out.Bound == nil {
		return fmt.Errorf("accel: WindingPoints.P, WindingOut.Sum and WindingOut.Bound are required")
	}
	n := q.N
	if err := firstErr(needLen("WindingPoints.P", q.P, 3*n), needLen("WindingPoints.Active", q.Active, n),
		needLen("WindingOut.Sum", out.Sum, n), needLen("WindingOut.Bound", out.Bound, n)); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return b.launchWinding(run, q, out)
}

func (b *BVH) launchWinding(run runner, q WindingPoints, out WindingOut) error {
	if b.geo.Vertices == nil || b.geo.Faces == nil {
		return fmt.Errorf("accel: the BVH holds no geometry")
	}
	n := q.N
	g, blk := threads1D(n, windingThreads)
	return run.launch(ModuleWinding, "rayd_winding_sums", g, blk, b.geo.Vertices, b.geo.Faces, int32(b.numTris),
		q.P, nullable(q.Active), int32(n), out.Sum, out.Bound)
}
