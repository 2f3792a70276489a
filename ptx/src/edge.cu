// edge.cu: the GPU edge queries of spec §5 over the edge BVH.
//
// The edge BVH is the triangle BVH of bvh_build.cu built over one degenerate
// triangle (v0, v1, v1) per edge (accel/edge.go): the same LBVH build, the
// same child-pair node layout (rayd.cuh), and records in leaf order whose
// words are (a.xyz, global edge id) (b.xyz, shape id) (b.xyz, local edge id).
//
// Every distance is computed in float64 with edge_math.cuh, which repeats
// package edge's arithmetic, and ties go to the lowest global edge id. The
// point, top-k and float64 ray traversals prune a node only when its float64
// lower bound exceeds the current best (the k-th best for top-k) by more
// than a relative 1e-9 (rays: and the absolute margin of ray_margin). The
// ray traversals of rayd_edge_nearest_ray, _rows, _phased, _phased_top and
// _ops prune nodes and edges with the float32 tests of edge_prune.cuh, which never drop an edge the
// brute force could pick; the rows those tests cannot take are answered by
// rayd_edge_nearest_ray_deferred. So each kernel returns the brute-force
// scan's answer bit for bit. A query whose float64 traversal stack would
// overflow rescans every edge.
//
// Outputs of a missed row: distance +Inf, ids −1, vectors and parameters 0.
#include "rayd.cuh"
#include "edge_math.cuh"
#include "edge_prune.cuh"

using namespace rayd_edge;

#define EDGE_THREADS 128
#define EDGE_STACK (RAYD_MAX_DEPTH + 2)
#define EDGE_MAX_K 16
#define EDGE_WARPS (EDGE_THREADS / 32)
#define EDGE_FULL 0xffffffffu
// Blocks per SM the float32-pruned ray kernels are register-limited for
// (tuning knobs): 4 caps the persistent kernel at 128 registers; 8 caps the
// one-row-per-thread kernel at 64, which spills a little but runs the light
// scene's segment and half-ray batches 8-10% faster than at 4 (H200); the
// phased kernel runs as fast at 8 as at 4 (64 against 114 registers); the
// phased_top and ops kernels are held to 64 registers as well.
#define EDGE_RAY_MIN_BLOCKS 4
#define EDGE_RAY_ROWS_MIN_BLOCKS 8
#define EDGE_RAY_PHASED_MIN_BLOCKS 8
#define EDGE_RAY_OPS_MIN_BLOCKS 8
// The speculative kernel (edge_spec.cuh) at 4 blocks per SM gets up to 128
// registers and does not spill (nvcc 13.0: 120). With the branch-free
// float32 tests, on the light grid, a variant of its walk (leaf records
// tested two at a time between their float64 pairs) ran segments 8% and half
// rays 2% faster at 4 blocks than at 5 (96 registers, which spills); before
// those tests, 5 blocks had been 2-5% faster than 4. At 3 blocks (up to 168
// registers) the kernel with its leaf batches ran 7-11% slower than at 4.
// An SM's four schedulers each hold a quarter of its 65,536 registers, so
// 17 warps (5 on one scheduler) would leave 96 registers a thread.
#define EDGE_RAY_SPEC_MIN_BLOCKS 4

