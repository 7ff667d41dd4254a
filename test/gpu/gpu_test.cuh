/* Helpers of the GPU functional tests: skip (exit 77) without a GPU, check every CUDA call,
 * verify data on the device and report the first wrong byte. */
#ifndef GSHMEM_GPU_TEST_CUH
#define GSHMEM_GPU_TEST_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"

#define GT_CUDA(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "PE %d: %s failed: %s (%s:%d)\n", shmem_my_pe(), #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            shmem_global_exit(1);                                                                  \
        }                                                                                          \
    } while (0)

#define GT_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "PE %d: check failed: %s: ", shmem_my_pe(), #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                     \
            shmem_global_exit(1);                                                                  \
        }                                                                                          \
    } while (0)

/* cudaFree of each pointer, in order, each checked. */
template <typename... P> static void gt_cuda_free(P... ptrs)
{
    void *all[] = {(void *)ptrs...};
    for (void *p : all) GT_CUDA(cudaFree(p));
}

/* shmem_free of each pointer, in order (the same order on every PE: it is collective). */
template <typename... P> static void gt_shmem_free(P... ptrs)
{
    void *all[] = {(void *)ptrs...};
    for (void *p : all) shmem_free(p);
}

static inline void gt_skip_without_gpu(void)
{
    int n = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines reach a log even when a timeout kills the test */
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "no GPU on this host: skipped\n");
        exit(77);
    }
}

/* How many PEs sym cannot be reached at by load/store (shmem_ptr NULL: peers served by the proxy).
 * Tests bound their one-request-per-element cases by it. */
static inline int gt_remote_peers(const void *sym)
{
    int n = 0;
    for (int pe = 0; pe < shmem_n_pes(); pe++) n += shmem_ptr(sym, pe) == NULL;
    return n;
}

/* GSHMEM_TEST_QUICK=1 (a test knob, not a runtime setting): fewer sizes, rounds and repeats,
 * every data check kept, so a run under compute-sanitizer (10-100x slower, PEs time-sliced on one
 * GPU) takes minutes. test/gpu/run-sanitizer.sh sets it. */
static inline int gt_quick(void)
{
    const char *q = getenv("GSHMEM_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* GSHMEM_TEST_SANITIZER=1 (run-sanitizer.sh sets it): compute-sanitizer serializes kernels, so a
 * test cannot keep one kernel running while the host does work that launches another. */
static inline int gt_sanitizer(void)
{
    const char *v = getenv("GSHMEM_TEST_SANITIZER");
    return v && v[0] == '1';
}

/* The byte that PE `src_pe` writes at index i of a transfer tagged `tag`. */
static __host__ __device__ inline unsigned char gt_pattern(int src_pe, size_t i, unsigned tag)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)src_pe << 48) ^ ((uint64_t)tag << 20);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)(x | 1); /* never 0: an untouched zeroed byte cannot pass */
}

static __global__ void gt_fill(unsigned char *p, size_t n, int src_pe, unsigned tag)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = gt_pattern(src_pe, i, tag);
}

/* Counts wrong bytes; records the first. Bytes just outside [0, n) must keep the guard value. */
static __global__ void gt_verify(const unsigned char *p, size_t n, int src_pe, unsigned tag, unsigned char guard,
                                 unsigned long long *bad, unsigned long long *first)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (p[i] != gt_pattern(src_pe, i, tag)) {
            if (atomicAdd(bad, 1ull) == 0) *first = i;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (p[-1] != guard || p[n] != guard) atomicAdd(bad, 1ull << 40);
    }
}

static unsigned long long *gt_counters;

/* Returns the number of wrong bytes of p (device memory) against src_pe's pattern. */
static inline unsigned long long gt_check(const unsigned char *p, size_t n, int src_pe, unsigned tag, unsigned char guard,
                                   unsigned long long *first)
{
    unsigned long long h[2];
    if (!gt_counters) GT_CUDA(cudaMalloc((void **)&gt_counters, 2 * sizeof(unsigned long long)));
    GT_CUDA(cudaMemset(gt_counters, 0, 2 * sizeof(unsigned long long)));
    gt_verify<<<264, 512>>>(p, n, src_pe, tag, guard, gt_counters, gt_counters + 1);
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaMemcpy(h, gt_counters, sizeof(h), cudaMemcpyDeviceToHost));
    *first = h[1];
    return h[0];
}

#endif
