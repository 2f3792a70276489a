// Package ref is the CPU reference of rayd-go: a straightforward, exact
// implementation of intersect (closest hit), trace_reflections (specular
// chains) and visible (segment occlusion) over the scene-global tables of
// package geom. It is the oracle that the GPU kernels are tested against and
// the slow fallback device that runs when no GPU is present.
//
// Every ray/triangle decision goes through geom.Watertight, and among all
// accepted hits the closest query keeps the smallest t, ties broken by the
// lowest global prim id — the rule of the CUDA BVH traverser. A Scene can
// answer through a binned-SAH BVH (leaves of at most four triangles, culled
// with a padded float64 slab test that never rejects a box holding an
// acceptable hit) or by brute force over every triangle; both give
// bit-identical answers.
//
// ref imports only geom and the standard library. Batches are split into
// chunks that run on up to runtime.GOMAXPROCS goroutines.
package ref
