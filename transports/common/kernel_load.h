/* A kernel of the transports' own CUDA modules loaded now. With CUDA's lazy loading a kernel is
 * loaded at its first launch, and loading may wait for the kernels already running, which may be
 * the ones spinning until this kernel's work lands (a proxy atomic, an emulated NIC's atomic).
 * Included by the .cu files that hold such kernels. */
#ifndef GSHMEMI_TRANSPORTS_KERNEL_LOAD_H
#define GSHMEMI_TRANSPORTS_KERNEL_LOAD_H

#include <cuda_runtime.h>

#include "gshmem/types.h" /* gshmemi_module_preload */

/* kernel (the address of a __global__ function): loaded, and its module's kernels too where the
 * runtime asks for it (gshmemi_module_preload, by cuFuncLoad). Returns the cudaError_t. */
static inline int gshmemi_kernel_load_now(const void *kernel)
{
    cudaFuncAttributes attr;
    cudaFunction_t f;
    cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
    if (err == cudaSuccess) err = cudaGetFuncBySymbol(&f, kernel);
    if (err == cudaSuccess) (void)gshmemi_module_preload((void *)f);
    return (int)err;
}

#endif
