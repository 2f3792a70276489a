// rf_paths.cu: trace_dfr_paths (spec §7.2) over the triangle BVH: one lane
// per (transmitter, receiver, state) g of the window, state g mod M,
// receiver (g div M) mod R, transmitter (g div M) div R; each successful
// lane writes one path row with its UTD field (rf_utd.cuh), at row g
// (SourceLane) or at a row reserved from *count (Compact).
//
// Parameters of rf_dfr_paths / rf_dfr_paths4 / rf_dfr_paths8:
//   nodes, tris, num_tris   the BVH (rayd.cuh layout; *4: quad nodes, *8: compressed wide nodes)
//   states      uint32[M·RF_STATE_WORDS] packed states (accel/rf_pack.go)
//   M           state limit (> 0)
//   rx          float32[3R] receivers; R receivers, T transmitters
//   tx_pol      float32[3·pol_rows] or null; pol_rows 0 (x̂), 1 (broadcast) or T
//   lambda      λ > 0
//   layout      0 Compact, 1 SourceLane
//   lane_offset, lane_count   the window of the T·R·M lanes
//   rows        uint32[capacity·RF_PATH_WORDS] path rows (see below)
//   capacity    rows available; a Compact row past it is counted but not written
//   count       int32[1], incremented per valid row
// Row words: valid, tx, rx, order, edge0, edge1, edge2, delay (f32),
// field x re, x im, y re, y im, z re, z im (f32), p0 xyz, p1 xyz, p2 xyz (f32), 0.
// rf_dfr_paths_init writes n inert rows (valid 0, ids −1, order 0, zeros).
#include "rf_utd.cuh"

using namespace rf;

#define RF_PATH_WORDS 24

