// edge_prune.cuh: the float32 pruning test of the nearest-edge ray query
// (edge.cu): "may the query segment come within √best of this box?" asked
// of a node's child boxes and, as the prefilter of the float64 distance, of
// every edge's own box (then of its bounding sphere, q32_far). The tests
// may keep a box or edge they could drop, never the reverse, so the edges
// kept are a superset of those the brute force can pick and the results
// stay the brute force's bit for bit.
// Package edge mirrors it operation for operation (prune32_mirror_test.go)
// and checks the argument below against the float64 distances.
//
// The query. o + t·d, t ∈ [0, T] (T = +Inf: a half ray), from float32
// inputs. With 2^e ≤ max|d_k| < 2^(e+1), n = d·2^−e and τ = t·2^e describe
// the same point set o + τ·n, τ ∈ [0, T·2^e], and n is exact in float64
// (a power-of-two scale), with max|n_k| ∈ [1, 2). An axis is flat when
// |n_k| < 2^−40 (d = 0: every axis). Per query: iv_k = rn32(1/n_k) (NaN on
// a flat axis), tmax = ru32(T·2^e) (0 when d = 0), and the scene bound B =
// max |coordinate| of the root boxes, which bounds every box and endpoint.
//
// The test. With the inflation Rm (below), pl = rn32(o + Rm), ph =
// rn32(o − Rm); for a box [lo, hi] and each axis a = lo − pl, b = hi − ph,
// t0 = a·iv, t1 = b·iv (each rounded to nearest); accept when
//   max(min(t0,t1) over axes, 0) ≤ min(max(t0,t1) over axes, tmax)
// and, on each flat axis, a ≤ 0 ≤ b. The max/min are fmaxf/fminf: a NaN
// operand (a flat axis) is ignored.
//
// The inflation. Rm = ru32(√best·(1 + 2^−18) + 2^−18·(B + |o|∞) + 2^−120)
// (√best and the sums in float64), or 2^100 when best = +Inf or the value
// exceeds 2^100. The test runs only when B ≤ 2^80 and |o|∞ ≤ 2^80 (else the
// row scans every edge), so every float32 value of the test is finite
// except t0, t1, and those only where noted.
//
// Why an edge E in box X with float64 distance dc ≤ best is never dropped
// (u = 2^−24; "distance" is the true real distance):
// 1. dc is |w|² for w the rounded difference of the rounded points
//    o + tc·d (tc ∈ [0, T]) and a + sc·(b − a) (sc ∈ [0, 1]); so some P on
//    the query and Q on E are within R1 = √best·(1 + 2^−48) + 2^−46·(B +
//    |o|∞) of each other (float64 rounding, relative 2^−53 per operation,
//    over magnitudes ≤ B + |o|∞ + √best). As Q ∈ E ⊂ X, for every axis
//    P_k ∈ [lo_k − R1, hi_k + R1], and P = o + τ*·n with τ* ∈ [0, T·2^e].
// 2. Let m = Rm − R1. Rm ≥ R1 + 2^−20·(B + |o|∞ + Rm) + 2^−126 (the
//    constants above leave a factor 2 to spare; with Rm = 2^100 it holds
//    with τ* = 0, since every box is within |o|∞ + B ≤ 2^81 of o).
// 3. A non-flat axis with n_k > 0: pl = (o_k + Rm)(1 + ε1), a = (lo_k −
//    pl)(1 + ε2), t0 = a·iv(1 + ε3), iv = (1 + δ)/n_k, |ε| ≤ u, |δ| ≤ 2^−23,
//    so t0·n_k ≤ (lo_k − o_k − R1) − m + 2^−20·(B + |o|∞ + Rm) ≤ τ*·n_k:
//    t0 ≤ τ*. Symmetrically t1 ≥ τ*, and for n_k < 0 the roles swap, so
//    min(t0,t1) ≤ τ* ≤ max(t0,t1). A float32 underflow moves t·n_k by at
//    most 2^−148, inside the 2^−126 of m. The same bound shows t0 cannot
//    overflow to +Inf (τ* ≤ 2^102) nor t1 to −Inf; an overflow to the far
//    side only widens the interval.
// 4. A flat axis: τ* ≤ |o|∞ + B + R1 (the axis with |n_j| ≥ 1 keeps P_j
//    within B + R1), so P_k moves by at most 2^−40·(|o|∞ + B + R1) and
//    pl ≥ o_k + Rm − u·|o_k + Rm| ≥ lo_k: a ≤ 0, likewise b ≥ 0.
// 5. So max(…, 0) ≤ τ* ≤ min(…, tmax) (τ* ≥ 0, τ* ≤ T·2^e ≤ tmax), and the
//    box is accepted. Ties (dc = best) are covered: nothing above is strict.
//
// The sphere prefilter (q32_far) drops an edge a→b whose box passed when
// dist(query, m) − |b − a|/2 certainly exceeds √best, m the midpoint (every
// point of the edge is within |b − a|/2 of m). In float32, doubled to stay
// exact: W = (a + b) − 2o, t = clamp(W·d·inn, 0, 2T) (inn = rn32(1/|d|²)),
// D = |W − t·d|, E = |b − a| (sqrtf), drop when D − E > 2·Rs with Rs =
// ru32(Rm + 4·base). It runs only when S = B + |o|∞ ∈ [2^−40, 2^56] and
// max|d_k| ∈ [2^−56, 2^56] (no overflow, and underflow costs < 2^−9·u·S).
// With u = 2^−24, a rounding analysis over magnitudes ≤ 7S gives: W within
// 7uS of 2(m − o); |d|·|t − t*| ≤ 25uS for t* the exact clamped minimizer
// (clamping is 1-Lipschitz); the evaluation of D adds ≤ 28uS, so D ≤
// 2·dist(query, m) + 60uS; E ≥ |b − a| − 13uS. An edge with dc ≤ best has
// dist(query, m) − |b − a|/2 ≤ dist(query, edge) ≤ R1 (step 1), so D − E ≤
// 2·R1 + 73uS ≤ 2·Rs, as Rs ≥ R1 + 2^−16·S: it is kept.
#pragma once

