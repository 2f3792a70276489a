package driver

import (
	"sync/atomic"

	"github.com/ebitengine/purego"
)

// cudaSyms is the raw symbol table of libcuda.so.1. Field names are the exact
// exported symbols; each comment is the C prototype (cuda.h, CUDA 13.0).
type cudaSyms struct {
	cuInit             uintptr // CUresult cuInit(unsigned int Flags);
	cuDriverGetVersion uintptr // CUresult cuDriverGetVersion(int *driverVersion);
	cuGetErrorName     uintptr // CUresult cuGetErrorName(CUresult error, const char **pStr);
	cuGetErrorString   uintptr // CUresult cuGetErrorString(CUresult error, const char **pStr);

	cuDeviceGetCount      uintptr // CUresult cuDeviceGetCount(int *count);
	cuDeviceGet           uintptr // CUresult cuDeviceGet(CUdevice *device, int ordinal);
	cuDeviceGetName       uintptr // CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
	cuDeviceGetAttribute  uintptr // CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
	cuDeviceTotalMem_v2   uintptr // CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
	cuDeviceGetUuid_v2    uintptr // CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
	cuDeviceGetPCIBusId   uintptr // CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
	cuDeviceCanAccessPeer uintptr // CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);

	cuDevicePrimaryCtxRetain     uintptr // CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
	cuDevicePrimaryCtxRelease_v2 uintptr // CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
	cuCtxSetCurrent              uintptr // CUresult cuCtxSetCurrent(CUcontext ctx);
	cuCtxGetCurrent              uintptr // CUresult cuCtxGetCurrent(CUcontext *pctx);
	cuCtxSynchronize             uintptr // CUresult cuCtxSynchronize(void);
	cuCtxEnablePeerAccess        uintptr // CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);
	cuCtxDisablePeerAccess       uintptr // CUresult cuCtxDisablePeerAccess(CUcontext peerContext);

	cuStreamCreate      uintptr // CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
	cuStreamDestroy_v2  uintptr // CUresult cuStreamDestroy_v2(CUstream hStream);
	cuStreamSynchronize uintptr // CUresult cuStreamSynchronize(CUstream hStream);
	cuStreamQuery       uintptr // CUresult cuStreamQuery(CUstream hStream);
	cuStreamWaitEvent   uintptr // CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);

	cuEventCreate         uintptr // CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
	cuEventRecord         uintptr // CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
	cuEventSynchronize    uintptr // CUresult cuEventSynchronize(CUevent hEvent);
	cuEventQuery          uintptr // CUresult cuEventQuery(CUevent hEvent);
	cuEventElapsedTime_v2 uintptr // CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd); (CUDA 12.8+)
	cuEventElapsedTime    uintptr // CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd); (older drivers)
	cuEventDestroy_v2     uintptr // CUresult cuEventDestroy_v2(CUevent hEvent);

	cuMemAlloc_v2             uintptr // CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
	cuMemFree_v2              uintptr // CUresult cuMemFree_v2(CUdeviceptr dptr);
	cuMemAllocAsync           uintptr // CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream); (optional)
	cuMemFreeAsync            uintptr // CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream); (optional)
	cuDeviceGetDefaultMemPool uintptr // CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev); (optional)
	cuMemPoolSetAttribute     uintptr // CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value); (optional)
	cuMemPoolTrimTo           uintptr // CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep); (optional)
	cuMemPoolSetAccess        uintptr // CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count); (optional)
	cuMemAllocHost_v2         uintptr // CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
	cuMemFreeHost             uintptr // CUresult cuMemFreeHost(void *p);
	cuMemGetInfo_v2           uintptr // CUresult cuMemGetInfo_v2(size_t *free, size_t *total);

	cuMemcpyHtoD_v2       uintptr // CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
	cuMemcpyDtoH_v2       uintptr // CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
	cuMemcpyDtoD_v2       uintptr // CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
	cuMemcpyHtoDAsync_v2  uintptr // CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream);
	cuMemcpyDtoHAsync_v2  uintptr // CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
	cuMemcpyDtoDAsync_v2  uintptr // CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
	cuMemcpyPeer          uintptr // CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount);
	cuMemcpyPeerAsync     uintptr // CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream);
	cuMemsetD8_v2         uintptr // CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
	cuMemsetD32_v2        uintptr // CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
	cuMemsetD8Async       uintptr // CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
	cuMemsetD32Async      uintptr // CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
	cuPointerGetAttribute uintptr // CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);

	cuModuleLoadDataEx   uintptr // CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues);
	cuModuleGetFunction  uintptr // CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
	cuModuleGetGlobal_v2 uintptr // CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name);
	cuModuleUnload       uintptr // CUresult cuModuleUnload(CUmodule hmod);
	cuFuncGetAttribute   uintptr // CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
	// CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize);
	cuOccupancyMaxActiveBlocksPerMultiprocessor uintptr
	cuLaunchKernel                              uintptr // CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
}

