// crossings.cu: every triangle hit along a segment (the crossings query,
// package geom's Crossings). Each segment goes through the segment rule of
// spec §4.1 (segment_setup: origin start + 1e-5·dir, unit dir, tmax =
// max(L − 2e-5, 0)); the walk visits every BVH node whose box the interval
// [1e-5, tmax] enters — the box test of closest hit with its cap held at
// tmax, never narrowed — and runs the watertight test of rayd.cuh on every
// triangle of every leaf reached. Every accepted hit is counted; the K least
// by (t, global prim id) are kept in one thread's sorted array (registers
// for K = 8, local memory above), keyed by the 64-bit word
// (float bits of t) << 32 | prim: t ≥ 1e-5 is positive, so the unsigned
// order of its bits is the order of t. The host picks the smallest K ≥ k.
//
// Parameters (see trace.cu for nodes, tris, num_tris and counter):
//   start, end  float[3n]          segment end points
//   active      uint8[n] | null    0 ⇒ the miss row
//   k           int                slots per row (1 ≤ k ≤ K)
//   n           int
//   out_t       float[n·k]         t of the kept hits, ascending; +inf pads
//   out_prim    int[n·k]           their global prim ids; −1 pads
//   out_shape   int[n·k]           their shape (mesh) ids; −1 pads
//   out_count   int[n]             hits on the whole segment (may exceed k)
// Inactive rows, rows with a non-finite coordinate and degenerate segments
// are the miss row with count 0.
//
// The masked variants rayd_crossings<K>[_4]_masked take one more parameter,
//   face_mask   uint8[num_faces]   the visibility mask of every global face
// and count a face only when its mask is not 0 (segments carry the full ray
// mask 0xff, as in rayd_visible_masked). The host launches them only while
// a mesh mask differs from 0xff; the unmasked kernels instantiate
// MASKED = false and compile to the walk without the table.
#include "rayd.cuh"

using namespace rayd;

#define CROSS_THREADS 128
#define CROSS_EMPTY 0xffffffffffffffffull

namespace {

// Kept is the sorted array of the K least hits of one row and the count.
template <int K>
struct Kept {
    unsigned long long key[K];
    int shape[K];
    int count;

    __device__ __forceinline__ void clear() {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            key[j] = CROSS_EMPTY;
            shape[j] = -1;
        }
        count = 0;
    }

    // add counts a hit and inserts it when it is among the K least: one
    // compare-exchange per slot with static indices, so the array of a
    // small K stays in registers.
    __device__ __forceinline__ void add(float t, unsigned int prim, int shp) {
        ++count;
        unsigned long long kk = ((unsigned long long)__float_as_uint(t) << 32) | prim;
        if (kk >= key[K - 1]) return;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            bool sw = kk < key[j];
            unsigned long long tk = sw ? key[j] : kk;
            int ts = sw ? shape[j] : shp;
            key[j] = sw ? kk : key[j];
            shape[j] = sw ? shp : shape[j];
            kk = tk;
            shp = ts;
        }
    }
};

// cross_leaf tests every triangle of leaf ref over [tmin, tmax] (when
// MASKED, only those whose face mask is not 0).
template <int K, bool MASKED>
__device__ __forceinline__ void cross_leaf(const float4* __restrict__ tris, int ref, const Ray& r, float tmin,
                                           float tmax, const unsigned char* __restrict__ face_mask,
                                           Kept<K>& kept) {
    unsigned int payload = ~(unsigned int)ref;
    int first = (int)(payload >> RAYD_LEAF_COUNT_BITS);
    int end = first + (int)(payload & ((1u << RAYD_LEAF_COUNT_BITS) - 1u)) + 1;
    for (int s = first; s < end; ++s) {
        float4 p0 = __ldg(&tris[3 * s + 0]);
        if (MASKED && __ldg(&face_mask[__float_as_uint(p0.w)]) == 0) continue;
        float4 p1 = __ldg(&tris[3 * s + 1]);
        float4 p2 = __ldg(&tris[3 * s + 2]);
        float t, u, v;
        if (!watertight(r, p0, p1, p2, tmin, tmax, t, u, v)) continue;
        kept.add(t, __float_as_uint(p0.w), __float_as_int(p1.w));
    }
}

