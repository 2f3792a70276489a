// trace.cu: ray queries over the triangle BVH of bvh_build.cu — closest hit
// (intersect), specular reflection chains and segment visibility, each over
// child-pair nodes (rayd_*), quad nodes (rayd_*4) and compressed wide nodes
// (rayd_*8) — plus a brute-force intersect for tests, and intersect split
// in two: a compact 16-byte record per row (rayd_intersect_compact*) and its
// expansion into the full record (rayd_expand_hits). One thread per ray; the
// traversal and the watertight test live in rayd.cuh.
//
// Common parameters:
//   nodes      float4[4·num_nodes]  child-pair or quad nodes (root 0); wide
//                                   nodes (rayd_*8): float4[5·num_nodes]
//   tris       float4[3·num_tris]   triangle records in leaf order
//   num_tris   int                  0: every row misses
//   counter    uint32[1] | null     null: one row per thread, grid covers n;
//                                   else persistent warps take 32-row batches
//                                   from *counter, which the host zeroes
//                                   before the launch (any grid size)
// blockDim.x must be a multiple of 32 (128 is what __launch_bounds__ assumes).
// All outputs are written for every row 0..n−1 (misses included).
#include "rayd.cuh"

using namespace rayd;

#define TRACE_THREADS 128
#define NO_PRIM 0xffffffffu

