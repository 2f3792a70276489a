// bvh_build.cu: GPU build and refit of the triangle BVH (Karras LBVH with an
// SAH leaf collapse) in the traversal layout of rayd.cuh.
//
// Launch order of a build (one stream, no host synchronization in between;
// the host mirror accel.BuildHost produces the same layout bit for bit):
//   rayd_bvh_init            <<<1, 32>>>
//   rayd_bvh_face_bounds     one thread per face (blockDim 256)
//   rayd_bvh_morton          one thread per face
//   4 radix passes (shift 0, 8, 16, 24), ping-pong between two key/value pairs:
//     rayd_radix_hist        one block of 256 per 4096-key tile
//     rayd_scan_tiles        over the 256·tiles digit-major histogram (in place)
//     rayd_scan_sums         <<<1, 1024>>>
//     rayd_radix_scatter     one block of 256 per tile
//   rayd_bvh_karras          one thread per internal node (at least one thread)
//   rayd_bvh_bottom_up       one thread per leaf
//   rayd_bvh_mark, rayd_scan_tiles, rayd_scan_sums   (n ≥ 2 only)
//   rayd_bvh_emit            one thread per internal node (at least one thread)
//   (quad layout: rayd_bvh_mark_quad and rayd_bvh_emit_quad instead; wide
//   layout: rayd_bvh_slots_wide one thread per internal node (n ≥ 2),
//   rayd_bvh_collapse_wide <<<1, 1024>>>, rayd_bvh_emit_wide one thread per
//   possible wide node, then rayd_bvh_write_tris with the reordered prim
//   ids; helpers in bvh_wide.cuh)
//   rayd_bvh_write_tris      one thread per triangle
// A refit re-runs face_bounds (status null), write_tris, bottom_up (refit 1,
// counters zeroed by the host) and emit on the kept tree.
//
// Node numbering of the radix tree: internal nodes 0..n−2 (root 0), leaf k
// (k-th sorted primitive) is node n−1+k. Per-node arrays: box float[6]
// (lo.xyz hi.xyz), cost float, info int = height << 1 | leaf choice.
#include "rayd.cuh"

using namespace rayd;

#define RADIX_THREADS 256
#define RADIX_WARPS 8
#define RADIX_ITEMS 16
#define RADIX_TILE 4096
#define SCAN_THREADS 256
#define SCAN_ITEMS 8
#define SCAN_TILE 2048

namespace {

__device__ __forceinline__ float half_area(float lx, float ly, float lz, float hx, float hy, float hz) {
    float dx = __fsub_rn(hx, lx), dy = __fsub_rn(hy, ly), dz = __fsub_rn(hz, lz);
    return __fadd_rn(__fadd_rn(__fmul_rn(dx, dy), __fmul_rn(dy, dz)), __fmul_rn(dz, dx));
}

__device__ __forceinline__ unsigned int expand_bits(unsigned int v) {
    v = (v * 0x00010001u) & 0xFF0000FFu;
    v = (v * 0x00000101u) & 0x0F00F00Fu;
    v = (v * 0x00000011u) & 0xC30C30C3u;
    v = (v * 0x00000005u) & 0x49249249u;
    return v;
}

__device__ __forceinline__ unsigned int morton_quantize(float x, float mn, float mx) {
    float ext = __fsub_rn(mx, mn);
    float u = 0.5f;
    if (ext > 0.0f) u = __fdiv_rn(__fsub_rn(x, mn), ext);
    if (!(u >= 0.0f)) u = 0.0f;
    if (u > 1.0f) u = 1.0f;
    return (unsigned int)floorf(__fmul_rn(u, 1023.0f));
}

// Karras δ: common prefix of sorted keys i and j (index tie-break), −1 out of range.
__device__ __forceinline__ int karras_delta(const unsigned int* __restrict__ keys, int n, int i, unsigned int ki, int j) {
    if (j < 0 || j >= n) return -1;
    unsigned int kj = keys[j];
    if (ki == kj) return 32 + __clz((unsigned int)(i ^ j));
    return __clz(ki ^ kj);
}

// Block-wide exclusive scan of one value per thread (blockDim.x = 32·warps,
// warps ≤ 32); returns the exclusive prefix and the block total.
template <int THREADS>
__device__ __forceinline__ unsigned int block_exclusive_scan(unsigned int v, unsigned int* s_warp, unsigned int& total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned int x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        unsigned int y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned int w = lane < THREADS / 32 ? s_warp[lane] : 0u;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            unsigned int y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        if (lane < THREADS / 32) s_warp[lane] = w;  // inclusive warp totals
    }
    __syncthreads();
    total = s_warp[THREADS / 32 - 1];
    unsigned int before = warp > 0 ? s_warp[warp - 1] : 0u;
    __syncthreads();  // s_warp may be reused by the caller
    return before + x - v;
}

// Tile prefix of element i of a scanned array: local exclusive value plus the
// scanned tile sum.
__device__ __forceinline__ unsigned int scanned(const unsigned int* __restrict__ local, const unsigned int* __restrict__ sums,
                                                long long i) {
    return local[i] + sums[i / SCAN_TILE];
}

// Inflated (stored) box: each side moved out by max(2^-18·m, 2^-126), m the
// largest |coordinate| taken in the order lo.xyz, hi.xyz.
__device__ __forceinline__ void inflate(const float* b, float* lo, float* hi) {
    float m = 0.0f;
#pragma unroll
    for (int c = 0; c < 6; ++c) m = max2(m, fabsf(b[c]));
    float d = max2(__fmul_rn(m, RAYD_INFLATE_SCALE), RAYD_INFLATE_FLOOR);
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        lo[c] = __fsub_rn(b[c], d);
        hi[c] = __fadd_rn(b[3 + c], d);
    }
}

