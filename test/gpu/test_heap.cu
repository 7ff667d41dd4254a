/* Heap growth past the first chunk while a kernel keeps using the heap; exhaustion, bad frees and
 * reuse afterwards. */
#include <string.h>

#include "gpu_test.cuh"

/* Writes round numbers 1..rounds into word `me` of every PE's array, pausing between rounds so the
 * kernel is still running while the host grows the heap. */
static __global__ void keep_busy(long *words, int rounds)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (int r = 1; r <= rounds; r++) {
        for (int t = 0; t < n; t++) shmem_long_p(words + me, r, t);
        __nanosleep(100000);
    }
    shmem_quiet();
}

static __global__ void put_all(unsigned char *dst, const unsigned char *src, size_t n, size_t slot)
{
    shmemx_putmem_block(dst + (size_t)shmem_my_pe() * slot, src, n, blockIdx.x);
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int rounds = 3000; /* ~0.3 s */
    cudaStream_t busy;
    long *words = (long *)shmem_calloc(npes, sizeof(long));
    GT_CHECK(words != NULL, "shmem_calloc");
    {
        int level = -1, on_stack = 0;
        shmem_query_thread(&level);
        GT_CHECK(level == SHMEM_THREAD_FUNNELED, "shmem_query_thread: %d", level);
        for (int pe = 0; pe < npes; pe++)
            GT_CHECK(shmem_pe_accessible(pe) == 1 && shmem_addr_accessible(words + 1, pe) == 1 &&
                         shmem_addr_accessible(&on_stack, pe) == 0,
                     "accessibility of PE %d", pe);
        GT_CHECK(shmem_pe_accessible(npes) == 0 && shmem_pe_accessible(-1) == 0, "PEs out of range are accessible");
    }
    GT_CUDA(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
    shmem_barrier_all();
    keep_busy<<<1, 1, 0, busy>>>(words, rounds);
    GT_CUDA(cudaGetLastError());

    /* Grows the heap several times while keep_busy runs (GSHMEM_HEAP_GROWTH is 32 MiB by default). */
    const size_t big = 200u << 20, slot = big / npes / 16 * 16;
    unsigned char *a = (unsigned char *)shmem_malloc(big);
    unsigned char *b = (unsigned char *)shmem_malloc(big);
    GT_CHECK(a && b, "shmem_malloc(%zu) during a running kernel", big);
    GT_CHECK(b >= a + big || a >= b + big, "allocations overlap");
    GT_CHECK(cudaStreamQuery(busy) == cudaErrorNotReady, "keep_busy finished before the heap grew; the test proves nothing");

    unsigned char *src;
    GT_CUDA(cudaMalloc((void **)&src, slot));
    gt_fill<<<264, 512>>>(src, slot, me, 1);
    GT_CUDA(cudaDeviceSynchronize());
    for (int k = 0; k < 2; k++) {
        unsigned char *dst = k ? b : a;
        GT_CUDA(cudaMemset(dst, 0xEE, big));
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        put_all<<<npes, 512>>>(dst, src, slot - 1, slot);
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        for (int s = 0; s < npes; s++) {
            unsigned long long first, bad;
            if (s == 0) continue; /* slot 0 starts at the allocation: no guard byte before it */
            bad = gt_check(dst + (size_t)s * slot, slot - 1, s, 1, 0xEE, &first);
            GT_CHECK(bad == 0, "new heap region %d: %llu wrong bytes from PE %d (first %llu)", k, bad, s, first);
        }
    }
    GT_CUDA(cudaStreamSynchronize(busy));
    shmem_barrier_all();
    {
        long h[1024];
        GT_CUDA(cudaMemcpy(h, words, npes * sizeof(long), cudaMemcpyDeviceToHost));
        for (int s = 0; s < npes; s++) GT_CHECK(h[s] == rounds, "word of PE %d is %ld, expected %d", s, h[s], rounds);
    }

    /* Exhaustion: a clear NULL, and the heap keeps working. */
    void *huge = shmem_malloc((size_t)1 << 44);
    GT_CHECK(huge == NULL, "16 TiB allocation must fail");
    GT_CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0) must return NULL");
    GT_CHECK(shmem_align(3, 64) == NULL, "shmem_align with alignment 3 must fail");
    void *al = shmem_align(1 << 21, 100);
    GT_CHECK(al && ((uintptr_t)al & ((1 << 21) - 1)) == 0, "shmem_align(2 MiB) returned %p", al);
    int stack_var;
    shmem_free(&stack_var);    /* not in the heap: logged, ignored */
    shmem_free(a + 16);        /* interior pointer: logged, ignored */
    shmem_free(a);
    shmem_free(a);             /* double free: logged, ignored */
    unsigned char *c = (unsigned char *)shmem_malloc(big);
    GT_CHECK(c == a, "freed block should be reused (best fit): got %p, expected %p", (void *)c, (void *)a);
    shmem_free(c);
    shmem_free(b);
    shmem_free(al);
    shmem_free(words);
    cudaFree(src);
    if (me == 0) printf("test_heap: growth under a running kernel, exhaustion and bad frees passed on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
