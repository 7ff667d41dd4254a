/* A transport: how this PE reaches another. Each fills one ops table; runtime/init.c picks one
 * per peer at init (the rule: transports/route.c) and never branches on the transport again. A transport sees the runtime only
 * through gshmemi_transport_ctx_t (never runtime/state.h). */
#ifndef GSHMEMI_TRANSPORT_H
#define GSHMEMI_TRANSPORT_H

#include "../heap/heap.h"
#include "../runtime/base/bootstrap.h"
#include "../runtime/base/cudawrap.h"
#include "gshmem/amo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What each PE tells the others at init. */
typedef struct {
    uint64_t host_hash;  /* equal for PEs of one host as gshmem groups them (GSHMEM_HOST_ID, else the host) */
    uint64_t phys_hash;  /* equal for PEs of one physical machine (host name and boot id) */
    int32_t pid;
    int32_t local_index; /* index among the PEs of its physical machine, in rank order */
    CUuuid uuid;         /* its GPU */
    uint64_t gpu_mem;    /* bytes of its GPU's memory (the symmetric heap's size where none is set) */
    uint64_t gpu_free;   /* bytes of its GPU's memory free at init (what the initial heap may take) */
} gshmemi_peer_info_t;

struct gshmemi_transport;

/* What the runtime hands its transports: owned by the runtime, filled before the first op. */
typedef struct gshmemi_transport_ctx {
    int my_pe, n_pes;
    int my_local, local_size;  /* among the PEs of this physical machine (the heap reservation's slots) */
    const gshmemi_peer_info_t *peers;              /* [n_pes] */
    const struct gshmemi_transport *const *pe_transport; /* [n_pes] the transport serving each PE */
    const int *route;        /* [n_pes] GSHMEMI_ROUTE_* (transports/route.h) of each PE */
    int job_uses_verbs;      /* some PE routes some peer through verbs: every PE sets it up (collective) */
    int job_uses_ibgda_hw;   /* the routes depend on IBGDA on a ConnectX (every PE probed): every PE
                              * takes part in the IBGDA transport's exchanges (collective) */
    gshmemi_proxy_fifo_t *dev_proxy; /* the device state's proxy FIFO, filled by the proxy transport */
    const gshmemi_ibgda_qp_t **dev_ibgda; /* the device state's IBGDA QP array, filled by the IBGDA transport */
    uint32_t *dev_ibgda_nqp;  /* the device state's QPs per peer of that array */
    char **peer_base;        /* [n_pes] where each PE's heap is mapped here for loads and stores: set
                              * at connect by P2P for the peers it serves, NULL for the others */
    char **host_view;        /* [n_pes] where each PE of this physical machine has its heap mapped
                              * here (P2P maps them whether or not it serves them), for the copy
                              * engine; NULL for PEs of other machines */
    gshmemi_bootstrap_t *bs;
    gshmemi_heap_t *heap;
    CUdevice cudev;
    int device;              /* the CUDA runtime's number of cudev */
    double peer_timeout;     /* seconds: bound of every wait on a peer (GSHMEM_PEER_TIMEOUT) */
    uint64_t wait_timeout_ns; /* bound of a stream-ordered wait (GSHMEM_DEVICE_WAIT_TIMEOUT); 0 = never */
} gshmemi_transport_ctx_t;

/* The ops table. Life cycle, in the order the runtime calls it:
 *   init -> [allgather of the blobs] -> connect -> register_chunk (per heap
 *   growth) ... progress ... -> finalize.
 * init, connect and finalize run on every PE for every transport of the build (in table order),
 * whether or not it serves a peer here, so that the blob allgather is collective. */
typedef struct gshmemi_transport {
    const char *name;
    size_t blob_size; /* bytes each PE publishes at init (0: no exchange) */
    /* Opens what the transport needs here and writes this PE's blob_size-byte blob. */
    int (*init)(gshmemi_transport_ctx_t *ctx, void *my_blob);
    /* blobs: [n_pes][blob_size], every PE's blob; connects to the peers it serves. */
    int (*connect)(gshmemi_transport_ctx_t *ctx, const void *blobs);
    /* A new chunk of this PE's heap (called from the heap's growth subscription; collective over the
     * PEs of this host, in the same order on each). */
    int (*register_chunk)(gshmemi_transport_ctx_t *ctx, const gshmemi_heap_chunk_t *chunk);
    /* Host side: everything this PE's device code posted through the transport is complete at
     * its target (shmem_quiet on the host, shmem_finalize); NULL when loads and stores need no
     * more than the stream's completion (P2P). */
    int (*quiet)(gshmemi_transport_ctx_t *ctx);
    /* Host-side progress of work in flight; NULL when the transport needs none (P2P). */
    int (*progress)(gshmemi_transport_ctx_t *ctx);
    /* Releases everything init/connect/register_chunk made; safe after a failed or partial init. */
    int (*finalize)(gshmemi_transport_ctx_t *ctx);
    /* Host-initiated RMA enqueued on stream; dest/src: one symmetric and one local address. */
    int (*put)(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
    int (*get)(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
    /* Strided forms: nelems elements of elem_size bytes, dest/src advanced by the pitches (bytes). */
    int (*iput)(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch,
                size_t elem_size, size_t nelems, int pe, cudaStream_t stream);
    int (*iget)(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch,
                size_t elem_size, size_t nelems, int pe, cudaStream_t stream);
    /* Host-initiated atomic op (GSHMEMI_AMO_*, gshmem/amo.h) on the width-byte (4 or 8) word at the
     * symmetric dest on pe, ordered after earlier work on stream and a release for it (the signal of
     * the stream-ordered put-with-signal). With fetched != NULL it also waits for completion and
     * stores the old value there (the host AMOs); with NULL it only enqueues (capturable). */
    int (*amo)(gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value, uint64_t cond, size_t width, int pe,
               cudaStream_t stream, uint64_t *fetched);
    /* Later work on stream waits until the local word ivar (2, 4 or 8 bytes, signed or not)
     * compares cmp to value (bits zero-extended); what names the routine in a timeout report. */
    int (*wait_local)(gshmemi_transport_ctx_t *ctx, const void *ivar, size_t width, int is_signed, int cmp,
                      uint64_t value, const char *what, cudaStream_t stream);
} gshmemi_transport_t;

/* A transport's table names its own functions after it (tp_init, tp_connect, ...): the life cycle
 * and the host-initiated operations each in one line of the table. */
#define GSHMEMI_TRANSPORT_LIFE_CYCLE(tp)                                                          \
    .name = #tp, .init = tp##_init, .connect = tp##_connect, .register_chunk = tp##_register_chunk, \
    .finalize = tp##_finalize
#define GSHMEMI_TRANSPORT_HOST_OPS(tp) .put = tp##_put, .get = tp##_get, .iput = tp##_iput, .iget = tp##_iget, .amo = tp##_amo

extern const gshmemi_transport_t gshmemi_transport_p2p;
extern const gshmemi_transport_t gshmemi_transport_proxy;

#ifdef __cplusplus
}
#endif
#endif
