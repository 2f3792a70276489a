// optix_trace.cu: OptiX programs of rayd-go's OptiX backend (package accel,
// OptiX type): closest hit (intersect, full record and t only), specular
// reflection chains and segment visibility over one triangle GAS built from
// the scene-global vertex/face tables (spec §1.2), so the primitive index
// OptiX reports is the global face id.
//
// Pipelines (each: one raygen, one miss, one hit group; maxTraceDepth 1;
// single-GAS traversable graph; built-in triangles; 4 payload words, 2
// attributes; launch parameters in `params`; launch width = rows):
//   intersect     __raygen__intersect     __miss__noop    __closesthit__hit
//   intersect_t   __raygen__intersect_t   __miss__noop    __closesthit__t
//   reflections   __raygen__reflections   __miss__noop    __closesthit__hit
//   visible       __raygen__visible       __miss__visible __closesthit__visible
// and their masked forms (same miss and closest hit, any hit __anyhit__mask):
//   intersect_masked    __raygen__intersect_masked
//   intersect_t_masked  __raygen__intersect_t_masked
//   reflections_masked  __raygen__reflections_masked
//   visible_masked      __raygen__visible_masked
// The masked programs read the per-row tmin (params.tmin: intersect, and the
// first bounce of reflections) and trace with OPTIX_RAY_FLAG_ENFORCE_ANYHIT,
// so that __anyhit__mask discards every candidate whose face mask
// (params.face_mask[prim]) shares no bit with the row's mask
// (params.ray_mask[i]; 0xff when null, and always for visible). The closest
// hit OptiX reports is then the closest face the row may see: the mask rule
// of the CUDA kernels' rayd_*_masked variants. The host runs them only while
// a query carries limits or a face mask differs from 0xff.
//
// The record fields derived from a hit (p, normals, barycentrics, ids, image
// sources) use the operation sequences of trace.cu (rayd.cuh), so they equal
// the CUDA BVH's for the same t, u, v and face. OptiX's own triangle test is
// not the watertight test of geom: its t, u, v differ in the last bits and
// exact ties (shared edges, vertices) may go to either face.
//
// Compile: nvcc -ptx -arch=compute_86 -O3 -std=c++17 (not compute_90: see
// optix_device.cuh).
#include "rayd.cuh"
#include "optix_device.cuh"

#define NO_PRIM 0xffffffffu

