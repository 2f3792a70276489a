package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// Byte offsets of the launch-parameter block `Params` of
// ptx/src/optix_instance.cu (192 bytes; packed in an optixParams, whose
// block is larger).
const (
	oiHandle      = 0
	oiO           = 8
	oiD           = 16
	oiTMax        = 24
	oiActive      = 32
	oiTMin        = 40
	oiRayMask     = 48
	oiGeoMask     = 56
	oiInst        = 64
	oiGeoPtrs     = 72
	oiGeoFirst    = 80
	oiOutT        = 88
	oiOutP        = 96
	oiOutN        = 104
	oiOutGeoN     = 112
	oiOutUV       = 120
	oiOutBary     = 128
	oiOutShape    = 136
	oiOutPrim     = 144
	oiOutLocal    = 152
	oiOutGlobal   = 160
	oiOutInst     = 168
	oiN           = 176
	oiFlags       = 180
	oiParamsBytes = 192
)

// The block fits the optixParams it is packed in.
const _ uint = optixParamsBytes - oiParamsBytes

// Intersect queues intersect over the instances for r on s and writes out
// and inst (the instance id per row, −1 on a miss; may be nil), like
// InstanceLayer.Intersect. r.TMin and r.Mask are the per-row limits: a hit
// counts only when the row's mask (0xFF without r.Mask) shares a bit with
// the instance's mask and, when geoMask is not nil (one mask per geometry,
// given while some mesh mask differs from geom.DefaultMask), with the hit
// geometry's mask. r.Counter and r.PersistentBlocks are ignored.
func (l *OptiXInstanceLayer) Intersect(s *launch.Stream, r Rays, flags geom.Flags, geoMask *launch.Buffer[uint8],
	out Hits, inst *launch.Buffer[int32]) error {
	if err := checkIntersect(r, flags, out); err != nil {
		return err
	}
	if err := needLen("instance ids", inst, r.N); err != nil {
		return err
	}
	if err := needLen("geometry masks", geoMask, len(l.gas)); err != nil {
		return err
	}
	if l.ias == nil {
		return ErrClosedAccel
	}
	if s.Device().Ordinal() != l.ctx.Ordinal() {
		return fmt.Errorf("accel: stream on %v, OptiX instance layer on cuda:%d: %w", s.Device(), l.ctx.Ordinal(), launch.ErrWrongDevice)
	}
	if r.N == 0 {
		return nil
	}
	k := instPlain
	switch {
	case geoMask != nil:
		k = instMasked
	case r.TMin != nil || r.Mask != nil:
		k = instLimits
	}
	pipe, err := l.pipeline(k)
	if err != nil {
		return err
	}
	p := &optixParams{ordinal: l.ctx.Ordinal()}
	p.u64(oiHandle, l.ias.Handle())
	putBuf(p, oiO, "Rays.O", r.O)
	putBuf(p, oiD, "Rays.D", r.D)
	putBuf(p, oiTMax, "Rays.TMax", r.TMax)
	putBuf(p, oiActive, "Rays.Active", r.Active)
	putBuf(p, oiTMin, "Rays.TMin", r.TMin)
	putBuf(p, oiRayMask, "Rays.Mask", r.Mask)
	putBuf(p, oiGeoMask, "geometry masks", geoMask)
	putBuf(p, oiInst, "instance records", l.inst)
	putBuf(p, oiGeoPtrs, "geometry tables", l.geoPtrs)
	putBuf(p, oiGeoFirst, "geometry face offsets", l.geoFirst)
	putBuf(p, oiOutT, "Hits.T", out.T)
	if flags != geom.FlagsNone {
		putBuf(p, oiOutP, "Hits.P", out.P)
		putBuf(p, oiOutN, "Hits.N", out.N)
		putBuf(p, oiOutGeoN, "Hits.GeoN", out.GeoN)
		putBuf(p, oiOutUV, "Hits.UV", out.UV)
		putBuf(p, oiOutBary, "Hits.Bary", out.Bary)
		putBuf(p, oiOutShape, "Hits.ShapeID", out.ShapeID)
		putBuf(p, oiOutPrim, "Hits.PrimID", out.PrimID)
		putBuf(p, oiOutLocal, "Hits.LocalPrimID", out.LocalPrimID)
		putBuf(p, oiOutGlobal, "Hits.GlobalPrimID", out.GlobalPrimID)
		putBuf(p, oiOutInst, "instance ids", inst)
	}
	p.u32(oiN, uint32(r.N))
	p.u32(oiFlags, uint32(flags))
	if p.err != nil {
		return p.err
	}
	return pipe.Launch(s, p.b[:oiParamsBytes], r.N)
}

// GeometryMasks returns the mask of every mesh of t (geom.Tables.MaskOf),
// the geoMask table of OptiXInstanceLayer.Intersect.
func GeometryMasks(t *geom.Tables) []uint8 {
	out := make([]uint8, t.NumMeshes())
	for m := range out {
		out[m] = t.MaskOf(m)
	}
	return out
}
