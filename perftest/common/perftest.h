/* Shared option parsing, timing and output of the perftests. Header-only: each perftest is one .cu. */
#ifndef GSHMEM_PERFTEST_H
#define GSHMEM_PERFTEST_H

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"

#define PT_CUDA(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "perftest: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct {
    size_t min_size, max_size;
    size_t step_factor;
    int iters, warmup;
    int ctas, threads;
    int json;
    int bidir;
    const char *name;
} pt_opts_t;

static size_t pt_parse_size(const char *s)
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

static void pt_usage(const char *name)
{
    fprintf(stderr,
            "usage: %s [-b min_size] [-e max_size] [-f step_factor] [-n iters] [-w warmup] [-c ctas] [-t threads] [--json]\n"
            "  sizes accept K, M, G suffixes; run with 2 PEs (gshmemrun -n 2 %s)\n",
            name, name);
}

static void pt_parse(int argc, char **argv, pt_opts_t *o)
{
    static struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"bidir", no_argument, 0, 'B'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    o->name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    while ((c = getopt_long(argc, argv, "b:e:f:n:w:c:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o->min_size = pt_parse_size(optarg); break;
        case 'e': o->max_size = pt_parse_size(optarg); break;
        case 'f': o->step_factor = (size_t)atol(optarg); break;
        case 'n': o->iters = atoi(optarg); break;
        case 'w': o->warmup = atoi(optarg); break;
        case 'c': o->ctas = atoi(optarg); break;
        case 't': o->threads = atoi(optarg); break;
        case 'j': o->json = 1; break;
        case 'B': o->bidir = 1; break;
        default: pt_usage(o->name); exit(c == 'h' ? 0 : 2);
        }
    }
    if (o->min_size == 0 || o->max_size < o->min_size || o->step_factor < 2 || o->iters < 1 || o->warmup < 0 ||
        o->ctas < 1 || o->threads < 1 || o->threads > 1024) {
        fprintf(stderr, "%s: bad options\n", o->name);
        pt_usage(o->name);
        exit(2);
    }
}

/* Perftests need a GPU: say so and fail (not skip) when there is none. */
static void pt_require_gpu(const char *name)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "%s: no usable GPU on this host (%s); perftests need NVIDIA GPUs\n", name,
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(1);
    }
}

static void pt_header(const pt_opts_t *o, const char *what, const char *unit)
{
    if (o->json) return;
    printf("# %s: %s, %d PEs, %d CTAs x %d threads, %d iterations (%d warm-up)\n", o->name, what, shmem_n_pes(), o->ctas,
           o->threads, o->iters, o->warmup);
    printf("%12s %12s %12s\n", "size(B)", "time(us)", unit);
}

static void pt_row(const pt_opts_t *o, size_t size, double us, double value, const char *unit)
{
    if (o->json)
        printf("{\"test\":\"%s\",\"pes\":%d,\"ctas\":%d,\"threads\":%d,\"iters\":%d,\"size\":%zu,\"time_us\":%.3f,\"%s\":%.3f}\n",
               o->name, shmem_n_pes(), o->ctas, o->threads, o->iters, size, us, unit, value);
    else
        printf("%12zu %12.3f %12.3f\n", size, us, value);
    fflush(stdout);
}

#endif
