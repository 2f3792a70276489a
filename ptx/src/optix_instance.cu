// optix_instance.cu: OptiX programs of the instance layer (package accel,
// OptiXInstanceLayer): intersect over one level of instances, an IAS over
// OptixInstance records (transform = the instance's 3×4, instanceId = its
// index, visibilityMask = its mask) placing one triangle GAS per geometry
// built from that mesh's object-space vertices. The record is
// ref.InstancedScene's with OptiX's triangle test: OptiX maps the world ray
// into the instance's object space with its own arithmetic and reports t
// (world = object, the direction is not renormalised), the barycentrics,
// the GAS-local face and the instance; every field derived from them uses
// the operation sequences of instance.cu (geom.FaceCross, geom.WorldNormal,
// p = o + t·d), so only the triangle test (and exact ties) differ from the
// CUDA BVH.
//
// Pipelines (each: one raygen, one miss, one hit group; maxTraceDepth 1;
// single-level instancing, traversable graph depth 2; built-in triangles; 5
// payload words, 2 attributes; launch parameters in `params`; launch
// width = rows):
//   intersect         __raygen__intersect_instanced         __miss__noop  __closesthit__instanced
//   intersect_limits  __raygen__intersect_instanced_limits  __miss__noop  __closesthit__instanced
//   intersect_masked  __raygen__intersect_instanced_masked  __miss__noop  __closesthit__instanced
//                     + any hit __anyhit__mesh_mask
// The plain form traces [1e-6, tmax] with ray mask 0xff. The limits form
// reads the row's tmin (params.tmin) and mask (params.ray_mask) and passes
// the mask to optixTrace, so OptiX skips every instance whose mask shares
// no bit with it. The masked form adds the mesh masks: it traces with
// OPTIX_RAY_FLAG_ENFORCE_ANYHIT and __anyhit__mesh_mask discards every
// candidate whose geometry's mask (params.geo_mask) shares no bit with the
// row's mask. A hit thus counts only when the row's mask shares a bit with
// the instance's mask and with the hit mesh's mask. The host runs the
// limits form while a query carries limits, the masked one while a mesh
// mask differs from 0xff.
//
// Compile: nvcc -ptx -arch=compute_86 -O3 -std=c++17 (not compute_90: see
// optix_device.cuh).
#include "rayd.cuh"
#include "optix_device.cuh"

#define NO_HIT 0xffffffffu

// Params is the launch-parameter block (192 bytes; mirrored by
// accel/optix_instance_query.go). Pointers marked "| null" are optional.
struct Params {
    unsigned long long handle;          // @0   IAS traversable
    const float* o;                     // @8   float[3n] ray origins
    const float* d;                     // @16  float[3n] ray directions
    const float* tmax;                  // @24  float[n] | null
    const unsigned char* active;        // @32  uint8[n] | null
    const float* tmin;                  // @40  limits/masked: float[n] | null
    const unsigned char* ray_mask;      // @48  limits/masked: uint8[n] | null
    const unsigned char* geo_mask;      // @56  masked: uint8[G] | null
    const float4* inst;                 // @64  float4[6·instances]: accel.InstanceRecords
    const unsigned long long* geo_ptrs; // @72  u64[2G]: object vertices float[3V], faces int[3F]
    const int* geo_first;               // @80  int[G]: first global face of each geometry
    float* out_t;                       // @88  float[n]
    float* out_p;                       // @96  float[3n] | null
    float* out_n;                       // @104 float[3n] | null
    float* out_geo_n;                   // @112 float[3n] | null
    float* out_uv;                      // @120 float[2n] | null
    float* out_bary;                    // @128 float[3n] | null
    int* out_shape;                     // @136 int[n] | null
    int* out_prim;                      // @144 int[n] | null
    int* out_local;                     // @152 int[n] | null
    int* out_global;                    // @160 int[n] | null
    int* out_inst;                      // @168 int[n] | null
    int n;                              // @176 rows (launch width)
    unsigned int flags;                 // @180 1 Geometric, 2 ShadingN, 4 UV
    unsigned long long pad;             // @184
};

extern "C" __constant__ Params params;

using namespace rayd;

