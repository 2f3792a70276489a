// closest_math.cuh: the point–triangle closest point of the closest-point
// query in float64, operation for operation the CPU reference's
// (ref/pointtri.go): every product and sum is written with an explicit
// rounding intrinsic (__dmul_rn, __dadd_rn, __dsub_rn, __ddiv_rn), so the
// compiler can neither contract nor reassociate it, and min/max follow Go's
// rules (NaN wins, max(−0, +0) = +0), so every result is the reference's
// bit for bit.
#pragma once

#include <math.h>

namespace rayd_closest {

struct d3 {
    double x, y, z;
};

__device__ __forceinline__ d3 mk(double x, double y, double z) { return d3{x, y, z}; }
__device__ __forceinline__ d3 widen(float4 v) { return d3{(double)v.x, (double)v.y, (double)v.z}; }
__device__ __forceinline__ d3 sub(d3 a, d3 b) { return d3{__dsub_rn(a.x, b.x), __dsub_rn(a.y, b.y), __dsub_rn(a.z, b.z)}; }

// dot is ((a0·b0 + a1·b1) + a2·b2), each product rounded (ref pdot).
__device__ __forceinline__ double dot(d3 a, d3 b) {
    return __dadd_rn(__dadd_rn(__dmul_rn(a.x, b.x), __dmul_rn(a.y, b.y)), __dmul_rn(a.z, b.z));
}

// axpy is a + k·e per component, the product rounded first (ref paxpy).
__device__ __forceinline__ d3 axpy(d3 a, double k, d3 e) {
    return d3{__dadd_rn(a.x, __dmul_rn(k, e.x)), __dadd_rn(a.y, __dmul_rn(k, e.y)), __dadd_rn(a.z, __dmul_rn(k, e.z))};
}

__device__ __forceinline__ double dist2(d3 p, d3 q) {
    d3 w = sub(p, q);
    return dot(w, w);
}

// go_max and go_min are Go's built-in max and min on float64.
__device__ __forceinline__ double go_max(double x, double y) {
    if (x != x) return x;
    if (y != y) return y;
    if (x > y) return x;
    if (y > x) return y;
    return signbit(x) ? y : x;
}
__device__ __forceinline__ double go_min(double x, double y) {
    if (x != x) return x;
    if (y != y) return y;
    if (x < y) return x;
    if (y < x) return y;
    return signbit(x) ? x : y;
}

// TriPoint is the closest point of a triangle: barycentric weights of v0,
// v1, v2, the point and the squared distance.
struct TriPoint {
    double b0, b1, b2;
    d3 q;
    double d2;
};

__device__ __forceinline__ TriPoint tp(double b0, double b1, double b2, d3 q, double d2) {
    TriPoint t;
    t.b0 = b0; t.b1 = b1; t.b2 = b2; t.q = q; t.d2 = d2;
    return t;
}

// ratio is ref ratio: n/d clamped to [0, 1], 0 unless d > 0.
__device__ __forceinline__ double ratio(double n, double d) {
    if (!(d > 0.0)) return 0.0;
    return go_min(go_max(__ddiv_rn(n, d), 0.0), 1.0);
}

// ericson is ref ericson (Voronoi regions, then the interior).
__device__ __forceinline__ bool ericson(d3 p, d3 a, d3 b, d3 c, TriPoint& out) {
    d3 ab = sub(b, a), ac = sub(c, a), ap = sub(p, a);
    double d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        out = tp(1.0, 0.0, 0.0, a, dist2(p, a));
        return true;
    }
    d3 bp = sub(p, b);
    double d3_ = dot(ab, bp), d4 = dot(ac, bp);
    if (d3_ >= 0.0 && d4 <= d3_) {
        out = tp(0.0, 1.0, 0.0, b, dist2(p, b));
        return true;
    }
    double vc = __dsub_rn(__dmul_rn(d1, d4), __dmul_rn(d3_, d2));
    if (vc <= 0.0 && d1 >= 0.0 && d3_ <= 0.0) {
        double v = ratio(d1, __dsub_rn(d1, d3_));
        d3 q = axpy(a, v, ab);
        out = tp(__dsub_rn(1.0, v), v, 0.0, q, dist2(p, q));
        return true;
    }
    d3 cp = sub(p, c);
    double d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        out = tp(0.0, 0.0, 1.0, c, dist2(p, c));
        return true;
    }
    double vb = __dsub_rn(__dmul_rn(d5, d2), __dmul_rn(d1, d6));
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double w = ratio(d2, __dsub_rn(d2, d6));
        d3 q = axpy(a, w, ac);
        out = tp(__dsub_rn(1.0, w), 0.0, w, q, dist2(p, q));
        return true;
    }
    double va = __dsub_rn(__dmul_rn(d3_, d6), __dmul_rn(d5, d4));
    double e = __dsub_rn(d4, d3_), f = __dsub_rn(d5, d6);
    if (va <= 0.0 && e >= 0.0 && f >= 0.0) {
        double w = ratio(e, __dadd_rn(e, f));
        d3 q = axpy(b, w, sub(c, b));
        out = tp(0.0, __dsub_rn(1.0, w), w, q, dist2(p, q));
        return true;
    }
    double sum = __dadd_rn(__dadd_rn(va, vb), vc);
    if (!(va >= 0.0 && vb >= 0.0 && vc >= 0.0 && sum > 0.0)) return false;
    double v = __ddiv_rn(vb, sum), w = __ddiv_rn(vc, sum);
    d3 q = axpy(axpy(a, v, ab), w, ac);
    out = tp(__ddiv_rn(va, sum), v, w, q, dist2(p, q));
    return true;
}

