/* Two separately compiled .cu files in one program, no -rdc: both see the runtime's state. */
#include "gpu_test.cuh"

void module_b_run(int *out, int *sym);

static __global__ void module_a_kernel(int *out, int *sym)
{
    out[0] = shmem_my_pe();
    out[1] = shmem_n_pes();
    for (int t = 0; t < shmem_n_pes(); t++) shmem_int_p(sym + shmem_my_pe(), 1000 + shmem_my_pe(), t);
    shmem_quiet();
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    int *out, h[2], *sym = (int *)shmem_calloc(2 * npes, sizeof(int)), *hs = (int *)malloc(2 * npes * sizeof(int));
    GT_CUDA(cudaMalloc((void **)&out, 2 * sizeof(int)));
    for (int m = 0; m < 2; m++) {
        GT_CUDA(cudaMemset(out, 0xff, 2 * sizeof(int)));
        if (m == 0) {
            module_a_kernel<<<1, 1>>>(out, sym);
            GT_CUDA(cudaDeviceSynchronize());
        } else {
            module_b_run(out, sym);
        }
        GT_CUDA(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
        GT_CHECK(h[0] == me && h[1] == npes, "module %c sees PE %d of %d, expected %d of %d", 'a' + m, h[0], h[1], me, npes);
    }
    shmem_barrier_all();
    GT_CUDA(cudaMemcpy(hs, sym, 2 * npes * sizeof(int), cudaMemcpyDeviceToHost));
    for (int s = 0; s < npes; s++) {
        GT_CHECK(hs[s] == 1000 + s, "module a's store from PE %d: %d", s, hs[s]);
        GT_CHECK(hs[npes + s] == 2000 + s, "module b's store from PE %d: %d", s, hs[npes + s]);
    }
    if (me == 0) printf("test_modules: two modules without -rdc passed on %d PEs\n", npes);
    shmem_free(sym);
    shmem_finalize();
    return 0;
}
