// Package ptx holds rayd-go's GPU code as data with provenance: the CUDA
// sources in src/, the PTX nvcc generated from them, and manifest.json, which
// records per module the PTX file, its size and SHA-256, the SHA-256 of every
// source and header it was built from, the nvcc version and flags, the PTX
// target and ISA, and every entry point with its parameter layout.
//
// The PTX and the manifest are embedded with go:embed. Load recomputes a
// module's digest on every load and refuses a mismatch with an error naming
// both digests (ErrDigestMismatch). cmd/ptxdigest checks the same facts
// against the files in CI and rewrites them after a regeneration (make ptx).
//
// ptx sits at the bottom of the package graph next to driver; it imports
// neither driver nor anything above it.
package ptx
