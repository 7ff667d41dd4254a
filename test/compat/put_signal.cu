/* A producer and a consumer written as an NVSHMEM program: PE 0 sends ROUNDS messages to PE 1
 * with nvshmem_putmem_signal, PE 1 waits for each with nvshmem_signal_wait_until, checks it and
 * acknowledges it with nvshmemx_signal_op, and the producer waits for the acknowledgement before
 * it reuses the buffer. Every PE pair (2k, 2k+1) does the same. */
#include "compat_util.h"

#define ROUNDS 32
#define COUNT 2048 /* ints a message */

__device__ int expected(int round, int i) { return round * 7919 + i; }

__global__ void producer(int *msg, int *staging, uint64_t *data_sig, uint64_t *ack_sig, int peer)
{
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = threadIdx.x; i < COUNT; i += blockDim.x) staging[i] = expected(r, i);
        __syncthreads();
        if (threadIdx.x == 0) {
            nvshmem_putmem_signal(msg, staging, COUNT * sizeof(int), data_sig, r + 1, NVSHMEM_SIGNAL_SET, peer);
            /* the consumer has read round r before the buffer is written again */
            nvshmem_signal_wait_until(ack_sig, NVSHMEM_CMP_GE, (uint64_t)(r + 1));
        }
        __syncthreads();
    }
}

__global__ void consumer(const int *msg, uint64_t *data_sig, uint64_t *ack_sig, int peer, int *bad)
{
    __shared__ int errors;
    if (threadIdx.x == 0) errors = 0;
    __syncthreads();
    for (int r = 0; r < ROUNDS; r++) {
        if (threadIdx.x == 0) nvshmem_signal_wait_until(data_sig, NVSHMEM_CMP_EQ, (uint64_t)(r + 1));
        __syncthreads();
        for (int i = threadIdx.x; i < COUNT; i += blockDim.x)
            if (msg[i] != expected(r, i)) atomicAdd(&errors, 1);
        __syncthreads();
        if (threadIdx.x == 0) nvshmemx_signal_op(ack_sig, 1, NVSHMEM_SIGNAL_ADD, peer);
    }
    __syncthreads();
    if (threadIdx.x == 0) *bad = errors;
}

int main(void)
{
    int mype, npes;
    compat_start(&mype, &npes);
    if (npes < 2) {
        fprintf(stderr, "put_signal needs 2 PEs or more\n");
        nvshmem_finalize();
        return 1;
    }

    int *msg = (int *)nvshmem_malloc(COUNT * sizeof(int));
    uint64_t *sigs = (uint64_t *)nvshmem_calloc(2, sizeof(uint64_t)); /* [0] data, [1] ack */
    int *staging = NULL, *bad = NULL;
    CUDA_CHECK(cudaMalloc(&staging, COUNT * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&bad, sizeof(int)));
    CUDA_CHECK(cudaMemset(bad, 0, sizeof(int)));
    nvshmem_barrier_all();

    int role = mype % 2, peer = role ? mype - 1 : mype + 1, errors = 0;
    if (peer >= npes) { /* an odd PE out */
        printf("put_signal: PE %d has no partner\n", mype);
    } else if (role == 0) {
        producer<<<1, 256>>>(msg, staging, &sigs[0], &sigs[1], peer);
    } else {
        consumer<<<1, 256>>>(msg, &sigs[0], &sigs[1], peer, bad);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(&errors, bad, sizeof(int), cudaMemcpyDeviceToHost));
    uint64_t sig[2];
    CUDA_CHECK(cudaMemcpy(sig, sigs, sizeof(sig), cudaMemcpyDeviceToHost));
    if (peer < npes) {
        /* the consumer saw every round's signal, the producer every acknowledgement */
        uint64_t want = ROUNDS, got = role ? sig[0] : sig[1];
        if (got != want) {
            fprintf(stderr, "PE %d: final signal %llu, expected %llu\n", mype, (unsigned long long)got, (unsigned long long)want);
            errors++;
        }
        printf("put_signal: PE %d (%s of PE %d): %s (%d rounds of %d ints, %d wrong)\n", mype, role ? "consumer" : "producer",
               peer, errors ? "FAILED" : "ok", ROUNDS, COUNT, errors);
    }

    nvshmem_barrier_all();
    CUDA_CHECK(cudaFree(bad));
    CUDA_CHECK(cudaFree(staging));
    nvshmem_free(sigs);
    nvshmem_free(msg);
    nvshmem_finalize();
    return errors ? 1 : 0;
}
