// crossings_walk.cuh: the device code of the crossings query
// (crossings.cu): the kept-hit array, the walk of one segment over 2- and
// 4-wide nodes that tests every leaf reached, and the two ways rows reach
// the lanes (32-row batches, or dynamic fetch).
#pragma once

#include "rayd.cuh"

using namespace rayd;

#define CROSS_THREADS 128
#define CROSS_EMPTY 0xffffffffffffffffull

namespace {

// Kept is the sorted array of the K least hits of one row and the count.
template <int K>
struct Kept {
    unsigned long long key[K];
    int shape[K];
    int count;

    __device__ __forceinline__ void clear() {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            key[j] = CROSS_EMPTY;
            shape[j] = -1;
        }
        count = 0;
    }

    // add counts a hit and inserts it when it is among the K least. The
    // array is sorted, so kk < key[j] holds from kk's slot p on: slot j
    // takes key[j] below p, kk at p and key[j − 1] above; every slot is
    // chosen with static indices from the old values (the array of every K
    // stays in registers), with no chain of exchanges from slot to slot.
    __device__ __forceinline__ void add(float t, unsigned int prim, int shp) {
        ++count;
        const unsigned long long kk = ((unsigned long long)__float_as_uint(t) << 32) | prim;
        if (kk >= key[K - 1]) return;
#pragma unroll
        for (int j = K - 1; j > 0; --j) {
            const bool here = kk < key[j];
            const bool after = kk < key[j - 1];
            key[j] = here ? (after ? key[j - 1] : kk) : key[j];
            shape[j] = here ? (after ? shape[j - 1] : shp) : shape[j];
        }
        if (kk < key[0]) {
            key[0] = kk;
            shape[0] = shp;
        }
    }
};

// cross_leaf tests every triangle of leaf ref over [tmin, tmax] (when
// MASKED, only those whose face mask is not 0).
template <int K, bool MASKED>
__device__ __forceinline__ void cross_leaf(const float4* __restrict__ tris, int ref, const Ray& r, float tmin,
                                           float tmax, const unsigned char* __restrict__ face_mask,
                                           Kept<K>& kept) {
    unsigned int payload = ~(unsigned int)ref;
    int first = (int)(payload >> RAYD_LEAF_COUNT_BITS);
    int end = first + (int)(payload & ((1u << RAYD_LEAF_COUNT_BITS) - 1u)) + 1;
    for (int s = first; s < end; ++s) {
        float4 p0 = __ldg(&tris[3 * s + 0]);
        if (MASKED && __ldg(&face_mask[__float_as_uint(p0.w)]) == 0) continue;
        float4 p1 = __ldg(&tris[3 * s + 1]);
        float4 p2 = __ldg(&tris[3 * s + 2]);
        float t, u, v;
        if (!watertight(r, p0, p1, p2, tmin, tmax, t, u, v)) continue;
        kept.add(t, __float_as_uint(p0.w), __float_as_int(p1.w));
    }
}

// cross_nodes is the node loop of a walk of width W with the cap fixed at
// tmax and the hit children taken in slot order: rayd.cuh's any-mode node
// phase (node_phase2 / node_phase4) with a best that stays at tmax. It runs
// until the lane holds a leaf while every lane of the warp does (or its
// walk ends).
template <int W>
__device__ __forceinline__ void cross_nodes(int* stack, int& sp, int& node, int& leaf,
                                            const float4* __restrict__ nodes, const Ray& r, float tmin, float tmax) {
    Best cap;
    cap.t = tmax;
    if constexpr (W == 2) node_phase2<true>(stack, sp, node, leaf, nodes, r, tmin, cap);
    else node_phase4<true>(stack, sp, node, leaf, nodes, r, tmin, cap);
}

// cross_leaves tests the postponed leaf and every leaf that follows it
// directly on the stack (the second loop of the while-while walk), in full.
template <int K, bool MASKED>
__device__ __forceinline__ void cross_leaves(int* stack, int& sp, int& node, int& leaf,
                                             const float4* __restrict__ tris, const Ray& r, float tmin, float tmax,
                                             const unsigned char* __restrict__ face_mask, Kept<K>& kept) {
    while (leaf < 0) {
        cross_leaf<K, MASKED>(tris, leaf, r, tmin, tmax, face_mask, kept);
        leaf = node;
        if (node < 0) node = stack[sp--];
    }
}

// The stack of a walk over nodes of width W.
template <int W> struct CrossStack { static constexpr int size = RAYD_MAX_DEPTH + 1; };
template <> struct CrossStack<4> { static constexpr int size = RAYD_QUAD_STACK; };

// cross_walk is the whole walk of one segment over nodes of width W.
template <int W, int K, bool MASKED>
__device__ __forceinline__ void cross_walk(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                           const Ray& r, float tmin, float tmax,
                                           const unsigned char* __restrict__ face_mask, Kept<K>& kept) {
    int stack[CrossStack<W>::size];
    int sp = 0;
    stack[0] = RAYD_STACK_SENTINEL;
    int node = 0;
    int leaf = 0;
    while (node != RAYD_STACK_SENTINEL) {
        cross_nodes<W>(stack, sp, node, leaf, nodes, r, tmin, tmax);
        cross_leaves<K, MASKED>(stack, sp, node, leaf, tris, r, tmin, tmax, face_mask, kept);
    }
}