__device__ __forceinline__ int leaf_ref(int first, int count) {
    return ~((first << RAYD_LEAF_COUNT_BITS) | (count - 1));
}

// emitted: internal node i becomes a child-pair node (root always; otherwise
// when neither it nor an ancestor chose to be a leaf).
__device__ __forceinline__ bool emitted(int i, const int* __restrict__ parent, const int* __restrict__ count,
                                        const int* __restrict__ info, int max_leaf) {
    if (i == 0) return true;
    if (info[i] & 1) return false;
    for (int a = parent[i]; a > 0 && count[a] <= max_leaf; a = parent[a]) {
        if (info[a] & 1) return false;
    }
    return true;
}

__device__ __forceinline__ void write_node(float4* __restrict__ nodes, int idx, const float* lo0, const float* hi0,
                                           const float* lo1, const float* hi1, int ref0, int ref1) {
    float4* n = nodes + 4 * (long long)idx;
    n[0] = make_float4(lo0[0], hi0[0], lo0[1], hi0[1]);
    n[1] = make_float4(lo1[0], hi1[0], lo1[1], hi1[1]);
    n[2] = make_float4(lo0[2], hi0[2], lo1[2], hi1[2]);
    n[3] = make_float4(__int_as_float(ref0), __int_as_float(ref1), 0.0f, 0.0f);
}


// Quad quantization (accel/hostquad.go): biased exponent byte of the step of
// an axis extent: the smallest power of two s with 254·s ≥ ext, ≥ 2^-126.
__device__ __forceinline__ unsigned int quad_step(double ext) {
    double target = __ddiv_rn(ext, 254.0);
    int k = -126;
    if (target > 0.0) {
        unsigned long long b = (unsigned long long)__double_as_longlong(target);
        int ef = (int)((b >> 52) & 0x7ffull);
        if (ef != 0) {
            k = ef - 1023;
            if (b & ((1ull << 52) - 1ull)) k += 1;
        }
    }
    k = min(max(k, -126), 127);
    return (unsigned int)(k + 127);
}

__device__ __forceinline__ unsigned int quad_clamp(double q) {
    return q < 0.0 ? 0u : (q > 255.0 ? 255u : (unsigned int)q);
}

// leafish: radix-tree node c is a leaf of the collapsed tree.
__device__ __forceinline__ bool leafish(int c, int n, const int* __restrict__ info) {
    return c >= n - 1 || (info[c] & 1);
}

__device__ __forceinline__ int leaf_ref_of(int c, int n, const int* __restrict__ first, const int* __restrict__ count) {
    return c >= n - 1 ? leaf_ref(c - (n - 1), 1) : leaf_ref(first[c], count[c]);
}

// write_quad quantizes up to four inflated slot boxes and writes quad node idx.
__device__ __forceinline__ void write_quad(float4* __restrict__ nodes, long long idx, int slots, const float (*lo)[3],
                                           const float (*hi)[3], const int* ref) {
    float origin[3];
    unsigned int e[3], q[6] = {0u, 0u, 0u, 0u, 0u, 0u};
#pragma unroll
    for (int a = 0; a < 3; ++a) {
        float L = lo[0][a], H = hi[0][a];
        for (int c = 1; c < slots; ++c) {
            L = min2(L, lo[c][a]);
            H = max2(H, hi[c][a]);
        }
        e[a] = quad_step(__dsub_rn((double)H, (double)L));
        double st = __longlong_as_double((long long)((unsigned long long)(e[a] - 127u + 1023u) << 52));
        origin[a] = L;
        for (int c = 0; c < slots; ++c) {
            double ql = floor(__dsub_rn(__ddiv_rn(__dsub_rn((double)lo[c][a], (double)L), st), 0x1p-30));
            double qh = ceil(__dadd_rn(__ddiv_rn(__dsub_rn((double)hi[c][a], (double)L), st), 0x1p-30));
            q[2 * a] |= quad_clamp(ql) << (8 * c);
            q[2 * a + 1] |= quad_clamp(qh) << (8 * c);
        }
    }
    float4* n = nodes + 4 * idx;
    n[0] = make_float4(origin[0], origin[1], origin[2],
                       __uint_as_float(e[0] | (e[1] << 8) | (e[2] << 16) | ((unsigned int)slots << 24)));
    n[1] = make_float4(__uint_as_float(q[0]), __uint_as_float(q[1]), __uint_as_float(q[2]), __uint_as_float(q[3]));
    n[2] = make_float4(__uint_as_float(q[4]), __uint_as_float(q[5]), __int_as_float(slots > 0 ? ref[0] : 0),
                       __int_as_float(slots > 1 ? ref[1] : 0));
    n[3] = make_float4(__int_as_float(slots > 2 ? ref[2] : 0), __int_as_float(slots > 3 ? ref[3] : 0), 0.0f, 0.0f);
}

}  // namespace

#include "bvh_wide.cuh"

