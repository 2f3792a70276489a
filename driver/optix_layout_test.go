package driver

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldOffsets maps every named (non-blank) field of v's struct type to its
// offset.
func fieldOffsets(v any) map[string]uintptr {
	t := reflect.TypeOf(v)
	out := map[string]uintptr{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name != "_" {
			out[f.Name] = f.Offset
		}
	}
	return out
}

// checkLayout compares a Go struct with the size, alignment and field
// offsets of its C counterpart (optix-dev v9.0.0 include/optix_types.h
// compiled with gcc on x86-64 Linux).
func checkLayout(t *testing.T, name string, v any, size, align uintptr, want map[string]uintptr) {
	t.Helper()
	assert.Equal(t, size, reflect.TypeOf(v).Size(), "%s size", name)
	assert.Equal(t, align, uintptr(reflect.TypeOf(v).Align()), "%s alignment", name)
	got := fieldOffsets(v)
	assert.Equal(t, want, got, "%s field offsets", name)
}

func TestOptiXStructLayouts(t *testing.T) {
	checkLayout(t, "OptixDeviceContextOptions", optixDeviceContextOptions{}, 24, 8, map[string]uintptr{
		"logCallbackFunction": 0, "logCallbackData": 8, "logCallbackLevel": 16, "validationMode": 20})
	checkLayout(t, "OptixMotionOptions", optixMotionOptions{}, 12, 4, map[string]uintptr{
		"numKeys": 0, "flags": 2, "timeBegin": 4, "timeEnd": 8})
	checkLayout(t, "OptixAccelBuildOptions", optixAccelBuildOptions{}, 20, 4, map[string]uintptr{
		"buildFlags": 0, "operation": 4, "motionOptions": 8})
	checkLayout(t, "OptixAccelBufferSizes", OptiXAccelBufferSizes{}, 24, 8, map[string]uintptr{
		"OutputBytes": 0, "TempBytes": 8, "TempUpdateBytes": 16})
	checkLayout(t, "OptixAccelEmitDesc", optixAccelEmitDesc{}, 16, 8, map[string]uintptr{"result": 0, "typ": 8})
	checkLayout(t, "OptixBuildInputTriangleArray", optixBuildInputTriangleArray{}, 240, 8, map[string]uintptr{
		"vertexBuffers": 0, "numVertices": 8, "vertexFormat": 12, "vertexStrideInBytes": 16,
		"indexBuffer": 24, "numIndexTriplets": 32, "indexFormat": 36, "indexStrideInBytes": 40,
		"preTransform": 48, "flags": 56, "numSbtRecords": 64, "sbtIndexOffsetBuffer": 72,
		"sbtIndexOffsetSizeInBytes": 80, "sbtIndexOffsetStrideInBytes": 84, "primitiveIndexOffset": 88,
		"transformFormat": 92, "opacityMicromap": 96, "displacementMicromap": 144})
	checkLayout(t, "OptixBuildInput", optixBuildInput{}, 1032, 8, map[string]uintptr{"typ": 0, "triangleArray": 8})
	checkLayout(t, "OptixModuleCompileOptions", optixModuleCompileOptions{}, 40, 8, map[string]uintptr{
		"maxRegisterCount": 0, "optLevel": 4, "debugLevel": 8, "boundValues": 16, "numBoundValues": 24,
		"numPayloadTypes": 28, "payloadTypes": 32})
	checkLayout(t, "OptixPipelineCompileOptions", optixPipelineCompileOptions{}, 48, 8, map[string]uintptr{
		"usesMotionBlur": 0, "traversableGraphFlags": 4, "numPayloadValues": 8, "numAttributeValues": 12,
		"exceptionFlags": 16, "pipelineLaunchParamsVariableName": 24, "usesPrimitiveTypeFlags": 32,
		"allowOpacityMicromaps": 36, "allowClusteredGeometry": 40})
	checkLayout(t, "OptixPipelineLinkOptions", optixPipelineLinkOptions{}, 4, 4, map[string]uintptr{"maxTraceDepth": 0})
	checkLayout(t, "OptixProgramGroupOptions", optixProgramGroupOptions{}, 8, 8, map[string]uintptr{"payloadType": 0})
	checkLayout(t, "OptixProgramGroupDesc", optixProgramGroupDesc{}, 56, 8, map[string]uintptr{
		"kind": 0, "flags": 4, "module1": 8, "entry1": 16, "module2": 24, "entry2": 32, "module3": 40, "entry3": 48})
	checkLayout(t, "OptixStackSizes", OptiXStackSizes{}, 28, 4, map[string]uintptr{
		"CSSRG": 0, "CSSMS": 4, "CSSCH": 8, "CSSAH": 12, "CSSIS": 16, "CSSCC": 20, "DSSDC": 24})
	checkLayout(t, "OptixShaderBindingTable", OptiXShaderBindingTable{}, 64, 8, map[string]uintptr{
		"RaygenRecord": 0, "ExceptionRecord": 8, "MissRecordBase": 16, "MissRecordStrideInBytes": 24,
		"MissRecordCount": 28, "HitgroupRecordBase": 32, "HitgroupRecordStrideInBytes": 40, "HitgroupRecordCount": 44,
		"CallablesRecordBase": 48, "CallablesRecordStrideInBytes": 56, "CallablesRecordCount": 60})
}

