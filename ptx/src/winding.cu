// winding.cu: the generalized winding number of the scene around each
// query point (ref.Scene.WindingSumsContext), by brute force over every
// face: O(rows × faces) solid angles, one thread per point, the faces
// staged through shared memory in tiles of WIND_THREADS (each thread of a
// block loads one face of the tile, so the vertex reads are shared by the
// block's points).
//
// Every operation is the reference's, in its order, with the rounding
// intrinsics (no contraction into fused multiply-adds): the vertices less
// the point in float64, the lengths by __dsqrt_rn, every product rounded
// before it is summed, the numerator a·(b×c) and the denominator
// ((|a||b|)|c| + (a·b)|c|) + (a·c)|b| + (b·c)|a|, the term 2·atan2(num,
// den), the terms added in global face order to a float64 sum. Only atan2
// differs from the host's math.Atan2: CUDA documents at most 2 ulp of
// error, the host's Cephes kernel about 1, so two results within 2^-42 of
// the true value each are within 2^-41 of each other and the two terms
// within TAU = 2^-40. The kernel carries a bound of the distance between
// its running sum and the reference's: per face
//   E ← E + TAU + 2^-51·(|sum| + E + TAU)
// (the difference of the inputs of the two additions plus the two
// roundings, each at most 2^-53 of its operand, with margin), so the
// reference sum lies within out_bound of out_sum. The host decides the sign
// from both (geom.WindingSign) and re-computes the rows the bound does not
// settle.
//
// Parameters:
//   vertices    float[3·num_verts] the scene's vertices (global order)
//   faces       int[3·num_faces]   global vertex indices per face
//   num_faces   int
//   points      float[3n]
//   active      uint8[n] | null    0 ⇒ NaN sum, bound 0
//   n           int
//   out_sum     double[n]          sum of the faces' solid angles (NaN for
//                                  an inactive or non-finite row)
//   out_bound   double[n]          bound of |out_sum − reference sum|
#include <math.h>

#define WIND_THREADS 128
#define WIND_TAU 0x1p-40
#define WIND_REL 0x1p-51

namespace {

__device__ __forceinline__ double dot3(double a0, double a1, double a2, double b0, double b1, double b2) {
    return __dadd_rn(__dadd_rn(__dmul_rn(a0, b0), __dmul_rn(a1, b1)), __dmul_rn(a2, b2));
}

// solid_angle is the signed solid angle of (a, b, c) seen from the origin,
// the reference's solidAngle operation for operation.
__device__ __forceinline__ double solid_angle(const double a[3], const double b[3], const double c[3]) {
    double la = __dsqrt_rn(dot3(a[0], a[1], a[2], a[0], a[1], a[2]));
    double lb = __dsqrt_rn(dot3(b[0], b[1], b[2], b[0], b[1], b[2]));
    double lc = __dsqrt_rn(dot3(c[0], c[1], c[2], c[0], c[1], c[2]));
    double bc0 = __dsub_rn(__dmul_rn(b[1], c[2]), __dmul_rn(b[2], c[1]));
    double bc1 = __dsub_rn(__dmul_rn(b[2], c[0]), __dmul_rn(b[0], c[2]));
    double bc2 = __dsub_rn(__dmul_rn(b[0], c[1]), __dmul_rn(b[1], c[0]));
    double num = dot3(a[0], a[1], a[2], bc0, bc1, bc2);
    double ab = dot3(a[0], a[1], a[2], b[0], b[1], b[2]);
    double ac = dot3(a[0], a[1], a[2], c[0], c[1], c[2]);
    double bcd = dot3(b[0], b[1], b[2], c[0], c[1], c[2]);
    double den = __dadd_rn(__dadd_rn(__dadd_rn(__dmul_rn(__dmul_rn(la, lb), lc), __dmul_rn(ab, lc)), __dmul_rn(ac, lb)),
                           __dmul_rn(bcd, la));
    return __dmul_rn(2.0, atan2(num, den));
}

}  // namespace

extern "C" {

// rayd_winding_sums: one thread per point, every face in global order.
__global__ void __launch_bounds__(WIND_THREADS) rayd_winding_sums(
    const float* __restrict__ vertices, const int* __restrict__ faces, int num_faces, const float* __restrict__ points,
    const unsigned char* __restrict__ active, int n, double* __restrict__ out_sum, double* __restrict__ out_bound) {
    __shared__ float tile[WIND_THREADS * 9];
    int i = blockIdx.x * WIND_THREADS + threadIdx.x;
    bool live = i < n;
    double p[3] = {0.0, 0.0, 0.0};
    if (live) {
        float px = points[3 * i], py = points[3 * i + 1], pz = points[3 * i + 2];
        live = (active == nullptr || active[i] != 0) && isfinite(px) && isfinite(py) && isfinite(pz);
        p[0] = (double)px;
        p[1] = (double)py;
        p[2] = (double)pz;
    }
    double sum = 0.0, bound = 0.0;
    for (int base = 0; base < num_faces; base += WIND_THREADS) {
        int f = base + (int)threadIdx.x;
        if (f < num_faces) {
            for (int v = 0; v < 3; ++v) {
                int g = faces[3 * f + v];
                tile[9 * threadIdx.x + 3 * v] = vertices[3 * g];
                tile[9 * threadIdx.x + 3 * v + 1] = vertices[3 * g + 1];
                tile[9 * threadIdx.x + 3 * v + 2] = vertices[3 * g + 2];
            }
        }
        __syncthreads();
        if (live) {
            int m = min(WIND_THREADS, num_faces - base);
            for (int j = 0; j < m; ++j) {
                const float* t = &tile[9 * j];
                double a[3], b[3], c[3];
                for (int k = 0; k < 3; ++k) {
                    a[k] = __dsub_rn((double)t[k], p[k]);
                    b[k] = __dsub_rn((double)t[3 + k], p[k]);
                    c[k] = __dsub_rn((double)t[6 + k], p[k]);
                }
                sum = __dadd_rn(sum, solid_angle(a, b, c));
                bound = bound + WIND_TAU + WIND_REL * (fabs(sum) + bound + WIND_TAU);
            }
        }
        __syncthreads();
    }
    if (i < n) {
        out_sum[i] = live ? sum : __longlong_as_double(0x7ff8000000000000ll);
        out_bound[i] = live ? bound : 0.0;
    }
}

}  // extern "C"
