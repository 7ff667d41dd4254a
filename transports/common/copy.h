/* The copy backend's atomic kernel (copy_kernels.cu); each returns a cudaError_t. */
#ifndef GSHMEMI_COPY_H
#define GSHMEMI_COPY_H

#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

int gshmemi_copy_kernels_load(void);
int gshmemi_copy_amo(void *word, int op, uint64_t value, uint64_t cond, int width, uint64_t *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
