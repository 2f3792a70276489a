// basic.cu: small float32 kernels that exercise the whole driver path
// (PTX load, argument packing, launch on a stream, copies) and the launch
// micro-benchmark. Grid-stride loops: any 1-D grid covers any n.

extern "C" {

// rayd_noop: an empty kernel; the launch micro-benchmark times its submit and
// round trip.
__global__ void rayd_noop() {}

// rayd_fill_f32(out, n, value): out[i] = value for i < n.
__global__ void rayd_fill_f32(float* __restrict__ out, unsigned int n, float value) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = value;
    }
}

// rayd_iota_u32(out, n, start): out[i] = start + i for i < n.
__global__ void rayd_iota_u32(unsigned int* __restrict__ out, unsigned int n, unsigned int start) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = start + i;
    }
}

// rayd_axpy_f32(y, x, a, n): y[i] = a * x[i] + y[i] (one rounding: fmaf).
__global__ void rayd_axpy_f32(float* __restrict__ y, const float* __restrict__ x, float a, unsigned int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = fmaf(a, x[i], y[i]);
    }
}

// rayd_reduce_sum_f32(x, n, partial): block b writes the sum of its
// grid-stride slice of x to partial[b], accumulated in double and rounded
// once. blockDim.x must be 256. Deterministic: run it again over the
// partials with one block to finish the sum.
__global__ void __launch_bounds__(256) rayd_reduce_sum_f32(const float* __restrict__ x, unsigned int n,
                                                           float* __restrict__ partial) {
    __shared__ double warp_sums[8];
    double acc = 0.0;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        acc += (double)x[i];
    }
    for (int off = 16; off > 0; off >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    }
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_sums[warp] = acc;
    }
    __syncthreads();
    if (warp == 0) {
        acc = lane < 8 ? warp_sums[lane] : 0.0;
        for (int off = 4; off > 0; off >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, off);
        }
        if (lane == 0) {
            partial[blockIdx.x] = (float)acc;
        }
    }
}

}  // extern "C"
