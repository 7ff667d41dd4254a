/* P2P over NVLink/PCIe: peers of this host whose GPU ours can access (or the same GPU). Their heaps
 * are mapped into our reservation (each growth's chunks travel as fds, p2p_ipc.c), so host RMA is
 * a copy-engine memcpy between mapped addresses and the device API a load/store. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../common/mapped.h"
#include "p2p.h"

/* One runtime per process, so one P2P instance. */
static struct {
    int sock;          /* datagram socket receiving peers' handles, or -1 */
    uint64_t *keys;    /* [local_size] each local PE's socket key (its blob) */
    int *reach;        /* [local_size] 1 where this PE maps that local PE's heap (itself excluded) */
    size_t *mapped;    /* [local_size] bytes of that local PE's heap mapped here */
    uint32_t grow_seq;
} p2p = {-1, NULL, NULL, NULL, 0};

/* Whether this PE's GPU can load and store pe's memory (same GPU, or peer access between the
 * two); why says which, or why not. */
int gshmemi_p2p_gpu_access(gshmemi_transport_ctx_t *ctx, int pe, int *ok, const char **why)
{
    const gshmemi_peer_info_t *peer = &ctx->peers[pe];
    int ndev = 0;

    *ok = 0;
    *why = "another machine";
    if (peer->phys_hash != ctx->peers[ctx->my_pe].phys_hash) return GSHMEMI_OK;
    GSHMEMI_CUDACHECK(cudaGetDeviceCount(&ndev));
    for (int d = 0; d < ndev; d++) {
        CUdevice dev;
        CUuuid uuid;
        GSHMEMI_CUCHECK(cuDeviceGet(&dev, d));
        GSHMEMI_CUCHECK(cuDeviceGetUuid(&uuid, dev));
        if (memcmp(&uuid, &peer->uuid, sizeof(uuid)) != 0) continue;
        if (dev == ctx->cudev) {
            *ok = 1;
            *why = "same GPU";
        } else {
            GSHMEMI_CUCHECK(cuDeviceCanAccessPeer(ok, ctx->cudev, dev));
            *why = *ok ? "GPU peer access" : "no peer access between the two GPUs";
        }
        return GSHMEMI_OK;
    }
    *why = "its GPU is not visible to this process (CUDA_VISIBLE_DEVICES)";
    return GSHMEMI_OK;
}

static int p2p_finalize(gshmemi_transport_ctx_t *ctx);

/* The blob is this PE's socket key: random, so that jobs sharing a host never meet. */
static int p2p_init(gshmemi_transport_ctx_t *ctx, void *my_blob)
{
    uint64_t key = 0;

    p2p.keys = calloc((size_t)ctx->local_size, sizeof(*p2p.keys));
    p2p.reach = calloc((size_t)ctx->local_size, sizeof(*p2p.reach));
    p2p.mapped = calloc((size_t)ctx->local_size, sizeof(*p2p.mapped));
    if (!p2p.keys || !p2p.reach || !p2p.mapped) {
        p2p_finalize(ctx);
        return GSHMEMI_ERR_NOMEM;
    }
    if (getrandom(&key, sizeof(key), 0) != sizeof(key)) key = (uint64_t)getpid() * 2654435761u;
    memcpy(my_blob, &key, sizeof(key));
    /* Bound before the blob allgather returns anywhere: no peer sends before the socket exists. */
    if (ctx->local_size > 1) GSHMEMI_CHECK(gshmemi_ipc_open(key, ctx->my_local, &p2p.sock));
    return GSHMEMI_OK;
}

/* Maps the heap of every PE of this machine whose GPU ours can access, served by P2P or not: the
 * proxy's copy engine reaches the others through host_view. */
static int p2p_connect(gshmemi_transport_ctx_t *ctx, const void *blobs)
{
    for (int pe = 0; pe < ctx->n_pes; pe++) {
        const gshmemi_peer_info_t *peer = &ctx->peers[pe];
        const char *why;
        int ok = 0;
        if (peer->phys_hash != ctx->peers[ctx->my_pe].phys_hash) continue;
        memcpy(&p2p.keys[peer->local_index], (const char *)blobs + (size_t)pe * sizeof(uint64_t), sizeof(uint64_t));
        GSHMEMI_CHECK(gshmemi_p2p_gpu_access(ctx, pe, &ok, &why));
        if (!ok) continue;
        ctx->host_view[pe] = gshmemi_heap_slot(ctx->heap, peer->local_index);
        if (ctx->pe_transport[pe] == &gshmemi_transport_p2p) ctx->peer_base[pe] = ctx->host_view[pe];
        if (pe != ctx->my_pe) p2p.reach[peer->local_index] = 1;
    }
    return GSHMEMI_OK;
}

