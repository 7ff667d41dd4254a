/* P2P over NVLink/PCIe: peers of this host whose GPU ours can access (or the same GPU). Their heaps
 * are mapped into our reservation, so host RMA is a copy-engine memcpy between mapped addresses. */
#include <string.h>

#include "../transport.h"

static int p2p_can_reach(gshmemi_state_t *st, int pe, int *reachable)
{
    const gshmemi_peer_info_t *peer = &st->peers[pe];
    int ndev = 0;

    *reachable = 0;
    if (peer->host_hash != st->peers[st->my_pe].host_hash) return GSHMEMI_OK;
    GSHMEMI_CUDACHECK(cudaGetDeviceCount(&ndev));
    for (int d = 0; d < ndev; d++) {
        CUdevice dev;
        CUuuid uuid;
        GSHMEMI_CUCHECK(cuDeviceGet(&dev, d));
        GSHMEMI_CUCHECK(cuDeviceGetUuid(&uuid, dev));
        if (memcmp(&uuid, &peer->uuid, sizeof(uuid)) != 0) continue;
        if (dev == st->cudev) *reachable = 1;
        else GSHMEMI_CUCHECK(cuDeviceCanAccessPeer(reachable, st->cudev, dev));
        return GSHMEMI_OK;
    }
    /* The peer's GPU is not visible here (CUDA_VISIBLE_DEVICES): not reachable by P2P. */
    return GSHMEMI_OK;
}

static int p2p_put(gshmemi_state_t *st, void *dest, const void *src, size_t n, int pe, cudaStream_t stream)
{
    char *remote = st->peer_base[pe] + ((char *)dest - st->heap.my_base);
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(remote, src, n, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

static int p2p_get(gshmemi_state_t *st, void *dest, const void *src, size_t n, int pe, cudaStream_t stream)
{
    const char *remote = st->peer_base[pe] + ((const char *)src - st->heap.my_base);
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(dest, remote, n, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

/* The copy engine does strided copies as 2D copies: one element wide, nelems rows. */
static int p2p_iput(gshmemi_state_t *st, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                    size_t nelems, int pe, cudaStream_t stream)
{
    char *remote = st->peer_base[pe] + ((char *)dest - st->heap.my_base);
    GSHMEMI_CUDACHECK(cudaMemcpy2DAsync(remote, dpitch, src, spitch, elem_size, nelems, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

static int p2p_iget(gshmemi_state_t *st, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                    size_t nelems, int pe, cudaStream_t stream)
{
    const char *remote = st->peer_base[pe] + ((const char *)src - st->heap.my_base);
    GSHMEMI_CUDACHECK(cudaMemcpy2DAsync(dest, dpitch, remote, spitch, elem_size, nelems, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

/* p2p_amo.cu: one-thread kernels on the stream. */
int gshmemi_p2p_amo(gshmemi_state_t *st, int op, void *dest, uint64_t value, uint64_t cond, size_t width, int pe,
                    cudaStream_t stream, uint64_t *fetched);
int gshmemi_p2p_wait_local(gshmemi_state_t *st, const void *ivar, size_t width, int is_signed, int cmp, uint64_t value,
                           const char *what, cudaStream_t stream);

const gshmemi_transport_t gshmemi_transport_p2p = {
    .name = "p2p",
    .can_reach = p2p_can_reach,
    .put = p2p_put,
    .get = p2p_get,
    .iput = p2p_iput,
    .iget = p2p_iget,
    .amo = gshmemi_p2p_amo,
    .wait_local = gshmemi_p2p_wait_local,
};
