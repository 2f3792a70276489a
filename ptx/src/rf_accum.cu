// rf_accum.cu: the diffraction accumulations accum_dfr_direct (spec §6.2)
// and accum_dfr_coherent_direct (§6.4) over the triangle BVH, one lane per
// thread in warp-uniform grid-stride loops, plus the float64 → float32 grid
// finalization shared with rf_refl.cu's launcher.
//
// Common parameters:
//   nodes, tris, num_tris  the BVH (rayd.cuh layout); entries *4 take quad nodes,
//                          *8 compressed wide nodes
//   states     uint32[S·RF_STATE_WORDS] packed states (accel/rf_pack.go)
//   S          state count (> 0)
//   axis, pos, min0, max0, min1, max1, res0, res1, area   the grid (float64 as in rf)
//   lane_offset, lane_count   the window: local lane l runs global lane lane_offset + l
//   smem_cells 0: accumulate with global atomics; else = cells, and the launch
//              passes RF_WARPS·(ND·8 + NI·4)·cells bytes of dynamic shared memory
//   acc        float64[ND·cells] accumulators (zeroed by the host): direct
//              power, field_x_re; coherent field_x_re, field_x_im
//   counters   direct: int32[7] in rf.AccumResult order (direct, keller,
//              suffix, vis, edge_vis, utd, edge_uses)
//   counts     coherent: int32[3·cells] rows direct_count,
//              visibility_reject_count, utd_reject_count
// Grids are summed in float64; rf_add_f64_to_f32 adds them to the float32
// outputs. Integer outputs are added to (the host zeroes them for a fresh
// result), so windows launched one after another sum exactly.
#include "rf_common.cuh"

using namespace rf;

