/* Kernels that only call a grid-scoped collective, as a user's cooperative kernel would: compiled
 * (never run) by test_registers.sh, which reads their register counts from ptxas. */
#include <gshmem.h>

/* Most take the team as an argument, as a user's kernel does: its descriptor is then read from
 * global memory, not constant memory as WORLD's is, and needs more registers (168 before the grid
 * form kept it in shared memory). */
#define GRID_KERNEL(name, T, call) \
    __global__ void name(shmem_team_t team, T *d, const T *s, size_t n) { call; }
GRID_KERNEL(grid_float_sum_reduce_world, float, shmemx_float_sum_reduce_grid(SHMEM_TEAM_WORLD, d, s, n))
GRID_KERNEL(grid_float_sum_reduce, float, shmemx_float_sum_reduce_grid(team, d, s, n))
GRID_KERNEL(grid_float_sum_reducescatter, float, shmemx_float_sum_reducescatter_grid(team, d, s, n))
GRID_KERNEL(grid_bfloat16_sum_reduce, __nv_bfloat16, shmemx_bfloat16_sum_reduce_grid(team, d, s, n))
GRID_KERNEL(grid_half_prod_reduce, __half, shmemx_half_prod_reduce_grid(team, d, s, n))
GRID_KERNEL(grid_double_max_reduce, double, shmemx_double_max_reduce_grid(team, d, s, n))
GRID_KERNEL(grid_int32_xor_reduce, int32_t, shmemx_int32_xor_reduce_grid(team, d, s, n))
GRID_KERNEL(grid_float_fcollect, float, shmemx_float_fcollect_grid(team, d, s, n))
GRID_KERNEL(grid_float_alltoall, float, shmemx_float_alltoall_grid(team, d, s, n))
GRID_KERNEL(grid_float_broadcast, float, shmemx_float_broadcast_grid(team, d, s, n, 0))
