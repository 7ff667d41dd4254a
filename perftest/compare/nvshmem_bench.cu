/* The comparison benchmarks, written once against the NVSHMEM API (nvshmem.h, nvshmemx.h only):
 * run.sh builds this file against NVIDIA NVSHMEM and against gshmem's compatibility headers.
 * Ranks start by hand and meet through the unique-id bootstrap (compare.h shares the id through a
 * file). Point-to-point rows are PE 0 towards PE 1; the others idle. Rank 0 prints one JSON row per
 * (bench, size); every size's data is checked once, and a wrong value ends the job with exit 1. */
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>

#include "compare.h"

static cmp_opts_t opts;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "nvshmem_bench (%s): PE %d: VERIFICATION FAILED: ", opts.lib, nvshmem_my_pe()); \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        fflush(NULL);                                                                              \
        nvshmem_global_exit(1);                                                                    \
    } while (0)

#define CALL_OK(call, what)                                                                        \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0) FAIL("%s returned %d", what, rc_);                                           \
    } while (0)

/* After a timed transfer of size bytes into dst: the checker PE holds the other PE's pattern
 * (a mismatch fails the run), and PE 0 writes the row. */
static void check_and_report(const char *name, const char *dst, size_t size, int checker, double us, int iters)
{
    const int me = nvshmem_my_pe();
    nvshmem_barrier_all();
    if (me == checker) {
        unsigned long long bad = cmp_check((const float *)dst, size / 4, CMP_EXPECT_PE, 1 - checker, 0, 0);
        if (bad) FAIL("%s of %zu bytes: %llu of %zu floats wrong", name, size, bad, size / 4);
    }
    if (me == 0) cmp_row(&opts, name, size, us, iters);
}

/* ---- put/get bandwidth: size bytes split over the CTAs, one *_nbi_block each, one quiet ---- */

