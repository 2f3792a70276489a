// edge_vjp.cu: the backward passes of the nearest-edge point and ray queries
// (spec §5.7) with each row's edge frozen, in float64, operation for
// operation as package edge (vjp.go) computes them. Vertex gradients are
// scattered with double atomics, so their summation order (and last bits)
// varies between runs; per-row gradients are deterministic.
#include "edge_math.cuh"

using namespace rayd_edge;

#define EDGE_VJP_THREADS 128

namespace {

__device__ __forceinline__ v3 load3f(const float* __restrict__ v, long long i) {
    return mk(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
}

__device__ __forceinline__ double row1(const double* __restrict__ v, long long i) { return v ? v[i] : 0.0; }

__device__ __forceinline__ v3 row3(const double* __restrict__ v, long long i) {
    return v ? mk(v[3 * i], v[3 * i + 1], v[3 * i + 2]) : mk(0, 0, 0);
}

__device__ __forceinline__ void put3(double* dst, long long i, v3 g) {
    dst[3 * i] = g.x;
    dst[3 * i + 1] = g.y;
    dst[3 * i + 2] = g.z;
}

__device__ __forceinline__ void scatter3(double* dst, long long i, v3 g) {
    atomicAdd(dst + 3 * i, g.x);
    atomicAdd(dst + 3 * i + 1, g.y);
    atomicAdd(dst + 3 * i + 2, g.z);
}

// The frozen edge of a row: its endpoints and vertex ids; false when the
// row missed (gid < 0) or gid is out of range.
__device__ __forceinline__ bool frozen_edge(const float* __restrict__ verts, const int* __restrict__ v0,
                                            const int* __restrict__ v1, int num_edges, int gid, v3& a, v3& b,
                                            int& ia, int& ib) {
    if (gid < 0 || gid >= num_edges) return false;
    ia = v0[gid];
    ib = v1[gid];
    a = load3f(verts, ia);
    b = load3f(verts, ib);
    return true;
}

}  // namespace

extern "C" {

// rayd_edge_point_vjp(verts, v0, v1, num_edges, points, gid, g_dist, g_q,
// g_t, n, dp, dv): edge.NearestPointVJP.
//   verts   float[3V]; v0, v1 int[E] (endpoint vertex ids by global edge id)
//   points  float[3n]; gid int[n] (the forward pass's global edge ids)
//   g_dist  double[n] | null; g_q double[3n] | null; g_t double[n] | null
//   dp      double[3n] (out, every row written)
//   dv      double[3V] (accumulated; the caller zeroes it)
// One thread per row.
__global__ void __launch_bounds__(EDGE_VJP_THREADS) rayd_edge_point_vjp(
    const float* __restrict__ verts, const int* __restrict__ v0, const int* __restrict__ v1, int num_edges,
    const float* __restrict__ points, const int* __restrict__ gid, const double* __restrict__ g_dist,
    const double* __restrict__ g_q, const double* __restrict__ g_t, int n, double* dp, double* dv) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v3 a, b;
    int ia, ib;
    if (!frozen_edge(verts, v0, v1, num_edges, gid[i], a, b, ia, ib)) {
        put3(dp, i, mk(0, 0, 0));
        return;
    }
    v3 p = load3f(points, i);
    double s;
    v3 q;
    double d2 = point_segment(p, a, b, s, q);
    v3 dvec = sub(p, q);
    double dist = sqrt(fmax(d2, RAYD_EDGE_DIST_FLOOR));
    v3 gsep = scale(dvec, row1(g_dist, i) / dist);
    v3 gq = sub(row3(g_q, i), gsep);
    v3 gp = gsep;
    v3 ga = scale(gq, 1 - s);
    v3 gb = scale(gq, s);
    if (s > 0 && s < 1) {
        v3 e = sub(b, a);
        double mu = dot(gq, e) + row1(g_t, i);
        double den = fmax(dot(e, e), RAYD_EDGE_DIST_FLOOR);
        v3 pa = sub(p, a);
        double num = dot(pa, e);
        gp = axpy(mu / den, e, gp);
        v3 ds = sub(scale(pa, 1 / den), scale(e, 2 * num / (den * den)));
        ga = sub(ga, add(scale(e, mu / den), scale(ds, mu)));
        gb = axpy(mu, ds, gb);
    }
    put3(dp, i, gp);
    scatter3(dv, ia, ga);
    scatter3(dv, ib, gb);
}

// rayd_edge_ray_vjp(verts, v0, v1, num_edges, o, d, tmax, gid, g_dist, g_t,
// g_point, g_s, g_edge_point, n, do_, dd, dv): edge.NearestRayVJP, the
// transpose of the closest-pair JVP with clamped parameters frozen.
//   o, d float[3n]; tmax float[n] | null (null: half rays); gid int[n]
//   g_dist, g_t, g_s double[n] | null; g_point, g_edge_point double[3n] | null
//   do_, dd double[3n] (out, every row written); dv double[3V] (accumulated)
// One thread per row.
__global__ void __launch_bounds__(EDGE_VJP_THREADS) rayd_edge_ray_vjp(
    const float* __restrict__ verts, const int* __restrict__ v0, const int* __restrict__ v1, int num_edges,
    const float* __restrict__ o_, const float* __restrict__ d_, const float* __restrict__ tmax,
    const int* __restrict__ gid, const double* __restrict__ g_dist, const double* __restrict__ g_t,
    const double* __restrict__ g_point, const double* __restrict__ g_s, const double* __restrict__ g_edge_point,
    int n, double* do_, double* dd_, double* dv) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    put3(do_, i, mk(0, 0, 0));
    put3(dd_, i, mk(0, 0, 0));
    v3 a, b;
    int ia, ib;
    if (!frozen_edge(verts, v0, v1, num_edges, gid[i], a, b, ia, ib)) return;
    v3 o = load3f(o_, i), d = load3f(d_, i);
    double T = INFINITY;
    if (tmax != nullptr) {
        double x = tmax[i];
        if (isnan(x)) return;
        if (!isinf(x) || x < 0.0) T = fmax(x, 0.0);
    }
    if (!finite3(o) || !finite3(d)) return;
    double t, s;
    double d2 = ray_segment(o, d, T, a, b, t, s);
    v3 e = sub(b, a);
    v3 w = sub(axpy(t, d, o), axpy(s, e, a));
    double dist = sqrt(fmax(d2, RAYD_EDGE_DIST_FLOOR));
    v3 gw = scale(w, row1(g_dist, i) / dist);
    v3 gP = add(gw, row3(g_point, i));
    v3 gQ = sub(row3(g_edge_point, i), gw);
    v3 gro = gP, grd = scale(gP, t), ga = scale(gQ, 1 - s), gb = scale(gQ, s);
    double tBar = row1(g_t, i) + dot(d, gP);
    double sBar = row1(g_s, i) + dot(e, gQ);
    bool tFree = t > 0 && t < T, sFree = s > 0 && s < 1;
    double dd = dot(d, d), de = dot(d, e), ee = dot(e, e);
    double lt = 0, ls = 0;
    bool solve = true;
    if (tFree && sFree) {
        double det = -dd * ee + de * de;
        if (fabs(det) <= RAYD_EDGE_DIST_FLOOR) solve = false;
        else {
            lt = (-tBar * (-ee) - de * (-sBar)) / det;
            ls = (dd * (-sBar) - (-de) * (-tBar)) / det;
        }
    } else if (tFree) {
        if (dd <= RAYD_EDGE_DIST_FLOOR) solve = false;
        else lt = -tBar / dd;
    } else if (sFree) {
        if (ee <= RAYD_EDGE_DIST_FLOOR) solve = false;
        else ls = sBar / ee;
    } else {
        solve = false;
    }
    if (solve) {
        gro = add(gro, add(scale(d, lt), scale(e, ls)));
        grd = add(grd, add(scale(axpy(t, d, w), lt), scale(e, t * ls)));
        ga = add(ga, add(scale(d, -(1 - s) * lt), scale(axpy(1 - s, e, w), -ls)));
        gb = add(gb, add(scale(d, -s * lt), scale(sub(w, scale(e, s)), ls)));
    }
    put3(do_, i, gro);
    put3(dd_, i, grd);
    scatter3(dv, ia, ga);
    scatter3(dv, ib, gb);
}

}  // extern "C"