namespace {

// Lane outcomes (counter slots of the direct kernel's output, in rf's
// AccumResult.counters order: direct, keller, suffix, vis, edge_vis, utd, edge_uses).
enum { OUT_DIRECT = 0, OUT_KELLER = 1, OUT_SUFFIX = 2, OUT_VIS = 3, OUT_UTD = 5, OUT_NONE = 7 };

// weight_num is the numerator of W(s, Q, T, w_edge) of spec §6.1 (rf
// diffractionWeight), power·gain·(λ/4π)²·w_edge·area·wedge multiplied left
// to right; it is constant per state and lane kind. weight divides it by
// sd²·td² (sd = max(|Q − src|, ε), td = max(|T − Q|, ε)).
__device__ __forceinline__ double weight_num(const unsigned int* st, double l4sq, double area, double w_edge) {
    return wd(st, RFS_D_PG) * l4sq * w_edge * area * wd(st, RFS_D_WEDGE);
}
__device__ __forceinline__ double weight_len(double num, double lsq, double ltq) {
    double sd = gmax(lsq, RF_EPS_SMALL);
    double td = gmax(ltq, RF_EPS_SMALL);
    return num / (sd * sd * td * td);
}
__device__ __forceinline__ double weight(double num, d3 src, d3 q, d3 t) {
    return weight_len(num, norm(q - src), norm(t - q));
}

// keller_hit samples the Keller cone (rf kellerHit); returns the cell or -1.
__device__ __forceinline__ int keller_hit(const Grid& g, d3 q, d3 e, d3 src, double phi, d3& target, double& m) {
    d3 inc = normalize(q - src);
    double a = gmin(gmax(dot(inc, e), -1.0), 1.0);
    double r = sqrt(gmax(sub_rn(1.0, mul_rn(a, a)), 0.0));
    d3 b0 = stable_perp(e, inc);
    d3 b1 = normalize(cross(e, b0));
    double sn, cs;
    sincos(phi, &sn, &cs);
    d3 k = normalize(e * a + (b0 * cs + b1 * sn) * r);
    double den = comp(k, g.axis);
    if (fabs(den) <= RF_EPS_SMALL) return -1;
    double t = (g.pos - comp(q, g.axis)) / den;
    if (!(t > RF_DFR_BIAS) || !fin(t)) return -1;
    target = q + k * t;
    d3 dk = (b0 * (-sn) + b1 * cs) * r;
    d3 ut = e - k * (comp(e, g.axis) / den);
    d3 uphi = (dk - k * (comp(dk, g.axis) / den)) * t;
    m = 2.0 * RF_PI * norm(cross(ut, uphi)) / gmax(g.area, RF_EPS_SMALL);
    if (!fin(m)) return -1;
    return cell_of(g, target);
}

// suffix_point connects Q to T by one specular reflection on the triangle
// v (9 floats) (rf suffixPoint); false when there is none.
__device__ __forceinline__ bool suffix_point(const unsigned int* tri, d3 q, d3 t, d3& r) {
    d3 p0 = w3(tri, 0);
    d3 e1 = w3(tri, 3) - p0, e2 = w3(tri, 6) - p0;
    d3 n = cross(e1, e2);
    if (dot(n, n) > 0.0) n = n * (1.0 / norm(n));
    if (!(dot(n, n) > 0.0)) return false;
    d3 img = q - n * (2.0 * dot(q - p0, n));
    d3 delta = t - img;
    double dist = norm(delta);
    if (!(dist > RF_DFR_BIAS) || !fin(dist)) return false;
    d3 dir = delta * (1.0 / dist);
    d3 h = cross(dir, e2);
    double a = dot(e1, h);
    if (fabs(a) <= 1e-7) return false;
    double fa = 1.0 / a;
    d3 s = img - p0;
    double u = fa * dot(s, h);
    if (u < -1e-5 || u > 1.0 + 1e-5) return false;
    d3 qv = cross(s, e1);
    double v = fa * dot(dir, qv);
    if (v < -1e-5 || u + v > 1.0 + 1e-5) return false;
    double tt = fa * dot(e2, qv);
    if (!(tt > RF_DFR_BIAS) || !(tt < dist - RF_DFR_BIAS) || !fin(tt)) return false;
    r = img + dir * tt;
    d3 in = r - q, out = t - r;
    double li = norm(in), lo = norm(out);
    if (!(li > RF_EPS_SMALL) || !(lo > RF_EPS_SMALL)) return false;
    d3 ih = in * (1.0 / li);
    d3 on = dot(ih, n) > 0.0 ? neg(n) : n;
    d3 refl = ih - on * (2.0 * dot(ih, on));
    return dot(refl, out * (1.0 / lo)) > 1.0 - 1e-3;
}

struct DirectArgs {
    Scn sc;
    const unsigned int* states;
    int S;
    Grid g;
    double lambda;
    int D, K, X;
    unsigned int seed;
};

// DirectConst are the per-launch constants of the direct lanes: (λ/4π)²
// and max(n, 1) of each lane kind's sample count n.
struct DirectConst {
    double l4sq, n0, n1, n2;
    __device__ __forceinline__ explicit DirectConst(const DirectArgs& a) {
        double l4 = a.lambda / (4.0 * RF_PI);
        l4sq = l4 * l4;
        n0 = gmax((double)a.D, 1.0);
        n1 = gmax((double)a.K, 1.0);
        n2 = gmax((double)a.X, 1.0);
    }
    __device__ __forceinline__ double n(int kind) const { return kind == 0 ? n0 : (kind == 1 ? n1 : n2); }
};

// NumCache keeps the weight numerator of the last (state, kind) a thread's
// lanes committed with; a lane of the same state and kind reuses it.
struct NumCache {
    int s = -1, kind = -1;
    double num = 0.0;
};

// Lane kinds of accum_dfr_direct: lanes [0, D) are direct, [D, D+K) Keller
// and [D+K, D+K+X) suffix lanes. A launch holds lanes of one kind (the
// launcher splits a window at D and D+K), so each kernel holds that kind's
// code only.
enum { KIND_DIRECT = 0, KIND_KELLER = 1, KIND_SUFFIX = 2 };

// direct_lane runs global lane gl of state s and cell (ci, cj) (rf
// directCall.lane), a lane of kind KIND: returns the outcome and, for a
// commit, the cell and the contribution c.
template <int W, int KIND>
__device__ __forceinline__ int direct_lane(const DirectArgs& a, const DirectConst& k, unsigned int gl, int s, int ci,
                                           int cj, CellCache& cc, NumCache& nc, int& cell, double& c) {
    cell = cj * a.g.res0 + ci;
    const int kind = KIND;
    const unsigned int* st = a.states + (size_t)s * RF_STATE_WORDS;
    if (wi(st, RFS_ACTIVE) == 0) return OUT_VIS;
    double tmin = (double)wf(st, RFS_TMIN), span = wd(st, RFS_D_SPAN);
    double u = (double)uniform(gl, 0u, a.seed);
    d3 e = wd3(st, RFS_D_DIR);
    d3 q = w3(st, RFS_POS) + e * add_rn(tmin, mul_rn(u, span));
    d3 src = w3(st, RFS_SRC);
    double lsq, ltq;  // norm(q − src), norm(t − q): W's distances, the segments' lengths
    if (!visible_len<W>(a.sc, src, q, lsq)) return OUT_VIS;
    d3 t;
    double measure = 1.0;
    if (kind == 0) {
        t = cc.center(a.g, ci, cj);
    } else if (kind == 1) {
        double phi = 2.0 * RF_PI * (double)uniform(gl, 1u, a.seed);
        d3 kt;
        double km;
        int kc = keller_hit(a.g, q, e, src, phi, kt, km);
        if (kc < 0) return OUT_UTD;
        t = kt;
        cell = kc;
        measure = km;
    } else {
        int count = wi(st, RFS_SUFFIX_N);
        if (count == 0) return OUT_UTD;
        int slot = (int)(hash(gl ^ (17u * 0x9e3779b9u) ^ a.seed) % (unsigned int)count);
        int face = wi(st, RFS_SUFFIX_FACE + slot);
        t = cc.center(a.g, ci, cj);
        d3 r;
        if (!suffix_point(st + RFS_SUFFIX_TRI + 9 * slot, q, t, r)) return OUT_UTD;
        if (!visible_ignoring<W>(a.sc, q, r, face) || !visible_ignoring<W>(a.sc, r, t, face)) return OUT_VIS;
        double gain = (double)wf(st, RFS_SUFFIX_GAIN + slot);
        double fspl = k.l4sq / gmax(dot(r - t, r - t), RF_EPS_SMALL);
        measure = gain * gain * fspl * gmax((double)count, 1.0);
        t = r;
    }
    if (kind != 2) {
        if (!visible_len<W>(a.sc, q, t, ltq)) return OUT_VIS;
    } else {
        ltq = norm(t - q);
    }
    if (s != nc.s || kind != nc.kind) {
        double w_edge = gmax(span, 0.0) * (double)a.S / k.n(kind);
        nc.s = s;
        nc.kind = kind;
        nc.num = weight_num(st, k.l4sq, a.g.area, w_edge);
    }
    c = weight_len(nc.num, lsq, ltq) * measure;
    if (!(c > 0.0) || !fin(c)) return OUT_UTD;
    return kind;
}

template <int W, int KIND>
__device__ __forceinline__ void direct_loop(const DirectArgs& a, int lane_offset, int lane_count, Hist<2, 0>& h,
                                            unsigned int (&cnt)[6]) {
    const DirectConst k(a);
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    LaneMap m((unsigned int)(lane_offset + first + (threadIdx.x & 31u)), (unsigned int)a.S, a.g.res0, a.g.res1,
              (unsigned int)stride);
    CellCache cc;
    NumCache nc;
    for (long long base = first; base < lane_count; base += stride, m.advance()) {
        long long l = base + (threadIdx.x & 31u);
        int cell = -1, out = OUT_NONE;
        double c = 0.0;
        if (l < lane_count) out = direct_lane<W, KIND>(a, k, (unsigned int)(lane_offset + l), (int)m.s, m.ci, m.cj, cc, nc, cell, c);
        cnt[0] += out == OUT_DIRECT;
        cnt[1] += out == OUT_KELLER;
        cnt[2] += out == OUT_SUFFIX;
        cnt[3] += out == OUT_VIS;
        cnt[4] += out == OUT_UTD;
        cnt[5] += out <= OUT_SUFFIX;
        double v[2] = {0.0, 0.0};
        if (out <= OUT_SUFFIX) { v[0] = c; v[1] = sqrt(c); }
        h.commit(out <= OUT_SUFFIX ? cell : -1, v, -1);
    }
}

template <int W, int KIND>
__device__ __forceinline__ void direct_kernel(const DirectArgs& a, int lane_offset, int lane_count, int smem_cells,
                                              double* acc, int* counters) {
    extern __shared__ double rf_smem[];
    const int cells = a.g.res0 * a.g.res1;
    Hist<2, 0> h{smem_cells > 0 ? rf_smem : nullptr, acc, nullptr, cells};
    h.init();
    unsigned int cnt[6] = {0u, 0u, 0u, 0u, 0u, 0u};  // direct keller suffix vis utd edge_uses
    direct_loop<W, KIND>(a, lane_offset, lane_count, h, cnt);
    add_counter(counters + 0, cnt[0]);
    add_counter(counters + 1, cnt[1]);
    add_counter(counters + 2, cnt[2]);
    add_counter(counters + 3, cnt[3]);
    add_counter(counters + 5, cnt[4]);
    add_counter(counters + 6, cnt[5]);
    h.flush();
}

struct CoherentArgs {
    Scn sc;
    const unsigned int* states;
    int S;
    Grid g;
    double lambda;
    int select_point, prefilter;
};

// coherent_lane runs lane gl of state s and cell (ci, cj) (rf
// AccumDfrCoherentDirect): integer channel 0 commit, 1 visibility reject,
// 2 UTD reject, -1 inactive state. l4sq is (λ/4π)², kw 2π/λ.
template <int W>
__device__ __forceinline__ int coherent_lane(const CoherentArgs& a, double l4sq, double kw, int s, int ci, int cj,
                                             int& cell, double& re, double& im) {
    cell = cj * a.g.res0 + ci;
    const unsigned int* st = a.states + (size_t)s * RF_STATE_WORDS;
    if (wi(st, RFS_ACTIVE) == 0) return -1;
    double tmin = (double)wf(st, RFS_TMIN), tmax = (double)wf(st, RFS_TMAX);
    d3 pos = w3(st, RFS_POS), src = w3(st, RFS_SRC);
    d3 e = wd3(st, RFS_D_DIR);
    d3 t = plane_point(a.g.axis, a.g.pos, cell_coord(ci, a.g.res0, a.g.min0, a.g.max0),
                       cell_coord(cj, a.g.res1, a.g.min1, a.g.max1));
    double te = 0.5 * (tmin + tmax), tv = te;
    double length = wd(st, RFS_D_SPAN);
    if (a.select_point) {
        // StationaryParameter(src, t, pos + e·tmin, e), which normalizes e
        // again (ee, the record's RFS_D_DIR2).
        d3 origin = pos + e * tmin;
        d3 ee = wd3(st, RFS_D_DIR2);
        d3 so = src - origin, to = t - origin;
        double pa = dot(so, ee), pb = dot(to, ee);
        double rs = norm(so - ee * pa), rt = norm(to - ee * pb);
        double p = add_rn(mul_rn(pa, rt), mul_rn(pb, rs)) / (rs + rt);
        if (!fin(p) || !(length > RF_EPS_SMALL)) return 2;
        te = tmin + p;
        tv = tmin + gmin(gmax(p, 0.0), length);
    }
    d3 q = pos + e * te, qv = pos + e * tv;
    if (a.prefilter && !(visible<W>(a.sc, src, qv) && visible<W>(a.sc, qv, t))) return 1;
    double c = weight(weight_num(st, l4sq, a.g.area, gmax(length, 0.0) * (double)a.S), src, q, t);
    if (!(c > 0.0) || !fin(c)) return 2;
    double phase = -kw * (gmax(norm(q - src), RF_EPS_SMALL) + gmax(norm(t - q), RF_EPS_SMALL));
    double amp = sqrt(c), sn, cs;
    sincos(phase, &sn, &cs);
    re = amp * cs;
    im = amp * sn;
    return 0;
}

template <int W>
__device__ __forceinline__ void coherent_kernel(const CoherentArgs& a, int lane_offset, int lane_count, int smem_cells,
                                                double* acc, int* counts) {
    extern __shared__ double rf_smem[];
    const int cells = a.g.res0 * a.g.res1;
    // counts rows (cells wide each): direct_count, visibility_reject_count, utd_reject_count.
    Hist<2, 3> h{smem_cells > 0 ? rf_smem : nullptr, acc, counts, cells};
    h.init();
    const double l4 = a.lambda / (4.0 * RF_PI), l4sq = l4 * l4;
    const double kw = 2.0 * RF_PI / a.lambda;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    LaneMap m((unsigned int)(lane_offset + first + (threadIdx.x & 31u)), (unsigned int)a.S, a.g.res0, a.g.res1,
              (unsigned int)stride);
    for (long long base = first; base < lane_count; base += stride, m.advance()) {
        long long l = base + (threadIdx.x & 31u);
        int cell = -1, ch = -1;
        double re = 0.0, im = 0.0;
        if (l < lane_count) ch = coherent_lane<W>(a, l4sq, kw, (int)m.s, m.ci, m.cj, cell, re, im);
        double v[2] = {re, im};
        h.commit(ch >= 0 ? cell : -1, v, ch);
    }
    h.flush();
}
}  // namespace

