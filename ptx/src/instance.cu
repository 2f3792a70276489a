// instance.cu: intersect over instances (one level): a top-level BVH over
// the instances' world boxes (built by tlas_build.cu, or on the host above
// accel.TLASDeviceMax instances: accel/instance_tlas.go) and one
// bottom-level BVH per geometry in the layout of bvh_build.cu, walked in the
// geometry's object space. The answer is ref.InstancedScene's bit for
// bit: the object-space ray is geom.ObjectRay operation for operation, the
// BLAS walk and the watertight test are rayd.cuh's, and the winner is the
// smallest t, then the lowest instance id, then the lowest face id.
//
// Parameters:
//   tlas       float4[4·nodes]   child-pair nodes (root 0, never tested);
//                                a leaf ~ref = first << 3 | (count − 1)
//                                indexes tlas_order
//   tlas_order int[num_inst]     instance ids in leaf order
//   inst       float4[6·num_inst] per instance: T[0..3], T[4..7], T[8..11],
//                                Inv[0..3], Inv[4..7], {Inv[8], geometry
//                                (int bits), instance mask (uint bits), 0}
//   tlas_scale float             relative inflation of the world slab test's
//                                origin term (the stored boxes carry theirs)
//   geo_ptrs   u64[2·geometries] BLAS nodes and triangle records
//   geo_info   int[2·geometries] BLAS triangle count, first global face id
//   counter    uint32[1] | null  the persistent launch of rayd_intersect
// The outputs are those of rayd_intersect plus out_inst (the instance id,
// −1 on a miss); every row 0..n−1 is written.
//
// The masked variants (rayd_intersect_instanced_masked*) take three more
// parameters, each may be null:
//   tmin       float[n]          per-row interval start (null: RAYD_TMIN)
//   ray_mask   uint8[n]          per-row visibility mask (null: 0xff)
//   mesh_mask  uint8[geometries] the visibility mask of every geometry's
//                                mesh (null: 0xff)
// A row sees instance i of geometry g only when ray_mask & (the instance
// mask, record word 22) and ray_mask & mesh_mask[g] are both non-zero; the
// test runs before the object-space ray is formed. With all three null they
// write bitwise what the unmasked kernels write: those read the instance
// mask too, with the ray mask 0xff (an instance of mask 0 is never hit), so
// instance masks alone never need the masked variants.
#include "rayd.cuh"

using namespace rayd;

#define INST_THREADS 128
#define INST_NO_PRIM 0xffffffffu
#define INST_STACK 64