namespace {

// Masks carries the per-launch inputs of the masked variants
// (rayd_*_masked): per-row tmin and visibility mask, and the visibility mask
// of every global face (its mesh's mask). Any pointer may be null: tmin then
// defaults to the query's epsilon and a mask to 0xff. The unmasked kernels
// pass an all-null Masks and instantiate MASKED = false, which compiles to
// the traversal without any of it.
struct Masks {
    const float* __restrict__ tmin;
    const unsigned char* __restrict__ ray_mask;
    const unsigned char* __restrict__ face_mask;
};

// FaceMask is the traversal filter of the masked variants: a hit counts
// only when its face's mask shares a bit with the row's mask.
struct FaceMask {
    const unsigned char* __restrict__ face_mask;
    unsigned int ray_mask;
    __device__ __forceinline__ bool keep(unsigned int prim) const {
        unsigned int fm = face_mask ? (unsigned int)__ldg(&face_mask[prim]) : 0xffu;
        return (fm & ray_mask) != 0u;
    }
};

__device__ __forceinline__ float row_tmin(const Masks& m, long long i, float def) {
    return m.tmin ? m.tmin[i] : def;
}
__device__ __forceinline__ FaceMask row_filter(const Masks& m, long long i) {
    return FaceMask{m.face_mask, m.ray_mask ? (unsigned int)m.ray_mask[i] : 0xffu};
}

// trace_masked runs the traversal of W with the row's limits when MASKED,
// else exactly the unmasked traversal with tmin def.
template <int W, bool ANY, bool MASKED>
__device__ __forceinline__ void trace_masked(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                             int num_tris, const Ray& r, float def, long long i, const Masks& m,
                                             bool first, Best& b) {
    if (MASKED) {
        trace_ray<W, ANY>(nodes, tris, num_tris, r, first ? row_tmin(m, i, def) : def, b, row_filter(m, i));
    } else {
        trace_ray<W, ANY>(nodes, tris, num_tris, r, def, b);
    }
}

__device__ __forceinline__ float3 load3(const float* __restrict__ p, long long i) {
    return make_float3(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
}
__device__ __forceinline__ void store3(float* __restrict__ p, long long i, float x, float y, float z) {
    p[3 * i] = x;
    p[3 * i + 1] = y;
    p[3 * i + 2] = z;
}

// closest_row: the traversal of spec §2.1 for row i: loads the ray into oi,
// di and leaves the closest hit in b (b.prim == NO_PRIM on a miss). Inactive
// rows, rows with a non-finite origin or direction and an empty BVH miss.
// W: layout width (0 brute force, 2, 4).
template <int W, bool MASKED = false>
__device__ __forceinline__ void closest_row(long long i, const float4* __restrict__ nodes,
                                            const float4* __restrict__ tris, int num_tris,
                                            const float* __restrict__ o, const float* __restrict__ d,
                                            const float* __restrict__ tmax, const unsigned char* __restrict__ active,
                                            float3& oi, float3& di, Best& b, const Masks& m = Masks{}) {
    oi = load3(o, i);
    di = load3(d, i);
    b.t = tmax ? tmax[i] : RAYD_FLT_MAX;
    b.prim = NO_PRIM;
    b.slot = -1;
    b.u = 0.0f;
    b.v = 0.0f;
    bool act = (active == nullptr || active[i] != 0) && num_tris > 0;
    if (act && finite3(oi.x, oi.y, oi.z) && finite3(di.x, di.y, di.z)) {
        Ray r;
        setup_ray(r, oi.x, oi.y, oi.z, di.x, di.y, di.z);
        trace_masked<W, false, MASKED>(nodes, tris, num_tris, r, RAYD_TMIN, i, m, true, b);
    }
}

// write_hit_record: the epilogue of spec §2.1 for row i (geom/ref op
// sequences for p, normals, barycentrics): writes every selected field from
// the closest hit (t, u, v, slot) or the miss record when !hit. ray(oi, di)
// yields the row's origin and direction; it is called only when p is
// written. rayd_intersect* and rayd_expand_hits both write through this one
// function, so a record rebuilt from (t, u, v, slot) is bitwise the one the
// traversal kernel writes.
template <class RayAt>
__device__ __forceinline__ void write_hit_record(long long i, bool hit, float t, float u, float v, int slot,
                                                 const RayAt& ray, const float4* __restrict__ tris, unsigned int flags,
                                                 float* __restrict__ out_t, float* __restrict__ out_p,
                                                 float* __restrict__ out_n, float* __restrict__ out_geo_n,
                                                 float* __restrict__ out_uv, float* __restrict__ out_bary,
                                                 int* __restrict__ out_shape, int* __restrict__ out_prim,
                                                 int* __restrict__ out_local, int* __restrict__ out_global) {
    out_t[i] = hit ? t : __int_as_float(0x7f800000);
    const bool geo = (flags & 1u) != 0, shade = (flags & 2u) != 0, uvf = (flags & 4u) != 0;
    if (!hit) {
        if (geo) {
            if (out_p) store3(out_p, i, 0.0f, 0.0f, 0.0f);
            if (out_geo_n) store3(out_geo_n, i, 0.0f, 0.0f, 0.0f);
            if (out_bary) store3(out_bary, i, 0.0f, 0.0f, 0.0f);
            if (out_shape) out_shape[i] = -1;
            if (out_prim) out_prim[i] = -1;
            if (out_local) out_local[i] = -1;
            if (out_global) out_global[i] = -1;
        }
        if (shade && out_n) store3(out_n, i, 0.0f, 0.0f, 0.0f);
        if (uvf && out_uv) { out_uv[2 * i] = 0.0f; out_uv[2 * i + 1] = 0.0f; }
        return;
    }
    float4 p0 = __ldg(&tris[3LL * slot + 0]);
    float4 p1 = __ldg(&tris[3LL * slot + 1]);
    float4 p2 = __ldg(&tris[3LL * slot + 2]);
    float3 nrm = make_float3(0.0f, 0.0f, 0.0f);
    if (geo || shade) nrm = face_normal(p0, p1, p2, RAYD_NORMAL_FLOOR);
    if (geo) {
        if (out_p) {
            float3 oi, di;
            ray(oi, di);
            store3(out_p, i, __fadd_rn(oi.x, __fmul_rn(t, di.x)), __fadd_rn(oi.y, __fmul_rn(t, di.y)),
                   __fadd_rn(oi.z, __fmul_rn(t, di.z)));
        }
        if (out_geo_n) store3(out_geo_n, i, nrm.x, nrm.y, nrm.z);
        if (out_bary) store3(out_bary, i, __fsub_rn(__fsub_rn(1.0f, u), v), u, v);
        int prim = __float_as_int(p0.w);
        if (out_shape) out_shape[i] = __float_as_int(p1.w);
        if (out_prim) out_prim[i] = prim;
        if (out_local) out_local[i] = __float_as_int(p2.w);
        if (out_global) out_global[i] = prim;
    }
    if (shade && out_n) store3(out_n, i, nrm.x, nrm.y, nrm.z);
    if (uvf && out_uv) { out_uv[2 * i] = u; out_uv[2 * i + 1] = v; }
}

// KnownRay hands the epilogue a ray the traversal already loaded.
struct KnownRay {
    float3 o, d;
    __device__ __forceinline__ void operator()(float3& oi, float3& di) const {
        oi = o;
        di = d;
    }
};

// LoadRay loads row i's ray when the epilogue needs it (rayd_expand_hits).
struct LoadRay {
    const float* __restrict__ o;
    const float* __restrict__ d;
    long long i;
    __device__ __forceinline__ void operator()(float3& oi, float3& di) const {
        oi = load3(o, i);
        di = load3(d, i);
    }
};

// intersect_row: spec §2.1 for row i, the traversal then the epilogue.
template <int W, bool MASKED = false>
__device__ __forceinline__ void intersect_row(long long i, const float4* __restrict__ nodes,
                                              const float4* __restrict__ tris, int num_tris,
                                              const float* __restrict__ o, const float* __restrict__ d,
                                              const float* __restrict__ tmax, const unsigned char* __restrict__ active,
                                              unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p,
                                              float* __restrict__ out_n, float* __restrict__ out_geo_n,
                                              float* __restrict__ out_uv, float* __restrict__ out_bary,
                                              int* __restrict__ out_shape, int* __restrict__ out_prim,
                                              int* __restrict__ out_local, int* __restrict__ out_global,
                                              const Masks& m = Masks{}) {
    KnownRay ray;
    Best b;
    closest_row<W, MASKED>(i, nodes, tris, num_tris, o, d, tmax, active, ray.o, ray.d, b, m);
    write_hit_record(i, b.prim != NO_PRIM, b.t, b.u, b.v, b.slot, ray, tris, flags, out_t, out_p, out_n, out_geo_n,
                     out_uv, out_bary, out_shape, out_prim, out_local, out_global);
}

// compact_row: the traversal of intersect_row for row i, stored as one
// 16-byte record {t bits (+inf on a miss), u bits, v bits, slot (NO_PRIM on
// a miss)} with one vector store.
template <int W>
__device__ __forceinline__ void compact_row(long long i, const float4* __restrict__ nodes,
                                            const float4* __restrict__ tris, int num_tris,
                                            const float* __restrict__ o, const float* __restrict__ d,
                                            const float* __restrict__ tmax, const unsigned char* __restrict__ active,
                                            uint4* __restrict__ out) {
    float3 oi, di;
    Best b;
    closest_row<W>(i, nodes, tris, num_tris, o, d, tmax, active, oi, di, b);
    const bool hit = b.prim != NO_PRIM;
    out[i] = make_uint4(hit ? __float_as_uint(b.t) : 0x7f800000u, __float_as_uint(b.u), __float_as_uint(b.v),
                        hit ? (unsigned int)b.slot : NO_PRIM);
}

// FilterOf is the traversal filter of the unmasked (NoFilter) and masked
// (FaceMask) kernels.
template <bool MASKED> struct FilterOf { typedef NoFilter type; };
template <> struct FilterOf<true> { typedef FaceMask type; };

// RowBase holds what every dyn_rows task hands the walk: the row, the ray,
// the walk's tmin and best hit, and the masked variants' inputs.
template <bool MASKED>
struct RowBase {
    Masks m;
    long long i;
    Ray r;
    float tmin;
    Best b;
    __device__ __forceinline__ typename FilterOf<MASKED>::type filter() const {
        if constexpr (MASKED) return row_filter(m, i);
        else return NoFilter{};
    }
    __device__ __forceinline__ void clear_best(float t) {
        b.t = t;
        b.prim = NO_PRIM;
        b.slot = -1;
        b.u = 0.0f;
        b.v = 0.0f;
    }
};

// IntersectTask is intersect_row as a dyn_rows task; compact (the 16-byte
// record of compact_row) when out_compact is set.
template <bool MASKED>
struct IntersectTask : RowBase<MASKED> {
    const float4* __restrict__ tris;
    int num_tris;
    const float* __restrict__ o;
    const float* __restrict__ d;
    const float* __restrict__ tmax;
    const unsigned char* __restrict__ active;
    unsigned int flags;
    float *out_t, *out_p, *out_n, *out_geo_n, *out_uv, *out_bary;
    int *out_shape, *out_prim, *out_local, *out_global;
    uint4* out_compact;
    KnownRay ray;

    __device__ __forceinline__ bool begin(long long j) {
        this->i = j;
        ray.o = load3(o, j);
        ray.d = load3(d, j);
        this->clear_best(tmax ? tmax[j] : RAYD_FLT_MAX);
        const bool act = (active == nullptr || active[j] != 0) && num_tris > 0;
        if (!(act && finite3(ray.o.x, ray.o.y, ray.o.z) && finite3(ray.d.x, ray.d.y, ray.d.z))) return false;
        setup_ray(this->r, ray.o.x, ray.o.y, ray.o.z, ray.d.x, ray.d.y, ray.d.z);
        this->tmin = MASKED ? row_tmin(this->m, j, RAYD_TMIN) : RAYD_TMIN;
        return true;
    }
    __device__ __forceinline__ bool next() {
        const Best& b = this->b;
        const bool hit = b.prim != NO_PRIM;
        if (out_compact) {
            out_compact[this->i] = make_uint4(hit ? __float_as_uint(b.t) : 0x7f800000u, __float_as_uint(b.u),
                                              __float_as_uint(b.v), hit ? (unsigned int)b.slot : NO_PRIM);
        } else {
            write_hit_record(this->i, hit, b.t, b.u, b.v, b.slot, ray, tris, flags, out_t, out_p, out_n, out_geo_n,
                             out_uv, out_bary, out_shape, out_prim, out_local, out_global);
        }
        return false;
    }
};

template <int W, bool MASKED = false, bool DYN = false>
__device__ __forceinline__ void intersect_kernel(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter,
    const Masks& m = Masks{}) {
    if constexpr (DYN) {
        IntersectTask<MASKED> task;
        task.m = m;
        task.tris = tris; task.num_tris = num_tris; task.o = o; task.d = d; task.tmax = tmax; task.active = active;
        task.flags = flags; task.out_t = out_t; task.out_p = out_p; task.out_n = out_n; task.out_geo_n = out_geo_n;
        task.out_uv = out_uv; task.out_bary = out_bary; task.out_shape = out_shape; task.out_prim = out_prim;
        task.out_local = out_local; task.out_global = out_global; task.out_compact = nullptr;
        dyn_rows<W, false>(nodes, tris, n, counter, task);
    } else {
        for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
            long long i = base + (threadIdx.x & 31u);
            if (i < n) {
                intersect_row<W, MASKED>(i, nodes, tris, num_tris, o, d, tmax, active, flags, out_t, out_p, out_n, out_geo_n,
                                         out_uv, out_bary, out_shape, out_prim, out_local, out_global, m);
            }
        }
    }
}

template <int W, bool DYN = false>
__device__ __forceinline__ void compact_kernel(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                               int num_tris, const float* __restrict__ o, const float* __restrict__ d,
                                               const float* __restrict__ tmax,
                                               const unsigned char* __restrict__ active, int n,
                                               uint4* __restrict__ out, unsigned int* counter) {
    if constexpr (DYN) {
        IntersectTask<false> task;
        task.m = Masks{};
        task.tris = tris; task.num_tris = num_tris; task.o = o; task.d = d; task.tmax = tmax; task.active = active;
        task.out_compact = out;
        dyn_rows<W, false>(nodes, tris, n, counter, task);
    } else {
        for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
            long long i = base + (threadIdx.x & 31u);
            if (i < n) compact_row<W>(i, nodes, tris, num_tris, o, d, tmax, active, out);
        }
    }
}

