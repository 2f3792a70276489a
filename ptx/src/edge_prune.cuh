// edge_prune.cuh: the float32 tests of the nearest-edge ray kernels
// (edge.cu, rayd_edge_nearest_ray and _rows): "may the query come within the
// radius Rf of this box?" for the child boxes of a node, and "of this edge?"
// before an edge's float64 closest pair (ray_segment) runs. A test may keep
// a box or an edge it could drop, never the reverse: every edge whose
// float64 squared distance is at most the best is kept, so the kernels
// return the brute-force scan's record bit for bit. accel/edge_prune.go
// mirrors the tests operation for operation; accel's tests check the claims
// below on adversarial inputs and that the margins are needed.
//
// The query is o + t·d, t ∈ [0, T] (T = +Inf: a half ray), from float32
// inputs; every value below is relative to the origin (x − o). u = 2^−24.
//
// Range. The tests run when S = ru32(2B + |o|∞) ∈ [2^−40, 2^24] (B: the
// largest |coordinate| of the root's two child boxes) and every d_k is 0 (a
// flat axis) or |d_k| ∈ [2^−40, 2^40], not all 0; other rows are left to the
// float64 walk. Every stored box contains its descendants' boxes up to the
// rounding of the inflation, so |x_k − o_k| ≤ S for every box side and
// endpoint, and no float32 value of the tests overflows.
//
// Radius. Rf = ru32(√best·(1 + 2^−20) + 2^−18·S) (float64, then rounded
// up), at most its initial ru32(2S), and rf2 = ru32(Rf²). Before any best,
// Rf ≥ 2S exceeds by 0.26·S the distance √3·S from o to any edge point.
//
// R1. If an edge's float64 ray_segment value dc is at most best, some P(t*)
// (t* ∈ [0, T]) and some point X* of the edge are within R1 = √best·(1 +
// 2^−50) + 2^−44·S of each other: dc is |w|² of the rounded difference of
// the rounded points o + tc·d (tc ∈ [0, T]) and a + sc·(b − a) (sc ∈ [0, 1]),
// each rounding relative 2^−53 over magnitudes below 4S. So Rf ≥ R1 + Δ with
// Δ ≥ 2^−21·R1 + 2^−18.01·S (the float64 steps of Rf round by 2^−52).
//
// Claim A (slab, edge_slab). With a = fl(lo_k − o_k), b = fl(hi_k − o_k) for
// a box X ∋ X* (so |a − (lo_k − o_k)| ≤ u·S): on a non-flat axis,
// t0 = fl(fl(a − Rf)·iv), t1 = fl(fl(b + Rf)·iv), iv = fl(1/d_k), and
// tn = max(0, min(t0, t1) over axes), tf = min(T, max(t0, t1) over axes).
// Then tn ≤ t* ≤ tf. For d_k > 0, X* gives t*·d_k ≥ (lo_k − o_k) − R1 =: Y
// (|Y| ≤ 3S), and fl(a − Rf) ≤ Y − Δ + u·S; three roundings (of the
// difference, of iv, of the product) move t0·d_k by at most
// 3.01u·(3S + Δ + u·S), below Δ − u·S: t0 ≤ t*. Likewise t1 ≥ t*, and
// d_k < 0 swaps them. An underflow moves t·d_k by at most 2^−110 ≪ Δ. A
// flat axis keeps P_k = o_k, and a ≤ Rf, b ≥ −Rf are tested instead
// (a ≤ (lo_k − o_k) + u·S ≤ R1 + u·S ≤ Rf). So t* ∈ [tn, tf], and for every t
// there each non-flat |t·d_k| ≤ (S + Rf)(1 + 4u).
//
// Claim B (separating axis, edge_sat). Let n be any float32 vector with
// max|n_k| ∈ [1, 2) (edge_scale gives the power of two that scales any n ≠ 0
// so), sup = fl(Σ n_k·v_k) with v_k = b if n_k ≥ 0 else a (for an edge:
// max(fl(n·a), fl(n·b)) over its rounded endpoints), nd = fl(n·d),
// G = fl(min(fl(tn·nd), fl(tf·nd)) − sup) and V = fl(fl(G²)·r) with
// r = rcp_nw<2>(fl(|n|²)) ≤ (1 + 2.4u)/fl(|n|²) when G > 0 (else V = 0). In
// exact arithmetic, the minimum over t ∈ [tn, tf] of n·P(t) less the
// support of the box (edge) in direction n is at most |n|·R1, as t* and X*
// are within R1. The float32 sums and products (3.01u per dot product, u
// per rounded coordinate, 2^−150 per underflowed product) add at most
// 4.01u·|n|₁·(2S + Rf_then) + 2^−146 ≤ 6.95u·|n|·(2S + Rf_then) + 2^−146,
// Rf_then ≤ 2S(1 + u) being the radius when V was computed; the roundings
// of G, G², |n|² ≥ 1 and the product, and the reciprocal's excess, add a
// factor 1 + 9.5u and, for an underflowed G², 2^−149. So √V ≤ R1·(1 + 4.8u)
// + 28u·S + 2^−74 ≤ R1 + Δ ≤ Rf, and V ≤ rf2, for every radius of a best ≥
// dc (Δ covers it with room to spare: 2^−18 = 64u).
//
// So a box or an edge is dropped only when its slab interval is empty or
// V > rf2, and neither happens while a candidate remains in it. A stack
// entry keeps the V of its push and is dropped when it pops with V above
// the current rf2: Claim B holds for every later, smaller radius, since the
// interval of the push contains the t* of any later candidate.
//
// The direction n comes from two alternating projections (along): the
// nearest query point to the box centre (or edge midpoint), t clamped to
// [tn, tf], the nearest box (edge) point to it, and once more; n is their
// difference and its |n|² the children's ordering key. Neither needs to be
// accurate: Claim B holds for every n.
#pragma once

