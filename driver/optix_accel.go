package driver

import (
	"runtime"
	"unsafe"
)

// OptiXTraversable is an OptixTraversableHandle.
type OptiXTraversable uint64

// OptiXTriangles is one triangle build input: FLOAT3 vertices and
// UNSIGNED_INT3 index triplets in device memory, one SBT record.
type OptiXTriangles struct {
	Vertices      DevicePtr // NumVertices × 3 float32, 4-byte aligned
	NumVertices   uint32
	VertexStride  uint32    // bytes between vertices; 0 = 12 (packed)
	Indices       DevicePtr // NumTriangles × 3 uint32
	NumTriangles  uint32
	IndexStride   uint32 // bytes between triplets; 0 = 12 (packed)
	GeometryFlags uint32 // OptiXGeometry* of the input's one SBT record
}

// OptiXAccelOptions selects the build flags (OptiXBuild*) and whether the
// call is a full build or an update (refit) of a structure built with
// OptiXBuildAllowUpdate.
type OptiXAccelOptions struct {
	BuildFlags uint32
	Update     bool
}

// triangleInput is an OptixBuildInput together with the host arrays its
// triangle variant points to, pinned as one object for the call.
type triangleInput struct {
	in      optixBuildInput
	vbufs   [1]uint64 // vertexBuffers: one motion key
	sbtFlag [1]uint32 // flags: one SBT record
	emit    optixAccelEmitDesc
}

// pack fills the build input for t; the caller pins ti.
func (ti *triangleInput) pack(t OptiXTriangles) {
	ti.vbufs[0] = uint64(t.Vertices)
	ti.sbtFlag[0] = t.GeometryFlags
	ti.in = optixBuildInput{typ: optixBuildInputTriangles}
	a := &ti.in.triangleArray
	a.vertexBuffers = uintptr(unsafe.Pointer(&ti.vbufs[0]))
	a.numVertices = t.NumVertices
	a.vertexFormat = optixVertexFormatFloat3
	a.vertexStrideInBytes = t.VertexStride
	a.indexBuffer = uint64(t.Indices)
	a.numIndexTriplets = t.NumTriangles
	a.indexFormat = optixIndicesFormatUint3
	a.indexStrideInBytes = t.IndexStride
	a.flags = uintptr(unsafe.Pointer(&ti.sbtFlag[0]))
	a.numSbtRecords = 1
}

func (o OptiXAccelOptions) pack() optixAccelBuildOptions {
	op := int32(optixBuildOperationBuild)
	if o.Update {
		op = optixBuildOperationUpdate
	}
	return optixAccelBuildOptions{buildFlags: o.BuildFlags, operation: op}
}

// newTriangleInput allocates, packs and pins a build input; release with
// the returned function after the call.
func newTriangleInput(t OptiXTriangles) (*triangleInput, func()) {
	ti := new(triangleInput)
	var pin runtime.Pinner
	pin.Pin(ti)
	ti.pack(t)
	return ti, pin.Unpin
}

// AccelMemoryUsage returns the buffer sizes a build of t with opt needs
// (optixAccelComputeMemoryUsage).
func (c OptiXContext) AccelMemoryUsage(opt OptiXAccelOptions, t OptiXTriangles) (OptiXAccelBufferSizes, error) {
	ti, unpin := newTriangleInput(t)
	defer unpin()
	o := opt.pack()
	var sz OptiXAccelBufferSizes
	r := invoke("optixAccelComputeMemoryUsage", ox.optixAccelComputeMemoryUsage, c.h, uintptr(unsafe.Pointer(&o)),
		uintptr(unsafe.Pointer(&ti.in)), 1, uintptr(unsafe.Pointer(&sz)))
	return sz, optixCheck("optixAccelComputeMemoryUsage", c.dev, r)
}

// AccelBuild queues a build (or, with opt.Update, a refit of the structure
// in out) of t on s (optixAccelBuild). temp and out are 128-byte aligned
// device buffers of the sizes AccelMemoryUsage reported (TempUpdateBytes of
// temp for an update). When compactedSize is not 0 the build also writes
// the compacted size (a uint64) there. Device buffers must stay valid until
// s has run the build; the returned handle is valid at once.
func (c OptiXContext) AccelBuild(s Stream, opt OptiXAccelOptions, t OptiXTriangles, temp DevicePtr, tempBytes uint64,
	out DevicePtr, outBytes uint64, compactedSize DevicePtr) (OptiXTraversable, error) {
	ti, unpin := newTriangleInput(t)
	defer unpin()
	o := opt.pack()
	ti.emit = optixAccelEmitDesc{result: uint64(compactedSize), typ: optixPropertyCompactedSize}
	var emitPtr, numEmit uintptr
	if compactedSize != 0 {
		emitPtr, numEmit = uintptr(unsafe.Pointer(&ti.emit)), 1 // pinned with ti
	}
	var h OptiXTraversable
	r := invoke("optixAccelBuild", ox.optixAccelBuild, c.h, s.h, uintptr(unsafe.Pointer(&o)),
		uintptr(unsafe.Pointer(&ti.in)), 1, uintptr(temp), uintptr(tempBytes), uintptr(out), uintptr(outBytes),
		uintptr(unsafe.Pointer(&h)), emitPtr, numEmit)
	return h, optixCheck("optixAccelBuild", c.dev, r)
}

// AccelCompact queues a compacting copy of the structure in into out on s
// (optixAccelCompact); in's buffer must stay valid until s has run it.
func (c OptiXContext) AccelCompact(s Stream, in OptiXTraversable, out DevicePtr, outBytes uint64) (OptiXTraversable, error) {
	var h OptiXTraversable
	r := invoke("optixAccelCompact", ox.optixAccelCompact, c.h, s.h, uintptr(in), uintptr(out), uintptr(outBytes),
		uintptr(unsafe.Pointer(&h)))
	return h, optixCheck("optixAccelCompact", c.dev, r)
}