namespace {

// InstLimits is a row's limits: the interval start, the ray mask and the
// geometries' mesh masks (unused unless MASKED).
struct InstLimits {
    float tmin;
    unsigned int ray_mask;
    const unsigned char* __restrict__ mesh_mask;
};

struct InstBest {
    float t, u, v;
    int slot;
    int inst;  // −1: no hit yet
    int geo;
};

__device__ __forceinline__ float3 load3i(const float* __restrict__ p, long long i) {
    return make_float3(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
}
__device__ __forceinline__ void store3i(float* __restrict__ p, long long i, float x, float y, float z) {
    p[3 * i] = x;
    p[3 * i + 1] = y;
    p[3 * i + 2] = z;
}

// row3: ((a·x + b·y) + c·z), every operation rounded (geom.ObjectRay).
__device__ __forceinline__ float row3(float a, float b, float c, float x, float y, float z) {
    return __fadd_rn(__fadd_rn(__fmul_rn(a, x), __fmul_rn(b, y)), __fmul_rn(c, z));
}

// test_instance walks the BLAS of instance id for the world ray (o, d) and
// keeps its closest hit in best under the (t, instance, face) order. An
// instance whose mask shares no bit with the row's mask (0xff unless
// MASKED: only an instance of mask 0 is skipped) or, when MASKED, whose
// geometry's mesh mask shares none is skipped before the object-space ray
// is formed; when MASKED the BLAS walk starts at lim.tmin.
template <int W, bool MASKED>
__device__ __forceinline__ void test_instance(int id, const float4* __restrict__ inst,
                                              const unsigned long long* __restrict__ geo_ptrs,
                                              const int* __restrict__ geo_info, float3 o, float3 d,
                                              const InstLimits& lim, InstBest& best) {
    if (MASKED) {
        const float4 w = __ldg(&inst[6LL * id + 5]);  // {Inv[8], geometry, instance mask, 0}
        if ((__float_as_uint(w.z) & lim.ray_mask) == 0u) return;
        if (lim.mesh_mask && ((unsigned int)__ldg(&lim.mesh_mask[__float_as_int(w.y)]) & lim.ray_mask) == 0u) return;
    }
    const float4 r0 = __ldg(&inst[6LL * id + 0]), r1 = __ldg(&inst[6LL * id + 1]), r2 = __ldg(&inst[6LL * id + 2]);
    const float4 i0 = __ldg(&inst[6LL * id + 3]), i1 = __ldg(&inst[6LL * id + 4]), i2 = __ldg(&inst[6LL * id + 5]);
    if (!MASKED && (__float_as_uint(i2.z) & 0xffu) == 0u) return;
    const int geo = __float_as_int(i2.y);
    const float qx = __fsub_rn(o.x, r0.w), qy = __fsub_rn(o.y, r1.w), qz = __fsub_rn(o.z, r2.w);
    const float ox = row3(i0.x, i0.y, i0.z, qx, qy, qz);
    const float oy = row3(i0.w, i1.x, i1.y, qx, qy, qz);
    const float oz = row3(i1.z, i1.w, i2.x, qx, qy, qz);
    const float dx = row3(i0.x, i0.y, i0.z, d.x, d.y, d.z);
    const float dy = row3(i0.w, i1.x, i1.y, d.x, d.y, d.z);
    const float dz = row3(i1.z, i1.w, i2.x, d.x, d.y, d.z);
    const int num_tris = geo_info[2 * geo];
    if (num_tris <= 0) return;
    const float4* nodes = reinterpret_cast<const float4*>(geo_ptrs[2 * geo]);
    const float4* tris = reinterpret_cast<const float4*>(geo_ptrs[2 * geo + 1]);
    Ray r;
    setup_ray(r, ox, oy, oz, dx, dy, dz);
    Best b;
    b.t = best.t;
    b.prim = INST_NO_PRIM;
    b.slot = -1;
    b.u = 0.0f;
    b.v = 0.0f;
    trace_ray<W, false>(nodes, tris, num_tris, r, MASKED ? lim.tmin : RAYD_TMIN, b);
    if (b.prim == INST_NO_PRIM) return;
    if (best.inst < 0 || b.t < best.t || (b.t == best.t && id < best.inst)) {
        best.t = b.t; best.u = b.u; best.v = b.v; best.slot = b.slot; best.inst = id; best.geo = geo;
    }
}

template <int W, bool MASKED>
__device__ __forceinline__ void test_tlas_leaf(int ref, const int* __restrict__ order, const float4* __restrict__ inst,
                                               const unsigned long long* __restrict__ geo_ptrs,
                                               const int* __restrict__ geo_info, float3 o, float3 d,
                                               const InstLimits& lim, InstBest& best) {
    unsigned int payload = ~(unsigned int)ref;
    int first = (int)(payload >> RAYD_LEAF_COUNT_BITS);
    int end = first + (int)(payload & ((1u << RAYD_LEAF_COUNT_BITS) - 1u)) + 1;
    for (int k = first; k < end; ++k) test_instance<W, MASKED>(order[k], inst, geo_ptrs, geo_info, o, d, lim, best);
}

// closest_instanced: the top-level walk, nearer child first (boxes clipped
// to [tmin, best t], tmin the row's when MASKED).
template <int W, bool MASKED>
__device__ __forceinline__ void closest_instanced(const float4* __restrict__ tlas, const int* __restrict__ order,
                                                  const float4* __restrict__ inst, float tlas_scale,
                                                  const unsigned long long* __restrict__ geo_ptrs,
                                                  const int* __restrict__ geo_info, float3 o, float3 d,
                                                  const InstLimits& lim, InstBest& best) {
    const float tmin = MASKED ? lim.tmin : RAYD_TMIN;
    Ray wr;
    setup_ray(wr, o.x, o.y, o.z, d.x, d.y, d.z);
    const float m = max2(max2(fabsf(o.x), fabsf(o.y)), fabsf(o.z));
    const float e = __fmul_rn(m, tlas_scale);
    wr.nlx = -__fmul_rn(__fadd_rn(o.x, e), wr.ix);
    wr.nly = -__fmul_rn(__fadd_rn(o.y, e), wr.iy);
    wr.nlz = -__fmul_rn(__fadd_rn(o.z, e), wr.iz);
    wr.nhx = -__fmul_rn(__fsub_rn(o.x, e), wr.ix);
    wr.nhy = -__fmul_rn(__fsub_rn(o.y, e), wr.iy);
    wr.nhz = -__fmul_rn(__fsub_rn(o.z, e), wr.iz);
    int stack[INST_STACK];
    float near[INST_STACK];
    int sp = 0;
    int node = 0;
    for (;;) {
        const float4 n0 = __ldg(&tlas[4 * node + 0]), n1 = __ldg(&tlas[4 * node + 1]);
        const float4 n2 = __ldg(&tlas[4 * node + 2]), n3 = __ldg(&tlas[4 * node + 3]);
        float tn0, tf0, tn1, tf1;
        box_span(wr, n0.x, n0.y, n0.z, n0.w, n2.x, n2.y, tmin, best.t, tn0, tf0);
        box_span(wr, n1.x, n1.y, n1.z, n1.w, n2.z, n2.w, tmin, best.t, tn1, tf1);
        const int c0 = __float_as_int(n3.x), c1 = __float_as_int(n3.y);
        bool h0 = tn0 <= tf0, h1 = tn1 <= tf1;
        if (h0 && c0 < 0) { test_tlas_leaf<W, MASKED>(c0, order, inst, geo_ptrs, geo_info, o, d, lim, best); h0 = false; }
        if (h1 && c1 < 0) { test_tlas_leaf<W, MASKED>(c1, order, inst, geo_ptrs, geo_info, o, d, lim, best); h1 = false; }
        if (h0 && h1) {
            const bool first0 = tn0 <= tn1;
            if (sp < INST_STACK) {
                stack[sp] = first0 ? c1 : c0;
                near[sp] = first0 ? tn1 : tn0;
                ++sp;
            }
            node = first0 ? c0 : c1;
            continue;
        }
        if (h0) { node = c0; continue; }
        if (h1) { node = c1; continue; }
        bool found = false;
        while (sp > 0) {
            --sp;
            if (near[sp] <= best.t) { node = stack[sp]; found = true; break; }
        }
        if (!found) return;
    }
}

template <int W, bool MASKED>
__device__ __forceinline__ void instanced_row(
    const float4* __restrict__ tlas, const int* __restrict__ order, const float4* __restrict__ inst, int num_inst,
    float tlas_scale, const unsigned long long* __restrict__ geo_ptrs, const int* __restrict__ geo_info,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global, int* __restrict__ out_inst,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ mesh_mask, long long i) {
    const float3 oi = load3i(o, i), di = load3i(d, i);
    InstBest b;
    b.t = tmax ? tmax[i] : RAYD_FLT_MAX;
    b.u = 0.0f; b.v = 0.0f; b.slot = -1; b.inst = -1; b.geo = -1;
    const bool act = (active == nullptr || active[i] != 0) && num_inst > 0;
    if (act && finite3(oi.x, oi.y, oi.z) && finite3(di.x, di.y, di.z)) {
        InstLimits lim;
        lim.tmin = RAYD_TMIN;
        lim.ray_mask = 0xffu;
        lim.mesh_mask = nullptr;
        if (MASKED) {
            if (tmin) lim.tmin = tmin[i];
            if (ray_mask) lim.ray_mask = (unsigned int)ray_mask[i];
            lim.mesh_mask = mesh_mask;
        }
        closest_instanced<W, MASKED>(tlas, order, inst, tlas_scale, geo_ptrs, geo_info, oi, di, lim, b);
    }
    const bool geo = (flags & 1u) != 0, shade = (flags & 2u) != 0, uvf = (flags & 4u) != 0;
    if (b.inst < 0) {
        out_t[i] = __int_as_float(0x7f800000);
        if (geo) {
            if (out_p) store3i(out_p, i, 0.0f, 0.0f, 0.0f);
            if (out_geo_n) store3i(out_geo_n, i, 0.0f, 0.0f, 0.0f);
            if (out_bary) store3i(out_bary, i, 0.0f, 0.0f, 0.0f);
            if (out_shape) out_shape[i] = -1;
            if (out_prim) out_prim[i] = -1;
            if (out_local) out_local[i] = -1;
            if (out_global) out_global[i] = -1;
            if (out_inst) out_inst[i] = -1;
        }
        if (shade && out_n) store3i(out_n, i, 0.0f, 0.0f, 0.0f);
        if (uvf && out_uv) { out_uv[2 * i] = 0.0f; out_uv[2 * i + 1] = 0.0f; }
        return;
    }
    out_t[i] = b.t;
    const float4* tris = reinterpret_cast<const float4*>(geo_ptrs[2 * b.geo + 1]);
    const float4 p0 = __ldg(&tris[3LL * b.slot + 0]);
    const float4 p1 = __ldg(&tris[3LL * b.slot + 1]);
    const float4 p2 = __ldg(&tris[3LL * b.slot + 2]);
    float nx = 0.0f, ny = 0.0f, nz = 0.0f;
    if (geo || shade) {
        // geom.FaceCross in object space, then geom.WorldNormal.
        const float e1x = __fsub_rn(p1.x, p0.x), e1y = __fsub_rn(p1.y, p0.y), e1z = __fsub_rn(p1.z, p0.z);
        const float e2x = __fsub_rn(p2.x, p0.x), e2y = __fsub_rn(p2.y, p0.y), e2z = __fsub_rn(p2.z, p0.z);
        const float cx = __fsub_rn(__fmul_rn(e1y, e2z), __fmul_rn(e1z, e2y));
        const float cy = __fsub_rn(__fmul_rn(e1z, e2x), __fmul_rn(e1x, e2z));
        const float cz = __fsub_rn(__fmul_rn(e1x, e2y), __fmul_rn(e1y, e2x));
        const float4 i0 = __ldg(&inst[6LL * b.inst + 3]), i1 = __ldg(&inst[6LL * b.inst + 4]);
        const float4 i2 = __ldg(&inst[6LL * b.inst + 5]);
        // Column k of Inv: (Inv[k], Inv[3+k], Inv[6+k]).
        const float wx = row3(i0.x, i0.w, i1.z, cx, cy, cz);
        const float wy = row3(i0.y, i1.x, i1.w, cx, cy, cz);
        const float wz = row3(i0.z, i1.y, i2.x, cx, cy, cz);
        const float l2 = dot3(wx, wy, wz, wx, wy, wz);
        const float s = rsqrt_rn((l2 > RAYD_NORMAL_FLOOR || l2 != l2) ? l2 : RAYD_NORMAL_FLOOR);
        nx = __fmul_rn(wx, s); ny = __fmul_rn(wy, s); nz = __fmul_rn(wz, s);
    }
    if (geo) {
        if (out_p)
            store3i(out_p, i, __fadd_rn(oi.x, __fmul_rn(b.t, di.x)), __fadd_rn(oi.y, __fmul_rn(b.t, di.y)),
                    __fadd_rn(oi.z, __fmul_rn(b.t, di.z)));
        if (out_geo_n) store3i(out_geo_n, i, nx, ny, nz);
        if (out_bary) store3i(out_bary, i, __fsub_rn(__fsub_rn(1.0f, b.u), b.v), b.u, b.v);
        const int local = __float_as_int(p2.w);
        const int prim = geo_info[2 * b.geo + 1] + local;
        if (out_shape) out_shape[i] = b.geo;
        if (out_prim) out_prim[i] = prim;
        if (out_local) out_local[i] = local;
        if (out_global) out_global[i] = prim;
        if (out_inst) out_inst[i] = b.inst;
    }
    if (shade && out_n) store3i(out_n, i, nx, ny, nz);
    if (uvf && out_uv) { out_uv[2 * i] = b.u; out_uv[2 * i + 1] = b.v; }
}

// instanced_kernel answers rows 0..n−1: one row per thread, or with a
// counter the persistent warps' 32-row batches (first_batch, rayd.cuh).
template <int W, bool MASKED = false>
__device__ __forceinline__ void instanced_kernel(
    const float4* __restrict__ tlas, const int* __restrict__ order, const float4* __restrict__ inst, int num_inst,
    float tlas_scale, const unsigned long long* __restrict__ geo_ptrs, const int* __restrict__ geo_info,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global, int* __restrict__ out_inst, unsigned int* counter,
    const float* __restrict__ tmin = nullptr, const unsigned char* __restrict__ ray_mask = nullptr,
    const unsigned char* __restrict__ mesh_mask = nullptr) {
    for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
        const long long i = base + (threadIdx.x & 31u);
        if (i < n) {
            instanced_row<W, MASKED>(tlas, order, inst, num_inst, tlas_scale, geo_ptrs, geo_info, o, d, tmax, active, n,
                                     flags, out_t, out_p, out_n, out_geo_n, out_uv, out_bary, out_shape, out_prim,
                                     out_local, out_global, out_inst, tmin, ray_mask, mesh_mask, i);
        }
    }
}

}  // namespace

