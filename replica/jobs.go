package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// job is a per_ray task normalised for the replica: the columns of its
// inputs and outputs, where they live, the launch that maps a chunk's
// input columns to its output columns, and the record made of them. Host
// jobs (the shard package's tasks) carry host slices and return host
// records; device jobs (this package's Device* tasks) carry the caller's
// buffers on the master and the caller's stream, and return views.
type job struct {
	key     string // the operation key, for errors
	in, out layout

	// host holds a host job's inputs.
	host hostIn
	// vertices is the scene vertex count a backward pass was given (its
	// vertex partial has 3 per vertex), checked against the replica's
	// scene; −1 for the other tasks.
	vertices int
	// edges marks a launch that reads the replica's edge BVH.
	edges bool

	// run queues the query for n rows of in, writing out, on s.
	run func(k kernels, s *launch.Stream, in, out columns, n int) error
	// record downloads the outputs of rows [lo, hi) on s into the task's
	// host record (host jobs).
	record func(s *launch.Stream, out columns, lo, hi int) (any, error)

	// Device jobs: the caller's buffers and stream, and the record viewing
	// the outputs.
	device        bool
	devIn, devOut columns
	stream        *launch.Stream
	view          func(out columns) any
}

// kernels are the replica's structures a launch reads: its triangle BVH,
// its edge BVH (jobs with edges set only) and the persistent-launch counter
// of the launch stream.
type kernels struct {
	bvh     *accel.BVH
	edges   *accel.EdgeBVH
	counter *launch.Buffer[uint32]
}

