/* Inside the P2P transport: the handle exchange between same-host PEs (p2p_ipc.c) and the GPU
 * access test the runtime asks at init. Its host-initiated operations go through the heap
 * mapping (common/mapped.h), which the other transports share. */
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

#ifdef __cplusplus
}
#endif
#endif
