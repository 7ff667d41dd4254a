/* NVSHMEM source compatibility for gshmem: an NVSHMEM program includes this <nvshmem.h> (and
 * <nvshmemx.h>) instead of NVIDIA's and builds unchanged against gshmem, with or without -rdc.
 * `pkg-config --cflags gshmem-nvshmem-compat` puts this directory first on the include path; it is
 * installed apart from gshmem's own headers so it never shadows an NVSHMEM install.
 *
 * Every name is a thin inline wrapper over gshmem's public API (gshmem.h), generated from gshmem's
 * type lists, with NVSHMEM's argument order. Names gshmem does not support fail at compile time
 * with a message naming them (NVSHMEMI_COMPAT_UNSUPPORTED below), never at link or run time.
 * docs/nvshmem.md lists what maps, what differs and what is missing. */
#ifndef GSHMEM_NVSHMEM_COMPAT_H
#define GSHMEM_NVSHMEM_COMPAT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <gshmem.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

/* Lets a program tell this header from NVIDIA's. */
#define GSHMEM_NVSHMEM_COMPAT 1

/* ---- the execution spaces of the wrappers ---- */
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_HD static __host__ __device__ __forceinline__
#define NVSHMEMI_COMPAT_D static __device__ __forceinline__
/* The collectives' wrappers are, as the routines they call, function templates with one defaulted
 * parameter (GSHMEMI_COLL_ON_USE, gshmem/coll.cuh): a unit compiles only the collectives it calls. */
#define NVSHMEMI_COMPAT_COLL_HD GSHMEMI_COLL_ON_USE NVSHMEMI_COMPAT_HD
#define NVSHMEMI_COMPAT_COLL_D GSHMEMI_COLL_ON_USE NVSHMEMI_COMPAT_D
#else
#define NVSHMEMI_COMPAT_HD static inline
#define NVSHMEMI_COMPAT_COLL_HD static inline
#endif
#define NVSHMEMI_COMPAT_H static inline
/* cudaStream_t, without needing the CUDA headers in C host code */
typedef struct CUstream_st *nvshmemi_compat_stream_t;

/* ---- names gshmem does not support: a compile-time error naming them ----
 * In C++ (and so in every .cu file, host and device code alike) an unsupported function is a
 * variadic template whose static_assert depends on its arguments, so it fires only where the
 * name is called; an unsupported constant expands to a lambda holding a failing static_assert.
 * In C the constants expand to a struct with a failing _Static_assert, and the functions are
 * simply not declared (the compiler names them as undeclared). */
#define NVSHMEMI_COMPAT_WHY " is not supported by gshmem's NVSHMEM compatibility headers (docs/nvshmem.md)"
#ifdef __cplusplus
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_HD_ATTR __host__ __device__
#else
#define NVSHMEMI_COMPAT_HD_ATTR
#endif
/* What an unsupported function returns: converts to anything, so the static_assert is the only
 * error the call gives (the auto return type makes the compiler instantiate the body first). */