// Params is the launch-parameter block (216 bytes; mirrored by
// accel/optix_query.go). Pointers marked "| null" are optional.
struct Params {
    unsigned long long handle;     // @0   GAS traversable
    const float* o;                // @8   float[3n] ray origins | segment starts
    const float* d;                // @16  float[3n] ray directions | segment ends
    const float* tmax;             // @24  float[n] | null
    const unsigned char* active;   // @32  uint8[n] | null
    const float* vertices;         // @40  float[3V] global vertex table
    const int* faces;              // @48  int[3F] global faces
    const int* face_shape;         // @56  int[F] | null (ids −1)
    const int* face_local;         // @64  int[F] | null (ids −1)
    float* out_t;                  // @72  intersect: float[n]; reflections: float[n·B]
    float* out_p;                  // @80  float[3n] | null
    float* out_n;                  // @88  float[3n] | null
    float* out_geo_n;              // @96  float[3n] | null
    float* out_uv;                 // @104 float[2n] | null
    float* out_bary;               // @112 float[3n] | null
    int* out_shape;                // @120 int[n] | null
    int* out_prim;                 // @128 intersect: int[n] | null; reflections: int[n·B]
    int* out_local;                // @136 int[n] | null
    int* out_global;               // @144 int[n] | null
    unsigned char* out_valid;      // @152 reflections: uint8[n·B]
    float* out_images;             // @160 reflections: float[3·n·B] | null
    unsigned char* out_visible;    // @168 visible: uint8[n]
    int n;                         // @176 rows (launch width)
    unsigned int flags;            // @180 intersect: 1 Geometric, 2 ShadingN, 4 UV
    int max_bounces;               // @184 reflections: B ≥ 1
    int pad;                       // @188
    const float* tmin;             // @192 masked programs: float[n] | null
    const unsigned char* ray_mask; // @200 masked programs: uint8[n] | null
    const unsigned char* face_mask; // @208 masked programs: uint8[F] | null
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

// The three vertices of global face prim, as float4 (w unused).
__device__ __forceinline__ void face_vertices(unsigned int prim, float4& p0, float4& p1, float4& p2) {
    const int* f = params.faces + 3LL * prim;
    const float* a = params.vertices + 3LL * f[0];
    const float* b = params.vertices + 3LL * f[1];
    const float* c = params.vertices + 3LL * f[2];
    p0 = make_float4(a[0], a[1], a[2], 0.0f);
    p1 = make_float4(b[0], b[1], b[2], 0.0f);
    p2 = make_float4(c[0], c[1], c[2], 0.0f);
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

// row_tmin is row i's tmin: params.tmin[i] in the masked programs when
// given, else def.
template <bool MASKED>
__device__ __forceinline__ float row_tmin(long long i, float def) {
    return MASKED && params.tmin != nullptr ? params.tmin[i] : def;
}

// closest traces (o, d) over [tmin, tmax] and returns whether a triangle was
// hit, with its t, u, v and global face id.
// The masked form (MASKED) runs __anyhit__mask on every candidate.
template <bool MASKED>
__device__ __forceinline__ bool closest(float3 o, float3 d, float tmin, float tmax, float& t, float& u, float& v,
                                        unsigned int& prim) {
    unsigned int p[4] = {0u, 0u, 0u, NO_PRIM};
    optix::trace<4>(params.handle, o.x, o.y, o.z, d.x, d.y, d.z, tmin, fminf(tmax, RAYD_FLT_MAX),
                    MASKED ? optix::kRayFlagEnforceAnyHit : optix::kRayFlagDisableAnyHit, p);
    t = __uint_as_float(p[0]);
    u = __uint_as_float(p[1]);
    v = __uint_as_float(p[2]);
    prim = p[3];
    return prim != NO_PRIM;
}

// write_intersection stores row i of the intersect record (trace.cu
// intersect_row after its traversal).
__device__ __forceinline__ void write_intersection(long long i, bool hit, float3 oi, float3 di, float t, float u, float v,
                                                   unsigned int prim) {
    const unsigned int flags = params.flags;
    const bool geo = (flags & 1u) != 0, shade = (flags & 2u) != 0, uvf = (flags & 4u) != 0;
    params.out_t[i] = hit ? t : __int_as_float(0x7f800000);
    if (!hit) {
        if (geo) {
            if (params.out_p) store3(params.out_p, i, 0.0f, 0.0f, 0.0f);
            if (params.out_geo_n) store3(params.out_geo_n, i, 0.0f, 0.0f, 0.0f);
            if (params.out_bary) store3(params.out_bary, i, 0.0f, 0.0f, 0.0f);
            if (params.out_shape) params.out_shape[i] = -1;
            if (params.out_prim) params.out_prim[i] = -1;
            if (params.out_local) params.out_local[i] = -1;
            if (params.out_global) params.out_global[i] = -1;
        }
        if (shade && params.out_n) store3(params.out_n, i, 0.0f, 0.0f, 0.0f);
        if (uvf && params.out_uv) {
            params.out_uv[2 * i] = 0.0f;
            params.out_uv[2 * i + 1] = 0.0f;
        }
        return;
    }
    float3 nrm = make_float3(0.0f, 0.0f, 0.0f);
    if (geo || shade) {
        float4 p0, p1, p2;
        face_vertices(prim, p0, p1, p2);
        nrm = face_normal(p0, p1, p2, RAYD_NORMAL_FLOOR);
    }
    if (geo) {
        if (params.out_p) {
            store3(params.out_p, i, __fadd_rn(oi.x, __fmul_rn(t, di.x)), __fadd_rn(oi.y, __fmul_rn(t, di.y)),
                   __fadd_rn(oi.z, __fmul_rn(t, di.z)));
        }
        if (params.out_geo_n) store3(params.out_geo_n, i, nrm.x, nrm.y, nrm.z);
        if (params.out_bary) store3(params.out_bary, i, __fsub_rn(__fsub_rn(1.0f, u), v), u, v);
        if (params.out_shape) params.out_shape[i] = params.face_shape ? params.face_shape[prim] : -1;
        if (params.out_prim) params.out_prim[i] = (int)prim;
        if (params.out_local) params.out_local[i] = params.face_local ? params.face_local[prim] : -1;
        if (params.out_global) params.out_global[i] = (int)prim;
    }
    if (shade && params.out_n) store3(params.out_n, i, nrm.x, nrm.y, nrm.z);
    if (uvf && params.out_uv) {
        params.out_uv[2 * i] = u;
        params.out_uv[2 * i + 1] = v;
    }
}

// intersect_program: closest hit of row i over [tmin, tmax[i] (FLT_MAX
// when null)] (tmin 1e-6, or the row's in the masked form), the record of
// spec §1.6 per params.flags.
template <bool MASKED>
__device__ __forceinline__ void intersect_program() {
    const long long i = optix::launch_index_x();
    if (i >= params.n) return;
    float3 oi = load3(params.o, i), di = load3(params.d, i);
    float tmax = params.tmax ? params.tmax[i] : RAYD_FLT_MAX;
    float tmin = row_tmin<MASKED>(i, RAYD_TMIN);
    float t = 0.0f, u = 0.0f, v = 0.0f;
    unsigned int prim = NO_PRIM;
    bool hit = traceable(i, oi, di, tmin, tmax) && closest<MASKED>(oi, di, tmin, tmax, t, u, v, prim);
    write_intersection(i, hit, oi, di, t, u, v, prim);
}

// intersect_t_program: intersect_program with flags 0 (t only; one payload
// word).
template <bool MASKED>
__device__ __forceinline__ void intersect_t_program() {
    const long long i = optix::launch_index_x();
    if (i >= params.n) return;
    float3 oi = load3(params.o, i), di = load3(params.d, i);
    float tmax = params.tmax ? params.tmax[i] : RAYD_FLT_MAX;
    float tmin = row_tmin<MASKED>(i, RAYD_TMIN);
    unsigned int p[1] = {0x7f800000u};  // +inf: a miss leaves it
    if (traceable(i, oi, di, tmin, tmax)) {
        optix::trace<1>(params.handle, oi.x, oi.y, oi.z, di.x, di.y, di.z, tmin, fminf(tmax, RAYD_FLT_MAX),
                        MASKED ? optix::kRayFlagEnforceAnyHit : optix::kRayFlagDisableAnyHit, p);
    }
    params.out_t[i] = __uint_as_float(p[0]);
}

// reflections_program: trace_reflections of spec §3.2 for row i (trace.cu
// reflections_kernel with OptiX's closest hit); the masked form starts the
// first bounce at the row's tmin.
template <bool MASKED>
__device__ __forceinline__ void reflections_program() {
    const long long i = optix::launch_index_x();
    if (i >= params.n) return;
    const int nb = params.max_bounces;
    float3 orig = load3(params.o, i), dir = load3(params.d, i);
    float3 img = orig;
    float tm0 = RAYD_REFLECTION_MISS;
    if (params.tmax) {
        float x = params.tmax[i];
        if (isfinite(x)) tm0 = x;
    }
    bool alive = true;
    for (int bnc = 0; bnc < nb; ++bnc) {
        long long slot = i * nb + bnc;
        float tm = bnc == 0 ? tm0 : RAYD_REFLECTION_MISS;
        float tmin = bnc == 0 ? row_tmin<MASKED>(i, RAYD_MULTIPATH_TMIN) : RAYD_MULTIPATH_TMIN;
        float t = 0.0f, u = 0.0f, v = 0.0f;
        unsigned int prim = NO_PRIM;
        alive = alive && traceable(i, orig, dir, tmin, tm) && closest<MASKED>(orig, dir, tmin, tm, t, u, v, prim);
        if (!alive) {
            params.out_valid[slot] = 0;
            params.out_t[slot] = RAYD_REFLECTION_MISS;
            params.out_prim[slot] = -1;
            if (params.out_images) store3(params.out_images, slot, 0.0f, 0.0f, 0.0f);
            continue;
        }
        float4 p0, p1, p2;
        face_vertices(prim, p0, p1, p2);
        float3 P = interpolate(p0, p1, p2, u, v);
        float3 N = face_normal(p0, p1, p2, RAYD_REFLECTION_NORMAL_FLOOR);
        if (dot3(dir.x, dir.y, dir.z, N.x, N.y, N.z) > 0.0f) N = make_float3(-N.x, -N.y, -N.z);
        // Image source: I − (2((I−P)·N))·N.
        float s = __fmul_rn(2.0f, dot3(__fsub_rn(img.x, P.x), __fsub_rn(img.y, P.y), __fsub_rn(img.z, P.z), N.x, N.y, N.z));
        img = make_float3(__fsub_rn(img.x, __fmul_rn(s, N.x)), __fsub_rn(img.y, __fmul_rn(s, N.y)),
                          __fsub_rn(img.z, __fmul_rn(s, N.z)));
        params.out_valid[slot] = 1;
        params.out_t[slot] = t;
        params.out_prim[slot] = (int)prim;
        if (params.out_images) store3(params.out_images, slot, img.x, img.y, img.z);
        // Reflect: dir − (2(dir·N))·N; next origin P + bias·dir.
        float q = __fmul_rn(2.0f, dot3(dir.x, dir.y, dir.z, N.x, N.y, N.z));
        dir = make_float3(__fsub_rn(dir.x, __fmul_rn(q, N.x)), __fsub_rn(dir.y, __fmul_rn(q, N.y)),
                          __fsub_rn(dir.z, __fmul_rn(q, N.z)));
        orig = make_float3(__fadd_rn(P.x, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.x)),
                           __fadd_rn(P.y, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.y)),
                           __fadd_rn(P.z, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.z)));
    }
}

