// closest.cu: the closest-point query over the triangle BVH (trace.cu's
// layout, child-pair or quad nodes): for every query point, the face whose
// float64 squared distance d² (closest_math.cuh, the CPU reference's
// closestOnTriangle bit for bit) is least among the faces with d² ≤ limit,
// ties at equal d² to the lowest global face id.
//
// Pruning. A node (or a triangle, by its vertex box) is skipped when a
// float32 lower bound L of the squared distance from the point to its box
// exceeds thr = ru32(best·(1 + 1e-9) + max(1e-12·M², 2^-1074)), M the larger
// of the scene's magnitude (the largest |coordinate| of the root's child
// boxes, which contain every face) and of the point's: the margins of the
// reference walk (ref/closest.go), which no face that could win or tie is
// ever outside. L is computed with directed rounding (every box plane
// rounded outward, every gap, square and sum rounded down), so it never
// exceeds the exact squared distance to the stored box, which contains the
// face's box; a quad slot's planes origin + q·s are formed by one fma
// rounded outward. So the walk keeps every face a brute-force scan could
// pick, and returns its record bit for bit.
//
// Parameters (see trace.cu for nodes, tris, num_tris and counter):
//   points      float[3n]
//   active      uint8[n] | null    0 ⇒ the miss record
//   n           int
//   limit_bits  u64                float64 bits of the squared distance
//                                  bound (+Inf: unbounded)
//   out_dist    float[n]           √d² rounded once (+Inf on a miss)
//   out_point   float[3n]          closest point (0 on a miss)
//   out_bary    float[3n]          weights of v0, v1, v2 (0 on a miss)
//   out_shape, out_local, out_gid int[n]  mesh, local and global face id
//                                  (−1 on a miss)
#include "rayd.cuh"
#include "closest_math.cuh"

using namespace rayd;
using namespace rayd_closest;

#define CLOSEST_THREADS 128
#define CLOSEST_SLACK 1e-9
#define CLOSEST_ABS 1e-12
#define CLOSEST_STACK (RAYD_QUAD_STACK + 4)
#define NO_FACE 0xffffffffu

