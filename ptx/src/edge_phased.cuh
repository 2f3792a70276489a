// edge_phased.cuh: the walk of rayd_edge_nearest_ray_phased (included by
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

// nearest_ray_phased is the body of rayd_edge_nearest_ray_phased: the
// grid's warps split the rows into equal contiguous shares (any grid size).
__device__ __forceinline__ void nearest_ray_phased(const ray_in& in, const ray_out& out, const float* __restrict__ o,
                                                   const float* __restrict__ d, const float* __restrict__ tmax,
                                                   const unsigned char* __restrict__ active, int n) {
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * EDGE_WARPS;
    const long long per = ((long long)n + warps - 1) / warps;
    const long long first = ((long long)blockIdx.x * EDGE_WARPS + (threadIdx.x >> 5)) * per;
    const long long last = min(first + per, (long long)n);
    const double B = in.num_recs > 0 ? scene_bound(in.nodes) : 0.0;
    ray32 L;
    int sref[EDGE_STACK];
    float sv[EDGE_STACK];
    long long i = -1;        // the lane's row, −1: none
    long long next = first;  // the warp's next row (the same in every lane)
    for (;;) {
        unsigned busy = __ballot_sync(EDGE_FULL, i >= 0);
        if (busy == 0 && next >= last) break;
        int idle = 32 - __popc(busy);
        if (next < last && (busy == 0 || idle >= EDGE_PHASED_REFILL)) {
            long long r = next + __popc(~busy & ((1u << lane) - 1));  // this lane's rank among the idle
            next += idle;
            if (i < 0 && r < last) {
                ray_q q;
                bool deferred;
                if (ray32_begin(in, o, d, tmax, active, r, B, L, q, deferred, sref, sv)) i = r;
                else if (deferred) out.gid[r] = EDGE_DEFERRED;
                else write_ray(out, in.recs, r, q);
            }
            continue;
        }
        if (i < 0) continue;
        int leaf = ray32_nodes(in, L, sref, sv);
        if (leaf < 0) ray32_leaf(in, L, leaf);
        if (L.sp <= 0) {
            ray32_write(out, in.recs, i, L);
            i = -1;
        }
    }
}