#define INSTANCED_ARGS                                                                                          \
    tlas, order, inst, num_inst, tlas_scale, geo_ptrs, geo_info, o, d, tmax, active, n, flags, out_t, out_p, \
        out_n, out_geo_n, out_uv, out_bary, out_shape, out_prim, out_local, out_global, out_inst, counter

// rayd_intersect_instanced: BLASes of child-pair nodes; one thread per row
// (counter null) or persistent warps (counter as in rayd_intersect).
extern "C" __global__ void __launch_bounds__(INST_THREADS) rayd_intersect_instanced(
    const float4* __restrict__ tlas, const int* __restrict__ order, const float4* __restrict__ inst, int num_inst,
    float tlas_scale, const unsigned long long* __restrict__ geo_ptrs, const int* __restrict__ geo_info,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global, int* __restrict__ out_inst, unsigned int* counter) {
    instanced_kernel<2>(INSTANCED_ARGS);
}

// rayd_intersect_instanced4: BLASes of quad nodes.
extern "C" __global__ void __launch_bounds__(INST_THREADS) rayd_intersect_instanced4(
    const float4* __restrict__ tlas, const int* __restrict__ order, const float4* __restrict__ inst, int num_inst,
    float tlas_scale, const unsigned long long* __restrict__ geo_ptrs, const int* __restrict__ geo_info,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global, int* __restrict__ out_inst, unsigned int* counter) {
    instanced_kernel<4>(INSTANCED_ARGS);
}