// reflect_step advances a reflection chain at hit point P with the unit
// normal N facing the incoming direction: the image source I − (2((I−P)·N))·N,
// the reflected direction dir − (2(dir·N))·N and the next origin
// P + bias·dir.
__device__ __forceinline__ void reflect_step(float3 P, float3 N, float3& img, float3& dir, float3& orig) {
    float s = __fmul_rn(2.0f, dot3(__fsub_rn(img.x, P.x), __fsub_rn(img.y, P.y), __fsub_rn(img.z, P.z), N.x, N.y, N.z));
    img = make_float3(__fsub_rn(img.x, __fmul_rn(s, N.x)), __fsub_rn(img.y, __fmul_rn(s, N.y)),
                      __fsub_rn(img.z, __fmul_rn(s, N.z)));
    float q = __fmul_rn(2.0f, dot3(dir.x, dir.y, dir.z, N.x, N.y, N.z));
    dir = make_float3(__fsub_rn(dir.x, __fmul_rn(q, N.x)), __fsub_rn(dir.y, __fmul_rn(q, N.y)),
                      __fsub_rn(dir.z, __fmul_rn(q, N.z)));
    orig = make_float3(__fadd_rn(P.x, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.x)),
                       __fadd_rn(P.y, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.y)),
                       __fadd_rn(P.z, __fmul_rn(RAYD_MULTIPATH_BIAS, dir.z)));
}

