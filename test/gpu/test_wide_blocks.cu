/* Kernels written as users write them, launched at 1024 threads a block (the most a block may
 * have, which needs at most 64 registers a thread): loops of putmem and getmem at block, warp and
 * thread scope (blocking and _nbi), a typed block put, a put-with-signal, int_p and a fetch-add per
 * thread. Each kernel's registers are printed; every launch is checked and every datum, whichever
 * transport reaches the next PE. */
#include "gpu_test.cuh"

#define THREADS 1024
#define CTAS 8
#define PER_CTA (64 * 1024) /* bytes each CTA moves per call */
#define ROUNDS 4

__global__ void put_loop(char *dest, const char *src, int peer, int rounds)
{
    const size_t off = (size_t)blockIdx.x * PER_CTA;
    for (int i = 0; i < rounds; i++) shmemx_putmem_nbi_block(dest + off, src + off, PER_CTA, peer);
    __syncthreads();
    if (threadIdx.x == 0) shmem_quiet();
}

__global__ void get_loop(char *dest, const char *src, int peer, int rounds)
{
    const size_t off = (size_t)blockIdx.x * PER_CTA;
    for (int i = 0; i < rounds; i++) shmemx_getmem_nbi_block(dest + off, src + off, PER_CTA, peer);
    __syncthreads();
    if (threadIdx.x == 0) shmem_quiet();
}

/* each warp (each thread) moves its own part of the CTA's PER_CTA bytes */
__global__ void put_warps(char *dest, const char *src, int peer)
{
    const size_t part = PER_CTA / (THREADS / 32), off = (size_t)blockIdx.x * PER_CTA + (threadIdx.x / 32) * part;
    shmemx_putmem_warp(dest + off, src + off, part, peer);
}

__global__ void get_nbi_warps(char *dest, const char *src, int peer)
{
    const size_t part = PER_CTA / (THREADS / 32), off = (size_t)blockIdx.x * PER_CTA + (threadIdx.x / 32) * part;
    shmemx_getmem_nbi_warp(dest + off, src + off, part, peer);
    shmem_quiet();
}

__global__ void put_threads(char *dest, const char *src, int peer)
{
    const size_t part = PER_CTA / THREADS, off = (size_t)blockIdx.x * PER_CTA + threadIdx.x * part;
    shmem_putmem(dest + off, src + off, part, peer);
}

__global__ void get_threads(char *dest, const char *src, int peer)
{
    const size_t part = PER_CTA / THREADS, off = (size_t)blockIdx.x * PER_CTA + threadIdx.x * part;
    shmem_getmem(dest + off, src + off, part, peer);
}

__global__ void put_blocking_blocks(char *dest, const char *src, int peer)
{
    const size_t off = (size_t)blockIdx.x * PER_CTA;
    shmemx_putmem_block(dest + off, src + off, PER_CTA, peer);
}

__global__ void get_blocking_blocks(char *dest, const char *src, int peer)
{
    const size_t off = (size_t)blockIdx.x * PER_CTA;
    shmemx_getmem_block(dest + off, src + off, PER_CTA, peer);
}

/* a float put of the CTA's part, an odd count of elements off a 4-byte (not 16-byte) boundary */
__global__ void float_put_blocks(float *dest, const float *src, int peer)
{
    const size_t part = PER_CTA / sizeof(float), off = (size_t)blockIdx.x * part;
    shmemx_float_put_block(dest + off + 1, src + off + 1, part - 3, peer);
}

__global__ void p_loop(int *dest, int peer, int me)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 2; k++) shmem_int_p(&dest[i], me * 1000000 + i + k, peer);
}

__global__ void fetch_add_all(unsigned long long *ctr, int peer, unsigned long long *old_sum)
{
    unsigned long long old = shmem_ulonglong_atomic_fetch_add(ctr, 1ull, peer);
    atomicAdd(old_sum, old);
}

__global__ void put_signal_blocks(char *dest, const char *src, uint64_t *sig, int peer)
{
    const size_t off = (size_t)blockIdx.x * PER_CTA;
    shmemx_putmem_signal_nbi_block(dest + off, src + off, PER_CTA, sig, 1, SHMEM_SIGNAL_ADD, peer);
}

__global__ void wait_signal(uint64_t *sig, uint64_t value) { shmem_uint64_wait_until(sig, SHMEM_CMP_EQ, value); }

__global__ void fill(char *p, size_t n, int seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (char)(seed * 31 + (int)(i % 251));
}

__global__ void count_bad(const char *p, size_t n, int seed, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (p[i] != (char)(seed * 31 + (int)(i % 251))) atomicAdd(bad, 1ull);
}

/* In each CTA's PER_CTA bytes, [lo, hi) holds the pattern of seed and the rest is 0. */
__global__ void count_bad_parts(const char *p, size_t n, int seed, size_t lo, size_t hi, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t c = i % PER_CTA;
        const char want = c >= lo && c < hi ? (char)(seed * 31 + (int)(i % 251)) : 0;
        if (p[i] != want) atomicAdd(bad, 1ull);
    }
}

static unsigned long long bad_bytes(const char *p, size_t n, int seed, unsigned long long *bad_d)
{
    unsigned long long bad = 0;
    GT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
    count_bad<<<64, 256>>>(p, n, seed, bad_d);
    GT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
    return bad;
}

