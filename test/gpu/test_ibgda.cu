/* The IBGDA device path end to end (run with GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=emulated
 * GSHMEM_DISABLE_P2P=1; with other settings it checks the same calls over whatever route a peer
 * has). Every PE, to every other PE: puts from the symmetric heap and from a cudaMalloc buffer,
 * blocking and nbi + quiet, gets, p and g of several widths, at sizes 1 B .. 8 MiB at an odd
 * offset; many threads posting at once (more WQEs than the SQ holds: back-pressure) and more than
 * 65536 WQEs to one peer (the 16-bit WQE counter wraps); quiet then a flag, the peer checking the
 * data in its kernel. Every byte checked, and the bytes around each transfer. */
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

static void check_bytes(const unsigned char *h, size_t n, int src_pe, unsigned tag, const char *what, int pe)
{
    for (size_t i = 0; i < OFF; i++) GT_CHECK(h[i] == 0, "%s from PE %d, %zu bytes: guard byte %zu before is %u", what, pe, n, i, h[i]);
    for (size_t i = 0; i < n; i++)
        GT_CHECK(h[OFF + i] == gt_pattern(src_pe, i + OFF, tag), "%s with PE %d, %zu bytes: byte %zu is %u, expected %u", what, pe, n, i,
                 h[OFF + i], gt_pattern(src_pe, i + OFF, tag));
    for (size_t i = 0; i < 8; i++) GT_CHECK(h[OFF + n + i] == 0, "%s with PE %d, %zu bytes: guard byte %zu after is %u", what, pe, n, i, h[OFF + n + i]);
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
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

    free(h);
    GT_CUDA(cudaFree(priv));
    GT_CUDA(cudaFree(fsrc));
    GT_CUDA(cudaFree(gout));
    GT_CUDA(cudaFree(bad));
    shmem_free(fdata);
    shmem_free(flags);
    shmem_free(garea);
    shmem_free(parea);
    shmem_free(recv);
    shmem_free(src);
    shmem_finalize();
    if (me == 0) printf("test_ibgda: passed\n");
    return 0;
}