// rays is the ray batch of n rows of in (origins or segment starts,
// directions or segment ends, optional tmax and active mask, and the
// optional per-ray limits of limitsLayout), persistent on the stream's
// counter.
func (k kernels) rays(in columns, n int) accel.Rays {
	r := accel.Rays{O: in.f32[0], D: in.f32[1], TMax: in.f32[2], Active: in.u8[0], N: n, Counter: k.counter}
	if len(in.f32) > 3 {
		r.TMin = in.f32[3]
	}
	if len(in.u8) > 1 {
		r.Mask = in.u8[1]
	}
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Column names of the inputs of the host tasks and of the device tasks.
var (
	hostRayNames = [4]string{"o", "d", "tmax", "active"}
	hostSegNames = [4]string{"start", "end", "tmax", "active"}
	devRayNames  = [4]string{"Rays.O", "Rays.D", "Rays.TMax", "Rays.Active"}
	devSegNames  = [4]string{"Segments.Start", "Segments.End", "tmax", "Segments.Active"}
)

// rayLayout is the input layout of the ray queries: origins (segment
// starts), directions (segment ends), optional tmax and optional active
// mask.
func rayLayout(names [4]string, tmax, active bool) layout {
	return layout{
		f32: []spec{col(names[0], 3), col(names[1], 3), col(names[2], b2i(tmax))},
		u8:  []spec{col(names[3], b2i(active))},
	}
}

// hostRays is the host input of a ray query.
func hostRays(o, d, tmax []float32, active []bool) hostIn {
	return hostIn{f32: [][]float32{o, d, tmax}, u8: [][]bool{active}}
}

// jobOf normalises a task, or refuses a task this package has no kernel for.
func jobOf(t shard.Task) (*job, error) {
	switch t := t.(type) {
	case *shard.Intersect:
		j := intersectJob(t.Flags, limitsLayout(rayLayout(hostRayNames, len(t.TMax) > 0, len(t.Active) > 0),
			len(t.TMin) > 0, len(t.Mask) > 0))
		j.host = hostLimits(hostRays(t.O, t.D, t.TMax, t.Active), t.TMin, t.Mask)
		return j, nil
	case *shard.TraceReflections:
		j := reflectJob(t.Bounces, true, limitsLayout(rayLayout(hostRayNames, len(t.TMax) > 0, len(t.Active) > 0),
			len(t.TMin) > 0, len(t.Mask) > 0))
		j.host = hostLimits(hostRays(t.O, t.D, t.TMax, t.Active), t.TMin, t.Mask)
		return j, nil
	case *shard.Visible:
		j := visibleJob(rayLayout(hostSegNames, false, len(t.Active) > 0))
		j.host = hostRays(t.Start, t.End, nil, t.Active)
		return j, nil
	case *shard.NearestEdge:
		return nearestEdgeJob(t), nil
	case *shard.NearestEdgeRay:
		return nearestEdgeRayJob(t), nil
	case *shard.NearestEdges:
		return nearestEdgesJob(t), nil
	case *shard.Crossings:
		return crossingsJob(t), nil
	case *shard.ClosestPoint:
		return closestPointJob(t), nil
	case *shard.WindingSums:
		return windingSumsJob(t), nil
	case *shard.IntersectVJP:
		return intersectVJPJob(t), nil
	case *shard.NearestEdgeVJP:
		return edgePointVJPJob(t), nil
	case *shard.NearestEdgeRayVJP:
		return edgeRayVJPJob(t), nil
	case shard.SegmentTask:
		return segmentJob(t)
	case *DeviceIntersect:
		j := intersectJob(t.Flags, t.inLayout())
		j.device, j.devIn, j.devOut, j.stream = true, raysCols(t.Rays), hitsCols(t.Out), t.Stream
		return j, nil
	case *DeviceReflections:
		j := reflectJob(t.Bounces, t.Out.Images != nil, t.inLayout())
		j.device, j.devIn, j.devOut, j.stream = true, raysCols(t.Rays), reflCols(t.Out), t.Stream
		return j, nil
	case *DeviceVisible:
		j := visibleJob(t.inLayout())
		j.device, j.stream = true, t.Stream
		j.devIn = raysCols(accel.Rays{O: t.Segments.Start, D: t.Segments.End, Active: t.Segments.Active})
		j.devOut = columns{u8: []*launch.Buffer[uint8]{t.Out}}
		return j, nil
	}
	return nil, fmt.Errorf("replica: no CUDA kernel for task %T: %w", t, shard.ErrUnsupported)
}

// hitsLayout is the output layout of intersect for flags, in the order of
// accel.Hits.
func hitsLayout(flags geom.Flags) layout {
	g, sh, uv := b2i(flags.Has(geom.FlagGeometric)), b2i(flags.Has(geom.FlagShadingN)), b2i(flags.Has(geom.FlagUV))
	return layout{
		f32: []spec{col("Out.T", 1), col("Out.P", 3*g), col("Out.N", 3*sh), col("Out.GeoN", 3*g), col("Out.UV", 2*uv),
			col("Out.Bary", 3*g)},
		i32: []spec{col("Out.ShapeID", g), col("Out.PrimID", g), col("Out.LocalPrimID", g), col("Out.GlobalPrimID", g)},
	}
}

// reflLayout is the output layout of trace_reflections with b bounces.
func reflLayout(b int, images bool) layout {
	return layout{
		f32: []spec{col("Out.T", b), col("Out.Images", 3*b*b2i(images))},
		i32: []spec{col("Out.Prim", b)},
		u8:  []spec{col("Out.Valid", b)},
	}
}

// visLayout is the output layout of visible.
func visLayout() layout { return layout{u8: []spec{col("Out", 1)}} }

func raysCols(r accel.Rays) columns {
	return columns{f32: []*launch.Buffer[float32]{r.O, r.D, r.TMax}, u8: []*launch.Buffer[uint8]{r.Active}}
}

func hitsCols(h accel.Hits) columns {
	return columns{
		f32: []*launch.Buffer[float32]{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary},
		i32: []*launch.Buffer[int32]{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID},
	}
}

func reflCols(r accel.Reflections) columns {
	return columns{
		f32: []*launch.Buffer[float32]{r.T, r.Images},
		i32: []*launch.Buffer[int32]{r.Prim},
		u8:  []*launch.Buffer[uint8]{r.Valid},
	}
}

func hitsOf(c columns) accel.Hits {
	return accel.Hits{T: c.f32[0], P: c.f32[1], N: c.f32[2], GeoN: c.f32[3], UV: c.f32[4], Bary: c.f32[5],
		ShapeID: c.i32[0], PrimID: c.i32[1], LocalPrimID: c.i32[2], GlobalPrimID: c.i32[3]}
}

func reflOf(c columns) accel.Reflections {
	return accel.Reflections{Valid: c.u8[0], T: c.f32[0], Prim: c.i32[0], Images: c.f32[1]}
}

// intersectJob is intersect with flags over inputs laid out as in: a
// *geom.Hits record, or accel.Hits for a device job.
func intersectJob(flags geom.Flags, in layout) *job {
	return &job{key: shard.IntersectOp(flags).Key, in: in, out: hitsLayout(flags), vertices: -1,
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			return k.bvh.Intersect(s, k.rays(in, n), flags, hitsOf(out))
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			h := geom.NewHits(hi-lo, flags)
			if err := download(s, out.f32, [][]float32{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID}); err != nil {
				return nil, err
			}
			return h, nil
		},
		view: func(out columns) any { return hitsOf(out) }}
}

// reflectJob is trace_reflections with bounces: a *geom.Reflections record,
// or accel.Reflections for a device job.
func reflectJob(bounces int, images bool, in layout) *job {
	return &job{key: shard.TraceReflectionsOp(bounces).Key, in: in, out: reflLayout(bounces, images), vertices: -1,
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			return k.bvh.TraceReflections(s, k.rays(in, n), bounces, reflOf(out))
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := geom.NewReflections(hi-lo, bounces)
			if err := download(s, out.f32, [][]float32{r.T, r.ImageSources}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{r.PrimIDs}); err != nil {
				return nil, err
			}
			return r, downloadBools(s, out.u8[0], r.Valid)
		},
		view: func(out columns) any { return reflOf(out) }}
}

// visibleJob is visible: a []bool record, or the *launch.Buffer[uint8] of a
// device job.
func visibleJob(in layout) *job {
	return &job{key: shard.OpVisible, in: in, out: visLayout(), vertices: -1,
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			r := k.rays(in, n)
			return k.bvh.Visible(s, accel.Segments{Start: r.O, End: r.D, Active: r.Active, N: n, Counter: r.Counter}, out.u8[0])
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			res := make([]bool, hi-lo)
			return res, downloadBools(s, out.u8[0], res)
		},
		view: func(out columns) any { return out.u8[0] }}
}