// ReflectionsTask is one row of reflections_kernel as a dyn_rows task:
// one walk per bounce, the chain's state between them.
template <bool MASKED>
struct ReflectionsTask : RowBase<MASKED> {
    const float4* __restrict__ tris;
    int num_tris;
    const float* __restrict__ o;
    const float* __restrict__ d;
    const float* __restrict__ tmax;
    const unsigned char* __restrict__ active;
    int max_bounces;
    unsigned char* out_valid;
    float* out_t;
    int* out_prim;
    float* out_images;
    float3 orig, dir, img;
    float tm0;
    int bnc;
    bool alive, tracing;

    __device__ __forceinline__ void write_miss(long long slot) {
        out_valid[slot] = 0;
        out_t[slot] = RAYD_REFLECTION_MISS;
        out_prim[slot] = -1;
        if (out_images) store3(out_images, slot, 0.0f, 0.0f, 0.0f);
    }
    // bounce starts the walk of bounce bnc, or writes the remaining slots
    // of a chain that has ended.
    __device__ __forceinline__ bool bounce() {
        for (; bnc < max_bounces; ++bnc) {
            if (alive) {
                this->clear_best(bnc == 0 ? tm0 : RAYD_REFLECTION_MISS);
                setup_ray(this->r, orig.x, orig.y, orig.z, dir.x, dir.y, dir.z);
                this->tmin = MASKED && bnc == 0 ? row_tmin(this->m, this->i, RAYD_MULTIPATH_TMIN) : RAYD_MULTIPATH_TMIN;
                tracing = true;
                return true;
            }
            write_miss(this->i * max_bounces + bnc);
        }
        tracing = false;
        return false;
    }
    __device__ __forceinline__ bool begin(long long j) {
        this->i = j;
        orig = load3(o, j);
        dir = load3(d, j);
        img = orig;
        alive = (active == nullptr || active[j] != 0) && num_tris > 0 && finite3(orig.x, orig.y, orig.z) &&
                finite3(dir.x, dir.y, dir.z);
        tm0 = RAYD_REFLECTION_MISS;
        if (tmax) {
            float x = tmax[j];
            if (isfinite(x)) tm0 = x;
        }
        bnc = 0;
        return bounce();
    }
    __device__ __forceinline__ bool next() {
        if (!tracing) return false;
        const Best& b = this->b;
        const long long slot = this->i * max_bounces + bnc;
        if (b.prim != NO_PRIM) {
            float4 p0 = __ldg(&tris[3LL * b.slot + 0]);
            float4 p1 = __ldg(&tris[3LL * b.slot + 1]);
            float4 p2 = __ldg(&tris[3LL * b.slot + 2]);
            float3 P = interpolate(p0, p1, p2, b.u, b.v);
            float3 N = face_normal(p0, p1, p2, RAYD_REFLECTION_NORMAL_FLOOR);
            if (dot3(dir.x, dir.y, dir.z, N.x, N.y, N.z) > 0.0f) N = make_float3(-N.x, -N.y, -N.z);
            reflect_step(P, N, img, dir, orig);
            out_valid[slot] = 1;
            out_t[slot] = b.t;
            out_prim[slot] = (int)b.prim;
            if (out_images) store3(out_images, slot, img.x, img.y, img.z);
        } else {
            alive = false;
            write_miss(slot);
        }
        ++bnc;
        return bounce();
    }
};

// VisibleTask is one row of visible_kernel as a dyn_rows task.
template <bool MASKED>
struct VisibleTask : RowBase<MASKED> {
    int num_tris;
    const float* __restrict__ start;
    const float* __restrict__ end;
    const unsigned char* __restrict__ active;
    unsigned char* out;
    unsigned char vis;
    bool traced;

    __device__ __forceinline__ bool begin(long long j) {
        this->i = j;
        traced = false;
        vis = 1;
        if (active != nullptr && active[j] == 0) {
            vis = 0;
            return false;
        }
        float3 a = load3(start, j), e = load3(end, j);
        float tm;
        if (num_tris > 0 && finite3(a.x, a.y, a.z) && finite3(e.x, e.y, e.z) && segment_setup(a, e, this->r, tm)) {
            this->clear_best(tm);
            this->tmin = RAYD_MULTIPATH_TMIN;
            traced = true;
        }
        return traced;
    }
    __device__ __forceinline__ bool next() {
        out[this->i] = traced ? (this->b.prim == NO_PRIM ? 1 : 0) : vis;
        return false;
    }
};