// walk2 is traverse (rayd.cuh) over child-pair nodes with the cap fixed at
// tmax and every leaf reached tested in full: no child order, no early exit.
template <int K, bool MASKED>
__device__ __forceinline__ void walk2(const float4* __restrict__ nodes, const float4* __restrict__ tris, const Ray& r,
                                      float tmin, float tmax, const unsigned char* __restrict__ face_mask,
                                      Kept<K>& kept) {
    int stack[RAYD_MAX_DEPTH + 1];
    int sp = 0;
    stack[0] = RAYD_STACK_SENTINEL;
    int node = 0;
    int leaf = 0;
    while (node != RAYD_STACK_SENTINEL) {
        while ((unsigned int)node < (unsigned int)RAYD_STACK_SENTINEL) {
            const float4* n = nodes + 4 * node;
            float4 n0 = node_load(n + 0);
            float4 n1 = node_load(n + 1);
            float4 n2 = node_load(n + 2);
            float4 n3 = node_load(n + 3);
            int2 refs = make_int2(__float_as_int(n3.x), __float_as_int(n3.y));
            float c0near, c0far, c1near, c1far;
            box_span(r, n0.x, n0.y, n0.z, n0.w, n2.x, n2.y, tmin, tmax, c0near, c0far);
            box_span(r, n1.x, n1.y, n1.z, n1.w, n2.z, n2.w, tmin, tmax, c1near, c1far);
            bool hit0 = c0near <= c0far;
            bool hit1 = c1near <= c1far;
            bool swap = hit1 && !hit0;
            int first = swap ? refs.y : refs.x;
            int second = swap ? refs.x : refs.y;
            int top = stack[sp];
            if (hit0 && hit1) stack[++sp] = second;
            bool any_hit = hit0 || hit1;
            node = any_hit ? first : top;
            sp -= any_hit ? 0 : 1;
            if (node < 0 && leaf >= 0) {
                leaf = node;
                node = stack[sp--];
            }
            if (!__any_sync(__activemask(), leaf >= 0)) break;
        }
        while (leaf < 0) {
            cross_leaf<K, MASKED>(tris, leaf, r, tmin, tmax, face_mask, kept);
            leaf = node;
            if (node < 0) node = stack[sp--];
        }
    }
}

// walk4 is traverse4 (rayd.cuh) over quad nodes with the cap fixed at tmax:
// every hit slot is visited; slots are taken in the node's order.
template <int K, bool MASKED>
__device__ __forceinline__ void walk4(const float4* __restrict__ nodes, const float4* __restrict__ tris, const Ray& r,
                                      float tmin, float tmax, const unsigned char* __restrict__ face_mask,
                                      Kept<K>& kept) {
    int stack[RAYD_QUAD_STACK];
    int sp = 0;
    stack[0] = RAYD_STACK_SENTINEL;
    int node = 0;
    int leaf = 0;
    while (node != RAYD_STACK_SENTINEL) {
        while ((unsigned int)node < (unsigned int)RAYD_STACK_SENTINEL) {
            const float4* n = nodes + 4 * node;
            float4 h = node_load(n + 0);
            float4 qa = node_load(n + 1);
            float4 qb = node_load(n + 2);
            float4 qc = node_load(n + 3);
            unsigned int meta = __float_as_uint(h.w);
            float sx = __fmul_rn(__uint_as_float((meta & 0xffu) << 23), r.ix);
            float sy = __fmul_rn(__uint_as_float(((meta >> 8) & 0xffu) << 23), r.iy);
            float sz = __fmul_rn(__uint_as_float(((meta >> 16) & 0xffu) << 23), r.iz);
            float blx = fmaf(h.x, r.ix, r.nlx), bhx = fmaf(h.x, r.ix, r.nhx);
            float bly = fmaf(h.y, r.iy, r.nly), bhy = fmaf(h.y, r.iy, r.nhy);
            float blz = fmaf(h.z, r.iz, r.nlz), bhz = fmaf(h.z, r.iz, r.nhz);
            unsigned int slots = meta >> 24;
            unsigned int qlx = __float_as_uint(qa.x), qhx = __float_as_uint(qa.y);
            unsigned int qly = __float_as_uint(qa.z), qhy = __float_as_uint(qa.w);
            unsigned int qlz = __float_as_uint(qb.x), qhz = __float_as_uint(qb.y);
            int ref[4] = {__float_as_int(qb.z), __float_as_int(qb.w), __float_as_int(qc.x), __float_as_int(qc.y)};
            bool hit[4];
#pragma unroll
            for (unsigned int c = 0; c < 4; ++c) {
                float ax = fmaf(byte_float(qlx, c), sx, blx), bx = fmaf(byte_float(qhx, c), sx, bhx);
                float ay = fmaf(byte_float(qly, c), sy, bly), by = fmaf(byte_float(qhy, c), sy, bhy);
                float az = fmaf(byte_float(qlz, c), sz, blz), bz = fmaf(byte_float(qhz, c), sz, bhz);
                float tnear = fmaxf(fmaxf(fminf(ax, bx), fminf(ay, by)), fmaxf(fminf(az, bz), tmin));
                float tfar = fminf(fminf(fmaxf(ax, bx), fmaxf(ay, by)), fminf(fmaxf(az, bz), tmax));
                hit[c] = c < slots && tnear <= tfar;
            }
            // Push the hit slots but the first, descend into the first.
            int top = stack[sp];
            int next = RAYD_STACK_SENTINEL;
            bool any_hit = false;
#pragma unroll
            for (int c = 3; c >= 0; --c) {
                if (!hit[c]) continue;
                if (any_hit) stack[++sp] = next;
                next = ref[c];
                any_hit = true;
            }
            node = any_hit ? next : top;
            sp -= any_hit ? 0 : 1;
            if (node < 0 && leaf >= 0) {
                leaf = node;
                node = stack[sp--];
            }
            if (!__any_sync(__activemask(), leaf >= 0)) break;
        }
        while (leaf < 0) {
            cross_leaf<K, MASKED>(tris, leaf, r, tmin, tmax, face_mask, kept);
            leaf = node;
            if (node < 0) node = stack[sp--];
        }
    }
}

