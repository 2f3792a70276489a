// crossings.cu: every triangle hit along a segment (the crossings query,
// package geom's Crossings). Each segment goes through the segment rule of
// spec §4.1 (segment_setup: origin start + 1e-5·dir, unit dir, tmax =
// max(L − 2e-5, 0)); the walk visits every BVH node whose box the interval
// [1e-5, tmax] enters — the box test of closest hit with its cap held at
// tmax, never narrowed — and runs the watertight test of rayd.cuh on every
// triangle of every leaf reached. Every accepted hit is counted; the K least
// by (t, global prim id) are kept in one thread's sorted array (in
// registers for every K), keyed by the 64-bit word
// (float bits of t) << 32 | prim: t ≥ 1e-5 is positive, so the unsigned
// order of its bits is the order of t. The host picks the smallest K ≥ k.
//
// Parameters (see trace.cu for nodes, tris, num_tris and counter):
//   start, end  float[3n]          segment end points
//   active      uint8[n] | null    0 ⇒ the miss row
//   k           int                slots per row (1 ≤ k ≤ K)
//   n           int
//   out_t       float[n·k]         t of the kept hits, ascending; +inf pads
//   out_prim    int[n·k]           their global prim ids; −1 pads
//   out_shape   int[n·k]           their shape (mesh) ids; −1 pads
//   out_count   int[n]             hits on the whole segment (may exceed k)
// Inactive rows, rows with a non-finite coordinate and degenerate segments
// are the miss row with count 0.
//
// The masked variants rayd_crossings<K>[_4]_masked take one more parameter,
//   face_mask   uint8[num_faces]   the visibility mask of every global face
// and count a face only when its mask is not 0 (segments carry the full ray
// mask 0xff, as in rayd_visible_masked). The host launches them only while
// a mesh mask differs from 0xff; the unmasked kernels instantiate
// MASKED = false and compile to the walk without the table.
//
// Every entry has a _dyn variant with the same parameters that hands rows
// to lanes by dynamic fetch instead of 32-row batches (crossings_kernel in
// crossings_walk.cuh); both write the same words.
#include "crossings_walk.cuh"

// Entry points: rayd_crossings<K> over child-pair nodes, rayd_crossings<K>_4
// over quad nodes, for K = 8, 16, 32, 64 (the host launches the smallest
// K ≥ k). Parameters as listed at the top of the file.
extern "C" {

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 8>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 16>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 32>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 64>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 8>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 16>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 32>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 64>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

// The masked variants: each entry above with face_mask appended (the
// host launches them only while a mesh mask differs from 0xff).

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 8, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 16, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 32, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 64, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 8, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 16, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 32, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 64, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

// The _dyn variants: each entry above with dynamic row fetching (the DYN
// form of crossings_kernel, dyn_rows' scheme in rayd.cuh), same parameters.
// The host launches them on persistent launches under accel.FetchDynamic
// and accel.FetchAuto.

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 8, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 16, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 32, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 64, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 8, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 16, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 32, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 64, false, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 8, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 16, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 32, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 64, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_4_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 8, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_4_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 16, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_4_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 32, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_4_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 64, true, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim,
                                              out_shape, out_count, counter, face_mask);
}

}  // extern "C"