// point_segment is ref pointSegment.
__device__ __forceinline__ double point_segment(d3 p, d3 a, d3 b, double& s, d3& q) {
    d3 e = sub(b, a);
    s = 0.0;
    double l2 = dot(e, e);
    if (l2 > 0.0) s = go_min(go_max(__ddiv_rn(dot(sub(p, a), e), l2), 0.0), 1.0);
    q = axpy(a, s, e);
    return dist2(p, q);
}

#define CLOSEST_THIN_REL 1e-8

// closest_on_triangle is ref closestOnTriangle.
__device__ __forceinline__ TriPoint closest_on_triangle(d3 p, d3 a, d3 b, d3 c) {
    d3 ab = sub(b, a), ac = sub(c, a);
    d3 n = mk(__dsub_rn(__dmul_rn(ab.y, ac.z), __dmul_rn(ab.z, ac.y)),
              __dsub_rn(__dmul_rn(ab.z, ac.x), __dmul_rn(ab.x, ac.z)),
              __dsub_rn(__dmul_rn(ab.x, ac.y), __dmul_rn(ab.y, ac.x)));
    TriPoint best = tp(0.0, 0.0, 0.0, mk(0.0, 0.0, 0.0), 0.0);
    bool ok = ericson(p, a, b, c, best);
    if (ok && dot(n, n) > __dmul_rn(CLOSEST_THIN_REL, __dmul_rn(dot(ab, ab), dot(ac, ac)))) return best;
    if (!ok) best.d2 = INFINITY;
#pragma unroll
    for (int i = 0; i < 3; ++i) {
        d3 e0 = i == 0 ? a : (i == 1 ? b : c);
        d3 e1 = i == 0 ? b : (i == 1 ? c : a);
        double s;
        d3 q;
        double d2 = point_segment(p, e0, e1, s, q);
        if (d2 < best.d2) {
            double w0 = __dsub_rn(1.0, s);
            best = tp(i == 0 ? w0 : (i == 2 ? s : 0.0), i == 1 ? w0 : (i == 0 ? s : 0.0), i == 2 ? w0 : (i == 1 ? s : 0.0),
                      q, d2);
        }
    }
    return best;
}

}  // namespace rayd_closest