/* A launch at 1024 threads: its error (too many resources) is the point of this test. */
#define LAUNCH_1024(kernel, ...)                                                                   \
    do {                                                                                           \
        cudaFuncAttributes a_;                                                                     \
        GT_CUDA(cudaFuncGetAttributes(&a_, kernel));                                               \
        if (shmem_my_pe() == 0) printf("test_wide_blocks: %s: %d registers\n", #kernel, a_.numRegs); \
        kernel<<<CTAS, THREADS>>>(__VA_ARGS__);                                                    \
        GT_CUDA(cudaGetLastError());                                                               \
        GT_CUDA(cudaDeviceSynchronize());                                                          \
    } while (0)

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    const size_t bytes = (size_t)CTAS * PER_CTA;
    char *src = (char *)shmem_malloc(bytes), *dst = (char *)shmem_malloc(bytes);
    int *ints = (int *)shmem_malloc(CTAS * THREADS * sizeof(int));
    unsigned long long *ctr = (unsigned long long *)shmem_calloc(1, sizeof(unsigned long long));
    uint64_t *sig = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
    unsigned long long *bad_d, *sum_d;
    GT_CHECK(src && dst && ints && ctr && sig, "shmem_malloc failed");
    GT_CUDA(cudaMalloc((void **)&bad_d, sizeof(*bad_d)));
    GT_CUDA(cudaMalloc((void **)&sum_d, sizeof(*sum_d)));
    fill<<<64, 256>>>(src, bytes, me + 1);
    GT_CUDA(cudaMemset(dst, 0, bytes));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();

    /* puts into the next PE */
    LAUNCH_1024(put_loop, dst, src, next, ROUNDS);
    shmem_barrier_all();
    GT_CHECK(bad_bytes(dst, bytes, prev + 1, bad_d) == 0, "putmem_nbi_block: wrong bytes from PE %d", prev);

    /* gets from the next PE (its src holds seed next + 1) */
    GT_CUDA(cudaMemset(dst, 0, bytes));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    LAUNCH_1024(get_loop, dst, src, next, ROUNDS);
    GT_CHECK(bad_bytes(dst, bytes, next + 1, bad_d) == 0, "getmem_nbi_block: wrong bytes from PE %d", next);
    shmem_barrier_all();

    /* the other forms, each into zeroed memory: puts into the next PE, gets from it */
    struct {
        const char *what;
        void (*kernel)(char *, const char *, int);
        int is_get;
    } forms[] = {
        {"putmem_block", put_blocking_blocks, 0}, {"getmem_block", get_blocking_blocks, 1},
        {"putmem_warp", put_warps, 0},            {"getmem_nbi_warp", get_nbi_warps, 1},
        {"putmem", put_threads, 0},               {"getmem", get_threads, 1},
    };
    for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
        GT_CUDA(cudaMemset(dst, 0, bytes));
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        cudaFuncAttributes attr;
        GT_CUDA(cudaFuncGetAttributes(&attr, forms[f].kernel));
        if (me == 0) printf("test_wide_blocks: %s: %d registers\n", forms[f].what, attr.numRegs);
        forms[f].kernel<<<CTAS, THREADS>>>(dst, src, next);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all(); /* a put is complete at the barrier (quiet), and the peer's too */
        const int from = forms[f].is_get ? next : prev;
        GT_CHECK(bad_bytes(dst, bytes, from + 1, bad_d) == 0, "%s at %d threads: wrong bytes from PE %d", forms[f].what,
                 THREADS, from);
    }
    GT_CUDA(cudaMemset(dst, 0, bytes));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    LAUNCH_1024(float_put_blocks, (float *)dst, (const float *)src, next);
    shmem_barrier_all();
    {
        unsigned long long bad = 0;
        GT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
        count_bad_parts<<<64, 256>>>(dst, bytes, prev + 1, sizeof(float), PER_CTA - 2 * sizeof(float), bad_d);
        GT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
        GT_CHECK(bad == 0, "float_put_block at %d threads: %llu wrong bytes from PE %d", THREADS, bad, prev);
    }

    /* int_p into the next PE, every thread its own element */
    LAUNCH_1024(p_loop, ints, next, me);
    shmem_barrier_all();
    {
        int *h = (int *)malloc(CTAS * THREADS * sizeof(int));
        GT_CHECK(h != NULL, "malloc");
        GT_CUDA(cudaMemcpy(h, ints, CTAS * THREADS * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < CTAS * THREADS; i++)
            GT_CHECK(h[i] == prev * 1000000 + i + 1, "int_p at %d threads: element %d is %d, PE %d stored %d", THREADS, i, h[i],
                     prev, prev * 1000000 + i + 1);
        free(h);
    }

    /* every thread of every PE adds 1 to PE 0's counter; the old values are 0..total-1 */
    GT_CUDA(cudaMemset(sum_d, 0, sizeof(*sum_d)));
    LAUNCH_1024(fetch_add_all, ctr, 0, sum_d);
    shmem_barrier_all();
    const unsigned long long total = (unsigned long long)n * CTAS * THREADS;
    if (me == 0) {
        unsigned long long got = 0;
        GT_CUDA(cudaMemcpy(&got, ctr, sizeof(got), cudaMemcpyDeviceToHost));
        GT_CHECK(got == total, "fetch_add at %d threads: counter %llu, expected %llu", THREADS, got, total);
    }

    /* put-with-signal: every CTA's block and one signal add each */
    GT_CUDA(cudaMemset(dst, 0, bytes));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    LAUNCH_1024(put_signal_blocks, dst, src, sig, next);
    wait_signal<<<1, 1>>>(sig, CTAS); /* the data is there once the signal says every block's is */
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaDeviceSynchronize());
    GT_CHECK(bad_bytes(dst, bytes, prev + 1, bad_d) == 0, "putmem_signal_nbi_block: wrong bytes from PE %d", prev);
    shmem_barrier_all();

    printf("test_wide_blocks: PE %d of %d: every kernel at %d threads a block: PASS\n", me, n, THREADS);
    gt_cuda_free(bad_d, sum_d);
    gt_shmem_free(sig, ctr, ints, dst, src);
    shmem_finalize();
    return 0;
}
