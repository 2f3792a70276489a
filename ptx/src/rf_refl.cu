// rf_refl.cu: accumulate_reflections (spec §7.1) over the triangle BVH, one
// row per thread in warp-uniform grid-stride loops: each active row follows
// its specular chain (closest hits in float32 as rf's reference casts them,
// chain geometry and Fresnel reflection in float64) and commits every grid
// plane crossing to the seven float64 grids; rf_add_f64_to_f32 (rf_accum.cu)
// turns them into the float32 outputs.
//
// Parameters:
//   nodes, tris, num_tris   the BVH (rayd.cuh layout); rf_accum_reflections4 takes quad nodes,
//                           rf_accum_reflections8 compressed wide nodes
//   o, d        float32[3n] rays (d normalized here); tmax float32[n] or null
//   tx_pos      float32[3n] image-source seeds; tx_pol float32[3n] or null (x̂)
//   active      uint8[n] or null
//   n           rows
//   face_mat    float32[5·num_faces]: eta_r, sigma, mu_r, gain, valid (0/1) per global face
//   axis … res1, area   the grid; area = |span0·span1|/cells
//   lambda, solid_angle  λ > 0 and Ω ≥ 0
//   flags       bit 0 include_los, bit 1 collect_wedges, bit 2 collect_wedge_prefixes
//   max_bounces B ≥ 0
//   wedge_capacity, wedge_stride, wedges   event rows of RF_WEDGE_WORDS words
//   smem_cells  0 or cells (dynamic shared memory RF_WARPS·7·8·cells bytes)
//   acc         float64[7·cells]: power, field x re, x im, y re, y im, z re, z im
//   counters    int32[2]: reflection_count, wedge event count (added to)
#include "rf_complex.cuh"

using namespace rf;

#define RF_WEDGE_WORDS 20

