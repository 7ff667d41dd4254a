/* Teams, barriers and collectives: host declarations, and the typed on-stream forms (inline, for C
 * and CUDA code alike). Included by gshmem.h.
 *
 * Every collective is collective over its team: all members call it with the same team, counts
 * and root. Routines return 0, or -1 with a logged reason (bad team, argument, buffer). On-stream
 * forms enqueue and return; they are capturable in a CUDA graph. */
#ifndef GSHMEM_COLL_H
#define GSHMEM_COLL_H

#include <stddef.h>

#include "types.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* ---- teams (host) ---- */
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size, const shmem_team_config_t *config,
                             long config_mask, shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask,
                        shmem_team_t *yaxis_team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
void shmem_team_destroy(shmem_team_t team);
/* Host sides of the team queries CUDA code gets as __host__ __device__. */
int gshmemi_host_team_my_pe(shmem_team_t team);
int gshmemi_host_team_n_pes(shmem_team_t team);
int gshmemi_host_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);

/* ---- barriers ---- */
void shmemx_barrier_on_stream(shmem_team_t team, struct CUstream_st *stream);
void shmemx_sync_on_stream(shmem_team_t team, struct CUstream_st *stream);
void shmemx_sync_all_on_stream(struct CUstream_st *stream);
/* Host side of barrier/sync (one operation over P2P: see device/team.cuh). */
int gshmemi_host_barrier(shmem_team_t team, const char *routine);

/* The library side of shmemx_collective_launch (gshmem/coll.cuh), whose CUDA calls must run in the
 * caller's module: is the PE initialized, and the error report (logs `reason` for `routine`,
 * returns -1). */
int gshmemi_host_initialized(void);
int gshmemi_host_launch_error(const char *routine, const char *reason);

/* One collective call; kind is GSHMEMI_COLL_*, dtype and op (GSHMEMI_DT_*, GSHMEMI_OP_*) only
 * matter for reductions: the collectives that move data pass GSHMEMI_OP_NONE. */
enum { GSHMEMI_OP_NONE = -1 };
int gshmemi_coll_host(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op);
int gshmemi_coll_stream(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op,
                        struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif

GSHMEMI_HD_INLINE gshmemi_coll_args_t gshmemi_coll_args(int kind, void *dest, const void *src, size_t nelems, size_t es)
{
    gshmemi_coll_args_t a;
    a.kind = kind;
    a.proto = 0;
    a.root = 0;
    a.dest = dest;
    a.src = src;
    a.nelems = nelems;
    a.es = es;
    a.dst = a.sst = 1;
    return a;
}
GSHMEMI_HD_INLINE gshmemi_coll_args_t gshmemi_coll_args_root(void *dest, const void *src, size_t nelems, size_t es, int root)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_BROADCAST, dest, src, nelems, es);
    a.root = root;
    return a;
}
GSHMEMI_HD_INLINE gshmemi_coll_args_t gshmemi_coll_args_strided(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                                                            size_t nelems, size_t es)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_ALLTOALLS, dest, src, nelems, es);
    a.dst = dst;
    a.sst = sst;
    return a;
}

/* The typed collectives of the host side, generated here and only here from the type lists and
 * the operator list of gshmem/types.h (GSHMEM_RMA_TYPES, GSHMEM_REDUCE_PAIRS; in CUDA code also
 * GSHMEM_RMA_EXT_TYPES and GSHMEM_REDUCE_EXT_PAIRS, instantiated in gshmem/coll.cuh). PFX is the
 * routine prefix, SFX the suffix, TAIL the stream parameter, CALL how they run: on-stream forms
 * end in gshmemi_coll_stream (collectives/coll.cu), blocking ones in gshmemi_coll_host.
 *
 * GSHMEMI_COLL_MOVE_FORMS makes, for each TYPE (float, int, ..., uint64, size, ...):
 *   shmem_TYPE_broadcast, shmem_TYPE_fcollect, shmem_TYPE_collect, shmem_TYPE_alltoall,
 *   shmem_TYPE_alltoalls (C; CUDA code gets them from gshmem/coll.cuh) and
 *   shmemx_TYPE_broadcast_on_stream, shmemx_TYPE_fcollect_on_stream,
 *   shmemx_TYPE_collect_on_stream, shmemx_TYPE_alltoall_on_stream,
 *   shmemx_TYPE_alltoalls_on_stream. */
#define GSHMEMI_COLL_MOVE_FORMS(PFX, SFX, TAIL, CALL, name, T)                                                       \
    static inline int PFX##name##_broadcast##SFX(shmem_team_t team, T *dest, const T *source, size_t nelems,           \
                                                 int PE_root TAIL)                                                     \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args_root(dest, source, nelems, sizeof(T), PE_root);                      \
        return CALL;                                                                                                   \
    }                                                                                                                  \
    static inline int PFX##name##_fcollect##SFX(shmem_team_t team, T *dest, const T *source, size_t nelems TAIL)        \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, dest, source, nelems, sizeof(T));             \
        return CALL;                                                                                                   \
    }                                                                                                                  \
    static inline int PFX##name##_collect##SFX(shmem_team_t team, T *dest, const T *source, size_t nelems TAIL)         \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_COLLECT, dest, source, nelems, sizeof(T));              \
        return CALL;                                                                                                   \
    }                                                                                                                  \
    static inline int PFX##name##_alltoall##SFX(shmem_team_t team, T *dest, const T *source, size_t nelems TAIL)        \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_ALLTOALL, dest, source, nelems, sizeof(T));             \
        return CALL;                                                                                                   \
    }                                                                                                                  \
    static inline int PFX##name##_alltoalls##SFX(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,            \
                                                 ptrdiff_t sst, size_t nelems TAIL)                                    \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args_strided(dest, source, dst, sst, nelems, sizeof(T));                  \
        return CALL;                                                                                                   \
    }
