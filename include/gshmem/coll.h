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

/* One collective call; kind is GSHMEMI_COLL_*, dtype/op only matter for reductions. */
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

/* The protocol of a collective, the same rule on the host (on-stream launches) and the device:
 * LL up to ll_max bytes per block, then LL128 up to ll128_max and SIMPLE up to simple_max where
 * the team has their buffers, DIRECT above (and always for collect and alltoalls, whose blocks
 * are not one shape). A forced LL128 falls back to LL, a forced SIMPLE to DIRECT, on a team
 * without the buffers. */
typedef struct gshmemi_proto_rule {
    int forced;               /* GSHMEMI_PROTO_*; AUTO: by size */
    size_t ll_max, ll128_max, simple_max;
    int has_ll128, has_simple;
} gshmemi_proto_rule_t;

GSHMEMI_HD_INLINE int gshmemi_pick_proto(int kind, size_t blk, gshmemi_proto_rule_t r)
{
    if (kind == GSHMEMI_COLL_COLLECT || kind == GSHMEMI_COLL_ALLTOALLS) return GSHMEMI_PROTO_DIRECT;
    if (r.forced == GSHMEMI_PROTO_SIMPLE) return r.has_simple ? GSHMEMI_PROTO_SIMPLE : GSHMEMI_PROTO_DIRECT;
    if (r.forced == GSHMEMI_PROTO_LL128) return r.has_ll128 ? GSHMEMI_PROTO_LL128 : GSHMEMI_PROTO_LL;
    if (r.forced != GSHMEMI_PROTO_AUTO) return r.forced;
    if (blk <= r.ll_max) return GSHMEMI_PROTO_LL;
    if (r.has_ll128 && blk <= r.ll128_max) return GSHMEMI_PROTO_LL128;
    if (r.has_simple && blk <= r.simple_max) return GSHMEMI_PROTO_SIMPLE;
    return GSHMEMI_PROTO_DIRECT;
}

/* A device call by one thread group runs as one slice: its LL or LL128 steps follow one another,
 * a round trip each, while DIRECT costs two syncs at any size, so past a step or two DIRECT wins.
 * Measured with one slice (2 PEs on one H200 under MPS; reduce, fcollect, alltoall):
 * - a block's LL is flat to one step (GSHMEMI_LL_SLICE_DATA), then adds about 1.2 us a step;
 *   LL128 is best to 8 KiB for 512 threads, to about 4 KiB for 128; DIRECT from there;
 * - a warp's LL is best to 1 KiB, DIRECT from 2 KiB; LL128 never wins;
 * - one thread's LL is best to 32 B (a line at a time), DIRECT from 64 B (8 KiB: 55 vs 483 us).
 * A forced protocol, and SIMPLE where configured, are kept. `picked` is gshmemi_pick_proto's
 * answer; LL128 needs whole warps. */
#define GSHMEMI_GROUP_THREAD_LL_MAX 32
#define GSHMEMI_GROUP_WARP_LL_MAX 1024
#define GSHMEMI_GROUP_LL128_MAX (8u << 10) /* from 256 threads; 1 KiB a warp below */
GSHMEMI_HD_INLINE int gshmemi_group_proto(int picked, gshmemi_proto_rule_t r, size_t blk, unsigned group)
{
    const size_t ll_max = group == 1 ? GSHMEMI_GROUP_THREAD_LL_MAX
                          : group <= 32 ? GSHMEMI_GROUP_WARP_LL_MAX : GSHMEMI_LL_SLICE_DATA;
    const size_t ll128_max = group >= 256 ? GSHMEMI_GROUP_LL128_MAX : (size_t)group / 32 * 1024;
    const int ll128_ok = r.has_ll128 && group > 32 && group % 32 == 0 && blk <= ll128_max;
    if (r.forced != GSHMEMI_PROTO_AUTO) return picked;
    if (picked == GSHMEMI_PROTO_LL) {
        if (blk <= ll_max) return picked;
        return ll128_ok && blk <= r.ll128_max ? GSHMEMI_PROTO_LL128 : GSHMEMI_PROTO_DIRECT;
    }
    if (picked == GSHMEMI_PROTO_LL128) return ll128_ok ? picked : GSHMEMI_PROTO_DIRECT;
    return picked;
}

