// rf_common.cuh: shared device code of the RF kernels (rf_accum.cu,
// rf_refl.cu, rf_paths.cu): the lane hash of package rf, float64 vector
// helpers written in the operation order of rf's float64 reference, the
// biased diffraction segments and their BVH visibility queries (rayd.cuh
// traversal and watertight test, float32 rays exactly as the reference
// casts them), the grid mapping and the warp-aggregated accumulation.
//
// Every decision of a lane (visibility, cell, rejection) is computed in
// float64 from the same float32 inputs as rf's reference, and rays are
// rounded to float32 once, as there; so the integer outputs agree with it
// except where a libm rounding (sin, cos) lands within an ulp of a boundary.
#pragma once

#include "rayd.cuh"

#define RF_THREADS 128
#define RF_WARPS (RF_THREADS / 32)
#define RF_NO_PRIM 0xffffffffu
#define RF_FULL 0xffffffffu

// Contract constants in float64 (rf/vec.go).
#define RF_EPS_SMALL 1e-6
#define RF_TRACE_TMIN 1e-5
#define RF_DFR_BIAS 1e-4
#define RF_VIS_MIN_LENGTH 1e-5
#define RF_TRACE_TMAX 1e8
#define RF_NORM_FLOOR 1e-12
#define RF_PI 3.141592653589793
#define RF_C0 299792458.0
#define RF_EPS0 8.854187817e-12

// Packed state record (accel/rf_pack.go), RF_STATE_WORDS 32-bit words:
// float32 / int32 inputs in words 0-59, then from word 64 float64
// per-state invariants (low word first) that the host evaluates with the
// operations below, in their order, so that they equal the values a lane
// would compute from the inputs bit for bit.
#define RF_STATE_WORDS 96
#define RFS_POS 0
#define RFS_DIR 3
#define RFS_TMIN 6
#define RFS_TMAX 7
#define RFS_N0 8
#define RFS_N1 11
#define RFS_EXT 14
#define RFS_SRC 15
#define RFS_POWER 18
#define RFS_GMAT 19
#define RFS_EDGE 20
#define RFS_ACTIVE 21
#define RFS_PRIM0 22
#define RFS_PRIM1 23
#define RFS_SUFFIX_N 24
#define RFS_SUFFIX_FACE 25 /* 2 words */
#define RFS_SUFFIX_GAIN 28 /* 2 words */
#define RFS_SUFFIX_TRI 32  /* 2 × 9 words */
#define RFS_FACE_MAT 50    /* 2 × 5 words: present, eta, sigma, mu, gain */
#define RFS_D_DIR 64       /* 3 float64: normalize(dir) */
#define RFS_D_DIR2 70      /* 3 float64: normalize(normalize(dir)) */
#define RFS_D_SPAN 76      /* float64: (double)tmax − (double)tmin */
#define RFS_D_PG 78        /* float64: (double)power · (double)gain */
#define RFS_D_WEDGE 80     /* float64: gmin(gmax(ext, π/4) / (2π), 2) */

