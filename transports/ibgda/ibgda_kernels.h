/* The emulated NIC's atomic kernel (ibgda_kernels.cu); each returns a cudaError_t. */
#ifndef GSHMEMI_IBGDA_KERNELS_H
#define GSHMEMI_IBGDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "nic_emul.h"

#ifdef __cplusplus
extern "C" {
#endif

/* amo (host order) on the word at target; the old value is stored at old (pinned host memory). */
int gshmemi_ibgda_emul_amo(void *target, const gshmemi_nic_emul_amo_t *amo, uint64_t *old, cudaStream_t stream);
int gshmemi_ibgda_emul_kernels_load(void);

#ifdef __cplusplus
}
#endif
#endif
