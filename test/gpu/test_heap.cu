/* Heap growth past the first chunk while a kernel keeps using the heap; exhaustion, bad frees and
 * reuse afterwards. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_test.cuh"
#include "runtime/base/env.h" /* gshmemi_parse_size, exposed for tests */

/* Host <-> keep_busy, in mapped host memory: the host stops the kernel once the heap has grown,
 * so the kernel is running during the growth however slow the GPU is (a compute-sanitizer run
 * is 10-100x slower). */
typedef struct {
    volatile int stop;               /* host -> kernel */
    volatile int timed_out;          /* kernel -> host: no stop within the limit */
    volatile long long progress;     /* kernel -> host: the last round written */
} busy_ctl_t;

static __device__ uint64_t gt_now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Writes round numbers r+1, r+2, ... into word `me` of every PE's array until the host says stop
 * (or limit_ns passes: reported, never a hang). */
static __global__ void keep_busy(long *words, busy_ctl_t *ctl, uint64_t limit_ns, long r)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();
    const uint64_t t0 = gt_now();
    while (!ctl->stop) {
        r++;
        for (int t = 0; t < n; t++) shmem_long_p(words + me, r, t);
        shmem_quiet();
        ctl->progress = r;
        __threadfence_system();
        if (gt_now() - t0 > limit_ns) {
            ctl->timed_out = 1;
            break;
        }
        __nanosleep(100000);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Waits (at most limit_s) until keep_busy has written a round after `after`. */
static int wait_progress(const busy_ctl_t *ctl, long long after, double limit_s)
{
    const double deadline = now_s() + limit_s;
    while (ctl->progress <= after && !ctl->timed_out && now_s() < deadline) usleep(100);
    return ctl->progress > after;
}

static __global__ void put_all(unsigned char *dst, const unsigned char *src, size_t n, size_t slot)
{
    shmemx_putmem_block(dst + (size_t)shmem_my_pe() * slot, src, n, blockIdx.x);
}

/* A size variable read by the runtime's own parser (runtime/base/env.h), or dflt where unset or
 * not a size. */
static size_t gt_env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    size_t n = 0;
    return v && *v && gshmemi_parse_size(v, &n) == 0 ? n : dflt;
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const double limit_s = 300; /* for each wait on keep_busy; gshmemrun --timeout bounds the whole */
    cudaStream_t busy;
    busy_ctl_t *ctl, *d_ctl;
    long *words = (long *)shmem_calloc(npes, sizeof(long)), *last = (long *)shmem_calloc(npes, sizeof(long));
    GT_CHECK(words != NULL && last != NULL, "shmem_calloc");
    GT_CUDA(cudaHostAlloc((void **)&ctl, sizeof(*ctl), cudaHostAllocMapped));
    GT_CUDA(cudaHostGetDevicePointer((void **)&d_ctl, ctl, 0));
    memset((void *)ctl, 0, sizeof(*ctl));
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
    /* The initial heap (GSHMEM_HEAP_INITIAL, 1 GiB by default) is mapped at init: allocating all of
     * it maps no memory now (the GPU's free memory stays; a growth would take at least the 32 MiB
     * of GSHMEM_HEAP_GROWTH, the whole block without an initial heap). Every PE of a GPU does the
     * same, so under MPS too. The block stays allocated: the growths below are growths. */
    {
        const size_t gib = (size_t)1 << 30, slack = (size_t)16 << 20;
        /* checked with the default initial heap and a heap that holds it (the suite sets 2G; 0 is
         * the GPU's memory) */
        const size_t sym = gt_env_size("GSHMEM_SYMMETRIC_SIZE", 0);
        const size_t initial = getenv("GSHMEM_HEAP_INITIAL") || (sym != 0 && sym < 2 * gib) ? 0 : gib;
        size_t free0 = 0, free1 = 0, total = 0;
        GT_CUDA(cudaMemGetInfo(&free0, &total));
        void *all = initial ? shmem_malloc(initial) : NULL;
        GT_CUDA(cudaMemGetInfo(&free1, &total));
        if (initial) {
            GT_CHECK(all != NULL, "shmem_malloc of the initial heap (%zu bytes)", initial);
            GT_CHECK(free1 + slack >= free0, "allocating the initial heap took %zu MiB of GPU memory: it was not mapped at init "
                     "(GSHMEM_HEAP_INITIAL; init says why at GSHMEM_DEBUG=info)", (free0 - free1) >> 20);
            if (me == 0) printf("test_heap: the initial heap (%zu MiB) was mapped at init: allocating it took %zd MiB\n", initial >> 20,
                                ((ptrdiff_t)free0 - (ptrdiff_t)free1) >> 20);
        }
    }
    GT_CUDA(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
    shmem_barrier_all();
    keep_busy<<<1, 1, 0, busy>>>(words, d_ctl, (uint64_t)(limit_s * 1e9), 0);
    GT_CUDA(cudaGetLastError());
    GT_CHECK(wait_progress(ctl, 0, limit_s), "keep_busy wrote no round within %.0f s", limit_s);

    /* Under compute-sanitizer kernels run one at a time: the growth's own GPU work would wait for
     * keep_busy, which waits for the host. There keep_busy stops before the growth and runs again
     * after it, so the new mappings are still used by a kernel, but not during the growth. */
    const int serial = gt_sanitizer();
    if (serial) {
        if (me == 0) printf("test_heap: under compute-sanitizer (kernels serialized): keep_busy runs before and after the growth, not during it\n");
        GT_CHECK(wait_progress(ctl, 1, limit_s), "keep_busy wrote no second round within %.0f s", limit_s);
        ctl->stop = 1;
        GT_CUDA(cudaStreamSynchronize(busy));
    }

    /* Grows the heap several times while keep_busy runs (GSHMEM_HEAP_GROWTH is 32 MiB by default);
     * 2 x 64 MiB in quick mode, still a growth for each. */
    const size_t big = (gt_quick() ? 64u : 200u) << 20, slot = big / npes / 16 * 16;
    unsigned char *a = (unsigned char *)shmem_malloc(big);
    unsigned char *b = (unsigned char *)shmem_malloc(big);
    GT_CHECK(a && b, "shmem_malloc(%zu) during a running kernel", big);
    GT_CHECK(b >= a + big || a >= b + big, "allocations overlap");
    /* keep_busy runs until told to stop: it must still be running and write into the heap after the growth */
    {
        const long long grown_at = ctl->progress;
        if (serial) {
            ctl->stop = 0;
            keep_busy<<<1, 1, 0, busy>>>(words, d_ctl, (uint64_t)(limit_s * 1e9), grown_at);
            GT_CUDA(cudaGetLastError());
        }
        GT_CHECK(wait_progress(ctl, grown_at, limit_s), "keep_busy wrote no round within %.0f s after the heap grew (timed out: %d)",
                 limit_s, ctl->timed_out);
        GT_CHECK(!ctl->timed_out, "keep_busy stopped by its own time limit");
        ctl->stop = 1;
        GT_CUDA(cudaStreamSynchronize(busy));
        GT_CHECK(!ctl->timed_out, "keep_busy stopped by its own time limit, not by the host");
        /* every PE learns every PE's last round */
        for (int t = 0; t < npes; t++) shmem_long_p(last + me, ctl->progress, t);
        shmem_barrier_all();
        long h[1024], hl[1024];
        GT_CUDA(cudaMemcpy(h, words, npes * sizeof(long), cudaMemcpyDeviceToHost));
        GT_CUDA(cudaMemcpy(hl, last, npes * sizeof(long), cudaMemcpyDeviceToHost));
        for (int s = 0; s < npes; s++)
            GT_CHECK(hl[s] >= 2 && h[s] == hl[s], "word of PE %d is %ld, expected its last round %ld (at least 2)", s, h[s], hl[s]);
    }

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
    shmem_free(last);
    shmem_free(words);
    cudaFree(src);
    cudaFreeHost(ctl);
    cudaStreamDestroy(busy);
    if (me == 0) printf("test_heap: growth under a running kernel, exhaustion and bad frees passed on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
