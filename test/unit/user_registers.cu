/* Kernels written as a user writes them, through gshmem.h (user_registers_kernels.h, and the
 * forms NVSHMEM lacks): test_user_registers.sh reads their register counts from ptxas: a kernel of
 * 1024 threads may use at most 64, and these must fit 48, the remote path's code included. */
#include <gshmem.h>

#define SH(name) shmem_##name
#define SHX(name) shmemx_##name
#define SHC(name) SHMEM_##name
#include "user_registers_kernels.h"

/* ---- fetching atomics, _nbi ---- */
USER_KERNEL(int_atomic_fetch_add_nbi, (int *r, int *d, int pe, int iters),
            LOOP shmem_int_atomic_fetch_add_nbi(r + i, d, 1, pe); shmem_quiet())
