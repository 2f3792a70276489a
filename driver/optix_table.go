package driver

import (
	"fmt"
	"sync"
	"unsafe"
)

// The OptiX ABI rayd-go binds: OptiX 9.0.0 = ABI 105, a function table of
// 52 pointers (416 bytes). optixQueryFunctionTable accepts a table only when
// both the ABI id and its byte size match the driver's (a wrong size is
// OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH, an unknown ABI
// OPTIX_ERROR_UNSUPPORTED_ABI_VERSION).
const (
	OptiXABI          = 105
	OptiXTableEntries = 52
	OptiXTableBytes   = OptiXTableEntries * 8
)

// optixTable is the ABI-105 function table (optix-dev v9.0.0
// include/optix_function_table.h), filled by optixQueryFunctionTable. Field
// order is the table order; each comment is the C prototype. Every entry
// returns OptixResult unless noted.
type optixTable struct {
	optixGetErrorName                                uintptr // const char* (OptixResult)
	optixGetErrorString                              uintptr // const char* (OptixResult)
	optixDeviceContextCreate                         uintptr // (CUcontext fromContext, const OptixDeviceContextOptions*, OptixDeviceContext*)
	optixDeviceContextDestroy                        uintptr // (OptixDeviceContext)
	optixDeviceContextGetProperty                    uintptr // (OptixDeviceContext, OptixDeviceProperty, void* value, size_t sizeInBytes)
	optixDeviceContextSetLogCallback                 uintptr // (OptixDeviceContext, OptixLogCallback, void* data, unsigned int level)
	optixDeviceContextSetCacheEnabled                uintptr // (OptixDeviceContext, int enabled)
	optixDeviceContextSetCacheLocation               uintptr // (OptixDeviceContext, const char* location)
	optixDeviceContextSetCacheDatabaseSizes          uintptr // (OptixDeviceContext, size_t low, size_t high)
	optixDeviceContextGetCacheEnabled                uintptr // (OptixDeviceContext, int* enabled)
	optixDeviceContextGetCacheLocation               uintptr // (OptixDeviceContext, char* location, size_t locationSize)
	optixDeviceContextGetCacheDatabaseSizes          uintptr // (OptixDeviceContext, size_t* low, size_t* high)
	optixModuleCreate                                uintptr // (OptixDeviceContext, const OptixModuleCompileOptions*, const OptixPipelineCompileOptions*, const char* input, size_t inputSize, char* log, size_t* logSize, OptixModule*)
	optixModuleCreateWithTasks                       uintptr // (OptixDeviceContext, const OptixModuleCompileOptions*, const OptixPipelineCompileOptions*, const char*, size_t, char*, size_t*, OptixModule*, OptixTask*)
	optixModuleGetCompilationState                   uintptr // (OptixModule, OptixModuleCompileState*)
	optixModuleDestroy                               uintptr // (OptixModule)
	optixBuiltinISModuleGet                          uintptr // (OptixDeviceContext, const OptixModuleCompileOptions*, const OptixPipelineCompileOptions*, const OptixBuiltinISOptions*, OptixModule*)
	optixTaskExecute                                 uintptr // (OptixTask, OptixTask* additional, unsigned int max, unsigned int* created)
	optixProgramGroupCreate                          uintptr // (OptixDeviceContext, const OptixProgramGroupDesc*, unsigned int n, const OptixProgramGroupOptions*, char* log, size_t* logSize, OptixProgramGroup*)
	optixProgramGroupDestroy                         uintptr // (OptixProgramGroup)
	optixProgramGroupGetStackSize                    uintptr // (OptixProgramGroup, OptixStackSizes*, OptixPipeline)
	optixPipelineCreate                              uintptr // (OptixDeviceContext, const OptixPipelineCompileOptions*, const OptixPipelineLinkOptions*, const OptixProgramGroup*, unsigned int n, char* log, size_t* logSize, OptixPipeline*)
	optixPipelineDestroy                             uintptr // (OptixPipeline)
	optixPipelineSetStackSize                        uintptr // (OptixPipeline, unsigned int dcFromTraversal, unsigned int dcFromState, unsigned int continuation, unsigned int maxTraversableGraphDepth)
	optixAccelComputeMemoryUsage                     uintptr // (OptixDeviceContext, const OptixAccelBuildOptions*, const OptixBuildInput*, unsigned int n, OptixAccelBufferSizes*)
	optixAccelBuild                                  uintptr // (OptixDeviceContext, CUstream, const OptixAccelBuildOptions*, const OptixBuildInput*, unsigned int n, CUdeviceptr temp, size_t tempBytes, CUdeviceptr out, size_t outBytes, OptixTraversableHandle*, const OptixAccelEmitDesc*, unsigned int numEmitted)
	optixAccelGetRelocationInfo                      uintptr // (OptixDeviceContext, OptixTraversableHandle, OptixRelocationInfo*)
	optixCheckRelocationCompatibility                uintptr // (OptixDeviceContext, const OptixRelocationInfo*, int* compatible)
	optixAccelRelocate                               uintptr // (OptixDeviceContext, CUstream, const OptixRelocationInfo*, const OptixRelocateInput*, size_t n, CUdeviceptr target, size_t targetBytes, OptixTraversableHandle*)
	optixAccelCompact                                uintptr // (OptixDeviceContext, CUstream, OptixTraversableHandle in, CUdeviceptr out, size_t outBytes, OptixTraversableHandle*)
	optixAccelEmitProperty                           uintptr // (OptixDeviceContext, CUstream, OptixTraversableHandle, const OptixAccelEmitDesc*)
	optixConvertPointerToTraversableHandle           uintptr // (OptixDeviceContext, CUdeviceptr, OptixTraversableType, OptixTraversableHandle*)
	optixOpacityMicromapArrayComputeMemoryUsage      uintptr // (OptixDeviceContext, const OptixOpacityMicromapArrayBuildInput*, OptixMicromapBufferSizes*)
	optixOpacityMicromapArrayBuild                   uintptr // (OptixDeviceContext, CUstream, const OptixOpacityMicromapArrayBuildInput*, const OptixMicromapBuffers*)
	optixOpacityMicromapArrayGetRelocationInfo       uintptr // (OptixDeviceContext, CUdeviceptr, OptixRelocationInfo*)
	optixOpacityMicromapArrayRelocate                uintptr // (OptixDeviceContext, CUstream, const OptixRelocationInfo*, CUdeviceptr, size_t)
	optixDisplacementMicromapArrayComputeMemoryUsage uintptr // (OptixDeviceContext, const OptixDisplacementMicromapArrayBuildInput*, OptixMicromapBufferSizes*)
	optixDisplacementMicromapArrayBuild              uintptr // (OptixDeviceContext, CUstream, const OptixDisplacementMicromapArrayBuildInput*, const OptixMicromapBuffers*)
	optixClusterAccelComputeMemoryUsage              uintptr // (OptixDeviceContext, OptixClusterAccelBuildMode, const OptixClusterAccelBuildInput*, OptixAccelBufferSizes*)
	optixClusterAccelBuild                           uintptr // (OptixDeviceContext, CUstream, const OptixClusterAccelBuildModeDesc*, const OptixClusterAccelBuildInput*, CUdeviceptr, CUdeviceptr, unsigned int)
	optixSbtRecordPackHeader                         uintptr // (OptixProgramGroup, void* sbtRecordHeaderHostPointer)
	optixLaunch                                      uintptr // (OptixPipeline, CUstream, CUdeviceptr params, size_t paramsBytes, const OptixShaderBindingTable*, unsigned int w, unsigned int h, unsigned int d)
	optixCoopVecMatrixConvert                        uintptr // (OptixDeviceContext, CUstream, unsigned int, const OptixNetworkDescription*, CUdeviceptr, size_t, const OptixNetworkDescription*, CUdeviceptr, size_t)
	optixCoopVecMatrixComputeSize                    uintptr // (OptixDeviceContext, unsigned int N, unsigned int K, OptixCoopVecElemType, OptixCoopVecMatrixLayout, size_t rowColumnStride, size_t* size)
	optixDenoiserCreate                              uintptr // (OptixDeviceContext, OptixDenoiserModelKind, const OptixDenoiserOptions*, OptixDenoiser*)
	optixDenoiserDestroy                             uintptr // (OptixDenoiser)
	optixDenoiserComputeMemoryResources              uintptr // (const OptixDenoiser, unsigned int w, unsigned int h, OptixDenoiserSizes*)
	optixDenoiserSetup                               uintptr // (OptixDenoiser, CUstream, unsigned int, unsigned int, CUdeviceptr, size_t, CUdeviceptr, size_t)
	optixDenoiserInvoke                              uintptr // (OptixDenoiser, CUstream, const OptixDenoiserParams*, CUdeviceptr, size_t, const OptixDenoiserGuideLayer*, const OptixDenoiserLayer*, unsigned int, unsigned int, unsigned int, CUdeviceptr, size_t)
	optixDenoiserComputeIntensity                    uintptr // (OptixDenoiser, CUstream, const OptixImage2D*, CUdeviceptr, CUdeviceptr, size_t)
	optixDenoiserComputeAverageColor                 uintptr // (OptixDenoiser, CUstream, const OptixImage2D*, CUdeviceptr, CUdeviceptr, size_t)
	optixDenoiserCreateWithUserModel                 uintptr // (OptixDeviceContext, const void* data, size_t bytes, OptixDenoiser*)
}

var (
	optixTableOnce sync.Once
	optixTableErr  error
	ox             optixTable
)

// LoadOptiXTable opens libcuda (cuInit) and libnvoptix and queries the
// ABI-105 function table, once per process. Without the library it returns
// an error matching ErrNoDriver; a driver that lacks ABI 105 gives an
// *OptiXError with OptiXErrUnsupportedABIVersion.
func LoadOptiXTable() error {
	optixTableOnce.Do(func() { optixTableErr = loadOptiXTable() })
	return optixTableErr
}

func loadOptiXTable() error {
	if err := Load(); err != nil {
		return err
	}
	if err := LoadOptiX(); err != nil {
		return err
	}
	var t optixTable
	r := invoke("optixQueryFunctionTable", optix.optixQueryFunctionTable, OptiXABI, 0, 0, 0,
		uintptr(unsafe.Pointer(&t)), unsafe.Sizeof(t))
	if err := optixCheck("optixQueryFunctionTable", -1, r); err != nil {
		return fmt.Errorf("OptiX ABI %d (%d-byte table): %w", OptiXABI, OptiXTableBytes, err)
	}
	ox = t
	return nil
}
