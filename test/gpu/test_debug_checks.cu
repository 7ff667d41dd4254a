/* GSHMEM_DEBUG_CHECKS=1: a device call with a bad PE or a non-symmetric address reports the routine,
 * PE, address and heap bounds, then traps. Run as `test_debug_checks MODE` (one PE is enough):
 * ok (valid calls must pass with checks on), bad-pe, bad-addr, bad-range. The wrapper
 * test_debug_checks.sh checks the report text. */
#include <string.h>
#include <unistd.h>

#include "gpu_test.cuh"

static __global__ void k(int mode, int *sym, int *local)
{
    const int n = shmem_n_pes();
    switch (mode) {
    case 0: shmem_int_p(sym, 7, n - 1); shmem_putmem(sym + 1, sym, 4, 0); shmem_quiet(); break;
    case 1: shmem_int_p(sym, 7, n); break;                    /* PE out of range */
    case 2: shmem_int_p(local, 7, 0); break;                  /* not a symmetric address */
    case 3: shmem_putmem(sym, local, (size_t)1 << 40, 0); break; /* range runs past the heap */
    }
}

int main(int argc, char **argv)
{
    static const char *modes[] = {"ok", "bad-pe", "bad-addr", "bad-range"};
    int mode = -1;
    for (int i = 0; i < 4; i++)
        if (argc > 1 && strcmp(argv[1], modes[i]) == 0) mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: %s ok|bad-pe|bad-addr|bad-range\n", argv[0]);
        return 2;
    }
    gt_skip_without_gpu();
    shmem_init();
    int *sym = (int *)shmem_calloc(4, sizeof(int)), *local;
    GT_CUDA(cudaMalloc((void **)&local, 4096));
    k<<<1, 1>>>(mode, sym, local);
    cudaError_t err = cudaDeviceSynchronize();
    if (mode == 0) {
        GT_CHECK(err == cudaSuccess, "valid calls failed with debug checks on: %s", cudaGetErrorString(err));
        printf("test_debug_checks: valid calls pass with checks on\n");
        shmem_free(sym);
        shmem_finalize();
        return 0;
    }
    if (err == cudaSuccess) {
        fprintf(stderr, "test_debug_checks: %s did not trap\n", modes[mode]);
        return 1;
    }
    printf("test_debug_checks: %s trapped (%s)\n", modes[mode], cudaGetErrorString(err));
    /* The context is gone after a trap: leave without finalizing (and flush: _exit does not). */
    fflush(stdout);
    _exit(0);
}
