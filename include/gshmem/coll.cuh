/* Teams and collectives in CUDA code: the team queries and blocking collectives as __host__
 * __device__ (device: the calling thread; host: the runtime's stream), the _warp and _block forms
 * (one group, as NVSHMEM's), and the _grid forms: every thread of a cooperative launch calls them,
 * each CTA drives its own slice, and they return once the whole grid is done. Grids must have the
 * same shape on every member. Included by gshmem/device.cuh. */
#ifndef GSHMEM_COLL_CUH
#define GSHMEM_COLL_CUH

#include "device/coll.cuh"

/* team names a team of this PE's table (the world team, or a live split). */
GSHMEMI_DEV int gshmemi_dev_team_valid(shmem_team_t team)
{
    return team == SHMEM_TEAM_WORLD || (team >= 0 && team < gshmemi_dstate.max_teams && gshmemi_dstate.teams[team].size != 0);
}
GSHMEMI_DEV int gshmemi_dev_team_my_pe(shmem_team_t team)
{
    if (!gshmemi_dev_team_valid(team)) return -1;
    return gshmemi_team_get(team, "shmem_team_my_pe").my_idx;
}
GSHMEMI_HD int shmem_team_my_pe(shmem_team_t team)
{
    return GSHMEMI_HOSTDEV_BRANCH(gshmemi_dev_team_my_pe(team), gshmemi_host_team_my_pe(team));
}
GSHMEMI_DEV int gshmemi_dev_team_n_pes(shmem_team_t team)
{
    if (!gshmemi_dev_team_valid(team)) return -1;
    return gshmemi_team_get(team, "shmem_team_n_pes").size;
}
GSHMEMI_HD int shmem_team_n_pes(shmem_team_t team)
{
    return GSHMEMI_HOSTDEV_BRANCH(gshmemi_dev_team_n_pes(team), gshmemi_host_team_n_pes(team));
}
GSHMEMI_DEV int gshmemi_dev_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    if (gshmemi_dev_team_n_pes(src_team) < 0 || gshmemi_dev_team_n_pes(dest_team) < 0) return -1;
    gshmemi_team_dev_t s = gshmemi_team_get(src_team, __func__), d = gshmemi_team_get(dest_team, __func__);
    if (src_pe < 0 || src_pe >= s.size) return -1;
    int w = s.start + src_pe * s.stride - d.start;
    return w >= 0 && w % d.stride == 0 && w / d.stride < d.size ? w / d.stride : -1;
}
GSHMEMI_HD int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    return GSHMEMI_HOSTDEV_BRANCH(gshmemi_dev_team_translate_pe(src_team, src_pe, dest_team),
                                  gshmemi_host_team_translate_pe(src_team, src_pe, dest_team));
}

/* ---- launching kernels that call the _grid forms ----
 * Such a kernel needs every CTA resident at once: a cooperative launch whose grid fits this PE's
 * GPU (its share of the SMs under MPS), with the same grid on every member of the team. These
 * run in the caller's translation unit, since a statically linked CUDA runtime only knows the
 * kernels of its own module; they return 0, or -1 with a logged reason. */
static inline int gshmemi_launch_fit(const char *routine, const void *func, dim3 block, size_t shared_mem, int *fit)
{
    char why[256];
    int dev = 0, sms = 0, per_sm = 0;
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    cudaError_t e;
    if (!func) return gshmemi_host_launch_error(routine, "func is NULL");
    if (threads == 0 || threads > 1024) {
        snprintf(why, sizeof(why), "block of %u x %u x %u threads: a CTA has 1 to 1024", block.x, block.y, block.z);
        return gshmemi_host_launch_error(routine, why);
    }
    if (!gshmemi_host_initialized()) return gshmemi_host_launch_error(routine, "called before shmem_init");
    if ((e = cudaGetDevice(&dev)) != cudaSuccess || (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)threads, shared_mem)) != cudaSuccess) {
        snprintf(why, sizeof(why), "cannot size the grid: %s", cudaGetErrorString(e));
        return gshmemi_host_launch_error(routine, why);
    }
    if (per_sm < 1) {
        snprintf(why, sizeof(why), "not one CTA of %llu threads and %zu bytes of dynamic shared memory fits an SM "
                 "(registers or shared memory)", threads, shared_mem);
        return gshmemi_host_launch_error(routine, why);
    }
    *fit = per_sm * sms;
    return 0;
}

/* The most CTAs of `block` that can run `func` at once on this PE's GPU. */
static inline int shmemx_collective_launch_query_gridsize(const void *func, dim3 block, void **args, size_t shared_mem,
                                                          int *gridsize)
{
    (void)args; /* kept for the shape of the launch call */
    if (!gridsize) return gshmemi_host_launch_error(__func__, "gridsize is NULL");
    return gshmemi_launch_fit(__func__, func, block, shared_mem, gridsize);
}

