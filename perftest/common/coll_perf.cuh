/* The collective perftests (host/coll/NAME_on_stream and device/coll/NAME), one driver:
 * each executable defines PT_COLL (which collective) and PT_DEVICE (1: called from a kernel).
 *
 * On stream: -n calls captured in one CUDA graph, the graph launched -w times to warm up and then
 * timed over 3 launches; time per call, like nccl-tests' graph mode. From a kernel: one launch
 * calls it -n times (scope --scope thread|warp|block, or grid: a cooperative launch of -c CTAs).
 * Sizes: reduce and broadcast, the bytes of the vector; fcollect, alltoall and reducescatter, the
 * bytes of one PE's block. algbw = size / time. Every size's result is checked once. */
#include "perftest.h"

enum { PT_BARRIER, PT_SYNC, PT_BCAST, PT_FCOLLECT, PT_ALLTOALL, PT_REDUCE, PT_REDUCESCATTER };
static const char *const pt_coll_names[] = {"barrier", "sync", "broadcast", "fcollect", "alltoall", "reduce", "reducescatter"};

/* What PE `pe` holds at element i: small integers, so every partial result of every op over up to
 * 8 PEs stays exact in every type (bfloat16 holds integers up to 256 exactly). A product takes
 * factors of 1 and 2 (at most 2^8); the others (pe + 1) * 2 + i % 3, which differ between PEs, so
 * max and min are checked as much as sum. */
static __device__ float coll_value(int pe, size_t i, int op)
{
    if (op == GSHMEMI_OP_PROD) return (float)(((size_t)pe + i) % 3 == 0 ? 2 : 1);
    return (float)((pe + 1) * 2 + (int)(i % 3));
}

static __device__ float coll_combine(int op, float a, float b)
{
    switch (op) {
    case GSHMEMI_OP_MAX: return fmaxf(a, b);
    case GSHMEMI_OP_MIN: return fminf(a, b);
    case GSHMEMI_OP_PROD: return a * b;
    default: return a + b;
    }
}

template <typename T> static __global__ void coll_fill(T *p, size_t n, int pe, int op)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (T)coll_value(pe, i, op);
}

template <typename T> static __global__ void coll_check(const T *p, size_t n, size_t blk, int npes, int me, int root, int kind,
                                                        int op, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float want;
        if (kind == PT_REDUCE || kind == PT_REDUCESCATTER) {
            size_t at = kind == PT_REDUCESCATTER ? (size_t)me * blk + i : i;
            want = coll_value(0, at, op);
            for (int m = 1; m < npes; m++) want = coll_combine(op, want, coll_value(m, at, op));
        } else if (kind == PT_BCAST) {
            want = coll_value(root, i, op);
        } else { /* fcollect: block m is PE m's source; alltoall: block m is PE m's block for me */
            size_t m = i / blk, at = kind == PT_ALLTOALL ? (size_t)me * blk + i % blk : i % blk;
            want = coll_value((int)m, at, op);
        }
        if ((float)p[i] != want) atomicAdd(bad, 1ull);
    }
}

/* One call of the collective on `stream` (host) for element type T: typed public routines. */
#define PT_HOST_TYPED(name, T)                                                                                         \
    static int pt_host_call_##name(int kind, int op, T *dest, const T *src, size_t n, cudaStream_t s)                   \
    {                                                                                                                  \
        switch (kind) {                                                                                                \
        case PT_BCAST: return shmemx_##name##_broadcast_on_stream(SHMEM_TEAM_WORLD, dest, src, n, 0, s);               \
        case PT_FCOLLECT: return shmemx_##name##_fcollect_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                \
        case PT_ALLTOALL: return shmemx_##name##_alltoall_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                \
        case PT_REDUCESCATTER:                                                                                         \
            switch (op) {                                                                                              \
            case GSHMEMI_OP_MAX: return shmemx_##name##_max_reducescatter_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s); \
            case GSHMEMI_OP_MIN: return shmemx_##name##_min_reducescatter_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s); \
            case GSHMEMI_OP_PROD: return shmemx_##name##_prod_reducescatter_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s); \
            default: return shmemx_##name##_sum_reducescatter_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);           \
            }                                                                                                          \
        default:                                                                                                       \
            switch (op) {                                                                                              \
            case GSHMEMI_OP_MAX: return shmemx_##name##_max_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);       \
            case GSHMEMI_OP_MIN: return shmemx_##name##_min_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);       \
            case GSHMEMI_OP_PROD: return shmemx_##name##_prod_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);     \
            default: return shmemx_##name##_sum_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                   \
            }                                                                                                          \
        }                                                                                                              \
    }