namespace {

__device__ __forceinline__ float3 load3(const float* __restrict__ p, long long i) {
    return make_float3(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
}
__device__ __forceinline__ void store3(float* __restrict__ p, long long i, float x, float y, float z) {
    p[3 * i] = x;
    p[3 * i + 1] = y;
    p[3 * i + 2] = z;
}

// row3: ((a·x + b·y) + c·z), every operation rounded (instance.cu).
__device__ __forceinline__ float row3(float a, float b, float c, float x, float y, float z) {
    return __fadd_rn(__fadd_rn(__fmul_rn(a, x), __fmul_rn(b, y)), __fmul_rn(c, z));
}

// The geometry (mesh) of instance id: word 21 of its record.
__device__ __forceinline__ int instance_geometry(unsigned int id) { return __float_as_int(params.inst[6LL * id + 5].y); }

// Object-space vertex v of geometry geo.
__device__ __forceinline__ float3 geo_vertex(const float* __restrict__ verts, int v) {
    return make_float3(verts[3LL * v], verts[3LL * v + 1], verts[3LL * v + 2]);
}

// A ray is traced only when the row is active, its origin and direction are
// finite, its direction is not zero and tmin ≤ tmax (false for a NaN tmax):
// the reference finds no hit for any other row, and OptiX's behaviour for
// such rays is undefined.
__device__ __forceinline__ bool traceable(long long i, float3 o, float3 d, float tmin, float tmax) {
    bool act = params.active == nullptr || params.active[i] != 0;
    return act && finite3(o.x, o.y, o.z) && finite3(d.x, d.y, d.z) && (d.x != 0.0f || d.y != 0.0f || d.z != 0.0f) &&
           tmax >= tmin;
}

// write_miss stores the empty record of row i (instance.cu's miss).
__device__ __forceinline__ void write_miss(long long i, bool geo, bool shade, bool uvf) {
    params.out_t[i] = __int_as_float(0x7f800000);
    if (geo) {
        if (params.out_p) store3(params.out_p, i, 0.0f, 0.0f, 0.0f);
        if (params.out_geo_n) store3(params.out_geo_n, i, 0.0f, 0.0f, 0.0f);
        if (params.out_bary) store3(params.out_bary, i, 0.0f, 0.0f, 0.0f);
        if (params.out_shape) params.out_shape[i] = -1;
        if (params.out_prim) params.out_prim[i] = -1;
        if (params.out_local) params.out_local[i] = -1;
        if (params.out_global) params.out_global[i] = -1;
        if (params.out_inst) params.out_inst[i] = -1;
    }
    if (shade && params.out_n) store3(params.out_n, i, 0.0f, 0.0f, 0.0f);
    if (uvf && params.out_uv) {
        params.out_uv[2 * i] = 0.0f;
        params.out_uv[2 * i + 1] = 0.0f;
    }
}

// write_hit stores row i's record for a hit at t, (u, v) on GAS-local face
// local of instance id (instance.cu after its walk).
__device__ __forceinline__ void write_hit(long long i, bool geo, bool shade, bool uvf, float3 oi, float3 di, float t,
                                          float u, float v, int local, unsigned int id) {
    params.out_t[i] = t;
    const int g = instance_geometry(id);
    float nx = 0.0f, ny = 0.0f, nz = 0.0f;
    if (geo || shade) {
        const float* verts = reinterpret_cast<const float*>(params.geo_ptrs[2 * g]);
        const int* faces = reinterpret_cast<const int*>(params.geo_ptrs[2 * g + 1]);
        const float3 p0 = geo_vertex(verts, faces[3LL * local]);
        const float3 p1 = geo_vertex(verts, faces[3LL * local + 1]);
        const float3 p2 = geo_vertex(verts, faces[3LL * local + 2]);
        // geom.FaceCross in object space, then geom.WorldNormal.
        const float e1x = __fsub_rn(p1.x, p0.x), e1y = __fsub_rn(p1.y, p0.y), e1z = __fsub_rn(p1.z, p0.z);
        const float e2x = __fsub_rn(p2.x, p0.x), e2y = __fsub_rn(p2.y, p0.y), e2z = __fsub_rn(p2.z, p0.z);
        const float cx = __fsub_rn(__fmul_rn(e1y, e2z), __fmul_rn(e1z, e2y));
        const float cy = __fsub_rn(__fmul_rn(e1z, e2x), __fmul_rn(e1x, e2z));
        const float cz = __fsub_rn(__fmul_rn(e1x, e2y), __fmul_rn(e1y, e2x));
        const float4 i0 = params.inst[6LL * id + 3], i1 = params.inst[6LL * id + 4], i2 = params.inst[6LL * id + 5];
        // Column k of Inv: (Inv[k], Inv[3+k], Inv[6+k]).
        const float wx = row3(i0.x, i0.w, i1.z, cx, cy, cz);
        const float wy = row3(i0.y, i1.x, i1.w, cx, cy, cz);
        const float wz = row3(i0.z, i1.y, i2.x, cx, cy, cz);
        const float l2 = dot3(wx, wy, wz, wx, wy, wz);
        const float s = rsqrt_rn((l2 > RAYD_NORMAL_FLOOR || l2 != l2) ? l2 : RAYD_NORMAL_FLOOR);
        nx = __fmul_rn(wx, s);
        ny = __fmul_rn(wy, s);
        nz = __fmul_rn(wz, s);
    }
    if (geo) {
        if (params.out_p)
            store3(params.out_p, i, __fadd_rn(oi.x, __fmul_rn(t, di.x)), __fadd_rn(oi.y, __fmul_rn(t, di.y)),
                   __fadd_rn(oi.z, __fmul_rn(t, di.z)));
        if (params.out_geo_n) store3(params.out_geo_n, i, nx, ny, nz);
        if (params.out_bary) store3(params.out_bary, i, __fsub_rn(__fsub_rn(1.0f, u), v), u, v);
        const int prim = params.geo_first[g] + local;
        if (params.out_shape) params.out_shape[i] = g;
        if (params.out_prim) params.out_prim[i] = prim;
        if (params.out_local) params.out_local[i] = local;
        if (params.out_global) params.out_global[i] = prim;
        if (params.out_inst) params.out_inst[i] = (int)id;
    }
    if (shade && params.out_n) store3(params.out_n, i, nx, ny, nz);
    if (uvf && params.out_uv) {
        params.out_uv[2 * i] = u;
        params.out_uv[2 * i + 1] = v;
    }
}

// intersect_program: the closest hit of row i over the instances within
// [tmin, tmax[i] (FLT_MAX when null)], the record of spec §1.6 per
// params.flags plus the instance id. LIMITS reads the row's tmin and mask;
// ANYHIT runs __anyhit__mesh_mask on every candidate.
template <bool LIMITS, bool ANYHIT>
__device__ __forceinline__ void intersect_program() {
    const long long i = optix::launch_index_x();
    if (i >= params.n) return;
    const float3 oi = load3(params.o, i), di = load3(params.d, i);
    const float tmax = params.tmax ? params.tmax[i] : RAYD_FLT_MAX;
    const float tmin = LIMITS && params.tmin != nullptr ? params.tmin[i] : RAYD_TMIN;
    const unsigned int mask = LIMITS && params.ray_mask != nullptr ? (unsigned int)params.ray_mask[i] : 0xffu;
    unsigned int p[5] = {0u, 0u, 0u, NO_HIT, NO_HIT};
    if (traceable(i, oi, di, tmin, tmax)) {
        optix::trace_mask<5>(params.handle, oi.x, oi.y, oi.z, di.x, di.y, di.z, tmin, fminf(tmax, RAYD_FLT_MAX), mask,
                             ANYHIT ? optix::kRayFlagEnforceAnyHit : optix::kRayFlagDisableAnyHit, p);
    }
    const unsigned int flags = params.flags;
    const bool geo = (flags & 1u) != 0, shade = (flags & 2u) != 0, uvf = (flags & 4u) != 0;
    if (p[4] == NO_HIT) {
        write_miss(i, geo, shade, uvf);
        return;
    }
    write_hit(i, geo, shade, uvf, oi, di, __uint_as_float(p[0]), __uint_as_float(p[1]), __uint_as_float(p[2]),
              (int)p[3], p[4]);
}

}  // namespace

extern "C" {

__global__ void __raygen__intersect_instanced() { intersect_program<false, false>(); }
__global__ void __raygen__intersect_instanced_limits() { intersect_program<true, false>(); }
__global__ void __raygen__intersect_instanced_masked() { intersect_program<true, true>(); }

// __anyhit__mesh_mask: the masked program's filter. A candidate counts only
// when the mask of its geometry (the mesh the instance places) shares a bit
// with the row's mask; otherwise OptiX discards it and traversal goes on.
// (The instance's own mask was tested by OptiX before its GAS was entered.)
__global__ void __anyhit__mesh_mask() {
    const int g = instance_geometry(optix::instance_id());
    const unsigned int gm = params.geo_mask ? (unsigned int)params.geo_mask[g] : 0xffu;
    const unsigned int rm = params.ray_mask ? (unsigned int)params.ray_mask[optix::launch_index_x()] : 0xffu;
    if ((gm & rm) == 0u) optix::ignore_intersection();
}

// __closesthit__instanced: payload (t, u, v, GAS-local face, instance id)
// of the closest hit.
__global__ void __closesthit__instanced() {
    float u, v;
    optix::triangle_barycentrics(u, v);
    optix::set_payload<0>(__float_as_uint(optix::ray_tmax()));
    optix::set_payload<1>(__float_as_uint(u));
    optix::set_payload<2>(__float_as_uint(v));
    optix::set_payload<3>(optix::primitive_index());
    optix::set_payload<4>(optix::instance_id());
}

// __miss__noop: a miss leaves the payload as the raygen initialised it.
__global__ void __miss__noop() {}

}  // extern "C"
