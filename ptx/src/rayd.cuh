// rayd.cuh: shared device code of the triangle BVH (bvh_build.cu) and its
// queries (trace.cu): the traversal layout, exactly rounded float helpers,
// the watertight ray/triangle test and the BVH traversal loops.
//
// Every float operation whose result must match the CPU reference (package
// geom / ref) or the host mirror of the build (package accel) is written
// with an explicit rounding intrinsic (__fadd_rn, __fmul_rn, fmaf, ...), so
// the compiler cannot contract or reassociate it. The modules are compiled
// without fast-math (IEEE division and square root, no flush-to-zero).
#pragma once

#include <stdint.h>

// ---------------------------------------------------------------------------
// Layout (mirrored by accel/layout.go).
//
// Node (64 B, 4 float4), child-pair form: both children's boxes and refs.
//   n[0] = c0.lo.x c0.hi.x c0.lo.y c0.hi.y
//   n[1] = c1.lo.x c1.hi.x c1.lo.y c1.hi.y
//   n[2] = c0.lo.z c0.hi.z c1.lo.z c1.hi.z
//   n[3] = ref0 ref1 0 0   (int bits)
// ref >= 0: index of a node; ref < 0: leaf, ~ref = first << 3 | (count − 1).
// Triangle (48 B, 3 float4) in leaf order:
//   t[0] = v0.xyz, global prim id;  t[1] = v1.xyz, shape id;  t[2] = v2.xyz, local id.
// Stored boxes are inflated by max(2^-18·m, 2^-126) (m = largest |coordinate|
// of the box); the traversal adds 2^-18·(largest |origin coordinate|).
//
// Quad node (64 B, 4-wide, quantized; accel/hostquad.go): the slots of a
// child-pair node at even depth, each internal child opened once more.
//   n[0] = origin.xyz (float), meta = ex | ey<<8 | ez<<16 | slots<<24
//          (e: biased float exponent of the axis step s = 2^(e−127))
//   n[1] = q lo.x, q hi.x, q lo.y, q hi.y  (uint32: byte c = slot c)
//   n[2] = q lo.z, q hi.z, ref0, ref1
//   n[3] = ref2, ref3, 0, 0
// Slot c spans origin + q·s per plane (exactly), a superset of its inflated box.
//
// Compressed wide node (80 B, 5 float4, 8-wide; accel/wide.go, built by
// bvh_wide.cuh): n[0] = origin.xyz, ex | ey<<8 | ez<<16 | imask<<24;
// n[1] = child base, triangle base, leaf descriptors of slots 0..3 and 4..7
// (byte: count | offset<<3); n[2..4] = planes of x, y, z: q lo (slots 0..3,
// 4..7), q hi (slots 0..3, 4..7). Internal slots (imask) are the wide nodes
// child base + rank; leaf slots hold count triangles at triangle base + offset.
// ---------------------------------------------------------------------------
#define RAYD_LEAF_COUNT_BITS 3
#define RAYD_MAX_LEAF 8
#define RAYD_MAX_DEPTH 64
#define RAYD_INFLATE_SCALE 3.814697265625e-06f /* 2^-18 */
#define RAYD_INFLATE_FLOOR 1.1754943508222875e-38f /* 2^-126 */
#define RAYD_STACK_SENTINEL 0x76543210
#define RAYD_QUAD_SLOTS 4
#define RAYD_QUAD_STACK (3 * (RAYD_MAX_DEPTH / 2) + 1) /* 3 pushes per quad level */
#define RAYD_WIDE_STACK (2 * RAYD_MAX_DEPTH) /* a node and a triangle group per wide level */

// Build status words (uint32), written by the build kernels, read by the host.
#define RAYD_STATUS_FLAGS 0     /* bit 0: height exceeds RAYD_MAX_DEPTH */
#define RAYD_STATUS_NODES 1     /* emitted child-pair nodes */
#define RAYD_STATUS_HEIGHT 2    /* child-pair nodes on the longest path */
#define RAYD_STATUS_MIN 3       /* 3 words: ordered keys of the centroid min */
#define RAYD_STATUS_MAX 6       /* 3 words: ordered keys of the centroid max */
#define RAYD_STATUS_WORDS 16
#define RAYD_FLAG_DEPTH 1u

// Contract constants (spec §0.1).
#define RAYD_TMIN 1e-6f
#define RAYD_MULTIPATH_TMIN 1e-5f
#define RAYD_MULTIPATH_BIAS 1e-5f
#define RAYD_MIN_SEGMENT 2e-5f
#define RAYD_REFLECTION_MISS 1e8f
#define RAYD_FLT_MAX 3.4028234663852886e38f
#define RAYD_NORMAL_FLOOR 1e-20f
#define RAYD_REFLECTION_NORMAL_FLOOR 1e-12f
#define RAYD_RECIP_FLOOR 1e-20f
#define RAYD_RECIP_LARGE 1e20f

