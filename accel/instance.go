package accel

import (
	"errors"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// ModuleInstance is the module of the instanced queries (ptx/src/instance.cu).
const ModuleInstance = "instance"

// InstanceRecordWords is the size of one device instance record in 32-bit
// words (6 float4): the 12 transform entries, the 9 inverse entries, the
// geometry id and the instance mask (as uint32 bits).
const InstanceRecordWords = 24

// InstanceLayer is the device side of a scene with instances: one BVH per
// geometry (mesh) in its object space, built once, and the instance records
// with a top-level BVH over the instances' world boxes, rebuilt whenever
// transforms change: on the device from the uploaded records up to
// TLASDeviceMax instances (rayd_tlas_build, BuildTLAS's words exactly),
// else on the host and uploaded.
type InstanceLayer struct {
	dev      *launch.Device
	blas     []*BVH
	width    int
	geoPtrs  *launch.Buffer[uint64] // nodes, tris per geometry
	geoInfo  *launch.Buffer[int32]  // triangle count, first global face per geometry
	objLo    [][3]float64
	objHi    [][3]float64
	inst     *launch.Buffer[float32] // InstanceRecordWords per instance
	tlas     *launch.Buffer[uint32]
	order    *launch.Buffer[int32]
	stage    instanceStage // inst, tlas and order are views of its device buffer
	scale    float32
	numInst  int
	numNodes int
	meshMask *launch.Buffer[uint8] // per geometry, nil while every mesh mask is the default (instance_masks.go)
}

// NewInstanceLayer builds one BVH per mesh of t (each over that mesh alone,
// in its object space, with opt; Width 0 picks one layout for all by
// AutoWidth over their total triangle count) and the top level over x, on
// s. It returns once the builds have completed.
func NewInstanceLayer(s *launch.Stream, t *geom.Tables, x *geom.Instances, opt Options) (l *InstanceLayer, err error) {
	l = &InstanceLayer{dev: s.Device()}
	defer func() {
		if err != nil {
			_ = l.Close()
			l = nil
		}
	}()
	if opt.Width == 0 {
		// One layout for every geometry (the kernel is chosen per layer),
		// picked for their combined footprint.
		// The instanced kernels walk widths 2 and 4: the wide layout's
		// choice for a large footprint becomes 4 here.
		opt.Width = min(AutoWidth(t.NumFaces(), l.dev.L2Bytes()), 4)
	}
	if opt.Width == 8 {
		return nil, fmt.Errorf("instance geometries on width %d: %w", opt.Width, ErrWidth)
	}
	ptrs := make([]uint64, 0, 2*t.NumMeshes())
	info := make([]int32, 0, 2*t.NumMeshes())
	for m, mesh := range t.Meshes() {
		sub, err := geom.BuildTables([]geom.Mesh{mesh})
		if err != nil {
			return nil, err
		}
		b, err := BuildWith(s, sub, opt)
		if err != nil {
			return nil, fmt.Errorf("accel: geometry %d: %w", m, err)
		}
		l.blas = append(l.blas, b)
		if m == 0 {
			l.width = b.Width()
		} else if b.Width() != l.width {
			return nil, fmt.Errorf("accel: geometry %d built with width %d, geometry 0 with %d", m, b.Width(), l.width)
		}
		ptrs = append(ptrs, b.Nodes().Addr(), b.Tris().Addr())
		info = append(info, int32(b.NumTris()), t.FaceOffset[m])
	}
	if l.geoPtrs, err = upload(s, l.dev, ptrs); err != nil {
		return nil, err
	}
	if l.geoInfo, err = upload(s, l.dev, info); err != nil {
		return nil, err
	}
	l.objLo, l.objHi = ObjectBounds(t)
	if err := l.Update(s, x); err != nil {
		return nil, err
	}
	return l, s.Synchronize()
}

// InstanceRecords packs the device records of x (InstanceRecordWords
// float32 words each; the geometry id as its int32 bits).
func InstanceRecords(x *geom.Instances) []float32 {
	out := make([]float32, InstanceRecordWords*x.Len())
	for i, r := range x.Records {
		w := out[InstanceRecordWords*i:]
		copy(w[0:12], r.Transform[:])
		copy(w[12:21], r.Inverse[:])
		w[21] = math.Float32frombits(uint32(r.Geometry))
		w[22] = math.Float32frombits(uint32(r.Mask)) // read by the masked walk; w[23] is padding
	}
	return out
}

// Update uploads x's current instance records and rebuilds the top level
// over them, on s: one asynchronous copy from staging memory that the next
// Update reuses once the copy has completed, then, up to TLASDeviceMax
// instances, one kernel that builds the top level on the device (the host
// computes only its slab scale); above, the host builds it into the
// staging memory and the same copy carries it. The geometries' BVHs are
// untouched. The instance count must not change. Returns when queued (x
// may change again at once).
func (l *InstanceLayer) Update(s *launch.Stream, x *geom.Instances) error {
	if l.inst != nil && x.Len() != l.numInst {
		return fmt.Errorf("accel: %d instances, the layer was built for %d", x.Len(), l.numInst)
	}
	scale, err := l.stage.upload(s, x, l.objLo, l.objHi)
	if err != nil {
		return err
	}
	l.inst, l.tlas, l.order = l.stage.inst, l.stage.nodes, l.stage.order
	l.numInst, l.numNodes, l.scale = x.Len(), l.stage.numNodes, scale
	return nil
}

// Width is the node layout of the geometries' BVHs (2 or 4).
func (l *InstanceLayer) Width() int { return l.width }

// NumInstances is the number of instances.
func (l *InstanceLayer) NumInstances() int { return l.numInst }

// Intersect queues intersect over the instances for r on s and writes out
// and inst (the instance id per row, −1 on a miss; may be nil). The record
// is ref.InstancedScene's bit for bit (IntersectLimits with r.TMin and
// r.Mask, the instances' masks and the mesh masks of SetMeshMasks).
// r.Counter, when set, makes the launch persistent (as BVH.Intersect).
func (l *InstanceLayer) Intersect(s *launch.Stream, r Rays, flags geom.Flags, out Hits, inst *launch.Buffer[int32]) error {
	if err := checkIntersect(r, flags, out); err != nil {
		return err
	}
	if err := needLen("instance ids", inst, r.N); err != nil {
		return err
	}
	if r.N == 0 {
		return nil
	}
	return l.launchIntersect(streamRunner{s}, r, flags, out, inst)
}

// launchIntersect queues rayd_intersect_instanced(4), or its masked variant
// while r carries limits or a mesh mask is set, for checked arguments.
func (l *InstanceLayer) launchIntersect(run runner, r Rays, flags geom.Flags, out Hits, inst *launch.Buffer[int32]) error {
	grid, counter := launch.Blocks(r.N, TraceThreads), any(launch.Null)
	if r.Counter != nil { // persistent warps, as BVH.Intersect
		if err := run.memset32(r.Counter, 0); err != nil {
			return err
		}
		blocks := r.PersistentBlocks
		if blocks <= 0 {
			blocks = 8 * max(l.dev.SMs(), 1)
		}
		grid, counter = launch.Blocks(blocks, 1), r.Counter
	}
	entry := "rayd_intersect_instanced"
	args := []any{l.tlas, l.order, l.inst, int32(l.numInst), l.scale, l.geoPtrs, l.geoInfo,
		r.O, r.D, nullable(r.TMax), nullable(r.Active), int32(r.N), uint32(flags),
		out.T, nullable(out.P), nullable(out.N), nullable(out.GeoN), nullable(out.UV), nullable(out.Bary),
		nullable(out.ShapeID), nullable(out.PrimID), nullable(out.LocalPrimID), nullable(out.GlobalPrimID), nullable(inst),
		counter}
	if l.maskedFor(r) {
		entry += "_masked"
		args = append(args, l.maskArgs(r)...)
	}
	if l.width == 4 {
		entry += "4"
	}
	k := &kernelLauncher{r: run, module: ModuleInstance}
	k.run(entry, grid, launch.Threads(TraceThreads), args...)
	return k.err
}

// Close releases every device buffer of the layer.
func (l *InstanceLayer) Close() error {
	var errs []error
	for _, b := range l.blas {
		errs = append(errs, b.Close())
	}
	l.blas = nil
	for _, c := range []interface{ Close() error }{l.geoPtrs, l.geoInfo, l.meshMask} {
		if c != nil && !isNilBuffer(c) {
			errs = append(errs, c.Close())
		}
	}
	errs = append(errs, l.stage.close())
	l.geoPtrs, l.geoInfo, l.inst, l.tlas, l.order, l.meshMask = nil, nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// isNilBuffer reports a typed nil buffer held in an interface.
func isNilBuffer(c interface{ Close() error }) bool {
	switch b := c.(type) {
	case *launch.Buffer[uint64]:
		return b == nil
	case *launch.Buffer[int32]:
		return b == nil
	case *launch.Buffer[float32]:
		return b == nil
	case *launch.Buffer[uint32]:
		return b == nil
	case *launch.Buffer[uint8]:
		return b == nil
	}
	return false
}
