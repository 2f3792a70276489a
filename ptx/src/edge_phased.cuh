// edge_phased.cuh: the walk of rayd_edge_nearest_ray_phased and _phased_top
// and the top-of-stack cache that _phased_top and _ops share (included by
// edge.cu inside its anonymous namespace, after ray32_write).
//
// Persistent lanes, as rayd_edge_nearest_ray, with two changes that keep a
// warp's lanes on the same code more of the time:
//   - refill in batches: a lane without a row is idle, and the warp hands
//     the next rows of its share to all its idle lanes at once, when at
//     least EDGE_PHASED_REFILL of them are idle (or none is busy), so a
//     row's setup runs for many lanes together rather than for one lane in
//     every iteration;
//   - phases: each iteration walks every busy lane's nodes until it pops a
//     live leaf (or its stack empties), and only then runs the popped
//     leaves' records, so lanes opening nodes and lanes testing records do
//     not take turns at every step.
// One lane visits its entries in the same order, with the same tests and
// radii, as ray32_step would, so the records equal the brute-force scan's
// bit for bit like every other ray kernel's, and the host mirror of
// rayd_edge_nearest_ray (accel.Layout.NearestEdgeRay) counts its work.
#pragma once

#define EDGE_PHASED_REFILL 8

// warp_rows is the calling warp's share [first, last) of n rows when the
// grid's warps split them into equal contiguous shares (any grid size).
struct warp_rows {
    long long first, last;
};

__device__ __forceinline__ warp_rows warp_share(int n) {
    const long long warps = (long long)gridDim.x * EDGE_WARPS;
    const long long per = ((long long)n + warps - 1) / warps;
    const long long first = ((long long)blockIdx.x * EDGE_WARPS + (threadIdx.x >> 5)) * per;
    return warp_rows{first, min(first + per, (long long)n)};
}

// ray32_take starts row r: true when its walk is to run (ray32_begin);
// otherwise the row's record (a miss) or its deferral is written.
__device__ __forceinline__ bool ray32_take(const ray_in& in, const ray_out& out, const float* __restrict__ o,
                                           const float* __restrict__ d, const float* __restrict__ tmax,
                                           const unsigned char* __restrict__ active, long long r, double B, ray32& L,
                                           int* sref, float* sv) {
    ray_q q;
    bool deferred;
    if (ray32_begin(in, o, d, tmax, active, r, B, L, q, deferred, sref, sv)) return true;
    if (deferred) out.gid[r] = EDGE_DEFERRED;
    else write_ray(out, in.recs, r, q);
    return false;
}

// ray32_nodes pops entries (while L.sp > 0) as ray32_step does, opening
// nodes, until it pops a live leaf, which it returns; 0: the stack emptied
// (L.sp = 0) or would have overflowed (L.sp = −1).
__device__ __forceinline__ int ray32_nodes(const ray_in& in, ray32& L, int* sref, float* sv) {
    while (L.sp > 0) {
        --L.sp;
        int ref = sref[L.sp];
        if (sv[L.sp] > L.f.rf2) continue;
        if (ref < 0) return ref;
        ray32_open(in, L, ref, sref, sv);
    }
    return 0;
}

// top32 keeps the top entry of a walk's stack in registers (the walks of
// rayd_edge_nearest_ray_phased_top and _ops):
// the stack arrays hold the entries below it, and mem says whether the top
// is also still in the arrays (at sp − 1), where a pop read it from, so
// that pushing over it needs no store.
struct top32 {
    int ref;
    float v;
    bool mem;
};

__device__ __forceinline__ void top32_push(ray32& L, top32& T, int ref, float v, int* sref, float* sv) {
    if (L.sp > 0 && !T.mem) {
        sref[L.sp - 1] = T.ref;
        sv[L.sp - 1] = T.v;
    }
    T.ref = ref; T.v = v; T.mem = false;
    ++L.sp;
}

__device__ __forceinline__ void top32_pop(ray32& L, top32& T, const int* sref, const float* sv, int& ref, float& v) {
    ref = T.ref; v = T.v;
    if (--L.sp > 0) {
        T.ref = sref[L.sp - 1];
        T.v = sv[L.sp - 1];
        T.mem = true;
    }
}