// rayd_intersect_instanced_masked: rayd_intersect_instanced with per-row
// tmin and ray masks, the instances' masks and the meshes' masks.
extern "C" __global__ void __launch_bounds__(INST_THREADS) rayd_intersect_instanced_masked(
    const float4* __restrict__ tlas, const int* __restrict__ order, const float4* __restrict__ inst, int num_inst,
    float tlas_scale, const unsigned long long* __restrict__ geo_ptrs, const int* __restrict__ geo_info,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global, int* __restrict__ out_inst, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ mesh_mask) {
    instanced_kernel<2, true>(INSTANCED_ARGS, tmin, ray_mask, mesh_mask);
}

// rayd_intersect_instanced_masked4: rayd_intersect_instanced_masked over
// quad-node BLASes.
extern "C" __global__ void __launch_bounds__(INST_THREADS) rayd_intersect_instanced_masked4(
    const float4* __restrict__ tlas, const int* __restrict__ order, const float4* __restrict__ inst, int num_inst,
    float tlas_scale, const unsigned long long* __restrict__ geo_ptrs, const int* __restrict__ geo_info,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const unsigned char* __restrict__ active, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global, int* __restrict__ out_inst, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ mesh_mask) {
    instanced_kernel<4, true>(INSTANCED_ARGS, tmin, ray_mask, mesh_mask);
}