namespace rayd {

// Select-based min/max (the second operand only when strictly smaller /
// larger); the host mirror uses the same expressions.
__device__ __forceinline__ float min2(float a, float b) { return b < a ? b : a; }
__device__ __forceinline__ float max2(float a, float b) { return b > a ? b : a; }

// Float ↔ order-preserving uint32 (−0 below +0): scene bounds are reduced
// with integer atomics on these keys, which is deterministic.
__device__ __forceinline__ unsigned int ordered_key(float f) {
    unsigned int b = __float_as_uint(f);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float ordered_float(unsigned int k) {
    return (k & 0x80000000u) ? __uint_as_float(k & 0x7fffffffu) : __uint_as_float(~k);
}

__device__ __forceinline__ bool finite3(float x, float y, float z) {
    return isfinite(x) && isfinite(y) && isfinite(z);
}

// a*b − c*d with Kahan's compensated algorithm (geom.DiffOfProducts).
__device__ __forceinline__ float diff_of_products(float a, float b, float c, float d) {
    float w = __fmul_rn(c, d);
    float e = fmaf(-c, d, w);
    float f = fmaf(a, b, -w);
    return __fadd_rn(f, e);
}

__device__ __forceinline__ float diff_of_products_f64(float a, float b, float c, float d) {
    return __double2float_rn(__dsub_rn(__dmul_rn((double)a, (double)b), __dmul_rn((double)c, (double)d)));
}

// node_load is a read-only 16-byte load that the compiler may not sink into
// a branch: a node's four loads are issued together, so the references
// arrive with the boxes instead of after the box test.
__device__ __forceinline__ float4 node_load(const float4* p) {
#ifdef __CUDA_ARCH__
    float4 v;
    asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
#else
    return *p;
#endif
}

// sel3 picks component k (0, 1, 2) of (x, y, z) without indexing memory.
__device__ __forceinline__ float sel3(float x, float y, float z, int k) {
    return k == 0 ? x : (k == 1 ? y : z);
}

// 1/sqrt(x) in double, rounded once (geom.Rsqrt).
__device__ __forceinline__ float rsqrt_rn(float x) {
    return __double2float_rn(__ddiv_rn(1.0, __dsqrt_rn((double)x)));
}

// dot3 as ((a0*b0 + a1*b1) + a2*b2), each product rounded.
__device__ __forceinline__ float dot3(float ax, float ay, float az, float bx, float by, float bz) {
    return __fadd_rn(__fadd_rn(__fmul_rn(ax, bx), __fmul_rn(ay, by)), __fmul_rn(az, bz));
}

// geom.FaceNormal: unit e1×e2 scaled by rsqrt(max(|e1×e2|², floor)).
__device__ __forceinline__ float3 face_normal(float4 p0, float4 p1, float4 p2, float floor_) {
    float e1x = __fsub_rn(p1.x, p0.x), e1y = __fsub_rn(p1.y, p0.y), e1z = __fsub_rn(p1.z, p0.z);
    float e2x = __fsub_rn(p2.x, p0.x), e2y = __fsub_rn(p2.y, p0.y), e2z = __fsub_rn(p2.z, p0.z);
    float nx = __fsub_rn(__fmul_rn(e1y, e2z), __fmul_rn(e1z, e2y));
    float ny = __fsub_rn(__fmul_rn(e1z, e2x), __fmul_rn(e1x, e2z));
    float nz = __fsub_rn(__fmul_rn(e1x, e2y), __fmul_rn(e1y, e2x));
    float l2 = dot3(nx, ny, nz, nx, ny, nz);
    float s = rsqrt_rn((l2 > floor_ || l2 != l2) ? l2 : floor_);  // Go's max: NaN wins
    return make_float3(__fmul_rn(nx, s), __fmul_rn(ny, s), __fmul_rn(nz, s));
}

// geom.Interpolate: (p0 + u*e1) + v*e2 per component.
__device__ __forceinline__ float3 interpolate(float4 p0, float4 p1, float4 p2, float u, float v) {
    float e1x = __fsub_rn(p1.x, p0.x), e1y = __fsub_rn(p1.y, p0.y), e1z = __fsub_rn(p1.z, p0.z);
    float e2x = __fsub_rn(p2.x, p0.x), e2y = __fsub_rn(p2.y, p0.y), e2z = __fsub_rn(p2.z, p0.z);
    return make_float3(__fadd_rn(__fadd_rn(p0.x, __fmul_rn(u, e1x)), __fmul_rn(v, e2x)),
                       __fadd_rn(__fadd_rn(p0.y, __fmul_rn(u, e1y)), __fmul_rn(v, e2y)),
                       __fadd_rn(__fadd_rn(p0.z, __fmul_rn(u, e1z)), __fmul_rn(v, e2z)));
}

// ---------------------------------------------------------------------------
// Per-ray setup.
// ---------------------------------------------------------------------------
struct Ray {
    // Watertight shear (geom.Watertight steps 1–2): permutation and constants.
    int kx, ky, kz;
    float sx, sy, sz;
    float okx, oky, okz;  // origin components in (kx, ky, kz) order
    bool shear_ok;        // d[kz] != 0
    // Slab test: reciprocal direction and −(o ± e)·inv for the lo / hi planes.
    float ix, iy, iz;
    float nlx, nly, nlz;  // −(o + e)·inv  (lo planes)
    float nhx, nhy, nhz;  // −(o − e)·inv  (hi planes)
};

__device__ __forceinline__ float recip_dir(float x) {
    return fabsf(x) < RAYD_RECIP_FLOOR ? copysignf(RAYD_RECIP_LARGE, x) : __frcp_rn(x);
}

__device__ __forceinline__ void setup_ray(Ray& r, float ox, float oy, float oz, float dx, float dy, float dz) {
    int kz = 0;
    if (fabsf(dy) > fabsf(dx)) kz = 1;
    if (fabsf(dz) > fabsf(sel3(dx, dy, dz, kz))) kz = 2;
    int kx = kz + 1 == 3 ? 0 : kz + 1;
    int ky = kx + 1 == 3 ? 0 : kx + 1;
    float dkz = sel3(dx, dy, dz, kz);
    if (dkz < 0.0f) { int t = kx; kx = ky; ky = t; }
    r.kx = kx; r.ky = ky; r.kz = kz;
    r.shear_ok = dkz != 0.0f;
    r.sx = __fdiv_rn(sel3(dx, dy, dz, kx), dkz);
    r.sy = __fdiv_rn(sel3(dx, dy, dz, ky), dkz);
    r.sz = __fdiv_rn(1.0f, dkz);
    r.okx = sel3(ox, oy, oz, kx);
    r.oky = sel3(ox, oy, oz, ky);
    r.okz = sel3(ox, oy, oz, kz);
    r.ix = recip_dir(dx); r.iy = recip_dir(dy); r.iz = recip_dir(dz);
    float m = max2(max2(fabsf(ox), fabsf(oy)), fabsf(oz));
    float e = __fmul_rn(m, RAYD_INFLATE_SCALE);
    r.nlx = -__fmul_rn(__fadd_rn(ox, e), r.ix);
    r.nly = -__fmul_rn(__fadd_rn(oy, e), r.iy);
    r.nlz = -__fmul_rn(__fadd_rn(oz, e), r.iz);
    r.nhx = -__fmul_rn(__fsub_rn(ox, e), r.ix);
    r.nhy = -__fmul_rn(__fsub_rn(oy, e), r.iy);
    r.nhz = -__fmul_rn(__fsub_rn(oz, e), r.iz);
}

// ---------------------------------------------------------------------------
// Watertight ray/triangle test: geom.Watertight, operation for operation.
// Returns true with t, u (weight of v1), v (weight of v2) on a hit with
// t in [tmin, tmax].
// ---------------------------------------------------------------------------
__device__ __forceinline__ bool watertight(const Ray& r, float4 p0, float4 p1, float4 p2, float tmin, float tmax,
                                           float& t_out, float& u_out, float& v_out) {
    // 3. Vertices relative to the origin, in (kx, ky, kz) order.
    float akx = __fsub_rn(sel3(p0.x, p0.y, p0.z, r.kx), r.okx);
    float aky = __fsub_rn(sel3(p0.x, p0.y, p0.z, r.ky), r.oky);
    float akz = __fsub_rn(sel3(p0.x, p0.y, p0.z, r.kz), r.okz);
    float bkx = __fsub_rn(sel3(p1.x, p1.y, p1.z, r.kx), r.okx);
    float bky = __fsub_rn(sel3(p1.x, p1.y, p1.z, r.ky), r.oky);
    float bkz = __fsub_rn(sel3(p1.x, p1.y, p1.z, r.kz), r.okz);
    float ckx = __fsub_rn(sel3(p2.x, p2.y, p2.z, r.kx), r.okx);
    float cky = __fsub_rn(sel3(p2.x, p2.y, p2.z, r.ky), r.oky);
    float ckz = __fsub_rn(sel3(p2.x, p2.y, p2.z, r.kz), r.okz);
    // 4. Shear.
    float ax = __fsub_rn(akx, __fmul_rn(r.sx, akz));
    float ay = __fsub_rn(aky, __fmul_rn(r.sy, akz));
    float bx = __fsub_rn(bkx, __fmul_rn(r.sx, bkz));
    float by = __fsub_rn(bky, __fmul_rn(r.sy, bkz));
    float cx = __fsub_rn(ckx, __fmul_rn(r.sx, ckz));
    float cy = __fsub_rn(cky, __fmul_rn(r.sy, ckz));
    // 5. Edge functions.
    float U = diff_of_products(cx, by, cy, bx);
    float V = diff_of_products(ax, cy, ay, cx);
    float W = diff_of_products(bx, ay, by, ax);
    // 6. Exactly on an edge in float32: decide in float64.
    if (U == 0.0f || V == 0.0f || W == 0.0f) {
        U = diff_of_products_f64(cx, by, cy, bx);
        V = diff_of_products_f64(ax, cy, ay, cx);
        W = diff_of_products_f64(bx, ay, by, ax);
    }
    // 7. Mixed signs.
    if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f)) return false;
    // 8. Determinant.
    float det = __fadd_rn(__fadd_rn(U, V), W);
    if (det == 0.0f || !r.shear_ok) return false;
    // 9. Distance.
    float T = __fadd_rn(__fadd_rn(__fmul_rn(U, akz), __fmul_rn(V, bkz)), __fmul_rn(W, ckz));
    float t = __fdiv_rn(__fmul_rn(T, r.sz), det);
    if (!(t >= tmin && t <= tmax)) return false;
    // 10. Barycentrics.
    t_out = t;
    u_out = __fdiv_rn(V, det);
    v_out = __fdiv_rn(W, det);
    return true;
}

