// edge_ops.cuh: the walk of rayd_edge_nearest_ray_ops (included by edge.cu
// inside its anonymous namespace, after edge_phased.cuh, whose top-of-stack
// cache and warp shares it uses).
//
// Persistent lanes, one row each, whose walks advance one operation at a
// time: opening a node (both child tests and the pushes), the float32 test
// of one leaf record, or the float64 closest pair of one record that passed
// it. In each iteration the warp counts, for each kind, the lanes whose next
// operation is of that kind and runs the kind most lanes can run; the others
// wait. Stale entries (test value above the current rf2) are dropped as soon
// as they reach the top of the stack, and a leaf is popped as soon as it
// does, so no iteration is spent on either. Idle lanes are refilled
// together, when EDGE_OPS_REFILL of them are idle (or none is busy).
//
// A row's operations run in the order of ray32_step's, with the same tests
// and radii: the records equal the brute-force scan's bit for bit like every
// other ray kernel's, and the host mirror of rayd_edge_nearest_ray
// (accel.Layout.NearestEdgeRay) counts this kernel's work too.
#pragma once

#define EDGE_OPS_REFILL 8
#define EDGE_OPS_IDLE 0
#define EDGE_OPS_NODE 1
#define EDGE_OPS_REC 2
#define EDGE_OPS_EXACT 3

// ops_row is the lane's row in flight: the walk's state and the top of its
// stack, the record cursor of the popped leaf (j, end) and the kind of its
// next operation.
struct ops_row {
    ray32 L;
    top32 T;
    long long i;  // the row
    int j, end;
    int op;
};

// ops_top drops the stale entries at the top of r's stack and sets r's next
// operation: a node, the records of a leaf (popped), or none (the row's
// record is written and the lane is idle).
__device__ __forceinline__ void ops_top(const ray_out& out, const float4* recs, ops_row& r, const int* sref,
                                        const float* sv) {
    int ref;
    float v;
    while (r.L.sp > 0 && r.T.v > r.L.f.rf2) top32_pop(r.L, r.T, sref, sv, ref, v);
    if (r.L.sp <= 0) {  // 0: done; −1: the stack would have overflowed (deferred)
        ray32_write(out, recs, r.i, r.L);
        r.op = EDGE_OPS_IDLE;
        return;
    }
    if (r.T.ref >= 0) {
        r.op = EDGE_OPS_NODE;
        return;
    }
    top32_pop(r.L, r.T, sref, sv, ref, v);
    int payload = ~ref;
    r.j = payload >> RAYD_LEAF_COUNT_BITS;
    r.end = r.j + (payload & ((1 << RAYD_LEAF_COUNT_BITS) - 1)) + 1;
    r.op = EDGE_OPS_REC;
}

// ops_run advances r by one operation of kind op (r.op == op).
__device__ __forceinline__ void ops_run(const ray_in& in, const ray_out& out, ops_row& r, int op, int* sref,
                                        float* sv) {
    if (op == EDGE_OPS_NODE) {
        int ref;
        float v;
        top32_pop(r.L, r.T, sref, sv, ref, v);
        ray32_open_c(in, r.L, r.T, ref, sref, sv);
        ops_top(out, in.recs, r, sref, sv);
        return;
    }
    float4 a = __ldg(&in.recs[3LL * r.j]), b = __ldg(&in.recs[3LL * r.j + 1]);
    int g = __float_as_int(a.w);
    if (op == EDGE_OPS_REC) {
        if (enabled(in.mask, g) && !(q32_edge(r.L.f, a, b) > r.L.f.rf2)) {
            r.op = EDGE_OPS_EXACT;
            return;
        }
    } else {
        ray32_exact(r.L, r.j, a, b, g);
    }
    if (++r.j < r.end) r.op = EDGE_OPS_REC;
    else ops_top(out, in.recs, r, sref, sv);
}

// ops_begin starts row i in r (i < 0: none): r stays idle when the row is
// answered at once (a miss) or deferred.
__device__ __forceinline__ void ops_begin(const ray_in& in, const ray_out& out, const float* __restrict__ o,
                                          const float* __restrict__ d, const float* __restrict__ tmax,
                                          const unsigned char* __restrict__ active, long long i, double B, ops_row& r,
                                          int* sref, float* sv) {
    r.op = EDGE_OPS_IDLE;
    if (i < 0) return;
    ray_q q;
    bool deferred;
    if (ray32_begin(in, o, d, tmax, active, i, B, r.L, q, deferred, sref, sv)) {
        r.i = i;
        r.T = top32{0, 0.0f, true};  // ray32_begin's root entry, also in the arrays
        ops_top(out, in.recs, r, sref, sv);
    } else if (deferred) {
        out.gid[i] = EDGE_DEFERRED;
    } else {
        write_ray(out, in.recs, i, q);
    }
}

// nearest_ray_ops is the body of rayd_edge_nearest_ray_ops: the grid's warps
// split the rows into equal contiguous shares (any grid size).
__device__ __forceinline__ void nearest_ray_ops(const ray_in& in, const ray_out& out, const float* __restrict__ o,
                                                const float* __restrict__ d, const float* __restrict__ tmax,
                                                const unsigned char* __restrict__ active, int n) {
    const int lane = threadIdx.x & 31;
    const warp_rows share = warp_share(n);
    const long long last = share.last;
    const double B = in.num_recs > 0 ? scene_bound(in.nodes) : 0.0;
    ops_row R;
    int sref[EDGE_STACK];
    float sv[EDGE_STACK];
    R.op = EDGE_OPS_IDLE;
    long long next = share.first;  // the warp's next row (the same in every lane)
    for (;;) {
        const unsigned idle = __ballot_sync(EDGE_FULL, R.op == EDGE_OPS_IDLE);
        const unsigned node = __ballot_sync(EDGE_FULL, R.op == EDGE_OPS_NODE);
        const unsigned rec = __ballot_sync(EDGE_FULL, R.op == EDGE_OPS_REC);
        const unsigned exact = __ballot_sync(EDGE_FULL, R.op == EDGE_OPS_EXACT);
        const int nidle = __popc(idle);
        if (nidle == 32 && next >= last) break;
        if (next < last && (nidle == 32 || nidle >= EDGE_OPS_REFILL)) {
            long long r = next + __popc(idle & ((1u << lane) - 1));  // this lane's rank among the idle
            next += nidle;
            if (R.op == EDGE_OPS_IDLE) ops_begin(in, out, o, d, tmax, active, r < last ? r : -1, B, R, sref, sv);
            continue;
        }
        int op = EDGE_OPS_NODE, most = __popc(node);
        if (__popc(rec) > most) op = EDGE_OPS_REC, most = __popc(rec);
        if (__popc(exact) > most) op = EDGE_OPS_EXACT;
        if (R.op == op) ops_run(in, out, R, op, sref, sv);
    }
}