template <int W, int K, bool MASKED = false>
__device__ __forceinline__ void crossings_kernel(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                                 int num_tris, const float* __restrict__ start,
                                                 const float* __restrict__ end,
                                                 const unsigned char* __restrict__ active, int k, int n,
                                                 float* __restrict__ out_t, int* __restrict__ out_prim,
                                                 int* __restrict__ out_shape, int* __restrict__ out_count,
                                                 unsigned int* counter,
                                                 const unsigned char* __restrict__ face_mask = nullptr) {
    for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
        long long i = base + (threadIdx.x & 31u);
        if (i >= n) continue;
        Kept<K> kept;
        kept.clear();
        float3 a = make_float3(start[3 * i], start[3 * i + 1], start[3 * i + 2]);
        float3 e = make_float3(end[3 * i], end[3 * i + 1], end[3 * i + 2]);
        Ray r;
        float tmax;
        if ((active == nullptr || active[i] != 0) && num_tris > 0 && finite3(a.x, a.y, a.z) &&
            finite3(e.x, e.y, e.z) && segment_setup(a, e, r, tmax)) {
            if (W == 2) walk2<K, MASKED>(nodes, tris, r, RAYD_MULTIPATH_TMIN, tmax, face_mask, kept);
            else walk4<K, MASKED>(nodes, tris, r, RAYD_MULTIPATH_TMIN, tmax, face_mask, kept);
        }
        long long o = i * k;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            if (j >= k) break;
            bool some = kept.key[j] != CROSS_EMPTY;
            out_t[o + j] = some ? __uint_as_float((unsigned int)(kept.key[j] >> 32)) : __int_as_float(0x7f800000);
            out_prim[o + j] = some ? (int)(unsigned int)kept.key[j] : -1;
            out_shape[o + j] = kept.shape[j];
        }
        out_count[i] = kept.count;
    }
}

}  // namespace

// Entry points: rayd_crossings<K> over child-pair nodes, rayd_crossings<K>_4
// over quad nodes, for K = 8, 16, 32, 64 (the host launches the smallest
// K ≥ k). Parameters as listed at the top of the file.
extern "C" {

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 8>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 16>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 32>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<2, 64>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 8>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 16>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 32>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter) {
    crossings_kernel<4, 64>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape, out_count,
                             counter);
}

// The masked variants: each entry above with face_mask appended (the
// host launches them only while a mesh mask differs from 0xff).

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 8, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 16, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 32, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<2, 64, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings8_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 8, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings16_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 16, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings32_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 32, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

__global__ void __launch_bounds__(CROSS_THREADS) rayd_crossings64_4_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int k, int n, float* __restrict__ out_t,
    int* __restrict__ out_prim, int* __restrict__ out_shape, int* __restrict__ out_count, unsigned int* counter,
    const unsigned char* __restrict__ face_mask) {
    crossings_kernel<4, 64, true>(nodes, tris, num_tris, start, end, active, k, n, out_t, out_prim, out_shape,
                                  out_count, counter, face_mask);
}

}  // extern "C"