// ---------------------------------------------------------------------------
// Traversal.
// ---------------------------------------------------------------------------

// Closest-hit state: best t, its prim (0xffffffff: none yet), slot, u, v.
struct Best {
    float t;
    unsigned int prim;
    int slot;
    float u, v;
};

// NoFilter accepts every hit. A traversal's filter F decides with
// F::keep(global prim id) whether a hit counts (the visibility variants
// skip the ignored prims of their row).
struct NoFilter {
    __device__ __forceinline__ bool keep(unsigned int) const { return true; }
};

// test_leaf runs the watertight test over the triangles of leaf ref.
// Closest mode: a hit replaces the best when t < best.t, or at equal t when
// its prim id is lower. Any mode: returns true at the first hit. Hits the
// filter rejects are skipped.
template <bool ANY, class F = NoFilter>
__device__ __forceinline__ bool test_leaf(const float4* __restrict__ tris, int ref, const Ray& r, float tmin, Best& b,
                                          const F& f = F()) {
    unsigned int payload = ~(unsigned int)ref;
    int first = (int)(payload >> RAYD_LEAF_COUNT_BITS);
    int end = first + (int)(payload & ((1u << RAYD_LEAF_COUNT_BITS) - 1u)) + 1;
    for (int k = first; k < end; ++k) {
        float4 p0 = __ldg(&tris[3 * k + 0]);
        float4 p1 = __ldg(&tris[3 * k + 1]);
        float4 p2 = __ldg(&tris[3 * k + 2]);
        float t, u, v;
        if (!watertight(r, p0, p1, p2, tmin, b.t, t, u, v)) continue;
        unsigned int prim = __float_as_uint(p0.w);
        if (!f.keep(prim)) continue;
        if (t < b.t || prim < b.prim) {
            b.t = t; b.prim = prim; b.slot = k; b.u = u; b.v = v;
            if (ANY) return true;
        }
    }
    return false;
}

