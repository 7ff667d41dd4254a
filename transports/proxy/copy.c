/* The proxy's copy backend: PEs of this machine that are remote to each other (P2P disabled, or
 * another host by GSHMEM_HOST_ID). P2P maps their heaps here whether or not it serves them
 * (ctx->host_view), so data moves with the copy engine between mapped addresses, and values and
 * atomics are one-thread kernels on the same stream (copy_kernels.cu). One stream per destination
 * PE keeps the requests to a PE in order (a signal after its data) while different PEs overlap. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../route.h"
#include "backend.h"
#include "copy.h"

struct gshmemi_proxy_backend {
    gshmemi_transport_ctx_t *ctx;
    cudaStream_t *stream; /* [n_pes], created on first use */
    char *busy;           /* [n_pes] work posted since the stream was last seen idle */
};

static int copy_open(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_backend_t **out, void *my_blob)
{
    gshmemi_proxy_backend_t *be = calloc(1, sizeof(*be));

    (void)my_blob;
    *out = NULL;
    if (!be) return GSHMEMI_ERR_NOMEM;
    be->ctx = ctx;
    be->stream = calloc((size_t)ctx->n_pes, sizeof(*be->stream));
    be->busy = calloc((size_t)ctx->n_pes, 1);
    if (!be->stream || !be->busy) {
        free(be->stream);
        free(be->busy);
        free(be);
        return GSHMEMI_ERR_NOMEM;
    }
    *out = be;
    if (gshmemi_copy_kernels_load() != cudaSuccess) {
        GSHMEMI_ERROR("proxy", "copy backend: loading its kernels failed: %s", cudaGetErrorString(cudaGetLastError()));
        return GSHMEMI_ERR_CUDA;
    }
    return GSHMEMI_OK;
}

/* Every peer routed here must be mapped (P2P maps each PE of this machine whose GPU ours reaches). */
static int copy_connect(gshmemi_proxy_backend_t *be, const void *blobs, const int *serve)
{
    (void)blobs, (void)serve;
    for (int pe = 0; pe < be->ctx->n_pes; pe++)
        if (be->ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY && !be->ctx->host_view[pe]) {
            GSHMEMI_ERROR("proxy", "copy backend: PE %d's heap is not mapped here", pe);
            return GSHMEMI_ERR_UNSUPPORTED;
        }
    return GSHMEMI_OK;
}

static int copy_register_chunk(gshmemi_proxy_backend_t *be, const gshmemi_heap_chunk_t *chunk)
{
    (void)be, (void)chunk; /* P2P maps every chunk of this machine's PEs as the heaps grow */
    return GSHMEMI_OK;
}

static cudaStream_t stream_of(gshmemi_proxy_backend_t *be, int pe)
{
    int least = 0, greatest = 0;
    /* the highest priority: a request's copy or atomic goes ahead of the application's queued work */
    if (!be->stream[pe] && (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess ||
                            cudaStreamCreateWithPriority(&be->stream[pe], cudaStreamNonBlocking, greatest) != cudaSuccess)) {
        be->stream[pe] = NULL;
        return NULL;
    }
    be->busy[pe] = 1;
    return be->stream[pe];
}

static char *remote_addr(gshmemi_proxy_backend_t *be, int pe, uint64_t off) { return be->ctx->host_view[pe] + off; }

static int check(cudaError_t err, const char *what, int pe)
{
    if (err == cudaSuccess) return GSHMEMI_OK;
    GSHMEMI_ERROR("proxy", "copy backend: %s to PE %d: %s", what, pe, cudaGetErrorString(err));
    return GSHMEMI_ERR_CUDA;
}

static int copy_put(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, const void *src, size_t n)
{
    cudaStream_t s = stream_of(be, pe);
    if (!s) return check(cudaErrorMemoryAllocation, "creating a stream", pe);
    return check(cudaMemcpyAsync(remote_addr(be, pe, dst_off), src, n, cudaMemcpyDefault, s), "put", pe);
}

static int copy_get(gshmemi_proxy_backend_t *be, int pe, void *dst, uint64_t src_off, size_t n)
{
    cudaStream_t s = stream_of(be, pe);
    if (!s) return check(cudaErrorMemoryAllocation, "creating a stream", pe);
    return check(cudaMemcpyAsync(dst, remote_addr(be, pe, src_off), n, cudaMemcpyDefault, s), "get", pe);
}

