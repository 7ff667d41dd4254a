/* Kernels that only call a grid-scoped collective, as a user's cooperative kernel would: compiled
 * (never run) by test_registers.sh, which reads their register counts from ptxas. */
#include <gshmem.h>

#define GRID_KERNEL(name, T, call) \
    __global__ void name(T *d, const T *s, size_t n) { call; }
GRID_KERNEL(grid_float_sum_reduce, float, shmemx_float_sum_reduce_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_float_sum_reducescatter, float, shmemx_float_sum_reducescatter_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_bfloat16_sum_reduce, __nv_bfloat16, shmemx_bfloat16_sum_reduce_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_double_max_reduce, double, shmemx_double_max_reduce_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_float_fcollect, float, shmemx_float_fcollect_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_float_alltoall, float, shmemx_float_alltoall_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_float_broadcast, float, shmemx_float_broadcast_grid(SHMEM_TEAM_WORLD, d, s, n, 0))
