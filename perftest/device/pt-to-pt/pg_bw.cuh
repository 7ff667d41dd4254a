/* p_bw and g_bw: every thread of a -c x -t grid stores (shmem_int_p) or loads (shmem_int_g) 4-byte
 * words of PE 1's buffer, consecutive threads on consecutive words; `size` bytes per round (grid-
 * stride when size exceeds the grid), -n rounds in one kernel, one shmem_quiet per thread at the
 * end. Payload GB/s and Mops/s (the shape of NVSHMEM's shmem_p_bw/shmem_g_bw). */
#include "../../common/perftest.h"

static __host__ __device__ __forceinline__ int pg_value(size_t k, int round)
{
    return (int)((unsigned)k * 2654435761u + (unsigned)round);
}

static __global__ void p_bw_kernel(int *sym, size_t n, int peer, int iters)
{
    const size_t nt = (size_t)gridDim.x * blockDim.x, g = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (int r = 0; r < iters; r++)
        for (size_t k = g; k < n; k += nt) shmem_int_p(sym + k, pg_value(k, r), peer);
    shmem_quiet();
}

/* Per-thread sums of what was loaded go to out[g] (a coalesced store; a shared atomic would be
 * timed too), checked by g_bw_check. */
static __global__ void g_bw_kernel(const int *sym, size_t n, int peer, int iters, unsigned *out)
{
    const size_t nt = (size_t)gridDim.x * blockDim.x, g = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (int r = 0; r < iters; r++) {
#pragma unroll 8
        for (size_t k = g; k < n; k += nt) acc += (unsigned)shmem_int_g(sym + k, peer);
    }
    out[g] = acc;
}

static __global__ void p_bw_check(const int *sym, size_t n, int round, unsigned long long *bad)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        if (sym[k] != pg_value(k, round)) atomicAdd(bad, 1ull);
}

/* Same grid as g_bw_kernel: recompute each thread's expected sum (PE 1 holds pg_value(k, 0)). */
static __global__ void g_bw_check(const unsigned *out, size_t n, int iters, unsigned long long *bad)
{
    const size_t nt = (size_t)gridDim.x * blockDim.x, g = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (size_t k = g; k < n; k += nt) acc += (unsigned)pg_value(k, 0);
    if (out[g] != acc * (unsigned)iters) atomicAdd(bad, 1ull);
}

static __global__ void pg_init(int *sym, size_t n)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        sym[k] = pg_value(k, 0);
}

static int pg_bw_main(int argc, char **argv, int is_put)
{
    pt_opts_t o = {64 << 10, 64 << 20, 4, 50, 10, 132, 1024, 0, 0, NULL};
    const char *names[] = {"GB/s", "Mops/s"};
    unsigned long long *bad_d, bad = 0;
    unsigned *out;
    int *sym, me;
    size_t last = 0;

    pt_parse(argc, argv, &o);
    pt_init(&o);
    me = shmem_my_pe();
    o.max_size &= ~(size_t)3; /* whole ints */
    sym = (int *)shmem_malloc(o.max_size);
    PT_CUDA(cudaMalloc((void **)&out, (size_t)o.ctas * o.threads * sizeof(unsigned)));
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(bad)));
    PT_CUDA(cudaMemset(sym, 0, o.max_size));
    if (!is_put && me == 1) {
        pg_init<<<264, 512>>>(sym, o.max_size / 4);
        PT_CUDA(cudaGetLastError());
    }
    PT_CUDA(cudaDeviceSynchronize());
    if (me == 0) pt_header_ex(&o, is_put ? "shmem_int_p from every thread" : "shmem_int_g from every thread", NULL, 0, 2, names);
    shmem_barrier_all();
    if (me == 0) {
        if (is_put) PT_SPINUP(0, (p_bw_kernel<<<o.ctas, o.threads>>>(sym, o.max_size / 4, 1, 1)));
        else PT_SPINUP(0, (g_bw_kernel<<<o.ctas, o.threads>>>(sym, o.max_size / 4, 1, 1, out)));
    }
    shmem_barrier_all();
    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        size_t n = size / 4;
        float ms = 0;
        if (n == 0) continue;
        if (me == 0) {
            if (is_put) {
                p_bw_kernel<<<o.ctas, o.threads>>>(sym, n, 1, o.warmup);
                PT_CUDA(cudaGetLastError());
                PT_CUDA(cudaDeviceSynchronize());
                PT_TIME_MS(ms, 0, (p_bw_kernel<<<o.ctas, o.threads>>>(sym, n, 1, o.iters)));
            } else {
                g_bw_kernel<<<o.ctas, o.threads>>>(sym, n, 1, o.warmup, out);
                PT_CUDA(cudaGetLastError());
                PT_CUDA(cudaDeviceSynchronize());
                PT_TIME_MS(ms, 0, (g_bw_kernel<<<o.ctas, o.threads>>>(sym, n, 1, o.iters, out)));
                /* every size: the loaded sums are cheap to check on this GPU */
                PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
                g_bw_check<<<o.ctas, o.threads>>>(out, n, o.iters, bad_d);
                PT_CUDA(cudaGetLastError());
                PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
                if (bad) PT_FAIL(&o, "shmem_int_g: %llu of %d threads summed wrong values (size %zu)", bad, o.ctas * o.threads, size);
            }
        }
        shmem_barrier_all();
        if (me == 0) {
            double us = ms * 1000.0 / o.iters;
            double v[2] = {(double)(n * 4) / (us * 1e3), (double)n / us};
            pt_row_ex(&o, NULL, NULL, NULL, n * 4, us, 2, names, v);
        }
        last = n;
    }
    /* after the last size PE 1's words hold the last round's values */
    if (is_put && me == 1 && last) {
        PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
        p_bw_check<<<264, 512>>>(sym, last, o.iters - 1, bad_d);
        PT_CUDA(cudaGetLastError());
        PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
        if (bad) PT_FAIL(&o, "shmem_int_p target on PE 1: %llu of %zu words wrong", bad, last);
    }
    shmem_barrier_all();
    shmem_free(sym);
    PT_CUDA(cudaFree(out));
    PT_CUDA(cudaFree(bad_d));
    shmem_finalize();
    return 0;
}
