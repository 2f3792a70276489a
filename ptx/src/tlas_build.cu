// tlas_build.cu: the top level of an instance layer built on the device,
// word for word the host build's (accel/instance_tlas_build.go): instance
// boxes in float64 with accel's instanceBox operations in its order (no
// contraction: every product and sum is an explicit _rn intrinsic), rounded
// outward to float32; median splits on the longest centroid axis (the
// first on ties), the count/2 smallest items under (centroid on that axis,
// id) going to the first child; preorder node numbering; leaves of one
// instance; node boxes the float32 unions of their instances' boxes (−0
// ordered below +0).
//
// One block of TLAS_THREADS threads builds the whole tree (n ≤ TLAS_MAX):
// the instance ids are sorted once per axis by (centroid, id); every level
// then splits each range of its axis list at the middle and partitions the
// other two lists stably by the side each id went to, so every list stays
// sorted within every range. Centroid bounds are the ends of each list's
// range. Node boxes are filled bottom-up, level by level.
//
// rayd_tlas_build parameters:
//   inst   float4[6·n]        instance records (accel.InstanceRecordWords:
//                             T[0..11], Inv[0..8], geometry (int bits),
//                             mask, 0)
//   obj    double[9·geoms]    per geometry lo+hi, hi−lo, max(|lo|, |hi|)
//                             (3 each, accel's objectBox)
//   n      int                instances, 1 ≤ n ≤ TLAS_MAX (0: no work)
//   nodes  uint32[16·max(n−1, 1)] child-pair nodes (every word written)
//   order  int[n]             instance ids in leaf order
//   cent   double[3·n]        scratch: centroids (lo+hi per axis)
//   ibox   uint32[6·n]        scratch: instance boxes (lo xyz, hi xyz bits)
//
// rayd_tlas_round writes the outward float32 roundings of x (the bits of
// accel's down32 and up32) for n values; its check pins the intrinsics.

#define TLAS_THREADS 1024
#define TLAS_MAX 2048
#define TLAS_LEAF_BITS 3
#define TLAS_NODE_WORDS 16
#define TLAS_REC_WORDS 24
#define TLAS_PER_THREAD (TLAS_MAX / TLAS_THREADS)

