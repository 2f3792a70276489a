// edge_math.cuh: the closest-point functions of the nearest-edge queries
// (spec §5.1, §5.2) and the edge BVH's node lower bounds, in float64,
// operation for operation as package edge (math.go, index.go) computes them.
// The module is compiled with -fmad=false, so no product is fused into an
// addition: every result equals the Go reference bit for bit.
#pragma once

#include <math.h>

namespace rayd_edge {

#define RAYD_EDGE_EPS 1e-7 /* edge.DistanceEpsilon */
#define RAYD_EDGE_SLACK 1e-9 /* edge.pruneSlack */
#define RAYD_EDGE_DIST_FLOOR 1e-20 /* edge.distFloor */

struct v3 {
    double x, y, z;
};

__device__ __forceinline__ v3 mk(double x, double y, double z) { return v3{x, y, z}; }
__device__ __forceinline__ v3 add(v3 a, v3 b) { return mk(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ v3 sub(v3 a, v3 b) { return mk(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ v3 scale(v3 a, double k) { return mk(a.x * k, a.y * k, a.z * k); }
__device__ __forceinline__ double dot(v3 a, v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
// axpy(k, x, y) = y + k·x (edge.axpy).
__device__ __forceinline__ v3 axpy(double k, v3 x, v3 y) { return add(y, scale(x, k)); }
__device__ __forceinline__ double comp(v3 a, int k) { return k == 0 ? a.x : (k == 1 ? a.y : a.z); }
__device__ __forceinline__ double clamp01(double x) { return fmin(fmax(x, 0.0), 1.0); }
__device__ __forceinline__ bool finite3(v3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

// point_segment: s ∈ [0,1] of the point q of a→b nearest to p (0 for a
// degenerate segment), q and |p−q|² (edge.pointSegment).
__device__ __forceinline__ double point_segment(v3 p, v3 a, v3 b, double& s, v3& q) {
    v3 e = sub(b, a);
    s = 0.0;
    double l2 = dot(e, e);
    if (l2 > RAYD_EDGE_EPS) s = clamp01(dot(sub(p, a), e) / l2);
    q = axpy(s, e, a);
    v3 w = sub(p, q);
    return dot(w, w);
}

// interior: the unconstrained closest pair of o + u·D and a + v·e
// (edge.interior).
__device__ __forceinline__ bool interior(v3 o, v3 D, v3 a, v3 e, double& u, double& v) {
    double A = dot(D, D), B = dot(D, e), C = dot(e, e);
    v3 w = sub(o, a);
    double dw = dot(D, w), ew = dot(e, w);
    double det = A * C - B * B;
    if (A <= RAYD_EDGE_EPS || C <= RAYD_EDGE_EPS || fabs(det) <= RAYD_EDGE_EPS) return false;
    u = (B * ew - C * dw) / det;
    v = (A * ew - B * dw) / det;
    return true;
}

struct pair_best {
    double d2, t, s;
};

__device__ __forceinline__ void try_pair(pair_best& pb, v3 o, v3 d, v3 a, v3 e, double tc, double sc) {
    v3 w = sub(axpy(tc, d, o), axpy(sc, e, a));
    double dd = dot(w, w);
    if (dd < pb.d2) { pb.d2 = dd; pb.t = tc; pb.s = sc; }
}

// ray_segment: the closest pair of o + t·d, t ∈ [0, tmax] (tmax = +Inf: the
// half ray), and a + s·(b−a), s ∈ [0,1]; candidates in edge.raySegment's
// order, the first of equal candidates kept. Returns d².
__device__ __forceinline__ double ray_segment(v3 o, v3 d, double tmax, v3 a, v3 b, double& t, double& s) {
    v3 e = sub(b, a);
    pair_best pb{INFINITY, 0.0, 0.0};
    double u, v, tmp;
    v3 q;
    if (!isinf(tmax)) {
        v3 D = scale(d, tmax);
        v3 end = add(o, D);
        point_segment(o, a, b, tmp, q);
        try_pair(pb, o, d, a, e, 0.0, tmp);
        point_segment(end, a, b, tmp, q);
        try_pair(pb, o, d, a, e, tmax, tmp);
        point_segment(a, o, end, tmp, q);
        try_pair(pb, o, d, a, e, tmp * tmax, 0.0);
        point_segment(b, o, end, tmp, q);
        try_pair(pb, o, d, a, e, tmp * tmax, 1.0);
        if (interior(o, D, a, e, u, v) && u >= 0.0 && u <= 1.0 && v >= 0.0 && v <= 1.0)
            try_pair(pb, o, d, a, e, u * tmax, v);
    } else {
        point_segment(o, a, b, tmp, q);
        try_pair(pb, o, d, a, e, 0.0, tmp);
        double dd = dot(d, d);
        double tp = 0.0;
        if (dd > RAYD_EDGE_EPS) tp = fmax(dot(sub(a, o), d) / dd, 0.0);
        try_pair(pb, o, d, a, e, tp, 0.0);
        tp = 0.0;
        if (dd > RAYD_EDGE_EPS) tp = fmax(dot(sub(b, o), d) / dd, 0.0);
        try_pair(pb, o, d, a, e, tp, 1.0);
        if (interior(o, d, a, e, u, v) && u >= 0.0 && v >= 0.0 && v <= 1.0) try_pair(pb, o, d, a, e, u, v);
    }
    t = pb.t;
    s = pb.s;
    return pb.d2;
}

// Box bounds. A box is lo[3], hi[3] (the stored, inflated float boxes).
__device__ __forceinline__ double point_bound(v3 p, const double* lo, const double* hi) {
    double d2 = 0.0;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        double x = comp(p, k);
        double v = fmax(fmax(lo[k] - x, 0.0), x - hi[k]);
        if (v > 0.0) d2 += v * v;
    }
    return d2;
}

// ray_bound: the squared distance from o + t·d, t ∈ [0, T], to the box: the
// minimum of a convex piecewise quadratic over the pieces between the slab
// plane crossings (edge.rayBound).
__device__ __forceinline__ double ray_bound(v3 o, v3 d, double T, const double* lo, const double* hi) {
    if (T <= 0.0) return point_bound(o, lo, hi);
    double ts[8];
    int n = 0;
    ts[n++] = 0.0;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        double dk = comp(d, k), ok = comp(o, k);
        if (dk == 0.0) continue;
        double c0 = (lo[k] - ok) / dk, c1 = (hi[k] - ok) / dk;
        if (c0 > 0.0 && c0 < T) ts[n++] = c0;
        if (c1 > 0.0 && c1 < T) ts[n++] = c1;
    }
    for (int i = 2; i < n; ++i) {  // insertion sort of ts[1..n)
        double x = ts[i];
        int j = i - 1;
        while (j >= 1 && ts[j] > x) { ts[j + 1] = ts[j]; --j; }
        ts[j + 1] = x;
    }
    ts[n++] = T;
    double best = INFINITY;
    for (int i = 0; i + 1 < n; ++i) {
        double t0 = ts[i], t1 = ts[i + 1];
        double mid = isinf(t1) ? t0 + 1.0 : (t0 + t1) / 2.0;
        double qa = 0.0, qb = 0.0;
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            double dk = comp(d, k), ok = comp(o, k);
            double x = ok + mid * dk;
            double plane;
            if (x < lo[k]) plane = lo[k];
            else if (x > hi[k]) plane = hi[k];
            else continue;
            qa += dk * dk;
            qb += 2.0 * dk * (ok - plane);
        }
        double t = t0;
        if (qa > 0.0) t = fmin(fmax(-qb / (2.0 * qa), t0), t1);
        if (isinf(t)) continue;
        best = fmin(best, point_bound(axpy(t, d, o), lo, hi));
    }
    return best;
}

// pruned: a node whose bound exceeds best by more than the relative slack
// cannot hold a candidate (edge.pruned).
__device__ __forceinline__ bool pruned(double bound, double best) {
    return bound > best * (1.0 + RAYD_EDGE_SLACK) + 4.9406564584124654e-324;
}

}  // namespace rayd_edge
