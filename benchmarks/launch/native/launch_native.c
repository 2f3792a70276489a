/* launch_native.c: the C driver-API baseline for rayd-go's launch
 * micro-benchmark. Same PTX (ptx/basic.ptx, entry rayd_noop), same stream
 * kind, same loops and the same statistics as benchmarks/launch (Go).
 *
 * Build and run on a GPU machine:
 *   nvcc -O2 -o bin/launch_native benchmarks/launch/native/launch_native.c -lcuda
 *   bin/launch_native ptx/basic.ptx 0
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = 0; \
    cuGetErrorName(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1); } } while (0)

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static void stats(const char* name, double* v, int n, int last) {
    qsort(v, n, sizeof(double), cmp);
    printf("    \"%s\": {\"n\": %d, \"p10_us\": %.3f, \"median_us\": %.3f, \"p90_us\": %.3f, \"min_us\": %.3f}%s\n",
           name, n, v[n / 10], v[n / 2], v[n * 9 / 10], v[0], last ? "" : ",");
}

int main(int argc, char** argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s basic.ptx [device]\n", argv[0]); return 2; }
    int ordinal = argc > 2 ? atoi(argv[2]) : 0;
    FILE* f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* img = (char*)calloc(len + 1, 1);
    if (fread(img, 1, len, f) != (size_t)len) { perror("read"); return 1; }
    fclose(f);

    CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction fn; CUstream s;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, ordinal));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, img));
    CHECK(cuModuleGetFunction(&fn, mod, "rayd_noop"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    enum { WARM = 2000, ROUNDS = 50, PER = 200, RT = 10000 };
    for (int i = 0; i < WARM; i++) { CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)); CHECK(cuStreamSynchronize(s)); }

    double* sub = (double*)malloc(sizeof(double) * ROUNDS * PER);
    for (int r = 0; r < ROUNDS; r++) {
        CHECK(cuStreamSynchronize(s));
        for (int i = 0; i < PER; i++) {
            double t0 = now_us();
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
            sub[r * PER + i] = now_us() - t0;
        }
    }
    CHECK(cuStreamSynchronize(s));
    double* rt = (double*)malloc(sizeof(double) * RT);
    for (int i = 0; i < RT; i++) {
        double t0 = now_us();
        CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CHECK(cuStreamSynchronize(s));
        rt[i] = now_us() - t0;
    }
    /* cost of a trivial driver call (cuCtxGetCurrent), batches of 1000 */
    enum { CALLS = 1000, BATCH = 200 };
    double* call = (double*)malloc(sizeof(double) * BATCH);
    for (int b = 0; b < BATCH; b++) {
        CUcontext cur;
        double t0 = now_us();
        for (int i = 0; i < CALLS; i++) CHECK(cuCtxGetCurrent(&cur));
        call[b] = (now_us() - t0) / CALLS;
    }
    printf("{\n  \"variant\": \"native-c\",\n  \"results\": {\n");
    stats("trivial_call", call, BATCH, 0);
    stats("submit", sub, ROUNDS * PER, 0);
    stats("round_trip", rt, RT, 1);
    printf("  }\n}\n");
    return 0;
}
