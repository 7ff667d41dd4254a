/* The preemptive collective engine (docs/engine.md): collectives that cannot deadlock whatever
 * order the PEs call them in. A persistent daemon kernel per PE takes requests from a queue in
 * pinned memory and runs each collective as a sequence of primitives; a wait on the peers that
 * lasts past its threshold preempts the collective (its progress saved in device memory) and the
 * daemon resumes another where it stopped. The daemon exits when idle or when every task is stuck
 * (so a cudaDeviceSynchronize elsewhere completes), and a host thread relaunches it while
 * requests are pending.
 *
 * Every routine returns 0, or a negative SHMEMX_ENGINE_E* status with the reason logged. */
#ifndef GSHMEM_ENGINE_H
#define GSHMEM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;
typedef struct shmemx_engine shmemx_engine_t;
/* A submitted request: (collective id, its request number) packed; test, wait and stream_wait take it. */
typedef uint64_t shmemx_engine_ticket_t;

enum {
    SHMEMX_ENGINE_EINVAL = -1,       /* a bad argument (the log names it) */
    SHMEMX_ENGINE_ENOMEM = -2,
    SHMEMX_ENGINE_ECUDA = -4,        /* a CUDA call failed, or the daemon faulted */
    SHMEMX_ENGINE_ETIMEDOUT = -5,    /* shmemx_engine_wait ran out of time */
    SHMEMX_ENGINE_EUNSUPPORTED = -7, /* e.g. a team member not reachable by load/store */
    SHMEMX_ENGINE_ESTATE = -8,       /* before shmem_init */
    SHMEMX_ENGINE_EAGAIN = -9,       /* the queue is full: submit again after a wait or test */
};

/* Kinds of collective. */
enum { SHMEMX_ENGINE_BARRIER = 0, SHMEMX_ENGINE_ALLREDUCE = 1, SHMEMX_ENGINE_FCOLLECT = 2, SHMEMX_ENGINE_BROADCAST = 3,
       SHMEMX_ENGINE_ALLTOALL = 4 };
/* Element types: allreduce takes float, double, int32, int64 and bfloat16 (as 16-bit storage);
 * the other kinds move bytes of any of them. */
enum { SHMEMX_ENGINE_INT32 = GSHMEMI_DT_INT32, SHMEMX_ENGINE_INT64 = GSHMEMI_DT_INT64, SHMEMX_ENGINE_FLOAT = GSHMEMI_DT_FLOAT,
       SHMEMX_ENGINE_DOUBLE = GSHMEMI_DT_DOUBLE, SHMEMX_ENGINE_BFLOAT16 = GSHMEMI_DT_BFLOAT16 };
/* Reduction operators. */
enum { SHMEMX_ENGINE_SUM = GSHMEMI_OP_SUM, SHMEMX_ENGINE_PROD = GSHMEMI_OP_PROD, SHMEMX_ENGINE_MIN = GSHMEMI_OP_MIN,
       SHMEMX_ENGINE_MAX = GSHMEMI_OP_MAX };

/* The engine's shape; zero fields take the defaults. Every PE passes the same ctas (0 included). */
typedef struct {
    int ctas;             /* CTAs of the daemon, 1..128; default: 32, or fewer where this PE's share of its GPU is less (the least over the PEs); each must be resident */
    int threads;          /* threads a CTA, 32..1024, a multiple of 32 (default 512) */
    double idle_exit_s;   /* the daemon exits after this long with nothing to do (default 0.002) */
    double stuck_exit_s;  /* ... or with every task stuck (default 0.002) */
    unsigned spin_base;   /* polls a wait makes before preemption, before stickiness (default 1024) */
    unsigned queue_slots; /* submission queue entries, a power of two 2..65536 (default 64) */
} shmemx_engine_attr_t;

/* One collective to register. */
typedef struct {
    int kind;          /* SHMEMX_ENGINE_* */
    shmem_team_t team; /* every member P2P-reachable */
    int dtype;         /* SHMEMX_ENGINE_FLOAT ... (element size for every kind but barrier) */
    int op;            /* allreduce: SHMEMX_ENGINE_SUM ... */
    size_t max_count;  /* the largest count a request will pass (checked at submission) */
    int priority;      /* 0..15: a higher one is run first and waited for longer */
} shmemx_engine_coll_t;

typedef struct {
    uint64_t preemptions;  /* waits that gave up their collective, over every CTA */
    uint64_t stuck_exits;  /* CTA exits with every task stuck */
    uint64_t launches;     /* daemon launches */
    uint64_t exits;        /* daemon kernels that ended (idle or stuck) */
} shmemx_engine_stats_t;

typedef void (*shmemx_engine_callback_t)(void *arg, shmemx_engine_ticket_t ticket);

/* Collective over all PEs (it allocates symmetric memory). attr may be NULL. */
int shmemx_engine_create(const shmemx_engine_attr_t *attr, shmemx_engine_t **engine);
/* Collective over desc->team, in the same order on its PEs (per team): gives the collective its
 * own flags, so a preempted collective's are never another's. *id is this PE's handle of it (the
 * handles of one collective may differ between PEs). */
int shmemx_engine_register(shmemx_engine_t *engine, const shmemx_engine_coll_t *desc, int *id);
/* Queues one call of collective `id` (the k-th submission of `id` on each member is one call).
 * dest and source are symmetric and ready (the work producing source has completed); count
 * elements (per block for fcollect and alltoall); root: broadcast's root index in the team.
 * SHMEMX_ENGINE_EAGAIN, nothing queued, when the queue is full. */
int shmemx_engine_submit(shmemx_engine_t *engine, int id, void *dest, const void *source, size_t count, int root,
                         shmemx_engine_ticket_t *ticket);
/* The same, and cb(arg, ticket) runs on the engine's host thread once the request is complete;
 * it may submit but not wait nor stream-wait (that thread also relaunches the daemon). */
int shmemx_engine_submit_cb(shmemx_engine_t *engine, int id, void *dest, const void *source, size_t count, int root,
                            shmemx_engine_callback_t cb, void *arg, shmemx_engine_ticket_t *ticket);
/* *done = 1 when the request is complete (dest holds the result), else 0. */
int shmemx_engine_test(shmemx_engine_t *engine, shmemx_engine_ticket_t ticket, int *done);
/* Waits until the request is complete, at most timeout_s seconds (<= 0: GSHMEM_DEVICE_WAIT_TIMEOUT). */
int shmemx_engine_wait(shmemx_engine_t *engine, shmemx_engine_ticket_t ticket, double timeout_s);
/* Work enqueued on stream after this call starts once the request is complete (a
 * cuStreamWaitValue64 on its completion word). The daemon then stays resident until the request
 * completes (a daemon relaunched behind the wait could share its hardware queue and never start):
 * the call returns once it has taken that hold, at most GSHMEM_DEVICE_WAIT_TIMEOUT later
 * (SHMEMX_ENGINE_ETIMEDOUT, nothing enqueued). */
int shmemx_engine_stream_wait(shmemx_engine_t *engine, shmemx_engine_ticket_t ticket, struct CUstream_st *stream);
int shmemx_engine_stats(shmemx_engine_t *engine, shmemx_engine_stats_t *stats);
/* Waits for every submitted request (bounded as shmemx_engine_wait), stops the daemon and frees
 * the engine; collective over all PEs. */
int shmemx_engine_destroy(shmemx_engine_t *engine);

#ifdef __cplusplus
}
#endif
#endif