namespace {

struct rec {
    v3 a, b;
    int gid, shape, local;
};

__device__ __forceinline__ rec load_rec(const float4* __restrict__ recs, long long k) {
    float4 r0 = recs[3 * k], r1 = recs[3 * k + 1], r2 = recs[3 * k + 2];
    rec r;
    r.a = mk(r0.x, r0.y, r0.z);
    r.b = mk(r1.x, r1.y, r1.z);
    r.gid = __float_as_int(r0.w);
    r.shape = __float_as_int(r1.w);
    r.local = __float_as_int(r2.w);
    return r;
}

__device__ __forceinline__ bool enabled(const unsigned char* __restrict__ mask, int gid) {
    return mask == nullptr || mask[gid] != 0;
}

#define EDGE_DENORM_MIN 4.9406564584124654e-324
#define EDGE_ABS_SLACK 1e-12 /* edge.absSlack */

// ray_margin is the absolute pruning margin of a ray query at o in a scene
// of bound B (edge.Index.margin): 1e-12·M², M the larger magnitude. The
// float64 bound of a box the query touches is 0 only up to rounding of that
// order, and when the best is 0 (a query through edges, tied at distance 0)
// a relative slack is no slack. The point queries' bounds of a box holding
// the point are exactly 0: their margin is the least double.
__device__ __forceinline__ double ray_margin(v3 o, double B) {
    double m = fmax(B, fmax(fmax(fabs(o.x), fabs(o.y)), fabs(o.z)));
    return fmax(EDGE_ABS_SLACK * m * m, EDGE_DENORM_MIN);
}

__device__ __forceinline__ bool load_point(const float* __restrict__ p, long long i, v3& out) {
    out = mk(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
    return finite3(out);
}

// walk visits every record of every leaf whose bound Q::bound does not
// exceed Q::limit() (by more than the slacks, pruned), nearer child first
// (ties: child 0). It returns false when the stack would overflow (the
// caller then scans every record).
template <class Q>
__device__ __forceinline__ bool walk(const float4* __restrict__ nodes, const float4* __restrict__ recs, Q& q) {
    int ref_st[EDGE_STACK];
    float bnd_st[EDGE_STACK];
    int sp = 0;
    ref_st[sp] = 0;
    bnd_st[sp++] = 0.0f;
    while (sp > 0) {
        --sp;
        int ref = ref_st[sp];
        // edge.pruned: the bound exceeds the best by more than the relative
        // slack and the query's absolute margin.
        if ((double)bnd_st[sp] > q.limit() * (1.0 + RAYD_EDGE_SLACK) + q.margin()) continue;
        if (ref < 0) {
            int payload = ~ref;
            long long first = payload >> RAYD_LEAF_COUNT_BITS;
            int count = (payload & ((1 << RAYD_LEAF_COUNT_BITS) - 1)) + 1;
            for (int j = 0; j < count; ++j) q.leaf(first + j);
            continue;
        }
        const float4* n = nodes + 4LL * ref;
        float4 n0 = n[0], n1 = n[1], n2 = n[2], n3 = n[3];
        double lo0[3] = {n0.x, n0.z, n2.x}, hi0[3] = {n0.y, n0.w, n2.y};
        double lo1[3] = {n1.x, n1.z, n2.z}, hi1[3] = {n1.y, n1.w, n2.w};
        int r0 = __float_as_int(n3.x), r1 = __float_as_int(n3.y);
        double b0 = q.bound(lo0, hi0);
        if (sp + 2 > EDGE_STACK) return false;
        // Bounds are stored rounded down, so a later prune stays conservative.
        if (r1 == r0) {  // a one-edge BVH: both slots hold the same leaf
            ref_st[sp] = r0; bnd_st[sp++] = __double2float_rd(b0);
            continue;
        }
        double b1 = q.bound(lo1, hi1);
        if (b0 <= b1) {
            ref_st[sp] = r1; bnd_st[sp++] = __double2float_rd(b1);
            ref_st[sp] = r0; bnd_st[sp++] = __double2float_rd(b0);
        } else {
            ref_st[sp] = r0; bnd_st[sp++] = __double2float_rd(b0);
            ref_st[sp] = r1; bnd_st[sp++] = __double2float_rd(b1);
        }
    }
    return true;
}

// Nearest-edge state of one point query.
struct point_q {
    const float4* recs;
    const unsigned char* mask;
    v3 p;
    double d2, s;
    v3 q;
    int k;  // record slot of the best, −1: none
    int gid;
    __device__ double limit() const { return d2; }
    __device__ double margin() const { return EDGE_DENORM_MIN; }
    __device__ double bound(const double* lo, const double* hi) const { return point_bound(p, lo, hi); }
    __device__ void leaf(long long slot) {
        rec r = load_rec(recs, slot);
        if (!enabled(mask, r.gid)) return;
        double si;
        v3 qi;
        double di = point_segment(p, r.a, r.b, si, qi);
        if (di < d2 || (di == d2 && r.gid < gid)) { d2 = di; s = si; q = qi; k = (int)slot; gid = r.gid; }
    }
};

struct ray_q {
    const float4* recs;
    const unsigned char* mask;
    v3 o, d;
    double T;
    double d2, t, s;
    int k, gid;
    double abs;  // ray_margin (walk only)
    __device__ double limit() const { return d2; }
    __device__ double margin() const { return abs; }
    __device__ double bound(const double* lo, const double* hi) const { return ray_bound(o, d, T, lo, hi); }
    __device__ void leaf(long long slot) {
        rec r = load_rec(recs, slot);
        if (!enabled(mask, r.gid)) return;
        double ti, si;
        double di = ray_segment(o, d, T, r.a, r.b, ti, si);
        if (di < d2 || (di == d2 && r.gid < gid)) { d2 = di; t = ti; s = si; k = (int)slot; gid = r.gid; }
    }
};

struct topk_q {
    const float4* recs;
    const unsigned char* mask;
    v3 p;
    int kmax, n;
    double d2[EDGE_MAX_K], s[EDGE_MAX_K];
    int slot[EDGE_MAX_K], gid[EDGE_MAX_K];
    __device__ double limit() const { return n < kmax ? INFINITY : d2[kmax - 1]; }
    __device__ double margin() const { return EDGE_DENORM_MIN; }
    __device__ double bound(const double* lo, const double* hi) const { return point_bound(p, lo, hi); }
    __device__ void leaf(long long sl) {
        rec r = load_rec(recs, sl);
        if (!enabled(mask, r.gid)) return;
        double si;
        v3 qi;
        double di = point_segment(p, r.a, r.b, si, qi);
        // edge.insertK: keep the k least by (d², id).
        if (n == kmax && !(di < d2[kmax - 1] || (di == d2[kmax - 1] && r.gid < gid[kmax - 1]))) return;
        int j = n < kmax ? n++ : kmax - 1;
        while (j > 0 && (di < d2[j - 1] || (di == d2[j - 1] && r.gid < gid[j - 1]))) {
            d2[j] = d2[j - 1]; s[j] = s[j - 1]; slot[j] = slot[j - 1]; gid[j] = gid[j - 1];
            --j;
        }
        d2[j] = di; s[j] = si; slot[j] = (int)sl; gid[j] = r.gid;
    }
};

__device__ __forceinline__ void store3(float* dst, long long i, v3 v) {
    dst[3 * i] = (float)v.x;
    dst[3 * i + 1] = (float)v.y;
    dst[3 * i + 2] = (float)v.z;
}

// Output pointers of a point query.
struct point_out {
    float *dist, *edge_point, *edge_t;
    int *shape, *local, *gid;
};

__device__ __forceinline__ void write_point(const point_out& o, const float4* recs, long long i, const point_q& q) {
    if (q.k < 0) {
        o.dist[i] = INFINITY;
        store3(o.edge_point, i, mk(0, 0, 0));
        o.edge_t[i] = 0.0f;
        o.shape[i] = -1; o.local[i] = -1; o.gid[i] = -1;
        return;
    }
    rec r = load_rec(recs, q.k);
    o.dist[i] = (float)sqrt(q.d2);
    store3(o.edge_point, i, q.q);
    o.edge_t[i] = (float)q.s;
    o.shape[i] = r.shape; o.local[i] = r.local; o.gid[i] = r.gid;
}

struct ray_out {
    float *dist, *ray_t, *point, *edge_t, *edge_point;
    int *shape, *local, *gid;
};

__device__ __forceinline__ void write_ray(const ray_out& o, const float4* recs, long long i, const ray_q& q) {
    if (q.k < 0) {
        o.dist[i] = INFINITY;
        o.ray_t[i] = 0.0f;
        store3(o.point, i, mk(0, 0, 0));
        o.edge_t[i] = 0.0f;
        store3(o.edge_point, i, mk(0, 0, 0));
        o.shape[i] = -1; o.local[i] = -1; o.gid[i] = -1;
        return;
    }
    rec r = load_rec(recs, q.k);
    o.dist[i] = (float)sqrt(q.d2);
    o.ray_t[i] = (float)q.t;
    store3(o.point, i, axpy(q.t, q.d, q.o));
    o.edge_t[i] = (float)q.s;
    store3(o.edge_point, i, axpy(q.s, sub(r.b, r.a), r.a));
    o.shape[i] = r.shape; o.local[i] = r.local; o.gid[i] = r.gid;
}

// ray_setup reads ray i and its range (edge.rayLimit): false for an inactive
// or non-finite row or a NaN tmax.
__device__ __forceinline__ bool ray_setup(const float* o, const float* d, const float* tmax,
                                          const unsigned char* active, long long i, ray_q& q) {
    bool ok1 = load_point(o, i, q.o), ok2 = load_point(d, i, q.d);
    q.T = INFINITY;
    if (tmax != nullptr) {
        double t = tmax[i];
        if (isnan(t)) return false;
        if (!isinf(t) || t < 0.0) q.T = fmax(t, 0.0);
    }
    return ok1 && ok2 && (active == nullptr || active[i] != 0);
}

__device__ __forceinline__ double maxabs(v3 a) { return fmax(fmax(fabs(a.x), fabs(a.y)), fabs(a.z)); }

// cannot_beat reports whether edge r is certainly farther from the query
// than the current best, so that ray_segment need not run: with m the edge's
// midpoint and rad its half length, every point of the edge is within rad
// of m, so dist(query, edge) ≥ dist(query, m) − rad. dist(query, m) is
// evaluated at the clamped projection of m (inv_dd = 1/|d|², 0 for d = 0);
// the slack 1e-6·S (S: the magnitudes involved) exceeds both the rounding
// of this bound and that of ray_segment's d², so an edge is skipped only
// when its computed d² would exceed the best, never at a tie.
__device__ __forceinline__ bool cannot_beat(const ray_q& q, double inv_dd, const rec& r) {
    if (!(q.d2 < INFINITY)) return false;
    v3 e = sub(r.b, r.a);
    v3 m = scale(add(r.a, r.b), 0.5);
    double rad = 0.5 * sqrt(dot(e, e));
    double tc = fmin(fmax(dot(sub(m, q.o), q.d) * inv_dd, 0.0), q.T);
    v3 p = axpy(tc, q.d, q.o);
    v3 w = sub(m, p);
    double S = maxabs(q.o) + maxabs(p) + maxabs(m) + rad;
    double lb = sqrt(dot(w, w)) - rad - 1e-6 * S;
    return lb > 0.0 && lb * lb > q.d2;
}

// scene_bound is the largest |coordinate| of the root's two child boxes,
// which hold every box and endpoint of the tree up to the rounding of the
// inflation (+Inf when one is not finite: the rows then take the float64
// walk).
__device__ __forceinline__ double scene_bound(const float4* __restrict__ nodes) {
    float4 n0 = nodes[0], n1 = nodes[1], n2 = nodes[2];
    double m = 0.0, sum = 0.0;
    float v[12] = {n0.x, n0.y, n0.z, n0.w, n1.x, n1.y, n1.z, n1.w, n2.x, n2.y, n2.z, n2.w};
#pragma unroll
    for (int j = 0; j < 12; ++j) {
        m = fmax(m, fabs((double)v[j]));
        sum += (double)v[j];
    }
    return isfinite(sum) ? m : INFINITY;
}

// ray_in is the scene of a ray query.
struct ray_in {
    const float4* nodes;
    const float4* recs;
    int num_recs;
    const unsigned char* mask;
};

// ray32 is one lane's row of rayd_edge_nearest_ray: the float32 tests'
// query, the best (squared distance, parameters, record slot, global id)
// and the stack size (−1: the stack would have overflowed). The stack (refs
// and test values) lives beside it: a dynamically indexed member would send
// the whole struct to local memory.
struct ray32 {
    q32 f;
    double d2, t, s;
    int k, gid;
    int sp;
};

// A row of rayd_edge_nearest_ray that the float32 walk does not answer (its
// query is outside the tests' range, or its stack would have overflowed)
// gets this global id and nothing else; rayd_edge_nearest_ray_deferred then
// answers it with the float64 walk. The kernels themselves hold no float64
// walk: its code would raise their register count for every row.
#define EDGE_DEFERRED (-2)

// ray32_begin reads row i: true when its walk is to run (L and the stack
// set up); false when the row is finished, q holding its record (a miss),
// or deferred (*deferred set).
__device__ __forceinline__ bool ray32_begin(const ray_in& in, const float* __restrict__ o,
                                            const float* __restrict__ d, const float* __restrict__ tmax,
                                            const unsigned char* __restrict__ active, long long i, double B, ray32& L,
                                            ray_q& q, bool& deferred, int* sref, float* sv) {
    q.recs = in.recs; q.mask = in.mask; q.d2 = INFINITY; q.t = 0.0; q.s = 0.0; q.k = -1; q.gid = -1;
    deferred = false;
    if (!(ray_setup(o, d, tmax, active, i, q) && in.num_recs > 0)) return false;
    if (!q32_setup(L.f, q.o.x, q.o.y, q.o.z, q.d.x, q.d.y, q.d.z, q.T, B)) {
        deferred = true;
        return false;
    }
    L.d2 = INFINITY; L.t = 0.0; L.s = 0.0; L.k = -1; L.gid = -1;
    sref[0] = 0;
    sv[0] = 0.0f;
    L.sp = 1;
    return true;
}

// ray32_exact runs the float64 closest pair of record slot with endpoints
// a, b and global id g; the best follows the brute-force rule (smaller d²,
// then lower id) and the radius a smaller best. The query's float32 values
// pass through an opaque copy so that their float64 conversions are made
// here rather than hoisted out of the walk, where they would hold 14
// registers for its whole length.
__device__ __forceinline__ void ray32_exact(ray32& L, int slot, float4 a, float4 b, int g) {
    float v[7] = {L.f.ox, L.f.oy, L.f.oz, L.f.dx, L.f.dy, L.f.dz, L.f.T};
#pragma unroll
    for (int j = 0; j < 7; ++j) asm volatile("mov.b32 %0, %0;" : "+f"(v[j]));
    double ti, si;
    double di = ray_segment(mk(v[0], v[1], v[2]), mk(v[3], v[4], v[5]), (double)v[6], mk(a.x, a.y, a.z),
                            mk(b.x, b.y, b.z), ti, si);
    if (di < L.d2 || (di == L.d2 && g < L.gid)) {
        bool closer = di < L.d2;
        L.d2 = di; L.t = ti; L.s = si; L.k = slot; L.gid = g;
        if (closer) q32_radius(L.f, di);
    }
}

// ray32_leaf gives the float64 closest pair to the enabled records of the
// leaf ref (< 0) that pass q32_edge.
__device__ __forceinline__ void ray32_leaf(const ray_in& in, ray32& L, int ref) {
    int payload = ~ref;
    int j = payload >> RAYD_LEAF_COUNT_BITS;
    int end = j + (payload & ((1 << RAYD_LEAF_COUNT_BITS) - 1)) + 1;
    for (; j < end; ++j) {
        float4 a = __ldg(&in.recs[3LL * j]), b = __ldg(&in.recs[3LL * j + 1]);
        int g = __float_as_int(a.w);
        if (enabled(in.mask, g) && !(q32_edge(L.f, a, b) > L.f.rf2)) ray32_exact(L, j, a, b, g);
    }
}

// ray32_leaf_batch is ray32_leaf for the speculative walk: every record of
// the leaf is tested first, two at a time (one block of independent
// instructions), against the radius at the leaf's start, which is no smaller
// than the radius any later record would see, so Claim B holds
// (edge_prune.cuh) and no record that the brute force could pick is
// dropped; the float64 pairs of the records that passed then run in order,
// each record read again, against the current radius. Only a bit mask lives
// across them, so the kernel stays at 120 registers without spilling.
__device__ __forceinline__ void ray32_leaf_batch(const ray_in& in, ray32& L, int ref) {
    int payload = ~ref;
    int j0 = payload >> RAYD_LEAF_COUNT_BITS;
    int cnt = (payload & ((1 << RAYD_LEAF_COUNT_BITS) - 1)) + 1;
    unsigned pass = 0;
    for (int u = 0; u < cnt; u += 2) {
        int j = j0 + u, j1 = j0 + min(u + 1, cnt - 1);  // an odd count tests its last record twice
        float v0 = q32_edge(L.f, __ldg(&in.recs[3LL * j]), __ldg(&in.recs[3LL * j + 1]));
        float v1 = q32_edge(L.f, __ldg(&in.recs[3LL * j1]), __ldg(&in.recs[3LL * j1 + 1]));
        pass |= (!(v0 > L.f.rf2) ? 1u : 0u) << u;
        pass |= (u + 1 < cnt && !(v1 > L.f.rf2) ? 1u : 0u) << (u + 1);
    }
    while (pass != 0) {
        int u = __ffs(pass) - 1;
        pass &= pass - 1;
        int j = j0 + u;
        float4 a = __ldg(&in.recs[3LL * j]), b = __ldg(&in.recs[3LL * j + 1]);
        int g = __float_as_int(a.w);
        if (enabled(in.mask, g)) ray32_exact(L, j, a, b, g);
    }
}

// ray32_open opens node ref: its children that pass q32_box are pushed, the
// one with the smaller key on top (L.sp = −1: the stack would overflow).
__device__ __forceinline__ void ray32_open(const ray_in& in, ray32& L, int ref, int* sref, float* sv) {
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
        sref[L.sp] = swap ? r0 : r1; sv[L.sp] = swap ? v0 : v1; ++L.sp;
        sref[L.sp] = swap ? r1 : r0; sv[L.sp] = swap ? v1 : v0; ++L.sp;
    } else if (h0 || h1) {
        sref[L.sp] = h0 ? r0 : r1; sv[L.sp] = h0 ? v0 : v1; ++L.sp;
    }
}

// ray32_step pops one stack entry (L.sp > 0): dropped when its test value
// exceeds the current rf2; a leaf runs ray32_leaf, a node ray32_open.
__device__ __forceinline__ void ray32_step(const ray_in& in, ray32& L, int* sref, float* sv) {
    --L.sp;
    int ref = sref[L.sp];
    if (sv[L.sp] > L.f.rf2) return;
    if (ref < 0) ray32_leaf(in, L, ref);
    else ray32_open(in, L, ref, sref, sv);
}

// ray32_write writes the row's record, or marks it deferred.
__device__ __forceinline__ void ray32_write(const ray_out& out, const float4* recs, long long i, const ray32& L) {
    if (L.sp < 0) {
        out.gid[i] = EDGE_DEFERRED;
        return;
    }
    ray_q q;
    q.o = mk(L.f.ox, L.f.oy, L.f.oz);
    q.d = mk(L.f.dx, L.f.dy, L.f.dz);
    q.d2 = L.d2; q.t = L.t; q.s = L.s; q.k = L.k; q.gid = L.gid;
    write_ray(out, recs, i, q);
}

#include "edge_phased.cuh"
#include "edge_ops.cuh"
#include "edge_spec.cuh"

}  // namespace