#include <math.h>

namespace rayd_edge {

#define EDGE32_FLAT 9.094947017729282e-13      /* 2^-40: a flat axis */
#define EDGE32_RANGE 1.2089258196146292e24     /* 2^80: the test's range */
#define EDGE32_CAP 1.2676506002282294e30f      /* 2^100: the inflation cap */
#define EDGE32_REL 3.814697265625e-06          /* 2^-18 */
#define EDGE32_FLOOR 7.52316384526264e-37      /* 2^-120 */
#define EDGE32_SPHERE_LO 9.094947017729282e-13 /* 2^-40: sphere test, least S */
#define EDGE32_SPHERE_HI 7.205759403792794e16  /* 2^56: sphere test, largest S and max|d_k| */
#define EDGE32_DIR_LO 1.3877787807814457e-17   /* 2^-56: sphere test, least max|d_k| */
#define EDGE32_USE_SPHERE 8                    /* q32::flat bit: the sphere test runs */

// q32 is the float32 form of one ray query.
struct q32 {
    float ox, oy, oz;  // origin (the float32 input)
    float ix, iy, iz;  // 1/n_k rounded, NaN on a flat axis
    float tmax;        // τ range end, rounded up
    float lx, ly, lz;  // rn32(o + Rm)
    float hx, hy, hz;  // rn32(o − Rm)
    float inn;         // rn32(1/|d|²) (sphere test, visit order)
    float rs;          // ru32(Rm + 4·base) (sphere test)
    double base;       // 2^-18·(B + |o|∞) + 2^-120
    int flat;          // bit k < 3: axis k is flat; EDGE32_USE_SPHERE
};

__device__ __forceinline__ double abs_max3(double x, double y, double z) { return fmax(fmax(fabs(x), fabs(y)), fabs(z)); }

// q32_radius sets the inflation for the current best squared distance.
__device__ __forceinline__ void q32_radius(q32& q, double best) {
    float rm = EDGE32_CAP;
    if (best < INFINITY) {
        double r = __dadd_rn(__dmul_rn(sqrt(best), 1.0 + EDGE32_REL), q.base);
        if (r < (double)EDGE32_CAP) rm = __double2float_ru(r);
    }
    q.lx = __fadd_rn(q.ox, rm); q.ly = __fadd_rn(q.oy, rm); q.lz = __fadd_rn(q.oz, rm);
    q.hx = __fsub_rn(q.ox, rm); q.hy = __fsub_rn(q.oy, rm); q.hz = __fsub_rn(q.oz, rm);
    q.rs = __double2float_ru(__dadd_rn((double)rm, __dmul_rn(4.0, q.base)));
}

__device__ __forceinline__ float q32_inv(double nk, int k, int& flat) {
    if (fabs(nk) < EDGE32_FLAT) {
        flat |= 1 << k;
        return __int_as_float(0x7fffffff);  // NaN: ignored by fminf/fmaxf
    }
    return __double2float_rn(1.0 / nk);
}

// q32_setup prepares the test for the query (o, d, T) over a scene of bound
// B and the inflation 2^100 (no best yet). False: outside the test's range.
__device__ __forceinline__ bool q32_setup(q32& q, double ox, double oy, double oz, double dx, double dy, double dz,
                                          double T, double B) {
    double om = abs_max3(ox, oy, oz);
    if (!(om <= EDGE32_RANGE && B <= EDGE32_RANGE)) return false;
    q.ox = (float)ox; q.oy = (float)oy; q.oz = (float)oz;  // exact: float32 inputs
    q.flat = 0;
    double dm = abs_max3(dx, dy, dz);
    double nx = 0.0, ny = 0.0, nz = 0.0, tau = 0.0;
    if (dm > 0.0) {
        // dm is a normal float64: its exponent field gives 2^e exactly.
        long long e = ((__double_as_longlong(dm) >> 52) & 0x7ff) - 1023;
        double down = __longlong_as_double((1023 - e) << 52), up = __longlong_as_double((1023 + e) << 52);
        nx = dx * down; ny = dy * down; nz = dz * down;
        tau = T * up;
    }
    q.ix = q32_inv(nx, 0, q.flat);
    q.iy = q32_inv(ny, 1, q.flat);
    q.iz = q32_inv(nz, 2, q.flat);
    q.tmax = __double2float_ru(tau);
    double S = __dadd_rn(B, om);
    q.base = __dadd_rn(__dmul_rn(EDGE32_REL, S), EDGE32_FLOOR);
    q.inn = __double2float_rn(1.0 / __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz)));
    if (S >= EDGE32_SPHERE_LO && S <= EDGE32_SPHERE_HI && dm >= EDGE32_DIR_LO && dm <= EDGE32_SPHERE_HI)
        q.flat |= EDGE32_USE_SPHERE;
    q32_radius(q, INFINITY);
    return true;
}