func TestOptiXFunctionTableMatchesABI105(t *testing.T) {
	assert.Equal(t, 105, OptiXABI)
	assert.Equal(t, uintptr(OptiXTableBytes), unsafe.Sizeof(optixTable{}))
	assert.Equal(t, 416, OptiXTableBytes)
	assert.Equal(t, OptiXTableEntries, reflect.TypeOf(optixTable{}).NumField())
	// The entries rayd-go calls sit at their ABI-105 indices (optix-dev
	// v9.0.0 include/optix_function_table.h).
	idx := map[string]int{
		"optixGetErrorName": 0, "optixDeviceContextCreate": 2, "optixDeviceContextDestroy": 3,
		"optixDeviceContextGetProperty": 4, "optixDeviceContextSetLogCallback": 5,
		"optixDeviceContextSetCacheEnabled": 6, "optixDeviceContextSetCacheLocation": 7,
		"optixDeviceContextSetCacheDatabaseSizes": 8, "optixDeviceContextGetCacheEnabled": 9,
		"optixDeviceContextGetCacheLocation": 10, "optixDeviceContextGetCacheDatabaseSizes": 11,
		"optixModuleCreate": 12, "optixModuleDestroy": 15, "optixProgramGroupCreate": 18,
		"optixProgramGroupDestroy": 19, "optixProgramGroupGetStackSize": 20, "optixPipelineCreate": 21,
		"optixPipelineDestroy": 22, "optixPipelineSetStackSize": 23, "optixAccelComputeMemoryUsage": 24,
		"optixAccelBuild": 25, "optixAccelCompact": 29, "optixClusterAccelComputeMemoryUsage": 38,
		"optixClusterAccelBuild": 39, "optixSbtRecordPackHeader": 40, "optixLaunch": 41,
		"optixCoopVecMatrixConvert": 42, "optixDenoiserCreate": 44, "optixDenoiserCreateWithUserModel": 51,
	}
	typ := reflect.TypeOf(optixTable{})
	for name, i := range idx {
		f, ok := typ.FieldByName(name)
		require.True(t, ok, name)
		assert.Equal(t, uintptr(8*i), f.Offset, "%s must be entry %d", name, i)
	}
}