static __global__ void bw_kernel(char *dst, const char *src, size_t size, int peer, int get)
{
    size_t chunk = ((size + gridDim.x - 1) / gridDim.x + 15) & ~(size_t)15, off = blockIdx.x * chunk;
    if (off < size) {
        size_t len = size - off < chunk ? size - off : chunk;
        if (get) nvshmemx_getmem_nbi_block(dst + off, src + off, len, peer);
        else nvshmemx_putmem_nbi_block(dst + off, src + off, len, peer);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}

static void bench_bw(int get, cudaStream_t s)
{
    const char *name = get ? "get_bw" : "put_bw";
    const int me = nvshmem_my_pe(), ctas = 32, threads = 256;
    const size_t maxb = 256u << 20;
    char *src = (char *)nvshmem_malloc(maxb), *dst = (char *)nvshmem_malloc(maxb);
    if (!src || !dst) FAIL("%s: nvshmem_malloc of 2 x %zu bytes failed", name, maxb);
    /* put: PE 0 sends its data; get: PE 0 fetches PE 1's */
    cmp_fill((float *)src, maxb / 4, me, 0);
    CMP_FOR_SIZES(&opts, size, (size_t)1024, maxb, 4) {
        const int checker = get ? 0 : 1, iters = cmp_iters(&opts, size);
        double us = 0;
        if (me == checker) CMP_CUDA(cudaMemset(dst, 0, size));
        CMP_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        if (me == 0)
            CMP_GRAPH_TIME(us, s, iters, (bw_kernel<<<ctas, threads, 0, s>>>(dst, src, size, 1, get)), (void)0);
        check_and_report(name, dst, size, checker, us, iters);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ---- put/get latency: one thread, blocking putmem/getmem + quiet, n times in one kernel ---- */

static __global__ void lat_kernel(char *dst, const char *src, size_t size, int peer, int get, int n)
{
    for (int i = 0; i < n; i++) {
        if (get) nvshmem_getmem(dst, src, size, peer);
        else nvshmem_putmem(dst, src, size, peer);
        nvshmem_quiet();
    }
}

/* Times one launch of `launch` on `s` (PE 0's events); returns microseconds. */
#define TIME_US(us, s, launch)                                                                     \
    do {                                                                                           \
        cuda_timer_t timer_ = cuda_timer_start(s, "compare");                                      \
        launch;                                                                                    \
        (us) = cuda_timer_ms(&timer_, s) * 1000.0;                                                 \
        cuda_timer_free(&timer_);                                                                  \
    } while (0)

static void bench_lat(int get, cudaStream_t s)
{
    const char *name = get ? "get_lat" : "put_lat";
    const int me = nvshmem_my_pe(), iters = opts.quick ? 100 : 500;
    const size_t maxb = 64u << 10;
    char *src = (char *)nvshmem_malloc(maxb), *dst = (char *)nvshmem_malloc(maxb);
    if (!src || !dst) FAIL("%s: nvshmem_malloc failed", name);
    cmp_fill((float *)src, maxb / 4, me, 0);
    CMP_FOR_SIZES(&opts, size, (size_t)8, maxb, 8) {
        const int checker = get ? 0 : 1;
        double us = 0;
        if (me == checker) CMP_CUDA(cudaMemset(dst, 0, size));
        CMP_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        if (me == 0) {
            lat_kernel<<<1, 1, 0, s>>>(dst, src, size, 1, get, iters / 10);
            CMP_CUDA(cudaStreamSynchronize(s));
            TIME_US(us, s, (lat_kernel<<<1, 1, 0, s>>>(dst, src, size, 1, get, iters)));
            us /= iters;
        }
        check_and_report(name, dst, size, checker, us, iters);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ---- p latency: int_p + int_wait_until ping-pong between PE 0 and PE 1, one-way time ---- */

static __global__ void pingpong_kernel(int *flag, int n, int me, int *done)
{
    for (int i = 1; i <= n; i++) {
        if (me == 0) {
            nvshmem_int_p(flag, i, 1);
            nvshmem_int_wait_until(flag, NVSHMEM_CMP_EQ, i);
        } else {
            nvshmem_int_wait_until(flag, NVSHMEM_CMP_EQ, i);
            nvshmem_int_p(flag, i, 0);
        }
    }
    *done = *(volatile int *)flag;
}

static void bench_p_lat(cudaStream_t s)
{
    const int me = nvshmem_my_pe(), iters = opts.quick ? 2000 : 10000;
    int *flag = (int *)nvshmem_malloc(sizeof(int)), *done_d, done = 0;
    double us = 0;
    if (!flag) FAIL("p_lat: nvshmem_malloc failed");
    CMP_CUDA(cudaMalloc((void **)&done_d, sizeof(int)));
    for (int timed = 0; timed < 2; timed++) {
        const int n = timed ? iters : iters / 10;
        CMP_CUDA(cudaMemset(flag, 0, sizeof(int)));
        CMP_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        if (me < 2) TIME_US(us, s, (pingpong_kernel<<<1, 1, 0, s>>>(flag, n, me, done_d)));
        CMP_CUDA(cudaMemcpy(&done, done_d, sizeof(int), cudaMemcpyDeviceToHost));
        if (me < 2 && done != n) FAIL("p_lat: the flag ends at %d after %d round trips", done, n);
        nvshmem_barrier_all();
    }
    if (me == 0) cmp_row(&opts, "p_lat", sizeof(int), us / (2.0 * iters), iters);
    nvshmem_barrier_all();
    CMP_CUDA(cudaFree(done_d));
    nvshmem_free(flag);
}

/* ---- atomics latency: one thread, dependent 64-bit atomics on PE 1 ---- */

enum { AMO_FETCH_ADD, AMO_FETCH, AMO_COMPARE_SWAP, AMO_SWAP, AMO_ADD, AMO_COUNT };
static const char *const amo_names[AMO_COUNT] = {"amo_fetch_add", "amo_fetch", "amo_compare_swap", "amo_swap",
                                                 "amo_add+quiet"};

/* Each op leaves the target at n (fetch: 0) and fetches i before step i (fetch: 0); a fetched
 * value that is not is counted in *bad. */
static __global__ void amo_kernel(uint64_t *t, int op, int n, unsigned long long *bad)
{
    unsigned long long wrong = 0;
    for (int i = 0; i < n; i++) {
        uint64_t got = 0, want = (uint64_t)i;
        switch (op) {
        case AMO_FETCH_ADD: got = nvshmem_uint64_atomic_fetch_add(t, 1, 1); break;
        case AMO_FETCH: got = nvshmem_uint64_atomic_fetch(t, 1); want = 0; break;
        case AMO_COMPARE_SWAP: got = nvshmem_uint64_atomic_compare_swap(t, (uint64_t)i, (uint64_t)i + 1, 1); break;
        case AMO_SWAP: got = nvshmem_uint64_atomic_swap(t, (uint64_t)i + 1, 1); break;
        default: nvshmem_uint64_atomic_add(t, 1, 1); nvshmem_quiet(); got = want; break;
        }
        wrong += got != want;
    }
    *bad = wrong;
}

static void bench_amo(cudaStream_t s)
{
    const int me = nvshmem_my_pe(), iters = opts.quick ? 1000 : 5000;
    uint64_t *t = (uint64_t *)nvshmem_malloc(sizeof(uint64_t)), final_ = 0;
    unsigned long long *bad_d, bad = 0;
    if (!t) FAIL("amo: nvshmem_malloc failed");
    CMP_CUDA(cudaMalloc((void **)&bad_d, sizeof(bad)));
    for (int op = 0; op < AMO_COUNT; op++) {
        double us = 0;
        for (int timed = 0; timed < 2; timed++) {
            const int n = timed ? iters : iters / 10;
            if (me == 1) CMP_CUDA(cudaMemset(t, 0, sizeof(*t)));
            CMP_CUDA(cudaDeviceSynchronize());
            nvshmem_barrier_all();
            if (me == 0) {
                TIME_US(us, s, (amo_kernel<<<1, 1, 0, s>>>(t, op, n, bad_d)));
                CMP_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
                if (bad) FAIL("%s: %llu of %d fetched values wrong", amo_names[op], bad, n);
            }
            nvshmem_barrier_all();
            if (me == 1) {
                CMP_CUDA(cudaMemcpy(&final_, t, sizeof(final_), cudaMemcpyDeviceToHost));
                if (final_ != (op == AMO_FETCH ? 0u : (uint64_t)n))
                    FAIL("%s: the target ends at %llu after %d ops", amo_names[op], (unsigned long long)final_, n);
            }
        }
        if (me == 0) cmp_row(&opts, amo_names[op], sizeof(uint64_t), us / iters, iters);
    }
    nvshmem_barrier_all();
    CMP_CUDA(cudaFree(bad_d));
    nvshmem_free(t);
}

/* ---- barrier: in a kernel (one thread, n barrier_all) and barrier_all_on_stream in a graph ---- */

static __global__ void barrier_kernel(int n)
{
    for (int i = 0; i < n; i++) nvshmem_barrier_all();
}

static void bench_barrier(cudaStream_t s)
{
    const int iters = opts.quick ? 1000 : 5000;
    double us = 0;
    for (int timed = 0; timed < 2; timed++) {
        int n = timed ? iters : iters / 10;
        void *args[] = {&n};
        nvshmem_barrier_all();
        TIME_US(us, s, CALL_OK(nvshmemx_collective_launch((const void *)barrier_kernel, dim3(1), dim3(1), args, 0, s),
                               "nvshmemx_collective_launch"));
    }
    if (nvshmem_my_pe() == 0) cmp_row(&opts, "barrier", 0, us / iters, iters);
    nvshmem_barrier_all();
}

static void bench_barrier_on_stream(cudaStream_t s)
{
    const int iters = opts.quick ? 250 : 1000;
    double us = 0;
    nvshmem_barrier_all();
    CMP_GRAPH_TIME(us, s, iters, nvshmemx_barrier_all_on_stream(s), nvshmem_barrier_all());
    if (nvshmem_my_pe() == 0) cmp_row(&opts, "barrier_on_stream", 0, us, iters);
    nvshmem_barrier_all();
}

/* ---- collectives on a stream, float, NVSHMEM_TEAM_WORLD ---- */

enum { C_REDUCE, C_FCOLLECT, C_ALLTOALL, C_BCAST, C_COUNT };
static const char *const coll_names[C_COUNT] = {"allreduce", "fcollect", "alltoall", "broadcast"};

static int coll_call(int c, float *dst, const float *src, size_t n, cudaStream_t s)
{
    switch (c) {
    case C_REDUCE: return nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, dst, src, n, s);
    case C_FCOLLECT: return nvshmemx_float_fcollect_on_stream(NVSHMEM_TEAM_WORLD, dst, src, n, s);
    case C_ALLTOALL: return nvshmemx_float_alltoall_on_stream(NVSHMEM_TEAM_WORLD, dst, src, n, s);
    default: return nvshmemx_float_broadcast_on_stream(NVSHMEM_TEAM_WORLD, dst, src, n, 0, s);
    }
}

/* Sizes: the vector (allreduce, broadcast) or one PE's block (fcollect; alltoall: the block for
 * one peer), as nccl_bench.cu counts them; algbw = size / time. */
static void bench_coll(int c, cudaStream_t s)
{
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const size_t maxb = c == C_REDUCE || c == C_BCAST ? 128u << 20 : 8u << 20;
    const size_t sblk = c == C_ALLTOALL ? npes : 1, dblk = c == C_ALLTOALL || c == C_FCOLLECT ? npes : 1;
    float *src = (float *)nvshmem_malloc(maxb * sblk), *dst = (float *)nvshmem_malloc(maxb * dblk);
    if (!src || !dst) FAIL("%s: nvshmem_malloc of %zu bytes failed", coll_names[c], maxb * (sblk + dblk));
    /* element k of my source is cmp_value(me, k): for alltoall, block p (k = p*n..) goes to PE p */
    cmp_fill(src, maxb / 4 * sblk, me, 0);
    CMP_FOR_SIZES(&opts, size, (size_t)8, maxb, 4) {
        const size_t n = size / 4, nout = n * dblk;
        const int iters = cmp_iters(&opts, size * (sblk > dblk ? sblk : dblk));
        double us = 0;
        /* one call outside the graph: a failing call is reported here, not inside a capture */
        nvshmem_barrier_all();
        CALL_OK(coll_call(c, dst, src, n, s), coll_names[c]);
        CMP_CUDA(cudaStreamSynchronize(s));
        CMP_CUDA(cudaMemset(dst, 0, nout * 4)); /* the graph must write the result again */
        CMP_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        CMP_GRAPH_TIME(us, s, iters, coll_call(c, dst, src, n, s), nvshmem_barrier_all());
        nvshmem_barrier_all();
        if (!(c == C_BCAST && me == 0)) {
            int kind = c == C_REDUCE ? CMP_EXPECT_SUM : c == C_FCOLLECT ? CMP_EXPECT_BLOCKS_SAME
                       : c == C_ALLTOALL ? CMP_EXPECT_BLOCKS_MINE : CMP_EXPECT_PE;
            unsigned long long bad = cmp_check(dst, nout, kind, c == C_BCAST ? 0 : me, npes, n);
            if (bad) FAIL("%s of %zu bytes: %llu of %zu floats wrong", coll_names[c], size, bad, nout);
        }
        if (me == 0) cmp_row(&opts, coll_names[c], size, us, iters);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* What a program meets first, right after init: the first nvshmem_malloc (1 GiB, so that the heap
 * must grow) and then the first barrier. One sample each, timed on the host; the rows say "us" of
 * that one call (bytes 0: nothing is moved). */
static void bench_first_use(void)
{
    const size_t gib = 1ull << 30;
    double t0 = cmp_now_us();
    void *p = nvshmem_malloc(gib);
    double t1 = cmp_now_us();
    if (!p) FAIL("first_use: nvshmem_malloc of %zu bytes failed", gib);
    nvshmem_barrier_all();
    double t2 = cmp_now_us();
    if (opts.rank == 0) {
        cmp_row(&opts, "first_malloc_1GiB", 0, t1 - t0, 1);
        cmp_row(&opts, "first_barrier", 0, t2 - t1, 1);
    }
    nvshmem_free(p);
}

int main(int argc, char **argv)
{
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_uniqueid_t uid = NVSHMEMX_UNIQUEID_INITIALIZER;
    cudaStream_t s;
    int rc;

    cmp_parse(argc, argv, &opts);
    cmp_pick_gpu(&opts);
    if (opts.rank == 0 && (rc = nvshmemx_get_uniqueid(&uid)) != 0) {
        fprintf(stderr, "nvshmem_bench (%s): nvshmemx_get_uniqueid returned %d\n", opts.lib, rc);
        return 1;
    }
    if (cmp_share_uid(&opts, &uid, sizeof(uid))) return 1;
    if ((rc = nvshmemx_set_attr_uniqueid_args(opts.rank, opts.nranks, &uid, &attr)) != 0 ||
        (rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) != 0) {
        fprintf(stderr, "nvshmem_bench (%s): rank %d: unique-id init failed (%d)\n", opts.lib, opts.rank, rc);
        return 1;
    }
    if (nvshmem_n_pes() != opts.nranks || nvshmem_my_pe() != opts.rank) {
        fprintf(stderr, "nvshmem_bench (%s): PE %d of %d, but started as rank %d of %d\n", opts.lib, nvshmem_my_pe(),
                nvshmem_n_pes(), opts.rank, opts.nranks);
        nvshmem_global_exit(1);
    }
    if (nvshmem_n_pes() < 2) {
        fprintf(stderr, "nvshmem_bench (%s): needs 2 or more PEs, has %d\n", opts.lib, nvshmem_n_pes());
        nvshmem_global_exit(1);
    }
    CMP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (cmp_selected(&opts, "first_use")) bench_first_use(); /* before anything else touches the heap */
    cmp_spinup();
    nvshmem_barrier_all();

    if (cmp_selected(&opts, "put_bw")) bench_bw(0, s);
    if (cmp_selected(&opts, "get_bw")) bench_bw(1, s);
    if (cmp_selected(&opts, "put_lat")) bench_lat(0, s);
    if (cmp_selected(&opts, "get_lat")) bench_lat(1, s);
    if (cmp_selected(&opts, "p_lat")) bench_p_lat(s);
    if (cmp_selected(&opts, "amo")) bench_amo(s);
    if (cmp_selected(&opts, "barrier")) bench_barrier(s);
    if (cmp_selected(&opts, "barrier_on_stream")) bench_barrier_on_stream(s);
    for (int c = 0; c < C_COUNT; c++)
        if (cmp_selected(&opts, coll_names[c])) bench_coll(c, s);

    CMP_CUDA(cudaStreamDestroy(s));
    nvshmem_barrier_all();
    nvshmem_finalize();
    return 0;
}