// cudaSymbolList is the explicit symbol list: required symbols fail the load
// when absent; optional ones become capabilities (see HasAsyncAlloc).
func (c *cudaSyms) symbolList() []symbol {
	req := func(name string, p *uintptr) symbol { return symbol{name: name, ptr: p, required: true} }
	opt := func(name string, p *uintptr) symbol { return symbol{name: name, ptr: p} }
	return []symbol{
		req("cuInit", &c.cuInit), req("cuDriverGetVersion", &c.cuDriverGetVersion),
		req("cuGetErrorName", &c.cuGetErrorName), req("cuGetErrorString", &c.cuGetErrorString),
		req("cuDeviceGetCount", &c.cuDeviceGetCount), req("cuDeviceGet", &c.cuDeviceGet),
		req("cuDeviceGetName", &c.cuDeviceGetName), req("cuDeviceGetAttribute", &c.cuDeviceGetAttribute),
		req("cuDeviceTotalMem_v2", &c.cuDeviceTotalMem_v2), opt("cuDeviceGetUuid_v2", &c.cuDeviceGetUuid_v2),
		req("cuDeviceGetPCIBusId", &c.cuDeviceGetPCIBusId), req("cuDeviceCanAccessPeer", &c.cuDeviceCanAccessPeer),
		req("cuDevicePrimaryCtxRetain", &c.cuDevicePrimaryCtxRetain),
		req("cuDevicePrimaryCtxRelease_v2", &c.cuDevicePrimaryCtxRelease_v2),
		req("cuCtxSetCurrent", &c.cuCtxSetCurrent), req("cuCtxGetCurrent", &c.cuCtxGetCurrent),
		req("cuCtxSynchronize", &c.cuCtxSynchronize),
		req("cuCtxEnablePeerAccess", &c.cuCtxEnablePeerAccess), req("cuCtxDisablePeerAccess", &c.cuCtxDisablePeerAccess),
		req("cuStreamCreate", &c.cuStreamCreate), req("cuStreamDestroy_v2", &c.cuStreamDestroy_v2),
		req("cuStreamSynchronize", &c.cuStreamSynchronize), req("cuStreamQuery", &c.cuStreamQuery),
		req("cuStreamWaitEvent", &c.cuStreamWaitEvent),
		req("cuEventCreate", &c.cuEventCreate), req("cuEventRecord", &c.cuEventRecord),
		req("cuEventSynchronize", &c.cuEventSynchronize), req("cuEventQuery", &c.cuEventQuery),
		opt("cuEventElapsedTime_v2", &c.cuEventElapsedTime_v2), req("cuEventElapsedTime", &c.cuEventElapsedTime),
		req("cuEventDestroy_v2", &c.cuEventDestroy_v2),
		req("cuMemAlloc_v2", &c.cuMemAlloc_v2), req("cuMemFree_v2", &c.cuMemFree_v2),
		opt("cuMemAllocAsync", &c.cuMemAllocAsync), opt("cuMemFreeAsync", &c.cuMemFreeAsync),
		opt("cuDeviceGetDefaultMemPool", &c.cuDeviceGetDefaultMemPool),
		opt("cuMemPoolSetAttribute", &c.cuMemPoolSetAttribute), opt("cuMemPoolTrimTo", &c.cuMemPoolTrimTo),
		opt("cuMemPoolSetAccess", &c.cuMemPoolSetAccess),
		req("cuMemAllocHost_v2", &c.cuMemAllocHost_v2), req("cuMemFreeHost", &c.cuMemFreeHost),
		req("cuMemGetInfo_v2", &c.cuMemGetInfo_v2),
		req("cuMemcpyHtoD_v2", &c.cuMemcpyHtoD_v2), req("cuMemcpyDtoH_v2", &c.cuMemcpyDtoH_v2),
		req("cuMemcpyDtoD_v2", &c.cuMemcpyDtoD_v2),
		req("cuMemcpyHtoDAsync_v2", &c.cuMemcpyHtoDAsync_v2), req("cuMemcpyDtoHAsync_v2", &c.cuMemcpyDtoHAsync_v2),
		req("cuMemcpyDtoDAsync_v2", &c.cuMemcpyDtoDAsync_v2),
		req("cuMemcpyPeer", &c.cuMemcpyPeer), req("cuMemcpyPeerAsync", &c.cuMemcpyPeerAsync),
		req("cuMemsetD8_v2", &c.cuMemsetD8_v2), req("cuMemsetD32_v2", &c.cuMemsetD32_v2),
		req("cuMemsetD8Async", &c.cuMemsetD8Async), req("cuMemsetD32Async", &c.cuMemsetD32Async),
		req("cuPointerGetAttribute", &c.cuPointerGetAttribute),
		req("cuModuleLoadDataEx", &c.cuModuleLoadDataEx), req("cuModuleGetFunction", &c.cuModuleGetFunction),
		req("cuModuleGetGlobal_v2", &c.cuModuleGetGlobal_v2), req("cuModuleUnload", &c.cuModuleUnload),
		req("cuFuncGetAttribute", &c.cuFuncGetAttribute), req("cuLaunchKernel", &c.cuLaunchKernel),
		req("cuOccupancyMaxActiveBlocksPerMultiprocessor", &c.cuOccupancyMaxActiveBlocksPerMultiprocessor),
	}
}

