/* Inside the P2P transport: the handle exchange between same-host PEs (p2p_ipc.c) and the
 * host-initiated atomics and waits (p2p_amo.cu). */
#ifndef GSHMEMI_P2P_H
#define GSHMEMI_P2P_H

#include "../transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One datagram socket per PE, named by its key (the PE's P2P blob) and local index. */
int gshmemi_ipc_open(uint64_t key, int my_local, int *sock);
int gshmemi_ipc_send_fd(int sock, uint64_t to_key, int to_local, uint32_t seq, int from_local, uint64_t offset,
                        uint64_t size, int fd, double timeout_s);
/* Receives one handle of growth seq; reports the sender and range. */
int gshmemi_ipc_recv_fd(int sock, uint32_t seq, double timeout_s, int *from_local, uint64_t *offset, uint64_t *size,
                        int *fd);
void gshmemi_ipc_close(int sock);

/* Whether this PE's GPU can load and store pe's memory (pe on this machine, same GPU or peer
 * access); why says which, or why not. */
int gshmemi_p2p_gpu_access(gshmemi_transport_ctx_t *ctx, int pe, int *ok, const char **why);
/* Host-initiated copies and atomics through the mapping, for P2P's peers and for the proxy's
 * copy-engine peers (the ops of the transport table). */
char *gshmemi_p2p_addr(gshmemi_transport_ctx_t *ctx, int pe, const void *sym);
int gshmemi_p2p_put(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
int gshmemi_p2p_get(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
int gshmemi_p2p_iput(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                     size_t nelems, int pe, cudaStream_t stream);
int gshmemi_p2p_iget(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                     size_t nelems, int pe, cudaStream_t stream);
/* Loads the host-launched kernels of p2p_amo.cu where the runtime wants every kernel loaded at
 * init (gshmemi_module_preload); failures are logged there. */
void gshmemi_p2p_kernels_load(void);
int gshmemi_p2p_amo(gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value, uint64_t cond, size_t width,
                    int pe, cudaStream_t stream, uint64_t *fetched);
int gshmemi_p2p_wait_local(gshmemi_transport_ctx_t *ctx, const void *ivar, size_t width, int is_signed, int cmp,
                           uint64_t value, const char *what, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
