package driver

import (
	"encoding/binary"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NCCLUniqueIDBytes is the size of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES).
const NCCLUniqueIDBytes = 128

// NCCLUniqueID is an ncclUniqueId: created by one rank (NCCLGetUniqueID) and
// handed to every rank of a communicator out of band.
type NCCLUniqueID [NCCLUniqueIDBytes]byte

// NCCL result codes (ncclResult_t, nccl.h 2.28).
const (
	NCCLSuccess            int32 = 0
	NCCLUnhandledCudaError int32 = 1
	NCCLSystemError        int32 = 2
	NCCLInternalError      int32 = 3
	NCCLInvalidArgument    int32 = 4
	NCCLInvalidUsage       int32 = 5
	NCCLRemoteError        int32 = 6
	NCCLInProgress         int32 = 7
)

// NCCLDataType is an ncclDataType_t.
type NCCLDataType int32

// NCCL element types.
const (
	NCCLInt8    NCCLDataType = 0
	NCCLUint8   NCCLDataType = 1
	NCCLInt32   NCCLDataType = 2
	NCCLUint32  NCCLDataType = 3
	NCCLInt64   NCCLDataType = 4
	NCCLUint64  NCCLDataType = 5
	NCCLFloat16 NCCLDataType = 6
	NCCLFloat32 NCCLDataType = 7
	NCCLFloat64 NCCLDataType = 8
)

// NCCLRedOp is an ncclRedOp_t.
type NCCLRedOp int32

// NCCL reduction operations.
const (
	NCCLSum  NCCLRedOp = 0
	NCCLProd NCCLRedOp = 1
	NCCLMax  NCCLRedOp = 2
	NCCLMin  NCCLRedOp = 3
	NCCLAvg  NCCLRedOp = 4
)

// NCCLComm is an ncclComm_t. Its calls take the device from the CUDA context
// current on the calling OS thread (lock the goroutine and bind the
// communicator's device context first). The zero value is no communicator.
type NCCLComm struct{ h uintptr }

// Valid reports whether c holds a communicator.
func (c NCCLComm) Valid() bool { return c.h != 0 }

// ncclCheck turns an ncclResult_t into nil or an *NCCLError.
func ncclCheck(fn string, r Result) error {
	if r == 0 {
		return nil
	}
	return &NCCLError{Func: fn, Code: int32(r)}
}

// ncclCall loads libnccl (once) and calls fn. Pointers converted to uintptr
// in its argument list stay alive and unmoved for the call, as for invoke.
//
//go:uintptrescapes
func ncclCall(name string, fn *uintptr, args ...uintptr) error {
	if err := LoadNCCL(); err != nil {
		return err
	}
	return ncclCheck(name, invoke(name, *fn, args...))
}

// NCCLGetUniqueID creates a new ncclUniqueId (ncclGetUniqueId). Only one
// rank creates it; it embeds that rank's bootstrap address.
func NCCLGetUniqueID() (NCCLUniqueID, error) {
	var id NCCLUniqueID
	err := ncclCall("ncclGetUniqueId", &nccl.ncclGetUniqueId, uintptr(unsafe.Pointer(&id[0])))
	return id, err
}

// commInitRankArgs lays out ncclCommInitRank's arguments for SyscallN: the
// three integer arguments in the first three registers (the by-value id
// takes none), three unused register slots, then the id's 16 little-endian
// words, which land on the stack where the SysV ABI expects a MEMORY-class
// argument.
func commInitRankArgs(commOut uintptr, nranks, rank int, id *NCCLUniqueID) []uintptr {
	args := make([]uintptr, 0, 6+NCCLUniqueIDBytes/8)
	args = append(args, commOut, uintptr(nranks), uintptr(rank), 0, 0, 0)
	for w := 0; w < NCCLUniqueIDBytes/8; w++ {
		args = append(args, uintptr(binary.LittleEndian.Uint64(id[8*w:])))
	}
	return args
}

