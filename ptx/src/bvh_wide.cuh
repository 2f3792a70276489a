// bvh_wide.cuh: the collapse of the binary tree into compressed wide nodes
// (Width 8; accel/wide.go and accel/hostwide.go, which mirror it bit for
// bit): the device helpers of rayd_bvh_collapse_wide and rayd_bvh_emit_wide
// (bvh_build.cu), which it is included by after its own helpers.
#pragma once

#define WIDE_SLOTS 8
#define WIDE_THREADS 1024

namespace {

__device__ __forceinline__ float box_half_area(const float* __restrict__ node_box, int c) {
    const float* b = node_box + 6LL * c;
    return half_area(b[0], b[1], b[2], b[3], b[4], b[5]);
}

// wide_collapse: the children of the wide node rooted at internal node i
// (hostTree.wideCollapse): i's two children, the openable child with the
// largest half area replaced in place by its two children until eight.
// area[k] caches the half area of an openable list[k] (−1: not openable).
__device__ __forceinline__ int wide_collapse(int i, int n, const int* __restrict__ child, const int* __restrict__ info,
                                             const float* __restrict__ node_box, int* list) {
    float area[WIDE_SLOTS];
    list[0] = child[2 * i];
    list[1] = child[2 * i + 1];
    for (int k = 0; k < 2; ++k) area[k] = leafish(list[k], n, info) ? -1.0f : box_half_area(node_box, list[k]);
    int m = 2;
    while (m < WIDE_SLOTS) {
        int best = -1;
        float ba = 0.0f;
        for (int k = 0; k < m; ++k) {
            if (leafish(list[k], n, info)) continue;
            if (best < 0 || area[k] > ba) {
                best = k;
                ba = area[k];
            }
        }
        if (best < 0) break;
        int c = list[best];
        for (int k = m; k > best + 1; --k) {
            list[k] = list[k - 1];
            area[k] = area[k - 1];
        }
        list[best] = child[2 * c];
        list[best + 1] = child[2 * c + 1];
        for (int k = best; k < best + 2; ++k) {
            area[k] = leafish(list[k], n, info) ? -1.0f : box_half_area(node_box, list[k]);
        }
        ++m;
    }
    return m;
}

// wide_assign: slot[k] = list index placed in slot k, −1 when empty
// (hostTree.wideAssign: greedy by the largest cost, first pair on ties).
// The cost of child c for slot s is the octant affinity of wideCost: the
// centroid offsets o = (lo + hi) − (plo + phi), negated along the axes whose
// bit is set in s, summed x + y then + z.
__device__ __forceinline__ void wide_assign(int i, const int* list, int m, const float* __restrict__ node_box,
                                            int* slot) {
    float o[WIDE_SLOTS][3];
    const float* p = node_box + 6LL * i;
    for (int c = 0; c < m; ++c) {
        const float* b = node_box + 6LL * list[c];
#pragma unroll
        for (int a = 0; a < 3; ++a) o[c][a] = __fsub_rn(__fadd_rn(b[a], b[3 + a]), __fadd_rn(p[a], p[3 + a]));
    }
    for (int k = 0; k < WIDE_SLOTS; ++k) slot[k] = -1;
    unsigned int taken = 0u;
    for (int step = 0; step < m; ++step) {
        int bc = -1, bs = -1;
        float best = 0.0f;
        for (int c = 0; c < m; ++c) {
            if ((taken >> c) & 1u) continue;
            for (int s = 0; s < WIDE_SLOTS; ++s) {
                if (slot[s] >= 0) continue;
                float x = (s & 1) ? -o[c][0] : o[c][0];
                float y = (s & 2) ? -o[c][1] : o[c][1];
                float z = (s & 4) ? -o[c][2] : o[c][2];
                float v = __fadd_rn(__fadd_rn(x, y), z);
                if (bc < 0 || v > best) {
                    bc = c;
                    bs = s;
                    best = v;
                }
            }
        }
        taken |= 1u << bc;
        slot[bs] = bc;
    }
}

__device__ __forceinline__ void leaf_range(int c, int n, const int* __restrict__ first, const int* __restrict__ count,
                                           int& f, int& k) {
    if (c >= n - 1) {
        f = c - (n - 1);
        k = 1;
    } else {
        f = first[c];
        k = count[c];
    }
}

// write_wide quantizes the occupied slots (used bit c) and writes wide node
// q (putWide): count[c] > 0 marks a leaf slot, internal bit c an internal one.
__device__ __forceinline__ void write_wide(float4* __restrict__ nodes, long long q, unsigned int used,
                                           unsigned int imask, const float (*lo)[3], const float (*hi)[3],
                                           const unsigned int* meta, unsigned int child_base, unsigned int tri_base) {
    unsigned int w[20];
#pragma unroll
    for (int k = 0; k < 20; ++k) w[k] = 0u;
    for (int a = 0; a < 3; ++a) {
        float L = 0.0f, H = 0.0f;
        bool first = true;
        for (int c = 0; c < WIDE_SLOTS; ++c) {
            if (!((used >> c) & 1u)) continue;
            if (first) {
                L = lo[c][a];
                H = hi[c][a];
                first = false;
                continue;
            }
            L = min2(L, lo[c][a]);
            H = max2(H, hi[c][a]);
        }
        unsigned int e = quad_step(__dsub_rn((double)H, (double)L));
        double st = __longlong_as_double((long long)((unsigned long long)(e - 127u + 1023u) << 52));
        w[a] = __float_as_uint(L);
        w[3] |= e << (8 * a);
        for (int c = 0; c < WIDE_SLOTS; ++c) {
            if (!((used >> c) & 1u)) continue;
            double ql = floor(__dsub_rn(__ddiv_rn(__dsub_rn((double)lo[c][a], (double)L), st), 0x1p-30));
            double qh = ceil(__dadd_rn(__ddiv_rn(__dsub_rn((double)hi[c][a], (double)L), st), 0x1p-30));
            w[8 + 4 * a + c / 4] |= quad_clamp(ql) << (8 * (c % 4));
            w[10 + 4 * a + c / 4] |= quad_clamp(qh) << (8 * (c % 4));
        }
    }
    for (int c = 0; c < WIDE_SLOTS; ++c) w[6 + c / 4] |= meta[c] << (8 * (c % 4));
    w[3] |= imask << 24;
    w[4] = child_base;
    w[5] = tri_base;
    float4* dst = nodes + 5 * q;
#pragma unroll
    for (int k = 0; k < 5; ++k) {
        dst[k] = make_float4(__uint_as_float(w[4 * k]), __uint_as_float(w[4 * k + 1]), __uint_as_float(w[4 * k + 2]),
                             __uint_as_float(w[4 * k + 3]));
    }
}

}  // namespace