// cross_begin loads segment i and returns whether it is walked (r and tmax
// set): false for the miss row (inactive, non-finite, degenerate, or an
// empty scene).
__device__ __forceinline__ bool cross_begin(long long i, int num_tris, const float* __restrict__ start,
                                            const float* __restrict__ end, const unsigned char* __restrict__ active,
                                            Ray& r, float& tmax) {
    if (active != nullptr && active[i] == 0) return false;
    float3 a = make_float3(start[3 * i], start[3 * i + 1], start[3 * i + 2]);
    float3 e = make_float3(end[3 * i], end[3 * i + 1], end[3 * i + 2]);
    return num_tris > 0 && finite3(a.x, a.y, a.z) && finite3(e.x, e.y, e.z) && segment_setup(a, e, r, tmax);
}

// cross_store writes row i: the first k kept hits (+inf, −1, −1 pads) and
// the count.
template <int K>
__device__ __forceinline__ void cross_store(long long i, int k, const Kept<K>& kept, float* __restrict__ out_t,
                                            int* __restrict__ out_prim, int* __restrict__ out_shape,
                                            int* __restrict__ out_count) {
    long long o = i * k;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        if (j >= k) break;
        bool some = kept.key[j] != CROSS_EMPTY;
        out_t[o + j] = some ? __uint_as_float((unsigned int)(kept.key[j] >> 32)) : __int_as_float(0x7f800000);
        out_prim[o + j] = some ? (int)(unsigned int)kept.key[j] : -1;
        out_shape[o + j] = kept.shape[j];
    }
    out_count[i] = kept.count;
}

// crossings_kernel: with DYN false each warp takes 32 segments at a time
// (first_batch / next_batch) and walks them to the end of the longest;
// with DYN true it is dyn_rows (rayd.cuh) with the crossings walk: each
// lane owns one segment and takes a new one when its walk ends, the warp
// refilling with one atomic once RAYD_DYN_REFILL lanes idle. Every round
// runs one node phase and one leaf phase for each lane that holds a walk.
// A row's result does not depend on the order in which its leaves are
// tested (every hit is counted, the kept hits are the K least by
// (t, prim)), so both forms write the same words.
template <int W, int K, bool MASKED = false, bool DYN = false>
__device__ __forceinline__ void crossings_kernel(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                                 int num_tris, const float* __restrict__ start,
                                                 const float* __restrict__ end,
                                                 const unsigned char* __restrict__ active, int k, int n,
                                                 float* __restrict__ out_t, int* __restrict__ out_prim,
                                                 int* __restrict__ out_shape, int* __restrict__ out_count,
                                                 unsigned int* counter,
                                                 const unsigned char* __restrict__ face_mask = nullptr) {
    if constexpr (!DYN) {
        for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
            long long i = base + (threadIdx.x & 31u);
            if (i >= n) continue;
            Kept<K> kept;
            kept.clear();
            Ray r;
            float tmax;
            if (cross_begin(i, num_tris, start, end, active, r, tmax)) {
                cross_walk<W, K, MASKED>(nodes, tris, r, RAYD_MULTIPATH_TMIN, tmax, face_mask, kept);
            }
            cross_store<K>(i, k, kept, out_t, out_prim, out_shape, out_count);
        }
    } else {
        const unsigned int lane = threadIdx.x & 31u;
        const unsigned int below = (1u << lane) - 1u;
        long long row = -1;
        bool drained = false;  // warp-uniform: every row has been handed out
        int stack[CrossStack<W>::size];
        int sp = 0, node = RAYD_STACK_SENTINEL, leaf = 0;
        Kept<K> kept;
        Ray r;
        float tmax = 0.0f;
        for (;;) {
            const unsigned int idle = __ballot_sync(0xffffffffu, row < 0);
            if (!drained && (__popc(idle) >= RAYD_DYN_REFILL || idle == 0xffffffffu)) {
                const unsigned int want = (unsigned int)__popc(idle);
                unsigned int base = 0;
                if (lane == 0) {
                    base = counter != nullptr ? atomicAdd(counter, want)
                                              : (unsigned int)(blockIdx.x * blockDim.x + (threadIdx.x & ~31u));
                }
                base = __shfl_sync(0xffffffffu, base, 0);
                // Without a counter a warp answers its own 32 rows (the
                // grid covers n), fetched once while every lane idles.
                drained = counter == nullptr || (long long)base + want >= (long long)n;
                if (row < 0) {
                    const long long j = (long long)base + __popc(idle & below);
                    if (j < n) {
                        row = j;
                        kept.clear();
                        sp = 0;
                        stack[0] = RAYD_STACK_SENTINEL;
                        node = cross_begin(j, num_tris, start, end, active, r, tmax) ? 0 : RAYD_STACK_SENTINEL;
                        leaf = 0;
                    }
                }
            }
            if (__ballot_sync(0xffffffffu, row >= 0) == 0u) {
                if (drained) return;
                continue;
            }
            if (row >= 0) {
                if (node != RAYD_STACK_SENTINEL) {
                    cross_nodes<W>(stack, sp, node, leaf, nodes, r, RAYD_MULTIPATH_TMIN, tmax);
                    cross_leaves<K, MASKED>(stack, sp, node, leaf, tris, r, RAYD_MULTIPATH_TMIN, tmax, face_mask,
                                            kept);
                }
                if (node == RAYD_STACK_SENTINEL) {
                    cross_store<K>(row, k, kept, out_t, out_prim, out_shape, out_count);
                    row = -1;
                }
            }
        }
    }
}

}  // namespace
