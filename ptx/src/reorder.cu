// reorder.cu: ray reordering around a query (accel.Reorderer). The rays are
// sorted by a 32-bit key (direction octant, then the origin's Morton code),
// gathered into that order, queried, and the hit records scattered back to
// the caller's ray order.
//
// Launch order of one reordered intersect (one stream, no host
// synchronization in between):
//   memset box to 0xffffffff (9 words)
//   rayd_reorder_bounds      grid-stride, blockDim REORDER_THREADS
//   rayd_reorder_keys        one thread per ray
//   accel.RadixSort of (keys, vals)   (the build module's radix passes)
//   rayd_reorder_gather      one thread per sorted row
//   the intersect on the sorted rays (trace module)
//   rayd_reorder_scatter_hits  one thread per sorted row
//
// The key is the host's (benchmarks/geometry rayKey) bit for bit:
//   key = octant << 29 | morton30(cell(ox), cell(oy), cell(oz)) >> 1
// octant: bit 2 dx < 0, bit 1 dy < 0, bit 0 dz < 0 (−0 and NaN count as
// non-negative); cell(v) quantizes v into 1024 cells of the origins' box
// [lo, hi] on that axis in float64: t = (v − lo) / (hi − lo) · 1024 with
// round-to-nearest intrinsics (no contraction), 0 when !(hi > lo) or
// !(t > 0), else trunc(min(t, 1023)). A NaN origin coordinate makes the
// host's box NaN on its axis (Go's min and max propagate NaN), so every
// cell of that axis is 0; the bounds kernel records NaNs per axis for that.

#define REORDER_THREADS 256

// ordered maps a float's bits to an unsigned int whose order is the
// float's (non-NaN values; −0 below +0).
__device__ __forceinline__ unsigned int ordered(float f) {
    unsigned int b = __float_as_uint(f);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// unordered inverts ordered.
__device__ __forceinline__ float unordered(unsigned int u) {
    return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

// cell1024 is the host's cell: v quantized into 1024 cells of [lo, hi].
__device__ __forceinline__ unsigned int cell1024(float v, float lo, float hi, bool nan_axis) {
    if (nan_axis || !(hi > lo)) return 0u;
    const double t = __dmul_rn(__ddiv_rn(__dsub_rn((double)v, (double)lo), __dsub_rn((double)hi, (double)lo)), 1024.0);
    if (!(t > 0.0)) return 0u;
    return (unsigned int)fmin(t, 1023.0);
}

// spread10 spreads the low 10 bits of v to every third bit.
__device__ __forceinline__ unsigned int spread10(unsigned int v) {
    v &= 0x3ffu;
    v = (v | v << 16) & 0x030000ffu;
    v = (v | v << 8) & 0x0300f00fu;
    v = (v | v << 4) & 0x030c30c3u;
    v = (v | v << 2) & 0x09249249u;
    return v;
}

extern "C" {

// rayd_reorder_bounds(o, n, box): the origins' bounding box, reduced into
// box with atomicMin (the host sets all 9 words to 0xffffffff first).
//   o    float[3n]   origins
//   n    int
//   box  uint32[9]   (in/out) [0..2] ordered(min x, y, z); [3..5]
//                    ~ordered(max x, y, z); [6..8] 0 when the axis holds a
//                    NaN (NaNs take no part in the min and max)
// blockDim.x must be REORDER_THREADS; any grid (grid-stride over rows).
__global__ void __launch_bounds__(REORDER_THREADS) rayd_reorder_bounds(const float* __restrict__ o, int n,
                                                                       unsigned int* __restrict__ box) {
    __shared__ unsigned int s_box[9];
    if (threadIdx.x < 9) s_box[threadIdx.x] = 0xffffffffu;
    __syncthreads();
    unsigned int m[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) m[k] = 0xffffffffu;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const float v = o[3 * i + k];
            if (v != v) {
                m[6 + k] = 0u;
                continue;
            }
            const unsigned int u = ordered(v);
            m[k] = min(m[k], u);
            m[3 + k] = min(m[3 + k], ~u);
        }
    }
#pragma unroll
    for (int k = 0; k < 9; ++k) {
        unsigned int v = m[k];
        for (int off = 16; off > 0; off >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, off));
        m[k] = v;
    }
    if ((threadIdx.x & 31) == 0) {
#pragma unroll
        for (int k = 0; k < 9; ++k)
            if (m[k] != 0xffffffffu) atomicMin(&s_box[k], m[k]);
    }
    __syncthreads();
    if (threadIdx.x < 9 && s_box[threadIdx.x] != 0xffffffffu) atomicMin(&box[threadIdx.x], s_box[threadIdx.x]);
}