// box_span computes the entry and exit of a child box (lo/hi per axis).
__device__ __forceinline__ void box_span(const Ray& r, float lox, float hix, float loy, float hiy, float loz, float hiz,
                                         float tmin, float tcap, float& tnear, float& tfar) {
    float ax = fmaf(lox, r.ix, r.nlx), bx = fmaf(hix, r.ix, r.nhx);
    float ay = fmaf(loy, r.iy, r.nly), by = fmaf(hiy, r.iy, r.nhy);
    float az = fmaf(loz, r.iz, r.nlz), bz = fmaf(hiz, r.iz, r.nhz);
    tnear = fmaxf(fmaxf(fminf(ax, bx), fminf(ay, by)), fmaxf(fminf(az, bz), tmin));
    tfar = fminf(fminf(fmaxf(ax, bx), fmaxf(ay, by)), fminf(fmaxf(az, bz), tcap));
}

// leaf_phase tests the postponed leaf and every leaf that follows it
// directly on the stack (the second loop of the while-while walk); it
// returns true when an any-mode walk found its hit.
template <bool ANY, class F>
__device__ __forceinline__ bool leaf_phase(int* stack, int& sp, int& node, int& leaf, const float4* __restrict__ tris,
                                           const Ray& r, float tmin, Best& b, const F& f) {
    while (leaf < 0) {
        if (test_leaf<ANY>(tris, leaf, r, tmin, b, f)) return true;
        leaf = node;
        if (node < 0) node = stack[sp--];
    }
    return false;
}