/* 4- and 8-byte values are stream memory operations: the copy engine's front end writes them
 * after a memory barrier, with no kernel, so a value (a flag, a credit, a signal set) lands even
 * while the GPU's SMs are all busy spinning; other widths take a one-thread kernel. */
static int write_value(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, uint64_t value, size_t width, cudaStream_t s)
{
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)remote_addr(be, pe, dst_off);
    CUresult res = width == 8 ? gshmemi_cu.cuStreamWriteValue64((CUstream)s, addr, value, 0)
                              : gshmemi_cu.cuStreamWriteValue32((CUstream)s, addr, (cuuint32_t)value, 0);
    if (res == CUDA_SUCCESS) return GSHMEMI_OK;
    GSHMEMI_ERROR("proxy", "copy backend: a %zu-byte value to PE %d (offset %#llx): %s", width, pe, (unsigned long long)dst_off,
                  gshmemi_cu_errstr(res));
    return GSHMEMI_ERR_CUDA;
}

static int copy_put_value(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, uint64_t value, size_t width)
{
    cudaStream_t s = stream_of(be, pe);
    if (!s) return check(cudaErrorMemoryAllocation, "creating a stream", pe);
    if (width == 4 || width == 8) return write_value(be, pe, dst_off, value, width, s);
    return check((cudaError_t)gshmemi_copy_store(remote_addr(be, pe, dst_off), value, (int)width, s), "p", pe);
}

static int copy_amo(gshmemi_proxy_backend_t *be, int pe, int op, uint64_t dst_off, uint64_t value, uint64_t cond, size_t width,
                    uint64_t *fetched)
{
    cudaStream_t s = stream_of(be, pe);
    if (width != 4 && width != 8) {
        GSHMEMI_ERROR("proxy", "copy backend: atomic of %zu bytes to PE %d (4 or 8 only)", width, pe);
        return GSHMEMI_ERR_INVALID;
    }
    if (!s) return check(cudaErrorMemoryAllocation, "creating a stream", pe);
    if (op == GSHMEMI_AMO_SET && !fetched) return write_value(be, pe, dst_off, value, width, s); /* a signal set */
    return check((cudaError_t)gshmemi_copy_amo(remote_addr(be, pe, dst_off), op, value, cond, (int)width, fetched, s), "atomic", pe);
}

static int copy_progress(gshmemi_proxy_backend_t *be, int *idle)
{
    *idle = 1;
    for (int pe = 0; pe < be->ctx->n_pes; pe++) {
        if (!be->busy[pe]) continue;
        cudaError_t err = cudaStreamQuery(be->stream[pe]);
        if (err == cudaSuccess) be->busy[pe] = 0;
        else if (err == cudaErrorNotReady) *idle = 0;
        else return check(err, "a copy or atomic", pe);
    }
    return GSHMEMI_OK;
}

/* Bounded by GSHMEM_PEER_TIMEOUT: a copy within one machine never waits for the peer's process,
 * but a wedged GPU must not hang the proxy silently. */
static int copy_flush(gshmemi_proxy_backend_t *be)
{
    struct timespec t0, now;
    int idle = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        GSHMEMI_CHECK(copy_progress(be, &idle));
        if (idle) return GSHMEMI_OK;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > be->ctx->peer_timeout) {
            for (int pe = 0; pe < be->ctx->n_pes; pe++)
                if (be->busy[pe])
                    GSHMEMI_ERROR("proxy", "copy backend: work to PE %d not complete after GSHMEM_PEER_TIMEOUT=%g s", pe,
                                  be->ctx->peer_timeout);
            return GSHMEMI_ERR_TIMEOUT;
        }
    }
}

static void copy_close(gshmemi_proxy_backend_t *be)
{
    if (!be) return;
    for (int pe = 0; pe < be->ctx->n_pes; pe++)
        if (be->stream[pe]) {
            cudaStreamSynchronize(be->stream[pe]);
            cudaStreamDestroy(be->stream[pe]);
        }
    free(be->stream);
    free(be->busy);
    free(be);
}

const gshmemi_proxy_backend_ops_t gshmemi_proxy_backend_copy = {
    .name = "copy",
    .blob_size = 0,
    .open = copy_open,
    .connect = copy_connect,
    .register_chunk = copy_register_chunk,
    .put = copy_put,
    .get = copy_get,
    .put_value = copy_put_value,
    .amo = copy_amo,
    .progress = copy_progress,
    .flush = copy_flush,
    .close = copy_close,
};
