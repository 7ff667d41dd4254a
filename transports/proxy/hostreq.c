/* Host-initiated operations through the proxy thread (hostreq.h says why and how).
 *
 * A record goes FREE -> QUEUED (a caller filled it) -> RUNNING (the proxy thread took it) -> DONE
 * (status and value written) -> FREE (the caller read them). A caller that times out withdraws a
 * QUEUED record (FREE: nothing of it ran) or marks a RUNNING one ABANDONED, which the proxy thread
 * frees when it finishes. Every transition is made under the lock; the caller's polls of DONE and
 * the proxy's check for work are single atomic loads. */
#include "hostreq.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../runtime/base/clock.h"
#include "../../runtime/base/log.h"

#define SUB "proxy"

enum { SLOT_FREE = 0, SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE, SLOT_ABANDONED };

typedef struct {
    gshmemi_hostreq_t req;
    uint64_t order;  /* when it was queued: the oldest is taken first */
    int state;       /* SLOT_*; DONE is stored with release, polled with acquire */
    int status;      /* the request's status once DONE */
    int ran;         /* it ran (0: failed because the proxy stopped) */
    uint64_t value;  /* an AMO's old value once DONE */
    uint64_t beat;   /* raised by the proxy thread as it posts the request's elements */
} slot_t;

struct gshmemi_hostq {
    pthread_mutex_t lock;
    int queued;           /* records QUEUED; changed under the lock, read without it */
    uint64_t next_order;
    const char *stopped;  /* why the proxy thread stopped; NULL while it serves */
    uint64_t landing;     /* the backend's AMO landing word (the proxy thread's alone) */
    slot_t slot[GSHMEMI_HOSTQ_SLOTS];
};

int gshmemi_hostq_create(gshmemi_hostq_t **out)
{
    gshmemi_hostq_t *q = calloc(1, sizeof(*q));
    *out = NULL;
    if (!q) {
        GSHMEMI_ERROR(SUB, "out of host memory for the queue of host-initiated requests");
        return GSHMEMI_ERR_NOMEM;
    }
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        GSHMEMI_ERROR(SUB, "pthread_mutex_init failed for the queue of host-initiated requests");
        free(q);
        return GSHMEMI_ERR_SYSTEM;
    }
    *out = q;
    return GSHMEMI_OK;
}

