package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The device-resident tasks are the fast path of the layer, RayD's own
// setting: the caller's inputs and the whole output record already live on
// the master device (in buffers of Source.Device(master)). The master's
// chunks read and write them in place; a remote's rows are peer-copied to
// it and its results peer-copied straight into their rows of Out, so the
// result needs no assembly: Assemble returns Out itself (views of its first
// N rows). Stream, when set, is a stream of the master the inputs were
// produced on: the call reads them after the work queued there when each
// chunk is scattered, and every retired chunk makes Stream wait for its
// rows of Out (no host wait). Without a Stream the inputs must be complete
// before the call and each retired chunk waits on the host. After a failed
// or cancelled call, copies of the inputs may still be queued: synchronise
// the master before reusing them.

// DeviceIntersect is intersect over device rays. Every field of Out that
// Flags selects must hold Rays.N rows; the others are ignored.
type DeviceIntersect struct {
	// Rays are the rows (Counter and PersistentBlocks are ignored).
	Rays accel.Rays
	// Flags selects the fields of the record.
	Flags geom.Flags
	// Out receives the record, written in place.
	Out accel.Hits
	// Stream is the caller's stream on the master, or nil.
	Stream *launch.Stream
}

// Op returns shard.IntersectOp(t.Flags).
func (t *DeviceIntersect) Op() shard.Op { return shard.IntersectOp(t.Flags) }

func (t *DeviceIntersect) inLayout() layout {
	return rayLayout(devRayNames, t.Rays.TMax != nil, t.Rays.Active != nil)
}

// Rows validates the task and returns Rays.N.
func (t *DeviceIntersect) Rows() (int, error) {
	if !t.Flags.Valid() {
		return 0, &geom.ArgumentError{Field: "Flags", Reason: fmt.Sprintf("unknown bits %#x", uint32(t.Flags&^geom.FlagsAll))}
	}
	return checkDeviceTask(t.Rays.N, t.inLayout(), raysCols(t.Rays), hitsLayout(t.Flags), hitsCols(t.Out), t.Stream)
}

// Assemble returns Out restricted to the first total rows once parts cover
// them (every part is already a view of its rows of Out).
func (t *DeviceIntersect) Assemble(total int, parts []shard.Part[accel.Hits]) (accel.Hits, error) {
	if err := covered(total, parts); err != nil {
		return accel.Hits{}, err
	}
	l := hitsLayout(t.Flags)
	c, err := hitsCols(t.Out).view(l, 0, total)
	if err != nil {
		return accel.Hits{}, err
	}
	return hitsOf(c), nil
}

// RecordRowBytes returns t.Flags.RowBytes().
func (t *DeviceIntersect) RecordRowBytes(accel.Hits) int { return t.Flags.RowBytes() }

// DeviceReflections is trace_reflections over device rays: Out.Valid, T and
// Prim hold Rays.N·Bounces slots, Out.Images (optional) three times as many.
type DeviceReflections struct {
	// Rays are the rows (Counter and PersistentBlocks are ignored).
	Rays accel.Rays
	// Bounces is max_bounces, at least 1.
	Bounces int
	// Out receives the record, written in place.
	Out accel.Reflections
	// Stream is the caller's stream on the master, or nil.
	Stream *launch.Stream
}

// Op returns shard.TraceReflectionsOp(t.Bounces).
func (t *DeviceReflections) Op() shard.Op { return shard.TraceReflectionsOp(t.Bounces) }

func (t *DeviceReflections) inLayout() layout {
	return rayLayout(devRayNames, t.Rays.TMax != nil, t.Rays.Active != nil)
}

// Rows validates the task and returns Rays.N.
func (t *DeviceReflections) Rows() (int, error) {
	if t.Bounces < 1 {
		return 0, &geom.ArgumentError{Field: "Bounces", Reason: fmt.Sprintf("%d, must be at least 1", t.Bounces)}
	}
	return checkDeviceTask(t.Rays.N, t.inLayout(), raysCols(t.Rays), reflLayout(t.Bounces, t.Out.Images != nil),
		reflCols(t.Out), t.Stream)
}

// Assemble returns Out restricted to the first total rows once parts cover
// them.
func (t *DeviceReflections) Assemble(total int, parts []shard.Part[accel.Reflections]) (accel.Reflections, error) {
	if err := covered(total, parts); err != nil {
		return accel.Reflections{}, err
	}
	c, err := reflCols(t.Out).view(reflLayout(t.Bounces, t.Out.Images != nil), 0, total)
	if err != nil {
		return accel.Reflections{}, err
	}
	return reflOf(c), nil
}