// visible_program: visible(start, end) of spec §4.1 for row i: 1 when no
// triangle is hit with t in [1e-5, max(L − 2e-5, 0)] from start + 1e-5·dir
// (the first hit ends the ray), 0 when blocked or inactive; in the masked
// form only faces whose mask is not 0 block.
template <bool MASKED>
__device__ __forceinline__ void visible_program() {
    const long long i = optix::launch_index_x();
    if (i >= params.n) return;
    if (params.active != nullptr && params.active[i] == 0) {
        params.out_visible[i] = 0;
        return;
    }
    float3 a = load3(params.o, i), e = load3(params.d, i);
    unsigned char vis = 1;
    if (finite3(a.x, a.y, a.z) && finite3(e.x, e.y, e.z)) {
        float Dx = __fsub_rn(e.x, a.x), Dy = __fsub_rn(e.y, a.y), Dz = __fsub_rn(e.z, a.z);
        float L = __fsqrt_rn(dot3(Dx, Dy, Dz, Dx, Dy, Dz));
        if (L > RAYD_MIN_SEGMENT) {
            float3 dir = make_float3(__fdiv_rn(Dx, L), __fdiv_rn(Dy, L), __fdiv_rn(Dz, L));
            float3 org = make_float3(__fadd_rn(a.x, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.x)),
                                     __fadd_rn(a.y, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.y)),
                                     __fadd_rn(a.z, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.z)));
            float tm = __fsub_rn(L, RAYD_MIN_SEGMENT);
            tm = tm > 0.0f ? tm : 0.0f;
            if (traceable(i, org, dir, RAYD_MULTIPATH_TMIN, tm)) {
                unsigned int p[1] = {0u};  // blocked unless the miss program runs
                optix::trace<1>(params.handle, org.x, org.y, org.z, dir.x, dir.y, dir.z, RAYD_MULTIPATH_TMIN, tm,
                                (MASKED ? optix::kRayFlagEnforceAnyHit : optix::kRayFlagDisableAnyHit) |
                                    optix::kRayFlagTerminateOnFirstHit | optix::kRayFlagDisableClosestHit,
                                p);
                vis = p[0] != 0u ? 1 : 0;
            }
        }
    }
    params.out_visible[i] = vis;
}

}  // namespace