// rayd_reorder_keys(o, d, n, box, keys, vals): the sort key of each ray
// (see the file comment) in the box rayd_reorder_bounds reduced, and its
// row number.
//   o, d   float[3n]        origins, directions
//   n      int
//   box    uint32[9]        rayd_reorder_bounds' result
//   keys   uint32[n] (out)
//   vals   uint32[n] (out)  vals[i] = i
// One thread per ray, blockDim.x REORDER_THREADS.
__global__ void __launch_bounds__(REORDER_THREADS) rayd_reorder_keys(const float* __restrict__ o,
                                                                     const float* __restrict__ d, int n,
                                                                     const unsigned int* __restrict__ box,
                                                                     unsigned int* __restrict__ keys,
                                                                     unsigned int* __restrict__ vals) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int c[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        // An axis holding a NaN has every cell 0 (the host's box is NaN
        // there); box[k] keeps 0xffffffff, which no non-NaN value encodes,
        // only when every origin of the axis is NaN.
        const float lo = unordered(box[k]), hi = unordered(~box[3 + k]);
        c[k] = cell1024(o[3 * i + k], lo, hi, box[6 + k] == 0u || box[k] == 0xffffffffu);
    }
    const unsigned int morton = spread10(c[0]) << 2 | spread10(c[1]) << 1 | spread10(c[2]);
    const float dx = d[3 * i], dy = d[3 * i + 1], dz = d[3 * i + 2];
    const unsigned int oct = (dx < 0.0f ? 4u : 0u) | (dy < 0.0f ? 2u : 0u) | (dz < 0.0f ? 1u : 0u);
    keys[i] = oct << 29 | morton >> 1;
    vals[i] = (unsigned int)i;
}

// rayd_reorder_gather(perm, n, o, d, tmax, active, tmin, mask, so, sd,
// stmax, sactive, stmin, smask): row j of the sorted rays is row perm[j]
// of the caller's.
//   perm                    uint32[n]  a permutation of 0..n−1
//   o, d                    float[3n]
//   tmax, tmin              float[n] | null   (null: not gathered)
//   active, mask            uint8[n] | null
//   so, sd                  float[3n] (out)
//   stmax, stmin            float[n] | null (out; null where the source is)
//   sactive, smask          uint8[n] | null (out)
// One thread per sorted row, blockDim.x REORDER_THREADS.
__global__ void __launch_bounds__(REORDER_THREADS) rayd_reorder_gather(
    const unsigned int* __restrict__ perm, int n, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, const float* __restrict__ tmin,
    const unsigned char* __restrict__ mask, float* __restrict__ so, float* __restrict__ sd,
    float* __restrict__ stmax, unsigned char* __restrict__ sactive, float* __restrict__ stmin,
    unsigned char* __restrict__ smask) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const long long i = perm[j];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        so[3 * j + k] = o[3 * i + k];
        sd[3 * j + k] = d[3 * i + k];
    }
    if (tmax != nullptr) stmax[j] = tmax[i];
    if (active != nullptr) sactive[j] = active[i];
    if (tmin != nullptr) stmin[j] = tmin[i];
    if (mask != nullptr) smask[j] = mask[i];
}

// rayd_reorder_scatter_hits(perm, n, st, sp, sn, sgeo_n, suv, sbary,
// sshape, sprim, slocal, sglobal, t, p, nrm, geo_n, uv, bary, shape, prim,
// local, global): row perm[j] of each output column is row j of its sorted
// column; a column whose sorted source is null is skipped (its output is
// then null too).
//   perm                         uint32[n]  the permutation of the gather
//   st, t                        float[n]
//   sp, sn, sgeo_n, sbary and p, nrm, geo_n, bary   float[3n] | null
//   suv, uv                      float[2n] | null
//   sshape, sprim, slocal, sglobal and shape, prim, local, global  int[n] | null
// One thread per sorted row (coalesced reads, scattered writes), blockDim.x
// REORDER_THREADS.
__global__ void __launch_bounds__(REORDER_THREADS) rayd_reorder_scatter_hits(
    const unsigned int* __restrict__ perm, int n, const float* __restrict__ st, const float* __restrict__ sp,
    const float* __restrict__ sn, const float* __restrict__ sgeo_n, const float* __restrict__ suv,
    const float* __restrict__ sbary, const int* __restrict__ sshape, const int* __restrict__ sprim,
    const int* __restrict__ slocal, const int* __restrict__ sglobal, float* __restrict__ t, float* __restrict__ p,
    float* __restrict__ nrm, float* __restrict__ geo_n, float* __restrict__ uv, float* __restrict__ bary,
    int* __restrict__ shape, int* __restrict__ prim, int* __restrict__ local, int* __restrict__ global) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const long long i = perm[j];
    t[i] = st[j];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        if (sp != nullptr) p[3 * i + k] = sp[3 * j + k];
        if (sn != nullptr) nrm[3 * i + k] = sn[3 * j + k];
        if (sgeo_n != nullptr) geo_n[3 * i + k] = sgeo_n[3 * j + k];
        if (sbary != nullptr) bary[3 * i + k] = sbary[3 * j + k];
    }
    if (suv != nullptr) {
        uv[2 * i] = suv[2 * j];
        uv[2 * i + 1] = suv[2 * j + 1];
    }
    if (sshape != nullptr) shape[i] = sshape[j];
    if (sprim != nullptr) prim[i] = sprim[j];
    if (slocal != nullptr) local[i] = slocal[j];
    if (sglobal != nullptr) global[i] = sglobal[j];
}

}  // extern "C"
