package driver

// C structs of the OptiX 9.0 host API (ABI 105), x86-64 Linux layouts. Every
// implicit C padding is an explicit blank field, so unsafe.Offsetof of each
// field equals the C offsetof (checked by optix_layout_test.go against the
// offsets measured from optix-dev v9.0.0 include/optix_types.h). Pointer
// fields that reference host memory are uintptr: the memory they point to
// must be pinned (runtime.Pinner) and kept alive for the call.

// optixDeviceContextOptions is OptixDeviceContextOptions (24 bytes).
type optixDeviceContextOptions struct {
	logCallbackFunction uintptr // @0  OptixLogCallback
	logCallbackData     uintptr // @8  void*
	logCallbackLevel    int32   // @16 0 off .. 4 print
	validationMode      uint32  // @20 OFF 0, ALL 0xFFFFFFFF
}

// optixMotionOptions is OptixMotionOptions (12 bytes).
type optixMotionOptions struct {
	numKeys   uint16  // @0
	flags     uint16  // @2
	timeBegin float32 // @4
	timeEnd   float32 // @8
}

// optixAccelBuildOptions is OptixAccelBuildOptions (20 bytes).
type optixAccelBuildOptions struct {
	buildFlags    uint32             // @0  OptixBuildFlags
	operation     int32              // @4  OptixBuildOperation
	motionOptions optixMotionOptions // @8
}

// OptiXAccelBufferSizes is OptixAccelBufferSizes (24 bytes): the buffer
// sizes an acceleration structure build needs.
type OptiXAccelBufferSizes struct {
	OutputBytes     uint64 // @0  outputSizeInBytes
	TempBytes       uint64 // @8  tempSizeInBytes
	TempUpdateBytes uint64 // @16 tempUpdateSizeInBytes
}

// optixAccelEmitDesc is OptixAccelEmitDesc (16 bytes).
type optixAccelEmitDesc struct {
	result uint64 // @0  CUdeviceptr receiving a uint64
	typ    int32  // @8  OptixAccelPropertyType
	_      uint32 // @12 pad
}

// optixBuildInputTriangleArray is OptixBuildInputTriangleArray (240 bytes).
type optixBuildInputTriangleArray struct {
	vertexBuffers               uintptr  // @0   const CUdeviceptr* (host array, one per motion key)
	numVertices                 uint32   // @8
	vertexFormat                int32    // @12  OptixVertexFormat
	vertexStrideInBytes         uint32   // @16
	_                           uint32   // @20  pad
	indexBuffer                 uint64   // @24  CUdeviceptr
	numIndexTriplets            uint32   // @32
	indexFormat                 int32    // @36  OptixIndicesFormat
	indexStrideInBytes          uint32   // @40
	_                           uint32   // @44  pad
	preTransform                uint64   // @48  CUdeviceptr
	flags                       uintptr  // @56  const unsigned int* (host array, one per SBT record)
	numSbtRecords               uint32   // @64
	_                           uint32   // @68  pad
	sbtIndexOffsetBuffer        uint64   // @72  CUdeviceptr
	sbtIndexOffsetSizeInBytes   uint32   // @80
	sbtIndexOffsetStrideInBytes uint32   // @84
	primitiveIndexOffset        uint32   // @88
	transformFormat             int32    // @92  OptixTransformFormat
	opacityMicromap             [48]byte // @96  OptixBuildInputOpacityMicromap (zero)
	displacementMicromap        [96]byte // @144 OptixBuildInputDisplacementMicromap (zero)
}

// optixBuildInputUnionBytes is the size of OptixBuildInput's variant union.
const optixBuildInputUnionBytes = 1024

// optixBuildInput is OptixBuildInput (1032 bytes) holding its triangle
// variant: type @0, the 1024-byte union @8.
type optixBuildInput struct {
	typ           int32                                  // @0 OptixBuildInputType
	_             uint32                                 // @4 pad
	triangleArray optixBuildInputTriangleArray           // @8
	_             [optixBuildInputUnionBytes - 240]uint8 // rest of the union
}

// optixModuleCompileOptions is OptixModuleCompileOptions (40 bytes).
type optixModuleCompileOptions struct {
	maxRegisterCount int32   // @0
	optLevel         int32   // @4  OptixCompileOptimizationLevel
	debugLevel       int32   // @8  OptixCompileDebugLevel
	_                uint32  // @12 pad
	boundValues      uintptr // @16 const OptixModuleCompileBoundValueEntry*
	numBoundValues   uint32  // @24
	numPayloadTypes  uint32  // @28
	payloadTypes     uintptr // @32 const OptixPayloadType*
}

// optixPipelineCompileOptions is OptixPipelineCompileOptions of ABI 105 (48
// bytes; 40 in OptiX 8.x, where allowClusteredGeometry does not exist).
type optixPipelineCompileOptions struct {
	usesMotionBlur                   int32   // @0
	traversableGraphFlags            uint32  // @4  OptixTraversableGraphFlags
	numPayloadValues                 int32   // @8
	numAttributeValues               int32   // @12
	exceptionFlags                   uint32  // @16 OptixExceptionFlags
	_                                uint32  // @20 pad
	pipelineLaunchParamsVariableName uintptr // @24 const char*
	usesPrimitiveTypeFlags           uint32  // @32 OptixPrimitiveTypeFlags
	allowOpacityMicromaps            int32   // @36
	allowClusteredGeometry           int32   // @40 (ABI 105)
	_                                uint32  // @44 pad
}