extern "C" {

// rayd_bvh_init(status): resets the build status words.
//   status  uint32[16]  flags, nodes, height = 0; centroid min keys = key(+inf),
//                       max keys = key(−inf).
// Launch <<<1, 32>>>.
__global__ void rayd_bvh_init(unsigned int* status) {
    int i = threadIdx.x;
    if (i >= RAYD_STATUS_WORDS) return;
    unsigned int v = 0u;
    if (i >= RAYD_STATUS_MIN && i < RAYD_STATUS_MIN + 3) v = ordered_key(__int_as_float(0x7f800000));
    if (i >= RAYD_STATUS_MAX && i < RAYD_STATUS_MAX + 3) v = ordered_key(__int_as_float(0xff800000));
    status[i] = v;
}

// rayd_bvh_face_bounds(verts, faces, num_faces, boxes, status):
//   verts      float[3V]        global vertex table
//   faces      int[3F]          global vertex indices per face
//   num_faces  int              F
//   boxes      float[6F] (out)  per face lo.xyz, hi.xyz (min/max of its vertices)
//   status     uint32[16]|null  centroid bounds are reduced into it with
//                               ordered-key atomics (null: skipped, refit)
// One thread per face; blockDim.x must be 256.
__global__ void __launch_bounds__(256) rayd_bvh_face_bounds(const float* __restrict__ verts, const int* __restrict__ faces,
                                                            int num_faces, float* __restrict__ boxes,
                                                            unsigned int* status) {
    __shared__ unsigned int s_red[6][8];
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int kmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu};
    unsigned int kmax[3] = {0u, 0u, 0u};
    if (f < num_faces) {
        long long i0 = 3LL * faces[3LL * f], i1 = 3LL * faces[3LL * f + 1], i2 = 3LL * faces[3LL * f + 2];
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            float a = verts[i0 + c], p = verts[i1 + c], q = verts[i2 + c];
            float lo = min2(min2(a, p), q), hi = max2(max2(a, p), q);
            boxes[6LL * f + c] = lo;
            boxes[6LL * f + 3 + c] = hi;
            float x = __fmul_rn(__fadd_rn(lo, hi), 0.5f);
            if (isfinite(x)) {
                kmin[c] = ordered_key(x);
                kmax[c] = kmin[c];
            }
        }
    }
    if (status == nullptr) return;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        unsigned int a = __reduce_min_sync(0xffffffffu, kmin[c]);
        unsigned int b = __reduce_max_sync(0xffffffffu, kmax[c]);
        if (lane == 0) { s_red[c][warp] = a; s_red[3 + c][warp] = b; }
    }
    __syncthreads();
    if (threadIdx.x < 6) {
        int c = threadIdx.x;
        unsigned int v = s_red[c][0];
        for (int w = 1; w < 8; ++w) v = c < 3 ? min(v, s_red[c][w]) : max(v, s_red[c][w]);
        if (c < 3) {
            if (v != 0xffffffffu) atomicMin(&status[RAYD_STATUS_MIN + c], v);
        } else if (v != 0u) {
            atomicMax(&status[RAYD_STATUS_MAX + c - 3], v);
        }
    }
}

// rayd_bvh_morton(boxes, num_faces, status, keys, vals):
//   boxes      float[6F]        face boxes (rayd_bvh_face_bounds)
//   num_faces  int              F
//   status     uint32[16]       holds the centroid bounds
//   keys       uint32[F] (out)  30-bit Morton code of each face box centroid
//                               (per axis (c−min)/extent, 0.5 if extent ≤ 0,
//                               clamped to [0,1], floor(x·1023); X<<2|Y<<1|Z)
//   vals       uint32[F] (out)  face index
// One thread per face.
__global__ void rayd_bvh_morton(const float* __restrict__ boxes, int num_faces, const unsigned int* __restrict__ status,
                                unsigned int* __restrict__ keys, unsigned int* __restrict__ vals) {
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= num_faces) return;
    unsigned int code = 0u;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        float mn = ordered_float(status[RAYD_STATUS_MIN + c]);
        float mx = ordered_float(status[RAYD_STATUS_MAX + c]);
        float x = __fmul_rn(__fadd_rn(boxes[6LL * f + c], boxes[6LL * f + 3 + c]), 0.5f);
        code |= expand_bits(morton_quantize(x, mn, mx)) << (2 - c);
    }
    keys[f] = code;
    vals[f] = (unsigned int)f;
}

// rayd_radix_hist(keys, n, shift, hist, num_tiles): digit histogram of each
// 4096-key tile.
//   keys       uint32[n]
//   n          int
//   shift      int                       digit = (key >> shift) & 255
//   hist       uint32[256·num_tiles] (out)  digit-major: hist[d·num_tiles + tile]
//   num_tiles  int                       ceil(n / 4096) = gridDim.x
// blockDim.x must be 256.
__global__ void __launch_bounds__(RADIX_THREADS) rayd_radix_hist(const unsigned int* __restrict__ keys, int n, int shift,
                                                                  unsigned int* __restrict__ hist, int num_tiles) {
    __shared__ unsigned int s_count[256];
    s_count[threadIdx.x] = 0u;
    __syncthreads();
    long long base = (long long)blockIdx.x * RADIX_TILE;
#pragma unroll 4
    for (int r = 0; r < RADIX_ITEMS; ++r) {
        long long i = base + r * RADIX_THREADS + threadIdx.x;
        if (i < n) atomicAdd(&s_count[(keys[i] >> shift) & 255u], 1u);
    }
    __syncthreads();
    hist[(long long)threadIdx.x * num_tiles + blockIdx.x] = s_count[threadIdx.x];
}

