/* put_on_stream_bw and get_on_stream_bw: PE 0 enqueues -n back-to-back
 * shmemx_putmem_on_stream/shmemx_getmem_on_stream of `size` bytes with PE 1 on one stream (copy
 * engine), timed with events on that stream; GB/s. --bidir makes PE 1 do the same at once. */
#include "../../common/perftest.h"

static void on_stream_ops(char *sym, char *local, size_t size, int peer, int iters, int is_put, cudaStream_t s)
{
    for (int i = 0; i < iters; i++) {
        if (is_put) shmemx_putmem_on_stream(sym, local, size, peer, s);
        else shmemx_getmem_on_stream(local, sym, size, peer, s);
    }
}

static int on_stream_bw_main(int argc, char **argv, int is_put)
{
    pt_opts_t o = {8, 256 << 20, 2, 50, 10, 1, 1, 0, 0, NULL};
    const char *names[] = {"GB/s"};
    char *sym, *local, what[96];
    cudaStream_t s;
    int me, peer, active;
    size_t last = 0;

    pt_parse(argc, argv, &o);
    pt_init(&o);
    me = shmem_my_pe();
    peer = 1 - me;
    active = me == 0 || (o.bidir && me == 1);
    sym = (char *)shmem_malloc(o.max_size);
    PT_CUDA(cudaMalloc((void **)&local, o.max_size));
    PT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* put: PE p's local source is pattern 1+p into the peer's zeroed target; get: PE p's symmetric
     * buffer is pattern 1+p, read into the peer's zeroed local buffer */
    PT_CUDA(cudaMemset(sym, 0, o.max_size));
    PT_CUDA(cudaMemset(local, 0, o.max_size));
    if (me < 2) pt_fill(is_put ? local : sym, o.max_size, 1 + me);
    PT_CUDA(cudaDeviceSynchronize());
    snprintf(what, sizeof what, "%s%s back-to-back on one stream", o.bidir ? "bidirectional " : "",
             is_put ? "shmemx_putmem_on_stream" : "shmemx_getmem_on_stream");
    if (me == 0) pt_header_ex(&o, what, "copy engine", 0, 1, names);
    shmem_barrier_all();
    if (active) PT_SPINUP(s, on_stream_ops(sym, local, o.max_size, peer, 1, is_put, s));
    shmem_barrier_all();
    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        float ms = 0;
        if (active) {
            on_stream_ops(sym, local, size, peer, o.warmup, is_put, s);
            PT_CUDA(cudaStreamSynchronize(s));
        }
        shmem_barrier_all();
        if (active) PT_TIME_MS(ms, s, on_stream_ops(sym, local, size, peer, o.iters, is_put, s));
        shmem_barrier_all();
        if (me == 0) {
            double us = ms * 1000.0 / o.iters;
            double gbs = (double)size / (us * 1e3);
            pt_row_ex(&o, NULL, NULL, NULL, size, us, 1, names, &gbs);
        }
        last = size;
    }
    /* put: the peer's target holds our pattern; get: our local buffer holds the peer's */
    if (is_put && (me == 1 || (o.bidir && me == 0))) pt_verify(&o, "putmem_on_stream target", sym, last, 1 + peer);
    if (!is_put && active) pt_verify(&o, "getmem_on_stream destination", local, last, 1 + peer);
    shmem_barrier_all();
    PT_CUDA(cudaStreamDestroy(s));
    shmem_free(sym);
    PT_CUDA(cudaFree(local));
    shmem_finalize();
    return 0;
}
