/* The engine's submission queue, host side (engine_queue.h). The lock is held for a few stores:
 * producers are host threads submitting collectives, not a data path. */
#include "engine_queue.h"

#include <string.h>

#include "../runtime/base/log.h"

int gshmemi_engine_sq_init(gshmemi_engine_sq_t *q, gshmemi_engine_sqe_t *ring, uint32_t slots, gshmemi_engine_host_t *host,
                           int consumers, uint32_t limit)
{
    if (slots < 2 || slots > 65536 || (slots & (slots - 1))) {
        GSHMEMI_ERROR("engine", "queue slots %u: must be a power of two, 2..65536", slots);
        return GSHMEMI_ERR_INVALID;
    }
    if (consumers < 1 || consumers > GSHMEMI_ENGINE_MAX_CTAS) {
        GSHMEMI_ERROR("engine", "ctas %d: must be 1..%d", consumers, GSHMEMI_ENGINE_MAX_CTAS);
        return GSHMEMI_ERR_INVALID;
    }
    if (limit < 1 || limit > GSHMEMI_ENGINE_TASKS) {
        GSHMEMI_ERROR("engine", "outstanding limit %u: must be 1..%d", limit, GSHMEMI_ENGINE_TASKS);
        return GSHMEMI_ERR_INVALID;
    }
    memset(q, 0, sizeof(*q));
    q->ring = ring, q->host = host, q->slots = slots, q->consumers = consumers, q->limit = limit;
    host->tail = 0;
    for (int c = 0; c < GSHMEMI_ENGINE_MAX_CTAS; c++) host->head[c] = 0;
    for (int c = 0; c < GSHMEMI_ENGINE_MAX_COLLS; c++) host->done[c] = 0;
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        GSHMEMI_ERROR("engine", "pthread_mutex_init of the submission queue failed");
        return GSHMEMI_ERR_SYSTEM;
    }
    return GSHMEMI_OK;
}

void gshmemi_engine_sq_fini(gshmemi_engine_sq_t *q) { pthread_mutex_destroy(&q->lock); }

int gshmemi_engine_sq_add_coll(gshmemi_engine_sq_t *q)
{
    int id;
    pthread_mutex_lock(&q->lock);
    id = q->ncolls < GSHMEMI_ENGINE_MAX_COLLS ? q->ncolls++ : GSHMEMI_ERR_INVALID;
    pthread_mutex_unlock(&q->lock);
    return id;
}

static uint64_t outstanding_locked(gshmemi_engine_sq_t *q)
{
    uint64_t n = 0;
    for (int c = 0; c < q->ncolls; c++) n += q->seq[c] - __atomic_load_n(&q->host->done[c], __ATOMIC_ACQUIRE);
    return n;
}

uint64_t gshmemi_engine_sq_outstanding(gshmemi_engine_sq_t *q)
{
    pthread_mutex_lock(&q->lock);
    uint64_t n = outstanding_locked(q);
    pthread_mutex_unlock(&q->lock);
    return n;
}

int gshmemi_engine_sq_push(gshmemi_engine_sq_t *q, int coll, void *dest, const void *src, uint64_t count, int root,
                           uint64_t *seq, const char **why)
{
    int rc = GSHMEMI_OK;
    pthread_mutex_lock(&q->lock);
    uint64_t oldest = q->next;
    for (int c = 0; c < q->consumers; c++) {
        uint64_t h = __atomic_load_n(&q->host->head[c], __ATOMIC_ACQUIRE);
        if (h < oldest) oldest = h;
    }
    if (q->next - oldest >= q->slots) {
        *why = "the submission queue is full (a CTA of the daemon has not read its oldest entry)";
        rc = GSHMEMI_ERR_AGAIN;
    } else if (outstanding_locked(q) >= q->limit) {
        *why = "the most requests the engine holds are outstanding";
        rc = GSHMEMI_ERR_AGAIN;
    } else {
        gshmemi_engine_sqe_t *e = &q->ring[q->next & (q->slots - 1)];
        e->seq = ++q->seq[coll];
        e->dest = dest, e->src = src, e->count = count, e->coll = coll, e->root = root, e->index = q->next;
        *seq = e->seq;
        q->next++;
        /* the entry before the tail that covers it (the daemon reads the tail with an acquire) */
        __atomic_store_n(&q->host->tail, q->next, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

int gshmemi_engine_sq_pop(gshmemi_engine_sq_t *q, int consumer, gshmemi_engine_sqe_t *out)
{
    uint64_t h = __atomic_load_n(&q->host->head[consumer], __ATOMIC_RELAXED);
    if (h >= __atomic_load_n(&q->host->tail, __ATOMIC_ACQUIRE)) return 0;
    *out = q->ring[h & (q->slots - 1)];
    /* the copy before the head that frees the slot */
    __atomic_store_n(&q->host->head[consumer], h + 1, __ATOMIC_RELEASE);
    return 1;
}
