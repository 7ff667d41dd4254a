/* The collectives of the comparison through NCCL, timed as nvshmem_bench.cu times them: -n calls
 * captured in one CUDA graph, launched once to warm up and then 3 times; time per call. Rows use
 * the NVSHMEM names so that they line up: allreduce (ncclAllReduce, float sum, out of place),
 * fcollect (ncclAllGather), alltoall (grouped ncclSend/ncclRecv, one block per peer) and broadcast
 * (ncclBroadcast from rank 0). Ranks meet through ncclGetUniqueId shared in a file (compare.h).
 * NCCL needs a GPU per rank: with fewer GPUs than ranks this says so and exits 77 (skipped). */
#include <nccl.h>

#include "compare.h"

static cmp_opts_t opts;
static ncclComm_t comm;

#define NCCL_OK(call)                                                                              \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            fprintf(stderr, "nccl_bench: rank %d: %s failed: %s\n", opts.rank, #call, ncclGetErrorString(r_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* A host barrier: a one-float allreduce, waited for. */
static void barrier(float *tmp, cudaStream_t s)
{
    NCCL_OK(ncclAllReduce(tmp, tmp, 1, ncclFloat, ncclSum, comm, s));
    CMP_CUDA(cudaStreamSynchronize(s));
}

enum { C_REDUCE, C_FCOLLECT, C_ALLTOALL, C_BCAST, C_COUNT };
static const char *const coll_names[C_COUNT] = {"allreduce", "fcollect", "alltoall", "broadcast"};

static ncclResult_t coll_call(int c, float *dst, const float *src, size_t n, cudaStream_t s)
{
    switch (c) {
    case C_REDUCE: return ncclAllReduce(src, dst, n, ncclFloat, ncclSum, comm, s);
    case C_FCOLLECT: return ncclAllGather(src, dst, n, ncclFloat, comm, s);
    case C_ALLTOALL: {
        ncclResult_t r = ncclGroupStart();
        for (int p = 0; p < opts.nranks && r == ncclSuccess; p++) {
            r = ncclSend(src + (size_t)p * n, n, ncclFloat, p, comm, s);
            if (r == ncclSuccess) r = ncclRecv(dst + (size_t)p * n, n, ncclFloat, p, comm, s);
        }
        ncclResult_t e = ncclGroupEnd();
        return r != ncclSuccess ? r : e;
    }
    default: return ncclBroadcast(src, dst, n, ncclFloat, 0, comm, s);
    }
}

static void bench_coll(int c, float *tmp, cudaStream_t s)
{
    const int me = opts.rank, npes = opts.nranks;
    const size_t maxb = c == C_REDUCE || c == C_BCAST ? 128u << 20 : 8u << 20;
    const size_t sblk = c == C_ALLTOALL ? npes : 1, dblk = c == C_ALLTOALL || c == C_FCOLLECT ? npes : 1;
    float *src, *dst;
    CMP_CUDA(cudaMalloc((void **)&src, maxb * sblk));
    CMP_CUDA(cudaMalloc((void **)&dst, maxb * dblk));
    cmp_fill(src, maxb / 4 * sblk, me, 0);
    CMP_FOR_SIZES(&opts, size, (size_t)8, maxb, 4) {
        const size_t n = size / 4, nout = n * dblk;
        const int iters = cmp_iters(&opts, size * (sblk > dblk ? sblk : dblk));
        double us = 0;
        barrier(tmp, s);
        NCCL_OK(coll_call(c, dst, src, n, s));
        CMP_CUDA(cudaStreamSynchronize(s));
        CMP_CUDA(cudaMemset(dst, 0, nout * 4));
        CMP_CUDA(cudaDeviceSynchronize());
        barrier(tmp, s);
        CMP_GRAPH_TIME(us, s, iters, NCCL_OK(coll_call(c, dst, src, n, s)), barrier(tmp, s));
        barrier(tmp, s);
        if (!(c == C_BCAST && me == 0)) {
            int kind = c == C_REDUCE ? CMP_EXPECT_SUM : c == C_FCOLLECT ? CMP_EXPECT_BLOCKS_SAME
                       : c == C_ALLTOALL ? CMP_EXPECT_BLOCKS_MINE : CMP_EXPECT_PE;
            unsigned long long bad = cmp_check(dst, nout, kind, c == C_BCAST ? 0 : me, npes, n);
            if (bad) {
                fprintf(stderr, "nccl_bench: rank %d: VERIFICATION FAILED: %s of %zu bytes: %llu of %zu floats wrong\n", me,
                        coll_names[c], size, bad, nout);
                exit(1);
            }
        }
        if (me == 0) cmp_row(&opts, coll_names[c], size, us, iters);
    }
    barrier(tmp, s);
    CMP_CUDA(cudaFree(dst));
    CMP_CUDA(cudaFree(src));
}

int main(int argc, char **argv)
{
    ncclUniqueId id;
    cudaStream_t s;
    float *tmp;
    int ngpus;

    cmp_parse(argc, argv, &opts);
    ngpus = cmp_pick_gpu(&opts);
    if (ngpus < opts.nranks) {
        fprintf(stderr, "nccl_bench: skipped: NCCL needs a GPU per rank (%d ranks, %d GPUs)\n", opts.nranks, ngpus);
        return 77;
    }
    memset(&id, 0, sizeof(id));
    if (opts.rank == 0) NCCL_OK(ncclGetUniqueId(&id));
    if (cmp_share_uid(&opts, &id, sizeof(id))) return 1;
    NCCL_OK(ncclCommInitRank(&comm, opts.nranks, id, opts.rank));
    CMP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CMP_CUDA(cudaMalloc((void **)&tmp, sizeof(float)));
    cmp_spinup();
    barrier(tmp, s);
    for (int c = 0; c < C_COUNT; c++)
        if (cmp_selected(&opts, coll_names[c])) bench_coll(c, tmp, s);
    barrier(tmp, s);
    CMP_CUDA(cudaFree(tmp));
    CMP_CUDA(cudaStreamDestroy(s));
    NCCL_OK(ncclCommDestroy(comm));
    return 0;
}
