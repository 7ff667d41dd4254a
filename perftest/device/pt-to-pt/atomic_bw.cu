/* atomic_bw: every thread of a -c x -t grid (default 132 x 1024) owns one 64-bit word of PE 1 and
 * does -n 64-bit atomics on it in one kernel, then shmem_quiet. --op NAME picks one (default: all,
 * one row each: non-fetching add, inc, set, and, or, xor, then the fetching ops). Reports Mops/s and
 * GB/s of 8-byte operands; every fetched value and every final word are checked. -b/-e are unused:
 * the size column is the word array, 8 bytes per thread. */
#include "amo_ops.cuh"

template <int OP>
static __global__ void amo_bw_kernel(uint64_t *words, int peer, int iters, unsigned long long *bad)
{
    const size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    uint64_t cur = amo_init(g);
    unsigned long long errs = 0;

    for (int i = 0; i < iters; i++) {
        errs += amo_do<OP>(words + g, cur, i, peer) != cur;
        cur = amo_next(OP, cur, i);
    }
    shmem_quiet();
    if (errs) atomicAdd(bad, errs);
}

static __global__ void amo_bw_init(uint64_t *words, size_t n)
{
    for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < n; g += (size_t)gridDim.x * blockDim.x)
        words[g] = amo_init(g);
}

/* On PE 1 after the measured kernel: word g went through iters ops from amo_init(g). */
static __global__ void amo_bw_check(const uint64_t *words, size_t n, int op, int iters, unsigned long long *bad)
{
    for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < n; g += (size_t)gridDim.x * blockDim.x) {
        uint64_t cur = amo_init(g);
        for (int i = 0; i < iters; i++) cur = amo_next(op, cur, i);
        if (words[g] != cur) atomicAdd(bad, 1ull);
    }
}

/* Collective: PE 0's previous kernel has finished before PE 1 rewrites the words. */
static void amo_bw_reset(uint64_t *words, size_t n)
{
    shmem_barrier_all();
    if (shmem_my_pe() == 1) {
        amo_bw_init<<<264, 512>>>(words, n);
        PT_CUDA(cudaGetLastError());
        PT_CUDA(cudaDeviceSynchronize());
    }
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    pt_opts_t o = {8, 8, 2, 50, 10, 132, 1024, 0, 0, NULL};
    const char *names[] = {"Mops/s", "GB/s"};
    static const int order[AMO_NOPS] = {AMO_ADD, AMO_INC, AMO_SET, AMO_AND, AMO_OR, AMO_XOR, AMO_FETCH_ADD, AMO_FETCH,
                                        AMO_COMPARE_SWAP, AMO_SWAP, AMO_FETCH_INC, AMO_FETCH_AND, AMO_FETCH_OR, AMO_FETCH_XOR};
    unsigned long long *bad_d, bad;
    uint64_t *words;
    size_t n;
    int me;

    o.accepts = PT_ACCEPT_OP;
    pt_parse(argc, argv, &o);
    amo_check_op(&o);
    pt_init(&o);
    me = shmem_my_pe();
    n = (size_t)o.ctas * o.threads;
    words = (uint64_t *)shmem_malloc(n * sizeof(uint64_t));
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(*bad_d)));
    if (me == 0) pt_header_ex(&o, "shmem_uint64_atomic_OP, one word per thread", NULL, 1, 2, names);
    amo_bw_reset(words, n);
    if (me == 0) PT_SPINUP(0, (amo_bw_kernel<AMO_ADD><<<o.ctas, o.threads>>>(words, 1, 1, bad_d)));
    shmem_barrier_all();
    for (int k = 0; k < AMO_NOPS; k++) {
        const int op = order[k];
        float ms = 0;
        if (!pt_op_selected(&o, amo_names[op])) continue;
        /* warm-up and measured runs each start from amo_init, so their values can be checked */
        amo_bw_reset(words, n);
        if (me == 0) {
            AMO_DISPATCH(op, amo_bw_kernel, o.ctas, o.threads, words, 1, o.warmup, bad_d);
            PT_CUDA(cudaDeviceSynchronize());
        }
        amo_bw_reset(words, n);
        if (me == 0) {
            PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
            PT_TIME_MS(ms, 0, AMO_DISPATCH(op, amo_bw_kernel, o.ctas, o.threads, words, 1, o.iters, bad_d));
            PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
            if (bad) PT_FAIL(&o, "shmem_uint64_atomic_%s: %llu fetched values wrong", amo_names[op], bad);
        }
        shmem_barrier_all();
        if (me == 1) {
            PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
            amo_bw_check<<<264, 512>>>(words, n, op, o.iters, bad_d);
            PT_CUDA(cudaGetLastError());
            PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
            if (bad) PT_FAIL(&o, "shmem_uint64_atomic_%s: %llu of %zu words on PE 1 wrong", amo_names[op], bad, n);
        }
        shmem_barrier_all(); /* the row only after PE 1's check passed */
        if (me == 0) {
            double ops = (double)n * o.iters, us = ms * 1000.0 / o.iters;
            double v[2] = {ops / (ms * 1e3), ops * 8 / (ms * 1e6)};
            pt_row_ex(&o, amo_names[op], NULL, NULL, n * sizeof(uint64_t), us, 2, names, v);
        }
        shmem_barrier_all();
    }
    shmem_free(words);
    PT_CUDA(cudaFree(bad_d));
    shmem_finalize();
    return 0;
}
