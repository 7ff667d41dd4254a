/* Host-side public routines: symmetric allocation and host-initiated RMA. */
#include <stdlib.h>
#include <string.h>

#include "../collectives/launch.h"
#include "../transports/transport.h"
#include "gshmem.h"
#include "state.h"

#define REQUIRE_INIT(routine, ...)                                                                 \
    do {                                                                                           \
        if (!gshmemi_require_init("api", routine)) return __VA_ARGS__;                             \
    } while (0)

int gshmemi_host_my_pe(void) { return gshmemi_state.initialized ? gshmemi_state.my_pe : -1; }
int gshmemi_host_n_pes(void) { return gshmemi_state.initialized ? gshmemi_state.n_pes : -1; }

void *gshmemi_host_ptr(const void *dest, int pe)
{
    REQUIRE_INIT("shmem_ptr", NULL);
    if (pe < 0 || pe >= gshmemi_state.n_pes || !gshmemi_in_heap(dest, 0) || !gshmemi_state.peer_base[pe]) return NULL;
    return gshmemi_state.peer_base[pe] + ((const char *)dest - gshmemi_state.heap.my_base);
}

static int pe_accessible(const char *routine, int pe)
{
    REQUIRE_INIT(routine, 0);
    return pe >= 0 && pe < gshmemi_state.n_pes && (pe == gshmemi_state.my_pe || gshmemi_state.pe_transport[pe] != NULL);
}
int shmem_pe_accessible(int pe) { return pe_accessible(__func__, pe); }
int shmem_addr_accessible(const void *addr, int pe) { return pe_accessible(__func__, pe) && gshmemi_in_heap(addr, 1); }

static void *symmetric_alloc(const char *routine, size_t size, size_t align)
{
    gshmemi_state_t *st = &gshmemi_state;
    size_t off;
    int rc;

    REQUIRE_INIT(routine, NULL);
    if (size == 0) return NULL;
    rc = gshmemi_alloc_alloc(st->heap.alloc, size, align, &off);
    if (rc == GSHMEMI_ERR_NOMEM) {
        GSHMEMI_ERROR("heap", "%s: %zu bytes exceed the free symmetric heap (largest free block %zu of %zu bytes free of %zu; GSHMEM_SYMMETRIC_SIZE sets the heap's size)",
                      routine, size, gshmemi_alloc_largest_free(st->heap.alloc), gshmemi_alloc_bytes_free(st->heap.alloc),
                      st->heap.region);
        return NULL;
    }
    if (rc != GSHMEMI_OK) {
        GSHMEMI_ERROR("heap", "%s: cannot allocate %zu bytes aligned to %zu: %s", routine, size, align, gshmemi_strerror(rc));
        return NULL;
    }
    rc = gshmemi_heap_ensure_backed(&st->heap, gshmemi_alloc_high_water(st->heap.alloc));
    if (rc != GSHMEMI_OK) {
        GSHMEMI_ERROR("heap", "%s: growing the heap to %zu bytes failed: %s", routine, gshmemi_alloc_high_water(st->heap.alloc),
                      gshmemi_strerror(rc));
        gshmemi_alloc_free(st->heap.alloc, off);
        return NULL;
    }
    /* Allocation is collective: no PE uses the new block before every PE has it. */
    GSHMEMI_TRACE("heap", "%s: %zu bytes at offset %zu, heap backed; the PEs meet", routine, size, off);
    gshmemi_host_barrier_all();
    return st->heap.my_base + off;
}

void *shmem_malloc(size_t size) { return symmetric_alloc("shmem_malloc", size, 0); }

void *shmem_calloc(size_t count, size_t size)
{
    void *p;
    if (size && count > (size_t)-1 / size) {
        GSHMEMI_ERROR("heap", "shmem_calloc: count %zu x size %zu overflows", count, size);
        return NULL;
    }
    p = symmetric_alloc("shmem_calloc", count * size, 0);
    if (p) {
        if (cudaMemset(p, 0, count * size) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
            GSHMEMI_ERROR("heap", "shmem_calloc: clearing %zu bytes failed", count * size);
            return NULL;
        }
        gshmemi_host_barrier_all();
    }
    return p;
}

void *shmem_align(size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1))) {
        GSHMEMI_ERROR("heap", "shmem_align: alignment %zu is not a power of two", alignment);
        return NULL;
    }
    return symmetric_alloc("shmem_align", size, alignment < 16 ? 16 : alignment);
}

void shmem_free(void *ptr)
{
    gshmemi_state_t *st = &gshmemi_state;
    int rc;

    REQUIRE_INIT("shmem_free");
    if (!ptr) return;
    if (!gshmemi_in_heap(ptr, 1)) {
        GSHMEMI_ERROR("heap", "shmem_free: %p is not in the symmetric heap [%p, %p); ignored", ptr, (void *)st->heap.my_base,
                      (void *)(st->heap.my_base + st->heap.region));
        return;
    }
    /* Nobody may still be using the block on another PE. */
    gshmemi_host_barrier_all();
    rc = gshmemi_alloc_free(st->heap.alloc, (size_t)((char *)ptr - st->heap.my_base));
    if (rc != GSHMEMI_OK)
        GSHMEMI_ERROR("heap", "shmem_free: %p is not the start of a live symmetric allocation (double free?); ignored", ptr);
}

