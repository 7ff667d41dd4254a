/* The copy backend's one-thread kernels: a value stored, or an atomic done, at a word of a peer's
 * heap as mapped here, ordered on the backend's stream after the copies before it. They use the
 * same system-scope atomics as the device API, so they are atomic with respect to the target
 * GPU's own atomics. */
#include "../../device/amo.cuh"
#include "copy.h"

static __global__ void copy_store_kernel(void *addr, uint64_t value, int width)
{
    __threadfence_system(); /* after the data copied before it on the stream, for every observer */
    switch (width) {
    case 1: *(volatile uint8_t *)addr = (uint8_t)value; break;
    case 2: *(volatile uint16_t *)addr = (uint16_t)value; break;
    case 4: *(volatile uint32_t *)addr = (uint32_t)value; break;
    default: *(volatile uint64_t *)addr = value; break;
    }
}

static __global__ void copy_amo_kernel(void *word, int op, uint64_t value, uint64_t cond, int width, uint64_t *out)
{
    __threadfence_system(); /* a signal lands after the data before it */
    uint64_t old = width == 4 ? gshmemi_amo_op_b32(op, word, (uint32_t)value, (uint32_t)cond)
                              : gshmemi_amo_op_b64(op, word, value, cond);
    if (out) *(volatile uint64_t *)out = old;
}

extern "C" int gshmemi_copy_store(void *addr, uint64_t value, int width, cudaStream_t stream)
{
    copy_store_kernel<<<1, 1, 0, stream>>>(addr, value, width);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_copy_amo(void *word, int op, uint64_t value, uint64_t cond, int width, uint64_t *out, cudaStream_t stream)
{
    copy_amo_kernel<<<1, 1, 0, stream>>>(word, op, value, cond, width, out);
    return (int)cudaGetLastError();
}

/* Loads both kernels now: with CUDA's lazy loading a kernel is loaded at its first launch, and
 * loading may wait for the kernels already running, which here are the ones spinning until the
 * proxy's first atomic lands. */
extern "C" int gshmemi_copy_kernels_load(void)
{
    cudaFuncAttributes attr;
    cudaError_t err = cudaFuncGetAttributes(&attr, copy_store_kernel);
    if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, copy_amo_kernel);
    return (int)err;
}
