// visibility.cu: the segment blockers behind the visibility variants of
// spec §4.2 (visible_pair, visible_edge, visible_chain). The host expands
// each variant's rows into segments, each with an optional row of ignored
// global prim ids; a kernel finds every segment's closest blocker that is not
// ignored (the CUDA backend's rule), under the segment rule of spec §4.1,
// and the host reduces the segments back to rows.
//
// Parameters (see trace.cu for nodes, tris, num_tris and counter):
//   start, end  float[3n]          segment end points
//   active      uint8[n] | null    0 ⇒ −1 (not blocked)
//   ignore      int[n·k] | null    ignored global prim ids of segment i at
//                                  ignore[i·k .. i·k+k); −1 pads
//   k           int                ignore row length (0 without ignore)
//   n           int
//   out_prim    int[n]             −1: visible (also a non-finite or
//                                  degenerate segment); else the global prim
//                                  id of the closest non-ignored hit with t in
//                                  [1e-5, tmax], ties at equal t to the lower id
//
// The masked variants rayd_segment_blockers_masked[4] take one more
// parameter,
//   face_mask   uint8[num_faces]   the visibility mask of every global face
// and let a face block only when its mask is not 0 (segments carry the full
// ray mask 0xff, as in rayd_visible_masked). The host launches them only
// while a mesh mask differs from 0xff.
#include "rayd.cuh"

using namespace rayd;

#define VIS_THREADS 128
#define NO_PRIM 0xffffffffu

namespace {

// IgnoreRow rejects the prims of one segment's ignore row.
struct IgnoreRow {
    const int* ids;
    int k;
    __device__ __forceinline__ bool keep(unsigned int prim) const {
        for (int j = 0; j < k; ++j) {
            if (ids[j] == (int)prim) return false;
        }
        return true;
    }
};

// MaskedIgnoreRow is IgnoreRow that also rejects faces of mask 0.
struct MaskedIgnoreRow {
    IgnoreRow row;
    const unsigned char* __restrict__ face_mask;
    __device__ __forceinline__ bool keep(unsigned int prim) const {
        return __ldg(&face_mask[prim]) != 0 && row.keep(prim);
    }
};

template <int W, bool MASKED = false>
__device__ __forceinline__ void blockers_kernel(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                                int num_tris, const float* __restrict__ start,
                                                const float* __restrict__ end, const unsigned char* __restrict__ active,
                                                const int* __restrict__ ignore, int k, int n, int* __restrict__ out_prim,
                                                unsigned int* counter,
                                                const unsigned char* __restrict__ face_mask = nullptr) {
    for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
        long long i = base + (threadIdx.x & 31u);
        if (i >= n) continue;
        int blocker = -1;
        float3 a = make_float3(start[3 * i], start[3 * i + 1], start[3 * i + 2]);
        float3 e = make_float3(end[3 * i], end[3 * i + 1], end[3 * i + 2]);
        Best b;
        Ray r;
        if ((active == nullptr || active[i] != 0) && num_tris > 0 && finite3(a.x, a.y, a.z) &&
            finite3(e.x, e.y, e.z) && segment_setup(a, e, r, b.t)) {
            b.prim = NO_PRIM;
            b.slot = -1;
            b.u = 0.0f;
            b.v = 0.0f;
            IgnoreRow f{ignore == nullptr ? nullptr : ignore + i * k, ignore == nullptr ? 0 : k};
            if (MASKED) {
                trace_ray<W, false>(nodes, tris, num_tris, r, RAYD_MULTIPATH_TMIN, b, MaskedIgnoreRow{f, face_mask});
            } else {
                trace_ray<W, false>(nodes, tris, num_tris, r, RAYD_MULTIPATH_TMIN, b, f);
            }
            if (b.prim != NO_PRIM) blocker = (int)b.prim;
        }
        out_prim[i] = blocker;
    }
}

}  // namespace

extern "C" {

// rayd_segment_blockers: over child-pair nodes.
__global__ void __launch_bounds__(VIS_THREADS) rayd_segment_blockers(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, const int* __restrict__ ignore, int k, int n,
    int* __restrict__ out_prim, unsigned int* counter) {
    blockers_kernel<2>(nodes, tris, num_tris, start, end, active, ignore, k, n, out_prim, counter);
}

// rayd_segment_blockers4: over quad nodes (same parameters).
__global__ void __launch_bounds__(VIS_THREADS) rayd_segment_blockers4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, const int* __restrict__ ignore, int k, int n,
    int* __restrict__ out_prim, unsigned int* counter) {
    blockers_kernel<4>(nodes, tris, num_tris, start, end, active, ignore, k, n, out_prim, counter);
}

// rayd_segment_blockers8: over compressed wide nodes (same parameters).
__global__ void __launch_bounds__(VIS_THREADS) rayd_segment_blockers8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, const int* __restrict__ ignore, int k, int n,
    int* __restrict__ out_prim, unsigned int* counter) {
    blockers_kernel<8>(nodes, tris, num_tris, start, end, active, ignore, k, n, out_prim, counter);
}

// rayd_segment_blockers_masked: rayd_segment_blockers with face_mask
// appended; a face of mask 0 never blocks.
__global__ void __launch_bounds__(VIS_THREADS) rayd_segment_blockers_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, const int* __restrict__ ignore, int k, int n,
    int* __restrict__ out_prim, unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    blockers_kernel<2, true>(nodes, tris, num_tris, start, end, active, ignore, k, n, out_prim, counter, face_mask);
}

// rayd_segment_blockers_masked4: rayd_segment_blockers_masked over quad
// nodes.
__global__ void __launch_bounds__(VIS_THREADS) rayd_segment_blockers_masked4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, const int* __restrict__ ignore, int k, int n,
    int* __restrict__ out_prim, unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    blockers_kernel<4, true>(nodes, tris, num_tris, start, end, active, ignore, k, n, out_prim, counter, face_mask);
}

// rayd_segment_blockers_masked8: rayd_segment_blockers_masked over
// compressed wide nodes.
__global__ void __launch_bounds__(VIS_THREADS) rayd_segment_blockers_masked8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, const int* __restrict__ ignore, int k, int n,
    int* __restrict__ out_prim, unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    blockers_kernel<8, true>(nodes, tris, num_tris, start, end, active, ignore, k, n, out_prim, counter, face_mask);
}

}  // extern "C"
