package driver

import "unsafe"

// optixSyms is the entry symbol of libnvoptix.so.1. The function table it
// returns (ABI 105, 52 entries) is bound by the OptiX backend.
type optixSyms struct {
	optixQueryFunctionTable uintptr // OptixResult optixQueryFunctionTable(int abiId, unsigned int numOptions, OptixQueryFunctionTableOptions*, const void** optionValues, void* functionTable, size_t sizeOfTable);
}

// ncclSyms is the raw symbol table of libnccl.so.2 (nccl.h 2.28).
type ncclSyms struct {
	ncclGetVersion        uintptr // ncclResult_t ncclGetVersion(int *version);
	ncclGetUniqueId       uintptr // ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
	ncclCommInitRank      uintptr // ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
	ncclCommInitAll       uintptr // ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist);
	ncclAllReduce         uintptr // ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
	ncclGroupStart        uintptr // ncclResult_t ncclGroupStart(void);
	ncclGroupEnd          uintptr // ncclResult_t ncclGroupEnd(void);
	ncclCommDestroy       uintptr // ncclResult_t ncclCommDestroy(ncclComm_t comm);
	ncclCommAbort         uintptr // ncclResult_t ncclCommAbort(ncclComm_t comm);
	ncclCommGetAsyncError uintptr // ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
	ncclGetErrorString    uintptr // const char* ncclGetErrorString(ncclResult_t result);
}

var (
	optix    optixSyms
	optixLib = library{name: "libnvoptix", envVar: "RAYD_LIBNVOPTIX", candidates: defaultPaths("libnvoptix.so.1")}
	nccl     ncclSyms
	ncclLib  = library{name: "libnccl", envVar: "RAYD_LIBNCCL", candidates: defaultPaths("libnccl.so.2")}
)

func (o *optixSyms) symbolList() []symbol {
	return []symbol{{name: "optixQueryFunctionTable", ptr: &o.optixQueryFunctionTable, required: true}}
}

func (n *ncclSyms) symbolList() []symbol {
	req := func(name string, p *uintptr) symbol { return symbol{name: name, ptr: p, required: true} }
	return []symbol{
		req("ncclGetVersion", &n.ncclGetVersion), req("ncclGetUniqueId", &n.ncclGetUniqueId),
		req("ncclCommInitRank", &n.ncclCommInitRank), req("ncclCommInitAll", &n.ncclCommInitAll),
		req("ncclAllReduce", &n.ncclAllReduce), req("ncclGroupStart", &n.ncclGroupStart),
		req("ncclGroupEnd", &n.ncclGroupEnd), req("ncclCommDestroy", &n.ncclCommDestroy),
		req("ncclCommAbort", &n.ncclCommAbort), req("ncclCommGetAsyncError", &n.ncclCommGetAsyncError),
		req("ncclGetErrorString", &n.ncclGetErrorString),
	}
}

// LoadOptiX opens libnvoptix.so.1 and resolves its entry symbol.
func LoadOptiX() error { return optixLib.open(optix.symbolList()) }

// OptiXInfo reports how libnvoptix was loaded.
func OptiXInfo() LibraryInfo { return optixLib.info() }

// LoadNCCL opens libnccl.so.2 and resolves its symbol table.
func LoadNCCL() error { return ncclLib.open(nccl.symbolList()) }

// NCCLInfo reports how libnccl was loaded.
func NCCLInfo() LibraryInfo { return ncclLib.info() }

// NCCLVersion returns NCCL's version code (22803 for 2.28.3).
func NCCLVersion() (int, error) {
	if err := LoadNCCL(); err != nil {
		return 0, err
	}
	var v int32
	r := invoke("ncclGetVersion", nccl.ncclGetVersion, uintptr(unsafe.Pointer(&v)))
	if r != 0 {
		return 0, &NCCLError{Func: "ncclGetVersion", Code: int32(r)}
	}
	return int(v), nil
}

// NCCLError is a failed NCCL call.
type NCCLError struct {
	Func string
	Code int32 // ncclResult_t
}

func (e *NCCLError) Error() string {
	return "rayd/driver: " + e.Func + ": " + ncclResultName(e.Code)
}

func ncclResultName(c int32) string {
	names := []string{"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
		"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"}
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return "ncclResult(unknown)"
}
