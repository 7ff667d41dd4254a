/* Device and on-stream barriers order data: in round r every PE writes r into its word on every
 * PE, barriers, and then must see r in every word. */
#include "gpu_test.cuh"

static __global__ void rounds_kernel(int *words, int first, int rounds, int scope, int *errors)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (int r = first; r < first + rounds; r++) {
        if (threadIdx.x == 0)
            for (int t = 0; t < n; t++) shmem_int_p(words + me, r, t);
        if (scope == 0) {
            if (threadIdx.x == 0) shmem_barrier_all();
            __syncthreads();
        } else if (scope == 1) {
            if (threadIdx.x < 32) shmemx_barrier_all_warp();
            __syncthreads();
        } else {
            shmemx_barrier_all_block();
        }
        if (threadIdx.x < n && ((volatile int *)words)[threadIdx.x] < r) atomicAdd(errors, 1);
        /* Nobody may write round r+1 before everybody has checked round r. */
        if (threadIdx.x == 0) shmem_barrier_all();
        __syncthreads();
    }
}

static __global__ void check_kernel(const int *words, int r, int *errors)
{
    if (threadIdx.x < shmem_n_pes() && words[threadIdx.x] != r) atomicAdd(errors, 1);
}
static __global__ void write_kernel(int *words, int r)
{
    for (int t = 0; t < shmem_n_pes(); t++) shmem_int_p(words + shmem_my_pe(), r, t);
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    int *words = (int *)shmem_calloc(npes, sizeof(int)), *errors, h = 0, r = 1;
    cudaStream_t s;
    /* quick mode: 50 device rounds per scope and 20 on-stream rounds instead of 500 and 200 */
    const int rounds = gt_quick() ? 50 : 500, stream_rounds = gt_quick() ? 20 : 200;
    GT_CUDA(cudaMalloc((void **)&errors, sizeof(int)));
    GT_CUDA(cudaMemset(errors, 0, sizeof(int)));
    GT_CUDA(cudaStreamCreate(&s));
    for (int scope = 0; scope < 3; scope++, r += rounds) {
        rounds_kernel<<<1, 128>>>(words, r, rounds, scope, errors);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
    }
    /* Stream-ordered: write, barrier, check, barrier, all enqueued without host waits. */
    for (int i = 0; i < stream_rounds; i++, r++) {
        write_kernel<<<1, 1, 0, s>>>(words, r);
        shmemx_barrier_all_on_stream(s);
        check_kernel<<<1, 1024, 0, s>>>(words, r, errors);
        shmemx_barrier_all_on_stream(s);
    }
    GT_CUDA(cudaStreamSynchronize(s));
    GT_CUDA(cudaMemcpy(&h, errors, sizeof(int), cudaMemcpyDeviceToHost));
    GT_CHECK(h == 0, "%d stale words seen after a barrier", h);
    if (me == 0) printf("test_barrier: thread/warp/block/on-stream barriers ordered data on %d PEs\n", npes);
    shmem_free(words);
    shmem_finalize();
    return 0;
}
