/* atomic_latency: one thread of PE 0 does -n fetching 64-bit atomics on one word of PE 1, each
 * next op's address depending on the previous fetched value (a round trip per op). --op NAME picks
 * one (default: every fetching op, one row each); a non-fetching op named with --op is timed as op
 * + shmem_quiet. Every fetched value and the final word are checked. */
#include "amo_ops.cuh"

template <int OP>
static __global__ void amo_latency_kernel(uint64_t *dest, int peer, int iters, uint64_t zero, unsigned long long *bad)
{
    const uint64_t init = amo_init(0);
    uint64_t cur = init, *d = dest;
    unsigned long long errs = 0;

    shmem_uint64_p(dest, init, peer); /* a plain store, not one of the ops under test */
    shmem_quiet();
    for (int i = 0; i < iters; i++) {
        uint64_t old = amo_do<OP>(d, cur, i, peer);
        if (OP >= AMO_FIRST_NONFETCH) shmem_quiet();
        errs += old != cur;
        cur = amo_next(OP, cur, i);
        d = dest + (old & zero); /* zero is 0 at run time: the next op waits for this one's value */
    }
    shmem_quiet();
    errs += shmem_uint64_g(dest, peer) != cur;
    *bad = errs;
}

int main(int argc, char **argv)
{
    pt_opts_t o = {8, 8, 2, 10000, 1000, 1, 1, 0, 0, NULL};
    const char *names[] = {"latency_us"};
    unsigned long long *bad_d;
    uint64_t *word;
    int me;

    o.accepts = PT_ACCEPT_OP;
    pt_parse(argc, argv, &o);
    amo_check_op(&o);
    o.ctas = o.threads = 1;
    pt_init(&o);
    me = shmem_my_pe();
    word = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(*bad_d)));
    if (me == 0) pt_header_ex(&o, "shmem_uint64_atomic_OP, one thread, dependent ops", NULL, 1, 1, names);
    shmem_barrier_all();
    for (int op = 0; op < AMO_NOPS; op++) {
        /* "all" means the fetching ops; a non-fetching op only when named */
        int named = o.op && strcmp(o.op, "all");
        if (named ? strcmp(o.op, amo_names[op]) != 0 : op >= AMO_FIRST_NONFETCH) continue;
        if (me == 0) {
            unsigned long long bad = 0;
            float ms = 0;
            AMO_DISPATCH(op, amo_latency_kernel, 1, 1, word, 1, o.warmup, 0, bad_d);
            PT_CUDA(cudaDeviceSynchronize());
            PT_TIME_MS(ms, 0, AMO_DISPATCH(op, amo_latency_kernel, 1, 1, word, 1, o.iters, 0, bad_d));
            PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
            if (bad)
                PT_FAIL(&o, "shmem_uint64_atomic_%s: %llu of %d fetched values (and the final word) wrong", amo_names[op],
                        bad, o.iters + 1);
            double us = ms * 1000.0 / o.iters;
            pt_row_ex(&o, amo_names[op], NULL, NULL, sizeof(uint64_t), ms * 1000.0, 1, names, &us);
        }
        shmem_barrier_all();
    }
    shmem_free(word);
    PT_CUDA(cudaFree(bad_d));
    shmem_finalize();
    return 0;
}