// ray32_open_c is ray32_open through the top cache: the same tests, pushes
// and overflow rule.
__device__ __forceinline__ void ray32_open_c(const ray_in& in, ray32& L, top32& T, int ref, int* sref, float* sv) {
    const float4* n = in.nodes + 4LL * ref;
    float4 n0 = rayd::node_load(n), n1 = rayd::node_load(n + 1), n2 = rayd::node_load(n + 2),
           n3 = rayd::node_load(n + 3);
    int r0 = __float_as_int(n3.x), r1 = __float_as_int(n3.y);
    float k0, k1;  // both tests unconditionally: one block the compiler interleaves
    float v0 = q32_box(L.f, n0.x, n0.y, n0.z, n0.w, n2.x, n2.y, k0);
    float v1 = q32_box(L.f, n1.x, n1.y, n1.z, n1.w, n2.z, n2.w, k1);
    if (r1 == r0) v1 = INFINITY, k1 = 0.0f;  // a one-edge BVH: one child
    bool h0 = !(v0 > L.f.rf2), h1 = !(v1 > L.f.rf2);
    if (h0 && h1) {
        if (L.sp + 2 > EDGE_STACK) {  // never with a build of height ≤ RAYD_MAX_DEPTH
            L.sp = -1;
            return;
        }
        bool swap = k1 < k0;  // child 1 first
        top32_push(L, T, swap ? r0 : r1, swap ? v0 : v1, sref, sv);
        top32_push(L, T, swap ? r1 : r0, swap ? v1 : v0, sref, sv);
    } else if (h0 || h1) {
        top32_push(L, T, h0 ? r0 : r1, h0 ? v0 : v1, sref, sv);
    }
}

// ray32_nodes_c is ray32_nodes through the top cache.
__device__ __forceinline__ int ray32_nodes_c(const ray_in& in, ray32& L, top32& T, int* sref, float* sv) {
    while (L.sp > 0) {
        int ref;
        float v;
        top32_pop(L, T, sref, sv, ref, v);
        if (v > L.f.rf2) continue;
        if (ref < 0) return ref;
        ray32_open_c(in, L, T, ref, sref, sv);
    }
    return 0;
}

// nearest_ray_phased is the body of rayd_edge_nearest_ray_phased (TOP
// false) and _phased_top (TOP true: the top of the stack in registers, so
// that popping the child just pushed reads no memory): the grid's warps
// split the rows into equal contiguous shares (any grid size).
template <bool TOP>
__device__ __forceinline__ void nearest_ray_phased(const ray_in& in, const ray_out& out, const float* __restrict__ o,
                                                   const float* __restrict__ d, const float* __restrict__ tmax,
                                                   const unsigned char* __restrict__ active, int n) {
    const int lane = threadIdx.x & 31;
    const warp_rows share = warp_share(n);
    const long long last = share.last;
    const double B = in.num_recs > 0 ? scene_bound(in.nodes) : 0.0;
    ray32 L;
    int sref[EDGE_STACK];
    float sv[EDGE_STACK];
    top32 T{0, 0.0f, true};  // ray32_begin's root entry, also in the arrays
    long long i = -1;        // the lane's row, −1: none
    long long next = share.first;  // the warp's next row (the same in every lane)
    for (;;) {
        unsigned busy = __ballot_sync(EDGE_FULL, i >= 0);
        if (busy == 0 && next >= last) break;
        int idle = 32 - __popc(busy);
        if (next < last && (busy == 0 || idle >= EDGE_PHASED_REFILL)) {
            long long r = next + __popc(~busy & ((1u << lane) - 1));  // this lane's rank among the idle
            next += idle;
            if (i < 0 && r < last && ray32_take(in, out, o, d, tmax, active, r, B, L, sref, sv)) {
                i = r;
                T = top32{0, 0.0f, true};
            }
            continue;
        }
        if (i < 0) continue;
        int leaf = TOP ? ray32_nodes_c(in, L, T, sref, sv) : ray32_nodes(in, L, sref, sv);
        if (leaf < 0) ray32_leaf(in, L, leaf);
        if (L.sp <= 0) {
            ray32_write(out, in.recs, i, L);
            i = -1;
        }
    }
}