// NCCLCommInitRank joins rank (of nranks) to the communicator named by id
// (ncclCommInitRank, blocking). Every rank must call it; the communicator
// binds the device of the context current on the calling thread.
func NCCLCommInitRank(nranks int, id NCCLUniqueID, rank int) (NCCLComm, error) {
	if err := LoadNCCL(); err != nil {
		return NCCLComm{}, err
	}
	// The out-parameter travels inside a slice, where go:uintptrescapes
	// cannot see it: pin it (which also puts it on the heap).
	h := new(uintptr)
	var pin runtime.Pinner
	pin.Pin(h)
	defer pin.Unpin()
	r := invoke("ncclCommInitRank", nccl.ncclCommInitRank, commInitRankArgs(uintptr(unsafe.Pointer(h)), nranks, rank, &id)...)
	runtime.KeepAlive(h)
	if err := ncclCheck("ncclCommInitRank", r); err != nil {
		return NCCLComm{}, err
	}
	return NCCLComm{h: *h}, nil
}

// NCCLCommInitAll creates one communicator per listed device in this process
// (ncclCommInitAll); a single-process alternative to NCCLCommInitRank.
func NCCLCommInitAll(devices []int) ([]NCCLComm, error) {
	if len(devices) == 0 {
		return nil, &NCCLError{Func: "ncclCommInitAll", Code: NCCLInvalidArgument}
	}
	hs := make([]uintptr, len(devices))
	devs := make([]int32, len(devices))
	for i, d := range devices {
		devs[i] = int32(d)
	}
	err := ncclCall("ncclCommInitAll", &nccl.ncclCommInitAll, uintptr(unsafe.Pointer(&hs[0])),
		uintptr(len(devices)), uintptr(unsafe.Pointer(&devs[0])))
	if err != nil {
		return nil, err
	}
	out := make([]NCCLComm, len(hs))
	for i, h := range hs {
		out[i] = NCCLComm{h: h}
	}
	return out, nil
}

// AllReduce queues an all-reduce of count elements from send into recv on s
// (ncclAllReduce; send == recv reduces in place). It returns once the
// operation is enqueued: wait for s (or poll it) for the result.
func (c NCCLComm) AllReduce(send, recv DevicePtr, count uint64, dt NCCLDataType, op NCCLRedOp, s Stream) error {
	return ncclCall("ncclAllReduce", &nccl.ncclAllReduce, uintptr(send), uintptr(recv), uintptr(count),
		uintptr(dt), uintptr(op), c.h, s.h)
}

// NCCLGroupStart opens a group of NCCL calls (ncclGroupStart).
func NCCLGroupStart() error { return ncclCall("ncclGroupStart", &nccl.ncclGroupStart) }

// NCCLGroupEnd closes the group opened by NCCLGroupStart and issues its
// calls (ncclGroupEnd).
func NCCLGroupEnd() error { return ncclCall("ncclGroupEnd", &nccl.ncclGroupEnd) }

// Destroy frees the communicator after its pending work completes
// (ncclCommDestroy). Use Abort when a peer may be gone.
func (c NCCLComm) Destroy() error {
	return ncclCall("ncclCommDestroy", &nccl.ncclCommDestroy, c.h)
}

// Abort stops the communicator's pending and running operations and frees it
// without waiting for peers (ncclCommAbort).
func (c NCCLComm) Abort() error {
	return ncclCall("ncclCommAbort", &nccl.ncclCommAbort, c.h)
}

// AsyncError returns the communicator's asynchronous error state
// (ncclCommGetAsyncError): NCCLSuccess while healthy, NCCLInProgress while a
// non-blocking operation runs, another code once it has failed (a dead or
// failing peer, a network error). err reports a failure of the query itself.
func (c NCCLComm) AsyncError() (code int32, err error) {
	var v int32
	err = ncclCall("ncclCommGetAsyncError", &nccl.ncclCommGetAsyncError, c.h, uintptr(unsafe.Pointer(&v)))
	return v, err
}

var (
	ncclStringOnce sync.Once
	ncclString     func(int32) string
)

// NCCLErrorString returns NCCL's description of a result code
// (ncclGetErrorString), or the code's name when libnccl is not loaded.
func NCCLErrorString(code int32) string {
	if LoadNCCL() != nil || nccl.ncclGetErrorString == 0 {
		return ncclResultName(code)
	}
	ncclStringOnce.Do(func() { purego.RegisterFunc(&ncclString, nccl.ncclGetErrorString) })
	return ncclString(code)
}
