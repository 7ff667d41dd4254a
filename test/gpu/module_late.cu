/* A CUDA module for test_modules_late, loaded with dlopen after shmem_init; built twice, once as
 * is and once with another GSHMEMI_CONST_PEERS (another device layout). */
#include "gpu_test.cuh"

static __global__ void module_late_kernel(int *out) { *out = shmem_my_pe(); }

/* shmem_my_pe as this module's device code sees it (-1 if the kernel failed). */
extern "C" int module_late_my_pe(void)
{
    int *d, h = -1;
    if (cudaMalloc((void **)&d, sizeof(int)) != cudaSuccess) return -1;
    module_late_kernel<<<1, 1>>>(d);
    if (cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) h = -1;
    cudaFree(d);
    return h;
}