/* GSHMEMI_COLL_REDUCE_FORMS makes, for each (TYPE, OP) pair (OP: and, or, xor on the integer
 * types; min, max, sum, prod on all; e.g. float_sum, int_sum, half_sum):
 *   shmem_TYPE_OP_reduce, shmem_TYPE_OP_reducescatter (C) and
 *   shmemx_TYPE_OP_reduce_on_stream, shmemx_TYPE_OP_reducescatter_on_stream
 *   (so shmemx_float_sum_reduce_on_stream and shmem_int_sum_reduce are made here). */
#define GSHMEMI_COLL_REDUCE_FORMS(PFX, SFX, TAIL, CALL, op, OPC, name, T, DT)                                         \
    static inline int PFX##name##op##_reduce##SFX(shmem_team_t team, T *dest, const T *source, size_t nreduce TAIL)    \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_REDUCE, dest, source, nreduce, sizeof(T));              \
        const int dtype = DT, opc = OPC;                                                                               \
        return CALL;                                                                                                   \
    }                                                                                                                  \
    static inline int PFX##name##op##_reducescatter##SFX(shmem_team_t team, T *dest, const T *source,                  \
                                                         size_t nreduce TAIL)                                          \
    {                                                                                                                  \
        gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_REDUCESCATTER, dest, source, nreduce, sizeof(T));       \
        const int dtype = DT, opc = OPC;                                                                               \
        return CALL;                                                                                                   \
    }

#define GSHMEMI_STREAM_TAIL , struct CUstream_st *stream
#define GSHMEMI_STREAM_MOVE_CALL gshmemi_coll_stream(__func__, team, &a, GSHMEMI_DT_UINT8, GSHMEMI_OP_NONE, stream)
#define GSHMEMI_STREAM_REDUCE_CALL gshmemi_coll_stream(__func__, team, &a, dtype, opc, stream)
#define GSHMEMI_ON_STREAM_MOVE(name, T) GSHMEMI_COLL_MOVE_FORMS(shmemx_, _on_stream, GSHMEMI_STREAM_TAIL, GSHMEMI_STREAM_MOVE_CALL, name, T)
#define GSHMEMI_ON_STREAM_REDUCE(op, OPC, name, T, DT)                                                                 \
    GSHMEMI_COLL_REDUCE_FORMS(shmemx_, _on_stream, GSHMEMI_STREAM_TAIL, GSHMEMI_STREAM_REDUCE_CALL, op, OPC, name, T, DT)
GSHMEM_RMA_TYPES(GSHMEMI_ON_STREAM_MOVE)
GSHMEM_REDUCE_PAIRS(GSHMEMI_ON_STREAM_REDUCE)
/* (the half and bfloat16 forms are in gshmem/coll.cuh) */

/* Untyped forms (bytes): shmemx_broadcastmem_on_stream, shmemx_fcollectmem_on_stream,
 * shmemx_collectmem_on_stream, shmemx_alltoallmem_on_stream. */
static inline int shmemx_broadcastmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root,
                                                struct CUstream_st *stream)
{
    gshmemi_coll_args_t a = gshmemi_coll_args_root(dest, source, nelems, 1, PE_root);
    return GSHMEMI_STREAM_MOVE_CALL;
}
static inline int shmemx_fcollectmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                               struct CUstream_st *stream)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, dest, source, nelems, 1);
    return GSHMEMI_STREAM_MOVE_CALL;
}
static inline int shmemx_collectmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                              struct CUstream_st *stream)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_COLLECT, dest, source, nelems, 1);
    return GSHMEMI_STREAM_MOVE_CALL;
}
static inline int shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                               struct CUstream_st *stream)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_ALLTOALL, dest, source, nelems, 1);
    return GSHMEMI_STREAM_MOVE_CALL;
}

#ifndef __CUDACC__
/* ---- C: the blocking host forms (CUDA code gets them as __host__ __device__ in gshmem/device.cuh) ---- */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
void shmem_barrier(shmem_team_t team);
void shmem_sync(shmem_team_t team);
void shmem_sync_all(void);
#define GSHMEMI_HOST_MOVE_CALL gshmemi_coll_host(__func__, team, &a, GSHMEMI_DT_UINT8, GSHMEMI_OP_NONE)
#define GSHMEMI_HOST_REDUCE_CALL gshmemi_coll_host(__func__, team, &a, dtype, opc)
#define GSHMEMI_HOST_MOVE(name, T) GSHMEMI_COLL_MOVE_FORMS(shmem_, , , GSHMEMI_HOST_MOVE_CALL, name, T)
#define GSHMEMI_HOST_REDUCE(op, OPC, name, T, DT) GSHMEMI_COLL_REDUCE_FORMS(shmem_, , , GSHMEMI_HOST_REDUCE_CALL, op, OPC, name, T, DT)
GSHMEM_RMA_TYPES(GSHMEMI_HOST_MOVE)
GSHMEM_REDUCE_PAIRS(GSHMEMI_HOST_REDUCE)
static inline int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    gshmemi_coll_args_t a = gshmemi_coll_args_root(dest, source, nelems, 1, PE_root);
    return GSHMEMI_HOST_MOVE_CALL;
}
static inline int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, dest, source, nelems, 1);
    return GSHMEMI_HOST_MOVE_CALL;
}
static inline int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_COLLECT, dest, source, nelems, 1);
    return GSHMEMI_HOST_MOVE_CALL;
}
static inline int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_ALLTOALL, dest, source, nelems, 1);
    return GSHMEMI_HOST_MOVE_CALL;
}
#endif

#endif
