/* The collective perftests (host/coll/NAME_on_stream and device/coll/NAME), one driver:
 * each executable defines PT_COLL (which collective) and PT_DEVICE (1: called from a kernel).
 *
 * On stream: -n calls captured in one CUDA graph, the graph launched -w times to warm up and then
 * timed over 3 launches; time per call, like nccl-tests' graph mode. From a kernel: one launch
 * calls it -n times (scope --scope thread|warp|block, or grid: a cooperative launch of -c CTAs).
 * Sizes: reduce and broadcast, the bytes of the vector; fcollect, alltoall and reducescatter, the
 * bytes of one PE's block. algbw = size / time. Every size's result is checked once. */
#include <type_traits>

#include "perftest.h"

enum { PT_BARRIER, PT_SYNC, PT_BCAST, PT_FCOLLECT, PT_ALLTOALL, PT_REDUCE, PT_REDUCESCATTER };
/* barrier and sync move no data; reduce and reducescatter take an op; and/or/xor are on integers */
static __host__ __device__ constexpr bool pt_moves_data(int kind) { return kind != PT_BARRIER && kind != PT_SYNC; }
static __host__ __device__ constexpr bool pt_reduces(int kind) { return kind == PT_REDUCE || kind == PT_REDUCESCATTER; }
static __host__ __device__ constexpr bool pt_bitwise(int op)
{
    return op == GSHMEMI_OP_AND || op == GSHMEMI_OP_OR || op == GSHMEMI_OP_XOR;
}
static const char *const pt_coll_names[] = {"barrier", "sync", "broadcast", "fcollect", "alltoall", "reduce", "reducescatter"};

/* What PE `pe` holds at element i: small integers, so every partial result of every op over up to
 * 8 PEs stays exact in every type (bfloat16 holds integers up to 256 exactly). A product takes
 * factors of 1 and 2 (at most 2^8); the others (pe + 1) * 2 + i % 3, which differ between PEs, so
 * max, min and the bitwise ops (int only) are checked as much as sum. */
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
    case GSHMEMI_OP_AND: return (float)((int)a & (int)b);
    case GSHMEMI_OP_OR: return (float)((int)a | (int)b);
    case GSHMEMI_OP_XOR: return (float)((int)a ^ (int)b);
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
        if (pt_reduces(kind)) {
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

/* The element types of the collective perftests, X(name, C type). */
#define PT_COLL_TYPES(X) X(float, float) X(double, double) X(int, int) X(half, __half) X(bfloat16, __nv_bfloat16)

/* From a kernel, the device perftests are built for every type and op unless perftest/meson.build
 * says float sum only (-Dperftest_device_types=float, a quicker build). */
#ifndef PT_DEVICE_MATRIX
#define PT_DEVICE_MATRIX 0
#endif

/* The bitwise reductions (OpenSHMEM has them on the fixed-width and unsigned types): int runs
 * them as int32, the other types have none (pt_coll_main refuses them first). */
template <typename T> static inline int pt_host_bitwise(int, int, T *, const T *, size_t, cudaStream_t) { return -1; }
#define PT_HOST_BITWISE(coll)                                                                                          \
    switch (op) {                                                                                                      \
    case GSHMEMI_OP_AND: return shmemx_int32_and_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);               \
    case GSHMEMI_OP_OR: return shmemx_int32_or_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                 \
    default: return shmemx_int32_xor_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                           \
    }
static inline int pt_host_bitwise(int kind, int op, int *dest, const int *src, size_t n, cudaStream_t s)
{
    if (kind == PT_REDUCESCATTER) { PT_HOST_BITWISE(reducescatter) }
    PT_HOST_BITWISE(reduce)
}
#undef PT_HOST_BITWISE

/* One call of the collective on `stream` (host), overloaded on the element type. */
#define PT_HOST_REDUCE(name, coll)                                                                                     \
    switch (op) {                                                                                                      \
    case GSHMEMI_OP_AND: case GSHMEMI_OP_OR: case GSHMEMI_OP_XOR: return pt_host_bitwise(kind, op, dest, src, n, s);   \
    case GSHMEMI_OP_MAX: return shmemx_##name##_max_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);             \
    case GSHMEMI_OP_MIN: return shmemx_##name##_min_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);             \
    case GSHMEMI_OP_PROD: return shmemx_##name##_prod_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);           \
    default: return shmemx_##name##_sum_##coll##_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                         \
    }