namespace {

struct ReflArgs {
    Scn sc;
    const float* o;
    const float* d;
    const float* tmax;
    const float* tx_pos;
    const float* tx_pol;
    const unsigned char* active;
    int n;
    const float* face_mat;
    int num_faces;
    Grid g;
    double lambda, solid_angle;
    int flags, max_bounces, wedge_capacity, wedge_stride;
    unsigned int* wedges;
};

// plane is PLANE(depth) of spec §7.1 (rf reflCall.plane): the cell and the
// seven values of a committed crossing, or -1.
__device__ __forceinline__ int plane(const ReflArgs& a, d3 o, d3 d, double tb, d3 img, cv e, double (&v)[7]) {
    const Grid& g = a.g;
    double ad = comp(d, g.axis);
    if (fabs(ad) <= RF_EPS_SMALL) return -1;
    double safe = ad < 0.0 ? ad - RF_EPS_SMALL : ad + RF_EPS_SMALL;
    double tp = (g.pos - comp(o, g.axis)) / safe;
    if (!(tp > RF_TRACE_TMIN && tp < tb)) return -1;
    double c0, c1;
    plane_coords(o + d * tp, g.axis, c0, c1);
    if (!(c0 >= g.min0 && c0 < g.max0 && c1 >= g.min1 && c1 < g.max1)) return -1;
    double span0 = g.max0 - g.min0, span1 = g.max1 - g.min1;
    if (span0 <= 0.0 || span1 <= 0.0) return -1;
    int ix = min(max((int)((c0 - g.min0) / span0 * (double)g.res0), 0), g.res0 - 1);
    int iy = min(max((int)((c1 - g.min1) / span1 * (double)g.res1), 0), g.res1 - 1);
    double dist = norm(plane_point(g.axis, g.pos, c0, c1) - img);
    double fspl = a.lambda / (4.0 * RF_PI * gmax(dist, RF_EPS_SMALL));
    double gs = a.solid_angle / gmax(g.area, RF_EPS_SMALL) * dist * dist / gmax(fabs(ad), RF_EPS_SMALL);
    double amp = fspl * sqrt(gmax(gs, 0.0));
    double k = 2.0 * RF_PI / a.lambda;
    cv ec = e * (cexpi(-fmod(k * dist, 2.0 * RF_PI)) * cmk(amp, 0.0));
    double p = cpower(ec);
    if (!cvfin(ec) || !(p > 0.0) || !fin(p)) return -1;
    v[0] = p;
    v[1] = ec.x.re; v[2] = ec.x.im;
    v[3] = ec.y.re; v[4] = ec.y.im;
    v[5] = ec.z.re; v[6] = ec.z.im;
    return iy * g.res0 + ix;
}

// fresnel_reflect is rf reflCall.fresnelReflect: the reflected field (zero
// for an invalid face) and direction r.
__device__ __forceinline__ cv fresnel_reflect(const ReflArgs& a, cv e, d3 d, d3 n, int prim, d3& r) {
    double dn = dot(d, n);
    r = normalize(d - n * (2.0 * dn));
    d3 sv = cross(n, d);
    d3 s = dot(sv, sv) <= RF_NORM_FLOOR ? stable_perp(d, n) : normalize(sv);
    d3 pv = cross(s, d);
    d3 pin = dot(pv, pv) <= RF_NORM_FLOOR ? stable_perp(d, n) : normalize(pv);
    d3 ov = cross(s, r);
    d3 pout = dot(ov, ov) <= RF_NORM_FLOOR ? stable_perp(r, n) : normalize(ov);
    cv zero{{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
    if (prim < 0 || prim >= a.num_faces) return zero;
    const float* m = a.face_mat + 5LL * prim;
    if (m[4] == 0.0f) return zero;
    double omega = gmax(2.0 * RF_PI * RF_C0 / gmax(a.lambda, RF_EPS_SMALL), RF_EPS_SMALL);
    cd rte, rtm;
    fresnel_coefficients((double)m[0], (double)m[1], (double)m[2], (double)m[3], omega, fabs(dn), rte, rtm);
    return along(s, rte * dot_real(e, s)) + along(pout, rtm * dot_real(e, pin));
}

__device__ __forceinline__ void put3(unsigned int* w, d3 v) {
    w[0] = __float_as_uint((float)v.x);
    w[1] = __float_as_uint((float)v.y);
    w[2] = __float_as_uint((float)v.z);
}

// store_wedge records a reflection event (rf reflCall.storeWedge).
__device__ __forceinline__ void store_wedge(const ReflArgs& a, int* counters, int ray, int depth, int prim, d3 hit, d3 n,
                                            d3 dir, d3 src, double power, d3 initial) {
    if ((a.flags & 2) == 0 || (depth > 0 && (a.flags & 4) == 0)) return;
    if ((a.flags & 4) != 0 && a.wedge_stride > 1) {
        unsigned int stride = (unsigned int)a.wedge_stride;
        unsigned int ordinal = (unsigned int)ray * (unsigned int)max(a.max_bounces, 1) + (unsigned int)depth;
        if (ordinal % stride != 0u) return;
        power *= (double)stride;
    }
    int slot = atomicAdd(counters + 1, 1);
    if (slot < 0 || slot >= a.wedge_capacity) return;
    unsigned int* w = a.wedges + (size_t)slot * RF_WEDGE_WORDS;
    w[0] = (unsigned int)ray;
    w[1] = (unsigned int)prim;
    w[2] = (unsigned int)depth;
    w[3] = 0u;
    put3(w + 4, hit);
    put3(w + 7, n);
    put3(w + 10, dir);
    put3(w + 13, src);
    w[16] = __float_as_uint((float)power);
    put3(w + 17, initial);
}

template <int W>
__device__ __forceinline__ void refl_kernel(const ReflArgs& a, int smem_cells, double* acc, int* counters) {
    extern __shared__ double rf_smem[];
    const int cells = a.g.res0 * a.g.res1;
    Hist<7, 0> h{smem_cells > 0 ? rf_smem : nullptr, acc, nullptr, cells};
    h.init();
    unsigned int committed = 0u;
    const bool los = (a.flags & 1) != 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < a.n; base += stride) {
        const long long i = base + (threadIdx.x & 31u);
        bool alive = i < a.n && (a.active == nullptr || a.active[i] != 0);
        d3 o = mk(0, 0, 0), d = o, img = o, initial = o;
        cv e{{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
        if (alive) {
            o = ld3(a.o, i);
            d = normalize(ld3(a.d, i));
            initial = d;
            img = ld3(a.tx_pos, i);
            d3 pol = a.tx_pol ? ld3(a.tx_pol, i) : mk(1, 0, 0);
            d3 tp = pol - d * dot(pol, d);
            tp = dot(tp, tp) <= RF_NORM_FLOOR ? stable_perp(d, pol) : normalize(tp);
            e = along(tp, cmk(1.0, 0.0));
        }
        for (int depth = 0; depth <= a.max_bounces; ++depth) {
            int key = -1;
            double v[7] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            if (alive) {
                double tm = RF_TRACE_TMAX;
                if (depth == 0 && a.tmax != nullptr && isfinite(a.tmax[i])) tm = (double)a.tmax[i];
                float3 of = make_float3((float)o.x, (float)o.y, (float)o.z);
                float3 df = make_float3((float)d.x, (float)d.y, (float)d.z);
                rayd::Best b = fresh_best((float)tm);
                if (rayd::finite3(of.x, of.y, of.z) && rayd::finite3(df.x, df.y, df.z)) b = trace<W, false>(a.sc, of, df, (float)tm);
                const bool hit = b.prim != RF_NO_PRIM;
                double tb = hit ? (double)b.t : RF_TRACE_TMAX;
                if ((depth > 0 || los) && cpower(e) > 0.0) key = plane(a, o, d, tb, img, e, v);
                committed += key >= 0;
                alive = hit && depth != a.max_bounces;
                if (alive) {
                    float4 q0 = __ldg(&a.sc.tris[3LL * b.slot + 0]);
                    float4 q1 = __ldg(&a.sc.tris[3LL * b.slot + 1]);
                    float4 q2 = __ldg(&a.sc.tris[3LL * b.slot + 2]);
                    d3 p0 = mk(q0.x, q0.y, q0.z);
                    d3 e1 = mk(q1.x, q1.y, q1.z) - p0, e2 = mk(q2.x, q2.y, q2.z) - p0;
                    d3 n = cross(e1, e2);
                    if (dot(n, n) > 0.0) n = n * (1.0 / norm(n));
                    d3 p = p0 + e1 * (double)b.u + e2 * (double)b.v;
                    if (dot(d, n) > 0.0) n = neg(n);
                    const int prim = (int)b.prim;
                    d3 r;
                    cv refl = fresnel_reflect(a, e, d, n, prim, r);
                    if (!(cpower(refl) > 0.0)) {
                        alive = false;
                    } else {
                        store_wedge(a, counters, (int)i, depth, prim, p, n, d, img, cpower(e) * a.solid_angle, initial);
                        img = img - n * (2.0 * dot(img - p, n));
                        e = refl;
                        d = r;
                        double off = RF_TRACE_TMIN * (1.0 + gmax(fabs(p.x), gmax(fabs(p.y), fabs(p.z))));
                        if (dot(d, n) < 0.0) off = -off;
                        o = p + n * off;
                    }
                }
            }
            h.commit(key, v, -1);
            if (!__any_sync(RF_FULL, alive)) break;
        }
    }
    add_counter(counters, committed);
    h.flush();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_reflections(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const float* __restrict__ tx_pos, const float* __restrict__ tx_pol, const unsigned char* __restrict__ active,
    int n, const float* __restrict__ face_mat, int num_faces, int axis, double pos, double min0, double max0,
    double min1, double max1, int res0, int res1, double area, double lambda, double solid_angle, int flags,
    int max_bounces, int wedge_capacity, int wedge_stride, unsigned int* __restrict__ wedges, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    ReflArgs a{{nodes, tris, num_tris}, o, d, tmax, tx_pos, tx_pol, active, n, face_mat, num_faces,
               {axis, pos, min0, max0, min1, max1, area, res0, res1}, lambda, solid_angle, flags, max_bounces,
               wedge_capacity, wedge_stride, wedges};
    refl_kernel<2>(a, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_reflections4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const float* __restrict__ tx_pos, const float* __restrict__ tx_pol, const unsigned char* __restrict__ active,
    int n, const float* __restrict__ face_mat, int num_faces, int axis, double pos, double min0, double max0,
    double min1, double max1, int res0, int res1, double area, double lambda, double solid_angle, int flags,
    int max_bounces, int wedge_capacity, int wedge_stride, unsigned int* __restrict__ wedges, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    ReflArgs a{{nodes, tris, num_tris}, o, d, tmax, tx_pos, tx_pol, active, n, face_mat, num_faces,
               {axis, pos, min0, max0, min1, max1, area, res0, res1}, lambda, solid_angle, flags, max_bounces,
               wedge_capacity, wedge_stride, wedges};
    refl_kernel<4>(a, smem_cells, acc, counters);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_accum_reflections8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const float* __restrict__ o, const float* __restrict__ d, const float* __restrict__ tmax,
    const float* __restrict__ tx_pos, const float* __restrict__ tx_pol, const unsigned char* __restrict__ active,
    int n, const float* __restrict__ face_mat, int num_faces, int axis, double pos, double min0, double max0,
    double min1, double max1, int res0, int res1, double area, double lambda, double solid_angle, int flags,
    int max_bounces, int wedge_capacity, int wedge_stride, unsigned int* __restrict__ wedges, int smem_cells,
    double* __restrict__ acc, int* __restrict__ counters) {
    ReflArgs a{{nodes, tris, num_tris}, o, d, tmax, tx_pos, tx_pol, active, n, face_mat, num_faces,
               {axis, pos, min0, max0, min1, max1, area, res0, res1}, lambda, solid_angle, flags, max_bounces,
               wedge_capacity, wedge_stride, wedges};
    refl_kernel<8>(a, smem_cells, acc, counters);
}