extern "C" {

// rayd_edge_nearest_point(nodes, recs, num_recs, mask, points, active, n,
// dist, edge_point, edge_t, shape, local, gid): spec §5.1 through the BVH.
//   nodes     float4[4·nodes]   edge BVH (child-pair layout)
//   recs      float4[3·E]       edge records in leaf order
//   num_recs  int               E (0: every row misses)
//   mask      u8[E] | null      by global edge id; 0 = never a candidate
//   points    float[3n]; active u8[n] | null
//   outputs   dist f32[n], edge_point f32[3n], edge_t f32[n], shape/local/gid i32[n]
// One thread per row.
__global__ void __launch_bounds__(EDGE_THREADS) rayd_edge_nearest_point(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ points, const unsigned char* __restrict__ active,
    int n, float* dist, float* edge_point, float* edge_t, int* shape, int* local, int* gid) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    point_q q{recs, mask, mk(0, 0, 0), INFINITY, 0.0, mk(0, 0, 0), -1, -1};
    bool ok = load_point(points, i, q.p) && (active == nullptr || active[i] != 0);
    if (ok && num_recs > 0 && !walk(nodes, recs, q)) {
        for (long long k = 0; k < num_recs; ++k) q.leaf(k);
    }
    write_point(point_out{dist, edge_point, edge_t, shape, local, gid}, recs, i, q);
}

