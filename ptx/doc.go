// Package ptx holds rayd-go's GPU code as data with provenance: the CUDA
// sources in src/, the PTX nvcc generated from them, prebuilt cubins in
// cubin/, and manifest.json, which records per module the PTX file, its size
// and SHA-256, the SHA-256 of every source and header it was built from,
// the nvcc version and flags, the PTX target and ISA, its loader, its
// cubins, and every entry point with its parameter layout.
//
// # Cubins
//
// A CUDA module (loader "cuda", loaded with cuModuleLoadDataEx) has one
// prebuilt cubin per architecture of the manifest's cubin_archs (make ptx
// builds sm_80, sm_86, sm_89 and sm_90). A device whose compute capability
// equals a cubin's architecture loads it without compiling; any other
// device JIT-compiles the PTX (the driver keeps the result in its disk
// cache for later processes). Package launch decides; RAYD_PTX_JIT=1 forces
// the PTX; benchmarks/coldstart measures both. Each cubin is recorded exactly like the
// PTX: file, size, SHA-256, nvcc version, flags (the PTX's, with -cubin and
// -arch=sm_XX) and target, plus the SHA-256 of the PTX built in the same
// run, so that a cubin and its PTX fallback always come from one source,
// one compiler and one set of flags. OptiX programs (loader "optix",
// optix_trace, optix_instance) have no cubins: OptiX compiles PTX (or
// OptiX-IR), never a cubin.
//
// The cubins are stored gzip-compressed (cubin/<module>.<arch>.cubin.gz,
// CompressCubin): the forty cubins of the ten CUDA modules weigh about
// 6.9 MB raw and 1.7 MB compressed (measured with nvcc 11.8; make ptx
// prints each cubin's two sizes), against 1.9 MB for the PTX. Compression keeps the working tree and every
// binary that embeds this package 5 MB lighter and costs about 1 ms of
// decompression per large module at load (the Go standard library's gzip;
// no new dependency). Only the modules launched through cuModuleLoadDataEx
// get cubins, and only the four architectures above; other architectures
// (Turing, Blackwell and later) take the PTX.
//
// The cubins are not promised to be byte-reproducible: ptxas may order the
// ELF sections of some modules differently from one run to the next (nvcc
// 11.8 does for the RF modules). The manifest vouches for the committed
// bytes; a rebuild may change a cubin's digest without any source change.
//
// # Verification
//
// The PTX, the cubins and the manifest are embedded with go:embed. Load
// and LoadCubin recompute a module's digests on every load and refuse a
// mismatch with an error naming both digests (ErrDigestMismatch): for a
// cubin, both the stored file and the cubin inside. cmd/ptxdigest checks
// the same facts against the files in CI and rewrites them after a
// regeneration (make ptx).
//
// ptx sits at the bottom of the package graph next to driver; it imports
// neither driver nor anything above it.
package ptx