template <int W, bool MASKED = false, bool DYN = false>
__device__ __forceinline__ void reflections_kernel(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter, const Masks& m = Masks{}) {
    if constexpr (DYN) {
        ReflectionsTask<MASKED> task;
        task.m = m;
        task.tris = tris; task.num_tris = num_tris; task.o = o; task.d = d; task.tmax = tmax; task.active = active;
        task.max_bounces = max_bounces; task.out_valid = out_valid; task.out_t = out_t; task.out_prim = out_prim;
        task.out_images = out_images;
        dyn_rows<W, false>(nodes, tris, n, counter, task);
    } else {
        for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
            long long i = base + (threadIdx.x & 31u);
            if (i >= n) continue;
            float3 orig = load3(o, i), dir = load3(d, i);
            float3 img = orig;
            bool alive = (active == nullptr || active[i] != 0) && num_tris > 0 && finite3(orig.x, orig.y, orig.z) &&
                         finite3(dir.x, dir.y, dir.z);
            float tm0 = RAYD_REFLECTION_MISS;
            if (tmax) {
                float x = tmax[i];
                if (isfinite(x)) tm0 = x;
            }
            for (int bnc = 0; bnc < max_bounces; ++bnc) {
                long long slot = i * max_bounces + bnc;
                if (alive) {
                    Best b;
                    b.t = bnc == 0 ? tm0 : RAYD_REFLECTION_MISS;
                    b.prim = NO_PRIM;
                    b.slot = -1;
                    b.u = 0.0f;
                    b.v = 0.0f;
                    Ray r;
                    setup_ray(r, orig.x, orig.y, orig.z, dir.x, dir.y, dir.z);
                    trace_masked<W, false, MASKED>(nodes, tris, num_tris, r, RAYD_MULTIPATH_TMIN, i, m, bnc == 0, b);
                    if (b.prim != NO_PRIM) {
                        float4 p0 = __ldg(&tris[3LL * b.slot + 0]);
                        float4 p1 = __ldg(&tris[3LL * b.slot + 1]);
                        float4 p2 = __ldg(&tris[3LL * b.slot + 2]);
                        float3 P = interpolate(p0, p1, p2, b.u, b.v);
                        float3 N = face_normal(p0, p1, p2, RAYD_REFLECTION_NORMAL_FLOOR);
                        if (dot3(dir.x, dir.y, dir.z, N.x, N.y, N.z) > 0.0f) N = make_float3(-N.x, -N.y, -N.z);
                        reflect_step(P, N, img, dir, orig);
                        out_valid[slot] = 1;
                        out_t[slot] = b.t;
                        out_prim[slot] = (int)b.prim;
                        if (out_images) store3(out_images, slot, img.x, img.y, img.z);
                        continue;
                    }
                    alive = false;
                }
                out_valid[slot] = 0;
                out_t[slot] = RAYD_REFLECTION_MISS;
                out_prim[slot] = -1;
                if (out_images) store3(out_images, slot, 0.0f, 0.0f, 0.0f);
            }
        }
    }
}

template <int W, bool MASKED = false, bool DYN = false>
__device__ __forceinline__ void visible_kernel(const float4* __restrict__ nodes, const float4* __restrict__ tris,
                                               int num_tris, const float* __restrict__ start,
                                               const float* __restrict__ end, const unsigned char* __restrict__ active,
                                               int n, unsigned char* __restrict__ out, unsigned int* counter,
                                               const Masks& m = Masks{}) {
    if constexpr (DYN) {
        VisibleTask<MASKED> task;
        task.m = m;
        task.num_tris = num_tris; task.start = start; task.end = end; task.active = active; task.out = out;
        dyn_rows<W, true>(nodes, tris, n, counter, task);
    } else {
        for (long long base = first_batch(counter); base < n; base = next_batch(counter)) {
            long long i = base + (threadIdx.x & 31u);
            if (i >= n) continue;
            if (active != nullptr && active[i] == 0) {
                out[i] = 0;
                continue;
            }
            float3 a = load3(start, i), e = load3(end, i);
            unsigned char vis = 1;
            if (num_tris > 0 && finite3(a.x, a.y, a.z) && finite3(e.x, e.y, e.z)) {
                float Dx = __fsub_rn(e.x, a.x), Dy = __fsub_rn(e.y, a.y), Dz = __fsub_rn(e.z, a.z);
                float L = __fsqrt_rn(dot3(Dx, Dy, Dz, Dx, Dy, Dz));
                if (L > RAYD_MIN_SEGMENT) {
                    float dx = __fdiv_rn(Dx, L), dy = __fdiv_rn(Dy, L), dz = __fdiv_rn(Dz, L);
                    float ox = __fadd_rn(a.x, __fmul_rn(RAYD_MULTIPATH_BIAS, dx));
                    float oy = __fadd_rn(a.y, __fmul_rn(RAYD_MULTIPATH_BIAS, dy));
                    float oz = __fadd_rn(a.z, __fmul_rn(RAYD_MULTIPATH_BIAS, dz));
                    float tm = __fsub_rn(L, RAYD_MIN_SEGMENT);
                    Best b;
                    b.t = tm > 0.0f ? tm : 0.0f;
                    b.prim = NO_PRIM;
                    b.slot = -1;
                    b.u = 0.0f;
                    b.v = 0.0f;
                    Ray r;
                    setup_ray(r, ox, oy, oz, dx, dy, dz);
                    trace_masked<W, true, MASKED>(nodes, tris, num_tris, r, RAYD_MULTIPATH_TMIN, i, m, false, b);
                    vis = b.prim == NO_PRIM ? 1 : 0;
                }
            }
            out[i] = vis;
        }
    }
}

}  // namespace