struct nvshmemi_compat_any {
    template <typename T> NVSHMEMI_COMPAT_HD_ATTR operator T() const { return T(); }
};
#define NVSHMEMI_COMPAT_UNSUPPORTED_CONST(name)                                                  \
    ([]() { static_assert(sizeof(int) == 0, #name NVSHMEMI_COMPAT_WHY); }(), 0)
#define NVSHMEMI_COMPAT_UNSUPPORTED_FN(name)                                                     \
    template <typename... A> static NVSHMEMI_COMPAT_HD_ATTR inline auto name(A...)               \
    {                                                                                            \
        static_assert(sizeof...(A) == (size_t)-1, #name NVSHMEMI_COMPAT_WHY);                    \
        return nvshmemi_compat_any();                                                            \
    }
#else
#define NVSHMEMI_COMPAT_UNSUPPORTED_CONST(name)                                                  \
    ((int)sizeof(struct { _Static_assert(0, #name NVSHMEMI_COMPAT_WHY); int x; }))
#define NVSHMEMI_COMPAT_UNSUPPORTED_FN(name)
#endif

/* ---- constants and types ---- */
#define NVSHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define NVSHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define NVSHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define NVSHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
/* The NVSHMEM release whose API these headers follow (programs test these to pick code paths). */
#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 0
#define NVSHMEM_VENDOR_PATCH_VERSION 0

#define NVSHMEM_THREAD_SINGLE SHMEM_THREAD_SINGLE
#define NVSHMEM_THREAD_FUNNELED SHMEM_THREAD_FUNNELED
#define NVSHMEM_THREAD_SERIALIZED SHMEM_THREAD_SERIALIZED
#define NVSHMEM_THREAD_MULTIPLE SHMEM_THREAD_MULTIPLE

#define NVSHMEM_CMP_EQ SHMEM_CMP_EQ
#define NVSHMEM_CMP_NE SHMEM_CMP_NE
#define NVSHMEM_CMP_GT SHMEM_CMP_GT
#define NVSHMEM_CMP_GE SHMEM_CMP_GE
#define NVSHMEM_CMP_LT SHMEM_CMP_LT
#define NVSHMEM_CMP_LE SHMEM_CMP_LE
#define NVSHMEM_SIGNAL_SET SHMEM_SIGNAL_SET
#define NVSHMEM_SIGNAL_ADD SHMEM_SIGNAL_ADD

typedef shmem_team_t nvshmem_team_t;
typedef shmem_team_t nvshmemx_team_t;
#define NVSHMEM_TEAM_INVALID SHMEM_TEAM_INVALID
#define NVSHMEM_TEAM_WORLD SHMEM_TEAM_WORLD
#define NVSHMEM_TEAM_SHARED SHMEM_TEAM_SHARED
#define NVSHMEMX_TEAM_NODE SHMEMX_TEAM_NODE
#define NVSHMEMX_TEAM_SAME_MYPE_NODE SHMEMX_TEAM_SAME_MYPE_NODE
#define NVSHMEMX_TEAM_SAME_GPU NVSHMEMI_COMPAT_UNSUPPORTED_CONST(NVSHMEMX_TEAM_SAME_GPU)
#define NVSHMEMX_TEAM_GPU_LEADERS NVSHMEMI_COMPAT_UNSUPPORTED_CONST(NVSHMEMX_TEAM_GPU_LEADERS)

/* A team's configuration: NVSHMEM's field names; only num_contexts is read (and, as in NVSHMEM,
 * only where the mask names it). */
typedef struct {
    int version;
    int num_contexts;
    uint64_t uniqueid;
} nvshmem_team_config_t;
#define NVSHMEM_TEAM_CONFIG_INITIALIZER {1, 0, 0}
#define NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS 0x1L
#define NVSHMEM_TEAM_NUM_CONTEXTS NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS
#define NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID NVSHMEMI_COMPAT_UNSUPPORTED_CONST(NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID)

/* Initialization attributes: NVSHMEM's field names over gshmem's unique-id bootstrap. */
typedef shmemx_uniqueid_t nvshmemx_uniqueid_t;
#define NVSHMEMX_UNIQUEID_INITIALIZER {{0}}
typedef struct {
    int version;
    nvshmemx_uniqueid_t *id;
    int myrank;
    int nranks;
} nvshmemx_uniqueid_args_t;
typedef struct {
    int version;
    nvshmemx_uniqueid_args_t uid_args;
} nvshmemx_init_args_t;
typedef struct {
    int version;
    void *mpi_comm; /* NVSHMEMX_INIT_WITH_MPI_COMM: points to the MPI_Comm */
    nvshmemx_init_args_t args;
} nvshmemx_init_attr_t;
#define NVSHMEMX_UNIQUEID_ARGS_INITIALIZER {1, NULL, -1, -1}
#define NVSHMEMX_INIT_ARGS_INITIALIZER {1, NVSHMEMX_UNIQUEID_ARGS_INITIALIZER}
#define NVSHMEMX_INIT_ATTR_INITIALIZER {1, NULL, NVSHMEMX_INIT_ARGS_INITIALIZER}

#define NVSHMEMX_INIT_WITH_UNIQUEID (1 << 3)
#ifdef MPI_VERSION
#define NVSHMEMX_INIT_WITH_MPI_COMM (1 << 1)
#else
/* MPI's header was not included before this one: the MPI bootstrap needs MPI's calls. */
#define NVSHMEMX_INIT_WITH_MPI_COMM NVSHMEMI_COMPAT_UNSUPPORTED_CONST(NVSHMEMX_INIT_WITH_MPI_COMM without <mpi.h> included first)
#endif
#define NVSHMEMX_INIT_THREAD_PES NVSHMEMI_COMPAT_UNSUPPORTED_CONST(NVSHMEMX_INIT_THREAD_PES)
#define NVSHMEMX_INIT_WITH_SHMEM NVSHMEMI_COMPAT_UNSUPPORTED_CONST(NVSHMEMX_INIT_WITH_SHMEM)

/* nvshmemx_init_status() */
enum {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED = 1,
    NVSHMEM_STATUS_IS_INITIALIZED = 2,
};
/* Return codes of the nvshmemx_ routines that return one. */
enum {
    NVSHMEMX_SUCCESS = 0,
    NVSHMEMX_ERROR_INTERNAL = -1,
    NVSHMEMX_ERROR_INVALID_VALUE = -2,
};

/* ---- setup, exit and queries ---- */
NVSHMEMI_COMPAT_H void nvshmem_init(void) { shmem_init(); }
NVSHMEMI_COMPAT_H int nvshmem_init_thread(int requested, int *provided) { return shmem_init_thread(requested, provided); }
NVSHMEMI_COMPAT_H void nvshmem_query_thread(int *provided) { shmem_query_thread(provided); }
NVSHMEMI_COMPAT_H void nvshmem_finalize(void) { shmem_finalize(); }
NVSHMEMI_COMPAT_H int nvshmemx_init_status(void)
{
    return gshmemi_host_initialized() ? NVSHMEM_STATUS_IS_INITIALIZED : NVSHMEM_STATUS_NOT_INITIALIZED;
}
NVSHMEMI_COMPAT_H int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *uniqueid) { return shmemx_get_uniqueid(uniqueid); }
NVSHMEMI_COMPAT_H int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks, const nvshmemx_uniqueid_t *uniqueid,
                                                      nvshmemx_init_attr_t *attr)
{
    if (!attr || !uniqueid) return gshmemi_host_launch_error("nvshmemx_set_attr_uniqueid_args", "attr or uniqueid is NULL");
    attr->args.uid_args.id = (nvshmemx_uniqueid_t *)uniqueid;
    attr->args.uid_args.myrank = myrank;
    attr->args.uid_args.nranks = nranks;
    return 0;
}
NVSHMEMI_COMPAT_H int nvshmemx_set_attr_mpi_comm_args(void *mpi_comm, nvshmemx_init_attr_t *attr)
{
    if (!attr) return gshmemi_host_launch_error("nvshmemx_set_attr_mpi_comm_args", "attr is NULL");
    attr->mpi_comm = mpi_comm;
    return 0;
}
/* 0 on success; a negative status, with the reason logged, on failure (NVSHMEM exits instead). */
NVSHMEMI_COMPAT_H int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr)
{
    shmemx_init_attr_t a;
    memset(&a, 0, sizeof(a));
    a.version = SHMEMX_INIT_ATTR_VERSION;
#ifdef MPI_VERSION
    if (flags & (1u << 1)) { /* NVSHMEMX_INIT_WITH_MPI_COMM: rank 0's unique id, broadcast over the communicator */
        int rank = 0, size = 0;
        if (!attr || !attr->mpi_comm)
            return gshmemi_host_launch_error("nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_MPI_COMM without attr->mpi_comm");
        MPI_Comm comm = *(MPI_Comm *)attr->mpi_comm;
        if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
            return gshmemi_host_launch_error("nvshmemx_init_attr", "MPI_Comm_rank/MPI_Comm_size failed on attr->mpi_comm");
        int rc = rank == 0 ? shmemx_get_uniqueid(&a.uid) : 0;
        /* every rank learns rank 0's outcome with the id, so none waits on a rank that gave up */
        int ok = rc == 0;
        if (MPI_Bcast(&ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !ok ||
            MPI_Bcast(&a.uid, (int)sizeof(a.uid), MPI_BYTE, 0, comm) != MPI_SUCCESS)
            return gshmemi_host_launch_error("nvshmemx_init_attr", "MPI_Bcast of the unique id failed (or rank 0 could not get one)");
        a.rank = rank;
        a.nranks = size;
        return shmemx_init_attr(SHMEMX_INIT_WITH_UNIQUEID, &a);
    }
#endif
    if (flags & NVSHMEMX_INIT_WITH_UNIQUEID) {
        if (!attr || !attr->args.uid_args.id)
            return gshmemi_host_launch_error("nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_UNIQUEID without a unique id "
                                                                   "(nvshmemx_set_attr_uniqueid_args)");
        a.rank = attr->args.uid_args.myrank;
        a.nranks = attr->args.uid_args.nranks;
        a.uid = *attr->args.uid_args.id;
        return shmemx_init_attr(SHMEMX_INIT_WITH_UNIQUEID, &a);
    }
    if (flags != 0) return gshmemi_host_launch_error("nvshmemx_init_attr", "unknown flags (supported: NVSHMEMX_INIT_WITH_UNIQUEID, "
                                                                          "NVSHMEMX_INIT_WITH_MPI_COMM)");
    return shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL);
}

#ifdef __CUDACC__
/* On the device NVSHMEM ends the job; here the calling kernel traps, which the host sees as a
 * failed CUDA call. */
NVSHMEMI_COMPAT_HD void nvshmem_global_exit(int status)
{
#ifdef __CUDA_ARCH__
    printf("nvshmem_global_exit(%d) called on the device by PE %d\n", status, shmem_my_pe());
    __trap();
#else
    shmem_global_exit(status);
#endif
}
#else
NVSHMEMI_COMPAT_H void nvshmem_global_exit(int status) { shmem_global_exit(status); }
#endif

NVSHMEMI_COMPAT_HD int nvshmem_my_pe(void) { return shmem_my_pe(); }
NVSHMEMI_COMPAT_HD int nvshmem_n_pes(void) { return shmem_n_pes(); }
NVSHMEMI_COMPAT_HD void nvshmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}
NVSHMEMI_COMPAT_HD void nvshmem_info_get_name(char *name)
{
    const char *s = SHMEM_VENDOR_STRING;
    int i = 0;
    for (; s[i] && i < SHMEM_MAX_NAME_LEN - 1; i++) name[i] = s[i];
    name[i] = '\0';
}
NVSHMEMI_COMPAT_HD void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch)
{
    *major = GSHMEM_VERSION_MAJOR;
    *minor = GSHMEM_VERSION_MINOR;
    *patch = GSHMEM_VERSION_PATCH;
}

/* ---- symmetric memory ---- */
NVSHMEMI_COMPAT_H void *nvshmem_malloc(size_t size) { return shmem_malloc(size); }
NVSHMEMI_COMPAT_H void *nvshmem_calloc(size_t count, size_t size) { return shmem_calloc(count, size); }
NVSHMEMI_COMPAT_H void *nvshmem_align(size_t alignment, size_t size) { return shmem_align(alignment, size); }
NVSHMEMI_COMPAT_H void nvshmem_free(void *ptr) { shmem_free(ptr); }
NVSHMEMI_COMPAT_HD void *nvshmem_ptr(const void *ptr, int pe) { return shmem_ptr(ptr, pe); }
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_mc_ptr)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_buffer_register)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_buffer_unregister)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_buffer_unregister_all)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_buffer_register_symmetric)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_buffer_unregister_symmetric)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_hostlib_init_attr)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_hostlib_finalize)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_cumodule_init)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_cumodule_finalize)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_culibrary_init)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_culibrary_finalize)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_team_get_uniqueid)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_team_init)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_qp_create)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmem_ctx_create)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmem_ctx_destroy)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmem_team_create_ctx)