// q32_hit is the test for the box [lo, hi] (see the header comment).
__device__ __forceinline__ bool q32_hit(const q32& q, float lox, float hix, float loy, float hiy, float loz, float hiz) {
    float ax = __fsub_rn(lox, q.lx), bx = __fsub_rn(hix, q.hx);
    float ay = __fsub_rn(loy, q.ly), by = __fsub_rn(hiy, q.hy);
    float az = __fsub_rn(loz, q.lz), bz = __fsub_rn(hiz, q.hz);
    float t0x = __fmul_rn(ax, q.ix), t1x = __fmul_rn(bx, q.ix);
    float t0y = __fmul_rn(ay, q.iy), t1y = __fmul_rn(by, q.iy);
    float t0z = __fmul_rn(az, q.iz), t1z = __fmul_rn(bz, q.iz);
    float tn = fmaxf(fmaxf(fminf(t0x, t1x), fminf(t0y, t1y)), fmaxf(fminf(t0z, t1z), 0.0f));
    float tf = fminf(fminf(fmaxf(t0x, t1x), fmaxf(t0y, t1y)), fminf(fmaxf(t0z, t1z), q.tmax));
    bool hit = tn <= tf;
    if ((q.flat & 7) != 0) {
        hit = hit && (!(q.flat & 1) || (ax <= 0.0f && bx >= 0.0f)) && (!(q.flat & 2) || (ay <= 0.0f && by >= 0.0f)) &&
              (!(q.flat & 4) || (az <= 0.0f && bz >= 0.0f));
    }
    return hit;
}

