/* The copy backend's one-thread kernel: an atomic done at a word of a peer's heap as mapped here,
 * ordered on the backend's atomic stream after the copies before it (an event). Values are stream
 * writes or staged copies (copy.c), no kernel. They use the
 * same system-scope atomics as the device API, so they are atomic with respect to the target
 * GPU's own atomics. */
#include "gshmem/types.h"
#include "kernel_load.h"
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

/* Loaded now: the kernels already running may spin until the proxy's first atomic lands. */
extern "C" int gshmemi_copy_kernels_load(void) { return gshmemi_kernel_load_now((const void *)copy_amo_kernel); }
