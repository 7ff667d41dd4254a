/* The library's kernels that reach the remote path from a collective, as collectives/coll.cu
 * declares and builds them (remote calls direct): compiled (never run) by test_user_registers.sh,
 * which holds their stack frames, the remote path's included, within CUDA's default stack
 * (device/layout.h: GSHMEMI_REMOTE_STACK_KERNEL). */
#define GSHMEMI_REMOTE_DIRECT 1
#include <gshmem.h>

#include "device/coll.cuh"

template <typename T>
static __global__ void __launch_bounds__(512) remote_coll(gshmemi_team_dev_t t, gshmemi_coll_args_t a, int op, int slices)
{
    gshmemi_coll_remote_slice<T>(t, a, op, (int)blockIdx.x % slices, slices, threadIdx.x, blockDim.x, GSHMEMI_SCOPE_BLOCK,
                                 (int)blockIdx.x / slices, (int)gridDim.x / slices);
}
static __global__ void remote_barrier(gshmemi_team_dev_t t) { gshmemi_team_barrier_slice<true>(t, 0, threadIdx.x, blockDim.x, GSHMEMI_SCOPE_WARP); }

void *remote_stack_kernels[] = {(void *)remote_coll<float>, (void *)remote_coll<char>, (void *)remote_coll<double>,
                                (void *)remote_barrier};