#define PT_HOST_TYPED(name, T)                                                                                         \
    static inline int pt_host_call(int kind, int op, T *dest, const T *src, size_t n, cudaStream_t s)                  \
    {                                                                                                                  \
        switch (kind) {                                                                                                \
        case PT_BARRIER: return shmemx_barrier_on_stream(SHMEM_TEAM_WORLD, s), 0;                                      \
        case PT_SYNC: return shmemx_sync_on_stream(SHMEM_TEAM_WORLD, s), 0;                                            \
        case PT_BCAST: return shmemx_##name##_broadcast_on_stream(SHMEM_TEAM_WORLD, dest, src, n, 0, s);               \
        case PT_FCOLLECT: return shmemx_##name##_fcollect_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                \
        case PT_ALLTOALL: return shmemx_##name##_alltoall_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);                \
        case PT_REDUCESCATTER: PT_HOST_REDUCE(name, reducescatter)                                                     \
        default: PT_HOST_REDUCE(name, reduce)                                                                          \
        }                                                                                                              \
    }
PT_COLL_TYPES(PT_HOST_TYPED)
#undef PT_HOST_TYPED
#undef PT_HOST_REDUCE

/* From a kernel: routine R in scope SCOPE (PT_SCOPE_GRID: the grid form), overloaded on the element
 * type. KIND, OP and SCOPE are template parameters so that each executable compiles only its own
 * collective, for the ops it runs, and each kernel holds one form: a kernel that switched between
 * the four at run time would need more registers than any one of them, and spill. */
#define PT_SCOPE_GRID 3
#define PT_DEV_FORMS(R, ...)                                                                                           \
    if constexpr (SCOPE == PT_SCOPE_GRID) return shmemx_##R##_grid(__VA_ARGS__);                                      \
    else if constexpr (SCOPE == PT_SCOPE_BLOCK) return shmemx_##R##_block(__VA_ARGS__);                                \
    else if constexpr (SCOPE == PT_SCOPE_WARP) return threadIdx.x < 32 ? shmemx_##R##_warp(__VA_ARGS__) : 0;           \
    else return threadIdx.x == 0 ? shmem_##R(__VA_ARGS__) : 0;