// optixPipelineLinkOptions is OptixPipelineLinkOptions (4 bytes in 8.0–9.0).
type optixPipelineLinkOptions struct {
	maxTraceDepth uint32 // @0
}

// optixProgramGroupOptions is OptixProgramGroupOptions (8 bytes).
type optixProgramGroupOptions struct {
	payloadType uintptr // @0 const OptixPayloadType*
}

// optixProgramGroupDesc is OptixProgramGroupDesc (56 bytes): kind, flags and
// the 48-byte union. The union is written as three (module, entry name)
// pairs: raygen/miss/exception use pair 1; a hit group uses CH, AH, IS in
// pairs 1, 2, 3; callables use DC, CC in pairs 1, 2.
type optixProgramGroupDesc struct {
	kind    int32   // @0  OptixProgramGroupKind
	flags   uint32  // @4  OptixProgramGroupFlags
	module1 uintptr // @8  module / moduleCH / moduleDC
	entry1  uintptr // @16 entryFunctionName / ...CH / ...DC
	module2 uintptr // @24 moduleAH / moduleCC
	entry2  uintptr // @32 entryFunctionNameAH / ...CC
	module3 uintptr // @40 moduleIS
	entry3  uintptr // @48 entryFunctionNameIS
}

// OptiXStackSizes is OptixStackSizes (28 bytes): the continuation stack
// sizes of each program kind of a program group and the direct stack size of
// its direct callables.
type OptiXStackSizes struct {
	CSSRG uint32 // @0  raygen
	CSSMS uint32 // @4  miss
	CSSCH uint32 // @8  closest hit
	CSSAH uint32 // @12 any hit
	CSSIS uint32 // @16 intersection
	CSSCC uint32 // @20 continuation callables
	DSSDC uint32 // @24 direct callables
}

// OptiXShaderBindingTable is OptixShaderBindingTable (64 bytes), the host
// struct optixLaunch reads. Record bases and strides are multiples of
// OptiXSBTRecordAlignment.
type OptiXShaderBindingTable struct {
	RaygenRecord                 DevicePtr // @0
	ExceptionRecord              DevicePtr // @8
	MissRecordBase               DevicePtr // @16
	MissRecordStrideInBytes      uint32    // @24
	MissRecordCount              uint32    // @28
	HitgroupRecordBase           DevicePtr // @32
	HitgroupRecordStrideInBytes  uint32    // @40
	HitgroupRecordCount          uint32    // @44
	CallablesRecordBase          DevicePtr // @48
	CallablesRecordStrideInBytes uint32    // @56
	CallablesRecordCount         uint32    // @60
}

// OptiX constants used by rayd-go (optix_types.h, OptiX 9.0).
const (
	OptiXSBTRecordHeaderSize   = 32  // OPTIX_SBT_RECORD_HEADER_SIZE
	OptiXSBTRecordAlignment    = 16  // OPTIX_SBT_RECORD_ALIGNMENT
	OptiXAccelBufferAlignment  = 128 // OPTIX_ACCEL_BUFFER_BYTE_ALIGNMENT
	OptiXMaxPayloadValues      = 32  // OPTIX_COMPILE_DEFAULT_MAX_PAYLOAD_VALUE_COUNT
	optixBuildInputTriangles   = 0x2141
	optixVertexFormatFloat3    = 0x2121
	optixIndicesFormatUint3    = 0x2103
	optixBuildOperationBuild   = 0x2161
	optixBuildOperationUpdate  = 0x2162
	optixPropertyCompactedSize = 0x2181
	optixCompileDebugNone      = 0x2350
	optixPrimitiveTriangle     = 0x80000000
	optixProgramKindRaygen     = 0x2421
	optixProgramKindMiss       = 0x2422
	optixProgramKindHitgroup   = 0x2424
)

// OptiX build flags (OptixBuildFlags).
const (
	OptiXBuildAllowUpdate     uint32 = 1
	OptiXBuildAllowCompaction uint32 = 2
	OptiXBuildPreferFastTrace uint32 = 4
	OptiXBuildPreferFastBuild uint32 = 8
)

// OptiX geometry flags (OptixGeometryFlags), one word per SBT record of a
// build input.
const (
	OptiXGeometryNone                   uint32 = 0
	OptiXGeometryDisableAnyHit          uint32 = 1
	OptiXGeometryRequireSingleAnyHit    uint32 = 2
	OptiXGeometryDisableTriangleCulling uint32 = 4
)

// OptiX traversable graph flags (OptixTraversableGraphFlags).
const (
	OptiXGraphAllowAny                   uint32 = 0
	OptiXGraphAllowSingleGAS             uint32 = 1
	OptiXGraphAllowSingleLevelInstancing uint32 = 2
)

// OptiX device properties (OptixDeviceProperty) for DeviceProperty.
const (
	OptiXPropMaxTraceDepth       = 0x2001
	OptiXPropMaxPrimitivesPerGAS = 0x2003
	OptiXPropRTCoreVersion       = 0x2005
)
