// optix_device.cuh: the OptiX device functions rayd-go's OptiX programs use,
// written as inline PTX without the OptiX SDK headers. OptiX device
// functions are calls to pseudo-functions named _optix_* that the OptiX
// compiler inside the driver (optixModuleCreate) replaces; the operand
// shapes below are those of optix-dev v9.0.0 include/internal/
// optix_device_impl.h (stable from OptiX 7.4 through 9.1).
//
// Compile with a virtual architecture below compute_90 (nvcc -ptx
// -arch=compute_86): for compute_90 nvcc also runs ptxas on the PTX, which
// rejects the _optix_* calls.
//
// Program entry points are extern "C" __global__ functions without
// parameters whose names start with the program kind (__raygen__,
// __miss__, __closesthit__, __anyhit__); launch parameters live in one
// extern "C" __constant__ variable named by the pipeline compile options.
#pragma once

namespace optix {

// OptixRayFlags.
constexpr unsigned int kRayFlagNone = 0u;
constexpr unsigned int kRayFlagDisableAnyHit = 1u << 0;
constexpr unsigned int kRayFlagEnforceAnyHit = 1u << 1;
constexpr unsigned int kRayFlagTerminateOnFirstHit = 1u << 2;
constexpr unsigned int kRayFlagDisableClosestHit = 1u << 3;

// trace_mask is optixTrace with the default payload type, visibility mask
// `mask` (an instance whose visibilityMask shares no bit with it is
// skipped), SBT offset 0, SBT stride 1 and miss index 0, over N (≤ 32)
// payload words p[0..N−1] (in: values before the trace; out: values after
// it). The payload count and type are constant registers (OptiX rejects
// values loaded from memory); the nine ray operands are .f32 registers.
template <unsigned int N>
__device__ __forceinline__ void trace_mask(unsigned long long handle, float ox, float oy, float oz, float dx, float dy,
                                           float dz, float tmin, float tmax, unsigned int mask, unsigned int ray_flags,
                                           unsigned int (&p)[N]) {
    static_assert(N <= 32, "at most 32 payload words");
    unsigned int w[32];
#pragma unroll
    for (unsigned int k = 0; k < 32; ++k) w[k] = 0u;
#pragma unroll
    for (unsigned int k = 0; k < N; ++k) w[k] = p[k];
    const unsigned int type = 0u;  // OPTIX_PAYLOAD_TYPE_DEFAULT
    const unsigned int sbt_offset = 0u, sbt_stride = 1u, miss_index = 0u, count = N;
    const float time = 0.0f;
    asm volatile(
        "call"
        "(%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%"
        "29,%30,%31),"
        "_optix_trace_typed_32,"
        "(%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%"
        "59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80);"
        : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7]), "=r"(w[8]),
          "=r"(w[9]), "=r"(w[10]), "=r"(w[11]), "=r"(w[12]), "=r"(w[13]), "=r"(w[14]), "=r"(w[15]), "=r"(w[16]),
          "=r"(w[17]), "=r"(w[18]), "=r"(w[19]), "=r"(w[20]), "=r"(w[21]), "=r"(w[22]), "=r"(w[23]), "=r"(w[24]),
          "=r"(w[25]), "=r"(w[26]), "=r"(w[27]), "=r"(w[28]), "=r"(w[29]), "=r"(w[30]), "=r"(w[31])
        : "r"(type), "l"(handle), "f"(ox), "f"(oy), "f"(oz), "f"(dx), "f"(dy), "f"(dz), "f"(tmin), "f"(tmax),
          "f"(time), "r"(mask), "r"(ray_flags), "r"(sbt_offset), "r"(sbt_stride), "r"(miss_index), "r"(count),
          "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]), "r"(w[4]), "r"(w[5]), "r"(w[6]), "r"(w[7]), "r"(w[8]),
          "r"(w[9]), "r"(w[10]), "r"(w[11]), "r"(w[12]), "r"(w[13]), "r"(w[14]), "r"(w[15]), "r"(w[16]),
          "r"(w[17]), "r"(w[18]), "r"(w[19]), "r"(w[20]), "r"(w[21]), "r"(w[22]), "r"(w[23]), "r"(w[24]),
          "r"(w[25]), "r"(w[26]), "r"(w[27]), "r"(w[28]), "r"(w[29]), "r"(w[30]), "r"(w[31])
        :);
#pragma unroll
    for (unsigned int k = 0; k < N; ++k) p[k] = w[k];
}

// trace is trace_mask with visibility mask 255 (every instance; a single
// GAS has none).
template <unsigned int N>
__device__ __forceinline__ void trace(unsigned long long handle, float ox, float oy, float oz, float dx, float dy,
                                      float dz, float tmin, float tmax, unsigned int ray_flags, unsigned int (&p)[N]) {
    trace_mask<N>(handle, ox, oy, oz, dx, dy, dz, tmin, tmax, 255u, ray_flags, p);
}

// Payload word K (a compile-time constant, as OptiX requires).
template <unsigned int K>
__device__ __forceinline__ unsigned int get_payload() {
    unsigned int r;
    asm volatile("call (%0), _optix_get_payload, (%1);" : "=r"(r) : "r"(K) :);
    return r;
}

template <unsigned int K>
__device__ __forceinline__ void set_payload(unsigned int v) {
    asm volatile("call _optix_set_payload, (%0, %1);" : : "r"(K), "r"(v) :);
}

// t of the current hit in CH/AH; the trace's tmax in MS.
__device__ __forceinline__ float ray_tmax() {
    float f;
    asm("call (%0), _optix_get_ray_tmax, ();" : "=f"(f) :);
    return f;
}

// Barycentrics of the current triangle hit: u weighs vertex 1, v vertex 2.
__device__ __forceinline__ void triangle_barycentrics(float& u, float& v) {
    asm("call (%0, %1), _optix_get_triangle_barycentrics, ();" : "=f"(u), "=f"(v) :);
}

// Index of the hit triangle within its build input (+ primitiveIndexOffset).
__device__ __forceinline__ unsigned int primitive_index() {
    unsigned int r;
    asm("call (%0), _optix_read_primitive_idx, ();" : "=r"(r) :);
    return r;
}

// instanceId of the OptixInstance that was hit (through an IAS only: with a
// bare GAS the value is unspecified).
__device__ __forceinline__ unsigned int instance_id() {
    unsigned int r;
    asm("call (%0), _optix_read_instance_id, ();" : "=r"(r) :);
    return r;
}

__device__ __forceinline__ unsigned int launch_index_x() {
    unsigned int r;
    asm("call (%0), _optix_get_launch_index_x, ();" : "=r"(r) :);
    return r;
}

__device__ __forceinline__ unsigned int launch_dimension_x() {
    unsigned int r;
    asm("call (%0), _optix_get_launch_dimension_x, ();" : "=r"(r) :);
    return r;
}

// Accept the current hit and stop traversal (any-hit programs).
__device__ __forceinline__ void terminate_ray() { asm volatile("call _optix_terminate_ray, ();"); }

// Discard the current hit and continue traversal (any-hit programs).
__device__ __forceinline__ void ignore_intersection() { asm volatile("call _optix_ignore_intersection, ();"); }

}  // namespace optix
