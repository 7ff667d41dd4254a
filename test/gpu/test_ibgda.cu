/* The IBGDA device path end to end (run with GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=emulated
 * GSHMEM_DISABLE_P2P=1; with other settings it checks the same calls over whatever route a peer
 * has). Every PE, to every other PE: puts from the symmetric heap and from a cudaMalloc buffer,
 * blocking and nbi + quiet, gets, p and g of several widths, at sizes 1 B .. 8 MiB at an odd
 * offset; many threads posting at once (more WQEs than the SQ holds: back-pressure) and more than
 * 65536 WQEs to one peer (the 16-bit WQE counter wraps); quiet then a flag, the peer checking the
 * data in its kernel; atomics of 4 and 8 bytes by 128 threads at once (fetch-add, add, compare-
 * swap, swap, and, or, xor, fetch) and signal adds. Every byte checked, and the bytes around each
 * transfer. */
#include <string.h>

#include "gpu_test.cuh"

#define OFF 3                  /* odd offset of every transfer */
#define MAX_BYTES (8u << 20)
#define SLOT (MAX_BYTES + 64)  /* per source PE in recv */
#define NP 1024                /* ints of the p/g areas */

static const size_t sizes[] = {1, 7, 8, 100, 4096, 65537, 1u << 20, MAX_BYTES};

enum { K_PUT, K_PUT_NBI_PRIV, K_GET, K_GET_NBI_PRIV };

/* Block b: target PE b (itself skipped). put: src -> recv slot me on b; get: b's src -> recv slot b here. */
static __global__ void rma_kernel(int kind, unsigned char *recv, const unsigned char *src, unsigned char *priv, size_t n)
{
    const int t = blockIdx.x, me = shmem_my_pe();
    if (t == me || threadIdx.x != 0) return;
    unsigned char *slot_me = recv + (size_t)me * SLOT + OFF, *slot_t = recv + (size_t)t * SLOT + OFF;
    switch (kind) {
    case K_PUT: shmem_putmem(slot_me, src + OFF, n, t); break;
    case K_PUT_NBI_PRIV: shmem_putmem_nbi(slot_me, priv + OFF, n, t); shmem_quiet(); break;
    case K_GET: shmem_getmem(slot_t, src + OFF, n, t); break;
    case K_GET_NBI_PRIV: shmem_getmem_nbi(priv + (size_t)t * SLOT + OFF, src + OFF, n, t); shmem_quiet(); break;
    }
}

/* Every element of the p area of every other PE, by all threads at once, rounds times: element e
 * ends as (rounds - 1) * NP + e (one thread writes e, in order, over one QP). */
static __global__ void p_kernel(int *parea, int rounds)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (int r = 0; r < rounds; r++)
        for (int e = threadIdx.x; e < NP; e += blockDim.x)
            for (int pe = 0; pe < n; pe++)
                if (pe != me) shmem_int_p(parea + (size_t)me * NP + e, r * NP + e, pe);
    shmem_quiet();
}

/* g of every width from every other PE's g area: long, int, short, char of value base + i. */
static __global__ void g_kernel(const long *garea, long *out, int *bad)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (int pe = 0; pe < n; pe++) {
        if (pe == me) continue;
        for (int i = threadIdx.x; i < 256; i += blockDim.x) {
            const long want = (long)pe * 100000 + i;
            long v = shmem_long_g(garea + i, pe);
            int vi = shmem_int_g((const int *)(garea + i), pe);            /* low half (little-endian) */
            short vs = shmem_short_g((const short *)(garea + i), pe);
            char vc = shmem_char_g((const char *)(garea + i), pe);
            if (v != want || vi != (int)want || vs != (short)want || vc != (char)want) atomicAdd(bad, 1);
            out[(size_t)pe * 256 + i] = v;
        }
    }
}

