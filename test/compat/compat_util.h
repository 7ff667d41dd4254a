/* What the NVSHMEM programs of this folder share, in the shape NVSHMEM's own examples use: a CUDA
 * check that exits, and the start of main (skip without a GPU, init, one GPU per PE of the node). */
#ifndef COMPAT_UTIL_H
#define COMPAT_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#define CUDA_CHECK(stmt)                                                                           \
    do {                                                                                           \
        cudaError_t result = (stmt);                                                               \
        if (cudaSuccess != result) {                                                               \
            fprintf(stderr, "[%s:%d] CUDA failed with %s\n", __FILE__, __LINE__, cudaGetErrorString(result)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Exits 77 (skipped) on a host without a GPU; otherwise nvshmem_init and the PE's GPU picked by
 * its rank on the node. */
static inline void compat_init_on_node_gpu(void)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "no GPU on this host: skipped\n");
        exit(77);
    }
    nvshmem_init();
    CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % ndev));
}

#endif
