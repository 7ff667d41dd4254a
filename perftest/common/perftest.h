/* Shared option parsing, timing and output of the perftests. Header-only: each perftest is one .cu. */
#ifndef GSHMEM_PERFTEST_H
#define GSHMEM_PERFTEST_H

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"
#include "cuda_timing.h"

/* pt_opts_t grows at its end; perftests initialize its leading fields positionally. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define PT_CUDA(call) CUDA_OR_EXIT("perftest", call)

typedef struct {
    size_t min_size, max_size;
    size_t step_factor;
    int iters, warmup;
    int ctas, threads;
    int json;
    int bidir;
    const char *name;
    /* Options only some perftests take: a test sets `accepts` (PT_ACCEPT_*) and the defaults
     * below before pt_parse; the others reject --op/--scope/--type. */
    unsigned accepts;
    const char *op;    /* --op NAME ("all" or NULL: every op of the test) */
    int scope;         /* --scope thread|warp|block: PT_SCOPE_* */
    const char *type;  /* --type NAME */
    int memcpy;        /* --memcpy: also time a plain cudaMemcpyAsync of each size (put_bw, get_bw) */
    int local_private; /* --local-private: the local side is cudaMalloc memory, not symmetric (put_bw, get_bw) */
    int per_unit;      /* --ops-per-unit K: operations each posting unit issues (post_rate) */
    int shape_set;     /* -c or -t was given (a test whose default shape depends on other options) */
} pt_opts_t;

enum { PT_ACCEPT_OP = 1, PT_ACCEPT_SCOPE = 2, PT_ACCEPT_TYPE = 4, PT_ACCEPT_MEMCPY = 8, PT_ACCEPT_LOCAL = 16, PT_ACCEPT_PER_UNIT = 32 };
enum { PT_SCOPE_THREAD = 0, PT_SCOPE_WARP = 1, PT_SCOPE_BLOCK = 2 };
static const char *const pt_scope_names[] = {"thread", "warp", "block"};

static inline size_t pt_parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static inline void pt_usage(const char *name)
{
    fprintf(stderr,
            "usage: %s [-b min_size] [-e max_size] [-f step_factor] [-n iters] [-w warmup] [-c ctas] [-t threads] [--json]\n"
            "          [--bidir] [--op NAME] [--scope thread|warp|block] [--type NAME] [--memcpy] [--local-private]\n"
            "          [--ops-per-unit K]\n"
            "  sizes accept K, M, G suffixes; run with 2 PEs (gshmemrun -n 2 %s);\n"
            "  --op, --scope, --type, --memcpy, --local-private and --ops-per-unit only where the perftest says so\n"
            "  (perftest/README.md)\n",
            name, name);
}

static inline void pt_parse(int argc, char **argv, pt_opts_t *o)
{
    static struct option longopts[] = {{"json", no_argument, 0, 'j'},       {"bidir", no_argument, 0, 'B'},
                                       {"help", no_argument, 0, 'h'},       {"op", required_argument, 0, 'O'},
                                       {"scope", required_argument, 0, 'S'}, {"type", required_argument, 0, 'T'},
                                       {"memcpy", no_argument, 0, 'M'},      {"local-private", no_argument, 0, 'L'},
                                       {"ops-per-unit", required_argument, 0, 'K'}, {0, 0, 0, 0}};
    int bad_extra = 0;
    int c;
    o->name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    while ((c = getopt_long(argc, argv, "b:e:f:n:w:c:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o->min_size = pt_parse_size(optarg); break;
        case 'e': o->max_size = pt_parse_size(optarg); break;
        case 'f': o->step_factor = (size_t)atol(optarg); break;
        case 'n': o->iters = atoi(optarg); break;
        case 'w': o->warmup = atoi(optarg); break;
        case 'c': o->ctas = atoi(optarg); o->shape_set = 1; break;
        case 't': o->threads = atoi(optarg); o->shape_set = 1; break;
        case 'j': o->json = 1; break;
        case 'B': o->bidir = 1; break;
        case 'O': o->op = optarg; bad_extra |= !(o->accepts & PT_ACCEPT_OP); break;
        case 'T': o->type = optarg; bad_extra |= !(o->accepts & PT_ACCEPT_TYPE); break;
        case 'M': o->memcpy = 1; bad_extra |= !(o->accepts & PT_ACCEPT_MEMCPY); break;
        case 'L': o->local_private = 1; bad_extra |= !(o->accepts & PT_ACCEPT_LOCAL); break;
        case 'K': o->per_unit = atoi(optarg); bad_extra |= !(o->accepts & PT_ACCEPT_PER_UNIT) || o->per_unit < 1; break;
        case 'S':
            bad_extra |= !(o->accepts & PT_ACCEPT_SCOPE);
            if (!strcmp(optarg, "thread")) o->scope = PT_SCOPE_THREAD;
            else if (!strcmp(optarg, "warp")) o->scope = PT_SCOPE_WARP;
            else if (!strcmp(optarg, "block")) o->scope = PT_SCOPE_BLOCK;
            else bad_extra = 1;
            break;
        default: pt_usage(o->name); exit(c == 'h' ? 0 : 2);
        }
    }
    if (o->min_size == 0 || o->max_size < o->min_size || o->step_factor < 2 || o->iters < 1 || o->warmup < 0 ||
        o->ctas < 1 || o->threads < 1 || o->threads > 1024 || bad_extra) {
        fprintf(stderr, "%s: bad options\n", o->name);
        pt_usage(o->name);
        exit(2);
    }
}

/* An option the test cannot run with, found before any GPU work: says why and exits 2, as
 * pt_parse does for malformed ones. */
#define PT_BAD_OPTION(o, ...)                                                                      \
    do {                                                                                           \
        fprintf(stderr, "%s: ", (o)->name);                                                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(2);                                                                                   \
    } while (0)

/* Perftests need a GPU: say so and fail (not skip) when there is none. */
static inline void pt_require_gpu(const char *name)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "%s: no usable GPU on this host (%s); perftests need NVIDIA GPUs\n", name,
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(1);
    }
}

