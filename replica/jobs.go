package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// kind is the query a job runs.
type kind int

const (
	kindIntersect kind = iota
	kindReflect
	kindVisible
)

// job is a task normalised for the replica: the columns of its inputs and
// outputs and where they live. Host jobs (the shard package's tasks) carry
// host slices; device jobs (this package's Device* tasks) carry the
// caller's buffers on the master and the caller's stream.
type job struct {
	kind    kind
	flags   geom.Flags
	bounces int
	in, out layout

	// Host jobs: o (start), d (end) and tmax, and the active mask.
	hostF32 [][]float32
	active  []bool

	// Device jobs.
	device        bool
	devIn, devOut columns
	stream        *launch.Stream
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

// rayLayout is the input layout of every query: origins (segment starts),
// directions (segment ends), optional tmax and optional active mask.
func rayLayout(names [4]string, tmax, active bool) layout {
	return layout{
		f32: []spec{{names[0], 3}, {names[1], 3}, {names[2], b2i(tmax)}},
		u8:  []spec{{names[3], b2i(active)}},
	}
}

// hitsLayout is the output layout of intersect for flags, in the order of
// accel.Hits.
func hitsLayout(flags geom.Flags) layout {
	g, sh, uv := b2i(flags.Has(geom.FlagGeometric)), b2i(flags.Has(geom.FlagShadingN)), b2i(flags.Has(geom.FlagUV))
	return layout{
		f32: []spec{{"Out.T", 1}, {"Out.P", 3 * g}, {"Out.N", 3 * sh}, {"Out.GeoN", 3 * g}, {"Out.UV", 2 * uv}, {"Out.Bary", 3 * g}},
		i32: []spec{{"Out.ShapeID", g}, {"Out.PrimID", g}, {"Out.LocalPrimID", g}, {"Out.GlobalPrimID", g}},
	}
}

// reflLayout is the output layout of trace_reflections with b bounces.
func reflLayout(b int, images bool) layout {
	return layout{
		f32: []spec{{"Out.T", b}, {"Out.Images", 3 * b * b2i(images)}},
		i32: []spec{{"Out.Prim", b}},
		u8:  []spec{{"Out.Valid", b}},
	}
}

// visLayout is the output layout of visible.
func visLayout() layout { return layout{u8: []spec{{"Out", 1}}} }

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

// jobOf normalises a task, or refuses a task this package has no kernel for.
func jobOf(t shard.Task) (*job, error) {
	switch t := t.(type) {
	case *shard.Intersect:
		return &job{kind: kindIntersect, flags: t.Flags, in: rayLayout(hostRayNames, len(t.TMax) > 0, len(t.Active) > 0),
			out: hitsLayout(t.Flags), hostF32: [][]float32{t.O, t.D, t.TMax}, active: t.Active}, nil
	case *shard.TraceReflections:
		return &job{kind: kindReflect, bounces: t.Bounces, in: rayLayout(hostRayNames, len(t.TMax) > 0, len(t.Active) > 0),
			out: reflLayout(t.Bounces, true), hostF32: [][]float32{t.O, t.D, t.TMax}, active: t.Active}, nil
	case *shard.Visible:
		return &job{kind: kindVisible, in: rayLayout(hostSegNames, false, len(t.Active) > 0),
			out: visLayout(), hostF32: [][]float32{t.Start, t.End, nil}, active: t.Active}, nil
	case *DeviceIntersect:
		return &job{kind: kindIntersect, flags: t.Flags, in: t.inLayout(), out: hitsLayout(t.Flags),
			device: true, devIn: raysCols(t.Rays), devOut: hitsCols(t.Out), stream: t.Stream}, nil
	case *DeviceReflections:
		return &job{kind: kindReflect, bounces: t.Bounces, in: t.inLayout(), out: reflLayout(t.Bounces, t.Out.Images != nil),
			device: true, devIn: raysCols(t.Rays), devOut: reflCols(t.Out), stream: t.Stream}, nil
	case *DeviceVisible:
		return &job{kind: kindVisible, in: t.inLayout(), out: visLayout(), device: true,
			devIn:  raysCols(accel.Rays{O: t.Segments.Start, D: t.Segments.End, Active: t.Segments.Active}),
			devOut: columns{u8: []*launch.Buffer[uint8]{t.Out}}, stream: t.Stream}, nil
	}
	return nil, fmt.Errorf("replica: no CUDA kernel for task %T: %w", t, shard.ErrUnsupported)
}

// run queues the job's query for n rows of in, writing out, on s.
func (j *job) run(b *accel.BVH, s *launch.Stream, in, out columns, n int, counter *launch.Buffer[uint32]) error {
	rays := accel.Rays{O: in.f32[0], D: in.f32[1], TMax: in.f32[2], Active: in.u8[0], N: n, Counter: counter}
	switch j.kind {
	case kindIntersect:
		return b.Intersect(s, rays, j.flags, hitsOf(out))
	case kindReflect:
		return b.TraceReflections(s, rays, j.bounces, reflOf(out))
	}
	seg := accel.Segments{Start: rays.O, End: rays.D, Active: rays.Active, N: n, Counter: counter}
	return b.Visible(s, seg, out.u8[0])
}

// hostRecord downloads n rows of out on s into the host record of the
// job's task (*geom.Hits, *geom.Reflections or []bool).
func (j *job) hostRecord(s *launch.Stream, out columns, n int) (any, error) {
	switch j.kind {
	case kindIntersect:
		h := geom.NewHits(n, j.flags)
		if err := download(s, out.f32, [][]float32{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary}); err != nil {
			return nil, err
		}
		if err := download(s, out.i32, [][]int32{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID}); err != nil {
			return nil, err
		}
		return h, nil
	case kindReflect:
		r := geom.NewReflections(n, j.bounces)
		valid := make([]uint8, len(r.Valid))
		if err := download(s, out.f32, [][]float32{r.T, r.ImageSources}); err != nil {
			return nil, err
		}
		if err := download(s, out.i32, [][]int32{r.PrimIDs}); err != nil {
			return nil, err
		}
		if err := download(s, out.u8, [][]uint8{valid}); err != nil {
			return nil, err
		}
		for i, v := range valid {
			r.Valid[i] = v != 0
		}
		return r, nil
	}
	vis := make([]uint8, n)
	if err := download(s, out.u8, [][]uint8{vis}); err != nil {
		return nil, err
	}
	res := make([]bool, n)
	for i, v := range vis {
		res[i] = v != 0
	}
	return res, nil
}

// deviceRecord is the device record of the job's task over out: accel.Hits,
// accel.Reflections or *launch.Buffer[uint8].
func (j *job) deviceRecord(out columns) any {
	switch j.kind {
	case kindIntersect:
		return hitsOf(out)
	case kindReflect:
		return reflOf(out)
	}
	return out.u8[0]
}

// hostRows returns the host data of rows [lo, hi) of column i of the
// float32 inputs.
func (j *job) hostRows(i, lo, hi int) []float32 {
	per := j.in.f32[i].per
	return j.hostF32[i][per*lo : per*hi]
}

// activeBytes converts rows [lo, hi) of the active mask to bytes.
func (j *job) activeBytes(lo, hi int) []uint8 {
	out := make([]uint8, hi-lo)
	for i, v := range j.active[lo:hi] {
		if v {
			out[i] = 1
		}
	}
	return out
}