/* Data then quiet then a flag; the peer waits for the flag and checks the data in its kernel. */
static __global__ void flag_kernel(unsigned char *data, const unsigned char *src, uint64_t *flags, size_t n, int *bad)
{
    const int me = shmem_my_pe(), np = shmem_n_pes();
    if (threadIdx.x != 0) return;
    for (int pe = 0; pe < np; pe++) {
        if (pe == me) continue;
        shmem_putmem_nbi(data + (size_t)me * n, src, n, pe);
        shmem_quiet();
        shmem_uint64_p(flags + me, 1, pe);
    }
    for (int pe = 0; pe < np; pe++) {
        if (pe == me) continue;
        shmem_uint64_wait_until(flags + pe, SHMEM_CMP_EQ, 1);
        for (size_t i = 0; i < n; i++)
            if (data[(size_t)pe * n + i] != gt_pattern(pe, i, 9)) {
                atomicAdd(bad, 1);
                break;
            }
    }
}

/* Atomics: W words per source PE in each area of every other PE. 128 threads each:
 *   a64[me]: fetch_add 1 (the old values are 0..127, each once); a32[me]: add 2 (4 bytes)
 *   cas64[me]: compare_swap 0 -> tid + 1 (one thread wins); cas32[me] the same, 4 bytes
 *   or64[me]: or of bit tid % 64 (all ones); and64[me]: and of ~bit (from all ones: 0)
 *   xor64[me]: xor of bit tid % 64, each bit twice (unchanged); or32[me]: or of bit tid % 32
 *   swap64[me]: swap tid + 1000 (ends as one of them); sig[me]: signal add 3 */
#define AMO_THREADS 128
struct amo_areas {
    unsigned long long *a64, *cas64, *or64, *and64, *xor64, *swap64;
    unsigned int *a32, *cas32, *or32;
    uint64_t *sig;
};
#define XOR_START 0x0123456789abcdefull

static __global__ void amo_kernel(amo_areas a, int *bad, int *wins)
{
    const int me = shmem_my_pe(), n = shmem_n_pes(), tid = threadIdx.x;
    for (int pe = 0; pe < n; pe++) {
        if (pe == me) continue;
        unsigned long long o = shmem_ulonglong_atomic_fetch_add(a.a64 + me, 1, pe);
        if (o >= AMO_THREADS) atomicAdd(bad, 1);
        shmem_uint_atomic_add(a.a32 + me, 2, pe);
        if (shmem_ulonglong_atomic_compare_swap(a.cas64 + me, 0, tid + 1, pe) == 0) atomicAdd(&wins[2 * pe], 1);
        if (shmem_uint_atomic_compare_swap(a.cas32 + me, 0, tid + 1, pe) == 0) atomicAdd(&wins[2 * pe + 1], 1);
        shmem_ulonglong_atomic_or(a.or64 + me, 1ull << (tid % 64), pe);
        shmem_ulonglong_atomic_and(a.and64 + me, ~(1ull << (tid % 64)), pe);
        shmem_ulonglong_atomic_xor(a.xor64 + me, 1ull << (tid % 64), pe);
        shmem_uint_atomic_or(a.or32 + me, 1u << (tid % 32), pe);
        unsigned long long was = shmem_ulonglong_atomic_swap(a.swap64 + me, tid + 1000, pe);
        if (was != 5 && (was < 1000 || was >= 1000 + AMO_THREADS)) atomicAdd(bad, 1);
        shmemx_signal_op(a.sig + me, 3, SHMEM_SIGNAL_ADD, pe);
    }
    shmem_quiet();
    for (int pe = 0; pe < n; pe++)
        if (pe != me && shmem_ulonglong_atomic_fetch(a.a64 + me, pe) != AMO_THREADS) atomicAdd(bad, 1);
}