extern "C" {

// The raygen programs: unmasked and masked forms of each query.
__global__ void __raygen__intersect() { intersect_program<false>(); }
__global__ void __raygen__intersect_masked() { intersect_program<true>(); }
__global__ void __raygen__intersect_t() { intersect_t_program<false>(); }
__global__ void __raygen__intersect_t_masked() { intersect_t_program<true>(); }
__global__ void __raygen__reflections() { reflections_program<false>(); }
__global__ void __raygen__reflections_masked() { reflections_program<true>(); }
__global__ void __raygen__visible() { visible_program<false>(); }
__global__ void __raygen__visible_masked() { visible_program<true>(); }

// __anyhit__mask: the masked programs' filter. A candidate counts only when
// the mask of its face shares a bit with the row's mask; otherwise OptiX
// discards it and traversal goes on.
__global__ void __anyhit__mask() {
    const unsigned int prim = optix::primitive_index();
    const unsigned int fm = params.face_mask ? (unsigned int)params.face_mask[prim] : 0xffu;
    const unsigned int rm = params.ray_mask ? (unsigned int)params.ray_mask[optix::launch_index_x()] : 0xffu;
    if ((fm & rm) == 0u) optix::ignore_intersection();
}

// __closesthit__hit: payload (t, u, v, global face id) of the closest hit.
__global__ void __closesthit__hit() {
    float u, v;
    optix::triangle_barycentrics(u, v);
    optix::set_payload<0>(__float_as_uint(optix::ray_tmax()));
    optix::set_payload<1>(__float_as_uint(u));
    optix::set_payload<2>(__float_as_uint(v));
    optix::set_payload<3>(optix::primitive_index());
}

// __closesthit__t: payload 0 = t of the closest hit.
__global__ void __closesthit__t() { optix::set_payload<0>(__float_as_uint(optix::ray_tmax())); }

// __closesthit__visible: a hit blocks the segment (the visibility trace
// disables closest-hit programs; this one keeps the hit group well formed).
__global__ void __closesthit__visible() { optix::set_payload<0>(0u); }

// __miss__noop: a miss leaves the payload as the raygen initialised it.
__global__ void __miss__noop() {}

// __miss__visible: no blocker on the segment.
__global__ void __miss__visible() { optix::set_payload<0>(1u); }

}  // extern "C"
