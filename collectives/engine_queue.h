/* The engine's submission queue, host side: many host threads submit (a short lock: a request's
 * per-collective number and its queue position must be taken together), every CTA of the daemon
 * reads every entry (each has its own head, in pinned memory), and an entry's slot is free once
 * every CTA has read it. Also the bound on requests outstanding (submitted, not complete), which
 * keeps each CTA's task queue from overflowing. Plain C: the CPU tests drive it with a host
 * consumer (gshmemi_engine_sq_pop) that reads the ring as the daemon does. */
#ifndef GSHMEMI_COLL_ENGINE_QUEUE_H
#define GSHMEMI_COLL_ENGINE_QUEUE_H

#include <pthread.h>
#include <stdint.h>

#include "device/coll/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    gshmemi_engine_sqe_t *ring;  /* [slots] (pinned) */
    gshmemi_engine_host_t *host; /* the shared words (pinned) */
    uint32_t slots;              /* a power of two */
    int consumers;               /* CTAs reading the ring */
    uint32_t limit;              /* requests outstanding at most */
    int ncolls;                  /* registered collectives (their done words are counted) */
    uint64_t next;               /* entries pushed (== host->tail, under the lock) */
    uint64_t seq[GSHMEMI_ENGINE_MAX_COLLS]; /* requests submitted per collective */
    pthread_mutex_t lock;
} gshmemi_engine_sq_t;

/* slots: a power of two, 2..65536; consumers 1..GSHMEMI_ENGINE_MAX_CTAS; limit 1..GSHMEMI_ENGINE_TASKS.
 * Zeroes the host words' queue fields. GSHMEMI_ERR_INVALID naming the argument otherwise. */
int gshmemi_engine_sq_init(gshmemi_engine_sq_t *q, gshmemi_engine_sqe_t *ring, uint32_t slots, gshmemi_engine_host_t *host,
                           int consumers, uint32_t limit);
void gshmemi_engine_sq_fini(gshmemi_engine_sq_t *q);
/* Publishes a request of collective `coll` (< ncolls). GSHMEMI_OK with *seq its number; or
 * GSHMEMI_ERR_AGAIN, nothing published, when the ring is full (a CTA has not read the entry a
 * ring ago) or `limit` requests are outstanding; *why then says which (a static string). */
int gshmemi_engine_sq_push(gshmemi_engine_sq_t *q, int coll, void *dest, const void *src, uint64_t count, int root,
                           uint64_t *seq, const char **why);
/* The daemon's reading of the ring, for a host consumer: the next entry for CTA `consumer` into
 * *out and 1, or 0 when it has read every published one. */
int gshmemi_engine_sq_pop(gshmemi_engine_sq_t *q, int consumer, gshmemi_engine_sqe_t *out);
/* Requests submitted and not yet complete (host->done), over every collective. */
uint64_t gshmemi_engine_sq_outstanding(gshmemi_engine_sq_t *q);
/* Registers one more collective; its id, or GSHMEMI_ERR_INVALID when all are taken. */
int gshmemi_engine_sq_add_coll(gshmemi_engine_sq_t *q);

#ifdef __cplusplus
}
#endif
#endif