/* ---- host RMA ---- */
static int check_rma(const char *routine, const void *sym, size_t n, int pe)
{
    REQUIRE_INIT(routine, GSHMEMI_ERR_STATE);
    if (pe < 0 || pe >= gshmemi_state.n_pes) {
        GSHMEMI_ERROR("api", "%s: pe %d is out of range [0, %d)", routine, pe, gshmemi_state.n_pes);
        return GSHMEMI_ERR_INVALID;
    }
    if (!gshmemi_in_heap(sym, n)) {
        GSHMEMI_ERROR("api", "%s: [%p, +%zu) is not inside the symmetric heap [%p, %p)", routine, sym, n,
                      (void *)gshmemi_state.heap.my_base, (void *)(gshmemi_state.heap.my_base + gshmemi_state.heap.region));
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static void host_rma(int is_put, void *dest, const void *src, size_t n, int pe, cudaStream_t stream, int blocking)
{
    gshmemi_state_t *st = &gshmemi_state;
    const char *routine = is_put ? "shmem_putmem" : "shmem_getmem";
    int rc;

    if (n == 0) return;
    if (check_rma(routine, is_put ? dest : src, n, pe) != GSHMEMI_OK) return;
    rc = is_put ? st->pe_transport[pe]->put(&st->tctx, dest, src, n, pe, stream)
                : st->pe_transport[pe]->get(&st->tctx, dest, src, n, pe, stream);
    if (rc == GSHMEMI_OK && blocking && cudaStreamSynchronize(stream) != cudaSuccess) rc = GSHMEMI_ERR_CUDA;
    if (rc != GSHMEMI_OK) GSHMEMI_ERROR("api", "%s of %zu bytes with PE %d failed: %s", routine, n, pe, gshmemi_strerror(rc));
}

void gshmemi_host_putmem(void *dest, const void *source, size_t nelems, int pe, int blocking)
{
    host_rma(1, dest, source, nelems, pe, gshmemi_state.stream, blocking);
}

void gshmemi_host_getmem(void *dest, const void *source, size_t nelems, int pe, int blocking)
{
    host_rma(0, dest, source, nelems, pe, gshmemi_state.stream, blocking);
}

void shmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream)
{
    host_rma(1, dest, source, nelems, pe, (cudaStream_t)stream, 0);
}

void shmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream)
{
    host_rma(0, dest, source, nelems, pe, (cudaStream_t)stream, 0);
}

static void host_strided(int is_put, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                         size_t es, int pe)
{
    gshmemi_state_t *st = &gshmemi_state;
    const char *routine = is_put ? "shmem_iput" : "shmem_iget";
    const ptrdiff_t sym_stride = is_put ? dst : sst;
    int rc;

    if (nelems == 0) return;
    if (dst < 1 || sst < 1) {
        GSHMEMI_ERROR("api", "%s: strides must be positive (dst %td, sst %td)", routine, dst, sst);
        return;
    }
    if (check_rma(routine, is_put ? dest : src, ((nelems - 1) * (size_t)sym_stride + 1) * es, pe) != GSHMEMI_OK) return;
    rc = is_put ? st->pe_transport[pe]->iput(&st->tctx, dest, (size_t)dst * es, src, (size_t)sst * es, es, nelems, pe, st->stream)
                : st->pe_transport[pe]->iget(&st->tctx, dest, (size_t)dst * es, src, (size_t)sst * es, es, nelems, pe, st->stream);
    if (rc == GSHMEMI_OK && cudaStreamSynchronize(st->stream) != cudaSuccess) rc = GSHMEMI_ERR_CUDA;
    if (rc != GSHMEMI_OK) GSHMEMI_ERROR("api", "%s of %zu elements with PE %d failed: %s", routine, nelems, pe, gshmemi_strerror(rc));
}

void gshmemi_host_iput(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es, int pe)
{
    host_strided(1, dest, source, dst, sst, nelems, es, pe);
}

void gshmemi_host_iget(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es, int pe)
{
    host_strided(0, dest, source, dst, sst, nelems, es, pe);
}

void gshmemi_host_quiet(void)
{
    REQUIRE_INIT("shmem_quiet");
    cudaError_t err = cudaStreamSynchronize(gshmemi_state.stream);
    if (err != cudaSuccess) GSHMEMI_ERROR("api", "shmem_quiet: %s", cudaGetErrorString(err));
    gshmemi_transports_quiet("shmem_quiet");
}

void gshmemi_host_barrier_all(void) { gshmemi_host_barrier(SHMEM_TEAM_WORLD, "shmem_barrier_all"); }

void shmemx_barrier_all_on_stream(struct CUstream_st *stream) { shmemx_barrier_on_stream(SHMEM_TEAM_WORLD, stream); }

void shmemx_quiet_on_stream(struct CUstream_st *stream)
{
    REQUIRE_INIT("shmemx_quiet_on_stream");
    if (gshmemi_launch_quiet((cudaStream_t)stream) != GSHMEMI_OK) GSHMEMI_ERROR("api", "shmemx_quiet_on_stream failed");
}

/* ---- the C entry points of routines CUDA code gets inline: the host bodies of the rows of
 * GSHMEMI_CORE_FAMILY and GSHMEMI_RMA_FAMILY (include/gshmem/rma.h), which list their names ---- */
#define GSHMEMI_HOSTDEV GSHMEMI_EMIT_HOST
#define GSHMEMI_DEVONLY GSHMEMI_EMIT_NONE
GSHMEMI_CORE_FAMILY
GSHMEMI_RMA_FAMILY
#undef GSHMEMI_HOSTDEV
#undef GSHMEMI_DEVONLY
