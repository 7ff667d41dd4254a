/* put_signal_latency: ping-pong of shmem_putmem_signal (SHMEM_SIGNAL_SET) between PE 0 and PE 1:
 * each side waits with shmem_signal_wait_until(sig, SHMEM_CMP_EQ, i) for the peer's i-th message
 * and answers with its own; one-way latency per size. --scope warp/block uses
 * shmemx_putmem_signal_warp/_block (one thread waits, then the group puts). */
#include "../../common/perftest.h"

template <int scope> static __device__ __forceinline__ void psig_wait(uint64_t *sig, uint64_t v)
{
    if (threadIdx.x == 0) shmem_signal_wait_until(sig, SHMEM_CMP_EQ, v);
    if (scope == PT_SCOPE_WARP) __syncwarp();
    if (scope == PT_SCOPE_BLOCK) __syncthreads();
}

template <int scope>
static __global__ void psig_kernel(char *dest, const char *src, size_t size, uint64_t *sig, uint64_t base, int peer,
                                   int iters, int first)
{
    if (scope == PT_SCOPE_THREAD && threadIdx.x != 0) return;
    if (scope == PT_SCOPE_WARP && threadIdx.x >= 32) return;
    for (int i = 1; i <= iters; i++) {
        const uint64_t v = base + (uint64_t)i; /* signals only grow: no reset between sizes */
        if (!first) psig_wait<scope>(sig, v);
        if (scope == PT_SCOPE_THREAD) shmem_putmem_signal(dest, src, size, sig, v, SHMEM_SIGNAL_SET, peer);
        else if (scope == PT_SCOPE_WARP) shmemx_putmem_signal_warp(dest, src, size, sig, v, SHMEM_SIGNAL_SET, peer);
        else shmemx_putmem_signal_block(dest, src, size, sig, v, SHMEM_SIGNAL_SET, peer);
        if (first) psig_wait<scope>(sig, v);
    }
}

static void psig_launch(const pt_opts_t *o, char *dest, const char *src, size_t size, uint64_t *sig, uint64_t base,
                        int iters)
{
    int me = shmem_my_pe();
    switch (o->scope) {
    case PT_SCOPE_THREAD: psig_kernel<PT_SCOPE_THREAD><<<1, o->threads>>>(dest, src, size, sig, base, 1 - me, iters, me == 0); break;
    case PT_SCOPE_WARP: psig_kernel<PT_SCOPE_WARP><<<1, o->threads>>>(dest, src, size, sig, base, 1 - me, iters, me == 0); break;
    default: psig_kernel<PT_SCOPE_BLOCK><<<1, o->threads>>>(dest, src, size, sig, base, 1 - me, iters, me == 0); break;
    }
    PT_CUDA(cudaGetLastError());
}

int main(int argc, char **argv)
{
    pt_opts_t o = {8, 1 << 20, 2, 200, 20, 1, 1024, 0, 0, NULL};
    const char *names[] = {"latency_us"};
    char *dest, *src, what[96];
    uint64_t *sig, base = 0;
    size_t last = 0;
    int me;

    pt_parse_one_cta(argc, argv, &o); /* a thread, a warp or -t threads (default 1024) */
    pt_init(&o);
    me = shmem_my_pe();
    dest = (char *)shmem_malloc(o.max_size);
    sig = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
    PT_CUDA(cudaMalloc((void **)&src, o.max_size));
    PT_CUDA(cudaMemset(dest, 0, o.max_size));
    if (me < 2) pt_fill(src, o.max_size, 1 + me);
    PT_CUDA(cudaDeviceSynchronize());
    snprintf(what, sizeof what, "%s + signal_wait_until ping-pong, one-way, %s scope",
             o.scope == PT_SCOPE_THREAD ? "shmem_putmem_signal"
                                        : o.scope == PT_SCOPE_WARP ? "shmemx_putmem_signal_warp" : "shmemx_putmem_signal_block",
             pt_scope_names[o.scope]);
    if (me == 0) pt_header_ex(&o, what, NULL, 0, 1, names);
    shmem_barrier_all();
    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        float ms = 0;
        if (me < 2) {
            psig_launch(&o, dest, src, size, sig, base, o.warmup);
            PT_CUDA(cudaDeviceSynchronize());
        }
        base += (uint64_t)o.warmup;
        shmem_barrier_all();
        if (me < 2) PT_TIME_MS(ms, 0, psig_launch(&o, dest, src, size, sig, base, o.iters));
        base += (uint64_t)o.iters;
        shmem_barrier_all();
        if (me == 0) {
            double us = ms * 1000.0 / o.iters / 2;
            pt_row_ex(&o, NULL, pt_scope_names[o.scope], NULL, size, ms * 1000.0, 1, names, &us);
        }
        last = size;
    }
    /* each PE's buffer holds the other's source, and the last signal arrived */
    if (me < 2) {
        uint64_t s = 0;
        pt_verify(&o, "putmem_signal destination", dest, last, 2 - me);
        PT_CUDA(cudaMemcpy(&s, sig, sizeof(s), cudaMemcpyDeviceToHost));
        if (s != base) PT_FAIL(&o, "signal word holds %llu, expected %llu", (unsigned long long)s, (unsigned long long)base);
    }
    shmem_barrier_all();
    shmem_free(dest);
    shmem_free(sig);
    PT_CUDA(cudaFree(src));
    shmem_finalize();
    return 0;
}