namespace {

// Float32 union operands: min and max ordering −0 below +0 (Go's min/max;
// there are no NaNs among rounded instance boxes).
__device__ __forceinline__ float min0(float a, float b) {
    return (a < b || (a == b && signbit(a))) ? a : b;
}
__device__ __forceinline__ float max0(float a, float b) {
    return (a > b || (a == b && !signbit(a))) ? a : b;
}

// instance_box computes instance i's inflated world box (accel's
// instanceBox, operation for operation) and stores its centroid and its
// outward float32 rounding.
__device__ void instance_box(const float* __restrict__ inst, const double* __restrict__ obj, int i,
                             double* cent, unsigned int* ibox) {
    const float* r = inst + (long long)TLAS_REC_WORDS * i;
    const double* o = obj + 9LL * __float_as_int(r[21]);
    double lo[3], hi[3];
    double na = 0.0, ni = 0.0, tmag = 0.0, mag = 0.0;
#pragma unroll
    for (int k = 0; k < 3; k++) {
        double c = 0.0, e = 0.0, m = 0.0, ra = 0.0, ri = 0.0;
#pragma unroll
        for (int j = 0; j < 3; j++) {
            const double a = (double)r[4 * k + j];
            const double ab = fabs(a);
            c = __dadd_rn(c, __dmul_rn(__dmul_rn(a, o[j]), 0.5));       // a·sum/2
            e = __dadd_rn(e, __dmul_rn(__dmul_rn(ab, o[3 + j]), 0.5));   // |a|·diff/2
            m = __dadd_rn(m, __dmul_rn(ab, o[6 + j]));                   // |a|·amax
            ra = __dadd_rn(ra, ab);
            ri = __dadd_rn(ri, fabs((double)r[12 + 3 * k + j]));
        }
        const double t = (double)r[4 * k + 3];
        c = __dadd_rn(c, t);
        e = __dadd_rn(e, __dmul_rn(__dadd_rn(m, fabs(t)), 0x1p-48));
        lo[k] = __dsub_rn(c, e);
        hi[k] = __dadd_rn(c, e);
        na = fmax(na, ra);
        ni = fmax(ni, ri);
        tmag = fmax(tmag, fabs(t));
        mag = fmax(fmax(mag, fabs(lo[k])), fabs(hi[k]));
    }
    const double kappa = fmax(__dmul_rn(na, ni), 1.0);
    const double pad = __dadd_rn(__dmul_rn(__dmul_rn(0x1p-15, kappa), __dadd_rn(mag, tmag)), 0x1p-126);
#pragma unroll
    for (int k = 0; k < 3; k++) {
        lo[k] = __dsub_rn(lo[k], pad);
        hi[k] = __dadd_rn(hi[k], pad);
        cent[3LL * i + k] = __dadd_rn(lo[k], hi[k]);
        ibox[6LL * i + k] = __float_as_uint(__double2float_rd(lo[k]));
        ibox[6LL * i + 3 + k] = __float_as_uint(__double2float_ru(hi[k]));
    }
}

// Shared memory: the three axis lists, the sort buffer (reused as the
// partition's destination), the side of every id, and the partition's
// prefix counts per list.
struct TlasShared {
    unsigned short list[3][TLAS_MAX];
    union {
        struct {
            double key[TLAS_MAX];
            unsigned short id[TLAS_MAX];
        } sort;
        unsigned short tmp[3][TLAS_MAX];
    } u;
    unsigned short before[3][TLAS_MAX];  // exclusive prefix of the flags per list
    unsigned char flag[TLAS_MAX];        // by id: 1 = first child
    unsigned long long warp_sum[TLAS_THREADS / 32];
};

__device__ __forceinline__ bool item_less(double ka, unsigned ia, double kb, unsigned ib) {
    return ka < kb || (ka == kb && ia < ib);
}

// sort_axis writes the ids 0..n−1 ordered by (centroid on axis, id) into
// sh.list[axis] (bitonic sort over the next power of two, padded with
// +Inf keys that sort last).
__device__ void sort_axis(TlasShared& sh, const double* cent, int n, int axis) {
    int n2 = 2;
    while (n2 < n) n2 <<= 1;
    for (int p = threadIdx.x; p < n2; p += TLAS_THREADS) {
        sh.u.sort.key[p] = p < n ? cent[3LL * p + axis] : __longlong_as_double(0x7ff0000000000000LL);
        sh.u.sort.id[p] = (unsigned short)(p < n ? p : 0xffff);
    }
    __syncthreads();
    for (int k = 2; k <= n2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = threadIdx.x; t < n2 / 2; t += TLAS_THREADS) {
                const int i = ((t & ~(j - 1)) << 1) | (t & (j - 1));
                const int l = i + j;
                const double ki = sh.u.sort.key[i], kl = sh.u.sort.key[l];
                const unsigned ii = sh.u.sort.id[i], il = sh.u.sort.id[l];
                const bool up = (i & k) == 0;
                if (up ? item_less(kl, il, ki, ii) : item_less(ki, ii, kl, il)) {
                    sh.u.sort.key[i] = kl;
                    sh.u.sort.key[l] = ki;
                    sh.u.sort.id[i] = (unsigned short)il;
                    sh.u.sort.id[l] = (unsigned short)ii;
                }
            }
            __syncthreads();
        }
    }
    for (int p = threadIdx.x; p < n; p += TLAS_THREADS) sh.list[axis][p] = sh.u.sort.id[p];
    __syncthreads();
}

// block_exclusive_scan returns the exclusive prefix of v over the block's
// threads in thread order (three 16-bit counts per word never carry).
__device__ unsigned long long block_exclusive_scan(TlasShared& sh, unsigned long long v) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long incl = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned long long y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) sh.warp_sum[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        unsigned long long w = sh.warp_sum[lane], wi = w;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned long long y = __shfl_up_sync(0xffffffffu, wi, o);
            if (lane >= o) wi += y;
        }
        sh.warp_sum[lane] = wi - w;
    }
    __syncthreads();
    return sh.warp_sum[warp] + incl - v;
}

__device__ __forceinline__ void write_box(unsigned int* w, int c, const float lo[3], const float hi[3]) {
    w[4 * c + 0] = __float_as_uint(lo[0]);
    w[4 * c + 1] = __float_as_uint(hi[0]);
    w[4 * c + 2] = __float_as_uint(lo[1]);
    w[4 * c + 3] = __float_as_uint(hi[1]);
    w[8 + 2 * c] = __float_as_uint(lo[2]);
    w[9 + 2 * c] = __float_as_uint(hi[2]);
}

