/* Host-initiated operations through the heap mapping, for every transport whose peers' heaps are
 * mapped here (P2P's peers; the proxy's copy-engine peers; the emulated IBGDA NIC's): copies
 * (mapped.c), and one-thread kernels for atomics and stream-ordered waits (mapped_amo.cu). */
#ifndef GSHMEMI_TRANSPORTS_MAPPED_H
#define GSHMEMI_TRANSPORTS_MAPPED_H

#include "../transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where sym of pe's heap is mapped here. */
char *gshmemi_mapped_addr(gshmemi_transport_ctx_t *ctx, int pe, const void *sym);
int gshmemi_mapped_put(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
int gshmemi_mapped_get(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
int gshmemi_mapped_iput(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                        size_t nelems, int pe, cudaStream_t stream);
int gshmemi_mapped_iget(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                        size_t nelems, int pe, cudaStream_t stream);
int gshmemi_mapped_amo(gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value, uint64_t cond, size_t width,
                       int pe, cudaStream_t stream, uint64_t *fetched);
/* A wait on local memory: the same whoever writes it, so every transport's wait_local. */
int gshmemi_mapped_wait_local(gshmemi_transport_ctx_t *ctx, const void *ivar, size_t width, int is_signed, int cmp,
                              uint64_t value, const char *what, cudaStream_t stream);
/* Loads the kernels of mapped_amo.cu where the runtime wants every kernel loaded at init
 * (gshmemi_module_preload); failures are logged there. */
void gshmemi_mapped_kernels_load(void);

/* The host-operation entries of an ops table (transport.h) whose peers are all reached through
 * the mapping. */
#define GSHMEMI_MAPPED_HOST_OPS GSHMEMI_TRANSPORT_HOST_OPS(gshmemi_mapped), .wait_local = gshmemi_mapped_wait_local

#ifdef __cplusplus
}
#endif
#endif