// rayd_edge_nearest_ray_exact(nodes, recs, num_recs, mask, o, d, tmax,
// active, n, dist, ray_t, point, edge_t, edge_point, shape, local, gid): spec
// §5.2 (CUDA backend) through the BVH, pruning with the float64 squared
// distance from the query to each child box (ray_bound) and the margin of
// ray_margin. tmax f32[n] | null (null: half rays). One thread per row.
__global__ void __launch_bounds__(EDGE_THREADS) rayd_edge_nearest_ray_exact(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ray_q q;
    q.recs = recs; q.mask = mask; q.d2 = INFINITY; q.t = 0.0; q.s = 0.0; q.k = -1; q.gid = -1;
    if (ray_setup(o, d, tmax, active, i, q) && num_recs > 0) {
        q.abs = ray_margin(q.o, scene_bound(nodes));
        if (!walk(nodes, recs, q)) {
            for (long long k = 0; k < num_recs; ++k) q.leaf(k);
        }
    }
    write_ray(ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, recs, i, q);
}

// rayd_edge_nearest_ray_deferred(...): parameters as
// rayd_edge_nearest_ray_exact. It answers, as rayd_edge_nearest_ray_exact
// does, only the rows whose gid holds EDGE_DEFERRED, and leaves every other
// row alone: the launcher queues it after rayd_edge_nearest_ray or
// rayd_edge_nearest_ray_rows on the same stream. One thread per row.
__global__ void __launch_bounds__(EDGE_THREADS) rayd_edge_nearest_ray_deferred(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || gid[i] != EDGE_DEFERRED) return;
    ray_q q;
    q.recs = recs; q.mask = mask; q.d2 = INFINITY; q.t = 0.0; q.s = 0.0; q.k = -1; q.gid = -1;
    if (ray_setup(o, d, tmax, active, i, q) && num_recs > 0) {
        q.abs = ray_margin(q.o, scene_bound(nodes));
        if (!walk(nodes, recs, q)) {
            for (long long k = 0; k < num_recs; ++k) q.leaf(k);
        }
    }
    write_ray(ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, recs, i, q);
}