// child_box reads the box of a child range: an instance's box for a leaf,
// else the union of the child node's two slots (written at a deeper level).
__device__ __forceinline__ void child_box(const TlasShared& sh, const unsigned int* nodes,
                                          const unsigned int* ibox, int first, int count, int node,
                                          float lo[3], float hi[3]) {
    if (count == 1) {
        const int id = sh.list[0][first];
#pragma unroll
        for (int k = 0; k < 3; k++) {
            lo[k] = __uint_as_float(ibox[6 * id + k]);
            hi[k] = __uint_as_float(ibox[6 * id + 3 + k]);
        }
        return;
    }
    const unsigned int* w = nodes + (long long)TLAS_NODE_WORDS * node;
    lo[0] = min0(__uint_as_float(w[0]), __uint_as_float(w[4]));
    hi[0] = max0(__uint_as_float(w[1]), __uint_as_float(w[5]));
    lo[1] = min0(__uint_as_float(w[2]), __uint_as_float(w[6]));
    hi[1] = max0(__uint_as_float(w[3]), __uint_as_float(w[7]));
    lo[2] = min0(__uint_as_float(w[8]), __uint_as_float(w[10]));
    hi[2] = max0(__uint_as_float(w[9]), __uint_as_float(w[11]));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(TLAS_THREADS, 1)
rayd_tlas_build(const float* __restrict__ inst, const double* __restrict__ obj, int n, unsigned int* nodes,
                int* __restrict__ order, double* cent, unsigned int* ibox) {
    __shared__ TlasShared sh;
    if (n <= 0 || n > TLAS_MAX) return;
    for (int i = threadIdx.x; i < n; i += TLAS_THREADS) instance_box(inst, obj, i, cent, ibox);
    __syncthreads();
    if (n == 1) {  // the root repeats the one leaf in both slots
        if (threadIdx.x < TLAS_NODE_WORDS) {
            const int w = threadIdx.x;
            unsigned int v = 0u;
            if (w < 8) v = ibox[(w & 1) * 3 + ((w >> 1) & 1)];   // lo0 hi0 lo1 hi1, twice
            else if (w < 12) v = ibox[(w & 1) * 3 + 2];          // lo2 hi2, twice
            else if (w < 14) v = ~0u;                            // ^(0 << 3 | 0)
            nodes[w] = v;
        }
        if (threadIdx.x == 0) order[0] = 0;
        return;
    }
    for (int a = 0; a < 3; a++) sort_axis(sh, cent, n, a);

    // Each thread owns positions 2·tid and 2·tid+1 and the range (first,
    // count, node) holding each at the current level.
    int rf[TLAS_PER_THREAD], rc[TLAS_PER_THREAD], rn[TLAS_PER_THREAD], half[TLAS_PER_THREAD];
#pragma unroll
    for (int q = 0; q < TLAS_PER_THREAD; q++) {
        rf[q] = 0;
        rc[q] = (TLAS_PER_THREAD * (int)threadIdx.x + q) < n ? n : 0;
        rn[q] = 0;
    }
    int levels = 0;
    for (int widest = n; widest >= 2; widest -= widest / 2) {
        levels++;
        // Split: the axis of each range, the side of each id, the refs.
#pragma unroll
        for (int q = 0; q < TLAS_PER_THREAD; q++) {
            const int p = TLAS_PER_THREAD * threadIdx.x + q, f = rf[q], c = rc[q];
            half[q] = c / 2;
            if (c < 2) continue;
            // The longest centroid extent, the first axis on ties.
            const double e0 = __dsub_rn(cent[3LL * sh.list[0][f + c - 1]], cent[3LL * sh.list[0][f]]);
            const double e1 = __dsub_rn(cent[3LL * sh.list[1][f + c - 1] + 1], cent[3LL * sh.list[1][f] + 1]);
            const double e2 = __dsub_rn(cent[3LL * sh.list[2][f + c - 1] + 2], cent[3LL * sh.list[2][f] + 2]);
            int axis = 0;
            double best = e0;
            if (e1 > best) {
                axis = 1;
                best = e1;
            }
            if (e2 > best) axis = 2;
            sh.flag[sh.list[axis][p]] = (unsigned char)(p - f < half[q]);
            if (p == f) {
                const int h = half[q];
                unsigned int* w = nodes + (long long)TLAS_NODE_WORDS * rn[q];
                w[12] = h >= 2 ? (unsigned int)(rn[q] + 1) : ~((unsigned int)f << TLAS_LEAF_BITS);
                w[13] = c - h >= 2 ? (unsigned int)(rn[q] + h) : ~((unsigned int)(f + h) << TLAS_LEAF_BITS);
                w[14] = 0u;
                w[15] = 0u;
            }
        }
        __syncthreads();
        // Partition every list stably within every splitting range.
        unsigned long long v[TLAS_PER_THREAD], sum = 0;
#pragma unroll
        for (int q = 0; q < TLAS_PER_THREAD; q++) {
            const int p = TLAS_PER_THREAD * threadIdx.x + q;
            v[q] = 0;
            if (rc[q] >= 2) {
                v[q] = (unsigned long long)sh.flag[sh.list[0][p]] |
                       (unsigned long long)sh.flag[sh.list[1][p]] << 16 |
                       (unsigned long long)sh.flag[sh.list[2][p]] << 32;
            }
            sum += v[q];
        }
        unsigned long long ex = block_exclusive_scan(sh, sum);
#pragma unroll
        for (int q = 0; q < TLAS_PER_THREAD; q++) {
            const int p = TLAS_PER_THREAD * threadIdx.x + q;
            if (p < n) {
#pragma unroll
                for (int a = 0; a < 3; a++) sh.before[a][p] = (unsigned short)(ex >> (16 * a));
            }
            ex += v[q];
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < TLAS_PER_THREAD; q++) {
            const int p = TLAS_PER_THREAD * threadIdx.x + q, f = rf[q], c = rc[q], h = half[q];
            if (p >= n) continue;
#pragma unroll
            for (int a = 0; a < 3; a++) {
                const unsigned short id = sh.list[a][p];
                int np = p;
                if (c >= 2) {
                    const int b = sh.before[a][p] - sh.before[a][f];
                    np = sh.flag[id] ? f + b : f + h + (p - f - b);
                }
                sh.u.tmp[a][np] = id;
            }
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < TLAS_PER_THREAD; q++) {
            const int p = TLAS_PER_THREAD * threadIdx.x + q;
            if (p >= n) continue;
#pragma unroll
            for (int a = 0; a < 3; a++) sh.list[a][p] = sh.u.tmp[a][p];
            if (rc[q] >= 2) {  // the child range holding p
                if (p < rf[q] + half[q]) {
                    rc[q] = half[q];
                    rn[q] += 1;
                } else {
                    rf[q] += half[q];
                    rc[q] -= half[q];
                    rn[q] += half[q];
                }
            }
        }
        __syncthreads();
    }
    for (int p = threadIdx.x; p < n; p += TLAS_THREADS) order[p] = sh.list[0][p];

    // Node boxes, deepest level first: a node at depth d is the range that
    // starts at its first position after d splits.
    for (int d = levels - 1; d >= 0; d--) {
#pragma unroll
        for (int q = 0; q < TLAS_PER_THREAD; q++) {
            const int p = TLAS_PER_THREAD * threadIdx.x + q;
            if (p >= n) continue;
            int f = 0, c = n, ni = 0;
            for (int s = 0; s < d && c >= 2; s++) {
                const int h = c / 2;
                if (p < f + h) {
                    c = h;
                    ni += 1;
                } else {
                    f += h;
                    c -= h;
                    ni += h;
                }
            }
            if (c < 2 || p != f) continue;
            const int h = c / 2;
            float lo[3], hi[3];
            unsigned int* w = nodes + (long long)TLAS_NODE_WORDS * ni;
            child_box(sh, nodes, ibox, f, h, ni + 1, lo, hi);
            write_box(w, 0, lo, hi);
            child_box(sh, nodes, ibox, f + h, c - h, ni + h, lo, hi);
            write_box(w, 1, lo, hi);
        }
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(256)
rayd_tlas_round(const double* __restrict__ x, int n, unsigned int* __restrict__ down, unsigned int* __restrict__ up) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    down[i] = __float_as_uint(__double2float_rd(x[i]));
    up[i] = __float_as_uint(__double2float_ru(x[i]));
}
