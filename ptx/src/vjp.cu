// vjp.cu: the frozen-winner vector-Jacobian product of intersect (operation
// spec §2.2), mirrored in float64 by ref.IntersectVJP and launched by
// accel.BVH.IntersectVJP.
//
// One thread per ray. The tape is the forward's winner: the global prim id
// and (u, v) (optional: recomputed by solving the hit system when uv is
// null). The row's arithmetic is done in double precision (the hit system
// is solved by Cramer's rule, its determinant floored at 1e-12 with its
// sign kept); the vertex gradient is scattered into a float32 (V,3) buffer
// with atomics, so its low bits depend on the order in which rows land.
// Inactive rows, misses and prim ids outside [0, num_faces) contribute
// nothing and get zero ray gradients. Every cotangent pointer may be null
// (a zero cotangent); grad_vertices, grad_o and grad_d may be null (not
// computed).

#define RAYD_VJP_THREADS 128
#define RAYD_DET_FLOOR 1e-12
#define RAYD_NORMAL_FLOOR_D ((double)1e-20f) /* the float32 floor of intersect, widened */

namespace {

struct d3 {
    double x, y, z;
};

__device__ __forceinline__ d3 load3(const float* p, long long i) {
    return d3{(double)p[3 * i], (double)p[3 * i + 1], (double)p[3 * i + 2]};
}
__device__ __forceinline__ d3 sub(d3 a, d3 b) { return d3{a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ __forceinline__ d3 add(d3 a, d3 b) { return d3{a.x + b.x, a.y + b.y, a.z + b.z}; }
__device__ __forceinline__ d3 scale(d3 a, double s) { return d3{a.x * s, a.y * s, a.z * s}; }
__device__ __forceinline__ double dot(d3 a, d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ d3 cross(d3 a, d3 b) {
    return d3{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

__device__ __forceinline__ void scatter(float* g, int v, d3 x) {
    atomicAdd(g + 3 * v, (float)x.x);
    atomicAdd(g + 3 * v + 1, (float)x.y);
    atomicAdd(g + 3 * v + 2, (float)x.z);
}

__device__ __forceinline__ void store3(float* p, long long i, d3 x) {
    p[3 * i] = (float)x.x;
    p[3 * i + 1] = (float)x.y;
    p[3 * i + 2] = (float)x.z;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(RAYD_VJP_THREADS) rayd_intersect_vjp(
    const float* __restrict__ vertices, const int* __restrict__ faces, int num_faces,
    const float* __restrict__ o, const float* __restrict__ d, const unsigned char* __restrict__ active, int n,
    const int* __restrict__ prim, const float* __restrict__ uv,
    const float* __restrict__ g_t, const float* __restrict__ g_p, const float* __restrict__ g_n,
    const float* __restrict__ g_geo_n, const float* __restrict__ g_uv, const float* __restrict__ g_bary,
    float* grad_vertices, float* grad_o, float* grad_d) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const int p = prim[i];
    const bool live = (active == nullptr || active[i] != 0) && p >= 0 && p < num_faces;
    if (!live) {
        const d3 zero{0.0, 0.0, 0.0};
        if (grad_o != nullptr) store3(grad_o, i, zero);
        if (grad_d != nullptr) store3(grad_d, i, zero);
        return;
    }
    const int i0 = faces[3 * p], i1 = faces[3 * p + 1], i2 = faces[3 * p + 2];
    const d3 v0 = load3(vertices, i0), v1 = load3(vertices, i1), v2 = load3(vertices, i2);
    const d3 ro = load3(o, i), rd = load3(d, i);
    const d3 e1 = sub(v1, v0), e2 = sub(v2, v0);
    const d3 a = scale(rd, -1.0);
    const d3 bc = cross(e1, e2), ca = cross(e2, a), ab = cross(a, e1);
    double det = dot(a, bc);
    if (fabs(det) < RAYD_DET_FLOOR) {
        det = (det < 0.0) ? -RAYD_DET_FLOOR : RAYD_DET_FLOOR;
    }
    const d3 rhs = sub(ro, v0);
    const double ts = dot(rhs, bc) / det;
    double u, w;
    if (uv != nullptr) {
        u = (double)uv[2 * i];
        w = (double)uv[2 * i + 1];
    } else {
        u = dot(a, cross(rhs, e2)) / det;
        w = dot(a, cross(e1, rhs)) / det;
    }
    const double b0 = 1.0 - u - w;

    const double ct = g_t != nullptr ? (double)g_t[i] : 0.0;
    const d3 cp = g_p != nullptr ? load3(g_p, i) : d3{0.0, 0.0, 0.0};
    const double cu0 = g_uv != nullptr ? (double)g_uv[2 * i] : 0.0;
    const double cu1 = g_uv != nullptr ? (double)g_uv[2 * i + 1] : 0.0;
    const d3 cb = g_bary != nullptr ? load3(g_bary, i) : d3{0.0, 0.0, 0.0};

    // gy = (ḡt + ḡp·d, ḡuv.x − ḡb.x + ḡb.y, ḡuv.y − ḡb.x + ḡb.z); λ = M⁻ᵀ·gy.
    const double gy0 = ct + dot(cp, rd);
    const double gy1 = cu0 - cb.x + cb.y;
    const double gy2 = cu1 - cb.x + cb.z;
    const d3 lam = scale(add(add(scale(bc, gy0), scale(ca, gy1)), scale(ab, gy2)), 1.0 / det);

    if (grad_o != nullptr) store3(grad_o, i, add(cp, lam));
    if (grad_d != nullptr) store3(grad_d, i, scale(add(lam, cp), ts));
    if (grad_vertices == nullptr) {
        return;
    }
    d3 dv0 = scale(lam, -b0), dv1 = scale(lam, -u), dv2 = scale(lam, -w);
    if (g_n != nullptr || g_geo_n != nullptr) {
        d3 gN{0.0, 0.0, 0.0};
        if (g_n != nullptr) gN = add(gN, load3(g_n, i));
        if (g_geo_n != nullptr) gN = add(gN, load3(g_geo_n, i));
        const double l = sqrt(fmax(dot(bc, bc), RAYD_NORMAL_FLOOR_D));
        const d3 nh = scale(bc, 1.0 / l);
        const d3 q = scale(sub(gN, scale(nh, dot(nh, gN))), 1.0 / l);
        const d3 g1 = cross(e2, q), g2 = cross(q, e1);
        dv1 = add(dv1, g1);
        dv2 = add(dv2, g2);
        dv0 = sub(dv0, add(g1, g2));
    }
    scatter(grad_vertices, i0, dv0);
    scatter(grad_vertices, i1, dv1);
    scatter(grad_vertices, i2, dv2);
}
