/* What the host proxy asks of a backend: the thing that moves bytes to a remote PE once the
 * proxy thread has taken a request off a PE's FIFO (device/proxy_fifo.h). Two backends:
 * copy (common/copy.c: the copy engine, for PEs of this physical host that are remote to each
 * other) and verbs (proxy/verbs.c: an ibverbs RC QP per peer, for other hosts). The proxy picks
 * one per peer at init; the emulated IBGDA NIC moves its data with the copy backend, which is why
 * this interface and that backend are shared (common/) rather than the proxy's own.
 *
 * Every data call posts and returns; work to one destination PE is executed in the order it was
 * posted (a signal posted after a put lands after the put's data), and flush() waits for all of
 * it. Symmetric addresses travel as offsets from the start of a PE's heap; local addresses are
 * device (or pinned host) addresses of this process. */
#ifndef GSHMEMI_PROXY_BACKEND_H
#define GSHMEMI_PROXY_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gshmemi_proxy_backend gshmemi_proxy_backend_t; /* a backend's private state */

typedef struct gshmemi_proxy_backend_ops {
    const char *name;  /* "copy", "verbs" */
    size_t blob_size;  /* bytes each PE publishes at init (allgathered over the bootstrap) */
    /* Opens the backend and writes this PE's blob. Returns GSHMEMI_ERR_UNSUPPORTED, with the
     * reason logged at info level only, when this host lacks what the backend needs (no RDMA
     * device, no libibverbs): the caller then decides whether that is an error (forced) or a
     * fallback (auto). Any other failure is an error, logged. */
    int (*open)(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_backend_t **be, void *my_blob);
    /* blobs: [n_pes][blob_size]. serve[pe] = 1 for each peer this backend must reach. Collective. */
    int (*connect)(gshmemi_proxy_backend_t *be, const void *blobs, const int *serve);
    /* Makes the calling thread (the proxy's) ready for the data calls; called once by it before
     * them. NULL when nothing is needed. */
    int (*attach)(gshmemi_proxy_backend_t *be);
    /* A new chunk of this PE's heap. Collective over every PE (the heap grows in shmem_malloc,
     * which is), so a backend may allgather keys here over ctx->bs. */
    int (*register_chunk)(gshmemi_proxy_backend_t *be, const gshmemi_heap_chunk_t *chunk);
    /* n bytes from local src to offset dst_off of pe's heap. */
    int (*put)(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, const void *src, size_t n);
    /* n bytes from offset src_off of pe's heap to local dst. */
    int (*get)(gshmemi_proxy_backend_t *be, int pe, void *dst, uint64_t src_off, size_t n);
    /* value (its low width bytes, width 1, 2, 4 or 8) stored at offset dst_off of pe's heap. */
    int (*put_value)(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, uint64_t value, size_t width);
    /* Atomic op (GSHMEMI_AMO_*, gshmem/amo.h) on the width-byte (4 or 8) word at dst_off of pe's
     * heap, after every earlier put to pe. Atomic with respect to the other atomics of the same
     * backend on that word; the copy backend's (GPU atomics at the target) also with respect to the
     * target GPU's own, the verbs backend's (NIC read-modify-writes) not.
     * fetched: a host address (pinned) where the old value is stored before flush() returns, or
     * NULL. */
    int (*amo)(gshmemi_proxy_backend_t *be, int pe, int op, uint64_t dst_off, uint64_t value, uint64_t cond,
               size_t width, uint64_t *fetched);
    /* Later calls to a PE take effect after the earlier ones to it (shmem_fence); NULL when the
     * backend keeps that order anyway. */
    int (*fence)(gshmemi_proxy_backend_t *be);
    /* Makes progress on posted work without waiting; *idle = 1 when nothing is in flight. */
    int (*progress)(gshmemi_proxy_backend_t *be, int *idle);
    /* Waits (bounded by ctx->peer_timeout) until every call posted so far is complete at its
     * target. An error names the operation, the peer and the cause (logged). */
    int (*flush)(gshmemi_proxy_backend_t *be);
    /* Releases everything open/connect/register_chunk made; safe after a partial open. */
    void (*close)(gshmemi_proxy_backend_t *be);
} gshmemi_proxy_backend_ops_t;

/* The members every backend fills from its own functions, named after it (be_open, ...). */
#define GSHMEMI_PROXY_BACKEND_COMMON(be)                                                          \
    .name = #be, .open = be##_open, .connect = be##_connect, .register_chunk = be##_register_chunk, \
    .put = be##_put, .get = be##_get, .put_value = be##_put_value, .amo = be##_amo,               \
    .progress = be##_progress, .flush = be##_flush, .close = be##_close

extern const gshmemi_proxy_backend_ops_t gshmemi_proxy_backend_copy;
extern const gshmemi_proxy_backend_ops_t gshmemi_proxy_backend_verbs;

/* The copy backend's CUDA context (its own under MPS, else the application's) made current on
 * this thread until leave: for a user of the backend that makes CUDA objects of its own beside
 * it (the emulated IBGDA NIC's stream). */
int gshmemi_copy_backend_enter(gshmemi_proxy_backend_t *be);
void gshmemi_copy_backend_leave(gshmemi_proxy_backend_t *be);

#ifdef __cplusplus
}
#endif
#endif