// rayd_edge_nearest_ray(...): parameters as rayd_edge_nearest_ray_exact; the
// same records, found with the float32 tests of edge_prune.cuh (rows they
// cannot answer are left to rayd_edge_nearest_ray_deferred). Persistent
// lanes: the grid's warps split the rows into equal contiguous shares (any
// grid size) and a lane takes the next row of its warp's share as soon as it
// finishes one, so a warp is not held by its longest row; each loop
// iteration is one traversal step per lane (a node or a leaf). All 32 lanes
// of a warp stay in the loop until its share is done (blockDim.x must be
// EDGE_THREADS).
__global__ void __launch_bounds__(EDGE_THREADS, EDGE_RAY_MIN_BLOCKS) rayd_edge_nearest_ray(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    __shared__ int next_row[EDGE_WARPS];
    const int warp = threadIdx.x >> 5;
    const long long warps = (long long)gridDim.x * EDGE_WARPS;
    const long long per = ((long long)n + warps - 1) / warps;
    const long long first = ((long long)blockIdx.x * EDGE_WARPS + warp) * per;
    const long long last = min(first + per, (long long)n);
    if ((threadIdx.x & 31) == 0) next_row[warp] = 0;
    __syncwarp();
    const double B = num_recs > 0 ? scene_bound(nodes) : 0.0;
    const ray_in in{nodes, recs, num_recs, mask};
    const ray_out out{dist, ray_t, point, edge_t, edge_point, shape, local, gid};
    ray32 L;
    int sref[EDGE_STACK];
    float sv[EDGE_STACK];
    long long i = -1;      // the lane's row, −1: none
    bool drained = false;  // the warp's share has no row left for this lane
    for (;;) {
        if (i < 0 && !drained) {
            long long r = first + atomicAdd(&next_row[warp], 1);
            drained = r >= last;
            if (!drained) {
                ray_q q;
                bool deferred;
                if (ray32_begin(in, o, d, tmax, active, r, B, L, q, deferred, sref, sv)) i = r;
                else if (deferred) gid[r] = EDGE_DEFERRED;
                else write_ray(out, recs, r, q);
            }
        }
        if (__all_sync(EDGE_FULL, drained)) break;  // a drained lane has no row
        if (i >= 0) {
            ray32_step(in, L, sref, sv);
            if (L.sp <= 0) {
                ray32_write(out, recs, i, L);
                i = -1;
            }
        }
    }
}