/* ---- ordering ---- */
NVSHMEMI_COMPAT_HD void nvshmem_quiet(void) { shmem_quiet(); }
NVSHMEMI_COMPAT_HD void nvshmem_fence(void) { shmem_fence(); }
/* flush: source buffers reusable. quiet gives more (remote completion), so it serves. */
NVSHMEMI_COMPAT_HD void nvshmemx_flush(void) { shmem_quiet(); }
NVSHMEMI_COMPAT_H void nvshmemx_quiet_on_stream(nvshmemi_compat_stream_t stream) { shmemx_quiet_on_stream(stream); }
NVSHMEMI_COMPAT_H void nvshmemx_flush_on_stream(nvshmemi_compat_stream_t stream) { shmemx_quiet_on_stream(stream); }

/* ---- teams ---- */
NVSHMEMI_COMPAT_HD int nvshmem_team_my_pe(nvshmem_team_t team) { return shmem_team_my_pe(team); }
NVSHMEMI_COMPAT_HD int nvshmem_team_n_pes(nvshmem_team_t team) { return shmem_team_n_pes(team); }
NVSHMEMI_COMPAT_HD int nvshmem_team_translate_pe(nvshmem_team_t src_team, int src_pe, nvshmem_team_t dest_team)
{
    return shmem_team_translate_pe(src_team, src_pe, dest_team);
}
/* NVSHMEM's config, as gshmem's (only the number of contexts). */
NVSHMEMI_COMPAT_H const shmem_team_config_t *nvshmemi_compat_team_config(const nvshmem_team_config_t *c,
                                                                          shmem_team_config_t *out)
{
    if (!c) return NULL;
    out->num_contexts = c->num_contexts;
    return out;
}
NVSHMEMI_COMPAT_H int nvshmem_team_split_strided(nvshmem_team_t parent_team, int PE_start, int PE_stride, int PE_size,
                                                 const nvshmem_team_config_t *config, long config_mask,
                                                 nvshmem_team_t *new_team)
{
    shmem_team_config_t c;
    return shmem_team_split_strided(parent_team, PE_start, PE_stride, PE_size, nvshmemi_compat_team_config(config, &c),
                                    config_mask & NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS ? SHMEM_TEAM_NUM_CONTEXTS : 0,
                                    new_team);
}
NVSHMEMI_COMPAT_H int nvshmem_team_split_2d(nvshmem_team_t parent_team, int xrange, const nvshmem_team_config_t *xaxis_config,
                                            long xaxis_mask, nvshmem_team_t *xaxis_team,
                                            const nvshmem_team_config_t *yaxis_config, long yaxis_mask,
                                            nvshmem_team_t *yaxis_team)
{
    shmem_team_config_t xc, yc;
    return shmem_team_split_2d(parent_team, xrange, nvshmemi_compat_team_config(xaxis_config, &xc),
                               xaxis_mask & NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS ? SHMEM_TEAM_NUM_CONTEXTS : 0, xaxis_team,
                               nvshmemi_compat_team_config(yaxis_config, &yc),
                               yaxis_mask & NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS ? SHMEM_TEAM_NUM_CONTEXTS : 0, yaxis_team);
}
/* NVSHMEM's form: no mask, no status. */
NVSHMEMI_COMPAT_H void nvshmem_team_get_config(nvshmem_team_t team, nvshmem_team_config_t *config)
{
    shmem_team_config_t c;
    if (!config || shmem_team_get_config(team, SHMEM_TEAM_NUM_CONTEXTS, &c) != 0) return;
    config->num_contexts = c.num_contexts;
}
NVSHMEMI_COMPAT_H void nvshmem_team_destroy(nvshmem_team_t team) { shmem_team_destroy(team); }

/* ---- barriers ---- */
NVSHMEMI_COMPAT_HD void nvshmem_barrier_all(void) { shmem_barrier_all(); }
NVSHMEMI_COMPAT_HD void nvshmem_barrier(nvshmem_team_t team) { shmem_barrier(team); }
NVSHMEMI_COMPAT_HD void nvshmem_sync_all(void) { shmem_sync_all(); }
NVSHMEMI_COMPAT_HD void nvshmem_team_sync(nvshmem_team_t team) { shmem_sync(team); }
NVSHMEMI_COMPAT_H void nvshmemx_barrier_all_on_stream(nvshmemi_compat_stream_t stream) { shmemx_barrier_all_on_stream(stream); }
NVSHMEMI_COMPAT_H void nvshmemx_barrier_on_stream(nvshmem_team_t team, nvshmemi_compat_stream_t stream)
{
    shmemx_barrier_on_stream(team, stream);
}
NVSHMEMI_COMPAT_H void nvshmemx_sync_all_on_stream(nvshmemi_compat_stream_t stream) { shmemx_sync_all_on_stream(stream); }
NVSHMEMI_COMPAT_H void nvshmemx_team_sync_on_stream(nvshmem_team_t team, nvshmemi_compat_stream_t stream)
{
    shmemx_sync_on_stream(team, stream);
}
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_BARRIER_GROUP(G)                                                         \
    NVSHMEMI_COMPAT_D void nvshmemx_barrier_all_##G(void) { shmemx_barrier_all_##G(); }           \
    NVSHMEMI_COMPAT_D void nvshmemx_barrier_##G(nvshmem_team_t team) { shmemx_barrier_##G(team); } \
    NVSHMEMI_COMPAT_D void nvshmemx_sync_all_##G(void) { shmemx_sync_all_##G(); }                 \
    NVSHMEMI_COMPAT_D void nvshmemx_team_sync_##G(nvshmem_team_t team) { shmemx_sync_##G(team); } \
    NVSHMEMI_COMPAT_D void nvshmemx_flush_##G(void) { shmem_quiet(); }
NVSHMEMI_COMPAT_BARRIER_GROUP(warp)
NVSHMEMI_COMPAT_BARRIER_GROUP(block)
#undef NVSHMEMI_COMPAT_BARRIER_GROUP
#endif

