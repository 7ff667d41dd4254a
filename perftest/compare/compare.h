/* Shared by the comparison benchmarks (nvshmem_bench.cu, nccl_bench.cu): options, the rank and
 * unique-id exchange through a file, data patterns, timing in CUDA graphs and the JSON rows.
 * Plain CUDA and C only: nothing here names a library, so each benchmark builds against the
 * library it measures. */
#ifndef GSHMEM_COMPARE_H
#define GSHMEM_COMPARE_H

#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/cuda_timing.h"

#define CMP_CUDA(call) CUDA_OR_EXIT("compare", call)

typedef struct {
    const char *lib;      /* the "lib" of every row: --lib NAME */
    const char *benches;  /* --bench a,b,c (NULL: all) */
    int quick;            /* --quick: fewer sizes and iterations */
    int rank, nranks;     /* COMPARE_RANK, COMPARE_NRANKS */
    const char *uid_file; /* COMPARE_UID_FILE */
} cmp_opts_t;

static inline void cmp_usage(const char *prog)
{
    fprintf(stderr,
            "usage: COMPARE_RANK=r COMPARE_NRANKS=n COMPARE_UID_FILE=path %s --lib NAME [--bench a,b,...] [--quick]\n"
            "  every rank runs the same command; rank 0 writes the unique id to the file, the others read it\n"
            "  (perftest/compare/run.sh starts them)\n",
            prog);
}

static inline int cmp_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    char *end;
    long x;
    if (!v || !*v) return dflt;
    x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1 << 20) {
        fprintf(stderr, "compare: %s=%s is not a rank number\n", name, v);
        exit(2);
    }
    return (int)x;
}

static inline void cmp_parse(int argc, char **argv, cmp_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--lib") && i + 1 < argc) o->lib = argv[++i];
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc) o->benches = argv[++i];
        else if (!strcmp(argv[i], "--quick")) o->quick = 1;
        else {
            fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], argv[i]);
            cmp_usage(argv[0]);
            exit(2);
        }
    }
    o->rank = cmp_env_int("COMPARE_RANK", 0);
    o->nranks = cmp_env_int("COMPARE_NRANKS", 1);
    o->uid_file = getenv("COMPARE_UID_FILE");
    if (!o->lib || o->nranks < 1 || o->rank >= o->nranks || (o->nranks > 1 && !o->uid_file)) {
        fprintf(stderr, "%s: needs --lib, COMPARE_RANK < COMPARE_NRANKS and, with more than one rank, COMPARE_UID_FILE\n",
                argv[0]);
        cmp_usage(argv[0]);
        exit(2);
    }
}

/* Is `name` in the comma-separated --bench list (or is there none)? */
static inline int cmp_selected(const cmp_opts_t *o, const char *name)
{
    size_t n = strlen(name);
    if (!o->benches) return 1;
    for (const char *p = o->benches; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Each rank uses GPU rank % GPUs (more ranks than GPUs share them, under MPS by run.sh). */
static inline int cmp_pick_gpu(const cmp_opts_t *o)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "compare: rank %d: no usable GPU (%s)\n", o->rank, e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(1);
    }
    CMP_CUDA(cudaSetDevice(o->rank % n));
    CMP_CUDA(cudaFree(0));
    return n;
}

/* Rank 0 publishes `len` bytes (a unique id) in the file, atomically (written beside it, then
 * renamed); the other ranks wait up to 120 s for it. Returns 0, or -1 after saying why. */
static inline int cmp_share_uid(const cmp_opts_t *o, void *uid, size_t len)
{
    char tmp[4096];
    if (o->nranks == 1) return 0;
    if (o->rank == 0) {
        FILE *f;
        snprintf(tmp, sizeof(tmp), "%s.tmp%d", o->uid_file, (int)getpid());
        f = fopen(tmp, "wb");
        if (!f || fwrite(uid, 1, len, f) != len || fclose(f) != 0 || rename(tmp, o->uid_file) != 0) {
            fprintf(stderr, "compare: cannot write the unique id to %s: %s\n", o->uid_file, strerror(errno));
            return -1;
        }
        return 0;
    }
    for (int waited_ms = 0; waited_ms < 120000; waited_ms += 10) {
        FILE *f = fopen(o->uid_file, "rb");
        if (f) {
            size_t got = fread(uid, 1, len, f);
            fclose(f);
            if (got == len) return 0;
            fprintf(stderr, "compare: %s holds %zu bytes, not a %zu-byte unique id\n", o->uid_file, got, len);
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "compare: rank %d: no unique id in %s after 120 s (did rank 0 start?)\n", o->rank, o->uid_file);
    return -1;
}

/* Microseconds of a monotonic clock (host-side timings). */
static inline double cmp_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One row: a JSON object on stdout (run.sh keeps rank 0's). `us` is the time of one operation;
 * GB/s is bytes / us (algbw for the collectives), 0 where nothing moves. */
static inline void cmp_row(const cmp_opts_t *o, const char *bench, size_t bytes, double us, int iters)
{
    double gbs = bytes && us > 0 ? (double)bytes / (us * 1e3) : 0;
    printf("{\"lib\":\"%s\",\"bench\":\"%s\",\"pes\":%d,\"bytes\":%zu,\"iters\":%d,\"us\":%.3f,\"GB/s\":%.3f}\n", o->lib,
           bench, o->nranks, bytes, iters, us, gbs);
    fflush(stdout);
}

/* ---- data: what rank `pe` holds at float element i, and checks ---- */

/* Small integers, so sums over up to 64 ranks are exact in float. */
static __host__ __device__ __forceinline__ float cmp_value(int pe, size_t i) { return (float)((pe + 1) * 4 + (int)(i % 7)); }

static __global__ void cmp_fill_kernel(float *p, size_t n, int pe, size_t base)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = cmp_value(pe, base + i);
}

/* Fills n floats with what `pe` holds from element `base` on. */
static inline void cmp_fill(float *p, size_t n, int pe, size_t base)
{
    if (!n) return;
    cmp_fill_kernel<<<264, 256>>>(p, n, pe, base);
    CMP_CUDA(cudaGetLastError());
    CMP_CUDA(cudaDeviceSynchronize());
}

enum { CMP_EXPECT_PE, CMP_EXPECT_SUM, CMP_EXPECT_BLOCKS_SAME, CMP_EXPECT_BLOCKS_MINE };

/* Counts the elements of p[0..n) that differ from the expectation:
 *  PE           cmp_value(pe, i)                        (a copy of one rank's data)
 *  SUM          sum over ranks of cmp_value(r, i)       (allreduce)
 *  BLOCKS_SAME  block r = cmp_value(r, i % blk)         (fcollect/allgather)
 *  BLOCKS_MINE  block r = cmp_value(r, me*blk + i%blk)  (alltoall: rank r's block for me) */
static __global__ void cmp_check_kernel(const float *p, size_t n, int kind, int pe, int nranks, size_t blk,
                                        unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float want = 0;
        if (kind == CMP_EXPECT_PE) want = cmp_value(pe, i);
        else if (kind == CMP_EXPECT_SUM)
            for (int r = 0; r < nranks; r++) want += cmp_value(r, i);
        else if (kind == CMP_EXPECT_BLOCKS_SAME) want = cmp_value((int)(i / blk), i % blk);
        else want = cmp_value((int)(i / blk), (size_t)pe * blk + i % blk);
        if (p[i] != want) atomicAdd(bad, 1ull);
    }
}

