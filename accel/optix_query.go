package accel

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// Byte offsets of the launch-parameter block `Params` of
// ptx/src/optix_trace.cu (x86-64/PTX layout: pointers and the handle are 8
// bytes, the ints 4; 216 bytes in all; the last three are read by the
// masked programs only).
const (
	opHandle         = 0
	opO              = 8
	opD              = 16
	opTMax           = 24
	opActive         = 32
	opVertices       = 40
	opFaces          = 48
	opFaceShape      = 56
	opFaceLocal      = 64
	opOutT           = 72
	opOutP           = 80
	opOutN           = 88
	opOutGeoN        = 96
	opOutUV          = 104
	opOutBary        = 112
	opOutShape       = 120
	opOutPrim        = 128
	opOutLocal       = 136
	opOutGlobal      = 144
	opOutValid       = 152
	opOutImages      = 160
	opOutVisible     = 168
	opN              = 176
	opFlags          = 180
	opMaxBounces     = 184
	opTMin           = 192
	opRayMask        = 200
	opFaceMask       = 208
	optixParamsBytes = 216
)

// ErrClosedAccel is returned by queries on a closed OptiX structure.
var ErrClosedAccel = errors.New("accel: query on a closed acceleration structure")

// optixParams is one packed launch-parameter block.
type optixParams struct {
	b       [optixParamsBytes]byte
	ordinal int   // the device every buffer must live on
	err     error // first buffer on another device
}

func (p *optixParams) u64(off int, v uint64) { binary.LittleEndian.PutUint64(p.b[off:], v) }
func (p *optixParams) u32(off int, v uint32) { binary.LittleEndian.PutUint32(p.b[off:], v) }

// putBuf writes the address of b (0 for nil) at off, checking its device.
func putBuf[T launch.Elem](p *optixParams, off int, name string, b *launch.Buffer[T]) {
	if b == nil {
		return
	}
	if d := b.Device(); (d == nil || d.Ordinal() != p.ordinal) && p.err == nil {
		o := -1
		if d != nil {
			o = d.Ordinal()
		}
		p.err = fmt.Errorf("accel: %s is on cuda:%d, the OptiX structure on cuda:%d: %w", name, o, p.ordinal, launch.ErrWrongDevice)
	}
	p.u64(off, b.Addr())
}

// newParams starts a block with the structure's geometry and the row count.
func (o *OptiX) newParams(s *launch.Stream, n int) (*optixParams, error) {
	if o.gas == nil {
		return nil, ErrClosedAccel
	}
	if s.Device().Ordinal() != o.ctx.Ordinal() {
		return nil, fmt.Errorf("accel: stream on %v, OptiX structure on cuda:%d: %w", s.Device(), o.ctx.Ordinal(), launch.ErrWrongDevice)
	}
	p := &optixParams{ordinal: o.ctx.Ordinal()}
	p.u64(opHandle, o.gas.Handle())
	putBuf(p, opVertices, "Geometry.Vertices", o.geo.Vertices)
	putBuf(p, opFaces, "Geometry.Faces", o.geo.Faces)
	putBuf(p, opFaceShape, "Geometry.FaceShape", o.geo.FaceShape)
	putBuf(p, opFaceLocal, "Geometry.FaceLocal", o.geo.FaceLocal)
	p.u32(opN, uint32(n))
	return p, nil
}

// Intersect queues the closest-hit query of spec §2.1 for r on s (tmin
// 1e-6, or r.TMin) and writes out, like BVH.Intersect; r.Mask and the face
// masks (SetFaceMasks) select the faces a row may hit. Rays.Counter and
// Rays.PersistentBlocks are ignored (OptiX schedules its own work). With
// flags = FlagsNone the lean t-only pipeline runs.
func (o *OptiX) Intersect(s *launch.Stream, r Rays, flags geom.Flags, out Hits) error {
	if err := checkIntersect(r, flags, out); err != nil {
		return err
	}
	n := r.N
	p, err := o.newParams(s, n)
	if err != nil || n == 0 {
		return err
	}
	o.rays(p, r)
	putBuf(p, opOutT, "Hits.T", out.T)
	pipes, err := o.pipelinesFor(p, r)
	if err != nil {
		return err
	}
	pipe := pipes.intersectT
	if flags != geom.FlagsNone {
		pipe = pipes.intersect
		p.u32(opFlags, uint32(flags))
		putBuf(p, opOutP, "Hits.P", out.P)
		putBuf(p, opOutN, "Hits.N", out.N)
		putBuf(p, opOutGeoN, "Hits.GeoN", out.GeoN)
		putBuf(p, opOutUV, "Hits.UV", out.UV)
		putBuf(p, opOutBary, "Hits.Bary", out.Bary)
		putBuf(p, opOutShape, "Hits.ShapeID", out.ShapeID)
		putBuf(p, opOutPrim, "Hits.PrimID", out.PrimID)
		putBuf(p, opOutLocal, "Hits.LocalPrimID", out.LocalPrimID)
		putBuf(p, opOutGlobal, "Hits.GlobalPrimID", out.GlobalPrimID)
	}
	return o.launch(s, pipe, p, n)
}

