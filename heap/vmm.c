/* VA reservation and this PE's physical chunks of the symmetric heap; growth subscribers. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

int gshmemi_heap_set_access(const gshmemi_heap_t *heap, CUdeviceptr addr, size_t size)
{
    CUmemAccessDesc desc;
    memset(&desc, 0, sizeof(desc));
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = (int)heap->cfg.device;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    GSHMEMI_CUCHECK(cuMemSetAccess(addr, size, &desc, 1));
    return GSHMEMI_OK;
}

char *gshmemi_heap_slot(const gshmemi_heap_t *heap, int local)
{
    if (local < 0 || local >= heap->cfg.local_size) return NULL;
    return (char *)(uintptr_t)heap->reserve + (size_t)local * heap->region;
}

int gshmemi_heap_subscribe(gshmemi_heap_t *heap, gshmemi_heap_grow_fn fn, void *arg)
{
    if (heap->n_subs == GSHMEMI_HEAP_MAX_SUBSCRIBERS) {
        GSHMEMI_ERROR("heap", "more than %d heap growth subscribers", GSHMEMI_HEAP_MAX_SUBSCRIBERS);
        return GSHMEMI_ERR_NOMEM;
    }
    heap->subs[heap->n_subs].fn = fn;
    heap->subs[heap->n_subs].arg = arg;
    heap->n_subs++;
    return GSHMEMI_OK;
}

int gshmemi_heap_export_fd(const gshmemi_heap_chunk_t *chunk, int *fd)
{
    CUresult res = gshmemi_cu.cuMemExportToShareableHandle(fd, chunk->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "exporting a %zu-byte heap chunk failed: %s", chunk->size, gshmemi_cu_errstr(res));
        return GSHMEMI_ERR_CUDA;
    }
    return GSHMEMI_OK;
}

int gshmemi_heap_init(gshmemi_heap_t *heap, const gshmemi_heap_config_t *cfg)
{
    CUmemAllocationProp prop;
    int rc;

    memset(heap, 0, sizeof(*heap));
    heap->cfg = *cfg;

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
    GSHMEMI_INFO("heap", "reserved %zu bytes at %p: %d PEs x %zu bytes, granularity %zu", heap->reserve_size,
                 (void *)(uintptr_t)heap->reserve, cfg->local_size, heap->region, heap->granularity);
    return GSHMEMI_OK;
}

/* Creates this PE's chunk for [offset, offset+size) and maps it here; *handle stays valid until
 * the caller releases it (subscribers may export it). */
static int create_own_chunk(gshmemi_heap_t *heap, size_t offset, size_t size, CUmemGenericAllocationHandle *handle)
{
    CUmemAllocationProp prop;
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)(heap->my_base + offset);
    CUresult res;

    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)heap->cfg.device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    res = gshmemi_cu.cuMemCreate(handle, size, &prop, 0);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "cuMemCreate of %zu bytes for the symmetric heap failed: %s (GPU memory exhausted? GSHMEM_SYMMETRIC_SIZE)",
                      size, gshmemi_cu_errstr(res));
        return GSHMEMI_ERR_NOMEM;
    }
    res = gshmemi_cu.cuMemMap(addr, size, 0, *handle, 0);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("heap", "mapping a %zu-byte heap chunk failed: %s", size, gshmemi_cu_errstr(res));
        gshmemi_cu.cuMemRelease(*handle);
        return GSHMEMI_ERR_CUDA;
    }
    heap->mapped = offset + size;
    return gshmemi_heap_set_access(heap, addr, size);
}

int gshmemi_heap_ensure_backed(gshmemi_heap_t *heap, size_t end)
{
    gshmemi_heap_chunk_t chunk;
    int rc;

    if (end <= heap->backed) return GSHMEMI_OK;
    chunk.offset = heap->backed;
    chunk.size = round_up(end - chunk.offset, heap->granularity);
    if (chunk.size < heap->cfg.growth_min) chunk.size = round_up(heap->cfg.growth_min, heap->granularity);
    if (chunk.offset + chunk.size > heap->region) chunk.size = heap->region - chunk.offset;
    chunk.addr = heap->my_base + chunk.offset;

    rc = create_own_chunk(heap, chunk.offset, chunk.size, &chunk.handle);
    if (rc != GSHMEMI_OK) return rc;
    GSHMEMI_TRACE("heap", "chunk [%zu, +%zu) created and mapped here", chunk.offset, chunk.size);
    for (int i = 0; i < heap->n_subs && rc == GSHMEMI_OK; i++) {
        rc = heap->subs[i].fn(heap->subs[i].arg, &chunk);
        if (rc == GSHMEMI_OK) GSHMEMI_TRACE("heap", "growth subscriber %d of %d done", i + 1, heap->n_subs);
    }
    /* The mapping keeps the memory alive; the handle is not needed any more. */
    gshmemi_cu.cuMemRelease(chunk.handle);
    if (rc != GSHMEMI_OK) return rc;
    heap->backed = chunk.offset + chunk.size;
    GSHMEMI_INFO("heap", "heap backed to %zu bytes", heap->backed);
    return heap->backed >= end ? GSHMEMI_OK : GSHMEMI_ERR_NOMEM;
}

int gshmemi_heap_fini(gshmemi_heap_t *heap)
{
    int rc = GSHMEMI_OK;
    if (heap->reserve) {
        if (heap->mapped) {
            CUresult res = gshmemi_cu.cuMemUnmap((CUdeviceptr)(uintptr_t)heap->my_base, heap->mapped);
            if (res != CUDA_SUCCESS) {
                GSHMEMI_WARN("heap", "cuMemUnmap of this PE's heap failed: %s", gshmemi_cu_errstr(res));
                rc = GSHMEMI_ERR_CUDA;
            }
        }
        gshmemi_cu.cuMemAddressFree(heap->reserve, heap->reserve_size);
    }
    if (heap->alloc) gshmemi_alloc_destroy(heap->alloc);
    memset(heap, 0, sizeof(*heap));
    return rc;
}