// rayd_edge_nearest_ray_phased(...): parameters as
// rayd_edge_nearest_ray_exact; rayd_edge_nearest_ray's records and tests,
// with idle lanes refilled in batches and each iteration split into a node
// phase and a leaf phase (edge_phased.cuh); rows it cannot answer are left
// to rayd_edge_nearest_ray_deferred. blockDim.x must be EDGE_THREADS.
__global__ void __launch_bounds__(EDGE_THREADS, EDGE_RAY_PHASED_MIN_BLOCKS) rayd_edge_nearest_ray_phased(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    nearest_ray_phased<false>(ray_in{nodes, recs, num_recs, mask},
                              ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, o, d, tmax, active, n);
}

// rayd_edge_nearest_ray_phased_top(...): rayd_edge_nearest_ray_phased with
// the top of each lane's stack kept in registers (edge_phased.cuh, top32).
__global__ void __launch_bounds__(EDGE_THREADS, EDGE_RAY_PHASED_MIN_BLOCKS) rayd_edge_nearest_ray_phased_top(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    nearest_ray_phased<true>(ray_in{nodes, recs, num_recs, mask},
                             ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, o, d, tmax, active, n);
}

// rayd_edge_nearest_ray_ops(...): parameters as rayd_edge_nearest_ray_exact;
// rayd_edge_nearest_ray's records and tests, each lane's row advancing one
// operation at a time (a node, a record test, a closest pair) and the warp
// running in each iteration the kind the most lanes can run
// (edge_ops.cuh); rows it cannot answer are left to
// rayd_edge_nearest_ray_deferred. blockDim.x must be EDGE_THREADS.
__global__ void __launch_bounds__(EDGE_THREADS, EDGE_RAY_OPS_MIN_BLOCKS) rayd_edge_nearest_ray_ops(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    nearest_ray_ops(ray_in{nodes, recs, num_recs, mask},
                    ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, o, d, tmax, active, n);
}

