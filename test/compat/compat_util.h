/* What the NVSHMEM programs of this folder share, in the shape NVSHMEM's own examples use: a CUDA
 * check that exits, and the start of main (skip without a GPU, init, one GPU per PE of the node). */
#ifndef COMPAT_UTIL_H
#define COMPAT_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

static inline void compat_cuda_check(cudaError_t result, const char *file, int line)
{
    if (result == cudaSuccess) return;
    fprintf(stderr, "[%s:%d] CUDA failed with %s\n", file, line, cudaGetErrorString(result));
    exit(1);
}
#define CUDA_CHECK(stmt) compat_cuda_check((stmt), __FILE__, __LINE__)

/* Exits 77 (skipped) on a host without a GPU; otherwise nvshmem_init, the PE's GPU picked by its
 * rank on the node, its PE number and the job's PE count in *mype and *npes, and a new stream. */
static inline cudaStream_t compat_start(int *mype, int *npes)
{
    int ndev = 0;
    cudaStream_t stream;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "no GPU on this host: skipped\n");
        exit(77);
    }
    nvshmem_init();
    *mype = nvshmem_my_pe();
    *npes = nvshmem_n_pes();
    CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % ndev));
    CUDA_CHECK(cudaStreamCreate(&stream));
    return stream;
}

#endif
