/* The copy backend's one-thread kernel: an atomic done at a word of a peer's heap as mapped here,
 * ordered on the backend's atomic stream after the copies before it (an event). Values are stream
 * writes or staged copies (copy.c), no kernel. They use the
 * same system-scope atomics as the device API, so they are atomic with respect to the target
 * GPU's own atomics. */
#include "gshmem/types.h" /* gshmemi_module_preload */
#include "../../device/amo.cuh"
#include "copy.h"

static __global__ void copy_amo_kernel(void *word, int op, uint64_t value, uint64_t cond, int width, uint64_t *out)
{
    __threadfence_system(); /* a signal lands after the data before it */
    uint64_t old = width == 4 ? gshmemi_amo_op_b32(op, word, (uint32_t)value, (uint32_t)cond)
                              : gshmemi_amo_op_b64(op, word, value, cond);
    if (out) *(volatile uint64_t *)out = old;
}

extern "C" int gshmemi_copy_amo(void *word, int op, uint64_t value, uint64_t cond, int width, uint64_t *out, cudaStream_t stream)
{
    copy_amo_kernel<<<1, 1, 0, stream>>>(word, op, value, cond, width, out);
    return (int)cudaGetLastError();
}

/* Loads the kernel now: with CUDA's lazy loading a kernel is loaded at its first launch, and
 * loading may wait for the kernels already running, which here are the ones spinning until the
 * proxy's first atomic lands. */
extern "C" int gshmemi_copy_kernels_load(void)
{
    cudaFuncAttributes attr;
    cudaFunction_t f;
    cudaError_t err = cudaFuncGetAttributes(&attr, copy_amo_kernel);
    if (err == cudaSuccess) err = cudaGetFuncBySymbol(&f, (const void *)copy_amo_kernel);
    if (err == cudaSuccess) (void)gshmemi_module_preload((void *)f); /* by cuFuncLoad, where the runtime asks */
    return (int)err;
}