static void check_bytes(const unsigned char *h, size_t n, int src_pe, unsigned tag, const char *what, int pe)
{
    for (size_t i = 0; i < OFF; i++) GT_CHECK(h[i] == 0, "%s from PE %d, %zu bytes: guard byte %zu before is %u", what, pe, n, i, h[i]);
    for (size_t i = 0; i < n; i++)
        GT_CHECK(h[OFF + i] == gt_pattern(src_pe, i + OFF, tag), "%s with PE %d, %zu bytes: byte %zu is %u, expected %u", what, pe, n, i,
                 h[OFF + i], gt_pattern(src_pe, i + OFF, tag));
    for (size_t i = 0; i < 8; i++) GT_CHECK(h[OFF + n + i] == 0, "%s with PE %d, %zu bytes: guard byte %zu after is %u", what, pe, n, i, h[OFF + n + i]);
}

/* --inject (with GSHMEM_IBGDA_INJECT_BAD_RKEY=40, test_ibgda_inject.sh): 64 blocking puts, one of
 * which is the QP's 40th WQE whatever init and the barriers posted before (fewer than 40); the put
 * waiting on it reports the error CQE and traps. */
static __global__ void inject_kernel(unsigned char *recv, const unsigned char *src)
{
    const int me = shmem_my_pe(), pe = (me + 1) % shmem_n_pes();
    for (int i = 0; i < 64; i++) shmem_putmem(recv + i * 64, src + i * 64, 64, pe);
}