// rayd_edge_nearest_ray_spec(...): parameters as rayd_edge_nearest_ray_exact;
// the phased walk with speculative node phases: a lane that reaches a live
// leaf holds it and goes on opening nodes while others still search
// (edge_spec.cuh); rows it cannot answer are left to
// rayd_edge_nearest_ray_deferred. blockDim.x must be EDGE_THREADS.
__global__ void __launch_bounds__(EDGE_THREADS, EDGE_RAY_SPEC_MIN_BLOCKS) rayd_edge_nearest_ray_spec(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    nearest_ray_spec(ray_in{nodes, recs, num_recs, mask},
                     ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, o, d, tmax, active, n);
}

// rayd_edge_nearest_ray_rows(...): rayd_edge_nearest_ray with one thread per
// row (the grid covers n), for comparison; rows it cannot answer are left to
// rayd_edge_nearest_ray_deferred as well.
__global__ void __launch_bounds__(EDGE_THREADS, EDGE_RAY_ROWS_MIN_BLOCKS) rayd_edge_nearest_ray_rows(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, float* dist, float* ray_t,
    float* point, float* edge_t, float* edge_point, int* shape, int* local, int* gid) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double B = num_recs > 0 ? scene_bound(nodes) : 0.0;
    const ray_in in{nodes, recs, num_recs, mask};
    const ray_out out{dist, ray_t, point, edge_t, edge_point, shape, local, gid};
    ray32 L;
    int sref[EDGE_STACK];
    float sv[EDGE_STACK];
    ray_q q;
    bool deferred;
    if (ray32_begin(in, o, d, tmax, active, i, B, L, q, deferred, sref, sv)) {
        while (L.sp > 0) ray32_step(in, L, sref, sv);
        ray32_write(out, recs, i, L);
    } else if (deferred) {
        gid[i] = EDGE_DEFERRED;
    } else {
        write_ray(out, recs, i, q);
    }
}