void gshmemi_hostq_destroy(gshmemi_hostq_t *q)
{
    if (!q) return;
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static const char *amo_name(int op)
{
    static const char *names[] = {"fetch", "set", "swap", "compare-swap", "fetch-add", "add",
                                  "fetch-and", "and", "fetch-or", "or", "fetch-xor", "xor"};
    return op >= 0 && op < (int)(sizeof(names) / sizeof(names[0])) ? names[op] : "unknown atomic";
}

/* Every store of a state is made under the lock; the release lets a caller that polls it
 * without the lock read what was written before. */
static void set_state(slot_t *s, int state) { __atomic_store_n(&s->state, state, __ATOMIC_RELEASE); }

/* ---- running a request (the proxy thread) */

static void raise_beat(uint64_t *beat)
{
    if (beat) __atomic_fetch_add(beat, 1, __ATOMIC_RELAXED);
}

int gshmemi_hostreq_run(const gshmemi_proxy_backend_ops_t *ops, gshmemi_proxy_backend_t *be, const gshmemi_hostreq_t *r,
                        uint64_t *landing, uint64_t *fetched, uint64_t *beat)
{
    int rc = GSHMEMI_OK, frc;
    const int put = r->kind == GSHMEMI_HOSTREQ_PUT;

    switch (r->kind) {
    case GSHMEMI_HOSTREQ_AMO:
        *landing = 0;
        rc = ops->amo(be, r->pe, r->amo_op, r->off, r->value, r->cond, r->elem, landing);
        break;
    case GSHMEMI_HOSTREQ_PUT:
    case GSHMEMI_HOSTREQ_GET:
        if (r->nelems == 1 || (r->rpitch == r->elem && r->lpitch == r->elem)) { /* one contiguous range */
            const size_t n = r->elem * r->nelems;
            rc = put ? ops->put(be, r->pe, r->off, r->local, n) : ops->get(be, r->pe, r->local, r->off, n);
            raise_beat(beat);
            break;
        }
        /* strided: one operation per element (the backends move contiguous ranges) */
        for (size_t i = 0; i < r->nelems && rc == GSHMEMI_OK; i++) {
            const uint64_t off = r->off + i * r->rpitch;
            char *local = (char *)r->local + i * r->lpitch;
            rc = put ? ops->put(be, r->pe, off, local, r->elem) : ops->get(be, r->pe, local, off, r->elem);
            raise_beat(beat);
        }
        break;
    default:
        GSHMEMI_ERROR(SUB, "host-initiated request to PE %d: unknown kind %d", r->pe, r->kind);
        return GSHMEMI_ERR_INVALID;
    }
    /* even after a failed post: what was posted completes before the caller is answered */
    frc = ops->flush(be);
    if (rc == GSHMEMI_OK) rc = frc;
    if (rc != GSHMEMI_OK) {
        if (r->kind == GSHMEMI_HOSTREQ_AMO)
            GSHMEMI_ERROR(SUB, "host-initiated atomic %s (%zu bytes) on PE %d (heap offset %llu) failed in the %s backend",
                          amo_name(r->amo_op), r->elem, r->pe, (unsigned long long)r->off, ops->name);
        else if (r->nelems == 1)
            GSHMEMI_ERROR(SUB, "host-initiated %s of %zu bytes %s PE %d (heap offset %llu) failed in the %s backend", r->what,
                          r->elem, put ? "to" : "from", r->pe, (unsigned long long)r->off, ops->name);
        else
            GSHMEMI_ERROR(SUB, "host-initiated %s of %zu elements of %zu bytes %s PE %d (heap offset %llu, stride %zu bytes) failed in the %s backend",
                          r->what, r->nelems, r->elem, put ? "to" : "from", r->pe, (unsigned long long)r->off, r->rpitch,
                          ops->name);
        return rc;
    }
    if (r->kind == GSHMEMI_HOSTREQ_AMO && fetched) *fetched = r->elem == 4 ? *landing & 0xffffffffull : *landing;
    return GSHMEMI_OK;
}

int gshmemi_hostq_busy(gshmemi_hostq_t *q)
{
    int n = 0;
    pthread_mutex_lock(&q->lock);
    for (int i = 0; i < GSHMEMI_HOSTQ_SLOTS; i++) n += q->slot[i].state != SLOT_FREE;
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* ---- the consumer */

int gshmemi_hostq_pending(gshmemi_hostq_t *q) { return __atomic_load_n(&q->queued, __ATOMIC_RELAXED) > 0; }

int gshmemi_hostq_serve(gshmemi_hostq_t *q, const gshmemi_proxy_backend_ops_t *ops, gshmemi_proxy_backend_t *be)
{
    gshmemi_hostreq_t r;
    slot_t *s = NULL;
    uint64_t value = 0;
    int rc;

    if (!gshmemi_hostq_pending(q)) return 0;
    pthread_mutex_lock(&q->lock);
    for (int i = 0; i < GSHMEMI_HOSTQ_SLOTS; i++)
        if (q->slot[i].state == SLOT_QUEUED && (!s || q->slot[i].order < s->order)) s = &q->slot[i];
    if (s) {
        set_state(s, SLOT_RUNNING);
        r = s->req;
        __atomic_store_n(&q->queued, q->queued - 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&q->lock);
    if (!s) return 0;

    GSHMEMI_TRACE(SUB, "host-initiated %s to PE %d: heap offset %#llx, %zu x %zu bytes", r.what, r.pe, (unsigned long long)r.off,
                  r.nelems, r.elem);
    rc = gshmemi_hostreq_run(ops, be, &r, &q->landing, &value, &s->beat);

    pthread_mutex_lock(&q->lock);
    if (s->state == SLOT_ABANDONED) { /* its caller gave up and said so */
        set_state(s, SLOT_FREE);
    } else {
        s->status = rc;
        s->value = value;
        s->ran = 1;
        set_state(s, SLOT_DONE);
    }
    pthread_mutex_unlock(&q->lock);
    return 1;
}

void gshmemi_hostq_stop(gshmemi_hostq_t *q, const char *why)
{
    if (!q) return;
    pthread_mutex_lock(&q->lock);
    if (!q->stopped) q->stopped = why;
    for (int i = 0; i < GSHMEMI_HOSTQ_SLOTS; i++) {
        slot_t *s = &q->slot[i];
        if (s->state != SLOT_QUEUED) continue;
        s->status = GSHMEMI_ERR_REMOTE;
        s->ran = 0;
        __atomic_store_n(&q->queued, q->queued - 1, __ATOMIC_RELAXED);
        set_state(s, SLOT_DONE);
    }
    pthread_mutex_unlock(&q->lock);
}

/* ---- the callers */

/* One poll that found nothing: spin a little, then yield the core (the proxy thread may share
 * it), then sleep 20 us a poll once the wait has lasted a while (a timeout runs seconds). */
static void backoff(unsigned *polls)
{
    if (++*polls < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (*polls < 4096) {
        sched_yield();
    } else {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static int report_stopped(gshmemi_hostq_t *q, const gshmemi_hostreq_t *r)
{
    GSHMEMI_ERROR(SUB, "host-initiated %s to PE %d: not run, the proxy thread has stopped (%s)", r->what, r->pe,
                  q->stopped ? q->stopped : "for a reason logged above");
    return GSHMEMI_ERR_REMOTE;
}

int gshmemi_hostq_call(gshmemi_hostq_t *q, const gshmemi_hostreq_t *r, double timeout_s, uint64_t *fetched)
{
    const double bound = 2 * timeout_s;
    double deadline = gshmemi_now_s() + bound;
    unsigned polls = 0;
    uint64_t beat = 0;
    slot_t *s = NULL;
    int running = 0, st;

    for (;;) { /* a free record */
        pthread_mutex_lock(&q->lock);
        if (q->stopped) {
            pthread_mutex_unlock(&q->lock);
            return report_stopped(q, r);
        }
        for (int i = 0; i < GSHMEMI_HOSTQ_SLOTS && !s; i++) {
            if (q->slot[i].state != SLOT_FREE) continue;
            s = &q->slot[i];
            s->req = *r;
            s->order = q->next_order++;
            s->status = GSHMEMI_OK;
            s->ran = 0;
            s->value = 0;
            __atomic_store_n(&s->beat, 0, __ATOMIC_RELAXED);
            set_state(s, SLOT_QUEUED);
            __atomic_store_n(&q->queued, q->queued + 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&q->lock);
        if (s) break;
        if (gshmemi_now_s() > deadline) {
            GSHMEMI_ERROR(SUB, "host-initiated %s to PE %d: all %d records of the host request queue stayed in use for %g s (2 x GSHMEM_PEER_TIMEOUT)",
                          r->what, r->pe, GSHMEMI_HOSTQ_SLOTS, bound);
            return GSHMEMI_ERR_TIMEOUT;
        }
        backoff(&polls);
    }

    deadline = gshmemi_now_s() + bound;
    polls = 0;
    for (;;) {
        st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st == SLOT_DONE) {
            const int rc = s->status, ran = s->ran;
            if (fetched && ran && rc == GSHMEMI_OK) *fetched = s->value;
            pthread_mutex_lock(&q->lock);
            set_state(s, SLOT_FREE);
            pthread_mutex_unlock(&q->lock);
            /* a request that ran and failed was reported by the proxy thread, with its cause */
            return ran ? rc : report_stopped(q, r);
        }
        /* the bound restarts when the proxy takes the request, and whenever it posts more of it */
        if (st == SLOT_RUNNING) {
            const uint64_t b = __atomic_load_n(&s->beat, __ATOMIC_RELAXED);
            if (!running || b != beat) deadline = gshmemi_now_s() + bound;
            running = 1;
            beat = b;
        }
        if (gshmemi_now_s() <= deadline) {
            backoff(&polls);
            continue;
        }
        pthread_mutex_lock(&q->lock);
        st = s->state;
        if (st == SLOT_QUEUED) {
            set_state(s, SLOT_FREE);
            __atomic_store_n(&q->queued, q->queued - 1, __ATOMIC_RELAXED);
        } else if (st == SLOT_RUNNING) {
            set_state(s, SLOT_ABANDONED);
        }
        pthread_mutex_unlock(&q->lock);
        if (st == SLOT_QUEUED) {
            GSHMEMI_ERROR(SUB, "host-initiated %s to PE %d: the proxy thread did not take the request in %g s (2 x GSHMEM_PEER_TIMEOUT); it is stuck or busy; the request was withdrawn, none of it ran",
                          r->what, r->pe, bound);
            return GSHMEMI_ERR_TIMEOUT;
        }
        if (st == SLOT_RUNNING) {
            GSHMEMI_ERROR(SUB, "host-initiated %s to PE %d: the proxy thread took the request but made no progress on it for %g s (2 x GSHMEM_PEER_TIMEOUT); what it did at PE %d is unknown",
                          r->what, r->pe, bound, r->pe);
            return GSHMEMI_ERR_TIMEOUT;
        }
        /* DONE meanwhile: read it above */
    }
}

/* ---- the transport's forms */

/* The heap offset of [sym, +span), which must lie in this PE's heap (the same offset names the
 * same bytes of every PE's heap). */
static int sym_offset(const gshmemi_transport_ctx_t *ctx, const char *what, int pe, const void *sym, size_t span,
                      uint64_t *off)
{
    const char *base = ctx->heap ? ctx->heap->my_base : NULL;
    const size_t region = ctx->heap ? ctx->heap->region : 0;
    const char *p = (const char *)sym;

    if (!base || p < base || (size_t)(p - base) > region || span > region - (size_t)(p - base)) {
        GSHMEMI_ERROR(SUB, "host-initiated %s with PE %d: [%p, +%zu) is not inside this PE's symmetric heap [%p, %p)", what,
                      pe, sym, span, (const void *)base, (const void *)(base ? base + region : NULL));
        return GSHMEMI_ERR_INVALID;
    }
    *off = (uint64_t)(p - base);
    return GSHMEMI_OK;
}

static int check_pe(const gshmemi_transport_ctx_t *ctx, const char *what, int pe)
{
    if (pe >= 0 && pe < ctx->n_pes) return GSHMEMI_OK;
    GSHMEMI_ERROR(SUB, "host-initiated %s: PE %d is out of range [0, %d)", what, pe, ctx->n_pes);
    return GSHMEMI_ERR_INVALID;
}

int gshmemi_hostreq_rma(gshmemi_hostq_t *q, const gshmemi_transport_ctx_t *ctx, const char *what, int is_put, void *dest,
                        size_t dpitch, const void *src, size_t spitch, size_t elem, size_t nelems, int pe)
{
    gshmemi_hostreq_t r;
    const void *sym = is_put ? dest : src;
    const size_t rpitch = is_put ? dpitch : spitch;

    if (elem == 0 || nelems == 0) return GSHMEMI_OK;
    GSHMEMI_CHECK(check_pe(ctx, what, pe));
    if (nelems > 1 && rpitch > ((size_t)-1 - elem) / (nelems - 1)) {
        GSHMEMI_ERROR(SUB, "host-initiated %s with PE %d: %zu elements %zu bytes apart overflow", what, pe, nelems, rpitch);
        return GSHMEMI_ERR_INVALID;
    }
    memset(&r, 0, sizeof(r));
    GSHMEMI_CHECK(sym_offset(ctx, what, pe, sym, (nelems - 1) * rpitch + elem, &r.off));
    r.kind = is_put ? GSHMEMI_HOSTREQ_PUT : GSHMEMI_HOSTREQ_GET;
    r.pe = pe;
    r.what = what;
    r.local = is_put ? (void *)(uintptr_t)src : dest;
    r.rpitch = rpitch;
    r.lpitch = is_put ? spitch : dpitch;
    r.elem = elem;
    r.nelems = nelems;
    return gshmemi_hostq_call(q, &r, ctx->peer_timeout, NULL);
}

int gshmemi_hostreq_amo(gshmemi_hostq_t *q, const gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value,
                        uint64_t cond, size_t width, int pe, uint64_t *fetched)
{
    gshmemi_hostreq_t r;

    GSHMEMI_CHECK(check_pe(ctx, "atomic", pe));
    memset(&r, 0, sizeof(r));
    GSHMEMI_CHECK(sym_offset(ctx, "atomic", pe, dest, width, &r.off));
    r.kind = GSHMEMI_HOSTREQ_AMO;
    r.pe = pe;
    r.what = "atomic";
    r.elem = width;
    r.nelems = 1;
    r.amo_op = op;
    r.value = value;
    r.cond = cond;
    return gshmemi_hostq_call(q, &r, ctx->peer_timeout, fetched);
}