PT_HOST_TYPED(float, float)
PT_HOST_TYPED(double, double)
PT_HOST_TYPED(int, int)
PT_HOST_TYPED(half, __half)
PT_HOST_TYPED(bfloat16, __nv_bfloat16)

/* From a kernel: float only; op sum. KIND is a template parameter so that each executable
 * compiles only its own collective's device code. */
template <int KIND> static __device__ __forceinline__ int pt_dev_call(int scope, float *dest, const float *src, size_t n)
{
    const int kind = KIND;
    const shmem_team_t w = SHMEM_TEAM_WORLD;
#define PT_DEV_FORMS(call_thread, call_warp, call_block, call_grid)                                                   \
    if (scope == 3) return call_grid;                                                                                  \
    if (scope == PT_SCOPE_BLOCK) return call_block;                                                                    \
    if (scope == PT_SCOPE_WARP) return threadIdx.x < 32 ? call_warp : 0;                                               \
    return threadIdx.x == 0 ? call_thread : 0;
    if constexpr (KIND == PT_BARRIER) {
        PT_DEV_FORMS((shmem_barrier(w), 0), (shmemx_barrier_warp(w), 0), (shmemx_barrier_block(w), 0), -1)
    } else if constexpr (KIND == PT_SYNC) {
        PT_DEV_FORMS((shmem_sync(w), 0), (shmemx_sync_warp(w), 0), (shmemx_sync_block(w), 0), -1)
    } else if constexpr (KIND == PT_BCAST) {
        PT_DEV_FORMS(shmem_float_broadcast(w, dest, src, n, 0), shmemx_float_broadcast_warp(w, dest, src, n, 0),
                     shmemx_float_broadcast_block(w, dest, src, n, 0), shmemx_float_broadcast_grid(w, dest, src, n, 0))
    } else if constexpr (KIND == PT_FCOLLECT) {
        PT_DEV_FORMS(shmem_float_fcollect(w, dest, src, n), shmemx_float_fcollect_warp(w, dest, src, n),
                     shmemx_float_fcollect_block(w, dest, src, n), shmemx_float_fcollect_grid(w, dest, src, n))
    } else if constexpr (KIND == PT_ALLTOALL) {
        PT_DEV_FORMS(shmem_float_alltoall(w, dest, src, n), shmemx_float_alltoall_warp(w, dest, src, n),
                     shmemx_float_alltoall_block(w, dest, src, n), shmemx_float_alltoall_grid(w, dest, src, n))
    } else if constexpr (KIND == PT_REDUCESCATTER) {
        PT_DEV_FORMS(shmem_float_sum_reducescatter(w, dest, src, n), shmemx_float_sum_reducescatter_warp(w, dest, src, n),
                     shmemx_float_sum_reducescatter_block(w, dest, src, n), shmemx_float_sum_reducescatter_grid(w, dest, src, n))
    } else {
        PT_DEV_FORMS(shmem_float_sum_reduce(w, dest, src, n), shmemx_float_sum_reduce_warp(w, dest, src, n),
                     shmemx_float_sum_reduce_block(w, dest, src, n), shmemx_float_sum_reduce_grid(w, dest, src, n))
    }
    (void)kind;
#undef PT_DEV_FORMS
}

template <int KIND> static __global__ void __launch_bounds__(1024) pt_dev_kernel(int scope, float *dest, const float *src, size_t n, int iters, int *errors)
{
    for (int i = 0; i < iters; i++)
        if (pt_dev_call<KIND>(scope, dest, src, n)) atomicAdd(errors, 1);
}

static int pt_parse_op(const char *op)
{
    if (!op || !strcmp(op, "sum")) return GSHMEMI_OP_SUM;
    if (!strcmp(op, "max")) return GSHMEMI_OP_MAX;
    if (!strcmp(op, "min")) return GSHMEMI_OP_MIN;
    if (!strcmp(op, "prod")) return GSHMEMI_OP_PROD;
    return -1;
}

