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
    printf("shmemx_init_attr failed cleanly without a GPU (%d)\n", rc);
    return 0;
}
