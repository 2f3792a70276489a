// edge_spec.cuh: the walk of rayd_edge_nearest_ray_spec (included by
// edge.cu inside its anonymous namespace, after edge_phased.cuh, whose
// warp shares and row starts it uses).
//
// The phased walk (edge_phased.cuh) with speculative node phases. In the
// phased walk a lane that pops a live leaf stops and waits, idle, until the
// warp's last busy lane reaches one, so a node phase lasts as long as the
// warp's longest run of nodes between two leaves. Here a lane that pops a
// live leaf holds it and goes on opening nodes while any other lane of the
// warp still searches for one; a lane holding a leaf leaves a second live
// leaf on its stack and waits. The node phase ends when no busy lane
// searches (each holds a leaf or has an empty stack); the leaf phase then
// runs the held leaves, and the finished rows are written.
//
// Opening nodes before a held leaf has run only delays a smaller radius:
// every test still compares with the radius of a best no smaller than the
// final one, so a box or an edge is dropped only when no candidate remains
// in it (edge_prune.cuh, Claims A and B), and the records equal the
// brute-force scan's bit for bit like every other ray kernel's. A row's
// order of operations now depends on the other rows of its warp, so the
// host mirror of rayd_edge_nearest_ray (accel.Layout.NearestEdgeRay) counts
// the phased kernel's work, not this one's, step for step.
//
// The leaf phase tests a held leaf's records before any of their float64
// pairs runs (ray32_leaf_batch), so its steps differ from the phased
// kernel's within a leaf as well.
//
// Idle lanes are refilled together when EDGE_SPEC_REFILL of them are idle
// (or none is busy); 2 and 8 ran no faster on the light grid.
#pragma once

#define EDGE_SPEC_REFILL 4

__device__ __forceinline__ void nearest_ray_spec(const ray_in& in, const ray_out& out, const float* __restrict__ o,
                                                 const float* __restrict__ d, const float* __restrict__ tmax,
                                                 const unsigned char* __restrict__ active, int n) {
    const int lane = threadIdx.x & 31;
    const warp_rows share = warp_share(n);
    const long long last = share.last;
    const double B = in.num_recs > 0 ? scene_bound(in.nodes) : 0.0;
    ray32 L;
    L.sp = 0;
    int sref[EDGE_STACK];
    float sv[EDGE_STACK];
    long long i = -1;              // the lane's row, −1: none
    long long next = share.first;  // the warp's next row (the same in every lane)
    int held = 0;                  // a popped live leaf not yet run (< 0), 0: none
    for (;;) {
        unsigned busy = __ballot_sync(EDGE_FULL, i >= 0);
        if (busy == 0 && next >= last) break;
        int idle = 32 - __popc(busy);
        if (next < last && (busy == 0 || idle >= EDGE_SPEC_REFILL)) {
            long long r = next + __popc(~busy & ((1u << lane) - 1));  // this lane's rank among the idle
            next += idle;
            if (i < 0 && r < last && ray32_take(in, out, o, d, tmax, active, r, B, L, sref, sv)) i = r;
            continue;
        }
        for (;;) {  // the node phase, in every lane of the warp
            bool walking = i >= 0 && L.sp > 0;
            if (__ballot_sync(EDGE_FULL, walking && held == 0) == 0) break;
            if (walking) {
                int ref = sref[L.sp - 1];
                bool live = !(sv[L.sp - 1] > L.f.rf2);
                if (held == 0 || ref >= 0 || !live) {  // a second live leaf stays on the stack
                    --L.sp;
                    if (live) {
                        if (ref < 0) held = ref;
                        else ray32_open(in, L, ref, sref, sv);
                    }
                }
            }
        }
        if (held != 0) {  // the leaf phase
            ray32_leaf_batch(in, L, held);
            held = 0;
        }
        if (i >= 0 && L.sp <= 0) {  // 0: done; −1: the stack would have overflowed (deferred)
            ray32_write(out, in.recs, i, L);
            i = -1;
        }
    }
}
