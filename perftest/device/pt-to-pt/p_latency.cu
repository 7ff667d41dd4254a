/* p_latency: int_p + int_wait_until ping-pong between PE 0 and PE 1; one-way latency. */
#include "../../common/perftest.h"

static __global__ void pingpong(int *flag, int peer, int iters, int first)
{
    for (int i = 1; i <= iters; i++) {
        if (first) {
            shmem_int_p(flag, i, peer);
            shmem_int_wait_until(flag, SHMEM_CMP_EQ, i);
        } else {
            shmem_int_wait_until(flag, SHMEM_CMP_EQ, i);
            shmem_int_p(flag, i, peer);
        }
    }
}

int main(int argc, char **argv)
{
    pt_opts_t o = {4, 4, 2, 10000, 1000, 1, 1, 0, 0, NULL};
    int *flag, me;
    float ms = 0;

    pt_parse(argc, argv, &o);
    pt_require_gpu(o.name);
    shmem_init();
    me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        fprintf(stderr, "%s: needs 2 PEs\n", o.name);
        shmem_global_exit(1);
    }
    flag = (int *)shmem_calloc(1, sizeof(int));
    if (me == 0) pt_header(&o, "int_p + int_wait_until ping-pong, one-way", "latency(us)");
    if (me < 2) {
        pingpong<<<1, 1>>>(flag, 1 - me, o.warmup, me == 0);
        PT_CUDA(cudaDeviceSynchronize());
    }
    PT_CUDA(cudaMemset(flag, 0, sizeof(int)));
    shmem_barrier_all();
    if (me < 2) {
        PT_TIME_MS(ms, 0, (pingpong<<<1, 1>>>(flag, 1 - me, o.iters, me == 0)));
    }
    shmem_barrier_all();
    if (me == 0) {
        double us = ms * 1000.0 / o.iters / 2;
        pt_row(&o, sizeof(int), us * 2 * o.iters, us, "latency_us");
    }
    shmem_free(flag);
    shmem_finalize();
    return 0;
}