#define PT_DEV_REDUCE(name, coll)                                                                                      \
    if constexpr (pt_bitwise(OP))                                                                                      \
        return pt_dev_bitwise<KIND, OP, SCOPE>(dest, src, n);                                                          \
    else if constexpr (OP == GSHMEMI_OP_MAX) { PT_DEV_FORMS(name##_max_##coll, w, dest, src, n) }                     \
    else if constexpr (OP == GSHMEMI_OP_MIN) { PT_DEV_FORMS(name##_min_##coll, w, dest, src, n) }                     \
    else if constexpr (OP == GSHMEMI_OP_PROD) { PT_DEV_FORMS(name##_prod_##coll, w, dest, src, n) }                   \
    else { PT_DEV_FORMS(name##_sum_##coll, w, dest, src, n) }
#define PT_DEV_TYPED(name, T)                                                                                          \
    template <int KIND, int OP, int SCOPE>                                                                             \
    static __device__ __forceinline__ int pt_dev_call(T *dest, const T *src, size_t n)                                 \
    {                                                                                                                  \
        const shmem_team_t w = SHMEM_TEAM_WORLD;                                                                       \
        if constexpr (KIND == PT_BCAST) { PT_DEV_FORMS(name##_broadcast, w, dest, src, n, 0) }                         \
        else if constexpr (KIND == PT_FCOLLECT) { PT_DEV_FORMS(name##_fcollect, w, dest, src, n) }                     \
        else if constexpr (KIND == PT_ALLTOALL) { PT_DEV_FORMS(name##_alltoall, w, dest, src, n) }                     \
        else if constexpr (KIND == PT_REDUCESCATTER) { PT_DEV_REDUCE(name, reducescatter) }                            \
        else { PT_DEV_REDUCE(name, reduce) }                                                                           \
    }
template <int KIND, int OP, int SCOPE, typename T>
static __device__ __forceinline__ int pt_dev_bitwise(T *, const T *, size_t) { return -1; }
#define PT_DEV_BITWISE(coll)                                                                                           \
    if constexpr (OP == GSHMEMI_OP_AND) { PT_DEV_FORMS(int32_and_##coll, w, dest, src, n) }                           \
    else if constexpr (OP == GSHMEMI_OP_OR) { PT_DEV_FORMS(int32_or_##coll, w, dest, src, n) }                        \
    else { PT_DEV_FORMS(int32_xor_##coll, w, dest, src, n) }
template <int KIND, int OP, int SCOPE> static __device__ __forceinline__ int pt_dev_bitwise(int *dest, const int *src, size_t n)
{
    const shmem_team_t w = SHMEM_TEAM_WORLD;
    if constexpr (KIND == PT_REDUCESCATTER) { PT_DEV_BITWISE(reducescatter) }
    else { PT_DEV_BITWISE(reduce) }
}
#undef PT_DEV_BITWISE
PT_COLL_TYPES(PT_DEV_TYPED)
#undef PT_DEV_TYPED
#undef PT_DEV_REDUCE
#undef PT_DEV_FORMS

/* barrier and sync (no grid form: pt_coll_main refuses it) */
template <int KIND, int SCOPE> static __device__ __forceinline__ int pt_dev_sync()
{
    const shmem_team_t w = SHMEM_TEAM_WORLD;
    if constexpr (KIND == PT_BARRIER) {
        if constexpr (SCOPE == PT_SCOPE_BLOCK) shmemx_barrier_block(w);
        else if constexpr (SCOPE == PT_SCOPE_WARP) { if (threadIdx.x < 32) shmemx_barrier_warp(w); }
        else if (threadIdx.x == 0) shmem_barrier(w);
    } else {
        if constexpr (SCOPE == PT_SCOPE_BLOCK) shmemx_sync_block(w);
        else if constexpr (SCOPE == PT_SCOPE_WARP) { if (threadIdx.x < 32) shmemx_sync_warp(w); }
        else if (threadIdx.x == 0) shmem_sync(w);
    }
    return 0;
}

/* The data collectives take up to 128 registers a thread (docs/api.md), which 512-thread CTAs allow;
 * bounds of 1024 threads would cap them at 64 and spill. */
#define PT_DEV_MAX_THREADS(KIND) (pt_moves_data(KIND) ? 512 : 1024)
template <int KIND, int OP, typename T, int SCOPE>
static __global__ void __launch_bounds__(PT_DEV_MAX_THREADS(KIND), 1) pt_dev_kernel(T *dest, const T *src, size_t n, int iters, int *errors)
{
    for (int i = 0; i < iters; i++) {
        int rc;
        if constexpr (!pt_moves_data(KIND)) rc = pt_dev_sync<KIND, SCOPE>();
        else rc = pt_dev_call<KIND, OP, SCOPE>(dest, src, n);
        if (rc) atomicAdd(errors, 1);
    }
}

/* The kernel for (op, scope): one per scope, the grid form only for data collectives; reductions
 * have one per op (every op only in a PT_DEVICE_MATRIX build, the caller checks). */
template <int KIND, int OP, typename T> static const void *pt_dev_kernel_in(int scope)
{
    switch (scope) {
    case PT_SCOPE_THREAD: return (const void *)pt_dev_kernel<KIND, OP, T, PT_SCOPE_THREAD>;
    case PT_SCOPE_WARP: return (const void *)pt_dev_kernel<KIND, OP, T, PT_SCOPE_WARP>;
    case PT_SCOPE_BLOCK: return (const void *)pt_dev_kernel<KIND, OP, T, PT_SCOPE_BLOCK>;
    default:
        if constexpr (!pt_moves_data(KIND)) return NULL;
        else return (const void *)pt_dev_kernel<KIND, OP, T, PT_SCOPE_GRID>;
    }
}
template <int KIND, typename T> static const void *pt_dev_kernel_for(int op, int scope)
{
    if constexpr (PT_DEVICE_MATRIX && pt_reduces(KIND)) {
        switch (op) {
        case GSHMEMI_OP_MAX: return pt_dev_kernel_in<KIND, GSHMEMI_OP_MAX, T>(scope);
        case GSHMEMI_OP_MIN: return pt_dev_kernel_in<KIND, GSHMEMI_OP_MIN, T>(scope);
        case GSHMEMI_OP_PROD: return pt_dev_kernel_in<KIND, GSHMEMI_OP_PROD, T>(scope);
        default: break;
        }
        if constexpr (std::is_same<T, int>::value) switch (op) {
            case GSHMEMI_OP_AND: return pt_dev_kernel_in<KIND, GSHMEMI_OP_AND, T>(scope);
            case GSHMEMI_OP_OR: return pt_dev_kernel_in<KIND, GSHMEMI_OP_OR, T>(scope);
            case GSHMEMI_OP_XOR: return pt_dev_kernel_in<KIND, GSHMEMI_OP_XOR, T>(scope);
            default: break;
            }
    }
    (void)op;
    return pt_dev_kernel_in<KIND, GSHMEMI_OP_SUM, T>(scope);
}

static const char *const pt_op_names[GSHMEMI_OP_COUNT] = {"and", "or", "xor", "min", "max", "sum", "prod"};

/* --op: sum (the default), max, min, prod, and, or, xor; -1 for anything else. */
static int pt_parse_op(const char *op)
{
    if (!op) return GSHMEMI_OP_SUM;
    for (int op_ = 0; op_ < GSHMEMI_OP_COUNT; op_++)
        if (!strcmp(op, pt_op_names[op_])) return op_;
    return -1;
}

/* One element type: every size from -b to -e, timed, then checked once. */
template <int KIND, int DEVICE, typename T> static int pt_coll_run(pt_opts_t *o, int grid, const char *tname)
{
    const int kind = KIND, device = DEVICE;
    const int me = shmem_my_pe(), npes = shmem_n_pes(), op = pt_parse_op(o->op);
    const size_t es = sizeof(T);
    const int with_data = pt_moves_data(kind), with_op = pt_reduces(kind);
    const char *names[] = {"algbw(GB/s)"};
    const char *scope_name = device ? (grid ? "grid" : pt_scope_names[o->scope]) : "stream";
    size_t maxb = with_data ? o->max_size : 0;
    size_t sblk = kind == PT_ALLTOALL || kind == PT_REDUCESCATTER ? (size_t)npes : 1;
    size_t dblk = kind == PT_ALLTOALL || kind == PT_FCOLLECT ? (size_t)npes : 1;
    T *src = (T *)shmem_malloc(maxb * sblk + 256), *dest = (T *)shmem_malloc(maxb * dblk + 256);
    unsigned long long *bad_d, bad = 0;
    int *errors_d, errors = 0;
    cudaStream_t s;
    char shape[96];

    if (!src || !dest) PT_FAIL(o, "shmem_malloc of %zu bytes failed", maxb * (sblk > dblk ? sblk : dblk) + 256);
    PT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(bad)));
    PT_CUDA(cudaMalloc((void **)&errors_d, sizeof(int)));
    PT_CUDA(cudaMemset(errors_d, 0, sizeof(int)));
    if (with_data) coll_fill<T><<<264, 256>>>(src, maxb / es * sblk, me, op);
    PT_CUDA(cudaGetLastError());
    PT_CUDA(cudaDeviceSynchronize());
    if (device)
        snprintf(shape, sizeof(shape), "from a kernel, %s scope%s%s", scope_name, with_data ? ", " : "", with_data ? tname : "");
    else
        snprintf(shape, sizeof(shape), "on stream, %d calls per CUDA graph%s%s", o->iters, with_data ? ", " : "",
                 with_data ? tname : "");
    if (me == 0) pt_header_ex(o, pt_coll_names[kind], shape, with_op, with_data ? 1 : 0, names);
    /* from a kernel: the same kernel and launch shape for every size, checked once against the GPU */
    const int scope = grid ? PT_SCOPE_GRID : o->scope;
    const int threads = grid || o->scope == PT_SCOPE_BLOCK ? o->threads : o->scope == PT_SCOPE_WARP ? 32 : 1;
    const dim3 ctas(grid ? o->ctas : 1), block(threads);
    const void *fn = NULL;
    if constexpr (DEVICE) fn = pt_dev_kernel_for<KIND, T>(op, scope);
    int fit = 0;
    if (grid && (shmemx_collective_launch_query_gridsize(fn, block, NULL, 0, &fit) || o->ctas > fit))
        PT_REFUSE(o, "--scope grid -c %d -t %d: at most %d such CTAs fit this GPU at once", o->ctas, threads, fit);
    shmem_barrier_all();

    for (size_t size = with_data ? o->min_size : 0; size <= maxb; size = size ? size * o->step_factor : maxb + 1) {
        size_t n = size / es;
        if (with_data && n == 0) continue;
        float ms = 0;
        if constexpr (DEVICE) {
            void *args[] = {(void *)&dest, (void *)&src, (void *)&n, (void *)&o->warmup, (void *)&errors_d};
#define PT_LAUNCH() (grid ? cudaLaunchCooperativeKernel(fn, ctas, block, args, 0, s) : cudaLaunchKernel(fn, ctas, block, args, 0, s))
            shmem_barrier_all();
            PT_CUDA(PT_LAUNCH());
            PT_CUDA(cudaStreamSynchronize(s));
            shmem_barrier_all();
            args[3] = (void *)&o->iters;
            PT_TIME_MS(ms, s, PT_CUDA(PT_LAUNCH()));
#undef PT_LAUNCH
            ms /= o->iters;
        } else {
            cudaGraph_t graph;
            cudaGraphExec_t exec;
            /* one call outside the graph first: argument errors are reported here, not in capture */
            if (pt_host_call(kind, op, dest, src, n, s)) PT_FAIL(o, "%s of %zu bytes failed", pt_coll_names[kind], size);
            PT_CUDA(cudaStreamSynchronize(s));
            PT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            for (int i = 0; i < o->iters; i++) pt_host_call(kind, op, dest, src, n, s);
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
            pt_row_ex(o, with_op ? pt_op_names[op] : NULL, scope_name, with_data ? tname : NULL, size, us,
                      with_data ? 1 : 0, names, v);
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

/* From a kernel, each element type is a translation unit of its own (device/coll/typed.cu, built
 * once per type by perftest/meson.build), so a parallel build compiles the types side by side. */
#define PT_DEV_ENTRY(name, T) int pt_dev_run_##name(pt_opts_t *o, int grid);
PT_COLL_TYPES(PT_DEV_ENTRY)
#undef PT_DEV_ENTRY

template <int KIND, int DEVICE> static int pt_coll_main(int argc, char **argv)
{
    const int kind = KIND, device = DEVICE;
    const int with_data = pt_moves_data(kind), with_op = pt_reduces(kind);
    pt_opts_t o = {8, 128 << 20, 4, 100, 2, 32, 512, 0, 0, NULL};
    int grid = 0;
    /* --scope grid is taken before the common parser, which knows thread/warp/block */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--scope") && i + 1 < argc && !strcmp(argv[i + 1], "grid")) {
            grid = 1;
            argv[i + 1] = (char *)"block";
        }
    o.accepts = (with_data ? PT_ACCEPT_TYPE : 0) | (with_op ? PT_ACCEPT_OP : 0) | (device ? PT_ACCEPT_SCOPE : 0);
    o.scope = PT_SCOPE_BLOCK;
    /* from a kernel, one launch times all iterations: barrier and sync get enough of them that
     * the launch and the PEs' start skew vanish (as NVSHMEM's barrier perftest), data calls 20 */
    if (device) o.iters = with_data ? 20 : 1000;
    pt_parse(argc, argv, &o);
    /* every option is checked before the GPU is touched */
    if (grid && (!device || !with_data)) PT_BAD_OPTION(&o, "--scope grid: only the device data collectives have a grid form");
    if (device && (grid || o.scope == PT_SCOPE_BLOCK) && o.threads > PT_DEV_MAX_THREADS(KIND))
        PT_BAD_OPTION(&o, "-t %d: the device %s perftest runs 1 to %d threads a CTA", o.threads, pt_coll_names[kind],
                      PT_DEV_MAX_THREADS(KIND));
    const int op = pt_parse_op(o.op);
    if (op < 0) PT_BAD_OPTION(&o, "--op %s: not one of sum, max, min, prod, and, or, xor", o.op);
    const char *t = o.type ? o.type : "float";
    int known = 0;
#define PT_KNOWN(name, T) known |= !strcmp(t, #name);
    PT_COLL_TYPES(PT_KNOWN)
#undef PT_KNOWN
    if (!known) PT_BAD_OPTION(&o, "--type %s: not one of float, double, int, half, bfloat16", t);
    if (pt_bitwise(op) && strcmp(t, "int"))
        PT_BAD_OPTION(&o, "--op %s: the bitwise reductions are on integers (--type int)", o.op);
    if (device && !PT_DEVICE_MATRIX && (strcmp(t, "float") || op != GSHMEMI_OP_SUM))
        PT_BAD_OPTION(&o, "--type %s --op %s: this build runs the device collectives in float sum only "
                          "(it was configured with -Dperftest_device_types=float)", t, o.op ? o.op : "sum");
    pt_init(&o);
    int rc = -1; /* each run returns 0 or fails the job */
    if constexpr (DEVICE) {
#define PT_DEV_RUN(name, T) if (rc < 0 && !strcmp(t, #name)) rc = pt_dev_run_##name(&o, grid);
#if PT_DEVICE_MATRIX
        if constexpr (!pt_moves_data(KIND)) rc = pt_dev_run_float(&o, grid); /* no types */
        else { PT_COLL_TYPES(PT_DEV_RUN) }
#else
        PT_DEV_RUN(float, float)
#endif
#undef PT_DEV_RUN
    } else {
#define PT_HOST_RUN(name, T) if (rc < 0 && !strcmp(t, #name)) rc = pt_coll_run<KIND, 0, T>(&o, 0, #name);
        PT_COLL_TYPES(PT_HOST_RUN)
#undef PT_HOST_RUN
    }
    shmem_finalize();
    return rc;
}
