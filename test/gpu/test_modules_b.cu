/* The second, separately compiled module of test_modules: its own copy of the device state. */
#include "gpu_test.cuh"

static __global__ void module_b_kernel(int *out, int *sym)
{
    out[0] = shmem_my_pe();
    out[1] = shmem_n_pes();
    /* Store into every PE's word `my_pe + n_pes` of sym. */
    for (int t = 0; t < shmem_n_pes(); t++) shmem_int_p(sym + shmem_n_pes() + shmem_my_pe(), 2000 + shmem_my_pe(), t);
    shmem_quiet();
}

void module_b_run(int *out, int *sym)
{
    module_b_kernel<<<1, 1>>>(out, sym);
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaDeviceSynchronize());
}