template <int KIND, int DEVICE, typename T> static int pt_coll_run(pt_opts_t *o, int grid, const char *tname)
{
    const int kind = KIND, device = DEVICE;
    const int me = shmem_my_pe(), npes = shmem_n_pes(), op = pt_parse_op(o->op);
    const size_t es = sizeof(T);
    const int with_data = kind != PT_BARRIER && kind != PT_SYNC;
    const char *names[] = {"algbw(GB/s)"};
    size_t maxb = with_data ? o->max_size : 0;
    size_t sblk = kind == PT_ALLTOALL || kind == PT_REDUCESCATTER ? (size_t)npes : 1;
    size_t dblk = kind == PT_ALLTOALL || kind == PT_FCOLLECT ? (size_t)npes : 1;
    T *src = (T *)shmem_malloc(maxb * sblk + 256), *dest = (T *)shmem_malloc(maxb * dblk + 256);
    unsigned long long *bad_d, bad = 0;
    int *errors_d, errors = 0;
    cudaStream_t s;
    char shape[96];

    if (op < 0 || (device && op != GSHMEMI_OP_SUM)) PT_FAIL(o, "--op %s: not one of sum, max, min, prod (from a kernel: sum)", o->op);
    PT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(bad)));
    PT_CUDA(cudaMalloc((void **)&errors_d, sizeof(int)));
    PT_CUDA(cudaMemset(errors_d, 0, sizeof(int)));
    if (with_data) coll_fill<T><<<264, 256>>>(src, maxb / es * sblk, me, op);
    PT_CUDA(cudaDeviceSynchronize());
    if (device)
        snprintf(shape, sizeof(shape), "from a kernel, %s scope%s, %s", grid ? "grid" : pt_scope_names[o->scope],
                 grid ? "" : "", tname);
    else
        snprintf(shape, sizeof(shape), "on stream, %d calls per CUDA graph, %s %s", o->iters, tname,
                 kind >= PT_REDUCE ? (o->op ? o->op : "sum") : "");
    if (me == 0) pt_header_ex(o, pt_coll_names[kind], shape, 0, with_data ? 1 : 0, names);
    shmem_barrier_all();

    for (size_t size = with_data ? o->min_size : 0; size <= maxb; size = size ? size * o->step_factor : maxb + 1) {
        size_t n = size / es;
        if (with_data && n == 0) continue;
        float ms = 0;
        cudaGraphExec_t exec = NULL;
        int threads = grid ? o->threads : o->scope == PT_SCOPE_BLOCK ? o->threads : o->scope == PT_SCOPE_WARP ? 32 : 1;
        if constexpr (DEVICE) {
            float *fd = (float *)dest, *fs = (float *)src; /* from a kernel: float only */
            int scope = grid ? 3 : o->scope;
            void *args[] = {(void *)&scope, (void *)&fd, (void *)&fs, (void *)&n, (void *)&o->warmup, (void *)&errors_d};
            shmem_barrier_all();
            if (grid) PT_CUDA(cudaLaunchCooperativeKernel((void *)pt_dev_kernel<KIND>, o->ctas, threads, args, 0, s));
            else pt_dev_kernel<KIND><<<1, threads, 0, s>>>(scope, fd, fs, n, o->warmup, errors_d);
            PT_CUDA(cudaGetLastError());
            PT_CUDA(cudaStreamSynchronize(s));
            shmem_barrier_all();
            args[4] = (void *)&o->iters;
            if (grid) PT_TIME_MS(ms, s, PT_CUDA(cudaLaunchCooperativeKernel((void *)pt_dev_kernel<KIND>, o->ctas, threads, args, 0, s)));
            else PT_TIME_MS(ms, s, (pt_dev_kernel<KIND><<<1, threads, 0, s>>>(scope, fd, fs, n, o->iters, errors_d)));
            ms /= o->iters;
        } else {
            cudaGraph_t graph;
            /* one call outside the graph first: argument errors are reported here, not in capture */
            int rc = kind == PT_BARRIER ? (shmemx_barrier_on_stream(SHMEM_TEAM_WORLD, s), 0)
                     : kind == PT_SYNC  ? (shmemx_sync_on_stream(SHMEM_TEAM_WORLD, s), 0)
                     : es == 4 && !strcmp(tname, "float") ? pt_host_call_float(kind, op, (float *)dest, (const float *)src, n, s)
                     : es == 4 ? pt_host_call_int(kind, op, (int *)dest, (const int *)src, n, s)
                     : es == 8 ? pt_host_call_double(kind, op, (double *)dest, (const double *)src, n, s)
                     : !strcmp(tname, "half") ? pt_host_call_half(kind, op, (__half *)dest, (const __half *)src, n, s)
                                              : pt_host_call_bfloat16(kind, op, (__nv_bfloat16 *)dest, (const __nv_bfloat16 *)src, n, s);
            if (rc) PT_FAIL(o, "%s of %zu bytes failed", pt_coll_names[kind], size);
            PT_CUDA(cudaStreamSynchronize(s));
            PT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            for (int i = 0; i < o->iters; i++) {
                if (kind == PT_BARRIER) shmemx_barrier_on_stream(SHMEM_TEAM_WORLD, s);
                else if (kind == PT_SYNC) shmemx_sync_on_stream(SHMEM_TEAM_WORLD, s);
                else if (es == 4 && !strcmp(tname, "float")) pt_host_call_float(kind, op, (float *)dest, (const float *)src, n, s);
                else if (es == 4) pt_host_call_int(kind, op, (int *)dest, (const int *)src, n, s);
                else if (es == 8) pt_host_call_double(kind, op, (double *)dest, (const double *)src, n, s);
                else if (!strcmp(tname, "half")) pt_host_call_half(kind, op, (__half *)dest, (const __half *)src, n, s);
                else pt_host_call_bfloat16(kind, op, (__nv_bfloat16 *)dest, (const __nv_bfloat16 *)src, n, s);
            }
            PT_CUDA(cudaStreamEndCapture(s, &graph));
            PT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
            PT_CUDA(cudaGraphDestroy(graph));
            for (int w = 0; w < (o->warmup ? o->warmup : 1); w++) PT_CUDA(cudaGraphLaunch(exec, s));
            PT_CUDA(cudaStreamSynchronize(s));
            shmem_barrier_all();
            PT_TIME_MS(ms, s, for (int r = 0; r < 3; r++) PT_CUDA(cudaGraphLaunch(exec, s)));
            ms /= 3 * o->iters;
            PT_CUDA(cudaGraphExecDestroy(exec));
        }
        shmem_barrier_all();
        if (with_data) {
            size_t nout = kind == PT_FCOLLECT || kind == PT_ALLTOALL ? n * npes : n;
            PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
            coll_check<T><<<264, 256>>>(dest, nout, n, npes, me, 0, kind, op, bad_d);
            PT_CUDA(cudaGetLastError());
            PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
            if (bad) PT_FAIL(o, "%s of %zu bytes: %llu of %zu elements wrong", pt_coll_names[kind], size, bad, nout);
        }
        PT_CUDA(cudaMemcpy(&errors, errors_d, sizeof(int), cudaMemcpyDeviceToHost));
        if (errors) PT_FAIL(o, "%s returned errors in the kernel (%d)", pt_coll_names[kind], errors);
        if (me == 0) {
            double us = ms * 1000.0, v[1] = {(double)size / (us * 1e3)};
            pt_row_ex(o, NULL, device ? (grid ? "grid" : pt_scope_names[o->scope]) : "stream", tname, size, us, with_data ? 1 : 0,
                      names, v);
        }
        shmem_barrier_all();
    }
    shmem_free(src);
    shmem_free(dest);
    PT_CUDA(cudaFree(bad_d));
    PT_CUDA(cudaFree(errors_d));
    PT_CUDA(cudaStreamDestroy(s));
    return 0;
}