// Parameter list shared by the intersect entry points (see rayd_intersect).
#define INTERSECT_ARGS nodes, tris, num_tris, o, d, tmax, active, n, flags, out_t, out_p, out_n, out_geo_n, out_uv, \
                       out_bary, out_shape, out_prim, out_local, out_global, counter

extern "C" {

// rayd_intersect(nodes, tris, num_tris, o, d, tmax, active, n, flags, out_t,
// out_p, out_n, out_geo_n, out_uv, out_bary, out_shape, out_prim, out_local,
// out_global, counter): closest hit over child-pair nodes, spec §2.1 (tmin
// 1e-6; ties at equal t go to the lowest global prim id).
//   o, d        float[3n]          origins, directions (not normalized)
//   tmax        float[n] | null    null: FLT_MAX
//   active      uint8[n] | null    null: all active; 0 ⇒ miss row
//   n           int
//   flags       uint32             1 Geometric (p, geo_n, bary, 4 ids),
//                                  2 ShadingN (n), 4 UV (uv); t always
//   out_t       float[n]           +inf on a miss
//   out_p, out_n, out_geo_n, out_bary  float[3n] | null
//   out_uv      float[2n] | null
//   out_shape, out_prim, out_local, out_global  int[n] | null   (−1 on a miss)
// A field is written when its flag is set and its pointer is not null.
// Inactive rows and rows with a non-finite origin or direction are misses.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter) {
    intersect_kernel<2>(INTERSECT_ARGS);
}

// rayd_intersect4: rayd_intersect over quad nodes (same parameters).
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter) {
    intersect_kernel<4>(INTERSECT_ARGS);
}

// rayd_intersect8: rayd_intersect over compressed wide nodes (same parameters).
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter) {
    intersect_kernel<8>(INTERSECT_ARGS);
}

// rayd_intersect_brute(tris, num_tris, o, d, tmax, active, n, flags, out_t,
// out_p, out_n, out_geo_n, out_uv, out_bary, out_shape, out_prim, out_local,
// out_global): rayd_intersect by a loop over every triangle (tests, and the
// reference a BVH must equal). Parameters as rayd_intersect without nodes and
// counter; one row per thread, the grid covers n.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_brute(
    const float4* __restrict__ tris, int num_tris, const float* __restrict__ o, const float* __restrict__ d,
    const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n, unsigned int flags,
    float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n,
    float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global) {
    const float4* nodes = nullptr;
    unsigned int* counter = nullptr;
    intersect_kernel<0>(INTERSECT_ARGS);
}

// rayd_intersect_compact(nodes, tris, num_tris, o, d, tmax, active, n, out,
// counter): the traversal of rayd_intersect (same inputs, misses and counter
// semantics) writing one 16-byte compact record per row instead of the
// record of spec §1.6:
//   out         uint32[4n], 16-byte aligned: row i is out[4i..4i+3] =
//               {t bits (+inf on a miss), u bits, v bits, slot}, slot the
//               winning triangle's index in leaf order (tris), 0xffffffff
//               on a miss (u = v = 0 then)
// rayd_expand_hits rebuilds the full record from it; a warp's stores are 32
// consecutive records (512 B).
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_compact(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    uint4* __restrict__ out, unsigned int* counter) {
    compact_kernel<2>(nodes, tris, num_tris, o, d, tmax, active, n, out, counter);
}

// rayd_intersect_compact4: rayd_intersect_compact over quad nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_compact4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    uint4* __restrict__ out, unsigned int* counter) {
    compact_kernel<4>(nodes, tris, num_tris, o, d, tmax, active, n, out, counter);
}

// rayd_intersect_compact8: rayd_intersect_compact over compressed wide nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_compact8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    uint4* __restrict__ out, unsigned int* counter) {
    compact_kernel<8>(nodes, tris, num_tris, o, d, tmax, active, n, out, counter);
}

// rayd_expand_hits(tris, num_tris, o, d, compact, n, flags, out_t, out_p,
// out_n, out_geo_n, out_uv, out_bary, out_shape, out_prim, out_local,
// out_global): the record of rayd_intersect rebuilt from compact records of
// rayd_intersect_compact over a BVH with the same triangle records, through
// the same epilogue: every written field is bitwise what rayd_intersect
// writes for the same rays (misses included). One row per thread, the grid
// covers n.
//   tris, num_tris      the BVH's triangle records
//   o, d                float[3n], the rays of the compact run (read only
//                       for the rows whose p is written)
//   compact             uint32[4n], 16-byte aligned; a slot outside
//                       [0, num_tris) is a miss
//   n, flags, out_*     as rayd_intersect
__global__ void __launch_bounds__(TRACE_THREADS) rayd_expand_hits(
    const float4* __restrict__ tris, int num_tris, const float* __restrict__ o, const float* __restrict__ d,
    const uint4* __restrict__ compact, int n, unsigned int flags, float* __restrict__ out_t,
    float* __restrict__ out_p, float* __restrict__ out_n, float* __restrict__ out_geo_n, float* __restrict__ out_uv,
    float* __restrict__ out_bary, int* __restrict__ out_shape, int* __restrict__ out_prim,
    int* __restrict__ out_local, int* __restrict__ out_global) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint4 c = __ldg(&compact[i]);
    LoadRay ray{o, d, i};
    write_hit_record(i, c.w < (unsigned int)num_tris, __uint_as_float(c.x), __uint_as_float(c.y),
                     __uint_as_float(c.z), (int)c.w, ray, tris, flags, out_t, out_p, out_n, out_geo_n, out_uv, out_bary,
                     out_shape, out_prim, out_local, out_global);
}

