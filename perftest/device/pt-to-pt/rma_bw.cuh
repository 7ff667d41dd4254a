/* put_bw and get_bw: PE 0 moves `size` bytes to/from PE 1 per iteration, split across the CTAs,
 * each CTA with one _nbi_block call; one quiet at the end (the shape of NVSHMEM's perftests).
 * The local side is symmetric too, as there; --local-private makes it cudaMalloc memory (through
 * the host proxy under MPS such a buffer is copied across CUDA contexts: docs/transports.md).
 * --memcpy: each size also timed as a plain cudaMemcpyAsync between two buffers of this GPU, in
 * the same run (the yardstick of a put through the host proxy's copy engine). */
#include "../../common/perftest.h"

static __global__ void rma_bw_kernel(char *remote_sym, char *local, size_t size, int peer, int iters, int is_put)
{
    size_t per_cta = (size / gridDim.x + 15) / 16 * 16;
    size_t off = per_cta * blockIdx.x;
    size_t len = off >= size ? 0 : (size - off < per_cta ? size - off : per_cta);

    for (int i = 0; i < iters; i++) {
        if (len == 0) break;
        if (is_put) shmemx_putmem_nbi_block(remote_sym + off, local + off, len, peer);
        else shmemx_getmem_nbi_block(local + off, remote_sym + off, len, peer);
    }
    __syncthreads();
    if (threadIdx.x == 0) shmem_quiet();
}

static int rma_bw_main(int argc, char **argv, int is_put)
{
    pt_opts_t o = {8, 256 << 20, 2, 50, 10, 32, 256, 0, 0, NULL};
    o.accepts = PT_ACCEPT_MEMCPY | PT_ACCEPT_LOCAL;
    char *sym, *local;
    cudaEvent_t t0, t1;
    int me, peer, active;

    pt_parse(argc, argv, &o);
    pt_require_gpu(o.name);
    shmem_init();
    me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        fprintf(stderr, "%s: needs at least 2 PEs (gshmemrun -n 2 %s)\n", o.name, o.name);
        shmem_global_exit(1);
    }
    peer = (me + 1) % 2;
    active = me == 0 || (o.bidir && me == 1);
    sym = (char *)shmem_malloc(o.max_size);
    if (o.local_private) PT_CUDA(cudaMalloc((void **)&local, o.max_size));
    else local = (char *)shmem_malloc(o.max_size);
    if (!sym || !local) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes (GSHMEM_SYMMETRIC_SIZE)\n", o.name, o.max_size);
        shmem_global_exit(1);
    }
    PT_CUDA(cudaMemset(local, me + 1, o.max_size));
    PT_CUDA(cudaMemset(sym, 0, o.max_size));
    PT_CUDA(cudaEventCreate(&t0));
    PT_CUDA(cudaEventCreate(&t1));
    if (me == 0) {
        char what[96];
        snprintf(what, sizeof(what), "%s%s_nbi_block, local side %s", o.bidir ? "bidirectional " : "", is_put ? "putmem" : "getmem",
                 o.local_private ? "cudaMalloc" : "symmetric");
        pt_header(&o, what, "GB/s");
    }
    /* An idle GPU runs at a low clock and takes milliseconds to ramp up; with few CTAs the SM
     * clock bounds the rate, so the first sizes would measure the ramp, not the transport. */
    if (active) {
        PT_CUDA(cudaEventRecord(t0));
        for (float spun = 0; spun < 200.0f;) {
            rma_bw_kernel<<<o.ctas, o.threads>>>(sym, local, o.max_size, peer, 1, is_put);
            PT_CUDA(cudaEventRecord(t1));
            PT_CUDA(cudaEventSynchronize(t1));
            PT_CUDA(cudaEventElapsedTime(&spun, t0, t1));
        }
    }
    shmem_barrier_all();
    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        float ms = 0;
        if (active) {
            rma_bw_kernel<<<o.ctas, o.threads>>>(sym, local, size, peer, o.warmup, is_put);
            PT_CUDA(cudaGetLastError());
            PT_CUDA(cudaDeviceSynchronize());
        }
        shmem_barrier_all();
        if (active) {
            PT_CUDA(cudaEventRecord(t0));
            rma_bw_kernel<<<o.ctas, o.threads>>>(sym, local, size, peer, o.iters, is_put);
            PT_CUDA(cudaEventRecord(t1));
            PT_CUDA(cudaEventSynchronize(t1));
            PT_CUDA(cudaGetLastError());
            PT_CUDA(cudaEventElapsedTime(&ms, t0, t1));
        }
        shmem_barrier_all();
        if (me == 0) {
            double us = ms * 1000.0 / o.iters;
            pt_row(&o, size, us, (double)size / (us * 1e3), "GB/s");
        }
    }
    shmem_barrier_all();
    if (o.memcpy && me == 0) {
        char *copy;
        PT_CUDA(cudaMalloc((void **)&copy, o.max_size));
        pt_header(&o, "cudaMemcpyAsync, device to device on this GPU", "GB/s");
        for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
            float ms = 0;
            for (int i = 0; i < o.warmup; i++) PT_CUDA(cudaMemcpyAsync(copy, local, size, cudaMemcpyDeviceToDevice));
            PT_CUDA(cudaEventRecord(t0));
            for (int i = 0; i < o.iters; i++) PT_CUDA(cudaMemcpyAsync(copy, local, size, cudaMemcpyDeviceToDevice));
            PT_CUDA(cudaEventRecord(t1));
            PT_CUDA(cudaEventSynchronize(t1));
            PT_CUDA(cudaEventElapsedTime(&ms, t0, t1));
            double us = ms * 1000.0 / o.iters;
            pt_row(&o, size, us, (double)size / (us * 1e3), "GB/s");
        }
        cudaFree(copy);
    }
    shmem_barrier_all();
    shmem_free(sym);
    if (o.local_private) cudaFree(local);
    else shmem_free(local);
    shmem_finalize();
    return 0;
}