// rayd_scan_tiles(in, out, n, sums): exclusive prefix sum of each 2048-element
// tile; sums[tile] = the tile's total. in may equal out.
//   in    uint32[n]
//   out   uint32[n] (out)   local exclusive prefix within its tile
//   n     int
//   sums  uint32[ceil(n/2048)+1] (out)
// blockDim.x must be 256; one block per tile. Finish with rayd_scan_sums;
// the global prefix of element i is then out[i] + sums[i / 2048].
__global__ void __launch_bounds__(SCAN_THREADS) rayd_scan_tiles(const unsigned int* in, unsigned int* out, int n,
                                                                unsigned int* __restrict__ sums) {
    __shared__ unsigned int s_warp[32];
    long long base = (long long)blockIdx.x * SCAN_TILE + (long long)threadIdx.x * SCAN_ITEMS;
    unsigned int v[SCAN_ITEMS];
    unsigned int sum = 0u;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) {
        v[k] = base + k < n ? in[base + k] : 0u;
        sum += v[k];
    }
    unsigned int total;
    unsigned int run = block_exclusive_scan<SCAN_THREADS>(sum, s_warp, total);
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) {
        if (base + k < n) out[base + k] = run;
        run += v[k];
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// rayd_scan_sums(sums, num_tiles): exclusive prefix sum of the tile sums in
// place; sums[num_tiles] = the grand total.
//   sums       uint32[num_tiles+1]
//   num_tiles  int
// Launch <<<1, 1024>>>.
__global__ void __launch_bounds__(1024) rayd_scan_sums(unsigned int* sums, int num_tiles) {
    __shared__ unsigned int s_warp[32];
    unsigned int carry = 0u;
    for (int base = 0; base < num_tiles; base += 1024) {
        int i = base + threadIdx.x;
        unsigned int v = i < num_tiles ? sums[i] : 0u;
        unsigned int total;
        unsigned int ex = block_exclusive_scan<1024>(v, s_warp, total);
        if (i < num_tiles) sums[i] = carry + ex;
        carry += total;
    }
    if (threadIdx.x == 0) sums[num_tiles] = carry;
}

// rayd_radix_scatter(keys_in, vals_in, keys_out, vals_out, n, shift, offsets,
// offset_sums, num_tiles): one stable counting-sort pass of (key, value) pairs.
//   keys_in, vals_in    uint32[n]
//   keys_out, vals_out  uint32[n] (out)
//   n                   int
//   shift               int    digit = (key >> shift) & 255
//   offsets             uint32[256·num_tiles]  rayd_scan_tiles of the histogram
//   offset_sums         uint32[...]           rayd_scan_sums of it
//   num_tiles           int    ceil(n / 4096) = gridDim.x
// blockDim.x must be 256. Each warp ranks its 512 keys round by round with
// __match_any_sync and per-warp digit counters, so equal digits keep their
// input order; the tile is reordered in shared memory and written out in runs.
__global__ void __launch_bounds__(RADIX_THREADS) rayd_radix_scatter(const unsigned int* __restrict__ keys_in,
                                                                     const unsigned int* __restrict__ vals_in,
                                                                     unsigned int* __restrict__ keys_out,
                                                                     unsigned int* __restrict__ vals_out, int n, int shift,
                                                                     const unsigned int* __restrict__ offsets,
                                                                     const unsigned int* __restrict__ offset_sums,
                                                                     int num_tiles) {
    __shared__ unsigned int s_keys[RADIX_TILE];
    __shared__ unsigned int s_vals[RADIX_TILE];
    __shared__ unsigned int s_warp_count[RADIX_WARPS][256];
    __shared__ unsigned int s_start[256];
    __shared__ unsigned int s_global[256];
    __shared__ unsigned int s_scan[32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned int lt_mask = (1u << lane) - 1u;
    for (int i = tid; i < RADIX_WARPS * 256; i += RADIX_THREADS) (&s_warp_count[0][0])[i] = 0u;
    {
        long long j = (long long)tid * num_tiles + blockIdx.x;
        s_global[tid] = scanned(offsets, offset_sums, j);
    }
    __syncthreads();

    const long long base = (long long)blockIdx.x * RADIX_TILE + warp * (RADIX_TILE / RADIX_WARPS);
    unsigned int key[RADIX_ITEMS], val[RADIX_ITEMS], rank[RADIX_ITEMS];
#pragma unroll
    for (int r = 0; r < RADIX_ITEMS; ++r) {
        long long i = base + r * 32 + lane;
        bool valid = i < n;
        key[r] = valid ? keys_in[i] : 0u;
        val[r] = valid ? vals_in[i] : 0u;
        rank[r] = 0u;
        unsigned int mask = __ballot_sync(0xffffffffu, valid);
        unsigned int d = (key[r] >> shift) & 255u;
        unsigned int peers = 0u, cnt = 0u;
        if (valid) {
            peers = __match_any_sync(mask, d);
            cnt = s_warp_count[warp][d];
            rank[r] = cnt + __popc(peers & lt_mask);
        }
        __syncwarp();
        if (valid && lane == __ffs(peers) - 1) s_warp_count[warp][d] = cnt + __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    // Per digit: exclusive offsets of the warps, then of the digits in the tile.
    unsigned int total = 0u;
#pragma unroll
    for (int w = 0; w < RADIX_WARPS; ++w) {
        unsigned int c = s_warp_count[w][tid];
        s_warp_count[w][tid] = total;
        total += c;
    }
    unsigned int all;
    s_start[tid] = block_exclusive_scan<RADIX_THREADS>(total, s_scan, all);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < RADIX_ITEMS; ++r) {
        long long i = base + r * 32 + lane;
        if (i < n) {
            unsigned int d = (key[r] >> shift) & 255u;
            unsigned int pos = s_start[d] + s_warp_count[warp][d] + rank[r];
            s_keys[pos] = key[r];
            s_vals[pos] = val[r];
        }
    }
    __syncthreads();
    long long tile_base = (long long)blockIdx.x * RADIX_TILE;
    int tile_n = (int)min((long long)RADIX_TILE, (long long)n - tile_base);
    for (int i = tid; i < tile_n; i += RADIX_THREADS) {
        unsigned int k = s_keys[i];
        unsigned int d = (k >> shift) & 255u;
        unsigned int o = s_global[d] + (unsigned int)i - s_start[d];
        keys_out[o] = k;
        vals_out[o] = s_vals[i];
    }
}

// rayd_bvh_karras(keys, n, child, parent, first, count, counter): the radix
// tree over n sorted Morton codes (Karras 2012; equal codes ordered by index).
//   keys     uint32[n]            sorted codes
//   n        int
//   child    int[2(n−1)] (out)    left, right node numbers per internal node
//   parent   int[2n−1] (out)      parent node number (root: −1)
//   first    int[n−1] (out)       first sorted slot of the node's range
//   count    int[n−1] (out)       number of primitives in the range
//   counter  uint32[n−1] (out)    zeroed (bottom-up arrival counters)
// One thread per internal node; launch at least one thread (n = 1 sets the
// root's parent only).
__global__ void rayd_bvh_karras(const unsigned int* __restrict__ keys, int n, int* __restrict__ child,
                                int* __restrict__ parent, int* __restrict__ first, int* __restrict__ count,
                                unsigned int* __restrict__ counter) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) parent[0] = -1;
    if (i >= n - 1) return;
    unsigned int ki = keys[i];
    int d = karras_delta(keys, n, i, ki, i + 1) - karras_delta(keys, n, i, ki, i - 1) < 0 ? -1 : 1;
    int dmin = karras_delta(keys, n, i, ki, i - d);
    int lmax = 2;
    while (karras_delta(keys, n, i, ki, i + lmax * d) > dmin) lmax *= 2;
    int l = 0;
    for (int t = lmax / 2; t >= 1; t /= 2) {
        if (karras_delta(keys, n, i, ki, i + (l + t) * d) > dmin) l += t;
    }
    int j = i + l * d;
    int dnode = karras_delta(keys, n, i, ki, j);
    int s = 0;
    for (int t = l; t > 1;) {
        t = (t + 1) >> 1;
        if (karras_delta(keys, n, i, ki, i + (s + t) * d) > dnode) s += t;
    }
    int gamma = i + s * d + min(d, 0);
    int lo = min(i, j), hi = max(i, j);
    int left = lo == gamma ? n - 1 + gamma : gamma;
    int right = hi == gamma + 1 ? n - 1 + gamma + 1 : gamma + 1;
    child[2 * i] = left;
    child[2 * i + 1] = right;
    parent[left] = i;
    parent[right] = i;
    first[i] = lo;
    count[i] = hi - lo + 1;
    counter[i] = 0u;
}

