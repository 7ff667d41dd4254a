/* VA reservation, physical chunks and peer mappings of the symmetric heap. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static int set_access(const gshmemi_heap_t *heap, CUdeviceptr addr, size_t size)
{
    CUmemAccessDesc desc;
    memset(&desc, 0, sizeof(desc));
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = (int)heap->cfg.device;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    GSHMEMI_CUCHECK(cuMemSetAccess(addr, size, &desc, 1));
    return GSHMEMI_OK;
}

char *gshmemi_heap_local_base(const gshmemi_heap_t *heap, int local)
{
    if (local < 0 || local >= heap->cfg.local_size || !heap->reachable[local]) return NULL;
    return (char *)(uintptr_t)heap->reserve + (size_t)local * heap->region;
}

int gshmemi_heap_init(gshmemi_heap_t *heap, const gshmemi_heap_config_t *cfg)
{
    CUmemAllocationProp prop;
    int rc;

    memset(heap, 0, sizeof(*heap));
    heap->cfg = *cfg;
    heap->sock = -1;
    heap->reachable = calloc((size_t)cfg->local_size, sizeof(int));
    if (!heap->reachable) return GSHMEMI_ERR_NOMEM;
    memcpy(heap->reachable, cfg->reachable, (size_t)cfg->local_size * sizeof(int));
    heap->reachable[cfg->my_local] = 1;

    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)cfg->device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    GSHMEMI_CUCHECK(cuMemGetAllocationGranularity(&heap->granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    /* GSHMEM_SYMMETRIC_SIZE's limit in the env table (1 B..1 PiB): rounding up cannot overflow */
    assert(cfg->heap_size > 0 && cfg->heap_size <= SIZE_MAX / 2);
    heap->region = round_up(cfg->heap_size, heap->granularity);
    heap->reserve_size = heap->region * (size_t)cfg->local_size;
    {
        CUresult res = gshmemi_cu.cuMemAddressReserve(&heap->reserve, heap->reserve_size, heap->granularity, 0, 0);
        if (res != CUDA_SUCCESS) {
            GSHMEMI_ERROR("heap", "cannot reserve %zu bytes of GPU virtual address space for %d PEs x %zu bytes (GSHMEM_SYMMETRIC_SIZE): %s",
                          heap->reserve_size, cfg->local_size, heap->region, gshmemi_cu_errstr(res));
            return GSHMEMI_ERR_CUDA;
        }
    }
    heap->my_base = (char *)(uintptr_t)heap->reserve + (size_t)cfg->my_local * heap->region;
    rc = gshmemi_alloc_create(heap->region, GSHMEMI_HEAP_MIN_ALIGN, &heap->alloc);
    if (rc != GSHMEMI_OK) return rc;
    if (cfg->local_size > 1) GSHMEMI_CHECK(gshmemi_ipc_open(cfg->job_key, cfg->my_local, &heap->sock));
    GSHMEMI_INFO("heap", "reserved %zu bytes at %p: %d PEs x %zu bytes, granularity %zu", heap->reserve_size,
                 (void *)(uintptr_t)heap->reserve, cfg->local_size, heap->region, heap->granularity);
    return GSHMEMI_OK;
}

/* Creates this PE's chunk for [offset, offset+size), maps it here and returns its export fd. */
static int create_own_chunk(gshmemi_heap_t *heap, size_t offset, size_t size, int *fd)
{
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle handle;
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)(heap->my_base + offset);
    CUresult res;

    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)heap->cfg.device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    res = gshmemi_cu.cuMemCreate(&handle, size, &prop, 0);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "cuMemCreate of %zu bytes for the symmetric heap failed: %s (GPU memory exhausted? GSHMEM_SYMMETRIC_SIZE)",
                      size, gshmemi_cu_errstr(res));
        return GSHMEMI_ERR_NOMEM;
    }
    res = gshmemi_cu.cuMemMap(addr, size, 0, handle, 0);
    if (res == CUDA_SUCCESS && fd)
        res = gshmemi_cu.cuMemExportToShareableHandle(fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    /* The mapping keeps the memory alive; the handle is not needed any more. */
    gshmemi_cu.cuMemRelease(handle);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "mapping/exporting a %zu-byte heap chunk failed: %s", size, gshmemi_cu_errstr(res));
        return GSHMEMI_ERR_CUDA;
    }
    return set_access(heap, addr, size);
}