// node_phase2 is the first loop of traverse's while-while walk over child-pair
// nodes
// (Aila–Laine speculative traversal: a lane that finds a leaf postpones it
// and keeps descending until every lane of the warp holds a leaf; then the
// warp tests leaves together). Closest mode orders children near-first and
// keeps the best hit in b; any mode stops at the first hit (b.prim !=
// 0xffffffff then). The stack holds at most one entry per level; the build
// guarantees height ≤ RAYD_MAX_DEPTH.
template <bool ANY>
__device__ __forceinline__ void node_phase2(int* stack, int& sp, int& node, int& leaf, const float4* __restrict__ nodes,
                                            const Ray& r, float tmin, const Best& b) {
    while ((unsigned int)node < (unsigned int)RAYD_STACK_SENTINEL) {
        const float4* n = nodes + 4 * node;
        float4 n0 = node_load(n + 0);
        float4 n1 = node_load(n + 1);
        float4 n2 = node_load(n + 2);
        float4 n3 = node_load(n + 3);
        int2 refs = make_int2(__float_as_int(n3.x), __float_as_int(n3.y));
        float c0near, c0far, c1near, c1far;
        box_span(r, n0.x, n0.y, n0.z, n0.w, n2.x, n2.y, tmin, b.t, c0near, c0far);
        box_span(r, n1.x, n1.y, n1.z, n1.w, n2.z, n2.w, tmin, b.t, c1near, c1far);
        bool hit0 = c0near <= c0far;
        bool hit1 = c1near <= c1far;
        // Branch-free step (keeps the reference loads unconditional):
        // descend into the nearer hit child, push the other one when
        // both are hit, pop when none is.
        bool swap = hit1 && (!hit0 || (!ANY && c1near < c0near));
        int first = swap ? refs.y : refs.x;
        int second = swap ? refs.x : refs.y;
        int top = stack[sp];
        if (hit0 && hit1) stack[++sp] = second;
        bool any_hit = hit0 || hit1;
        node = any_hit ? first : top;
        sp -= any_hit ? 0 : 1;
        if (node < 0 && leaf >= 0) {  // postpone the first leaf found
            leaf = node;
            node = stack[sp--];
        }
        if (!__any_sync(__activemask(), leaf >= 0)) break;
    }
}

// traverse walks the BVH of child-pair nodes from node 0 (node and leaf
// phases until the walk ends).
template <bool ANY, class F = NoFilter>
__device__ __forceinline__ void traverse(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                         const Ray& r, float tmin, Best& b, const F& f = F()) {
    int stack[RAYD_MAX_DEPTH + 1];
    int sp = 0;
    stack[0] = RAYD_STACK_SENTINEL;
    int node = 0;
    int leaf = 0;  // >= 0: no postponed leaf
    while (node != RAYD_STACK_SENTINEL) {
        node_phase2<ANY>(stack, sp, node, leaf, nodes, r, tmin, b);
        if (leaf_phase<ANY>(stack, sp, node, leaf, tris, r, tmin, b, f)) return;
    }
}

// byte_float returns byte c of w as a float (exact; one I2F.U8 with a byte
// selector on sm_90).
__device__ __forceinline__ float byte_float(unsigned int w, unsigned int c) {
    return (float)((w >> (8u * c)) & 0xffu);
}

// Compare-and-swap of two (key, ref) pairs by key.
__device__ __forceinline__ void cas(unsigned int& ka, int& ra, unsigned int& kb, int& rb) {
    bool sw = kb < ka;
    unsigned int k = sw ? kb : ka;
    int q = sw ? rb : ra;
    kb = sw ? ka : kb;
    rb = sw ? ra : rb;
    ka = k;
    ra = q;
}

// node_phase4 is the first loop of the while-while walk over quad nodes. In
// closest mode the hit slots of a node are sorted by entry distance (keys
// are the float bits of the positive entry t; a miss is 0xffffffff), the
// nearest is descended into and the others are pushed, farthest first; in
// any mode they are taken in slot order. The stack holds at most three
// entries per quad level.
template <bool ANY>
__device__ __forceinline__ void node_phase4(int* stack, int& sp, int& node, int& leaf, const float4* __restrict__ nodes,
                                            const Ray& r, float tmin, const Best& b) {
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
        unsigned int key[4];
#pragma unroll
        for (unsigned int c = 0; c < 4; ++c) {
            float ax = fmaf(byte_float(qlx, c), sx, blx), bx = fmaf(byte_float(qhx, c), sx, bhx);
            float ay = fmaf(byte_float(qly, c), sy, bly), by = fmaf(byte_float(qhy, c), sy, bhy);
            float az = fmaf(byte_float(qlz, c), sz, blz), bz = fmaf(byte_float(qhz, c), sz, bhz);
            float tnear = fmaxf(fmaxf(fminf(ax, bx), fminf(ay, by)), fmaxf(fminf(az, bz), tmin));
            float tfar = fminf(fminf(fmaxf(ax, bx), fmaxf(ay, by)), fminf(fmaxf(az, bz), b.t));
            key[c] = (c < slots && tnear <= tfar) ? __float_as_uint(tnear) : 0xffffffffu;
        }
        int top = stack[sp];
        bool any_hit;
        if (!ANY) {
            cas(key[0], ref[0], key[1], ref[1]);
            cas(key[2], ref[2], key[3], ref[3]);
            cas(key[0], ref[0], key[2], ref[2]);
            cas(key[1], ref[1], key[3], ref[3]);
            cas(key[1], ref[1], key[2], ref[2]);
            if (key[3] != 0xffffffffu) stack[++sp] = ref[3];
            if (key[2] != 0xffffffffu) stack[++sp] = ref[2];
            if (key[1] != 0xffffffffu) stack[++sp] = ref[1];
            any_hit = key[0] != 0xffffffffu;
            node = any_hit ? ref[0] : top;
        } else {
            // Any mode needs no order: it descends into the lowest hit
            // slot and pushes the other hit slots, highest first, so they
            // come off the stack in slot order (measured on the compute
            // scene: slot order, visible 7.41 against 7.57 ms sorted).
            const bool h0 = key[0] != 0xffffffffu, h1 = key[1] != 0xffffffffu;
            const bool h2 = key[2] != 0xffffffffu, h3 = key[3] != 0xffffffffu;
            if (h3 && (h0 || h1 || h2)) stack[++sp] = ref[3];
            if (h2 && (h0 || h1)) stack[++sp] = ref[2];
            if (h1 && h0) stack[++sp] = ref[1];
            any_hit = h0 || h1 || h2 || h3;
            node = h0 ? ref[0] : h1 ? ref[1] : h2 ? ref[2] : h3 ? ref[3] : top;
        }
        sp -= any_hit ? 0 : 1;
        if (node < 0 && leaf >= 0) {  // postpone the first leaf found
            leaf = node;
            node = stack[sp--];
        }
        if (!__any_sync(__activemask(), leaf >= 0)) break;
    }
}