#include <math.h>

namespace rayd_edge {

#define EDGE32_REL 9.5367431640625e-07       /* 2^-20: relative slack of Rf */
#define EDGE32_ABS 3.814697265625e-06        /* 2^-18: slack of Rf per unit of S */
#define EDGE32_S_LO 9.094947017729282e-13    /* 2^-40: least S */
#define EDGE32_S_HI 16777216.0               /* 2^24: largest S */
#define EDGE32_DIR_LO 9.094947017729282e-13  /* 2^-40: least |d_k| of a non-flat axis */
#define EDGE32_DIR_HI 1099511627776.0        /* 2^40: largest |d_k| */

// q32 is the float32 form of one ray query.
struct q32 {
    float ox, oy, oz;  // origin
    float dx, dy, dz;  // direction
    float ix, iy, iz;  // rn(1/d_k), 0 on a flat axis (d_k = 0)
    float idd;         // rn(1/|d|²), for the projections
    float T;           // range end (+Inf: a half ray)
    float rf, rf2;     // radius Rf and ru(Rf²)
    float S;           // ru(2B + |o|∞)
};

// q32_setup prepares the tests for the query (o, d, T), with T = +Inf or a
// float32 value ≥ 0, over a scene of bound B. False: outside their range.
__device__ __forceinline__ bool q32_setup(q32& q, double ox, double oy, double oz, double dx, double dy, double dz,
                                          double T, double B) {
    double om = fmax(fmax(fabs(ox), fabs(oy)), fabs(oz));
    float S = __double2float_ru(__dadd_rn(2.0 * B, om));
    if (!(S >= EDGE32_S_LO && S <= EDGE32_S_HI)) return false;
    double ax = fabs(dx), ay = fabs(dy), az = fabs(dz);
    if ((ax != 0.0 && !(ax >= EDGE32_DIR_LO && ax <= EDGE32_DIR_HI)) ||
        (ay != 0.0 && !(ay >= EDGE32_DIR_LO && ay <= EDGE32_DIR_HI)) ||
        (az != 0.0 && !(az >= EDGE32_DIR_LO && az <= EDGE32_DIR_HI)) || (ax == 0.0 && ay == 0.0 && az == 0.0))
        return false;
    q.ox = (float)ox; q.oy = (float)oy; q.oz = (float)oz;  // exact: float32 inputs
    q.dx = (float)dx; q.dy = (float)dy; q.dz = (float)dz;
    q.ix = q.dx != 0.0f ? __frcp_rn(q.dx) : 0.0f;
    q.iy = q.dy != 0.0f ? __frcp_rn(q.dy) : 0.0f;
    q.iz = q.dz != 0.0f ? __frcp_rn(q.dz) : 0.0f;
    float dd = __fadd_rn(__fadd_rn(__fmul_rn(q.dx, q.dx), __fmul_rn(q.dy, q.dy)), __fmul_rn(q.dz, q.dz));
    q.idd = __frcp_rn(dd);
    q.T = (float)T;  // exact
    q.S = S;
    q.rf = __double2float_ru(2.0 * (double)S);
    q.rf2 = __double2float_ru((double)q.rf * (double)q.rf);  // the product is exact
    return true;
}

// q32_radius follows a smaller best squared distance.
__device__ __forceinline__ void q32_radius(q32& q, double best) {
    double r = __dadd_rn(__dmul_rn(sqrt(best), 1.0 + EDGE32_REL), __dmul_rn(EDGE32_ABS, (double)q.S));
    float rf = fminf(__double2float_ru(r), __double2float_ru(2.0 * (double)q.S));
    q.rf = rf;
    q.rf2 = __double2float_ru((double)rf * (double)rf);
}

// edge_slab narrows [tn, tf] to the times at which the query is within Rf of
// the slab [a, b] (relative to the origin) of an axis (Claim A). Selects, no
// branch: a flat axis leaves [tn, tf] as it is or empties it (tf = −1).
__device__ __forceinline__ void edge_slab(float a, float b, float dk, float ik, float rf, float& tn, float& tf) {
    float t0 = __fmul_rn(__fsub_rn(a, rf), ik), t1 = __fmul_rn(__fadd_rn(b, rf), ik);
    bool flat = dk == 0.0f;
    float lo = flat ? -INFINITY : fminf(t0, t1);
    float hi = flat ? ((a > rf || b < -rf) ? -1.0f : INFINITY) : fmaxf(t0, t1);
    tn = fmaxf(tn, lo);
    tf = fminf(tf, hi);
}

__device__ __forceinline__ float clampf(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }

__device__ __forceinline__ float dot32(float ax, float ay, float az, float bx, float by, float bz) {
    return __fadd_rn(__fadd_rn(__fmul_rn(ax, bx), __fmul_rn(ay, by)), __fmul_rn(az, bz));
}

// along sets p to t·d for the time t ∈ [tn, tf] nearest to x (relative).
__device__ __forceinline__ void along(const q32& q, float x, float y, float z, float tn, float tf, float& px,
                                      float& py, float& pz) {
    float t = clampf(__fmul_rn(dot32(x, y, z, q.dx, q.dy, q.dz), q.idd), tn, tf);
    px = __fmul_rn(t, q.dx);
    py = __fmul_rn(t, q.dy);
    pz = __fmul_rn(t, q.dz);
}

// edge_scale is the power of two 2^−e that brings max|n_k| = m ∈ [2^e,
// 2^(e+1)) into [1, 2) (for m > 0; any finite value for m = 0, whose tests
// return 0). Scaling n by it is exact, up to components that underflow,
// which only makes it another n: Claim B holds for the scaled vector, whose
// G² and |n|² can neither overflow nor lose their relative precision to
// underflow near the radius.
__device__ __forceinline__ float edge_scale(float m) {
    return __int_as_float((254 - ((__float_as_int(m) >> 23) & 0xff)) << 23);
}

// rcp_nw is 1/x from the bit-pattern estimate 0x7EF311C3 − bits(x) and
// STEPS Newton steps r·(2 − x·r), float32 products and differences only (no
// branch; accel mirrors it bit for bit). For a normal x the estimate is
// within 12% of 1/x and each step squares the relative error, from below:
// with two steps, 1 − 6.7·10^−6 ≤ x·r ≤ 1 + 2.4u (accel checks every x in
// [1, 2), which covers every normal x, as scaling x by 2 scales r by 1/2).
template <int STEPS>
__device__ __forceinline__ float rcp_nw(float x) {
    float r = __int_as_float(0x7EF311C3 - __float_as_int(x));
#pragma unroll
    for (int k = 0; k < STEPS; ++k) r = __fmul_rn(r, __fsub_rn(2.0f, __fmul_rn(x, r)));
    return r;
}

// edge_sat is V of Claim B for the direction n (not yet scaled, m =
// max|n_k|), the boxes' or edge's relative sides (v_k ≥ 0 picks hi, else
// lo, per component of the scaled n) and [tn, tf]: 0 when m = 0 or G ≤ 0.
// The quotient is fl(G²)·rcp_nw<2>(|n|²), |n|² ∈ [1, 12), at most
// (1 + 2.4u)(1 + u) times fl(G²)/|n|²; the product by a smaller
// reciprocal only keeps more.
__device__ __forceinline__ float edge_sat(const q32& q, float nx, float ny, float nz, float sup, float tn, float tf,
                                          bool zero) {
    float nn = dot32(nx, ny, nz, nx, ny, nz);
    float nd = dot32(nx, ny, nz, q.dx, q.dy, q.dz);
    float g = __fsub_rn(fminf(__fmul_rn(tn, nd), __fmul_rn(tf, nd)), sup);
    float v = __fmul_rn(__fmul_rn(g, g), rcp_nw<2>(nn));
    return (g > 0.0f && !zero) ? v : 0.0f;
}

// q32_box tests the box [lo, hi]: the result exceeds rf2 when the box is
// certainly farther than Rf (+Inf when the query misses the box grown by
// Rf); key is the squared length of n (the ordering key, no bound; 0 on a
// miss). No branch: a node's two child tests form one block of independent
// instructions that the compiler interleaves, which is what the
// latency-bound walks gain from (a miss or m = 0 selects the result).
__device__ __forceinline__ float q32_box(const q32& q, float lox, float hix, float loy, float hiy, float loz,
                                         float hiz, float& key) {
    float ax = __fsub_rn(lox, q.ox), bx = __fsub_rn(hix, q.ox);
    float ay = __fsub_rn(loy, q.oy), by = __fsub_rn(hiy, q.oy);
    float az = __fsub_rn(loz, q.oz), bz = __fsub_rn(hiz, q.oz);
    float tn = 0.0f, tf = q.T;
    edge_slab(ax, bx, q.dx, q.ix, q.rf, tn, tf);
    edge_slab(ay, by, q.dy, q.iy, q.rf, tn, tf);
    edge_slab(az, bz, q.dz, q.iz, q.rf, tn, tf);
    bool miss = tn > tf;
    float cx = __fmul_rn(__fadd_rn(ax, bx), 0.5f), cy = __fmul_rn(__fadd_rn(ay, by), 0.5f),
          cz = __fmul_rn(__fadd_rn(az, bz), 0.5f);
    float px, py, pz;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        along(q, cx, cy, cz, tn, tf, px, py, pz);
        cx = clampf(px, ax, bx); cy = clampf(py, ay, by); cz = clampf(pz, az, bz);
    }
    float nx = __fsub_rn(px, cx), ny = __fsub_rn(py, cy), nz = __fsub_rn(pz, cz);
    float k = dot32(nx, ny, nz, nx, ny, nz);
    float m = fmaxf(fmaxf(fabsf(nx), fabsf(ny)), fabsf(nz));
    float sc = edge_scale(m);
    nx = __fmul_rn(nx, sc); ny = __fmul_rn(ny, sc); nz = __fmul_rn(nz, sc);
    float sup = dot32(nx, ny, nz, nx >= 0.0f ? bx : ax, ny >= 0.0f ? by : ay, nz >= 0.0f ? bz : az);
    float v = edge_sat(q, nx, ny, nz, sup, tn, tf, !(m > 0.0f));
    key = miss ? 0.0f : k;
    return miss ? INFINITY : v;
}

