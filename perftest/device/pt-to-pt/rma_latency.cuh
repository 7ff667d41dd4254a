/* put_latency and get_latency: PE 0 does a blocking shmem_putmem/getmem (or the _warp/_block form
 * with --scope) of `size` bytes with PE 1 followed by shmem_quiet, -n times in one kernel; the time
 * per operation is the latency (the shape of NVSHMEM's shmem_put_latency/shmem_get_latency). */
#include "../../common/perftest.h"

template <int scope>
static __global__ void rma_latency_kernel(char *sym, char *local, size_t size, int peer, int iters, int is_put)
{
    /* thread scope: thread 0 only; warp scope: the first warp; block scope: the whole block */
    if (scope == PT_SCOPE_THREAD && threadIdx.x != 0) return;
    if (scope == PT_SCOPE_WARP && threadIdx.x >= 32) return;
    for (int i = 0; i < iters; i++) {
        if (scope == PT_SCOPE_THREAD) {
            if (is_put) shmem_putmem(sym, local, size, peer);
            else shmem_getmem(local, sym, size, peer);
        } else if (scope == PT_SCOPE_WARP) {
            if (is_put) shmemx_putmem_warp(sym, local, size, peer);
            else shmemx_getmem_warp(local, sym, size, peer);
        } else {
            if (is_put) shmemx_putmem_block(sym, local, size, peer);
            else shmemx_getmem_block(local, sym, size, peer);
        }
        /* quiet orders the calling thread's stores; every thread of the group stored a part */
        shmem_quiet();
    }
}

static void rma_latency_launch(const pt_opts_t *o, char *sym, char *local, size_t size, int peer, int iters, int is_put)
{
    switch (o->scope) {
    case PT_SCOPE_THREAD: rma_latency_kernel<PT_SCOPE_THREAD><<<1, o->threads>>>(sym, local, size, peer, iters, is_put); break;
    case PT_SCOPE_WARP: rma_latency_kernel<PT_SCOPE_WARP><<<1, o->threads>>>(sym, local, size, peer, iters, is_put); break;
    default: rma_latency_kernel<PT_SCOPE_BLOCK><<<1, o->threads>>>(sym, local, size, peer, iters, is_put); break;
    }
    PT_CUDA(cudaGetLastError());
}

static int rma_latency_main(int argc, char **argv, int is_put)
{
    pt_opts_t o = {8, 1 << 20, 2, 200, 20, 1, 1024, 0, 0, NULL};
    const char *names[] = {"latency_us"};
    char *sym, *local, what[96];
    int me, peer;
    size_t last = 0;

    pt_parse_one_cta(argc, argv, &o); /* a thread, a warp or -t threads (default 1024) */
    pt_init(&o);
    me = shmem_my_pe();
    peer = 1 - me;
    sym = (char *)shmem_malloc(o.max_size);
    PT_CUDA(cudaMalloc((void **)&local, o.max_size));
    /* put: PE 0's source is pattern 1, PE 1's target starts zeroed; get: PE 1's source is pattern 2 */
    PT_CUDA(cudaMemset(sym, 0, o.max_size));
    PT_CUDA(cudaMemset(local, 0, o.max_size));
    if (is_put && me == 0) pt_fill(local, o.max_size, 1);
    if (!is_put && me == 1) pt_fill(sym, o.max_size, 2);
    PT_CUDA(cudaDeviceSynchronize());
    snprintf(what, sizeof what, "blocking %s%s + shmem_quiet, %s scope", o.scope == PT_SCOPE_THREAD ? "shmem_" : "shmemx_",
             is_put ? (o.scope == PT_SCOPE_THREAD ? "putmem" : o.scope == PT_SCOPE_WARP ? "putmem_warp" : "putmem_block")
                    : (o.scope == PT_SCOPE_THREAD ? "getmem" : o.scope == PT_SCOPE_WARP ? "getmem_warp" : "getmem_block"),
             pt_scope_names[o.scope]);
    if (me == 0) pt_header_ex(&o, what, NULL, 0, 1, names);
    shmem_barrier_all();
    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        float ms = 0;
        if (me == 0) {
            rma_latency_launch(&o, sym, local, size, peer, o.warmup, is_put);
            PT_CUDA(cudaDeviceSynchronize());
            PT_TIME_MS(ms, 0, rma_latency_launch(&o, sym, local, size, peer, o.iters, is_put));
        }
        shmem_barrier_all();
        if (me == 0) {
            double us = ms * 1000.0 / o.iters;
            /* like p_latency: time_us is the whole measured kernel, latency_us one operation */
            pt_row_ex(&o, NULL, pt_scope_names[o.scope], NULL, size, ms * 1000.0, 1, names, &us);
        }
        last = size;
    }
    /* the bytes moved by the last size arrived where they should */
    if (is_put && me == 1) pt_verify(&o, "putmem target on PE 1", sym, last, 1);
    if (!is_put && me == 0) pt_verify(&o, "getmem destination on PE 0", local, last, 2);
    shmem_barrier_all();
    shmem_free(sym);
    PT_CUDA(cudaFree(local));
    shmem_finalize();
    return 0;
}
