/* Stream-ordered barrier and quiet: one small kernel each, so they can be captured in a graph. */
#include "gshmem.h"
#include "../runtime/state.h"

static __global__ void barrier_all_kernel(void)
{
    /* One warp: its lanes signal and watch the peers in parallel. */
    gshmemi_barrier_all_scope(GSHMEMI_SCOPE_WARP);
}

static __global__ void quiet_kernel(void) { __threadfence_system(); }

extern "C" int gshmemi_launch_barrier_all(cudaStream_t stream)
{
    barrier_all_kernel<<<1, 32, 0, stream>>>();
    GSHMEMI_CUDACHECK(cudaGetLastError());
    return GSHMEMI_OK;
}

extern "C" int gshmemi_launch_quiet(cudaStream_t stream)
{
    quiet_kernel<<<1, 1, 0, stream>>>();
    GSHMEMI_CUDACHECK(cudaGetLastError());
    return GSHMEMI_OK;
}