/* ---- RMA ---- */
NVSHMEMI_COMPAT_HD void nvshmem_putmem(void *dest, const void *source, size_t bytes, int pe)
{
    shmem_putmem(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_HD void nvshmem_getmem(void *dest, const void *source, size_t bytes, int pe)
{
    shmem_getmem(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_HD void nvshmem_putmem_nbi(void *dest, const void *source, size_t bytes, int pe)
{
    shmem_putmem_nbi(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_HD void nvshmem_getmem_nbi(void *dest, const void *source, size_t bytes, int pe)
{
    shmem_getmem_nbi(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_H void nvshmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe, nvshmemi_compat_stream_t stream)
{
    shmemx_putmem_on_stream(dest, source, bytes, pe, stream);
}
NVSHMEMI_COMPAT_H void nvshmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe, nvshmemi_compat_stream_t stream)
{
    shmemx_getmem_on_stream(dest, source, bytes, pe, stream);
}
/* The _nbi on-stream forms: the blocking ones complete more, at the same point of the stream. */
NVSHMEMI_COMPAT_H void nvshmemx_putmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                                     nvshmemi_compat_stream_t stream)
{
    shmemx_putmem_on_stream(dest, source, bytes, pe, stream);
}
NVSHMEMI_COMPAT_H void nvshmemx_getmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                                     nvshmemi_compat_stream_t stream)
{
    shmemx_getmem_on_stream(dest, source, bytes, pe, stream);
}

#ifdef __CUDACC__
/* The on-stream forms gshmem has no host entry for run as one small kernel on the stream, in the
 * caller's module (hence a static kernel here, not a library call). Each ends in shmem_quiet, so
 * the operation is complete when the stream moves on. */
static __global__ void nvshmemi_compat_put_value_kernel(void *dest, uint4 value, size_t bytes, int pe)
{
    shmem_putmem(dest, &value, bytes, pe);
    shmem_quiet();
}
static __global__ void nvshmemi_compat_strided_kernel(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                                                      size_t nelems, size_t es, int pe, int is_put)
{
    if (is_put)
        gshmemi_iput_scope(dest, source, dst, sst, nelems, es, pe, GSHMEMI_SCOPE_BLOCK, "nvshmemx_iput_on_stream");
    else
        gshmemi_iget_scope(dest, source, dst, sst, nelems, es, pe, GSHMEMI_SCOPE_BLOCK, "nvshmemx_iget_on_stream");
    __syncthreads();
    if (threadIdx.x == 0) shmem_quiet();
}
static __global__ void nvshmemi_compat_signal_op_kernel(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    shmemx_signal_op(sig_addr, signal, sig_op, pe);
    shmem_quiet();
}
static inline void nvshmemi_compat_launch_check(const char *routine)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        char why[160];
        snprintf(why, sizeof(why), "kernel launch: %s", cudaGetErrorString(e));
        (void)gshmemi_host_launch_error(routine, why);
    }
}
NVSHMEMI_COMPAT_H void nvshmemi_compat_p_on_stream(void *dest, const void *value, size_t bytes, int pe, nvshmemi_compat_stream_t stream,
                                                   const char *routine)
{
    uint4 v;
    memset(&v, 0, sizeof(v));
    memcpy(&v, value, bytes);
    nvshmemi_compat_put_value_kernel<<<1, 1, 0, stream>>>(dest, v, bytes, pe);
    nvshmemi_compat_launch_check(routine);
}
NVSHMEMI_COMPAT_H void nvshmemi_compat_strided_on_stream(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                                                         size_t nelems, size_t es, int pe, int is_put, nvshmemi_compat_stream_t stream,
                                                         const char *routine)
{
    nvshmemi_compat_strided_kernel<<<1, 256, 0, stream>>>(dest, source, dst, sst, nelems, es, pe, is_put);
    nvshmemi_compat_launch_check(routine);
}
NVSHMEMI_COMPAT_H void nvshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                                    nvshmemi_compat_stream_t stream)
{
    nvshmemi_compat_signal_op_kernel<<<1, 1, 0, stream>>>(sig_addr, signal, sig_op, pe);
    nvshmemi_compat_launch_check("nvshmemx_signal_op_on_stream");
}
/* g on a stream returns the value: the stream's earlier work first, then the get. */
NVSHMEMI_COMPAT_H void nvshmemi_compat_stream_sync(nvshmemi_compat_stream_t stream, const char *routine)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        char why[160];
        snprintf(why, sizeof(why), "cudaStreamSynchronize: %s", cudaGetErrorString(e));
        (void)gshmemi_host_launch_error(routine, why);
    }
}

