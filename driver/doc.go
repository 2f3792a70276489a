// Package driver is rayd-go's only foreign-function boundary: it dlopens the
// NVIDIA user-space libraries (libcuda.so.1 now; libnvoptix.so.1 and
// libnccl.so.2 share the same loader) with purego at run time, without cgo.
//
// It has three layers, after cudarc:
//
//   - a raw symbol table per library (cudaSyms), one field per C symbol, named
//     exactly as exported (the _v2 suffixes included), each with its C
//     prototype in a comment, resolved from an explicit list of required and
//     optional symbols;
//   - thin wrappers (one per driver function) that pack arguments, call,
//     keep Go memory alive and turn the status into an error;
//   - small safe types: Device, Context, Stream, Event, DevicePtr, Module,
//     Function.
//
// Nothing is loaded in init: the first call that needs the driver loads it
// (Load), and a missing library is ErrNoDriver naming every path tried. Each
// library path can be overridden with an environment variable
// (RAYD_LIBCUDA, RAYD_LIBNVOPTIX, RAYD_LIBNCCL).
//
// Every failing driver call returns a *CallError carrying the function name,
// the device ordinal (or -1) and the driver's Result; Result values are
// errors.Is-able sentinels (for example errors.Is(err, driver.ErrOutOfMemory)).
//
// The current CUDA context belongs to an OS thread. Callers bind a context
// with runtime.LockOSThread + Context.SetCurrent; package launch does this
// for every device. Only this package imports unsafe or purego.
package driver