// rayd_bvh_bottom_up(face_boxes, order, n, child, parent, count, counter,
// node_box, cost, info, status, max_leaf, ct, ci, refit): boxes, SAH costs,
// leaf choices and heights from the leaves up; at each internal node the
// second arriving thread (atomic counter) merges and continues.
//   face_boxes  float[6F]          face boxes
//   order       uint32[n]          sorted prim ids (leaf k holds order[k])
//   n           int
//   child       int[2(n−1)], parent int[2n−1], count int[n−1]   the tree
//   counter     uint32[n−1]        zero on entry (karras, or a host memset)
//   node_box    float[6(2n−1)] (out)
//   cost        float[2n−1] (out)  SAH cost (not written when refit)
//   info        int[2n−1] (out)    height << 1 | leaf choice (not written when refit)
//   status      uint32[16]         height and the depth flag (not written when refit)
//   max_leaf    int                largest collapsed leaf (1..8)
//   ct, ci      float              SAH traversal / intersection costs
//   refit       int                1: recompute boxes only, keep the choices
// SAH per internal node: split = (ct·A + C(l)) + C(r); leaf = (ci·A)·count
// when count ≤ max_leaf and the node is not the root; leaf when leaf ≤ split.
// A = dx·dy + dy·dz + dz·dx. Height: leaf 0, split 1 + max(children).
// One thread per leaf.
__global__ void rayd_bvh_bottom_up(const float* __restrict__ face_boxes, const unsigned int* __restrict__ order, int n,
                                   const int* __restrict__ child, const int* __restrict__ parent,
                                   const int* __restrict__ count, unsigned int* counter, float* node_box, float* cost,
                                   int* info, unsigned int* status, int max_leaf, float ct, float ci, int refit) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    int node = n - 1 + k;
    long long f = order[k];
    float b[6];
#pragma unroll
    for (int c = 0; c < 6; ++c) {
        b[c] = face_boxes[6 * f + c];
        node_box[6LL * node + c] = b[c];
    }
    if (!refit) {
        cost[node] = __fmul_rn(ci, half_area(b[0], b[1], b[2], b[3], b[4], b[5]));
        info[node] = 1;
    }
    if (n == 1) return;
    for (;;) {
        int p = parent[node];
        __threadfence();
        if (atomicAdd(&counter[p], 1u) == 0u) return;
        __threadfence();
        int l = child[2 * p], r = child[2 * p + 1];
        float lb[6], rb[6];
#pragma unroll
        for (int c = 0; c < 6; ++c) {
            lb[c] = __ldcg(&node_box[6LL * l + c]);
            rb[c] = __ldcg(&node_box[6LL * r + c]);
        }
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            b[c] = min2(lb[c], rb[c]);
            b[3 + c] = max2(lb[3 + c], rb[3 + c]);
        }
