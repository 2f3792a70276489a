package driver

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// OptiXInstanceBytes is the size of one OptixInstance record in device
// memory; an instance array must start on an OptiXInstanceAlignment
// boundary.
const (
	OptiXInstanceBytes     = 80
	OptiXInstanceAlignment = 16
	optixBuildInputIAS     = 0x2143 // OPTIX_BUILD_INPUT_TYPE_INSTANCES
)

// OptiX instance flags (OptixInstanceFlags).
const (
	OptiXInstanceFlagNone                       uint32 = 0
	OptiXInstanceFlagDisableTriangleFaceCulling uint32 = 1
	OptiXInstanceFlagDisableAnyHit              uint32 = 4
	OptiXInstanceFlagEnforceAnyHit              uint32 = 8
)

// OptiXInstance is one OptixInstance (80 bytes in device memory): the
// object-to-world transform (3×4, row major), the id programs read with
// optixGetInstanceId, the offset added to the hit-group record index, the
// visibility mask (a ray whose mask shares no bit with it skips the
// instance; 8 bits are used), OptixInstanceFlags and the traversable (a
// GAS) the instance places.
type OptiXInstance struct {
	Transform      [12]float32
	ID             uint32
	SBTOffset      uint32
	VisibilityMask uint32
	Flags          uint32
	Traversable    OptiXTraversable
}

// Bytes returns the record in the OptixInstance layout (little endian):
// transform @0, instanceId @48, sbtOffset @52, visibilityMask @56, flags
// @60, traversableHandle @64, zero padding @72.
func (in *OptiXInstance) Bytes() [OptiXInstanceBytes]byte {
	var b [OptiXInstanceBytes]byte
	for k, f := range in.Transform {
		binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(f))
	}
	binary.LittleEndian.PutUint32(b[48:], in.ID)
	binary.LittleEndian.PutUint32(b[52:], in.SBTOffset)
	binary.LittleEndian.PutUint32(b[56:], in.VisibilityMask)
	binary.LittleEndian.PutUint32(b[60:], in.Flags)
	binary.LittleEndian.PutUint64(b[64:], uint64(in.Traversable))
	return b
}

// OptiXInstances is one instance build input: NumInstances packed
// OptixInstance records (OptiXInstance.Bytes) in device memory at Instances,
// 16-byte aligned.
type OptiXInstances struct {
	Instances    DevicePtr
	NumInstances uint32
}

// optixBuildInputInstanceArray is OptixBuildInputInstanceArray (16 bytes).
type optixBuildInputInstanceArray struct {
	instances      uint64 // @0  CUdeviceptr of OptixInstance[numInstances]
	numInstances   uint32 // @8
	instanceStride uint32 // @12 0 = sizeof(OptixInstance)
}

// optixInstanceInput is OptixBuildInput (1032 bytes) holding its instance
// variant: type @0, the 1024-byte union @8.
type optixInstanceInput struct {
	typ           int32                                 // @0 OptixBuildInputType
	_             uint32                                // @4 pad
	instanceArray optixBuildInputInstanceArray          // @8
	_             [optixBuildInputUnionBytes - 16]uint8 // rest of the union
}

// newInstanceInput allocates, packs and pins an instance build input;
// release with the returned function after the call.
func newInstanceInput(x OptiXInstances) (*optixInstanceInput, func()) {
	in := &optixInstanceInput{typ: optixBuildInputIAS}
	in.instanceArray = optixBuildInputInstanceArray{instances: uint64(x.Instances), numInstances: x.NumInstances}
	var pin runtime.Pinner
	pin.Pin(in)
	return in, pin.Unpin
}

func checkInstances(x OptiXInstances) error {
	if x.NumInstances == 0 || x.Instances == 0 || x.Instances%OptiXInstanceAlignment != 0 {
		return fmt.Errorf("rayd/driver: OptiX instance input: %d instances at %#x (need ≥ 1, %d-byte aligned)",
			x.NumInstances, uint64(x.Instances), OptiXInstanceAlignment)
	}
	return nil
}

// AccelMemoryUsageInstances returns the buffer sizes an instance
// acceleration structure build of x with opt needs
// (optixAccelComputeMemoryUsage).
func (c OptiXContext) AccelMemoryUsageInstances(opt OptiXAccelOptions, x OptiXInstances) (OptiXAccelBufferSizes, error) {
	if err := checkInstances(x); err != nil {
		return OptiXAccelBufferSizes{}, err
	}
	in, unpin := newInstanceInput(x)
	defer unpin()
	o := opt.pack()
	var sz OptiXAccelBufferSizes
	r := invoke("optixAccelComputeMemoryUsage", ox.optixAccelComputeMemoryUsage, c.h, uintptr(unsafe.Pointer(&o)),
		uintptr(unsafe.Pointer(in)), 1, uintptr(unsafe.Pointer(&sz)))
	return sz, optixCheck("optixAccelComputeMemoryUsage", c.dev, r)
}

// AccelBuildInstances queues the build of an instance acceleration
// structure over x on s (optixAccelBuild with one instance input). temp and
// out are 128-byte aligned device buffers of the sizes
// AccelMemoryUsageInstances reported; the records, temp and out must stay
// valid until s has run the build. The returned handle is valid at once.
func (c OptiXContext) AccelBuildInstances(s Stream, opt OptiXAccelOptions, x OptiXInstances, temp DevicePtr, tempBytes uint64,
	out DevicePtr, outBytes uint64) (OptiXTraversable, error) {
	if err := checkInstances(x); err != nil {
		return 0, err
	}
	in, unpin := newInstanceInput(x)
	defer unpin()
	o := opt.pack()
	var h OptiXTraversable
	r := invoke("optixAccelBuild", ox.optixAccelBuild, c.h, s.h, uintptr(unsafe.Pointer(&o)),
		uintptr(unsafe.Pointer(in)), 1, uintptr(temp), uintptr(tempBytes), uintptr(out), uintptr(outBytes),
		uintptr(unsafe.Pointer(&h)), 0, 0)
	return h, optixCheck("optixAccelBuild", c.dev, r)
}