namespace rf {

// ---------------------------------------------------------------------------
// Random numbers (rf/rng.go), uint32 wrap-around arithmetic.
// ---------------------------------------------------------------------------
__device__ __forceinline__ unsigned int hash(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
__device__ __forceinline__ float uniform(unsigned int lane, unsigned int stream, unsigned int seed) {
    unsigned int h = hash(lane ^ (stream * 0x9e3779b9u) ^ seed);
    return (float)(h & 0xFFFFFFu) * (1.0f / 16777216.0f);
}

// ---------------------------------------------------------------------------
// float64 helpers with Go's math.Max / math.Min semantics (±Inf first, then
// NaN propagates), so non-finite inputs take the reference's branches.
// ---------------------------------------------------------------------------
__device__ __forceinline__ double gmax(double a, double b) {
    if ((isinf(a) && a > 0) || (isinf(b) && b > 0)) return __longlong_as_double(0x7ff0000000000000LL);
    if (a != a || b != b) return __longlong_as_double(0x7ff8000000000000LL);
    return a > b ? a : b;
}
__device__ __forceinline__ double gmin(double a, double b) {
    if ((isinf(a) && a < 0) || (isinf(b) && b < 0)) return __longlong_as_double(0xfff0000000000000LL);
    if (a != a || b != b) return __longlong_as_double(0x7ff8000000000000LL);
    return a < b ? a : b;
}
__device__ __forceinline__ bool fin(double x) { return isfinite(x); }

// Vector arithmetic rounds every product and sum on its own (no FMA
// contraction), in the reference's operation order, so that the float32
// rays built from it are the reference's bit for bit.
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

struct d3 {
    double x, y, z;
};
__device__ __forceinline__ d3 mk(double x, double y, double z) { return d3{x, y, z}; }
__device__ __forceinline__ d3 operator+(d3 a, d3 b) { return d3{add_rn(a.x, b.x), add_rn(a.y, b.y), add_rn(a.z, b.z)}; }
__device__ __forceinline__ d3 operator-(d3 a, d3 b) { return d3{sub_rn(a.x, b.x), sub_rn(a.y, b.y), sub_rn(a.z, b.z)}; }
__device__ __forceinline__ d3 operator*(d3 a, double s) { return d3{mul_rn(a.x, s), mul_rn(a.y, s), mul_rn(a.z, s)}; }
__device__ __forceinline__ d3 neg(d3 a) { return d3{-a.x, -a.y, -a.z}; }
__device__ __forceinline__ double dot(d3 a, d3 b) { return add_rn(add_rn(mul_rn(a.x, b.x), mul_rn(a.y, b.y)), mul_rn(a.z, b.z)); }
__device__ __forceinline__ d3 cross(d3 a, d3 b) {
    return d3{sub_rn(mul_rn(a.y, b.z), mul_rn(a.z, b.y)), sub_rn(mul_rn(a.z, b.x), mul_rn(a.x, b.z)),
              sub_rn(mul_rn(a.x, b.y), mul_rn(a.y, b.x))};
}
__device__ __forceinline__ double norm(d3 a) { return sqrt(gmax(dot(a, a), 0.0)); }
// normalize is v·(1/√max(|v|², 1e-12)): the zero vector stays zero.
__device__ __forceinline__ d3 normalize(d3 a) { return a * (1.0 / sqrt(gmax(dot(a, a), RF_NORM_FLOOR))); }
__device__ __forceinline__ bool fin3(d3 a) { return fin(a.x) && fin(a.y) && fin(a.z); }
__device__ __forceinline__ double comp(d3 a, int k) { return k == 0 ? a.x : (k == 1 ? a.y : a.z); }

// fallback_axis is +z unless d is nearly parallel to z, then +y.
__device__ __forceinline__ d3 fallback_axis(d3 d) { return fabs(d.z) < 0.9 ? mk(0, 0, 1) : mk(0, 1, 0); }

// stable_perp: the unit part of preferred transverse to the unit axis, or
// of the fallback axis when that part is degenerate.
__device__ __forceinline__ d3 stable_perp(d3 axis, d3 preferred) {
    d3 p = preferred - axis * dot(preferred, axis);
    if (dot(p, p) > RF_NORM_FLOOR) return normalize(p);
    d3 f = fallback_axis(axis);
    return normalize(f - axis * dot(f, axis));
}

// Word access of packed records.
__device__ __forceinline__ float wf(const unsigned int* r, int k) { return __uint_as_float(__ldg(r + k)); }
__device__ __forceinline__ int wi(const unsigned int* r, int k) { return (int)__ldg(r + k); }
__device__ __forceinline__ d3 w3(const unsigned int* r, int k) {
    return mk((double)wf(r, k), (double)wf(r, k + 1), (double)wf(r, k + 2));
}
// wd reads the float64 at words k, k+1 (low word first); wd3 three of them.
__device__ __forceinline__ double wd(const unsigned int* r, int k) {
    return __hiloint2double((int)__ldg(r + k + 1), (int)__ldg(r + k));
}
__device__ __forceinline__ d3 wd3(const unsigned int* r, int k) { return mk(wd(r, k), wd(r, k + 2), wd(r, k + 4)); }
__device__ __forceinline__ d3 ld3(const float* __restrict__ p, long long i) {
    return mk((double)p[3 * i], (double)p[3 * i + 1], (double)p[3 * i + 2]);
}

// ---------------------------------------------------------------------------
// Grid (rf/types.go gridView).
// ---------------------------------------------------------------------------
struct Grid {
    int axis;
    double pos, min0, max0, min1, max1, area;
    int res0, res1;
};

__device__ __forceinline__ d3 plane_point(int axis, double pos, double c0, double c1) {
    if (axis == 0) return mk(pos, c0, c1);
    if (axis == 1) return mk(c0, pos, c1);
    return mk(c0, c1, pos);
}
__device__ __forceinline__ void plane_coords(d3 p, int axis, double& c0, double& c1) {
    if (axis == 0) { c0 = p.y; c1 = p.z; }
    else if (axis == 1) { c0 = p.x; c1 = p.z; }
    else { c0 = p.x; c1 = p.y; }
}
__device__ __forceinline__ d3 cell_center(const Grid& g, int c) {
    int i = c % g.res0, j = c / g.res0;
    double u = ((double)i + 0.5) / (double)g.res0;
    double v = ((double)j + 0.5) / (double)g.res1;
    return plane_point(g.axis, g.pos, add_rn(g.min0, mul_rn(u, g.max0 - g.min0)), add_rn(g.min1, mul_rn(v, g.max1 - g.min1)));
}
// cell_coord is the plane coordinate of the centre of column (or row) i
// of res: lo + ((i + 0.5)/res)·(hi − lo), cell_center's arithmetic.
__device__ __forceinline__ double cell_coord(int i, int res, double lo, double hi) {
    return add_rn(lo, mul_rn(((double)i + 0.5) / (double)res, hi - lo));
}

// CellCache keeps the plane coordinates of the last column and row a
// thread's lanes mapped to, so that a lane on the same column (row) as the
// previous one reuses them; the point is cell_center's bit for bit.
struct CellCache {
    int i = -1, j = -1;
    double c0 = 0.0, c1 = 0.0;
    __device__ __forceinline__ d3 center(const Grid& g, int ci, int cj) {
        if (ci != i) { i = ci; c0 = cell_coord(ci, g.res0, g.min0, g.max0); }
        if (cj != j) { j = cj; c1 = cell_coord(cj, g.res1, g.min1, g.max1); }
        return plane_point(g.axis, g.pos, c0, c1);
    }
};

// LaneMap is the lane → (state, cell) mapping of the grid accumulations,
// s = gl mod S and cell = (gl div S) mod cells with cell = cj·res0 + ci,
// kept by incremental counters: a thread computes it once with divisions
// for its first lane and then advances it by the (uniform) grid stride
// with additions and carries, every lane it runs afterwards lying a whole
// number of strides further.
struct LaneMap {
    unsigned int s;
    int ci, cj;
    unsigned int S, ds;
    int res0, res1, dci, dcj;

    __device__ __forceinline__ LaneMap(unsigned int gl, unsigned int states, int r0, int r1, unsigned int stride)
        : S(states), res0(r0), res1(r1) {
        const unsigned int cells = (unsigned int)r0 * (unsigned int)r1;
        s = gl % S;
        unsigned int c = (gl / S) % cells;
        ci = (int)(c % (unsigned int)r0);
        cj = (int)(c / (unsigned int)r0);
        ds = stride % S;
        unsigned int dc = (stride / S) % cells;
        dci = (int)(dc % (unsigned int)r0);
        dcj = (int)(dc / (unsigned int)r0);
    }
    __device__ __forceinline__ int cell() const { return cj * res0 + ci; }
    // advance moves to gl + stride: the state carries into the cell index
    // (gl div S grows by stride div S, plus one on a carry), the column
    // into the row, the row wraps at res1 (each sum is below twice its
    // bound, so one subtraction suffices).
    __device__ __forceinline__ void advance() {
        s += ds;
        int carry = s >= S;
        if (carry) s -= S;
        ci += dci + carry;
        int row = ci >= res0;
        if (row) ci -= res0;
        cj += dcj + row;
        if (cj >= res1) cj -= res1;
    }
};

// cell_of: the cell holding a plane point inside [min0,max0)×[min1,max1), or -1.
__device__ __forceinline__ int cell_of(const Grid& g, d3 p) {
    double c0, c1;
    plane_coords(p, g.axis, c0, c1);
    if (!(c0 >= g.min0 && c0 < g.max0 && c1 >= g.min1 && c1 < g.max1)) return -1;
    double u = (c0 - g.min0) / gmax(g.max0 - g.min0, RF_EPS_SMALL);
    double v = (c1 - g.min1) / gmax(g.max1 - g.min1, RF_EPS_SMALL);
    int i = min(max((int)(u * (double)g.res0), 0), g.res0 - 1);
    int j = min(max((int)(v * (double)g.res1), 0), g.res1 - 1);
    return j * g.res0 + i;
}

// ---------------------------------------------------------------------------
// Scene queries.
// ---------------------------------------------------------------------------
struct Scn {
    const float4* __restrict__ nodes;
    const float4* __restrict__ tris;
    int num_tris;
};

__device__ __forceinline__ rayd::Best fresh_best(float tmax) {
    rayd::Best b;
    b.t = tmax;
    b.prim = RF_NO_PRIM;
    b.slot = -1;
    b.u = 0.0f;
    b.v = 0.0f;
    return b;
}

// segment is rf's biased diffraction segment: from a + 1e-4·dir over
// [1e-5, max(L − 2e-4, 0)], rounded to float32; false (nothing to trace,
// visible) when L ≤ 1e-5, the interval is empty or the ray is not finite.
__device__ __forceinline__ bool segment(d3 a, d3 b, float3& o, float3& d, float& tmax) {
    d3 delta = b - a;
    double L = norm(delta);
    if (L <= RF_VIS_MIN_LENGTH) return false;
    d3 dir = delta * (1.0 / L);
    double tm = gmax(L - 2.0 * RF_DFR_BIAS, 0.0);
    if (!(tm > RF_TRACE_TMIN)) return false;
    d3 org = a + dir * RF_DFR_BIAS;
    o = make_float3((float)org.x, (float)org.y, (float)org.z);
    d = make_float3((float)dir.x, (float)dir.y, (float)dir.z);
    tmax = (float)tm;
    return rayd::finite3(o.x, o.y, o.z) && rayd::finite3(d.x, d.y, d.z);
}

// closest traces a float32 ray over [1e-5, tmax] (closest hit, ties to the
// lowest prim); b.prim == RF_NO_PRIM on a miss.
template <int W, bool ANY>
__device__ __forceinline__ rayd::Best trace(const Scn& sc, float3 o, float3 d, float tmax) {
    rayd::Best b = fresh_best(tmax);
    if (sc.num_tris > 0) {
        rayd::Ray r;
        rayd::setup_ray(r, o.x, o.y, o.z, d.x, d.y, d.z);
        rayd::trace_ray<W, ANY>(sc.nodes, sc.tris, sc.num_tris, r, RAYD_MULTIPATH_TMIN, b);
    }
    return b;
}

// visible is vis(A, B) of spec §6.1.
template <int W>
__device__ __forceinline__ bool visible(const Scn& sc, d3 a, d3 b) {
    float3 o, d;
    float tmax;
    if (!segment(a, b, o, d, tmax)) return true;
    return trace<W, true>(sc, o, d, tmax).prim == RF_NO_PRIM;
}

// visible_len is visible(a, b) that also returns len = norm(b − a), the
// length segment computes (the compiler shares the one square root), for a
// caller that needs it again.
template <int W>
__device__ __forceinline__ bool visible_len(const Scn& sc, d3 a, d3 b, double& len) {
    len = norm(b - a);
    return visible<W>(sc, a, b);
}

// visible_ignoring: the segment's closest blocker, if any, is face ignore.
template <int W>
__device__ __forceinline__ bool visible_ignoring(const Scn& sc, d3 a, d3 b, int ignore) {
    float3 o, d;
    float tmax;
    if (!segment(a, b, o, d, tmax)) return true;
    unsigned int p = trace<W, false>(sc, o, d, tmax).prim;
    return p == RF_NO_PRIM || p == (unsigned int)ignore;
}

// ---------------------------------------------------------------------------
// Warp-aggregated accumulation. Every lane of the warp must call these
// (warp-uniform loops); key < 0 contributes nothing.
// ---------------------------------------------------------------------------

// reduce_peers sums v over the lanes of peers (a __match_any_sync group)
// into the group's lowest lane, by a tree over the ranks in the group.
template <int N>
__device__ __forceinline__ void reduce_peers(unsigned int peers, double (&v)[N]) {
    const int lane = threadIdx.x & 31;
    const unsigned int below = (1u << lane) - 1u;
    int rank = __popc(peers & below);
    unsigned int above = peers & ~below & ~(1u << lane);
    while (__any_sync(RF_FULL, above != 0u)) {
        int next = __ffs(above);
#pragma unroll
        for (int c = 0; c < N; ++c) {
            double t = __shfl_sync(RF_FULL, v[c], (next - 1) & 31);
            if (next) v[c] += t;
        }
        above &= ~__ballot_sync(RF_FULL, rank & 1);
        rank >>= 1;
    }
}

// Hist is where a kernel accumulates: per-warp private float64 grids in
// shared memory (smem != null; cells ≤ the launcher's limit) flushed once per
// block, or float64 grids in global memory (acc) updated with atomics.
// Integer per-cell channels (icnt) go to shared memory likewise, or to the
// int32 outputs (iout) directly.
template <int ND, int NI>
struct Hist {
    double* smem;  // RF_WARPS × ND × cells doubles, then RF_WARPS × NI × cells ints
    double* acc;   // ND × cells
    int* iout;     // NI × cells
    int cells;

    __device__ __forceinline__ double* warp_d() const {
        return smem + (size_t)(threadIdx.x >> 5) * ND * cells;
    }
    __device__ __forceinline__ int* warp_i() const {
        return reinterpret_cast<int*>(smem + (size_t)RF_WARPS * ND * cells) + (size_t)(threadIdx.x >> 5) * NI * cells;
    }

    __device__ __forceinline__ void init() {
        if (smem == nullptr) return;
        size_t nd = (size_t)RF_WARPS * ND * cells, ni = (size_t)RF_WARPS * NI * cells;
        for (size_t i = threadIdx.x; i < nd; i += blockDim.x) smem[i] = 0.0;
        int* si = reinterpret_cast<int*>(smem + nd);
        for (size_t i = threadIdx.x; i < ni; i += blockDim.x) si[i] = 0;
        __syncthreads();
    }

    // commit adds v (and one to integer channel ich, if ≥ 0) to cell key.
    __device__ __forceinline__ void commit(int key, double (&v)[ND], int ich) {
        __syncwarp();
        unsigned int peers = __match_any_sync(RF_FULL, key);
        reduce_peers<ND>(peers, v);
        int cnt[NI > 0 ? NI : 1];
#pragma unroll
        for (int c = 0; c < NI; ++c) cnt[c] = __popc(peers & __ballot_sync(RF_FULL, ich == c));
        const bool leader = (__ffs(peers) - 1) == (int)(threadIdx.x & 31);
        if (leader && key >= 0) {
            if (smem != nullptr) {
                double* wd = warp_d();
#pragma unroll
                for (int c = 0; c < ND; ++c) wd[(size_t)c * cells + key] += v[c];
                int* wn = warp_i();
#pragma unroll
                for (int c = 0; c < NI; ++c) wn[(size_t)c * cells + key] += cnt[c];
            } else {
#pragma unroll
                for (int c = 0; c < ND; ++c) {
                    if (v[c] != 0.0) atomicAdd(acc + (size_t)c * cells + key, v[c]);
                }
#pragma unroll
                for (int c = 0; c < NI; ++c) {
                    if (cnt[c] != 0) atomicAdd(iout + (size_t)c * cells + key, cnt[c]);
                }
            }
        }
        __syncwarp();
    }

    // flush adds the block's shared grids to the global ones.
    __device__ __forceinline__ void flush() {
        if (smem == nullptr) return;
        __syncthreads();
        const int* si = reinterpret_cast<const int*>(smem + (size_t)RF_WARPS * ND * cells);
        for (int cell = threadIdx.x; cell < cells; cell += blockDim.x) {
#pragma unroll
            for (int c = 0; c < ND; ++c) {
                double s = 0.0;
                for (int w = 0; w < RF_WARPS; ++w) s += smem[((size_t)w * ND + c) * cells + cell];
                if (s != 0.0) atomicAdd(acc + (size_t)c * cells + cell, s);
            }
#pragma unroll
            for (int c = 0; c < NI; ++c) {
                int s = 0;
                for (int w = 0; w < RF_WARPS; ++w) s += si[((size_t)w * NI + c) * cells + cell];
                if (s != 0) atomicAdd(iout + (size_t)c * cells + cell, s);
            }
        }
    }
};

// add_counter reduces a per-thread counter over the warp and adds it to *out.
__device__ __forceinline__ void add_counter(int* out, unsigned int v) {
    unsigned int s = __reduce_add_sync(RF_FULL, v);
    if ((threadIdx.x & 31) == 0 && s != 0u) atomicAdd(out, (int)s);
}

}  // namespace rf