#pragma unroll
        for (int c = 0; c < 6; ++c) node_box[6LL * p + c] = b[c];
        if (!refit) {
            float a = half_area(b[0], b[1], b[2], b[3], b[4], b[5]);
            float split = __fadd_rn(__fadd_rn(__fmul_rn(ct, a), __ldcg(&cost[l])), __ldcg(&cost[r]));
            float c_best = split;
            bool leaf = false;
            int cnt = count[p];
            if (cnt <= max_leaf && p != 0) {
                float lc = __fmul_rn(__fmul_rn(ci, a), (float)cnt);
                if (lc <= split) { c_best = lc; leaf = true; }
            }
            cost[p] = c_best;
            int h = 0;
            if (!leaf) h = 1 + max(__ldcg(&info[l]) >> 1, __ldcg(&info[r]) >> 1);
            info[p] = leaf ? 1 : h << 1;
            if (p == 0) {
                status[RAYD_STATUS_HEIGHT] = (unsigned int)h;
                if (h > RAYD_MAX_DEPTH) atomicOr(&status[RAYD_STATUS_FLAGS], RAYD_FLAG_DEPTH);
            }
        }
        if (p == 0) return;
        node = p;
    }
}

// rayd_bvh_mark(n, parent, count, info, max_leaf, flags): flags[i] = 1 when
// internal node i becomes a child-pair node (see rayd_bvh_emit), else 0.
//   n         int
//   parent    int[2n−1], count int[n−1], info int[2n−1]
//   max_leaf  int
//   flags     uint32[n−1] (out)
// One thread per internal node (n ≥ 2).
__global__ void rayd_bvh_mark(int n, const int* __restrict__ parent, const int* __restrict__ count,
                              const int* __restrict__ info, int max_leaf, unsigned int* __restrict__ flags) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1) return;
    flags[i] = emitted(i, parent, count, info, max_leaf) ? 1u : 0u;
}

// rayd_bvh_emit(n, child, first, count, info, flags, idx, idx_sums, node_box,
// nodes, status): writes the child-pair node of every emitted internal node i
// at index idx(i) = idx[i] + idx_sums[i / 2048] (the scan of flags): both
// children's inflated boxes and their references (an emitted child: its
// index; a Karras leaf k: leaf (k, 1); a collapsed child: leaf (first, count)).
//   n         int
//   child     int[2(n−1)], first int[n−1], count int[n−1], info int[2n−1]
//   flags     uint32[n−1]      rayd_bvh_mark
//   idx       uint32[n−1]      rayd_scan_tiles of flags
//   idx_sums  uint32[...]      rayd_scan_sums of it
//   node_box  float[6(2n−1)]
//   nodes     float4[4·max(n−1,1)] (out)
//   status    uint32[16]       node count (and, for n = 1, height 1)
// n = 1: thread 0 writes a root whose two children are the only triangle.
// One thread per internal node; launch at least one thread.
__global__ void rayd_bvh_emit(int n, const int* __restrict__ child, const int* __restrict__ first,
                              const int* __restrict__ count, const int* __restrict__ info,
                              const unsigned int* __restrict__ flags, const unsigned int* __restrict__ idx,
                              const unsigned int* __restrict__ idx_sums, const float* __restrict__ node_box,
                              float4* __restrict__ nodes, unsigned int* status) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (n == 1) {
        if (i != 0) return;
        float lo[3], hi[3];
        inflate(node_box, lo, hi);
        write_node(nodes, 0, lo, hi, lo, hi, leaf_ref(0, 1), leaf_ref(0, 1));
        status[RAYD_STATUS_NODES] = 1u;
        status[RAYD_STATUS_HEIGHT] = 1u;
        return;
    }
    if (i >= n - 1) return;
    if (i == n - 2) status[RAYD_STATUS_NODES] = scanned(idx, idx_sums, i) + flags[i];
    if (!flags[i]) return;
    float lo[2][3], hi[2][3];
    int ref[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        int c = child[2 * i + s];
        float b[6];
#pragma unroll
        for (int k = 0; k < 6; ++k) b[k] = node_box[6LL * c + k];
        inflate(b, lo[s], hi[s]);
        if (c >= n - 1) {
            ref[s] = leaf_ref(c - (n - 1), 1);
        } else if (info[c] & 1) {
            ref[s] = leaf_ref(first[c], count[c]);
        } else {
            ref[s] = (int)scanned(idx, idx_sums, c);
        }
    }
    write_node(nodes, (int)scanned(idx, idx_sums, i), lo[0], hi[0], lo[1], hi[1], ref[0], ref[1]);
}

// rayd_bvh_mark_quad(n, parent, count, info, max_leaf, flags): flags[i] = 1
// when internal node i heads a quad node: it becomes a child-pair node (see
// rayd_bvh_mark) and its depth (ancestors on the parent chain) is even.
//   n         int
//   parent    int[2n−1], count int[n−1], info int[2n−1]
//   max_leaf  int
//   flags     uint32[n−1] (out)
// One thread per internal node (n ≥ 2).
__global__ void rayd_bvh_mark_quad(int n, const int* __restrict__ parent, const int* __restrict__ count,
                                   const int* __restrict__ info, int max_leaf, unsigned int* __restrict__ flags) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1) return;
    int depth = 0;
    for (int a = parent[i]; a >= 0; a = parent[a]) ++depth;
    flags[i] = ((depth & 1) == 0 && emitted(i, parent, count, info, max_leaf)) ? 1u : 0u;
}