static inline void pt_header(const pt_opts_t *o, const char *what, const char *unit)
{
    if (o->json) return;
    printf("# %s: %s, %d PEs, %d CTAs x %d threads, %d iterations (%d warm-up)\n", o->name, what, shmem_n_pes(), o->ctas,
           o->threads, o->iters, o->warmup);
    printf("%12s %12s %12s\n", "size(B)", "time(us)", unit);
}

static inline void pt_row(const pt_opts_t *o, size_t size, double us, double value, const char *unit)
{
    if (o->json)
        printf("{\"test\":\"%s\",\"pes\":%d,\"ctas\":%d,\"threads\":%d,\"iters\":%d,\"size\":%zu,\"time_us\":%.3f,\"%s\":%.3f}\n",
               o->name, shmem_n_pes(), o->ctas, o->threads, o->iters, size, us, unit, value);
    else
        printf("%12zu %12.3f %12.3f\n", size, us, value);
    fflush(stdout);
}

/* ---- shared by the perftests added with the atomics and signals ---- */

/* The options of a latency test that runs one CTA: a thread, a warp or -t threads by --scope. */
static inline void pt_parse_one_cta(int argc, char **argv, pt_opts_t *o)
{
    o->accepts = PT_ACCEPT_SCOPE;
    pt_parse(argc, argv, o);
    o->ctas = 1;
    o->threads = o->scope == PT_SCOPE_THREAD ? 1 : o->scope == PT_SCOPE_WARP ? 32 : o->threads;
}

/* GPU check, shmem_init, and the 2-PE requirement (says so and exits 1 with fewer). */
static inline void pt_init(const pt_opts_t *o)
{
    pt_require_gpu(o->name);
    shmem_init();
    if (shmem_n_pes() < 2) {
        fprintf(stderr, "%s: needs 2 PEs, has %d (gshmemrun -n 2 %s)\n", o->name, shmem_n_pes(), o->name);
        shmem_global_exit(1);
    }
}

/* Ends the whole job with `status`, after one line: NAME: PE n: LABEL: message. */
#define PT_EXIT(o, status, label, ...)                                                             \
    do {                                                                                           \
        fprintf(stderr, "%s: PE %d: %s: ", (o)->name, shmem_my_pe(), label);                       \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        fflush(NULL);                                                                              \
        shmem_global_exit(status);                                                                 \
    } while (0)
/* Fails the whole job: a benchmark of a broken transfer is worse than none. */
#define PT_FAIL(o, ...) PT_EXIT(o, 1, "VERIFICATION FAILED", __VA_ARGS__)
/* An option that passed the checks before init but cannot run on this GPU (a grid larger than
 * fits): refused with exit 2 like any bad option, not reported as a failed check. */
#define PT_REFUSE(o, ...) PT_EXIT(o, 2, "refused", __VA_ARGS__)

/* An idle GPU runs at a low clock and takes milliseconds to ramp up (see rma_bw.cuh): repeat
 * `launch` (kernels or stream operations on `stream`) for 200 ms before measuring. */
#define PT_SPINUP(stream, launch)                                                                  \
    do {                                                                                           \
        cuda_timer_t spin_ = cuda_timer_start(stream, "perftest");                                 \
        for (float spun_ = 0; spun_ < 200.0f; spun_ = cuda_timer_ms(&spin_, stream)) {             \
            launch;                                                                                \
        }                                                                                          \
        cuda_timer_free(&spin_);                                                                   \
    } while (0)