/* Returns the number of wrong elements. */
static inline unsigned long long cmp_check(const float *p, size_t n, int kind, int pe, int nranks, size_t blk)
{
    unsigned long long *d, bad = 0;
    if (!n) return 0;
    CMP_CUDA(cudaMalloc((void **)&d, sizeof(bad)));
    CMP_CUDA(cudaMemset(d, 0, sizeof(bad)));
    cmp_check_kernel<<<264, 256>>>(p, n, kind, pe, nranks, blk, d);
    CMP_CUDA(cudaGetLastError());
    CMP_CUDA(cudaMemcpy(&bad, d, sizeof(bad), cudaMemcpyDeviceToHost));
    CMP_CUDA(cudaFree(d));
    return bad;
}

/* ---- timing ---- */

/* Iterations for one size: enough to time, few enough that the whole comparison stays within
 * minutes (a 128 MiB collective takes up to a few ms). */
static inline int cmp_iters(const cmp_opts_t *o, size_t bytes)
{
    int n = bytes <= (1u << 20) ? 100 : bytes <= (16u << 20) ? 40 : 10;
    return o->quick ? (n + 3) / 4 : n;
}

/* Captures `iters` repetitions of `call` (stream operations on `s`) into one CUDA graph, launches
 * it once to warm up, then times 3 launches; sets `us` to the time of one repetition. `sync`
 * (a host barrier of the library) runs between warm-up and timing so the ranks start together. */
#define CMP_GRAPH_TIME(us, s, iters, call, sync)                                                   \
    do {                                                                                           \
        cudaGraph_t g_;                                                                            \
        cudaGraphExec_t x_;                                                                        \
        cudaEvent_t t0_, t1_;                                                                      \
        float ms_ = 0;                                                                             \
        CMP_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));                     \
        for (int i_ = 0; i_ < (iters); i_++) { call; }                                             \
        CMP_CUDA(cudaStreamEndCapture(s, &g_));                                                    \
        CMP_CUDA(cudaGraphInstantiate(&x_, g_, 0));                                                \
        CMP_CUDA(cudaGraphDestroy(g_));                                                            \
        CMP_CUDA(cudaGraphLaunch(x_, s));                                                          \
        CMP_CUDA(cudaStreamSynchronize(s));                                                        \
        sync;                                                                                      \
        CMP_CUDA(cudaEventCreate(&t0_));                                                           \
        CMP_CUDA(cudaEventCreate(&t1_));                                                           \
        CMP_CUDA(cudaEventRecord(t0_, s));                                                         \
        for (int r_ = 0; r_ < 3; r_++) CMP_CUDA(cudaGraphLaunch(x_, s));                           \
        CMP_CUDA(cudaEventRecord(t1_, s));                                                         \
        CMP_CUDA(cudaEventSynchronize(t1_));                                                       \
        CMP_CUDA(cudaEventElapsedTime(&ms_, t0_, t1_));                                            \
        CMP_CUDA(cudaEventDestroy(t0_));                                                           \
        CMP_CUDA(cudaEventDestroy(t1_));                                                           \
        CMP_CUDA(cudaGraphExecDestroy(x_));                                                        \
        (us) = ms_ * 1000.0 / (3.0 * (iters));                                                     \
    } while (0)

static __global__ void cmp_spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}

/* An idle GPU runs at a low clock for the first milliseconds of work: keep it busy 200 ms first. */
static inline void cmp_spinup(void)
{
    cmp_spin_kernel<<<132, 128>>>(200ull * 1000 * 1000);
    CMP_CUDA(cudaGetLastError());
    CMP_CUDA(cudaDeviceSynchronize());
}

/* Sizes from `lo` to `hi`, times `step` (16 with --quick: 8 B, 128 B, 2 KiB, 32 KiB, 512 KiB, 8 MiB, 128 MiB). */
#define CMP_FOR_SIZES(o, size, lo, hi, step)                                                       \
    for (size_t size = (lo); size <= (hi); size *= ((o)->quick ? 16 : (step)))

#endif
