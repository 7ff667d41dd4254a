/* shmem_init / shmem_malloc / a put kernel with a data check / shmem_free / shmem_finalize, many
 * rounds in one process: every round must work, and GPU memory, open fds and threads must be back
 * where they were after round 1 (when CUDA's own context, threads and fds exist).
 *   test_init_loop [ROUNDS]   (default 100; 10 with GSHMEM_TEST_QUICK)
 * GPU memory gets a slack of 2 MiB per PE: cudaMemGetInfo counts the whole GPU in 2 MiB pages,
 * and the driver may grow its own pools lazily after round 1; a leaked heap chunk is at least
 * GSHMEM_HEAP_GROWTH (32 MiB) and every round backs a new one. Leaks of small cudaMalloc blocks
 * (sub-allocated from 2 MiB pages) are below what this can see. fds and threads get no slack. */
#include <dirent.h>
#include <time.h>

#include "gpu_test.cuh"

static __host__ __device__ int value_of(int round, int pe, size_t i) { return round * 1000003 + pe * 65537 + (int)i; }

static __global__ void fill_round(int *src, size_t n, int round)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        src[i] = value_of(round, shmem_my_pe(), i);
}

/* Block t puts this PE's source into slot `me` of PE t. */
static __global__ void put_round(int *slots, const int *src, size_t n)
{
    shmemx_putmem_block(slots + (size_t)shmem_my_pe() * n, src, n * sizeof(int), (int)blockIdx.x);
}

/* Entries of a /proc directory, "." and ".." excluded (for /proc/self/fd: the open fds, the
 * directory's own among them, the same in every count). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) {
        fprintf(stderr, "test_init_loop: cannot open %s\n", dir);
        exit(1);
    }
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : gt_quick() ? 10 : 100;
    const size_t n = 4099;
    size_t gpu_used[2] = {0, 0};
    int fds[2] = {0, 0}, threads[2] = {0, 0}, me = -1, npes = 0;
    double t0 = 0;

    if (rounds < 2) {
        fprintf(stderr, "test_init_loop: ROUNDS must be at least 2, got %s\n", argv[1]);
        return 2;
    }
    gt_skip_without_gpu();
    for (int r = 1; r <= rounds; r++) {
        const int at = r == 1 ? 0 : r == rounds ? 1 : -1; /* where the figures go */
        shmem_init();
        me = shmem_my_pe();
        npes = shmem_n_pes();
        int *slots = (int *)shmem_malloc((npes + 1) * n * sizeof(int)), *src = slots + (size_t)npes * n;
        GT_CHECK(slots != NULL, "round %d: shmem_malloc of %zu bytes", r, (npes + 1) * n * sizeof(int));
        GT_CUDA(cudaMemset(slots, 0, npes * n * sizeof(int)));
        fill_round<<<8, 256>>>(src, n, r);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        put_round<<<npes, 256>>>(slots, src, n);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        {
            int *h = (int *)malloc(npes * n * sizeof(int));
            GT_CHECK(h != NULL, "malloc");
            GT_CUDA(cudaMemcpy(h, slots, npes * n * sizeof(int), cudaMemcpyDeviceToHost));
            for (int s = 0; s < npes; s++)
                for (size_t i = 0; i < n; i++)
                    GT_CHECK(h[s * n + i] == value_of(r, s, i), "round %d: element %zu from PE %d is %d, expected %d", r, i, s,
                             h[s * n + i], value_of(r, s, i));
            free(h);
        }
        if (at >= 0) {
            /* every PE holds the same state between these barriers: the GPU-wide figure is comparable */
            size_t free_b = 0, total_b = 0;
            GT_CUDA(cudaMemGetInfo(&free_b, &total_b));
            gpu_used[at] = total_b - free_b;
            shmem_barrier_all();
        }
        shmem_free(slots);
        shmem_finalize();
        if (at >= 0) {
            fds[at] = count_entries("/proc/self/fd");
            threads[at] = count_entries("/proc/self/task");
        }
        if (r == 1) t0 = now_s();
    }

    const double dt = now_s() - t0, mib = 1024.0 * 1024.0;
    const size_t slack = (size_t)npes * (2u << 20);
    const int gpu_ok = gpu_used[1] <= gpu_used[0] + slack, fd_ok = fds[1] <= fds[0], thr_ok = threads[1] <= threads[0];
    printf("test_init_loop: PE %d: GPU memory used %.1f MiB after round 1, %.1f MiB after round %d (allowed growth %.0f MiB): %s\n", me,
           gpu_used[0] / mib, gpu_used[1] / mib, rounds, slack / mib, gpu_ok ? "ok" : "GREW");
    printf("test_init_loop: PE %d: open fds %d after round 1, %d after round %d: %s\n", me, fds[0], fds[1], rounds,
           fd_ok ? "ok" : "GREW");
    printf("test_init_loop: PE %d: threads %d after round 1, %d after round %d: %s\n", me, threads[0], threads[1], rounds,
           thr_ok ? "ok" : "GREW");
    printf("test_init_loop: PE %d of %d: %s, %d rounds of init/malloc/put/check/free/finalize (%.1f ms per round after the first)\n", me,
           npes, gpu_ok && fd_ok && thr_ok ? "PASS" : "FAIL", rounds, dt * 1000.0 / (rounds - 1));
    return gpu_ok && fd_ok && thr_ok ? 0 : 1;
}