// traverse4 is traverse over quad nodes.
template <bool ANY, class F = NoFilter>
__device__ __forceinline__ void traverse4(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                          const Ray& r, float tmin, Best& b, const F& f = F()) {
    int stack[RAYD_QUAD_STACK];
    int sp = 0;
    stack[0] = RAYD_STACK_SENTINEL;
    int node = 0;
    int leaf = 0;
    while (node != RAYD_STACK_SENTINEL) {
        node_phase4<ANY>(stack, sp, node, leaf, nodes, r, tmin, b);
        if (leaf_phase<ANY>(stack, sp, node, leaf, tris, r, tmin, b, f)) return;
    }
}

// traverse8 is the traversal of compressed wide nodes (Width 8, accel/wide.go;
// host mirror Layout.traceWide), with the node and triangle groups of Ylitie
// et al. A node group (child base, imask << 8 | the hit internal slots not
// yet visited, as bits k = slot ^ x of the ray's octant order x) is the
// unit of the stack: the next child is the lowest set bit, and the group
// goes back on the stack while bits remain. Visiting a node tests its eight
// slot boxes (the quad node's arithmetic), makes the hit internal slots the
// current node group and yields a triangle group (triangle base | 1<<31, a
// 32-bit mask of the hit leaves' triangles). A lane holds one pending
// triangle group and pushes further ones; the warp leaves its node phase
// only when every active lane holds triangles (or has no node work left),
// so triangle tests run together. The stack holds at most one node group
// and one triangle group per level.
template <bool ANY, class F = NoFilter>
__device__ __forceinline__ void traverse8(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                          const Ray& r, float tmin, Best& b, const F& f = F()) {
    uint2 stack[RAYD_WIDE_STACK];
    int sp = 0;
    const unsigned int x = (r.ix < 0.0f ? 0u : 1u) | (r.iy < 0.0f ? 0u : 2u) | (r.iz < 0.0f ? 0u : 4u);
    unsigned int gbase = 0u, gbits = (1u << 8) | (1u << x);  // current node group
    unsigned int tbase = 0u, tmask = 0u;                     // pending triangle group
    for (;;) {
        for (;;) {
            if ((gbits & 0xffu) == 0u) {
                if (sp == 0) break;
                uint2 e = stack[--sp];
                if (e.x & 0x80000000u) {  // a postponed triangle group
                    if (tmask != 0u) {
                        ++sp;  // keep it: test the pending group first
                        break;
                    }
                    tbase = e.x & 0x7fffffffu;
                    tmask = e.y;
                    continue;
                }
                gbase = e.x;
                gbits = e.y;
            }
            unsigned int k = (unsigned int)__ffs(gbits & 0xffu) - 1u;
            gbits &= ~(1u << k);
            unsigned int s = k ^ x;
            unsigned int idx = gbase + (unsigned int)__popc((gbits >> 8) & ((1u << s) - 1u));
            if (gbits & 0xffu) stack[sp++] = make_uint2(gbase, gbits);
            const float4* n = nodes + 5LL * idx;
            float4 h = node_load(n + 0);
            float4 c = node_load(n + 1);
            float4 px = node_load(n + 2);
            float4 py = node_load(n + 3);
            float4 pz = node_load(n + 4);
            unsigned int meta = __float_as_uint(h.w);
            float sx = __fmul_rn(__uint_as_float((meta & 0xffu) << 23), r.ix);
            float sy = __fmul_rn(__uint_as_float(((meta >> 8) & 0xffu) << 23), r.iy);
            float sz = __fmul_rn(__uint_as_float(((meta >> 16) & 0xffu) << 23), r.iz);
            float blx = fmaf(h.x, r.ix, r.nlx), bhx = fmaf(h.x, r.ix, r.nhx);
            float bly = fmaf(h.y, r.iy, r.nly), bhy = fmaf(h.y, r.iy, r.nhy);
            float blz = fmaf(h.z, r.iz, r.nlz), bhz = fmaf(h.z, r.iz, r.nhz);
            unsigned int imask = meta >> 24;
            unsigned int hits = 0u, trimask = 0u;
#pragma unroll
            for (unsigned int q = 0; q < 8; ++q) {
                unsigned int sel = q & 3u;
                unsigned int wlx = __float_as_uint(q < 4 ? px.x : px.y), whx = __float_as_uint(q < 4 ? px.z : px.w);
                unsigned int wly = __float_as_uint(q < 4 ? py.x : py.y), why = __float_as_uint(q < 4 ? py.z : py.w);
                unsigned int wlz = __float_as_uint(q < 4 ? pz.x : pz.y), whz = __float_as_uint(q < 4 ? pz.z : pz.w);
                float ax = fmaf(byte_float(wlx, sel), sx, blx), bx = fmaf(byte_float(whx, sel), sx, bhx);
                float ay = fmaf(byte_float(wly, sel), sy, bly), by = fmaf(byte_float(why, sel), sy, bhy);
                float az = fmaf(byte_float(wlz, sel), sz, blz), bz = fmaf(byte_float(whz, sel), sz, bhz);
                float tnear = fmaxf(fmaxf(fminf(ax, bx), fminf(ay, by)), fmaxf(fminf(az, bz), tmin));
                float tfar = fminf(fminf(fmaxf(ax, bx), fmaxf(ay, by)), fminf(fmaxf(az, bz), b.t));
                unsigned int lm = (__float_as_uint(q < 4 ? c.z : c.w) >> (8u * sel)) & 0xffu;
                if (tnear <= tfar) {
                    if ((imask >> q) & 1u) hits |= 1u << (q ^ x);
                    else trimask |= ((1u << (lm & 7u)) - 1u) << (lm >> 3);
                }
            }
            gbase = __float_as_uint(c.x);
            gbits = imask << 8 | hits;
            if (trimask != 0u) {
                if (tmask == 0u) {
                    tbase = __float_as_uint(c.y);
                    tmask = trimask;
                } else {
                    stack[sp++] = make_uint2(__float_as_uint(c.y) | 0x80000000u, trimask);
                }
            }
            if (!__any_sync(__activemask(), tmask == 0u)) break;
        }
        while (tmask != 0u) {
            int j = __ffs(tmask) - 1;
            tmask &= tmask - 1u;
            if (test_leaf<ANY>(tris, ~(((int)tbase + j) << RAYD_LEAF_COUNT_BITS), r, tmin, b, f)) return;
        }
        if ((gbits & 0xffu) == 0u && sp == 0) return;
    }
}