// RecordRowBytes is 21 bytes per bounce with images, 9 without.
func (t *DeviceReflections) RecordRowBytes(accel.Reflections) int {
	return geom.ReflectionRowBytes(t.Bounces, t.Out.Images != nil)
}

// DeviceVisible is visible over device segments: Out[i] = 1 when segment i
// is unobstructed, 0 when blocked or inactive.
type DeviceVisible struct {
	// Segments are the rows (Counter and PersistentBlocks are ignored).
	Segments accel.Segments
	// Out receives one byte per segment, written in place.
	Out *launch.Buffer[uint8]
	// Stream is the caller's stream on the master, or nil.
	Stream *launch.Stream
}

// Op returns shard.VisibleOp().
func (t *DeviceVisible) Op() shard.Op { return shard.VisibleOp() }

func (t *DeviceVisible) inLayout() layout {
	return rayLayout(devSegNames, false, t.Segments.Active != nil)
}

// Rows validates the task and returns Segments.N.
func (t *DeviceVisible) Rows() (int, error) {
	in := raysCols(accel.Rays{O: t.Segments.Start, D: t.Segments.End, Active: t.Segments.Active})
	return checkDeviceTask(t.Segments.N, t.inLayout(), in, visLayout(), columns{u8: []*launch.Buffer[uint8]{t.Out}}, t.Stream)
}

// Assemble returns the first total elements of Out once parts cover them.
func (t *DeviceVisible) Assemble(total int, parts []shard.Part[*launch.Buffer[uint8]]) (*launch.Buffer[uint8], error) {
	if err := covered(total, parts); err != nil {
		return nil, err
	}
	c, err := columns{u8: []*launch.Buffer[uint8]{t.Out}}.view(visLayout(), 0, total)
	if err != nil {
		return nil, err
	}
	return c.u8[0], nil
}

// RecordRowBytes is 1.
func (t *DeviceVisible) RecordRowBytes(*launch.Buffer[uint8]) int { return 1 }

// maxRows bounds a device batch (the query kernels index rows with int32).
const maxRows = 1<<31 - 1 - 31

// checkDeviceTask validates n rows of inputs and outputs: every present
// column holds at least its rows, and every buffer and the stream are on
// one device. It returns n.
func checkDeviceTask(n int, inL layout, in columns, outL layout, out columns, s *launch.Stream) (int, error) {
	if n < 0 || n > maxRows {
		return 0, &geom.ArgumentError{Field: "N", Reason: fmt.Sprintf("%d rows, want 0..%d", n, maxRows)}
	}
	for _, part := range []struct {
		l layout
		c columns
	}{{inL, in}, {outL, out}} {
		if err := checkSet(part.l.f32, part.c.f32, n); err != nil {
			return 0, err
		}
		if err := checkSet(part.l.i32, part.c.i32, n); err != nil {
			return 0, err
		}
		if err := checkSet(part.l.u8, part.c.u8, n); err != nil {
			return 0, err
		}
	}
	din, err := in.device(inL)
	if err != nil {
		return 0, &geom.ArgumentError{Field: "inputs", Reason: err.Error()}
	}
	d, err := out.device(outL)
	if err != nil {
		return 0, &geom.ArgumentError{Field: "Out", Reason: err.Error()}
	}
	switch {
	case d == nil:
		d = din
	case din != nil && din != d:
		return 0, &geom.ArgumentError{Field: "Out", Reason: fmt.Sprintf("on %v, the inputs on %v", d, din)}
	}
	if s != nil && d != nil && s.Device() != d {
		return 0, &geom.ArgumentError{Field: "Stream", Reason: fmt.Sprintf("on %v, the buffers on %v", s.Device(), d)}
	}
	return n, nil
}

func checkSet[T launch.Elem](l []spec, bufs []*launch.Buffer[T], n int) error {
	for i, c := range l {
		if c.per == 0 {
			continue
		}
		if i >= len(bufs) || bufs[i] == nil {
			return &geom.ArgumentError{Field: c.name, Reason: "is required"}
		}
		if bufs[i].Len() < c.per*n {
			return &geom.ArgumentError{Field: c.name,
				Reason: fmt.Sprintf("holds %d elements, needs at least %d (%d per row)", bufs[i].Len(), c.per*n, c.per)}
		}
	}
	return nil
}

// covered checks that parts, sorted by Start, cover [0, total) without gaps
// or overlaps.
func covered[R any](total int, parts []shard.Part[R]) error {
	next := 0
	for _, p := range parts {
		if p.Start != next || p.Stop < p.Start {
			return fmt.Errorf("replica: chunk [%d,%d) does not follow row %d", p.Start, p.Stop, next)
		}
		next = p.Stop
	}
	if next != total {
		return fmt.Errorf("replica: chunks cover %d of %d rows", next, total)
	}
	return nil
}