/* A cooperative launch of `func`, refused (not hung) when the grid cannot be resident at once. */
static inline int shmemx_collective_launch(const void *func, dim3 grid, dim3 block, void **args, size_t shared_mem,
                                           cudaStream_t stream)
{
    char why[320];
    int fit = 0;
    const unsigned long long ctas = (unsigned long long)grid.x * grid.y * grid.z;
    if (ctas == 0) return gshmemi_host_launch_error(__func__, "grid of 0 CTAs");
    if (gshmemi_launch_fit(__func__, func, block, shared_mem, &fit)) return -1;
    if (ctas > (unsigned long long)fit) {
        snprintf(why, sizeof(why), "grid of %llu CTAs: at most %d of %u x %u x %u threads fit this GPU at once "
                 "(shmemx_collective_launch_query_gridsize); every CTA must be resident", ctas, fit, block.x, block.y, block.z);
        return gshmemi_host_launch_error(__func__, why);
    }
    cudaError_t e = cudaLaunchCooperativeKernel(func, grid, block, args, shared_mem, stream);
    if (e != cudaSuccess) {
        snprintf(why, sizeof(why), "cudaLaunchCooperativeKernel: %s", cudaGetErrorString(e));
        return gshmemi_host_launch_error(__func__, why);
    }
    return 0;
}

/* The device forms, generated here and only here from the type lists and the operator list of
 * gshmem/types.h; every one ends in gshmemi_coll_group or gshmemi_coll_grid (device/coll.cuh).
 * GSHMEMI_DEVICE_COLL_FORMS makes, for one collective NAME: shmem_NAME (__host__ __device__: the
 * calling thread, or on the host the blocking form), shmemx_NAME_warp, shmemx_NAME_block and
 * shmemx_NAME_grid. GSHMEMI_DEVICE_MOVE gives NAME = TYPE_broadcast, TYPE_fcollect,
 * TYPE_collect, TYPE_alltoall, TYPE_alltoalls for each TYPE of GSHMEM_RMA_TYPES and
 * GSHMEM_RMA_EXT_TYPES; GSHMEMI_DEVICE_REDUCE gives NAME = TYPE_OP_reduce and
 * TYPE_OP_reducescatter for each pair of GSHMEM_REDUCE_PAIRS and GSHMEM_REDUCE_EXT_PAIRS (so
 * shmem_int_sum_reduce, shmemx_float_sum_reduce_block, shmemx_half_max_reduce_grid ...); the
 * untyped forms below give NAME = broadcastmem, fcollectmem, collectmem, alltoallmem. The
 * on-stream forms of half and bfloat16 (shmemx_half_sum_reduce_on_stream, ...) come from
 * gshmem/coll.h's generators, instantiated at the end of this file.
 *
 * Each form is a function template with one defaulted parameter (GSHMEMI_COLL_ON_USE), called as
 * a plain function (shmem_float_sum_reduce(team, d, s, n)): the compiler then instantiates a
 * collective's code (every protocol, for its operator and type) only in a translation unit that
 * calls it, where a plain inline function would instantiate all of them in every unit that
 * includes gshmem.h (some 2 s of nvcc each). Taking a form's address needs `<>`. */
#define GSHMEMI_COLL_ON_USE template <int = 0>
#define GSHMEMI_DEVICE_COLL_FORMS(NAME, PARAMS, ARGS, OPC, T, DT)                                                   \
    GSHMEMI_COLL_ON_USE GSHMEMI_HD int shmem_##NAME PARAMS                                                           \
    {                                                                                                                \
        gshmemi_coll_args_t a = ARGS;                                                                                \
        return GSHMEMI_HOSTDEV_BRANCH((gshmemi_coll_group<OPC, T>(team, a, GSHMEMI_SCOPE_THREAD, __func__)),         \
                                      gshmemi_coll_host(__func__, team, &a, DT, OPC));                \
    }                                                                                                                \
    GSHMEMI_COLL_ON_USE GSHMEMI_DEV int shmemx_##NAME##_warp PARAMS                                                  \
    {                                                                                                                \
        return gshmemi_coll_group<OPC, T>(team, ARGS, GSHMEMI_SCOPE_WARP, __func__);                                 \
    }                                                                                                                \
    GSHMEMI_COLL_ON_USE GSHMEMI_DEV int shmemx_##NAME##_block PARAMS                                                 \
    {                                                                                                                \
        return gshmemi_coll_group<OPC, T>(team, ARGS, GSHMEMI_SCOPE_BLOCK, __func__);                                \
    }                                                                                                                \
    GSHMEMI_COLL_ON_USE GSHMEMI_DEV int shmemx_##NAME##_grid PARAMS { return gshmemi_coll_grid<OPC, T>(team, ARGS, __func__); }