// Brute force over every triangle slot (tests and reference).
template <bool ANY, class F = NoFilter>
__device__ __forceinline__ void brute(const float4* __restrict__ tris, int num_tris, const Ray& r, float tmin, Best& b,
                                      const F& f = F()) {
    for (int k = 0; k < num_tris; ++k) {
        if (test_leaf<ANY>(tris, ~(k << RAYD_LEAF_COUNT_BITS), r, tmin, b, f)) return;
    }
}

// trace_ray runs the traversal of a layout width (0: brute force over every
// triangle, 2: child-pair nodes, 4: quad nodes, 8: compressed wide nodes).
template <int W, bool ANY, class F = NoFilter>
__device__ __forceinline__ void trace_ray(const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
                                          const Ray& r, float tmin, Best& b, const F& f = F()) {
    if (W == 0) brute<ANY>(tris, num_tris, r, tmin, b, f);
    else if (W == 2) traverse<ANY>(nodes, tris, r, tmin, b, f);
    else if (W == 4) traverse4<ANY>(nodes, tris, r, tmin, b, f);
    else traverse8<ANY>(nodes, tris, r, tmin, b, f);
}

// segment_setup applies the segment rule of spec §4.1 to a → e: false when
// the segment is shorter than RAYD_MIN_SEGMENT (visible by definition), else
// the ray from a + 1e-5·dir along the unit direction with its tmax
// (max(L − 2e-5, 0)); a blocker is a hit with t in [1e-5, tmax].
__device__ __forceinline__ bool segment_setup(float3 a, float3 e, Ray& r, float& tmax) {
    float Dx = __fsub_rn(e.x, a.x), Dy = __fsub_rn(e.y, a.y), Dz = __fsub_rn(e.z, a.z);
    float L = __fsqrt_rn(dot3(Dx, Dy, Dz, Dx, Dy, Dz));
    if (!(L > RAYD_MIN_SEGMENT)) return false;
    float dx = __fdiv_rn(Dx, L), dy = __fdiv_rn(Dy, L), dz = __fdiv_rn(Dz, L);
    float ox = __fadd_rn(a.x, __fmul_rn(RAYD_MULTIPATH_BIAS, dx));
    float oy = __fadd_rn(a.y, __fmul_rn(RAYD_MULTIPATH_BIAS, dy));
    float oz = __fadd_rn(a.z, __fmul_rn(RAYD_MULTIPATH_BIAS, dz));
    float tm = __fsub_rn(L, RAYD_MIN_SEGMENT);
    tmax = tm > 0.0f ? tm : 0.0f;
    setup_ray(r, ox, oy, oz, dx, dy, dz);
    return true;
}