/* Times `launch` on `stream` with CUDA events; returns milliseconds. */
#define PT_TIME_MS(ms, stream, launch)                                                             \
    do {                                                                                           \
        cuda_timer_t timer_ = cuda_timer_start(stream, "perftest");                                \
        launch;                                                                                    \
        (ms) = cuda_timer_ms(&timer_, stream);                                                     \
        cuda_timer_free(&timer_);                                                                  \
    } while (0)

/* A byte pattern that differs per offset and per seed, so a misplaced or missing copy shows. */
static __host__ __device__ __forceinline__ unsigned char pt_pattern(size_t i, unsigned seed)
{
    unsigned x = (unsigned)(i >> 2) * 2654435761u + seed * 40503u + 0x9e3779b9u;
    x ^= x >> 15;
    return (unsigned char)(x >> (8 * (i & 3)));
}

static __global__ void pt_fill_kernel(unsigned char *buf, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = pt_pattern(i, seed);
}

static __global__ void pt_check_kernel(const unsigned char *buf, size_t n, unsigned seed, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (buf[i] != pt_pattern(i, seed)) {
            atomicAdd(&bad[0], 1ull);
            atomicMin(&bad[1], (unsigned long long)i);
        }
}

/* Fills n bytes of local device memory (symmetric or not) with pt_pattern(seed). */
static inline void pt_fill(void *buf, size_t n, unsigned seed)
{
    if (n == 0) return;
    pt_fill_kernel<<<264, 512>>>((unsigned char *)buf, n, seed);
    PT_CUDA(cudaGetLastError());
    PT_CUDA(cudaDeviceSynchronize());
}

/* Checks n bytes of local device memory against pt_pattern(seed); fails the job if different. */
static inline void pt_verify(const pt_opts_t *o, const char *what, const void *buf, size_t n, unsigned seed)
{
    unsigned long long h[2] = {0, ~0ull}, *d;
    if (n == 0) return;
    PT_CUDA(cudaMalloc((void **)&d, sizeof(h)));
    PT_CUDA(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    pt_check_kernel<<<264, 512>>>((const unsigned char *)buf, n, seed, d);
    PT_CUDA(cudaGetLastError());
    PT_CUDA(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    PT_CUDA(cudaFree(d));
    if (h[0]) PT_FAIL(o, "%s: %llu of %zu bytes wrong, first at offset %llu", what, h[0], n, h[1]);
}

/* Table header and rows of the newer perftests: an optional op column, the per-iteration time
 * and up to 4 named values. `shape` replaces "CTAs x threads" where that is not the launch shape. */
static inline void pt_header_ex(const pt_opts_t *o, const char *what, const char *shape, int with_op, int nv,
                         const char *const *names)
{
    if (o->json) return;
    if (shape)
        printf("# %s: %s, %d PEs, %s, %d iterations (%d warm-up)\n", o->name, what, shmem_n_pes(), shape, o->iters,
               o->warmup);
    else
        printf("# %s: %s, %d PEs, %d CTAs x %d threads, %d iterations (%d warm-up)\n", o->name, what, shmem_n_pes(),
               o->ctas, o->threads, o->iters, o->warmup);
    if (with_op) printf("%-16s ", "op");
    printf("%12s %12s", "size(B)", "time(us)");
    for (int i = 0; i < nv; i++) printf(" %12s", names[i]);
    printf("\n");
    fflush(stdout);
}

/* JSON: the keys of pt_row, then "op"/"scope"/"type" where given, "time_us" and the values. */
static inline void pt_row_ex(const pt_opts_t *o, const char *op, const char *scope, const char *type, size_t size,
                      double us, int nv, const char *const *names, const double *vals)
{
    if (o->json) {
        printf("{\"test\":\"%s\",\"pes\":%d,\"ctas\":%d,\"threads\":%d,\"iters\":%d,\"size\":%zu", o->name,
               shmem_n_pes(), o->ctas, o->threads, o->iters, size);
        if (op) printf(",\"op\":\"%s\"", op);
        if (scope) printf(",\"scope\":\"%s\"", scope);
        if (type) printf(",\"type\":\"%s\"", type);
        printf(",\"time_us\":%.3f", us);
        for (int i = 0; i < nv; i++) printf(",\"%s\":%.3f", names[i], vals[i]);
        printf("}\n");
    } else {
        if (op) printf("%-16s ", op);
        printf("%12zu %12.3f", size, us);
        for (int i = 0; i < nv; i++) printf(" %12.3f", vals[i]);
        printf("\n");
    }
    fflush(stdout);
}

/* Is `name` selected by --op (NULL or "all" selects every op)? */
static inline int pt_op_selected(const pt_opts_t *o, const char *name)
{
    return o->op == NULL || !strcmp(o->op, "all") || !strcmp(o->op, name);
}

#endif