var (
	cuda    cudaSyms
	cudaLib = library{name: "libcuda", envVar: "RAYD_LIBCUDA", candidates: defaultPaths("libcuda.so.1")}
)

// FaultFunc decides, per driver call, whether to fail it: returning a non-zero
// Result makes the named call return that status without reaching the driver.
type FaultFunc func(symbol string) Result

var faultHook atomic.Pointer[FaultFunc]

// InjectFaults installs f as the fault hook for every subsequent driver call
// and returns a function that removes it. It exists for tests (fault sweeps
// over whole operations); production code never calls it.
func InjectFaults(f FaultFunc) (restore func()) {
	faultHook.Store(&f)
	return func() { faultHook.Store(nil) }
}

// callCount counts the calls that reach a library: context binds
// (cuCtxSetCurrent) apart from every other call, and event creations and
// device allocations among them.
var callCount struct{ calls, binds, events, allocs atomic.Int64 }

// Creations returns how many events (cuEventCreate) and device allocations
// (cuMemAlloc_v2, cuMemAllocAsync) this process has asked the driver for so
// far; both are also counted in CallCounts.
func Creations() (events, allocs int64) { return callCount.events.Load(), callCount.allocs.Load() }

// CallCounts returns the number of driver calls this process has made so
// far (every CUDA, OptiX and NCCL entry point reached through this package,
// context binds excluded) and, apart, the number of context binds
// (cuCtxSetCurrent). Counting costs one atomic addition per call. The
// difference of two readings around a call is that call's count when no
// other goroutine used the driver in between, an upper bound otherwise.
func CallCounts() (calls, binds int64) { return callCount.calls.Load(), callCount.binds.Load() }

// invoke calls a C function through purego and returns its 32-bit status. It
// is the single call site of the package, so the fault hook sees every call.
// Pointers converted to uintptr in the argument list stay alive and unmoved
// for the call (go:uintptrescapes).
//
//go:uintptrescapes
func invoke(name string, fn uintptr, args ...uintptr) Result {
	if h := faultHook.Load(); h != nil {
		if r := (*h)(name); r != Success {
			return r
		}
	}
	if fn == 0 {
		return ErrNotInitialized
	}
	switch fn {
	case cuda.cuCtxSetCurrent:
		callCount.binds.Add(1)
	case cuda.cuEventCreate:
		callCount.events.Add(1)
		callCount.calls.Add(1)
	case cuda.cuMemAlloc_v2, cuda.cuMemAllocAsync:
		callCount.allocs.Add(1)
		callCount.calls.Add(1)
	default:
		callCount.calls.Add(1)
	}
	r1, _, _ := purego.SyscallN(fn, args...)
	return Result(uint32(r1))
}
