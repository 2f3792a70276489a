// rf_fold.cu: the resident partials of the multi-device RF grid
// accumulations (accum_dfr_direct, accum_dfr_coherent_direct,
// accumulate_reflections; accel/rf_partial.go).
//
// A partial is the state an accumulation kernel adds into before any
// float32 conversion: float64 grid sums (acc, nacc values) and int32
// counters (ints, nints values). Every device of a sharded call keeps one,
// zeroed once per call (rf_zero_partial) and added into by each of its
// windows. The master folds the others into its own in device order
// (rf_fold_partial, one launch per other partial) and the last fold writes
// the total as one array of 32-bit words: nacc float32 values (round to
// nearest from the float64 sum, the single-device conversion) followed by
// the nints counters, which one copy brings to the host.
//
// The other partial is read where it lies: src_acc and src_ints are device
// addresses (of the master's own device, or of a peer whose memory the
// master's context can access); 0 reads nothing. Counters add as uint32,
// so they wrap exactly like the host's int32 merges.

#define RF_FOLD_THREADS 128

// rf_zero_partial: acc[i] = 0 for i < nacc and ints[j] = 0 for j < nints.
extern "C" __global__ void __launch_bounds__(RF_FOLD_THREADS)
    rf_zero_partial(double* __restrict__ acc, long long nacc, int* __restrict__ ints, long long nints) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = first; i < nacc; i += stride) acc[i] = 0.0;
    for (long long j = first; j < nints; j += stride) ints[j] = 0;
}

// rf_fold_partial: v = acc[i] + src_acc[i] (acc[i] alone when src_acc is
// 0) for i < nacc, and likewise for the counters. With out null the sums
// are written back into acc and ints; otherwise they go to out (nacc
// float32 bit patterns, then nints counters) and acc and ints are left as
// they were.
extern "C" __global__ void __launch_bounds__(RF_FOLD_THREADS)
    rf_fold_partial(double* __restrict__ acc, int* __restrict__ ints, unsigned long long src_acc,
                    unsigned long long src_ints, long long nacc, long long nints, unsigned int* __restrict__ out) {
    const double* sa = reinterpret_cast<const double*>(src_acc);
    const unsigned int* si = reinterpret_cast<const unsigned int*>(src_ints);
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = first; i < nacc; i += stride) {
        double v = acc[i];
        if (sa != nullptr) v += sa[i];
        if (out != nullptr) {
            out[i] = __float_as_uint((float)v);
        } else {
            acc[i] = v;
        }
    }
    for (long long j = first; j < nints; j += stride) {
        unsigned int v = (unsigned int)ints[j];
        if (si != nullptr) v += si[j];
        if (out != nullptr) {
            out[nacc + j] = v;
        } else {
            ints[j] = (int)v;
        }
    }
}