// rays writes the ray inputs.
func (o *OptiX) rays(p *optixParams, r Rays) {
	putBuf(p, opO, "Rays.O", r.O)
	putBuf(p, opD, "Rays.D", r.D)
	putBuf(p, opTMax, "Rays.TMax", r.TMax)
	putBuf(p, opActive, "Rays.Active", r.Active)
}

func (o *OptiX) launch(s *launch.Stream, pipe *launch.OptiXPipeline, p *optixParams, n int) error {
	if p.err != nil {
		return p.err
	}
	return pipe.Launch(s, p.b[:], n)
}

// TraceReflections queues trace_reflections (spec §3.2) for r with
// maxBounces ≥ 1 bounces on s, like BVH.TraceReflections.
func (o *OptiX) TraceReflections(s *launch.Stream, r Rays, maxBounces int, out Reflections) error {
	if maxBounces < 1 {
		return fmt.Errorf("accel: maxBounces %d, must be at least 1", maxBounces)
	}
	if err := r.check(); err != nil {
		return err
	}
	if out.Valid == nil || out.T == nil || out.Prim == nil {
		return fmt.Errorf("accel: Reflections.Valid, T and Prim are required")
	}
	slots := r.N * maxBounces
	for _, e := range []error{needLen("Reflections.Valid", out.Valid, slots), needLen("Reflections.T", out.T, slots),
		needLen("Reflections.Prim", out.Prim, slots), needLen("Reflections.Images", out.Images, 3*slots)} {
		if e != nil {
			return e
		}
	}
	p, err := o.newParams(s, r.N)
	if err != nil || r.N == 0 {
		return err
	}
	o.rays(p, r)
	putBuf(p, opOutValid, "Reflections.Valid", out.Valid)
	putBuf(p, opOutT, "Reflections.T", out.T)
	putBuf(p, opOutPrim, "Reflections.Prim", out.Prim)
	putBuf(p, opOutImages, "Reflections.Images", out.Images)
	p.u32(opMaxBounces, uint32(maxBounces))
	pipes, err := o.pipelinesFor(p, r)
	if err != nil {
		return err
	}
	return o.launch(s, pipes.reflections, p, r.N)
}

// Visible queues visible(start, end) (spec §4.1) on s, like BVH.Visible:
// out[i] = 1 when the segment is unobstructed, 0 when blocked or inactive.
// Segments.Counter and Segments.PersistentBlocks are ignored.
func (o *OptiX) Visible(s *launch.Stream, seg Segments, out *launch.Buffer[uint8]) error {
	if seg.N < 0 || seg.N > 1<<31-1-31 {
		return fmt.Errorf("accel: segment count %d out of range", seg.N)
	}
	if seg.Start == nil || seg.End == nil || out == nil {
		return fmt.Errorf("accel: Segments.Start, Segments.End and out are required")
	}
	for _, e := range []error{needLen("Segments.Start", seg.Start, 3*seg.N), needLen("Segments.End", seg.End, 3*seg.N),
		needLen("Segments.Active", seg.Active, seg.N), needLen("Visible out", out, seg.N)} {
		if e != nil {
			return e
		}
	}
	p, err := o.newParams(s, seg.N)
	if err != nil || seg.N == 0 {
		return err
	}
	putBuf(p, opO, "Segments.Start", seg.Start)
	putBuf(p, opD, "Segments.End", seg.End)
	putBuf(p, opActive, "Segments.Active", seg.Active)
	putBuf(p, opOutVisible, "Visible out", out)
	pipes, err := o.pipelinesFor(p, Rays{})
	if err != nil {
		return err
	}
	return o.launch(s, pipes.visible, p, seg.N)
}