// Persistent-warp work distribution: with counter == nullptr every thread
// handles row blockIdx.x*blockDim.x + threadIdx.x once; otherwise each warp
// takes batches of 32 rows from *counter (zeroed by the host before the
// launch) until n rows are taken. blockDim.x must be a multiple of 32.
__device__ __forceinline__ long long first_batch(unsigned int* counter) {
    if (counter == nullptr) return (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    unsigned int base = 0;
    if ((threadIdx.x & 31u) == 0) base = atomicAdd(counter, 32u);
    return (long long)__shfl_sync(0xffffffffu, base, 0);
}
__device__ __forceinline__ long long next_batch(unsigned int* counter) {
    if (counter == nullptr) return 0x7fffffffffffffffLL;
    __syncwarp();
    unsigned int base = 0;
    if ((threadIdx.x & 31u) == 0) base = atomicAdd(counter, 32u);
    return (long long)__shfl_sync(0xffffffffu, base, 0);
}


// Dynamic row fetching (Aila & Laine 2009, "dynamic fetch"), the
// persistent launch of the width-2 and width-4 queries: each lane owns one
// row at a time; a lane whose row is answered idles until at least
// RAYD_DYN_REFILL lanes of its warp idle (or all do), and then the warp
// takes that many rows from *counter with one atomic. Every round runs one
// step (a node phase and a leaf phase of the while-while walk) for each
// lane that holds a walk. A lane no longer waits for the longest row of a
// 32-row batch, which is what bounds incoherent batches. Rows answer
// exactly as in a one-row-per-thread walk: a closest hit under the
// (t, prim) order and any-hit visibility do not depend on the order in
// which leaves are tested.
#define RAYD_DYN_REFILL 8

// dyn_rows answers rows 0..n−1 taken from *counter (zeroed by the host)
// with task T, which
// holds one row's state: begin(j) loads row j and returns whether a walk
// starts (with task.r, task.tmin, task.b and task.filter()); next() is
// called when a walk (or a row that needed none) ends and returns whether
// another walk of the same row starts (the bounces of a reflection chain);
// when it returns false the row's outputs are written. Every lane of the
// warp must call it (blockDim.x a multiple of 32).
template <int W, bool ANY, class T>
__device__ __forceinline__ void dyn_rows(const float4* __restrict__ nodes, const float4* __restrict__ tris, int n,
                                         unsigned int* counter, T& task) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int below = (1u << lane) - 1u;
    long long row = -1;
    bool drained = false;  // warp-uniform: every row has been handed out
    // The lane's walk (traverse / traverse4 state); node is the sentinel
    // while the lane has no walk in progress.
    int stack[W == 4 ? RAYD_QUAD_STACK : RAYD_MAX_DEPTH + 1];
    int sp = 0, node = RAYD_STACK_SENTINEL, leaf = 0;
    for (;;) {
        const unsigned int idle = __ballot_sync(0xffffffffu, row < 0);
        if (!drained && (__popc(idle) >= RAYD_DYN_REFILL || idle == 0xffffffffu)) {
            const unsigned int want = (unsigned int)__popc(idle);
            unsigned int base = 0;
            if (lane == 0) {
                base = counter != nullptr ? atomicAdd(counter, want)
                                          : (unsigned int)(blockIdx.x * blockDim.x + (threadIdx.x & ~31u));
            }
            base = __shfl_sync(0xffffffffu, base, 0);
            // Without a counter a warp answers its own 32 rows (the grid
            // covers n), fetched once while every lane idles.
            drained = counter == nullptr || (long long)base + want >= (long long)n;
            if (row < 0) {
                const long long j = (long long)base + __popc(idle & below);
                if (j < n) {
                    row = j;
                    sp = 0;
                    stack[0] = RAYD_STACK_SENTINEL;
                    node = task.begin(j) ? 0 : RAYD_STACK_SENTINEL;
                    leaf = 0;
                }
            }
        }
        if (__ballot_sync(0xffffffffu, row >= 0) == 0u) {
            if (drained) return;
            continue;
        }
        if (row >= 0) {
            if (node != RAYD_STACK_SENTINEL) {
                if constexpr (W == 2) node_phase2<ANY>(stack, sp, node, leaf, nodes, task.r, task.tmin, task.b);
                else node_phase4<ANY>(stack, sp, node, leaf, nodes, task.r, task.tmin, task.b);
                if (leaf_phase<ANY>(stack, sp, node, leaf, tris, task.r, task.tmin, task.b, task.filter())) {
                    node = RAYD_STACK_SENTINEL;
                    leaf = 0;
                }
            }
            if (node == RAYD_STACK_SENTINEL) {
                if (task.next()) {  // another walk of the same row
                    sp = 0;
                    stack[0] = RAYD_STACK_SENTINEL;
                    node = 0;
                    leaf = 0;
                } else {
                    row = -1;
                }
            }
        }
    }
}

}  // namespace rayd