namespace {

// gap2 adds the squared gap of one axis, rounded down, to acc.
__device__ __forceinline__ float gap2(float p, float lo, float hi, float acc) {
    float g = fmaxf(fmaxf(__fsub_rd(lo, p), __fsub_rd(p, hi)), 0.0f);
    return __fadd_rd(acc, __fmul_rd(g, g));
}

__device__ __forceinline__ float box_lower(float px, float py, float pz, float lox, float hix, float loy, float hiy,
                                           float loz, float hiz) {
    return gap2(pz, loz, hiz, gap2(py, loy, hiy, gap2(px, lox, hix, 0.0f)));
}

// Near is the running answer of one row: the best d², its global face
// id (NO_FACE before the first) and its triangle slot.
struct Near {
    double d2;
    unsigned int face;
    int slot;
};

// threshold is thr of the header for the best squared distance.
__device__ __forceinline__ float threshold(double best, double abs_) {
    return __double2float_ru(__dadd_ru(__dmul_ru(best, 1.0 + CLOSEST_SLACK), abs_));
}

// scene_mag is the largest |coordinate| of the root's child boxes.
template <int W>
__device__ __forceinline__ double scene_mag(const float4* __restrict__ nodes) {
    float4 n0 = __ldg(nodes + 0), n1 = __ldg(nodes + 1), n2 = __ldg(nodes + 2);
    if (W == 2) {
        float m = fmaxf(fmaxf(fmaxf(fabsf(n0.x), fabsf(n0.y)), fmaxf(fabsf(n0.z), fabsf(n0.w))),
                        fmaxf(fmaxf(fabsf(n1.x), fabsf(n1.y)), fmaxf(fabsf(n1.z), fabsf(n1.w))));
        return (double)fmaxf(m, fmaxf(fmaxf(fabsf(n2.x), fabsf(n2.y)), fmaxf(fabsf(n2.z), fabsf(n2.w))));
    }
    unsigned int meta = __float_as_uint(n0.w);
    double m = 0.0;
    double o[3] = {(double)n0.x, (double)n0.y, (double)n0.z};
#pragma unroll
    for (int a = 0; a < 3; ++a) {
        double s = (double)__uint_as_float(((meta >> (8 * a)) & 0xffu) << 23);
        m = fmax(m, fmax(fabs(o[a]), fabs(o[a] + 256.0 * s)));
    }
    return m;
}

// test_leaf runs the float64 closest point over the triangles of leaf ref.
__device__ __forceinline__ void test_leaf(const float4* __restrict__ tris, int ref, d3 p, float px, float py, float pz,
                                          double abs_, Near& b, float& thr) {
    unsigned int payload = ~(unsigned int)ref;
    int first = (int)(payload >> RAYD_LEAF_COUNT_BITS);
    int end = first + (int)(payload & ((1u << RAYD_LEAF_COUNT_BITS) - 1u)) + 1;
    for (int k = first; k < end; ++k) {
        float4 a = __ldg(&tris[3 * k + 0]);
        float4 bb = __ldg(&tris[3 * k + 1]);
        float4 c = __ldg(&tris[3 * k + 2]);
        float lb = box_lower(px, py, pz, fminf(fminf(a.x, bb.x), c.x), fmaxf(fmaxf(a.x, bb.x), c.x),
                             fminf(fminf(a.y, bb.y), c.y), fmaxf(fmaxf(a.y, bb.y), c.y), fminf(fminf(a.z, bb.z), c.z),
                             fmaxf(fmaxf(a.z, bb.z), c.z));
        if (lb > thr) continue;
        double d2 = closest_on_triangle(p, widen(a), widen(bb), widen(c)).d2;
        unsigned int face = __float_as_uint(a.w);
        if (d2 < b.d2 || (d2 == b.d2 && face < b.face)) {
            b.d2 = d2;
            b.face = face;
            b.slot = k;
            thr = threshold(d2, abs_);
        }
    }
}

// Child bounds of one node: up to four (ref, lower bound) pairs sorted by
// bound; an unused quad slot has a NaN bound (sorted last, never kept).
template <int W>
__device__ __forceinline__ int children(const float4* __restrict__ nodes, int node, float px, float py, float pz,
                                        int ref[4], float key[4]) {
    const float4* n = nodes + 4 * node;
    float4 n0 = node_load(n + 0), n1 = node_load(n + 1), n2 = node_load(n + 2), n3 = node_load(n + 3);
    if (W == 2) {
        float k0 = box_lower(px, py, pz, n0.x, n0.y, n0.z, n0.w, n2.x, n2.y);
        float k1 = box_lower(px, py, pz, n1.x, n1.y, n1.z, n1.w, n2.z, n2.w);
        int r0 = __float_as_int(n3.x), r1 = __float_as_int(n3.y);
        bool sw = k1 < k0;
        ref[0] = sw ? r1 : r0; key[0] = sw ? k1 : k0;
        ref[1] = sw ? r0 : r1; key[1] = sw ? k0 : k1;
        return 2;
    }
    unsigned int meta = __float_as_uint(n0.w);
    float sx = __uint_as_float((meta & 0xffu) << 23);
    float sy = __uint_as_float(((meta >> 8) & 0xffu) << 23);
    float sz = __uint_as_float(((meta >> 16) & 0xffu) << 23);
    unsigned int slots = meta >> 24;
    unsigned int qlx = __float_as_uint(n1.x), qhx = __float_as_uint(n1.y);
    unsigned int qly = __float_as_uint(n1.z), qhy = __float_as_uint(n1.w);
    unsigned int qlz = __float_as_uint(n2.x), qhz = __float_as_uint(n2.y);
    ref[0] = __float_as_int(n2.z); ref[1] = __float_as_int(n2.w);
    ref[2] = __float_as_int(n3.x); ref[3] = __float_as_int(n3.y);
    unsigned int k[4];
#pragma unroll
    for (unsigned int c = 0; c < 4; ++c) {
        float lb = box_lower(px, py, pz, __fmaf_rd(byte_float(qlx, c), sx, n0.x), __fmaf_ru(byte_float(qhx, c), sx, n0.x),
                             __fmaf_rd(byte_float(qly, c), sy, n0.y), __fmaf_ru(byte_float(qhy, c), sy, n0.y),
                             __fmaf_rd(byte_float(qlz, c), sz, n0.z), __fmaf_ru(byte_float(qhz, c), sz, n0.z));
        k[c] = c < slots ? __float_as_uint(lb) : 0x7fc00000u;  // NaN: unused slot, never kept, sorted last
    }
    cas(k[0], ref[0], k[1], ref[1]);
    cas(k[2], ref[2], k[3], ref[3]);
    cas(k[0], ref[0], k[2], ref[2]);
    cas(k[1], ref[1], k[3], ref[3]);
    cas(k[1], ref[1], k[2], ref[2]);
#pragma unroll
    for (int c = 0; c < 4; ++c) key[c] = __uint_as_float(k[c]);
    return 4;
}

struct Entry {
    int ref;
    float key;
};

// nearest walks the tree (W = 2, 4) or scans every slot (W = 0).
template <int W>
__device__ __forceinline__ void nearest(const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
                                        d3 p, float px, float py, float pz, double abs_, Near& b, float& thr) {
    if (W == 0) {
        for (int k = 0; k < num_tris; ++k) test_leaf(tris, ~(k << RAYD_LEAF_COUNT_BITS), p, px, py, pz, abs_, b, thr);
        return;
    }
    Entry stack[CLOSEST_STACK];
    int sp = 0;
    int cur = 0;  // the root node
    for (;;) {
        if (cur >= 0) {
            int ref[4];
            float key[4];
            int m = children<W>(nodes, cur, px, py, pz, ref, key);
#pragma unroll
            for (int c = 3; c >= 1; --c) {
                if (c < m && key[c] <= thr) stack[sp++] = Entry{ref[c], key[c]};
            }
            if (key[0] <= thr) {
                cur = ref[0];
                continue;
            }
        } else {
            test_leaf(tris, cur, p, px, py, pz, abs_, b, thr);
        }
        bool more = false;
        while (sp > 0) {
            Entry e = stack[--sp];
            if (e.key <= thr) {  // still possibly within the bound
                cur = e.ref;
                more = true;
                break;
            }
        }
        if (!more) return;
    }
}

template <int W>
__device__ __forceinline__ void closest_kernel(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                               int num_tris, const float* __restrict__ points,
                                               const unsigned char* __restrict__ active, int n,
                                               unsigned long long limit_bits, float* __restrict__ out_dist,
                                               float* __restrict__ out_point, float* __restrict__ out_bary,
                                               int* __restrict__ out_shape, int* __restrict__ out_local,
                                               int* __restrict__ out_gid, unsigned int* counter) {
    double limit = __longlong_as_double((long long)limit_bits);
    double mag = (W == 0 || n <= 0 || num_tris <= 0) ? 0.0 : scene_mag<W>(nodes);  // no node read without work
    for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
        long long i = base + (threadIdx.x & 31u);
        if (i >= n) continue;
        float px = points[3 * i], py = points[3 * i + 1], pz = points[3 * i + 2];
        Near b;
        b.d2 = limit;
        b.face = NO_FACE;
        b.slot = -1;
        if ((active == nullptr || active[i] != 0) && num_tris > 0 && finite3(px, py, pz)) {
            double m = fmax(mag, (double)fmaxf(fmaxf(fabsf(px), fabsf(py)), fabsf(pz)));
            double abs_ = fmax(CLOSEST_ABS * m * m, 4.9406564584124654e-324);
            if (W == 0) abs_ = INFINITY;  // no pruning
            float thr = threshold(limit, abs_);
            d3 p = mk(px, py, pz);
            nearest<W>(nodes, tris, num_tris, p, px, py, pz, abs_, b, thr);
        }
        if (b.face == NO_FACE) {
            out_dist[i] = INFINITY;
            out_point[3 * i] = 0.0f; out_point[3 * i + 1] = 0.0f; out_point[3 * i + 2] = 0.0f;
            out_bary[3 * i] = 0.0f; out_bary[3 * i + 1] = 0.0f; out_bary[3 * i + 2] = 0.0f;
            out_shape[i] = -1; out_local[i] = -1; out_gid[i] = -1;
            continue;
        }
        float4 a = __ldg(&tris[3 * b.slot + 0]);
        float4 bb = __ldg(&tris[3 * b.slot + 1]);
        float4 c = __ldg(&tris[3 * b.slot + 2]);
        TriPoint t = closest_on_triangle(mk(px, py, pz), widen(a), widen(bb), widen(c));
        out_dist[i] = __double2float_rn(__dsqrt_rn(t.d2));
        out_point[3 * i] = __double2float_rn(t.q.x);
        out_point[3 * i + 1] = __double2float_rn(t.q.y);
        out_point[3 * i + 2] = __double2float_rn(t.q.z);
        out_bary[3 * i] = __double2float_rn(t.b0);
        out_bary[3 * i + 1] = __double2float_rn(t.b1);
        out_bary[3 * i + 2] = __double2float_rn(t.b2);
        out_gid[i] = (int)b.face;
        out_shape[i] = __float_as_int(bb.w);
        out_local[i] = __float_as_int(c.w);
    }
}

}  // namespace

