/* gshmem: an OpenSHMEM-style PGAS runtime for NVIDIA GPUs.
 *
 * Host code (C or C++) includes this header and links libgshmem. CUDA code (.cu compiled by nvcc)
 * includes the same header and gets the device API too: header-only inline functions, no -rdc,
 * no device library. Routines that exist on both sides (shmem_putmem, shmem_int_p, shmem_quiet,
 * shmem_barrier_all, ...) are __host__ __device__ in CUDA code and plain library calls in C. */
#ifndef GSHMEM_H
#define GSHMEM_H

#include <stddef.h>
#include <stdint.h>

#include "gshmem/types.h"
/* The family lists (every typed routine, for host and device) and the host declarations of
 * atomics, signals and point-to-point synchronization. */
#include "gshmem/amo.h"
#include "gshmem/rma.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st; /* cudaStream_t without pulling in the CUDA headers */

/* ---- setup and exit ---- */
void shmem_init(void);
void shmem_finalize(void);
void shmem_global_exit(int status);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name); /* name holds SHMEM_MAX_NAME_LEN bytes */
/* shmem_init with a thread level: *provided is SHMEM_THREAD_FUNNELED at most (the host side keeps
 * no locks and the CUDA device is current only in the thread that initialized). 0, or -1. */
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
/* 1 if `pe` can be reached (every PE of the job can), or `addr` (in the symmetric heap) on it. */
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);

/* Unique-id bootstrap, for frameworks that have their own launcher: rank 0 calls
 * shmemx_get_uniqueid, passes the id to every rank, and each calls shmemx_init_attr. */
typedef struct {
    char internal[128];
} shmemx_uniqueid_t;

typedef struct {
    int version;  /* SHMEMX_INIT_ATTR_VERSION */
    int rank;
    int nranks;
    int reserved;
    shmemx_uniqueid_t uid;
} shmemx_init_attr_t;

#define SHMEMX_INIT_ATTR_VERSION 1
enum {
    SHMEMX_INIT_DEFAULT = 0,        /* as GSHMEM_BOOTSTRAP says */
    SHMEMX_INIT_WITH_UNIQUEID = 1,  /* attr->uid, attr->rank, attr->nranks */
    SHMEMX_INIT_WITH_PMIX = 2,
};

int shmemx_get_uniqueid(shmemx_uniqueid_t *uid);
int shmemx_set_attr_uniqueid_args(int rank, int nranks, const shmemx_uniqueid_t *uid, shmemx_init_attr_t *attr);
/* Returns 0 on success, a negative status (with a logged reason) on failure. */
int shmemx_init_attr(unsigned flags, shmemx_init_attr_t *attr);

/* ---- symmetric memory (collective over all PEs) ---- */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void shmem_free(void *ptr);

/* ---- host-only extensions ---- */
/* Stream-ordered forms: enqueue on stream and return; capturable in a CUDA graph. */
void shmemx_barrier_all_on_stream(struct CUstream_st *stream);
void shmemx_quiet_on_stream(struct CUstream_st *stream);
void shmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream);
void shmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream);
/* Typed on-stream forms of every RMA type. */
#define GSHMEMI_DEFINE_TYPED_ON_STREAM(name, T)                                                                   \
    static inline void shmemx_##name##_put_on_stream(T *dest, const T *source, size_t nelems, int pe,             \
                                                     struct CUstream_st *stream)                                  \
    {                                                                                                             \
        shmemx_putmem_on_stream(dest, source, nelems * sizeof(T), pe, stream);                                    \
    }                                                                                                             \
    static inline void shmemx_##name##_get_on_stream(T *dest, const T *source, size_t nelems, int pe,             \
                                                     struct CUstream_st *stream)                                  \
    {                                                                                                             \
        shmemx_getmem_on_stream(dest, source, nelems * sizeof(T), pe, stream);                                    \
    }
GSHMEM_RMA_TYPES(GSHMEMI_DEFINE_TYPED_ON_STREAM)
#undef GSHMEMI_DEFINE_TYPED_ON_STREAM

/* Internal entry points of the host side of routines that CUDA code sees as __host__ __device__. */
int gshmemi_host_my_pe(void);
int gshmemi_host_n_pes(void);
void *gshmemi_host_ptr(const void *dest, int pe);
void gshmemi_host_putmem(void *dest, const void *source, size_t nelems, int pe, int blocking);
void gshmemi_host_getmem(void *dest, const void *source, size_t nelems, int pe, int blocking);
void gshmemi_host_iput(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem_size, int pe);
void gshmemi_host_iget(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem_size, int pe);
void gshmemi_host_quiet(void);
void gshmemi_host_barrier_all(void);

#ifndef __CUDACC__
/* ---- routines CUDA code gets as __host__ __device__ inline (gshmem/device.cuh): their C
 * prototypes, from the family lists of gshmem/rma.h and gshmem/amo.h, which name every routine ---- */
#define GSHMEMI_HOSTDEV GSHMEMI_EMIT_DECL
#define GSHMEMI_DEVONLY GSHMEMI_EMIT_NONE
GSHMEMI_CORE_FAMILY
GSHMEMI_RMA_FAMILY
GSHMEMI_AMO_FAMILY
GSHMEMI_SIGNAL_FAMILY
#undef GSHMEMI_HOSTDEV
#undef GSHMEMI_DEVONLY
#endif

#ifdef __cplusplus
}
#endif

/* Teams, barriers and collectives. */
#include "gshmem/coll.h"
/* The preemptive collective engine: collectives PEs may call in any order. */
#include "gshmem/engine.h"

#ifdef __CUDACC__
#include "gshmem/device.cuh"
#endif

#endif
