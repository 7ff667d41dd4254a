/* Host-initiated copies through the heap mapping: every PE of this machine has its heap mapped
 * here (ctx->peer_base where P2P serves it, ctx->host_view otherwise), so host RMA to it is a
 * copy-engine memcpy between mapped addresses. The atomics and waits are in mapped_amo.cu. */
#include "mapped.h"

/* Where sym of pe's heap is mapped here: P2P's own peers (peer_base), or any other PE of this
 * machine (host_view). */
char *gshmemi_mapped_addr(gshmemi_transport_ctx_t *ctx, int pe, const void *sym)
{
    char *base = ctx->peer_base[pe] ? ctx->peer_base[pe] : ctx->host_view[pe];
    return base + ((const char *)sym - ctx->heap->my_base);
}

int gshmemi_mapped_put(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream)
{
    char *remote = gshmemi_mapped_addr(ctx, pe, dest);
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(remote, src, n, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

int gshmemi_mapped_get(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream)
{
    const char *remote = gshmemi_mapped_addr(ctx, pe, src);
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(dest, remote, n, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

/* The copy engine does strided copies as 2D copies: one element wide, nelems rows. */
int gshmemi_mapped_iput(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                    size_t nelems, int pe, cudaStream_t stream)
{
    char *remote = gshmemi_mapped_addr(ctx, pe, dest);
    GSHMEMI_CUDACHECK(cudaMemcpy2DAsync(remote, dpitch, src, spitch, elem_size, nelems, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}

int gshmemi_mapped_iget(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                    size_t nelems, int pe, cudaStream_t stream)
{
    const char *remote = gshmemi_mapped_addr(ctx, pe, src);
    GSHMEMI_CUDACHECK(cudaMemcpy2DAsync(dest, dpitch, remote, spitch, elem_size, nelems, cudaMemcpyDefault, stream));
    return GSHMEMI_OK;
}