#define CLOSEST_ARGS \
    nodes, tris, num_tris, points, active, n, limit_bits, out_dist, out_point, out_bary, out_shape, out_local, out_gid, counter

extern "C" {

// rayd_closest_point: over child-pair nodes.
__global__ void __launch_bounds__(CLOSEST_THREADS) rayd_closest_point(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ points,
    const unsigned char* __restrict__ active, int n, unsigned long long limit_bits, float* __restrict__ out_dist,
    float* __restrict__ out_point, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_local, int* __restrict__ out_gid, unsigned int* counter) {
    closest_kernel<2>(CLOSEST_ARGS);
}

// rayd_closest_point4: over quad nodes (same parameters).
__global__ void __launch_bounds__(CLOSEST_THREADS) rayd_closest_point4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ points,
    const unsigned char* __restrict__ active, int n, unsigned long long limit_bits, float* __restrict__ out_dist,
    float* __restrict__ out_point, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_local, int* __restrict__ out_gid, unsigned int* counter) {
    closest_kernel<4>(CLOSEST_ARGS);
}

// rayd_closest_point_brute: every triangle slot for every row (tests).
__global__ void __launch_bounds__(CLOSEST_THREADS) rayd_closest_point_brute(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ points,
    const unsigned char* __restrict__ active, int n, unsigned long long limit_bits, float* __restrict__ out_dist,
    float* __restrict__ out_point, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_local, int* __restrict__ out_gid, unsigned int* counter) {
    closest_kernel<0>(CLOSEST_ARGS);
}

}  // extern "C"