func TestOptiXBuildInputPacking(t *testing.T) {
	ti, unpin := newTriangleInput(OptiXTriangles{Vertices: 0x1000, NumVertices: 9, Indices: 0x2000, NumTriangles: 3,
		GeometryFlags: OptiXGeometryDisableAnyHit})
	defer unpin()
	b := unsafe.Slice((*byte)(unsafe.Pointer(&ti.in)), unsafe.Sizeof(ti.in))
	u32 := func(off int) uint32 { return *(*uint32)(unsafe.Pointer(&b[off])) }
	u64 := func(off int) uint64 { return *(*uint64)(unsafe.Pointer(&b[off])) }
	assert.Equal(t, uint32(0x2141), u32(0), "type TRIANGLES")
	assert.Equal(t, uint64(uintptr(unsafe.Pointer(&ti.vbufs[0]))), u64(8), "vertexBuffers points at the pinned array")
	assert.Equal(t, uint64(0x1000), ti.vbufs[0])
	assert.Equal(t, uint32(9), u32(8+8))
	assert.Equal(t, uint32(0x2121), u32(8+12), "FLOAT3")
	assert.Equal(t, uint64(0x2000), u64(8+24))
	assert.Equal(t, uint32(3), u32(8+32))
	assert.Equal(t, uint32(0x2103), u32(8+36), "UNSIGNED_INT3")
	assert.Equal(t, uint64(uintptr(unsafe.Pointer(&ti.sbtFlag[0]))), u64(8+56))
	assert.Equal(t, uint32(1), ti.sbtFlag[0])
	assert.Equal(t, uint32(1), u32(8+64), "one SBT record")
	for off := 8 + 96; off < len(b); off++ {
		require.Zero(t, b[off], "micromaps and the rest of the union stay zero (byte %d)", off)
	}
	o := OptiXAccelOptions{BuildFlags: OptiXBuildAllowUpdate | OptiXBuildPreferFastTrace, Update: true}.pack()
	assert.Equal(t, int32(0x2162), o.operation)
	assert.Equal(t, uint32(5), o.buildFlags)
	assert.Equal(t, int32(0x2161), OptiXAccelOptions{}.pack().operation)
}

func TestOptiXCompileOptionsPacking(t *testing.T) {
	co, unpin, err := newCompileOpts(OptiXCompileOptions{PayloadValues: 4, AttributeValues: 0, ParamsName: "params",
		TraversableGraph: OptiXGraphAllowSingleGAS, TrianglesOnly: true})
	require.NoError(t, err)
	defer unpin()
	assert.Equal(t, int32(4), co.pco.numPayloadValues)
	assert.Equal(t, int32(2), co.pco.numAttributeValues, "triangles need at least 2 attribute words")
	assert.Equal(t, uint32(1), co.pco.traversableGraphFlags)
	assert.Equal(t, uint32(0x80000000), co.pco.usesPrimitiveTypeFlags)
	assert.Equal(t, uintptr(unsafe.Pointer(&co.name[0])), co.pco.pipelineLaunchParamsVariableName)
	assert.Equal(t, "params", goString(&co.name[0]), "NUL-terminated in the pinned holder")
	assert.Equal(t, int32(0x2350), co.mco.debugLevel)
	assert.Zero(t, co.pco.allowClusteredGeometry)
	_, _, err = newCompileOpts(OptiXCompileOptions{PayloadValues: 33})
	assert.Error(t, err)
	_, _, err = newCompileOpts(OptiXCompileOptions{ParamsName: string(make([]byte, 64))})
	assert.Error(t, err)
}

func TestContinuationStackSize(t *testing.T) {
	s := MaxStackSizes(OptiXStackSizes{CSSRG: 96}, OptiXStackSizes{CSSMS: 8}, OptiXStackSizes{CSSCH: 24, CSSAH: 4, CSSIS: 16})
	assert.Equal(t, OptiXStackSizes{CSSRG: 96, CSSMS: 8, CSSCH: 24, CSSAH: 4, CSSIS: 16}, s)
	assert.Equal(t, uint32(96+24), ContinuationStackSize(s, 1))
	assert.Equal(t, uint32(96+24+24), ContinuationStackSize(s, 2))
	s.CSSIS = 40
	assert.Equal(t, uint32(96+44), ContinuationStackSize(s, 1))
	assert.Equal(t, uint32(96), ContinuationStackSize(s, 0))
}

func TestCallLogTrimsToReportedSize(t *testing.T) {
	l := newCallLog()
	copy(l.buf[:], "hello\x00junk")
	l.size = 6
	assert.Equal(t, "hello", l.String())
	l.size = 1 << 20 // OptiX reports the untruncated length
	copy(l.buf[:], "abc")
	assert.Equal(t, "abclo", l.String(), "cut at the first NUL")
}