namespace {

__device__ __forceinline__ FaceMat face_mat(const unsigned int* st, int k) {
    const unsigned int* m = st + RFS_FACE_MAT + 5 * k;
    FaceMat f;
    f.present = wi(m, 0) != 0;
    f.eta = (double)wf(m, 1);
    f.sigma = (double)wf(m, 2);
    f.mu = (double)wf(m, 3);
    f.gain = (double)wf(m, 4);
    return f;
}

// path_lane is rf pathLane for state record st and receiver rx.
template <int W>
__device__ __forceinline__ bool path_lane(const Scn& sc, const unsigned int* st, d3 rx, double k, double omega, d3 pol,
                                          d3& q, double& delay, cv& f) {
    double tmin = (double)wf(st, RFS_TMIN), tmax = (double)wf(st, RFS_TMAX);
    double length = tmax - tmin;
    d3 src = w3(st, RFS_SRC), pos = w3(st, RFS_POS), dir = w3(st, RFS_DIR);
    if (!fin3(src) || !fin3(pos) || !fin3(rx) || !(length > RF_EPS_SMALL)) return false;
    d3 e = dir * (1.0 / sqrt(gmax(dot(dir, dir), RF_EPS_SMALL)));
    d3 origin = pos + e * tmin;
    double p = stationary_parameter(src, rx, origin, e);
    if (!fin(p)) return false;
    q = origin + e * gmin(gmax(p, 0.0), length);
    d3 n0 = w3(st, RFS_N0), n1 = w3(st, RFS_N1);
    d3 bis = n0 + n1;
    d3 qv = q + bis * (RF_DFR_BIAS / sqrt(gmax(dot(bis, bis), RF_EPS_SMALL)));
    if (!visible<W>(sc, src, qv) || !visible<W>(sc, qv, rx)) return false;
    UtdIn in;
    in.src = src;
    in.edge_pos = pos;
    in.edge_dir = e;
    in.n0 = n0;
    in.nn = n1;
    in.wedge_n = (double)wf(st, RFS_EXT) / RF_PI;
    in.line_min = tmin;
    in.line_max = tmax;
    in.face0 = face_mat(st, 0);
    in.face1 = face_mat(st, 1);
    in.k = k;
    in.omega = omega;
    in.tx_pol = pol;
    cd amp = cmk(sqrt(gmax((double)wf(st, RFS_POWER), 0.0)), 0.0);
    f = utd_field(in, rx) * amp;
    double pw = cpower(f);
    if (!(pw > 1e-30) || !fin(pw) || !cvfin(f)) return false;
    delay = (norm(q - src) + norm(rx - q)) / RF_C0;
    return true;
}

__device__ __forceinline__ void put_f(unsigned int* w, double v) { *w = __float_as_uint((float)v); }

template <int W>
__device__ __forceinline__ void paths_kernel(const Scn& sc, const unsigned int* __restrict__ states, int M,
                                             const float* __restrict__ rx, int R, int T,
                                             const float* __restrict__ tx_pol, int pol_rows, double lambda, int layout,
                                             int lane_offset, int lane_count, unsigned int* __restrict__ rows,
                                             int capacity, int* __restrict__ count) {
    const double k = 2.0 * RF_PI / lambda;
    const double omega = 2.0 * RF_PI * RF_C0 / lambda;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x; l < lane_count; l += stride) {
        const unsigned int g = (unsigned int)(lane_offset + l);
        const int s = (int)(g % (unsigned int)M);
        const unsigned int pair = g / (unsigned int)M;
        const int r = (int)(pair % (unsigned int)R), t = (int)(pair / (unsigned int)R);
        const unsigned int* st = states + (size_t)s * RF_STATE_WORDS;
        if (wi(st, RFS_ACTIVE) == 0) continue;
        d3 pol = mk(1, 0, 0);
        if (pol_rows == 1) pol = ld3(tx_pol, 0);
        else if (pol_rows > 1) pol = ld3(tx_pol, t);
        d3 q;
        double delay;
        cv f;
        if (!path_lane<W>(sc, st, ld3(rx, r), k, omega, pol, q, delay, f)) continue;
        int slot = atomicAdd(count, 1);
        if (layout == 1) slot = (int)g;
        if (slot < 0 || slot >= capacity) continue;
        unsigned int* w = rows + (size_t)slot * RF_PATH_WORDS;
        w[0] = 1u;
        w[1] = (unsigned int)t;
        w[2] = (unsigned int)r;
        w[3] = 1u;
        w[4] = (unsigned int)wi(st, RFS_EDGE);
        w[5] = 0xffffffffu;
        w[6] = 0xffffffffu;
        put_f(w + 7, delay);
        put_f(w + 8, f.x.re);
        put_f(w + 9, f.x.im);
        put_f(w + 10, f.y.re);
        put_f(w + 11, f.y.im);
        put_f(w + 12, f.z.re);
        put_f(w + 13, f.z.im);
        put_f(w + 14, q.x);
        put_f(w + 15, q.y);
        put_f(w + 16, q.z);
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_dfr_paths(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int M, const float* __restrict__ rx, int R, int T,
    const float* __restrict__ tx_pol, int pol_rows, double lambda, int layout, int lane_offset, int lane_count,
    unsigned int* __restrict__ rows, int capacity, int* __restrict__ count) {
    Scn sc{nodes, tris, num_tris};
    paths_kernel<2>(sc, states, M, rx, R, T, tx_pol, pol_rows, lambda, layout, lane_offset, lane_count, rows, capacity,
                    count);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_dfr_paths4(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int M, const float* __restrict__ rx, int R, int T,
    const float* __restrict__ tx_pol, int pol_rows, double lambda, int layout, int lane_offset, int lane_count,
    unsigned int* __restrict__ rows, int capacity, int* __restrict__ count) {
    Scn sc{nodes, tris, num_tris};
    paths_kernel<4>(sc, states, M, rx, R, T, tx_pol, pol_rows, lambda, layout, lane_offset, lane_count, rows, capacity,
                    count);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS) rf_dfr_paths8(
    const float4* __restrict__ nodes, const float4* __restrict__ tris, int num_tris,
    const unsigned int* __restrict__ states, int M, const float* __restrict__ rx, int R, int T,
    const float* __restrict__ tx_pol, int pol_rows, double lambda, int layout, int lane_offset, int lane_count,
    unsigned int* __restrict__ rows, int capacity, int* __restrict__ count) {
    Scn sc{nodes, tris, num_tris};
    paths_kernel<8>(sc, states, M, rx, R, T, tx_pol, pol_rows, lambda, layout, lane_offset, lane_count, rows, capacity,
                    count);
}

extern "C" __global__ void __launch_bounds__(RF_THREADS)
    rf_dfr_paths_init(unsigned int* __restrict__ rows, int n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned int* w = rows + i * RF_PATH_WORDS;
        for (int k = 0; k < RF_PATH_WORDS; ++k) w[k] = 0u;
        for (int k = 1; k < 3; ++k) w[k] = 0xffffffffu;
        for (int k = 4; k < 7; ++k) w[k] = 0xffffffffu;
    }
}