int main(int argc, char **argv)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    if (argc > 1 && strcmp(argv[1], "--inject") == 0) {
        unsigned char *a = (unsigned char *)shmem_calloc(2, 4096);
        GT_CHECK(a, "shmem_calloc failed");
        shmem_barrier_all();
        inject_kernel<<<1, 1>>>(a, a + 4096);
        cudaError_t err = cudaDeviceSynchronize();
        fprintf(stderr, "PE %d: inject kernel: %s\n", me, cudaGetErrorString(err));
        return err == cudaSuccess ? 0 : 3; /* no finalize after a trap */
    }
    if (n < 2) {
        fprintf(stderr, "test_ibgda needs 2 or more PEs\n");
        shmem_finalize();
        return 77;
    }
    unsigned char *src = (unsigned char *)shmem_malloc(SLOT);
    unsigned char *recv = (unsigned char *)shmem_malloc((size_t)n * SLOT);
    int *parea = (int *)shmem_malloc((size_t)n * NP * sizeof(int));
    long *garea = (long *)shmem_malloc(256 * sizeof(long));
    uint64_t *flags = (uint64_t *)shmem_calloc((size_t)n, sizeof(uint64_t));
    unsigned char *fdata = (unsigned char *)shmem_calloc((size_t)n, 4096);
    unsigned char *priv, *fsrc;
    long *gout;
    int *bad;
    GT_CHECK(src && recv && parea && garea && flags && fdata, "shmem_malloc failed");
    GT_CUDA(cudaMalloc((void **)&priv, (size_t)n * SLOT));
    GT_CUDA(cudaMalloc((void **)&fsrc, 4096));
    GT_CUDA(cudaMalloc((void **)&gout, (size_t)n * 256 * sizeof(long)));
    GT_CUDA(cudaMallocManaged((void **)&bad, sizeof(int)));
    unsigned char *h = (unsigned char *)malloc(SLOT);
    GT_CHECK(h, "malloc");

    int remote = 0;
    for (int pe = 0; pe < n; pe++) remote += pe != me && shmem_ptr(src, pe) == NULL;
    if (me == 0) printf("test_ibgda: %d PEs, %d of PE 0's peers remote\n", n, remote);

    gt_fill<<<64, 256>>>(src, SLOT, me, 1);
    GT_CUDA(cudaDeviceSynchronize());
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        const size_t sz = sizes[si];
        for (int kind = K_PUT; kind <= K_GET_NBI_PRIV; kind++) {
            const char *what = kind == K_PUT ? "put" : kind == K_PUT_NBI_PRIV ? "put_nbi from cudaMalloc" : kind == K_GET ? "get" : "get_nbi into cudaMalloc";
            GT_CUDA(cudaMemset(recv, 0, (size_t)n * SLOT));
            GT_CUDA(cudaMemset(priv, 0, (size_t)n * SLOT));
            if (kind == K_PUT_NBI_PRIV) gt_fill<<<64, 256>>>(priv, SLOT, me, 1);
            GT_CUDA(cudaDeviceSynchronize());
            shmem_barrier_all();
            rma_kernel<<<n, 32>>>(kind, recv, src, priv, sz);
            GT_CUDA(cudaDeviceSynchronize());
            shmem_barrier_all();
            for (int pe = 0; pe < n; pe++) {
                if (pe == me) continue;
                const unsigned char *at = kind == K_GET_NBI_PRIV ? priv + (size_t)pe * SLOT : recv + (size_t)pe * SLOT;
                GT_CUDA(cudaMemcpy(h, at, OFF + sz + 8, cudaMemcpyDeviceToHost));
                check_bytes(h, sz, pe, 1, what, pe);
            }
        }
        if (me == 0) printf("test_ibgda: put/get of %zu bytes to and from every PE: ok\n", sz);
    }

    /* p by 256 threads at once, 72 rounds: 73728 WQEs to each peer (the 16-bit counter wraps; 72x the SQ) */
    const int rounds = gt_quick() ? 4 : 72;
    GT_CUDA(cudaMemset(parea, 0, (size_t)n * NP * sizeof(int)));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    p_kernel<<<1, 256>>>(parea, rounds);
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    {
        int *hp = (int *)malloc((size_t)n * NP * sizeof(int));
        GT_CHECK(hp, "malloc");
        GT_CUDA(cudaMemcpy(hp, parea, (size_t)n * NP * sizeof(int), cudaMemcpyDeviceToHost));
        for (int pe = 0; pe < n; pe++)
            for (int e = 0; pe != me && e < NP; e++)
                GT_CHECK(hp[(size_t)pe * NP + e] == (rounds - 1) * NP + e, "int_p from PE %d: element %d is %d, expected %d", pe, e,
                         hp[(size_t)pe * NP + e], (rounds - 1) * NP + e);
        free(hp);
    }
    if (me == 0) printf("test_ibgda: %d int_p per peer by 256 threads: ok\n", rounds * NP);

    /* g of every width */
    {
        long hg[256];
        for (int i = 0; i < 256; i++) hg[i] = (long)me * 100000 + i;
        GT_CUDA(cudaMemcpy(garea, hg, sizeof(hg), cudaMemcpyHostToDevice));
        *bad = 0;
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        g_kernel<<<1, 128>>>(garea, gout, bad);
        GT_CUDA(cudaDeviceSynchronize());
        GT_CHECK(*bad == 0, "%d g values wrong", *bad);
        shmem_barrier_all();
        if (me == 0) printf("test_ibgda: long/int/short/char g from every PE: ok\n");
    }

    /* quiet, then a flag: the peer sees the data once it sees the flag */
    gt_fill<<<4, 256>>>(fsrc, 4096, me, 9);
    *bad = 0;
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    flag_kernel<<<1, 32>>>(fdata, fsrc, flags, 4096, bad);
    GT_CUDA(cudaDeviceSynchronize());
    GT_CHECK(*bad == 0, "%d peers' data not there when their flag was", *bad);
    shmem_barrier_all();
    if (me == 0) printf("test_ibgda: put_nbi, quiet, flag: ok\n");

    /* atomics */
    {
        const int W = n;
        unsigned long long *a64 = (unsigned long long *)shmem_calloc((size_t)6 * W, sizeof(unsigned long long));
        unsigned int *a32 = (unsigned int *)shmem_calloc((size_t)3 * W, sizeof(unsigned int));
        uint64_t *sig = (uint64_t *)shmem_calloc((size_t)W, sizeof(uint64_t));
        int *wins;
        GT_CHECK(a64 && a32 && sig, "shmem_calloc failed");
        GT_CUDA(cudaMallocManaged((void **)&wins, 2 * (size_t)n * sizeof(int)));
        memset(wins, 0, 2 * (size_t)n * sizeof(int));
        amo_areas a = {a64, a64 + W, a64 + 2 * W, a64 + 3 * W, a64 + 4 * W, a64 + 5 * W, a32, a32 + W, a32 + 2 * W, sig};
        unsigned long long init[6 * 64];
        GT_CHECK(W <= 64, "at most 64 PEs");
        memset(init, 0, sizeof(init));
        for (int i = 0; i < W; i++) {
            init[3 * W + i] = ~0ull;     /* and64 */
            init[4 * W + i] = XOR_START; /* xor64 */
            init[5 * W + i] = 5;         /* swap64 */
        }
        GT_CUDA(cudaMemcpy(a64, init, (size_t)6 * W * sizeof(unsigned long long), cudaMemcpyHostToDevice));
        *bad = 0;
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        amo_kernel<<<1, AMO_THREADS>>>(a, bad, wins);
        GT_CUDA(cudaDeviceSynchronize());
        GT_CHECK(*bad == 0, "%d atomics returned a wrong old value", *bad);
        for (int pe = 0; pe < n; pe++)
            if (pe != me) GT_CHECK(wins[2 * pe] == 1 && wins[2 * pe + 1] == 1, "compare_swap on PE %d: %d and %d winners (8 and 4 bytes)", pe,
                                   wins[2 * pe], wins[2 * pe + 1]);
        shmem_barrier_all();
        unsigned long long r64[6 * 64];
        unsigned int r32[3 * 64];
        uint64_t rs[64];
        GT_CUDA(cudaMemcpy(r64, a64, (size_t)6 * W * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        GT_CUDA(cudaMemcpy(r32, a32, (size_t)3 * W * sizeof(unsigned int), cudaMemcpyDeviceToHost));
        GT_CUDA(cudaMemcpy(rs, sig, (size_t)W * sizeof(uint64_t), cudaMemcpyDeviceToHost));
        for (int pe = 0; pe < n; pe++) {
            if (pe == me) continue;
            GT_CHECK(r64[pe] == AMO_THREADS, "fetch_add from PE %d: %llu", pe, r64[pe]);
            GT_CHECK(r32[pe] == 2 * AMO_THREADS, "uint add from PE %d: %u", pe, r32[pe]);
            GT_CHECK(r64[W + pe] >= 1 && r64[W + pe] <= AMO_THREADS, "compare_swap from PE %d: %llu", pe, r64[W + pe]);
            GT_CHECK(r32[W + pe] >= 1 && r32[W + pe] <= AMO_THREADS, "uint compare_swap from PE %d: %u", pe, r32[W + pe]);
            GT_CHECK(r64[2 * W + pe] == ~0ull, "or from PE %d: %#llx", pe, r64[2 * W + pe]);
            GT_CHECK(r64[3 * W + pe] == 0, "and from PE %d: %#llx", pe, r64[3 * W + pe]);
            GT_CHECK(r64[4 * W + pe] == XOR_START, "xor from PE %d: %#llx", pe, r64[4 * W + pe]);
            GT_CHECK(r32[2 * W + pe] == 0xffffffffu, "uint or from PE %d: %#x", pe, r32[2 * W + pe]);
            GT_CHECK(r64[5 * W + pe] >= 1000 && r64[5 * W + pe] < 1000 + AMO_THREADS, "swap from PE %d: %llu", pe, r64[5 * W + pe]);
            GT_CHECK(rs[pe] == 3 * AMO_THREADS, "signal add from PE %d: %llu", pe, (unsigned long long)rs[pe]);
        }
        GT_CUDA(cudaFree(wins));
        gt_shmem_free(sig, a32, a64);
        if (me == 0) printf("test_ibgda: atomics of 4 and 8 bytes and signal adds by %d threads to every PE: ok\n", AMO_THREADS);
    }

    free(h);
    gt_cuda_free(priv, fsrc, gout, bad);
    gt_shmem_free(fdata, flags, garea, parea, recv, src);
    shmem_finalize();
    if (me == 0) printf("test_ibgda: passed\n");
    return 0;
}
