/* An NVSHMEM program that needs a large symmetric heap and sets no variable for it: four
 * nvshmem_malloc calls of 1 GiB each, then every PE puts a pattern into the last of them on the
 * next PE from a kernel and checks what the previous PE put. Under NVSHMEM's defaults the heap
 * grows on demand up to the GPU's memory; gshmem's does the same (GSHMEM_SYMMETRIC_SIZE and
 * NVSHMEM_SYMMETRIC_SIZE cap it when set). Prints how long the first nvshmem_malloc and the first
 * barrier took. Exits 1 on a failed allocation or a wrong value, 77 without a GPU. */
#include <chrono>
#include "compat_util.h"

#define GIB (1ull << 30)
#define BLOCKS 4
#define CHECKED (64ull << 20) /* bytes of the last block written and checked */

__global__ void fill(unsigned *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = seed * 2654435761u + (unsigned)i;
}

__global__ void put_next(unsigned *dest, const unsigned *src, size_t bytes, int peer)
{
    const size_t per = (bytes / gridDim.x + 15) / 16 * 16, off = per * blockIdx.x;
    if (off < bytes) nvshmemx_putmem_block((char *)dest + off, (const char *)src + off, bytes - off < per ? bytes - off : per, peer);
}

__global__ void count_bad(const unsigned *p, size_t n, unsigned seed, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (p[i] != seed * 2654435761u + (unsigned)i) atomicAdd(bad, 1ull);
}

static double since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int main(void)
{
    int mype, npes;
    compat_start(&mype, &npes);

    unsigned *block[BLOCKS];
    double malloc_ms = 0, barrier_ms = 0;
    for (int b = 0; b < BLOCKS; b++) {
        auto t0 = std::chrono::steady_clock::now();
        block[b] = (unsigned *)nvshmem_malloc(GIB);
        if (b == 0) malloc_ms = since(t0);
        if (!block[b]) {
            fprintf(stderr, "PE %d: nvshmem_malloc of GiB %d of %d failed\n", mype, b + 1, BLOCKS);
            nvshmem_global_exit(1);
        }
        if (b == 0) {
            t0 = std::chrono::steady_clock::now();
            nvshmem_barrier_all();
            barrier_ms = since(t0);
        }
    }
    unsigned *src = block[0], *dest = block[BLOCKS - 1];
    unsigned long long *bad_d, bad = 0;
    CUDA_CHECK(cudaMalloc((void **)&bad_d, sizeof(bad)));
    CUDA_CHECK(cudaMemset(bad_d, 0, sizeof(bad)));
    fill<<<256, 256>>>(src, CHECKED / sizeof(unsigned), (unsigned)mype + 1);
    CUDA_CHECK(cudaMemset(dest, 0, CHECKED));
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    put_next<<<32, 256>>>(dest, src, CHECKED, (mype + 1) % npes);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* the puts are complete and visible after it */
    const int prev = (mype + npes - 1) % npes;
    count_bad<<<256, 256>>>(dest, CHECKED / sizeof(unsigned), (unsigned)prev + 1, bad_d);
    CUDA_CHECK(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
    printf("PE %d of %d: %d GiB allocated; first nvshmem_malloc (1 GiB) %.3f ms, first barrier %.3f ms; %llu wrong values\n",
           mype, npes, BLOCKS, malloc_ms, barrier_ms, bad);
    for (int b = BLOCKS - 1; b >= 0; b--) nvshmem_free(block[b]);
    CUDA_CHECK(cudaFree(bad_d));
    nvshmem_finalize();
    return bad ? 1 : 0;
}
