/* A ring written as an NVSHMEM program: every PE stores, with nvshmem_int_p from a kernel, a
 * block of values into the next PE's symmetric buffer, then checks what the previous PE stored.
 * Built unchanged against gshmem's compatibility headers (test/compat/README.md). */
#include "compat_util.h"

#define N 1024

__global__ void ring_put(int *dest)
{
    int mype = nvshmem_my_pe();
    int npes = nvshmem_n_pes();
    int peer = (mype + 1) % npes;
    for (int i = threadIdx.x; i < N; i += blockDim.x) nvshmem_int_p(&dest[i], mype * 100000 + i, peer);
}

int main(void)
{
    int mype, npes;
    cudaStream_t stream = compat_start(&mype, &npes);

    int *dest = (int *)nvshmem_malloc(N * sizeof(int));
    if (!dest) {
        fprintf(stderr, "PE %d: nvshmem_malloc failed\n", mype);
        return 1;
    }
    CUDA_CHECK(cudaMemset(dest, 0xff, N * sizeof(int)));
    nvshmem_barrier_all();

    ring_put<<<1, 256, 0, stream>>>(dest);
    CUDA_CHECK(cudaGetLastError());
    nvshmemx_barrier_all_on_stream(stream); /* the puts are complete and visible after it */
    int *host = (int *)malloc(N * sizeof(int));
    CUDA_CHECK(cudaMemcpyAsync(host, dest, N * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));

    int prev = (mype + npes - 1) % npes, bad = 0;
    for (int i = 0; i < N; i++) {
        if (host[i] != prev * 100000 + i) {
            if (bad++ < 5) fprintf(stderr, "PE %d: dest[%d] = %d, expected %d\n", mype, i, host[i], prev * 100000 + i);
        }
    }
    printf("ring_put: PE %d of %d: %s (%d of %d values from PE %d)\n", mype, npes, bad ? "FAILED" : "ok", N - bad, N, prev);

    nvshmem_barrier_all();
    free(host);
    nvshmem_free(dest);
    CUDA_CHECK(cudaStreamDestroy(stream));
    nvshmem_finalize();
    return bad ? 1 : 0;
}