static int map_peer_chunk(gshmemi_heap_t *heap, int local, size_t offset, size_t size, int fd)
{
    CUmemGenericAllocationHandle handle;
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)((char *)(uintptr_t)heap->reserve + (size_t)local * heap->region + offset);
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
    return set_access(heap, addr, size);
}

int gshmemi_heap_ensure_backed(gshmemi_heap_t *heap, size_t end)
{
    size_t offset = heap->backed, size;
    int fd = -1, rc;
    const int n = heap->cfg.local_size, me = heap->cfg.my_local;
    const double tmo = heap->cfg.peer_timeout;

    if (end <= heap->backed) return GSHMEMI_OK;
    size = round_up(end - offset, heap->granularity);
    if (size < heap->cfg.growth_min) size = round_up(heap->cfg.growth_min, heap->granularity);
    if (offset + size > heap->region) size = heap->region - offset;
    heap->grow_seq++;

    rc = create_own_chunk(heap, offset, size, n > 1 ? &fd : NULL);
    if (rc != GSHMEMI_OK) return rc;
    /* Every peer sends its fd to every other; each maps those it can reach and closes the rest. */
    for (int l = 0; l < n && rc == GSHMEMI_OK; l++)
        if (l != me) rc = gshmemi_ipc_send_fd(heap->sock, heap->cfg.job_key, l, heap->grow_seq, me, offset, size, fd, tmo);
    if (fd >= 0) close(fd);
    for (int got = 0; got < n - 1 && rc == GSHMEMI_OK; got++) {
        int from, pfd;
        uint64_t poff, psize;
        rc = gshmemi_ipc_recv_fd(heap->sock, heap->grow_seq, tmo, &from, &poff, &psize, &pfd);
        if (rc != GSHMEMI_OK) break;
        if (from < 0 || from >= n || from == me || poff != offset || psize != size) {
            GSHMEMI_ERROR("heap", "local PE %d sent chunk [%llu, +%llu), expected [%zu, +%zu): heaps out of step (every shmem_malloc/shmem_free must be called by all PEs in the same order)",
                          from, (unsigned long long)poff, (unsigned long long)psize, offset, size);
            rc = GSHMEMI_ERR_REMOTE;
        } else if (heap->reachable[from]) {
            rc = map_peer_chunk(heap, from, offset, size, pfd);
        }
        close(pfd);
    }
    if (rc != GSHMEMI_OK) return rc;
    heap->backed = offset + size;
    GSHMEMI_INFO("heap", "heap backed to %zu bytes (growth %u)", heap->backed, heap->grow_seq);
    if (heap->cfg.on_grow) GSHMEMI_CHECK(heap->cfg.on_grow(heap->cfg.on_grow_arg, heap->my_base + offset, size));
    return heap->backed >= end ? GSHMEMI_OK : GSHMEMI_ERR_NOMEM;
}

int gshmemi_heap_fini(gshmemi_heap_t *heap)
{
    int rc = GSHMEMI_OK;
    if (heap->reserve) {
        for (int l = 0; l < heap->cfg.local_size; l++) {
            if (!heap->reachable[l] || heap->backed == 0) continue;
            CUresult res = gshmemi_cu.cuMemUnmap(heap->reserve + (size_t)l * heap->region, heap->backed);
            if (res != CUDA_SUCCESS) {
                GSHMEMI_WARN("heap", "cuMemUnmap of local PE %d's heap failed: %s", l, gshmemi_cu_errstr(res));
                rc = GSHMEMI_ERR_CUDA;
            }
        }
        gshmemi_cu.cuMemAddressFree(heap->reserve, heap->reserve_size);
    }
    gshmemi_ipc_close(heap->sock);
    if (heap->alloc) gshmemi_alloc_destroy(heap->alloc);
    free(heap->reachable);
    memset(heap, 0, sizeof(*heap));
    heap->sock = -1;
    return rc;
}