// rayd_edge_nearest_k(nodes, recs, num_recs, mask, boundary, points, active,
// n, k, valid, dist, point, edge_t, edge_point, shape, local, gid,
// is_boundary): spec §5.3, slot j of row i at i·k + j, ascending (d², id).
//   boundary  u8[E]   boundary flag by global edge id
//   k         int     1..16
//   outputs   valid u8, dist f32, point f32[3], edge_t f32, edge_point f32[3],
//             shape/local/gid i32, is_boundary u8, each per slot
// One thread per row.
__global__ void __launch_bounds__(EDGE_THREADS) rayd_edge_nearest_k(
    const float4* __restrict__ nodes, const float4* __restrict__ recs, int num_recs,
    const unsigned char* __restrict__ mask, const unsigned char* __restrict__ boundary,
    const float* __restrict__ points, const unsigned char* __restrict__ active, int n, int k,
    unsigned char* valid, float* dist, float* point, float* edge_t, float* edge_point, int* shape, int* local,
    int* gid, unsigned char* is_boundary) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || k < 1 || k > EDGE_MAX_K) return;
    topk_q q;
    q.recs = recs; q.mask = mask; q.kmax = k; q.n = 0;
    bool ok = load_point(points, i, q.p) && (active == nullptr || active[i] != 0);
    if (ok && num_recs > 0 && !walk(nodes, recs, q)) {
        q.n = 0;
        for (long long r = 0; r < num_recs; ++r) q.leaf(r);
    }
    for (int j = 0; j < k; ++j) {
        long long x = i * k + j;
        if (j >= q.n) {
            valid[x] = 0; dist[x] = INFINITY;
            store3(point, x, mk(0, 0, 0)); edge_t[x] = 0.0f; store3(edge_point, x, mk(0, 0, 0));
            shape[x] = -1; local[x] = -1; gid[x] = -1; is_boundary[x] = 0;
            continue;
        }
        rec r = load_rec(recs, q.slot[j]);
        double si;
        v3 qi;
        point_segment(q.p, r.a, r.b, si, qi);
        valid[x] = 1;
        dist[x] = (float)sqrt(q.d2[j]);
        store3(point, x, q.p);
        edge_t[x] = (float)si;
        store3(edge_point, x, qi);
        shape[x] = r.shape; local[x] = r.local; gid[x] = r.gid;
        is_boundary[x] = boundary != nullptr && boundary[r.gid] != 0 ? 1 : 0;
    }
}

// rayd_edge_brute_point / rayd_edge_brute_ray: the brute-force scans of the
// point and ray queries over every record (the check of the BVH kernels on
// batches too large for the host reference). Parameters as the BVH kernels
// without nodes. Each block stages records through shared memory. The ray
// scan skips the exact test of an edge whose bounding-sphere bound rules it
// out (cannot_beat); there is no hierarchy.
__global__ void __launch_bounds__(EDGE_THREADS) rayd_edge_brute_point(
    const float4* __restrict__ recs, int num_recs, const unsigned char* __restrict__ mask,
    const float* __restrict__ points, const unsigned char* __restrict__ active, int n, float* dist,
    float* edge_point, float* edge_t, int* shape, int* local, int* gid) {
    __shared__ float4 tile[3 * EDGE_THREADS];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    point_q q{tile, mask, mk(0, 0, 0), INFINITY, 0.0, mk(0, 0, 0), -1, -1};
    bool ok = i < n && load_point(points, i, q.p) && (active == nullptr || active[i] != 0);
    int best_slot = -1;
    for (int base = 0; base < num_recs; base += EDGE_THREADS) {
        int m = min(EDGE_THREADS, num_recs - base);
        __syncthreads();
        for (int w = threadIdx.x; w < 3 * m; w += blockDim.x) tile[w] = recs[3LL * base + w];
        __syncthreads();
        if (!ok) continue;
        q.k = -1;  // set by leaf when this tile holds a new best
        for (int j = 0; j < m; ++j) q.leaf(j);
        if (q.k >= 0) best_slot = base + q.k;
    }
    if (i >= n) return;
    q.k = best_slot;
    write_point(point_out{dist, edge_point, edge_t, shape, local, gid}, recs, i, q);
}

__global__ void __launch_bounds__(EDGE_THREADS) rayd_edge_brute_ray(
    const float4* __restrict__ recs, int num_recs, const unsigned char* __restrict__ mask,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, float* dist, float* ray_t, float* point, float* edge_t,
    float* edge_point, int* shape, int* local, int* gid) {
    __shared__ float4 tile[3 * EDGE_THREADS];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    ray_q q;
    q.recs = tile; q.mask = mask; q.d2 = INFINITY; q.t = 0.0; q.s = 0.0; q.k = -1; q.gid = -1;
    bool ok = i < n && ray_setup(o, d, tmax, active, i, q);
    double dd = dot(q.d, q.d), inv_dd = dd > 0.0 ? 1.0 / dd : 0.0;
    int best_slot = -1;
    for (int base = 0; base < num_recs; base += EDGE_THREADS) {
        int m = min(EDGE_THREADS, num_recs - base);
        __syncthreads();
        for (int w = threadIdx.x; w < 3 * m; w += blockDim.x) tile[w] = recs[3LL * base + w];
        __syncthreads();
        if (!ok) continue;
        q.k = -1;
        for (int j = 0; j < m; ++j) {
            if (!cannot_beat(q, inv_dd, load_rec(tile, j))) q.leaf(j);
        }
        if (q.k >= 0) best_slot = base + q.k;
    }
    if (i >= n) return;
    q.k = best_slot;
    write_ray(ray_out{dist, ray_t, point, edge_t, edge_point, shape, local, gid}, recs, i, q);
}

}  // extern "C"