/* The rule of a team under the runtime's settings. */
GSHMEMI_HD_INLINE gshmemi_proto_rule_t gshmemi_proto_rule_of(const gshmemi_device_state_t *ds, const gshmemi_team_dev_t *t)
{
    gshmemi_proto_rule_t r;
    r.forced = ds->coll_proto;
    r.ll_max = ds->coll_ll_max;
    r.ll128_max = ds->coll_ll128_max;
    r.simple_max = ds->coll_simple_max;
    r.has_ll128 = t->ll128_slices > 0;
    r.has_simple = t->simple_slices > 0;
    return r;
}

/* Whether DIRECT pushes (stores into the peers' memory) rather than pulls: NVLink carries stores
 * faster than loads when both directions are busy (2x H200: about 365 vs 335 GB/s). fcollect
 * and alltoall push from push_min bytes per block; a reduction of 2 PEs into a dest apart from
 * its source is two-shot by stores from push_reduce_min, in a kernel of its own only
 * (own_kernel: the on-stream launch), so the grid form keeps within its registers. */
GSHMEMI_HD_INLINE int gshmemi_direct_push(const gshmemi_device_state_t *ds, int team_size, const gshmemi_coll_args_t *a,
                                          int own_kernel)
{
    const size_t blk = a->nelems * a->es;
    const char *d = (const char *)a->dest, *s = (const char *)a->src;
    if (a->kind == GSHMEMI_COLL_FCOLLECT || a->kind == GSHMEMI_COLL_ALLTOALL) return blk >= ds->coll_push_min;
    return a->kind == GSHMEMI_COLL_REDUCE && own_kernel && team_size == 2 && blk >= ds->coll_push_reduce_min &&
           (d + blk <= s || s + blk <= d);
}

/* Slices a protocol can use on a team (buffers per slice, or pSync barrier words per slice). */
GSHMEMI_HD_INLINE int gshmemi_proto_slices(const gshmemi_team_dev_t *t, int proto)
{
    switch (proto) {
    case GSHMEMI_PROTO_LL: return t->ll_slices;
    case GSHMEMI_PROTO_LL128: return t->ll128_slices;
    case GSHMEMI_PROTO_SIMPLE: return t->simple_slices;
    default: return GSHMEMI_COLL_SLICES;
    }
}

/* Data-movement collectives of one type: shmem_TYPE_* in C, shmemx_TYPE_*_on_stream everywhere.
 * PFX is the routine prefix, SFX the suffix, TAIL the stream parameter, CALL how they run. */
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
#define GSHMEMI_STREAM_MOVE_CALL gshmemi_coll_stream(__func__, team, &a, GSHMEMI_DT_UINT8, 0, stream)
#define GSHMEMI_STREAM_REDUCE_CALL gshmemi_coll_stream(__func__, team, &a, dtype, opc, stream)
#define GSHMEMI_ON_STREAM_MOVE(name, T) GSHMEMI_COLL_MOVE_FORMS(shmemx_, _on_stream, GSHMEMI_STREAM_TAIL, GSHMEMI_STREAM_MOVE_CALL, name, T)
#define GSHMEMI_ON_STREAM_REDUCE(op, OPC, name, T, DT)                                                                 \
    GSHMEMI_COLL_REDUCE_FORMS(shmemx_, _on_stream, GSHMEMI_STREAM_TAIL, GSHMEMI_STREAM_REDUCE_CALL, op, OPC, name, T, DT)
GSHMEM_RMA_TYPES(GSHMEMI_ON_STREAM_MOVE)
GSHMEM_REDUCE_PAIRS(GSHMEMI_ON_STREAM_REDUCE)
/* (the half and bfloat16 forms are in gshmem/coll.cuh) */

/* Untyped forms (bytes). */
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
#define GSHMEMI_HOST_MOVE_CALL gshmemi_coll_host(__func__, team, &a, GSHMEMI_DT_UINT8, 0)
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
