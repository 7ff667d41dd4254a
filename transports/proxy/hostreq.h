/* Host-initiated RMA and atomics to a PE behind a proxy backend that only the proxy thread may
 * drive (verbs: its QPs and CQ are not thread-safe, and the proxy thread polls them all the
 * time). The calling thread turns the operation into a request in the backend's terms (a heap
 * offset on the peer, a local address), queues it here and waits for it; the proxy thread takes
 * it between two device requests, runs it against the backend to completion (post, then flush)
 * and hands back its status and the fetched value. Every host request is complete at its target
 * when the call returns.
 *
 * The queue is a small mutex-protected array of records owned by the queue, not by the caller:
 * a caller that gives up (timeout) leaves nothing the proxy thread could write to after it
 * returned. No CUDA here: the unit test drives this file against the verbs backend on a fake
 * libibverbs. */
#ifndef GSHMEMI_PROXY_HOSTREQ_H
#define GSHMEMI_PROXY_HOSTREQ_H

#include <stddef.h>
#include <stdint.h>

#include "../common/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GSHMEMI_HOSTREQ_PUT = 1, GSHMEMI_HOSTREQ_GET, GSHMEMI_HOSTREQ_AMO };

/* Requests that may wait in the queue at once (one per waiting application thread). */
#define GSHMEMI_HOSTQ_SLOTS 64

/* One host-initiated operation, in the backend's terms. */
typedef struct {
    int kind;           /* GSHMEMI_HOSTREQ_* */
    int pe;
    const char *what;   /* "put", "get", "iput", "iget", "atomic": named in every report */
    uint64_t off;       /* the peer's side: heap offset of the first element (AMO: of the word) */
    void *local;        /* this PE's side: the first element (unused by an AMO) */
    size_t rpitch;      /* bytes from one element to the next on the peer's side */
    size_t lpitch;      /* ... and on this side */
    size_t elem;        /* bytes per element; an AMO's width (4 or 8) */
    size_t nelems;      /* elements (1 for the contiguous forms and AMOs) */
    int amo_op;         /* GSHMEMI_AMO_* (gshmem/amo.h) */
    uint64_t value, cond;
} gshmemi_hostreq_t;

typedef struct gshmemi_hostq gshmemi_hostq_t;

int gshmemi_hostq_create(gshmemi_hostq_t **q);
/* After the consumer stopped; a caller still waiting would read freed memory. */
void gshmemi_hostq_destroy(gshmemi_hostq_t *q);

/* Records in use (a request queued, running, abandoned by its caller, or done and not read yet):
 * for tests and reports. */
int gshmemi_hostq_busy(gshmemi_hostq_t *q);

/* ---- the consumer (the proxy thread) */

/* 1 when a request waits to be taken: one relaxed load, for the proxy's loop. */
int gshmemi_hostq_pending(gshmemi_hostq_t *q);
/* Takes the oldest waiting request, if any, runs it (gshmemi_hostreq_run) and hands its status
 * and fetched value to its caller. Returns 1 if a request was run, 0 if none waited. A request
 * that fails fails alone: the backend's state after it (a QP in error, say) is the backend's. */
int gshmemi_hostq_serve(gshmemi_hostq_t *q, const gshmemi_proxy_backend_ops_t *ops, gshmemi_proxy_backend_t *be);
/* No request will be taken any more (the proxy thread stops): every waiting request and every
 * later call fails at once with GSHMEMI_ERR_REMOTE, the report naming why (static text). */
void gshmemi_hostq_stop(gshmemi_hostq_t *q, const char *why);

/* Runs r against the backend: posts every element, then flush(), even after a failed post (so
 * nothing of r is in flight once it returns, unless flush itself gave up). fetched: an AMO's old
 * value (width bytes, zero-extended). landing: where the backend stores it; it must outlive a
 * flush that timed out (the queue's own word). beat is raised as elements are posted (a caller
 * watching it sees progress). Errors are logged naming the operation, the PE and the offset
 * after the backend's own report of the cause. */
int gshmemi_hostreq_run(const gshmemi_proxy_backend_ops_t *ops, gshmemi_proxy_backend_t *be, const gshmemi_hostreq_t *r,
                        uint64_t *landing, uint64_t *fetched, uint64_t *beat);

/* ---- the callers (any application thread) */

/* Queues r and waits until the proxy thread has run it; its status, and *fetched (may be NULL)
 * for an AMO. Each wait is bounded by twice timeout_s (GSHMEM_PEER_TIMEOUT; the backend's own
 * waits are bounded by it once, so the backend reports first when the peer is the cause): for a
 * free record, for the proxy thread to take the request, and for it to complete it while it makes
 * no progress. A timeout is reported naming the operation, the PE and what was waited for. */
int gshmemi_hostq_call(gshmemi_hostq_t *q, const gshmemi_hostreq_t *r, double timeout_s, uint64_t *fetched);

/* The transport's host RMA: nelems elements of elem bytes, dest and src advanced by dpitch and
 * spitch bytes; the symmetric side (dest of a put, src of a get) a heap address of this PE, which
 * names the same offset of pe's heap. Complete at return. what names it in reports. */
int gshmemi_hostreq_rma(gshmemi_hostq_t *q, const gshmemi_transport_ctx_t *ctx, const char *what, int is_put, void *dest,
                        size_t dpitch, const void *src, size_t spitch, size_t elem, size_t nelems, int pe);
/* The transport's host atomic on the width-byte word at the symmetric dest on pe; complete at
 * return, *fetched (may be NULL) the old value. */
int gshmemi_hostreq_amo(gshmemi_hostq_t *q, const gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value,
                        uint64_t cond, size_t width, int pe, uint64_t *fetched);

#ifdef __cplusplus
}
#endif
#endif
