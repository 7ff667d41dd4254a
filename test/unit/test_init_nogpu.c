/* Without a GPU (or a driver), shmem initialization must fail with a clear error, not crash. */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "gshmem.h"

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        fprintf(stderr, "a GPU is present: this test is for hosts without one; skipped\n");
        return 77;
    }
    int rc = shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL);
    if (rc == 0) {
        fprintf(stderr, "shmemx_init_attr succeeded without a GPU\n");
        return 1;
    }
    if (shmem_malloc(64) != NULL || shmem_my_pe() != -1) {
        fprintf(stderr, "the library acts initialized after a failed init\n");
        return 1;
    }
    int level = -7;
    if (shmem_init_thread(9, &level) != -1 || shmem_init_thread(SHMEM_THREAD_MULTIPLE, &level) != -1 || level != -7) {
        fprintf(stderr, "shmem_init_thread took a bad level, or succeeded without a GPU\n");
        return 1;
    }
    shmem_query_thread(&level);
    if (level != -7 || shmem_pe_accessible(0) != 0 || shmem_addr_accessible(&level, 0) != 0) {
        fprintf(stderr, "thread or accessibility queries answer after a failed init\n");
        return 1;
    }
    /* Teams, barriers and collectives after the failed init: errors, no crash. */
    shmem_team_t team = 7;
    int buf[4] = {0};
    if (shmem_team_n_pes(SHMEM_TEAM_WORLD) != -1 || shmem_team_my_pe(SHMEM_TEAM_WORLD) != -1 ||
        shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_WORLD) != -1) {
        fprintf(stderr, "team queries answer after a failed init\n");
        return 1;
    }
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &team) != -1 || team != SHMEM_TEAM_INVALID) {
        fprintf(stderr, "shmem_team_split_strided did not fail with SHMEM_TEAM_INVALID after a failed init\n");
        return 1;
    }
    if (shmem_int_sum_reduce(SHMEM_TEAM_WORLD, buf, buf + 2, 2) != -1 ||
        shmemx_float_max_reduce_on_stream(SHMEM_TEAM_WORLD, (float *)buf, (const float *)buf + 2, 2, NULL) != -1 ||
        shmem_int_broadcast(SHMEM_TEAM_WORLD, buf, buf + 2, 2, 0) != -1) {
        fprintf(stderr, "a collective did not fail after a failed init\n");
        return 1;
    }
    shmem_barrier(SHMEM_TEAM_WORLD);
    shmem_sync_all();
    printf("shmemx_init_attr failed cleanly without a GPU (%d); teams and collectives refuse to run\n", rc);
    return 0;
}