// rayd_trace_reflections(nodes, tris, num_tris, o, d, tmax, active, n,
// max_bounces, out_valid, out_t, out_prim, out_images, counter): specular
// chains over child-pair nodes, spec §3.2 (tmin 1e-5; bounce 0 uses tmax[i]
// when given and finite, every other bounce 1e8; mirror normal via
// rsqrt(max(|fn|², 1e-12)) facing the incoming ray; re-launch from
// P + 1e-5·dir).
//   o, d          float[3n]
//   tmax          float[n] | null
//   active        uint8[n] | null
//   n             int
//   max_bounces   int ≥ 1 (B)
//   out_valid     uint8[n·B]          slot i·B + b
//   out_t         float[n·B]          1e8 in empty slots
//   out_prim      int[n·B]            global prim id, −1 in empty slots
//   out_images    float[3·n·B] | null image sources (0 in empty slots)
// Inactive rows and rows with a non-finite origin or direction get empty slots.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter) {
    reflections_kernel<2>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                          out_images, counter);
}

// rayd_trace_reflections4: rayd_trace_reflections over quad nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter) {
    reflections_kernel<4>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                          out_images, counter);
}

// rayd_trace_reflections8: rayd_trace_reflections over compressed wide nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter) {
    reflections_kernel<8>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                          out_images, counter);
}

// rayd_visible(nodes, tris, num_tris, start, end, active, n, out, counter):
// segment visibility over child-pair nodes, spec §4.1: D = end − start,
// L = |D|; L ≤ 2e-5 ⇒ 1; else dir = D/L, origin = start + 1e-5·dir, and 1
// iff no triangle is hit with t in [1e-5, max(L − 2e-5, 0)] (any hit ends
// the ray).
//   start, end  float[3n]
//   active      uint8[n] | null    0 ⇒ 0
//   n           int
//   out         uint8[n] (out)     1 visible, 0 blocked or inactive
// Rows with a non-finite coordinate are visible (no hit), as in the reference.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible(const float4* __restrict__ nodes,
                                                              const float4* __restrict__ tris, int num_tris,
                                                              const float* __restrict__ start,
                                                              const float* __restrict__ end,
                                                              const unsigned char* __restrict__ active, int n,
                                                              unsigned char* __restrict__ out, unsigned int* counter) {
    visible_kernel<2>(nodes, tris, num_tris, start, end, active, n, out, counter);
}

// rayd_visible4: rayd_visible over quad nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible4(const float4* __restrict__ nodes,
                                                               const float4* __restrict__ tris, int num_tris,
                                                               const float* __restrict__ start,
                                                               const float* __restrict__ end,
                                                               const unsigned char* __restrict__ active, int n,
                                                               unsigned char* __restrict__ out, unsigned int* counter) {
    visible_kernel<4>(nodes, tris, num_tris, start, end, active, n, out, counter);
}

// The masked variants: each takes its unmasked kernel's parameters followed
// by
//   tmin        float[n] | null    per-row interval start (null: the
//                                  query's epsilon; reflections: bounce 0
//                                  only, later bounces keep 1e-5)
//   ray_mask    uint8[n] | null    per-row visibility mask (null: 0xff)
//   face_mask   uint8[num_faces] | null  the visibility mask of every global
//                                  face, by global prim id (null: 0xff)
// and counts a hit only when ray_mask[i] & face_mask[prim] != 0. The
// visibility kernels take face_mask alone (segments carry no tmin or mask).
// With all three null they write bitwise what their unmasked kernel writes.

// rayd_intersect_masked: rayd_intersect with per-row tmin and masks.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ face_mask) {
    intersect_kernel<2, true>(INTERSECT_ARGS, Masks{tmin, ray_mask, face_mask});
}

// rayd_intersect_masked4: rayd_intersect_masked over quad nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_masked4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ face_mask) {
    intersect_kernel<4, true>(INTERSECT_ARGS, Masks{tmin, ray_mask, face_mask});
}

// rayd_trace_reflections_masked: rayd_trace_reflections with per-row tmin
// (bounce 0) and masks (every bounce).
__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter, const float* __restrict__ tmin,
    const unsigned char* __restrict__ ray_mask, const unsigned char* __restrict__ face_mask) {
    reflections_kernel<2, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                                out_images, counter, Masks{tmin, ray_mask, face_mask});
}

// rayd_trace_reflections_masked4: rayd_trace_reflections_masked over quad
// nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections_masked4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter, const float* __restrict__ tmin,
    const unsigned char* __restrict__ ray_mask, const unsigned char* __restrict__ face_mask) {
    reflections_kernel<4, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                                out_images, counter, Masks{tmin, ray_mask, face_mask});
}

// rayd_visible_masked(nodes, tris, num_tris, start, end, active, n, out,
// counter, face_mask): rayd_visible where a face blocks only when its mask
// is not 0 (segments have the full ray mask 0xff).
__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible_masked(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int n, unsigned char* __restrict__ out,
    unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    visible_kernel<2, true>(nodes, tris, num_tris, start, end, active, n, out, counter,
                            Masks{nullptr, nullptr, face_mask});
}

// rayd_visible_masked4: rayd_visible_masked over quad nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible_masked4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int n, unsigned char* __restrict__ out,
    unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    visible_kernel<4, true>(nodes, tris, num_tris, start, end, active, n, out, counter,
                            Masks{nullptr, nullptr, face_mask});
}

// rayd_intersect_masked8: rayd_intersect_masked over compressed wide nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_masked8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ face_mask) {
    intersect_kernel<8, true>(INTERSECT_ARGS, Masks{tmin, ray_mask, face_mask});
}