#define GSHMEMI_DEVICE_MOVE(name, T)                                                                                 \
    GSHMEMI_DEVICE_COLL_FORMS(name##_broadcast, (shmem_team_t team, T * dest, const T *source, size_t nelems, int PE_root), \
                              gshmemi_coll_args_root(dest, source, nelems, sizeof(T), PE_root), GSHMEMI_OP_NONE, char, GSHMEMI_DT_UINT8) \
    GSHMEMI_DEVICE_COLL_FORMS(name##_fcollect, (shmem_team_t team, T * dest, const T *source, size_t nelems),           \
                              gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, dest, source, nelems, sizeof(T)), GSHMEMI_OP_NONE, char,      \
                              GSHMEMI_DT_UINT8)                                                                      \
    GSHMEMI_DEVICE_COLL_FORMS(name##_collect, (shmem_team_t team, T * dest, const T *source, size_t nelems),            \
                              gshmemi_coll_args(GSHMEMI_COLL_COLLECT, dest, source, nelems, sizeof(T)), GSHMEMI_OP_NONE, char,       \
                              GSHMEMI_DT_UINT8)                                                                      \
    GSHMEMI_DEVICE_COLL_FORMS(name##_alltoall, (shmem_team_t team, T * dest, const T *source, size_t nelems),           \
                              gshmemi_coll_args(GSHMEMI_COLL_ALLTOALL, dest, source, nelems, sizeof(T)), GSHMEMI_OP_NONE, char,      \
                              GSHMEMI_DT_UINT8)                                                                      \
    GSHMEMI_DEVICE_COLL_FORMS(name##_alltoalls,                                                                      \
                              (shmem_team_t team, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems), \
                              gshmemi_coll_args_strided(dest, source, dst, sst, nelems, sizeof(T)), GSHMEMI_OP_NONE, char,           \
                              GSHMEMI_DT_UINT8)
#define GSHMEMI_DEVICE_REDUCE(op, OPC, name, T, DT)                                                                  \
    GSHMEMI_DEVICE_COLL_FORMS(name##op##_reduce, (shmem_team_t team, T * dest, const T *source, size_t nreduce),        \
                              gshmemi_coll_args(GSHMEMI_COLL_REDUCE, dest, source, nreduce, sizeof(T)), OPC, T, DT)     \
    GSHMEMI_DEVICE_COLL_FORMS(name##op##_reducescatter, (shmem_team_t team, T * dest, const T *source, size_t nreduce), \
                              gshmemi_coll_args(GSHMEMI_COLL_REDUCESCATTER, dest, source, nreduce, sizeof(T)), OPC, T, DT)

GSHMEM_RMA_TYPES(GSHMEMI_DEVICE_MOVE)
GSHMEM_RMA_EXT_TYPES(GSHMEMI_DEVICE_MOVE)
GSHMEM_REDUCE_PAIRS(GSHMEMI_DEVICE_REDUCE)
GSHMEM_REDUCE_EXT_PAIRS(GSHMEMI_DEVICE_REDUCE)
GSHMEMI_DEVICE_COLL_FORMS(broadcastmem, (shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root),
                          gshmemi_coll_args_root(dest, source, nelems, 1, PE_root), GSHMEMI_OP_NONE, char, GSHMEMI_DT_UINT8)
GSHMEMI_DEVICE_COLL_FORMS(fcollectmem, (shmem_team_t team, void *dest, const void *source, size_t nelems),
                          gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, dest, source, nelems, 1), GSHMEMI_OP_NONE, char, GSHMEMI_DT_UINT8)
GSHMEMI_DEVICE_COLL_FORMS(collectmem, (shmem_team_t team, void *dest, const void *source, size_t nelems),
                          gshmemi_coll_args(GSHMEMI_COLL_COLLECT, dest, source, nelems, 1), GSHMEMI_OP_NONE, char, GSHMEMI_DT_UINT8)
GSHMEMI_DEVICE_COLL_FORMS(alltoallmem, (shmem_team_t team, void *dest, const void *source, size_t nelems),
                          gshmemi_coll_args(GSHMEMI_COLL_ALLTOALL, dest, source, nelems, 1), GSHMEMI_OP_NONE, char, GSHMEMI_DT_UINT8)
GSHMEM_RMA_EXT_TYPES(GSHMEMI_ON_STREAM_MOVE)
GSHMEM_REDUCE_EXT_PAIRS(GSHMEMI_ON_STREAM_REDUCE)
#undef GSHMEMI_DEVICE_MOVE
#undef GSHMEMI_DEVICE_REDUCE
#undef GSHMEMI_DEVICE_COLL_FORMS

#endif