template <int KIND, int DEVICE> static int pt_coll_main(int argc, char **argv)
{
    const int kind = KIND, device = DEVICE;
    pt_opts_t o = {8, 128 << 20, 4, 100, 2, 32, 512, 0, 0, NULL};
    int grid = 0;
    /* --scope grid is taken before the common parser, which knows thread/warp/block */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--scope") && i + 1 < argc && !strcmp(argv[i + 1], "grid")) {
            grid = 1;
            argv[i + 1] = (char *)"block";
        }
    o.accepts = PT_ACCEPT_TYPE | (kind >= PT_REDUCE ? PT_ACCEPT_OP : 0) | (device ? PT_ACCEPT_SCOPE : 0);
    o.scope = PT_SCOPE_BLOCK;
    /* from a kernel, one launch times all iterations: barrier and sync get enough of them that
     * the launch and the PEs' start skew vanish (as NVSHMEM's barrier perftest), data calls 20 */
    if (device) o.iters = kind == PT_BARRIER || kind == PT_SYNC ? 1000 : 20;
    pt_parse(argc, argv, &o);
    if (grid && !device) PT_FAIL(&o, "--scope grid is for the device perftests");
    pt_init(&o);
    const char *t = o.type ? o.type : "float";
    if (device && strcmp(t, "float")) PT_FAIL(&o, "--type %s: the device perftests run float", t);
    int rc = 1;
    if (!strcmp(t, "float")) rc = pt_coll_run<KIND, DEVICE, float>(&o, grid, "float");
    else if (!strcmp(t, "double")) rc = pt_coll_run<KIND, DEVICE, double>(&o, grid, "double");
    else if (!strcmp(t, "int")) rc = pt_coll_run<KIND, DEVICE, int>(&o, grid, "int");
    else if (!strcmp(t, "half")) rc = pt_coll_run<KIND, DEVICE, __half>(&o, grid, "half");
    else if (!strcmp(t, "bfloat16")) rc = pt_coll_run<KIND, DEVICE, __nv_bfloat16>(&o, grid, "bfloat16");
    else PT_FAIL(&o, "--type %s: not one of float, double, int, half, bfloat16", t);
    shmem_finalize();
    return rc;
}