// q32_far is the sphere prefilter of the edge a→b (see the header comment;
// d and T are the query's float32 direction and range): true when the edge
// is certainly farther than √best, false when it may not be or the test is
// off for this query.
__device__ __forceinline__ bool q32_far(const q32& q, float dx, float dy, float dz, float T, float4 a, float4 b) {
    if (!(q.flat & EDGE32_USE_SPHERE)) return false;
    float wx = __fsub_rn(__fadd_rn(a.x, b.x), __fadd_rn(q.ox, q.ox));
    float wy = __fsub_rn(__fadd_rn(a.y, b.y), __fadd_rn(q.oy, q.oy));
    float wz = __fsub_rn(__fadd_rn(a.z, b.z), __fadd_rn(q.oz, q.oz));
    float p = __fadd_rn(__fadd_rn(__fmul_rn(wx, dx), __fmul_rn(wy, dy)), __fmul_rn(wz, dz));
    float t = fminf(fmaxf(__fmul_rn(p, q.inn), 0.0f), __fadd_rn(T, T));
    wx = __fsub_rn(wx, __fmul_rn(t, dx));
    wy = __fsub_rn(wy, __fmul_rn(t, dy));
    wz = __fsub_rn(wz, __fmul_rn(t, dz));
    float D = __fsqrt_rn(__fadd_rn(__fadd_rn(__fmul_rn(wx, wx), __fmul_rn(wy, wy)), __fmul_rn(wz, wz)));
    float ex = __fsub_rn(b.x, a.x), ey = __fsub_rn(b.y, a.y), ez = __fsub_rn(b.z, a.z);
    float E = __fsqrt_rn(__fadd_rn(__fadd_rn(__fmul_rn(ex, ex), __fmul_rn(ey, ey)), __fmul_rn(ez, ez)));
    return __fsub_rn(D, E) > __fadd_rn(q.rs, q.rs);
}

// q32_key orders two accepted children: 4× the squared distance of the box
// centre from the query's nearest point to it (the projection clamped to
// [0, T]; d and T are the query's float32 direction and range), smaller
// first. It bounds nothing; a NaN key (d = 0) leaves the order as stored.
__device__ __forceinline__ float q32_key(const q32& q, float dx, float dy, float dz, float T, float lox, float hix,
                                         float loy, float hiy, float loz, float hiz) {
    float wx = __fsub_rn(__fadd_rn(lox, hix), __fadd_rn(q.ox, q.ox));
    float wy = __fsub_rn(__fadd_rn(loy, hiy), __fadd_rn(q.oy, q.oy));
    float wz = __fsub_rn(__fadd_rn(loz, hiz), __fadd_rn(q.oz, q.oz));
    float p = __fadd_rn(__fadd_rn(__fmul_rn(wx, dx), __fmul_rn(wy, dy)), __fmul_rn(wz, dz));
    float t = fminf(fmaxf(__fmul_rn(p, q.inn), 0.0f), __fadd_rn(T, T));
    wx = __fsub_rn(wx, __fmul_rn(t, dx));
    wy = __fsub_rn(wy, __fmul_rn(t, dy));
    wz = __fsub_rn(wz, __fmul_rn(t, dz));
    return __fadd_rn(__fadd_rn(__fmul_rn(wx, wx), __fmul_rn(wy, wy)), __fmul_rn(wz, wz));
}

}  // namespace rayd_edge