// Resident blocks per SM the kernels ask for. The coherent kernel: the
// occupancy its registers gave before the per-state invariants were hoisted
// (4 at up to 128), so that a compiler needing a few more registers spills
// a word rather than losing a block.
#define RF_COHERENT_BLOCKS 4

// rf_accum_direct_only(4, 8), rf_accum_keller(4, 8) and rf_accum_suffix(4, 8)
// run a window of direct lanes (lane_offset + lane_count ≤ D), Keller lanes
// (D ≤ lane_offset, lane_offset + lane_count ≤ D + K) and suffix lanes
// (D + K ≤ lane_offset); the launcher splits a window at D and D + K.
// The binary-node variant asks for RF_DIRECT_ONLY_BLOCKS resident blocks
// per SM (96 registers; nvcc 11.8 for sm_90 spills one word), a quarter
// more warps than its unbounded 116 registers allow, to hide the latency
// of its float64 chains; the quad-node variant would spill more and keeps
// its registers.
#define RF_DIRECT_ONLY_BLOCKS 5
extern "C" __global__ void __launch_bounds__(RF_THREADS, RF_DIRECT_ONLY_BLOCKS) rf_accum_direct_only(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<2, KIND_DIRECT>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_direct_only4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<4, KIND_DIRECT>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_direct_only8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<8, KIND_DIRECT>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

// The binary-node Keller and suffix kernels ask for 4 resident blocks per
// SM (128 registers; unbounded, nvcc 11.8 for sm_90 gives them 141 and
// 152, so 3 blocks).
#define RF_KELLER_BLOCKS 4
#define RF_SUFFIX_BLOCKS 4
extern "C" __global__ void __launch_bounds__(RF_THREADS, RF_KELLER_BLOCKS) rf_accum_keller(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<2, KIND_KELLER>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_keller4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<4, KIND_KELLER>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_keller8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<8, KIND_KELLER>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS, RF_SUFFIX_BLOCKS) rf_accum_suffix(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<2, KIND_SUFFIX>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_suffix4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<4, KIND_SUFFIX>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_suffix8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int D, int K, int X, unsigned int seed, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    DirectArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                 lambda, D, K, X, seed};
    direct_kernel<8, KIND_SUFFIX>(a, lane_offset, lane_count, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS, RF_COHERENT_BLOCKS) rf_accum_coherent(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int select_point, int prefilter, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counts) {
    CoherentArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                   lambda, select_point, prefilter};
    coherent_kernel<2>(a, lane_offset, lane_count, smem_cells, acc, counts);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS, RF_COHERENT_BLOCKS) rf_accum_coherent4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int select_point, int prefilter, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counts) {
    CoherentArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                   lambda, select_point, prefilter};
    coherent_kernel<4>(a, lane_offset, lane_count, smem_cells, acc, counts);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_coherent8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int S, int axis, double pos, double min0, double max0, double min1, double max1, int res0, int res1, double area,
    double lambda, int select_point, int prefilter, int lane_offset, int lane_count, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counts) {
    CoherentArgs a{{nodes, tris, num_tris}, states, S, {axis, pos, min0, max0, min1, max1, area, res0, res1},
                   lambda, select_point, prefilter};
    coherent_kernel<8>(a, lane_offset, lane_count, smem_cells, acc, counts);
}

// rf_add_f64_to_f32: out[i] += (float)acc[i] for i < n.
extern "C" __global__ void __launch_bounds__(RF_THREADS)
    rf_add_f64_to_f32(const double* __restrict__ acc, long long n, float* __restrict__ out) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        out[i] = out[i] + (float)acc[i];
    }
}
