/* An allreduce on split teams, written as an NVSHMEM program: nvshmem_team_split_strided makes a
 * team of every PE and a team of the even PEs; members sum-reduce on the host
 * (nvshmem_int_sum_reduce), on a stream (nvshmemx_int_sum_reduce_on_stream) and from a kernel
 * (nvshmemx_int_sum_reduce_block), and check the sums. */
#include "compat_util.h"

#define N 4096

__global__ void fill(int *src, int pe, int round)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
        src[i] = (pe + 1) * (i % 97 + 1) + round;
}

__global__ void reduce_in_kernel(nvshmem_team_t team, int *dest, const int *src, int *status)
{
    int rc = nvshmemx_int_sum_reduce_block(team, dest, src, N);
    if (threadIdx.x == 0) *status = rc;
}

/* Sum over the members (world PEs start + k * stride) of what fill() wrote. */
static int check(const char *what, const int *dest_d, int start, int stride, int size, int round, int mype)
{
    int *host = (int *)malloc(N * sizeof(int)), bad = 0;
    CUDA_CHECK(cudaMemcpy(host, dest_d, N * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int k = 0; k < size; k++) want += (start + k * stride + 1) * (i % 97 + 1) + round;
        if (host[i] != want && bad++ < 5) fprintf(stderr, "PE %d: %s: dest[%d] = %d, expected %d\n", mype, what, i, host[i], want);
    }
    free(host);
    printf("allreduce_team: PE %d: %s over %d PEs: %s\n", mype, what, size, bad ? "FAILED" : "ok");
    return bad != 0;
}

int main(void)
{
    int mype, npes;
    cudaStream_t stream = compat_start(&mype, &npes);

    int *src = (int *)nvshmem_malloc(N * sizeof(int));
    int *dest = (int *)nvshmem_malloc(N * sizeof(int));
    int *status = NULL;
    CUDA_CHECK(cudaMalloc(&status, sizeof(int)));

    nvshmem_team_t all, even;
    nvshmem_team_config_t config = NVSHMEM_TEAM_CONFIG_INITIALIZER;
    int fails = 0;
    if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, npes, &config, 0, &all) != 0 ||
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even) != 0) {
        fprintf(stderr, "PE %d: nvshmem_team_split_strided failed\n", mype);
        return 1;
    }
    if (nvshmem_team_n_pes(all) != npes || nvshmem_team_my_pe(all) != mype) {
        fprintf(stderr, "PE %d: the split team has %d PEs, this PE is %d in it\n", mype, nvshmem_team_n_pes(all),
                nvshmem_team_my_pe(all));
        fails++;
    }
    if ((mype % 2 == 0) != (even != NVSHMEM_TEAM_INVALID)) {
        fprintf(stderr, "PE %d: membership of the even team is wrong\n", mype);
        fails++;
    }

    /* host form, on the team of every PE */
    fill<<<8, 256>>>(src, mype, 1);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (nvshmem_int_sum_reduce(all, dest, src, N) != 0) fails++;
    fails += check("nvshmem_int_sum_reduce", dest, 0, 1, npes, 1, mype);

    /* on a stream, on the even PEs' team */
    if (even != NVSHMEM_TEAM_INVALID) {
        fill<<<8, 256, 0, stream>>>(src, mype, 2);
        if (nvshmemx_int_sum_reduce_on_stream(even, dest, src, N, stream) != 0) fails++;
        CUDA_CHECK(cudaStreamSynchronize(stream));
        fails += check("nvshmemx_int_sum_reduce_on_stream", dest, 0, 2, (npes + 1) / 2, 2, mype);
    }
    nvshmem_barrier_all();

    /* from a kernel, one block, on the team of every PE */
    fill<<<8, 256, 0, stream>>>(src, mype, 3);
    nvshmemx_barrier_all_on_stream(stream);
    reduce_in_kernel<<<1, 256, 0, stream>>>(all, dest, src, status);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int rc = -1;
    CUDA_CHECK(cudaMemcpy(&rc, status, sizeof(int), cudaMemcpyDeviceToHost));
    if (rc != 0) {
        fprintf(stderr, "PE %d: nvshmemx_int_sum_reduce_block returned %d\n", mype, rc);
        fails++;
    }
    fails += check("nvshmemx_int_sum_reduce_block", dest, 0, 1, npes, 3, mype);

    nvshmem_barrier_all();
    if (even != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(even);
    nvshmem_team_destroy(all);
    CUDA_CHECK(cudaFree(status));
    nvshmem_free(dest);
    nvshmem_free(src);
    CUDA_CHECK(cudaStreamDestroy(stream));
    nvshmem_finalize();
    return fails ? 1 : 0;
}