// rayd_bvh_emit_quad(n, child, first, count, info, flags, idx, idx_sums,
// node_box, nodes, status): writes the quad node of every flagged internal
// node i at idx(i) = idx[i] + idx_sums[i / 2048] (the scan of flags). Its
// slots, in order: for each child c of i, c itself when it is a leaf of the
// collapsed tree (Karras leaf or collapsed subtree), else c's two children;
// each slot's box is its inflated box, quantized (accel/hostquad.go), and
// its reference the leaf or the quad index. Parameters as rayd_bvh_emit
// (flags and idx from rayd_bvh_mark_quad and its scan). n = 1: thread 0
// writes a root with the only triangle in one slot.
// One thread per internal node; launch at least one thread.
__global__ void rayd_bvh_emit_quad(int n, const int* __restrict__ child, const int* __restrict__ first,
                                   const int* __restrict__ count, const int* __restrict__ info,
                                   const unsigned int* __restrict__ flags, const unsigned int* __restrict__ idx,
                                   const unsigned int* __restrict__ idx_sums, const float* __restrict__ node_box,
                                   float4* __restrict__ nodes, unsigned int* status) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float lo[4][3], hi[4][3];
    int ref[4];
    if (n == 1) {
        if (i != 0) return;
        inflate(node_box, lo[0], hi[0]);
        ref[0] = leaf_ref(0, 1);
        write_quad(nodes, 0, 1, lo, hi, ref);
        status[RAYD_STATUS_NODES] = 1u;
        status[RAYD_STATUS_HEIGHT] = 1u;
        return;
    }
    if (i >= n - 1) return;
    if (i == n - 2) status[RAYD_STATUS_NODES] = scanned(idx, idx_sums, i) + flags[i];
    if (!flags[i]) return;
    int slots = 0;
    for (int s = 0; s < 2; ++s) {
        int c = child[2 * i + s];
        int take[2] = {c, -1};
        if (!leafish(c, n, info)) {
            take[0] = child[2 * c];
            take[1] = child[2 * c + 1];
        }
        for (int k = 0; k < 2; ++k) {
            int g = take[k];
            if (g < 0) continue;
            float b[6];
#pragma unroll
            for (int w = 0; w < 6; ++w) b[w] = node_box[6LL * g + w];
            inflate(b, lo[slots], hi[slots]);
            ref[slots] = leafish(g, n, info) ? leaf_ref_of(g, n, first, count) : (int)scanned(idx, idx_sums, g);
            ++slots;
        }
    }
    write_quad(nodes, scanned(idx, idx_sums, i), slots, lo, hi, ref);
}

// rayd_bvh_write_tris(verts, faces, face_shape, face_local, order, n, tris):
// the triangle records in leaf order.
//   verts       float[3V], faces int[3F]
//   face_shape  int[F] | null   mesh id per face (null: −1)
//   face_local  int[F] | null   local face index per face (null: −1)
//   order       uint32[n]       sorted prim ids
//   n           int
//   tris        float4[3n] (out)  (v0, prim) (v1, shape) (v2, local)
// One thread per slot.
__global__ void rayd_bvh_write_tris(const float* __restrict__ verts, const int* __restrict__ faces,
                                    const int* __restrict__ face_shape, const int* __restrict__ face_local,
                                    const unsigned int* __restrict__ order, int n, float4* __restrict__ tris) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    long long f = order[k];
    int shape = face_shape ? face_shape[f] : -1;
    int local = face_local ? face_local[f] : -1;
    long long i0 = 3LL * faces[3 * f], i1 = 3LL * faces[3 * f + 1], i2 = 3LL * faces[3 * f + 2];
    tris[3LL * k + 0] = make_float4(verts[i0], verts[i0 + 1], verts[i0 + 2], __int_as_float((int)f));
    tris[3LL * k + 1] = make_float4(verts[i1], verts[i1 + 1], verts[i1 + 2], __int_as_float(shape));
    tris[3LL * k + 2] = make_float4(verts[i2], verts[i2 + 1], verts[i2 + 2], __int_as_float(local));
}

// rayd_bvh_slots_wide(n, child, info, node_box, wide_slots, wide_counts):
// for every internal node i of the radix tree, the wide node it would root
// (hostTree.wideCollapse and wideAssign): the radix-tree node in each of its
// eight slots and its counts of internal children and leaf triangles.
//   n            int (≥ 2)
//   child, first, count, info, node_box   the bottom-up tree
//   wide_slots   int[8(n−1)] (out)     radix-tree node per slot, −1 empty
//   wide_counts  uint32[n−1] (out)     internal children << 16 | triangles
// One thread per internal node.
__global__ void rayd_bvh_slots_wide(int n, const int* __restrict__ child, const int* __restrict__ first,
                                    const int* __restrict__ count, const int* __restrict__ info,
                                    const float* __restrict__ node_box, int* __restrict__ wide_slots,
                                    unsigned int* __restrict__ wide_counts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1) return;
    int list[WIDE_SLOTS], slot[WIDE_SLOTS];
    int m = wide_collapse(i, n, child, info, node_box, list);
    wide_assign(i, list, m, node_box, slot);
    unsigned int ni = 0u, nt = 0u;
    for (int s = 0; s < WIDE_SLOTS; ++s) {
        int c = slot[s] < 0 ? -1 : list[slot[s]];
        wide_slots[8LL * i + s] = c;
        if (c < 0) continue;
        if (leafish(c, n, info)) {
            int f, k;
            leaf_range(c, n, first, count, f, k);
            nt += (unsigned int)k;
        } else {
            ++ni;
        }
    }
    wide_counts[i] = ni << 16 | nt;
}