// EDGE32_IEE_LO and _HI bound the |e|² whose reciprocal q32_edge's
// projection takes (rcp_nw<1>, no overflow); outside them it takes 0, a
// projection onto the endpoint a. The projection only chooses n.
#define EDGE32_IEE_LO 7.888609052210118e-31f  /* 2^-100 */
#define EDGE32_IEE_HI 1.2676506002282294e30f  /* 2^100 */

// q32_edge tests the edge a→b: the result exceeds rf2 when the edge is
// certainly farther than Rf (+Inf when the query misses its box grown by
// Rf). No branch, like q32_box.
__device__ __forceinline__ float q32_edge(const q32& q, float4 A, float4 B) {
    float ax = __fsub_rn(A.x, q.ox), ay = __fsub_rn(A.y, q.oy), az = __fsub_rn(A.z, q.oz);
    float bx = __fsub_rn(B.x, q.ox), by = __fsub_rn(B.y, q.oy), bz = __fsub_rn(B.z, q.oz);
    float tn = 0.0f, tf = q.T;
    edge_slab(fminf(ax, bx), fmaxf(ax, bx), q.dx, q.ix, q.rf, tn, tf);
    edge_slab(fminf(ay, by), fmaxf(ay, by), q.dy, q.iy, q.rf, tn, tf);
    edge_slab(fminf(az, bz), fmaxf(az, bz), q.dz, q.iz, q.rf, tn, tf);
    bool miss = tn > tf;
    float ex = __fsub_rn(bx, ax), ey = __fsub_rn(by, ay), ez = __fsub_rn(bz, az);
    float ee = dot32(ex, ey, ez, ex, ey, ez);
    float iee = (ee >= EDGE32_IEE_LO && ee <= EDGE32_IEE_HI) ? rcp_nw<1>(ee) : 0.0f;
    float cx = __fmul_rn(__fadd_rn(ax, bx), 0.5f), cy = __fmul_rn(__fadd_rn(ay, by), 0.5f),
          cz = __fmul_rn(__fadd_rn(az, bz), 0.5f);
    float px, py, pz;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        along(q, cx, cy, cz, tn, tf, px, py, pz);
        float s = clampf(__fmul_rn(dot32(__fsub_rn(px, ax), __fsub_rn(py, ay), __fsub_rn(pz, az), ex, ey, ez), iee),
                         0.0f, 1.0f);
        cx = __fadd_rn(ax, __fmul_rn(s, ex)); cy = __fadd_rn(ay, __fmul_rn(s, ey)); cz = __fadd_rn(az, __fmul_rn(s, ez));
    }
    float nx = __fsub_rn(px, cx), ny = __fsub_rn(py, cy), nz = __fsub_rn(pz, cz);
    float m = fmaxf(fmaxf(fabsf(nx), fabsf(ny)), fabsf(nz));
    float sc = edge_scale(m);
    nx = __fmul_rn(nx, sc); ny = __fmul_rn(ny, sc); nz = __fmul_rn(nz, sc);
    float sup = fmaxf(dot32(nx, ny, nz, ax, ay, az), dot32(nx, ny, nz, bx, by, bz));
    float v = edge_sat(q, nx, ny, nz, sup, tn, tf, !(m > 0.0f));
    return miss ? INFINITY : v;
}

}  // namespace rayd_edge