static int map_peer_chunk(gshmemi_transport_ctx_t *ctx, int local, size_t offset, size_t size, int fd)
{
    CUmemGenericAllocationHandle handle;
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)(gshmemi_heap_slot(ctx->heap, local) + offset);
    CUresult res;

    res = gshmemi_cu.cuMemImportFromShareableHandle(&handle, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "importing local PE %d's heap chunk failed: %s", local, gshmemi_cu_errstr(res));
        return GSHMEMI_ERR_CUDA;
    }
    res = gshmemi_cu.cuMemMap(addr, size, 0, handle, 0);
    gshmemi_cu.cuMemRelease(handle);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "mapping local PE %d's heap chunk [%zu, +%zu) failed: %s", local, offset, size, gshmemi_cu_errstr(res));
        return GSHMEMI_ERR_CUDA;
    }
    p2p.mapped[local] = offset + size;
    GSHMEMI_TRACE("heap", "local PE %d's chunk [%zu, +%zu) imported and mapped", local, offset, size);
    GSHMEMI_CHECK(gshmemi_heap_set_access(ctx->heap, addr, size));
    GSHMEMI_TRACE("heap", "local PE %d's chunk accessible here", local);
    return GSHMEMI_OK;
}

/* Every PE of this machine sends its chunk's fd to every other; each maps those it reaches and closes
 * the rest. Collective over the PEs of this machine. */
static int p2p_register_chunk(gshmemi_transport_ctx_t *ctx, const gshmemi_heap_chunk_t *chunk)
{
    const int n = ctx->local_size, me = ctx->my_local;
    const double tmo = ctx->peer_timeout;
    int fd = -1, rc;

    if (n == 1) return GSHMEMI_OK;
    p2p.grow_seq++;
    rc = gshmemi_heap_export_fd(chunk, &fd);
    for (int l = 0; l < n && rc == GSHMEMI_OK; l++)
        if (l != me)
            rc = gshmemi_ipc_send_fd(p2p.sock, p2p.keys[l], l, p2p.grow_seq, me, chunk->offset, chunk->size, fd, tmo);
    if (fd >= 0) close(fd);
    GSHMEMI_TRACE("heap", "chunk [%zu, +%zu) sent to the %d other local PEs", chunk->offset, chunk->size, n - 1);
    for (int got = 0; got < n - 1 && rc == GSHMEMI_OK; got++) {
        int from, pfd;
        uint64_t poff, psize;
        rc = gshmemi_ipc_recv_fd(p2p.sock, p2p.grow_seq, tmo, &from, &poff, &psize, &pfd);
        if (rc != GSHMEMI_OK) break;
        if (from < 0 || from >= n || from == me || poff != chunk->offset || psize != chunk->size) {
            GSHMEMI_ERROR("heap", "local PE %d sent chunk [%llu, +%llu), expected [%zu, +%zu): heaps out of step (every shmem_malloc/shmem_free must be called by all PEs in the same order)",
                          from, (unsigned long long)poff, (unsigned long long)psize, chunk->offset, chunk->size);
            rc = GSHMEMI_ERR_REMOTE;
        } else if (p2p.reach[from]) {
            rc = map_peer_chunk(ctx, from, chunk->offset, chunk->size, pfd);
        }
        close(pfd);
    }
    return rc;
}

static int p2p_finalize(gshmemi_transport_ctx_t *ctx)
{
    int rc = GSHMEMI_OK;
    for (int l = 0; p2p.mapped && l < ctx->local_size; l++) {
        if (!p2p.mapped[l]) continue;
        CUresult res = gshmemi_cu.cuMemUnmap((CUdeviceptr)(uintptr_t)gshmemi_heap_slot(ctx->heap, l), p2p.mapped[l]);
        if (res != CUDA_SUCCESS) {
            GSHMEMI_WARN("heap", "cuMemUnmap of local PE %d's heap failed: %s", l, gshmemi_cu_errstr(res));
            rc = GSHMEMI_ERR_CUDA;
        }
    }
    gshmemi_ipc_close(p2p.sock);
    free(p2p.keys);
    free(p2p.reach);
    free(p2p.mapped);
    memset(&p2p, 0, sizeof(p2p));
    p2p.sock = -1;
    return rc;
}

const gshmemi_transport_t gshmemi_transport_p2p = {
    GSHMEMI_TRANSPORT_LIFE_CYCLE(p2p),
    .blob_size = sizeof(uint64_t),
    .progress = NULL,
    GSHMEMI_MAPPED_HOST_OPS,
};