// rayd_bvh_collapse_wide(n, first, count, info, order, wide_slots,
// wide_counts, wide_root, wide_base, wide_order, status): numbers the wide
// nodes breadth first (hostTree.emitWide). Each level is processed in
// chunks of 1024 nodes in index order: a block scan of the nodes' counts
// (rayd_bvh_slots_wide) gives each its child base (the queue length before
// its children) and triangle base; it appends its internal children to the
// queue and writes its leaves' prim ids, in slot order.
//   n           int
//   first, count, info   the bottom-up tree
//   order       uint32[n]          sorted prim ids
//   wide_slots, wide_counts        rayd_bvh_slots_wide (n ≥ 2)
//   wide_root   int[max(n−1, 1)]   (out) radix-tree root of each wide node
//   wide_base   uint32[2·max(n−1, 1)] (out) child base, triangle base
//   wide_order  uint32[n]          (out) prim id of each wide triangle slot
//   status      uint32[16]         node count and height (wide nodes)
// Launch <<<1, 1024>>>.
__global__ void __launch_bounds__(WIDE_THREADS) rayd_bvh_collapse_wide(
    int n, const int* __restrict__ first, const int* __restrict__ count, const int* __restrict__ info,
    const unsigned int* __restrict__ order, const int* __restrict__ wide_slots,
    const unsigned int* __restrict__ wide_counts, int* wide_root, unsigned int* __restrict__ wide_base,
    unsigned int* __restrict__ wide_order, unsigned int* status) {
    __shared__ unsigned int s_warp[32];
    const int t = threadIdx.x;
    if (n == 1) {
        if (t == 0) {
            wide_root[0] = 0;
            wide_base[0] = 0u;
            wide_base[1] = 0u;
            wide_order[0] = order[0];
            status[RAYD_STATUS_NODES] = 1u;
            status[RAYD_STATUS_HEIGHT] = 1u;
        }
        return;
    }
    if (t == 0) wide_root[0] = 0;
    __syncthreads();
    unsigned int head = 0u, tail = 1u, tris = 0u, height = 0u;
    while (head < tail) {
        const unsigned int level_end = tail;
        ++height;
        while (head < level_end) {
            const unsigned int cnt = min(level_end - head, (unsigned int)WIDE_THREADS);
            const bool act = (unsigned int)t < cnt;
            int i = 0;
            unsigned int v = 0u;
            if (act) {
                i = wide_root[head + t];
                v = wide_counts[i];
            }
            unsigned int total;
            unsigned int ex = block_exclusive_scan<WIDE_THREADS>(v, s_warp, total);
            if (act) {
                unsigned int cb = tail + (ex >> 16), tb = tris + (ex & 0xffffu);
                wide_base[2 * (head + t)] = cb;
                wide_base[2 * (head + t) + 1] = tb;
                for (int s = 0; s < WIDE_SLOTS; ++s) {
                    int c = wide_slots[8LL * i + s];
                    if (c < 0) continue;
                    if (!leafish(c, n, info)) {
                        wide_root[cb++] = c;
                        continue;
                    }
                    int f, k;
                    leaf_range(c, n, first, count, f, k);
                    for (int j = 0; j < k; ++j) wide_order[tb++] = order[f + j];
                }
            }
            tail += total >> 16;
            tris += total & 0xffffu;
            head += cnt;
            __syncthreads();
        }
    }
    if (t == 0) {
        status[RAYD_STATUS_NODES] = tail;
        status[RAYD_STATUS_HEIGHT] = height;
    }
}

// rayd_bvh_emit_wide(n, first, count, info, node_box, wide_slots, wide_root,
// wide_base, status, nodes): writes wide node q for q < status nodes: each
// occupied slot's inflated box, quantized (putWide), and leaf descriptors
// count | offset<<3 (offset: triangles of the earlier leaf slots). n = 1:
// node 0 with the only triangle in slot 0 (wide_slots unused).
//   nodes       float4[5·max(n−1, 1)] (out)
// One thread per possible wide node (max(n−1, 1)).
__global__ void rayd_bvh_emit_wide(int n, const int* __restrict__ first, const int* __restrict__ count,
                                   const int* __restrict__ info, const float* __restrict__ node_box,
                                   const int* __restrict__ wide_slots, const int* __restrict__ wide_root,
                                   const unsigned int* __restrict__ wide_base, const unsigned int* __restrict__ status,
                                   float4* __restrict__ nodes) {
    long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= (long long)status[RAYD_STATUS_NODES]) return;
    float lo[WIDE_SLOTS][3], hi[WIDE_SLOTS][3];
    unsigned int meta[WIDE_SLOTS] = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};
    if (n == 1) {
        inflate(node_box, lo[0], hi[0]);
        meta[0] = 1u;
        write_wide(nodes, 0, 1u, 0u, lo, hi, meta, 0u, 0u);
        return;
    }
    int i = wide_root[q];
    unsigned int used = 0u, imask = 0u, off = 0u;
    for (int s = 0; s < WIDE_SLOTS; ++s) {
        int c = wide_slots[8LL * i + s];
        if (c < 0) continue;
        used |= 1u << s;
        float b[6];
#pragma unroll
        for (int k = 0; k < 6; ++k) b[k] = node_box[6LL * c + k];
        inflate(b, lo[s], hi[s]);
        if (!leafish(c, n, info)) {
            imask |= 1u << s;
            continue;
        }
        int f, k;
        leaf_range(c, n, first, count, f, k);
        meta[s] = (unsigned int)k | off << 3;
        off += (unsigned int)k;
    }
    write_wide(nodes, q, used, imask, lo, hi, meta, wide_base[2 * q], wide_base[2 * q + 1]);
}

}  // extern "C"