// rayd_trace_reflections_masked8: rayd_trace_reflections_masked over
// compressed wide nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections_masked8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter, const float* __restrict__ tmin,
    const unsigned char* __restrict__ ray_mask, const unsigned char* __restrict__ face_mask) {
    reflections_kernel<8, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                                out_images, counter, Masks{tmin, ray_mask, face_mask});
}

// rayd_visible_masked8: rayd_visible_masked over compressed wide nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible_masked8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int n, unsigned char* __restrict__ out,
    unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    visible_kernel<8, true>(nodes, tris, num_tris, start, end, active, n, out, counter,
                            Masks{nullptr, nullptr, face_mask});
}

// rayd_visible8: rayd_visible over compressed wide nodes.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible8(const float4* __restrict__ nodes,
                                                               const float4* __restrict__ tris, int num_tris,
                                                               const float* __restrict__ start,
                                                               const float* __restrict__ end,
                                                               const unsigned char* __restrict__ active, int n,
                                                               unsigned char* __restrict__ out, unsigned int* counter) {
    visible_kernel<8>(nodes, tris, num_tris, start, end, active, n, out, counter);
}


// The _dyn entry points: the same queries over 2- and 4-wide nodes with
// dynamic row fetching (dyn_rows in rayd.cuh; same parameters, the
// counter required). The host launches them for persistent launches on a
// BVH larger than L2, where rows of a 32-row batch differ most in length.
__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter) {
    intersect_kernel<2, false, true>(INTERSECT_ARGS);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter) {
    intersect_kernel<4, false, true>(INTERSECT_ARGS);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_compact_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    uint4* __restrict__ out, unsigned int* counter) {
    compact_kernel<2, true>(nodes, tris, num_tris, o, d, tmax, active, n, out, counter);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_compact4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    uint4* __restrict__ out, unsigned int* counter) {
    compact_kernel<4, true>(nodes, tris, num_tris, o, d, tmax, active, n, out, counter);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter) {
    reflections_kernel<2, false, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                          out_images, counter);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter) {
    reflections_kernel<4, false, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                          out_images, counter);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible_dyn(const float4* __restrict__ nodes,
                                                              const float4* __restrict__ tris, int num_tris,
                                                              const float* __restrict__ start,
                                                              const float* __restrict__ end,
                                                              const unsigned char* __restrict__ active, int n,
                                                              unsigned char* __restrict__ out, unsigned int* counter) {
    visible_kernel<2, false, true>(nodes, tris, num_tris, start, end, active, n, out, counter);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible4_dyn(const float4* __restrict__ nodes,
                                                               const float4* __restrict__ tris, int num_tris,
                                                               const float* __restrict__ start,
                                                               const float* __restrict__ end,
                                                               const unsigned char* __restrict__ active, int n,
                                                               unsigned char* __restrict__ out, unsigned int* counter) {
    visible_kernel<4, false, true>(nodes, tris, num_tris, start, end, active, n, out, counter);
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ face_mask) {
    intersect_kernel<2, true, true>(INTERSECT_ARGS, Masks{tmin, ray_mask, face_mask});
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_intersect_masked4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    unsigned int flags, float* __restrict__ out_t, float* __restrict__ out_p, float* __restrict__ out_n,
    float* __restrict__ out_geo_n, float* __restrict__ out_uv, float* __restrict__ out_bary, int* __restrict__ out_shape,
    int* __restrict__ out_prim, int* __restrict__ out_local, int* __restrict__ out_global, unsigned int* counter,
    const float* __restrict__ tmin, const unsigned char* __restrict__ ray_mask,
    const unsigned char* __restrict__ face_mask) {
    intersect_kernel<4, true, true>(INTERSECT_ARGS, Masks{tmin, ray_mask, face_mask});
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter, const float* __restrict__ tmin,
    const unsigned char* __restrict__ ray_mask, const unsigned char* __restrict__ face_mask) {
    reflections_kernel<2, true, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                                out_images, counter, Masks{tmin, ray_mask, face_mask});
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_trace_reflections_masked4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ o,
    const float* __restrict__ d, const float* __restrict__ tmax, const unsigned char* __restrict__ active, int n,
    int max_bounces, unsigned char* __restrict__ out_valid, float* __restrict__ out_t, int* __restrict__ out_prim,
    float* __restrict__ out_images, unsigned int* counter, const float* __restrict__ tmin,
    const unsigned char* __restrict__ ray_mask, const unsigned char* __restrict__ face_mask) {
    reflections_kernel<4, true, true>(nodes, tris, num_tris, o, d, tmax, active, n, max_bounces, out_valid, out_t, out_prim,
                                out_images, counter, Masks{tmin, ray_mask, face_mask});
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible_masked_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int n, unsigned char* __restrict__ out,
    unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    visible_kernel<2, true, true>(nodes, tris, num_tris, start, end, active, n, out, counter,
                            Masks{nullptr, nullptr, face_mask});
}

__global__ void __launch_bounds__(TRACE_THREADS) rayd_visible_masked4_dyn(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris, const float* __restrict__ start,
    const float* __restrict__ end, const unsigned char* __restrict__ active, int n, unsigned char* __restrict__ out,
    unsigned int* counter, const unsigned char* __restrict__ face_mask) {
    visible_kernel<4, true, true>(nodes, tris, num_tris, start, end, active, n, out, counter,
                            Masks{nullptr, nullptr, face_mask});
}

}  // extern "C"