NVSHMEMI_COMPAT_D void nvshmemx_putmem_warp(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_putmem_warp(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_putmem_block(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_putmem_block(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_getmem_warp(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_getmem_warp(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_getmem_block(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_getmem_block(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_putmem_nbi_warp(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_putmem_nbi_warp(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_putmem_nbi_block(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_putmem_nbi_block(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_getmem_nbi_warp(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_getmem_nbi_warp(dest, source, bytes, pe);
}
NVSHMEMI_COMPAT_D void nvshmemx_getmem_nbi_block(void *dest, const void *source, size_t bytes, int pe)
{
    shmemx_getmem_nbi_block(dest, source, bytes, pe);
}
#endif

/* Typed RMA, one body per (name, T) of gshmem's RMA type list. */
#define NVSHMEMI_COMPAT_RMA_HOST(name, T)                                                                          \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_p(T *dest, const T value, int pe) { shmem_##name##_p(dest, value, pe); } \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_g(const T *source, int pe) { return shmem_##name##_g(source, pe); }          \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_put(T *dest, const T *source, size_t nelems, int pe)                   \
    {                                                                                                              \
        shmem_##name##_put(dest, source, nelems, pe);                                                              \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_get(T *dest, const T *source, size_t nelems, int pe)                   \
    {                                                                                                              \
        shmem_##name##_get(dest, source, nelems, pe);                                                              \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_put_nbi(T *dest, const T *source, size_t nelems, int pe)               \
    {                                                                                                              \
        shmem_##name##_put_nbi(dest, source, nelems, pe);                                                          \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_get_nbi(T *dest, const T *source, size_t nelems, int pe)               \
    {                                                                                                              \
        shmem_##name##_get_nbi(dest, source, nelems, pe);                                                          \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,           \
                                                  size_t nelems, int pe)                                           \
    {                                                                                                              \
        shmem_##name##_iput(dest, source, dst, sst, nelems, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,           \
                                                  size_t nelems, int pe)                                           \
    {                                                                                                              \
        shmem_##name##_iget(dest, source, dst, sst, nelems, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_put_on_stream(T *dest, const T *source, size_t nelems, int pe,        \
                                                           nvshmemi_compat_stream_t stream)                                    \
    {                                                                                                              \
        shmemx_putmem_on_stream(dest, source, nelems * sizeof(T), pe, stream);                                     \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_get_on_stream(T *dest, const T *source, size_t nelems, int pe,        \
                                                           nvshmemi_compat_stream_t stream)                                    \
    {                                                                                                              \
        shmemx_getmem_on_stream(dest, source, nelems * sizeof(T), pe, stream);                                     \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_put_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,    \
                                                               nvshmemi_compat_stream_t stream)                                \
    {                                                                                                              \
        shmemx_putmem_on_stream(dest, source, nelems * sizeof(T), pe, stream);                                     \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_get_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,    \
                                                               nvshmemi_compat_stream_t stream)                                \
    {                                                                                                              \
        shmemx_getmem_on_stream(dest, source, nelems * sizeof(T), pe, stream);                                     \
    }

#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_RMA_CUDA(name, T)                                                                          \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_p_on_stream(T *dest, const T value, int pe, nvshmemi_compat_stream_t stream)      \
    {                                                                                                              \
        nvshmemi_compat_p_on_stream(dest, &value, sizeof(T), pe, stream, "nvshmemx_" #name "_p_on_stream");        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H T nvshmemx_##name##_g_on_stream(const T *source, int pe, nvshmemi_compat_stream_t stream)                \
    {                                                                                                              \
        nvshmemi_compat_stream_sync(stream, "nvshmemx_" #name "_g_on_stream");                                     \
        return shmem_##name##_g(source, pe);                                                                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_iput_on_stream(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                                                            size_t nelems, int pe, nvshmemi_compat_stream_t stream)            \
    {                                                                                                              \
        nvshmemi_compat_strided_on_stream(dest, source, dst, sst, nelems, sizeof(T), pe, 1, stream,                \
                                          "nvshmemx_" #name "_iput_on_stream");                                    \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_iget_on_stream(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                                                            size_t nelems, int pe, nvshmemi_compat_stream_t stream)            \
    {                                                                                                              \
        nvshmemi_compat_strided_on_stream(dest, source, dst, sst, nelems, sizeof(T), pe, 0, stream,                \
                                          "nvshmemx_" #name "_iget_on_stream");                                    \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_put_warp(T *dest, const T *source, size_t nelems, int pe)             \
    {                                                                                                              \
        shmemx_##name##_put_warp(dest, source, nelems, pe);                                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_put_block(T *dest, const T *source, size_t nelems, int pe)            \
    {                                                                                                              \
        shmemx_##name##_put_block(dest, source, nelems, pe);                                                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_get_warp(T *dest, const T *source, size_t nelems, int pe)             \
    {                                                                                                              \
        shmemx_##name##_get_warp(dest, source, nelems, pe);                                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_get_block(T *dest, const T *source, size_t nelems, int pe)            \
    {                                                                                                              \
        shmemx_##name##_get_block(dest, source, nelems, pe);                                                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_put_nbi_warp(T *dest, const T *source, size_t nelems, int pe)         \
    {                                                                                                              \
        shmemx_##name##_put_nbi_warp(dest, source, nelems, pe);                                                    \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_put_nbi_block(T *dest, const T *source, size_t nelems, int pe)        \
    {                                                                                                              \
        shmemx_##name##_put_nbi_block(dest, source, nelems, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_get_nbi_warp(T *dest, const T *source, size_t nelems, int pe)         \
    {                                                                                                              \
        shmemx_##name##_get_nbi_warp(dest, source, nelems, pe);                                                    \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_get_nbi_block(T *dest, const T *source, size_t nelems, int pe)        \
    {                                                                                                              \
        shmemx_##name##_get_nbi_block(dest, source, nelems, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_iput_warp(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,     \
                                                       size_t nelems, int pe)                                      \
    {                                                                                                              \
        gshmemi_iput_scope(dest, source, dst, sst, nelems, sizeof(T), pe, GSHMEMI_SCOPE_WARP,                      \
                           "nvshmemx_" #name "_iput_warp");                                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_iput_block(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,    \
                                                        size_t nelems, int pe)                                     \
    {                                                                                                              \
        shmemx_##name##_iput_block(dest, source, dst, sst, nelems, pe);                                            \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_iget_warp(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,     \
                                                       size_t nelems, int pe)                                      \
    {                                                                                                              \
        gshmemi_iget_scope(dest, source, dst, sst, nelems, sizeof(T), pe, GSHMEMI_SCOPE_WARP,                      \
                           "nvshmemx_" #name "_iget_warp");                                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_iget_block(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,    \
                                                        size_t nelems, int pe)                                     \
    {                                                                                                              \
        shmemx_##name##_iget_block(dest, source, dst, sst, nelems, pe);                                            \
    }
#define NVSHMEMI_COMPAT_RMA(name, T) NVSHMEMI_COMPAT_RMA_HOST(name, T) NVSHMEMI_COMPAT_RMA_CUDA(name, T)
GSHMEM_RMA_TYPES(NVSHMEMI_COMPAT_RMA)
GSHMEM_RMA_EXT_TYPES(NVSHMEMI_COMPAT_RMA)
#else
GSHMEM_RMA_TYPES(NVSHMEMI_COMPAT_RMA_HOST)
#endif

/* Sized RMA (putSIZE/getSIZE), as bytes. */
#define NVSHMEMI_COMPAT_SIZED_HOST(bits, bytes)                                                                     \
    NVSHMEMI_COMPAT_HD void nvshmem_put##bits(void *dest, const void *source, size_t nelems, int pe)                \
    {                                                                                                              \
        shmem_putmem(dest, source, nelems * bytes, pe);                                                            \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_get##bits(void *dest, const void *source, size_t nelems, int pe)                \
    {                                                                                                              \
        shmem_getmem(dest, source, nelems * bytes, pe);                                                            \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_put##bits##_nbi(void *dest, const void *source, size_t nelems, int pe)          \
    {                                                                                                              \
        shmem_putmem_nbi(dest, source, nelems * bytes, pe);                                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_get##bits##_nbi(void *dest, const void *source, size_t nelems, int pe)          \
    {                                                                                                              \
        shmem_getmem_nbi(dest, source, nelems * bytes, pe);                                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_iput##bits(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                               size_t nelems, int pe)                                              \
    {                                                                                                              \
        shmem_iput##bits(dest, source, dst, sst, nelems, pe);                                                      \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_iget##bits(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                               size_t nelems, int pe)                                              \
    {                                                                                                              \
        shmem_iget##bits(dest, source, dst, sst, nelems, pe);                                                      \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_put##bits##_on_stream(void *dest, const void *source, size_t nelems, int pe,   \
                                                          nvshmemi_compat_stream_t stream)                                     \
    {                                                                                                              \
        shmemx_putmem_on_stream(dest, source, nelems * bytes, pe, stream);                                         \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_get##bits##_on_stream(void *dest, const void *source, size_t nelems, int pe,   \
                                                          nvshmemi_compat_stream_t stream)                                     \
    {                                                                                                              \
        shmemx_getmem_on_stream(dest, source, nelems * bytes, pe, stream);                                         \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_put##bits##_nbi_on_stream(void *dest, const void *source, size_t nelems,       \
                                                              int pe, nvshmemi_compat_stream_t stream)                         \
    {                                                                                                              \
        shmemx_putmem_on_stream(dest, source, nelems * bytes, pe, stream);                                         \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_get##bits##_nbi_on_stream(void *dest, const void *source, size_t nelems,       \
                                                              int pe, nvshmemi_compat_stream_t stream)                         \
    {                                                                                                              \
        shmemx_getmem_on_stream(dest, source, nelems * bytes, pe, stream);                                         \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_put##bits##_signal_on_stream(void *dest, const void *source, size_t nelems,    \
                                                                 uint64_t *sig_addr, uint64_t signal, int sig_op,  \
                                                                 int pe, nvshmemi_compat_stream_t stream)                      \
    {                                                                                                              \
        shmemx_putmem_signal_on_stream(dest, source, nelems * bytes, sig_addr, signal, sig_op, pe, stream);        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_put##bits##_signal_nbi_on_stream(void *dest, const void *source, size_t nelems, \
                                                                     uint64_t *sig_addr, uint64_t signal,          \
                                                                     int sig_op, int pe, nvshmemi_compat_stream_t stream)      \
    {                                                                                                              \
        shmemx_putmem_signal_on_stream(dest, source, nelems * bytes, sig_addr, signal, sig_op, pe, stream);        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_put##bits##_signal(void *dest, const void *source, size_t nelems,               \
                                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)    \
    {                                                                                                              \
        shmem_putmem_signal(dest, source, nelems * bytes, sig_addr, signal, sig_op, pe);                           \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_put##bits##_signal_nbi(void *dest, const void *source, size_t nelems,           \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                              \
        shmem_putmem_signal_nbi(dest, source, nelems * bytes, sig_addr, signal, sig_op, pe);                       \
    }
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_SIZED_GROUP(bits, bytes, G)                                                                 \
    NVSHMEMI_COMPAT_D void nvshmemx_put##bits##_##G(void *dest, const void *source, size_t nelems, int pe)          \
    {                                                                                                              \
        shmemx_putmem_##G(dest, source, nelems * bytes, pe);                                                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_get##bits##_##G(void *dest, const void *source, size_t nelems, int pe)          \
    {                                                                                                              \
        shmemx_getmem_##G(dest, source, nelems * bytes, pe);                                                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_put##bits##_nbi_##G(void *dest, const void *source, size_t nelems, int pe)      \
    {                                                                                                              \
        shmemx_putmem_nbi_##G(dest, source, nelems * bytes, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_get##bits##_nbi_##G(void *dest, const void *source, size_t nelems, int pe)      \
    {                                                                                                              \
        shmemx_getmem_nbi_##G(dest, source, nelems * bytes, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_iput##bits##_##G(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                                     size_t nelems, int pe)                                        \
    {                                                                                                              \
        gshmemi_iput_scope(dest, source, dst, sst, nelems, bytes, pe, NVSHMEMI_COMPAT_SCOPE_##G, "nvshmemx_iput" #bits);   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_iget##bits##_##G(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                                     size_t nelems, int pe)                                        \
    {                                                                                                              \
        gshmemi_iget_scope(dest, source, dst, sst, nelems, bytes, pe, NVSHMEMI_COMPAT_SCOPE_##G, "nvshmemx_iget" #bits);   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_put##bits##_signal_##G(void *dest, const void *source, size_t nelems,           \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                              \
        shmemx_putmem_signal_##G(dest, source, nelems * bytes, sig_addr, signal, sig_op, pe);                      \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_put##bits##_signal_nbi_##G(void *dest, const void *source, size_t nelems,       \
                                                               uint64_t *sig_addr, uint64_t signal, int sig_op,    \
                                                               int pe)                                             \
    {                                                                                                              \
        shmemx_putmem_signal_nbi_##G(dest, source, nelems * bytes, sig_addr, signal, sig_op, pe);                  \
    }
#define NVSHMEMI_COMPAT_SCOPE_warp GSHMEMI_SCOPE_WARP
#define NVSHMEMI_COMPAT_SCOPE_block GSHMEMI_SCOPE_BLOCK
#define NVSHMEMI_COMPAT_SIZED(bits, bytes)                                                       \
    NVSHMEMI_COMPAT_SIZED_HOST(bits, bytes)                                                      \
    NVSHMEMI_COMPAT_SIZED_GROUP(bits, bytes, warp)                                               \
    NVSHMEMI_COMPAT_SIZED_GROUP(bits, bytes, block)                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_iput##bits##_on_stream(void *dest, const void *source, ptrdiff_t dst, \
                                                           ptrdiff_t sst, size_t nelems, int pe,           \
                                                           nvshmemi_compat_stream_t stream)                            \
    {                                                                                            \
        nvshmemi_compat_strided_on_stream(dest, source, dst, sst, nelems, bytes, pe, 1, stream,  \
                                          "nvshmemx_iput" #bits "_on_stream");                   \
    }                                                                                            \
    NVSHMEMI_COMPAT_H void nvshmemx_iget##bits##_on_stream(void *dest, const void *source, ptrdiff_t dst, \
                                                           ptrdiff_t sst, size_t nelems, int pe,           \
                                                           nvshmemi_compat_stream_t stream)                            \
    {                                                                                            \
        nvshmemi_compat_strided_on_stream(dest, source, dst, sst, nelems, bytes, pe, 0, stream,  \
                                          "nvshmemx_iget" #bits "_on_stream");                   \
    }
GSHMEM_RMA_SIZES(NVSHMEMI_COMPAT_SIZED)
#else
GSHMEM_RMA_SIZES(NVSHMEMI_COMPAT_SIZED_HOST)
#endif

/* ---- put with signal, signals ---- */
NVSHMEMI_COMPAT_HD void nvshmem_putmem_signal(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                              uint64_t signal, int sig_op, int pe)
{
    shmem_putmem_signal(dest, source, bytes, sig_addr, signal, sig_op, pe);
}
NVSHMEMI_COMPAT_HD void nvshmem_putmem_signal_nbi(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                                  uint64_t signal, int sig_op, int pe)
{
    shmem_putmem_signal_nbi(dest, source, bytes, sig_addr, signal, sig_op, pe);
}
NVSHMEMI_COMPAT_H void nvshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                                        uint64_t signal, int sig_op, int pe, nvshmemi_compat_stream_t stream)
{
    shmemx_putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, stream);
}
NVSHMEMI_COMPAT_H void nvshmemx_putmem_signal_nbi_on_stream(void *dest, const void *source, size_t bytes,
                                                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                                            nvshmemi_compat_stream_t stream)
{
    shmemx_putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, stream);
}
NVSHMEMI_COMPAT_HD void nvshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    shmemx_signal_op(sig_addr, signal, sig_op, pe);
}
NVSHMEMI_COMPAT_HD uint64_t nvshmem_signal_fetch(uint64_t *sig_addr) { return shmem_signal_fetch(sig_addr); }
NVSHMEMI_COMPAT_HD uint64_t nvshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    return shmem_signal_wait_until(sig_addr, cmp, cmp_value);
}
NVSHMEMI_COMPAT_H void nvshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                                            nvshmemi_compat_stream_t stream)
{
    shmemx_signal_wait_until_on_stream(sig_addr, cmp, cmp_value, stream);
}
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_PUTMEM_SIGNAL_GROUP(G)                                                                      \
    NVSHMEMI_COMPAT_D void nvshmemx_putmem_signal_##G(void *dest, const void *source, size_t bytes,                 \
                                                      uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)     \
    {                                                                                                              \
        shmemx_putmem_signal_##G(dest, source, bytes, sig_addr, signal, sig_op, pe);                               \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_putmem_signal_nbi_##G(void *dest, const void *source, size_t bytes,             \
                                                          uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                              \
        shmemx_putmem_signal_nbi_##G(dest, source, bytes, sig_addr, signal, sig_op, pe);                           \
    }
NVSHMEMI_COMPAT_PUTMEM_SIGNAL_GROUP(warp)
NVSHMEMI_COMPAT_PUTMEM_SIGNAL_GROUP(block)
#undef NVSHMEMI_COMPAT_PUTMEM_SIGNAL_GROUP
#endif

#define NVSHMEMI_COMPAT_PUT_SIGNAL_HOST(name, T)                                                                    \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                                        uint64_t signal, int sig_op, int pe)                       \
    {                                                                                                              \
        shmem_putmem_signal(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);                             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_put_signal_nbi(T *dest, const T *source, size_t nelems,                \
                                                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                              \
        shmem_putmem_signal_nbi(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);                         \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_put_signal_on_stream(T *dest, const T *source, size_t nelems,         \
                                                                  uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                                                  int pe, nvshmemi_compat_stream_t stream)                     \
    {                                                                                                              \
        shmemx_putmem_signal_on_stream(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, stream);    \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_put_signal_nbi_on_stream(T *dest, const T *source, size_t nelems,     \
                                                                      uint64_t *sig_addr, uint64_t signal,         \
                                                                      int sig_op, int pe, nvshmemi_compat_stream_t stream)     \
    {                                                                                                              \
        shmemx_putmem_signal_on_stream(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, stream);    \
    }
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_PUT_SIGNAL_GROUP(name, T, G)                                                                \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_put_signal_##G(T *dest, const T *source, size_t nelems,                \
                                                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                              \
        shmemx_putmem_signal_##G(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmemx_##name##_put_signal_nbi_##G(T *dest, const T *source, size_t nelems,            \
                                                                uint64_t *sig_addr, uint64_t signal, int sig_op,   \
                                                                int pe)                                            \
    {                                                                                                              \
        shmemx_putmem_signal_nbi_##G(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);                    \
    }
#define NVSHMEMI_COMPAT_PUT_SIGNAL(name, T)                                                      \
    NVSHMEMI_COMPAT_PUT_SIGNAL_HOST(name, T)                                                     \
    NVSHMEMI_COMPAT_PUT_SIGNAL_GROUP(name, T, warp)                                              \
    NVSHMEMI_COMPAT_PUT_SIGNAL_GROUP(name, T, block)
GSHMEM_RMA_TYPES(NVSHMEMI_COMPAT_PUT_SIGNAL)
GSHMEM_RMA_EXT_TYPES(NVSHMEMI_COMPAT_PUT_SIGNAL)
#else
GSHMEM_RMA_TYPES(NVSHMEMI_COMPAT_PUT_SIGNAL_HOST)
#endif

/* ---- atomics (NVSHMEM's type groups are gshmem's: standard, extended, bitwise) ---- */
#define NVSHMEMI_COMPAT_AMO_STD(name, T)                                                                            \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_atomic_compare_swap(T *dest, T cond, T value, int pe)                     \
    {                                                                                                              \
        return shmem_##name##_atomic_compare_swap(dest, cond, value, pe);                                          \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_atomic_fetch_inc(T *dest, int pe)                                         \
    {                                                                                                              \
        return shmem_##name##_atomic_fetch_inc(dest, pe);                                                          \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_atomic_inc(T *dest, int pe) { shmem_##name##_atomic_inc(dest, pe); }   \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_atomic_fetch_add(T *dest, T value, int pe)                                \
    {                                                                                                              \
        return shmem_##name##_atomic_fetch_add(dest, value, pe);                                                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_atomic_add(T *dest, T value, int pe)                                   \
    {                                                                                                              \
        shmem_##name##_atomic_add(dest, value, pe);                                                                \
    }
#define NVSHMEMI_COMPAT_AMO_EXT(name, T)                                                                            \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_atomic_fetch(const T *source, int pe)                                     \
    {                                                                                                              \
        return shmem_##name##_atomic_fetch(source, pe);                                                            \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_atomic_set(T *dest, T value, int pe)                                   \
    {                                                                                                              \
        shmem_##name##_atomic_set(dest, value, pe);                                                                \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_atomic_swap(T *dest, T value, int pe)                                     \
    {                                                                                                              \
        return shmem_##name##_atomic_swap(dest, value, pe);                                                        \
    }
#define NVSHMEMI_COMPAT_AMO_BIT1(name, T, op)                                                                       \
    NVSHMEMI_COMPAT_HD T nvshmem_##name##_atomic_fetch_##op(T *dest, T value, int pe)                               \
    {                                                                                                              \
        return shmem_##name##_atomic_fetch_##op(dest, value, pe);                                                  \
    }                                                                                                              \
    NVSHMEMI_COMPAT_HD void nvshmem_##name##_atomic_##op(T *dest, T value, int pe)                                  \
    {                                                                                                              \
        shmem_##name##_atomic_##op(dest, value, pe);                                                               \
    }
#define NVSHMEMI_COMPAT_AMO_BIT(name, T)                                                         \
    NVSHMEMI_COMPAT_AMO_BIT1(name, T, and)                                                       \
    NVSHMEMI_COMPAT_AMO_BIT1(name, T, or)                                                        \
    NVSHMEMI_COMPAT_AMO_BIT1(name, T, xor)
GSHMEM_AMO_TYPES(NVSHMEMI_COMPAT_AMO_STD)
GSHMEM_AMO_EXTENDED_TYPES(NVSHMEMI_COMPAT_AMO_EXT)
GSHMEM_AMO_BITWISE_TYPES(NVSHMEMI_COMPAT_AMO_BIT)
/* NVSHMEM's floating-point atomic add (an extension) and the half atomics: not in gshmem. */
#define NVSHMEMI_COMPAT_AMO_FLOAT_MISSING(name, T)                                               \
    NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_##name##_atomic_add)                                 \
    NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_##name##_atomic_fetch_add)
NVSHMEMI_COMPAT_AMO_FLOAT_MISSING(half, __half)
NVSHMEMI_COMPAT_AMO_FLOAT_MISSING(float, float)
NVSHMEMI_COMPAT_AMO_FLOAT_MISSING(double, double)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmem_half_atomic_fetch)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmem_half_atomic_set)
NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmem_half_atomic_swap)

/* ---- point-to-point synchronization ---- */
#define NVSHMEMI_COMPAT_WAIT_HOST(name, T)                                                                          \
    NVSHMEMI_COMPAT_H void nvshmemx_##name##_wait_until_on_stream(T *ivar, int cmp, T cmp_value, nvshmemi_compat_stream_t stream) \
    {                                                                                                              \
        shmemx_##name##_wait_until_on_stream(ivar, cmp, cmp_value, stream);                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_##name##_wait_until_all_on_stream)                                     \
    NVSHMEMI_COMPAT_UNSUPPORTED_FN(nvshmemx_##name##_wait_until_all_vector_on_stream)
#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_WAIT(name, T)                                                                               \
    NVSHMEMI_COMPAT_WAIT_HOST(name, T)                                                                             \
    NVSHMEMI_COMPAT_D void nvshmem_##name##_wait_until(T *ivar, int cmp, T cmp_value)                               \
    {                                                                                                              \
        shmem_##name##_wait_until(ivar, cmp, cmp_value);                                                           \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmem_##name##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,     \
                                                           T cmp_value)                                            \
    {                                                                                                              \
        shmem_##name##_wait_until_all(ivars, nelems, status, cmp, cmp_value);                                      \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,   \
                                                             T cmp_value)                                          \
    {                                                                                                              \
        return shmem_##name##_wait_until_any(ivars, nelems, status, cmp, cmp_value);                               \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_wait_until_some(T *ivars, size_t nelems, size_t *indices,             \
                                                              const int *status, int cmp, T cmp_value)             \
    {                                                                                                              \
        return shmem_##name##_wait_until_some(ivars, nelems, indices, status, cmp, cmp_value);                     \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D void nvshmem_##name##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,       \
                                                                  int cmp, T *cmp_values)                          \
    {                                                                                                              \
        shmem_##name##_wait_until_all_vector(ivars, nelems, status, cmp, cmp_values);                              \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,     \
                                                                    int cmp, T *cmp_values)                        \
    {                                                                                                              \
        return shmem_##name##_wait_until_any_vector(ivars, nelems, status, cmp, cmp_values);                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,      \
                                                                     const int *status, int cmp, T *cmp_values)    \
    {                                                                                                              \
        return shmem_##name##_wait_until_some_vector(ivars, nelems, indices, status, cmp, cmp_values);             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D int nvshmem_##name##_test(T *ivar, int cmp, T cmp_value)                                      \
    {                                                                                                              \
        return shmem_##name##_test(ivar, cmp, cmp_value);                                                          \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D int nvshmem_##name##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) \
    {                                                                                                              \
        return shmem_##name##_test_all(ivars, nelems, status, cmp, cmp_value);                                     \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_test_any(T *ivars, size_t nelems, const int *status, int cmp,         \
                                                       T cmp_value)                                                \
    {                                                                                                              \
        return shmem_##name##_test_any(ivars, nelems, status, cmp, cmp_value);                                     \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                                        int cmp, T cmp_value)                                      \
    {                                                                                                              \
        return shmem_##name##_test_some(ivars, nelems, indices, status, cmp, cmp_value);                           \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D int nvshmem_##name##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                                           T *cmp_values)                                          \
    {                                                                                                              \
        return shmem_##name##_test_all_vector(ivars, nelems, status, cmp, cmp_values);                             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                                              T *cmp_values)                                       \
    {                                                                                                              \
        return shmem_##name##_test_any_vector(ivars, nelems, status, cmp, cmp_values);                             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_D size_t nvshmem_##name##_test_some_vector(T *ivars, size_t nelems, size_t *indices,            \
                                                               const int *status, int cmp, T *cmp_values)          \
    {                                                                                                              \
        return shmem_##name##_test_some_vector(ivars, nelems, indices, status, cmp, cmp_values);                   \
    }
GSHMEM_SYNC_TYPES(NVSHMEMI_COMPAT_WAIT)
#else
GSHMEM_SYNC_TYPES(NVSHMEMI_COMPAT_WAIT_HOST)
#endif

/* ---- collectives: NVSHMEM's (team, dest, source, nelems[, root]) order, returning int ---- */
#define NVSHMEMI_COMPAT_MOVE_HOST(name, T)                                                                          \
    NVSHMEMI_COMPAT_H int nvshmemx_##name##_broadcast_on_stream(nvshmem_team_t team, T *dest, const T *source,     \
                                                                size_t nelems, int PE_root, nvshmemi_compat_stream_t stream)   \
    {                                                                                                              \
        return shmemx_##name##_broadcast_on_stream(team, dest, source, nelems, PE_root, stream);                   \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H int nvshmemx_##name##_fcollect_on_stream(nvshmem_team_t team, T *dest, const T *source,      \
                                                               size_t nelems, nvshmemi_compat_stream_t stream)                 \
    {                                                                                                              \
        return shmemx_##name##_fcollect_on_stream(team, dest, source, nelems, stream);                             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H int nvshmemx_##name##_alltoall_on_stream(nvshmem_team_t team, T *dest, const T *source,      \
                                                               size_t nelems, nvshmemi_compat_stream_t stream)                 \
    {                                                                                                              \
        return shmemx_##name##_alltoall_on_stream(team, dest, source, nelems, stream);                             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_HD int nvshmem_##name##_broadcast(nvshmem_team_t team, T *dest, const T *source, size_t nelems, \
                                                      int PE_root)                                                 \
    {                                                                                                              \
        return shmem_##name##_broadcast(team, dest, source, nelems, PE_root);                                      \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_HD int nvshmem_##name##_fcollect(nvshmem_team_t team, T *dest, const T *source, size_t nelems) \
    {                                                                                                              \
        return shmem_##name##_fcollect(team, dest, source, nelems);                                                \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_HD int nvshmem_##name##_alltoall(nvshmem_team_t team, T *dest, const T *source, size_t nelems) \
    {                                                                                                              \
        return shmem_##name##_alltoall(team, dest, source, nelems);                                                \
    }
#define NVSHMEMI_COMPAT_REDUCE_HOST(op, OPC, name, T, DT)                                                           \
    NVSHMEMI_COMPAT_COLL_HD int nvshmem_##name##op##_reduce(nvshmem_team_t team, T *dest, const T *source, size_t nreduce) \
    {                                                                                                              \
        return shmem_##name##op##_reduce(team, dest, source, nreduce);                                             \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_HD int nvshmem_##name##op##_reducescatter(nvshmem_team_t team, T *dest, const T *source,   \
                                                              size_t nreduce)                                      \
    {                                                                                                              \
        return shmem_##name##op##_reducescatter(team, dest, source, nreduce);                                      \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H int nvshmemx_##name##op##_reduce_on_stream(nvshmem_team_t team, T *dest, const T *source,    \
                                                                 size_t nreduce, nvshmemi_compat_stream_t stream)              \
    {                                                                                                              \
        return shmemx_##name##op##_reduce_on_stream(team, dest, source, nreduce, stream);                          \
    }                                                                                                              \
    NVSHMEMI_COMPAT_H int nvshmemx_##name##op##_reducescatter_on_stream(nvshmem_team_t team, T *dest,              \
                                                                        const T *source, size_t nreduce,           \
                                                                        nvshmemi_compat_stream_t stream)                       \
    {                                                                                                              \
        return shmemx_##name##op##_reducescatter_on_stream(team, dest, source, nreduce, stream);                   \
    }
NVSHMEMI_COMPAT_COLL_HD int nvshmem_broadcastmem(nvshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    return shmem_broadcastmem(team, dest, source, nelems, PE_root);
}
NVSHMEMI_COMPAT_COLL_HD int nvshmem_fcollectmem(nvshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return shmem_fcollectmem(team, dest, source, nelems);
}
NVSHMEMI_COMPAT_COLL_HD int nvshmem_alltoallmem(nvshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return shmem_alltoallmem(team, dest, source, nelems);
}
NVSHMEMI_COMPAT_H int nvshmemx_broadcastmem_on_stream(nvshmem_team_t team, void *dest, const void *source, size_t nelems,
                                                      int PE_root, nvshmemi_compat_stream_t stream)
{
    return shmemx_broadcastmem_on_stream(team, dest, source, nelems, PE_root, stream);
}
NVSHMEMI_COMPAT_H int nvshmemx_fcollectmem_on_stream(nvshmem_team_t team, void *dest, const void *source, size_t nelems,
                                                     nvshmemi_compat_stream_t stream)
{
    return shmemx_fcollectmem_on_stream(team, dest, source, nelems, stream);
}
NVSHMEMI_COMPAT_H int nvshmemx_alltoallmem_on_stream(nvshmem_team_t team, void *dest, const void *source, size_t nelems,
                                                     nvshmemi_compat_stream_t stream)
{
    return shmemx_alltoallmem_on_stream(team, dest, source, nelems, stream);
}

#ifdef __CUDACC__
#define NVSHMEMI_COMPAT_MOVE_GROUP(name, T, G)                                                                      \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_##name##_broadcast_##G(nvshmem_team_t team, T *dest, const T *source,       \
                                                          size_t nelems, int PE_root)                              \
    {                                                                                                              \
        return shmemx_##name##_broadcast_##G(team, dest, source, nelems, PE_root);                                 \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_##name##_fcollect_##G(nvshmem_team_t team, T *dest, const T *source,        \
                                                         size_t nelems)                                            \
    {                                                                                                              \
        return shmemx_##name##_fcollect_##G(team, dest, source, nelems);                                           \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_##name##_alltoall_##G(nvshmem_team_t team, T *dest, const T *source,        \
                                                         size_t nelems)                                            \
    {                                                                                                              \
        return shmemx_##name##_alltoall_##G(team, dest, source, nelems);                                           \
    }
#define NVSHMEMI_COMPAT_REDUCE_GROUP(op, name, T, G)                                                                \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_##name##op##_reduce_##G(nvshmem_team_t team, T *dest, const T *source,      \
                                                           size_t nreduce)                                         \
    {                                                                                                              \
        return shmemx_##name##op##_reduce_##G(team, dest, source, nreduce);                                        \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_##name##op##_reducescatter_##G(nvshmem_team_t team, T *dest, const T *source, \
                                                                  size_t nreduce)                                  \
    {                                                                                                              \
        return shmemx_##name##op##_reducescatter_##G(team, dest, source, nreduce);                                 \
    }
#define NVSHMEMI_COMPAT_MOVE(name, T)                                                            \
    NVSHMEMI_COMPAT_MOVE_HOST(name, T)                                                           \
    NVSHMEMI_COMPAT_MOVE_GROUP(name, T, warp)                                                    \
    NVSHMEMI_COMPAT_MOVE_GROUP(name, T, block)
#define NVSHMEMI_COMPAT_REDUCE(op, OPC, name, T, DT)                                             \
    NVSHMEMI_COMPAT_REDUCE_HOST(op, OPC, name, T, DT)                                            \
    NVSHMEMI_COMPAT_REDUCE_GROUP(op, name, T, warp)                                              \
    NVSHMEMI_COMPAT_REDUCE_GROUP(op, name, T, block)
GSHMEM_RMA_TYPES(NVSHMEMI_COMPAT_MOVE)
GSHMEM_RMA_EXT_TYPES(NVSHMEMI_COMPAT_MOVE)
GSHMEM_REDUCE_PAIRS(NVSHMEMI_COMPAT_REDUCE)
GSHMEM_REDUCE_EXT_PAIRS(NVSHMEMI_COMPAT_REDUCE)
#define NVSHMEMI_COMPAT_MEM_GROUP(G)                                                                                \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_broadcastmem_##G(nvshmem_team_t team, void *dest, const void *source,       \
                                                    size_t nelems, int PE_root)                                    \
    {                                                                                                              \
        return shmemx_broadcastmem_##G(team, dest, source, nelems, PE_root);                                       \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_fcollectmem_##G(nvshmem_team_t team, void *dest, const void *source,        \
                                                   size_t nelems)                                                  \
    {                                                                                                              \
        return shmemx_fcollectmem_##G(team, dest, source, nelems);                                                 \
    }                                                                                                              \
    NVSHMEMI_COMPAT_COLL_D int nvshmemx_alltoallmem_##G(nvshmem_team_t team, void *dest, const void *source,        \
                                                   size_t nelems)                                                  \
    {                                                                                                              \
        return shmemx_alltoallmem_##G(team, dest, source, nelems);                                                 \
    }
NVSHMEMI_COMPAT_MEM_GROUP(warp)
NVSHMEMI_COMPAT_MEM_GROUP(block)
#undef NVSHMEMI_COMPAT_MEM_GROUP

/* ---- launching kernels that call collectives ---- */
static inline int nvshmemx_collective_launch(const void *func, dim3 gridDims, dim3 blockDims, void **args, size_t sharedMem,
                                             nvshmemi_compat_stream_t stream)
{
    return shmemx_collective_launch(func, gridDims, blockDims, args, sharedMem, stream);
}
static inline int nvshmemx_collective_launch_query_gridsize(const void *func, dim3 blockDims, void **args, size_t sharedMem,
                                                            int *gridsize)
{
    return shmemx_collective_launch_query_gridsize(func, blockDims, args, sharedMem, gridsize);
}
#else
GSHMEM_RMA_TYPES(NVSHMEMI_COMPAT_MOVE_HOST)
GSHMEM_REDUCE_PAIRS(NVSHMEMI_COMPAT_REDUCE_HOST)
#endif

#endif
