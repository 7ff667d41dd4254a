/* The kernels of user_registers_kernels.h as an NVSHMEM program spells them, through the
 * compatibility headers (include/nvshmem-compat). Compiled (never run) by test_user_registers.sh,
 * which holds them to the same 48 registers. */
#include <nvshmem.h>
#include <nvshmemx.h>

#define SH(name) nvshmem_##name
#define SHX(name) nvshmemx_##name
#define SHC(name) NVSHMEM_##name
#include "user_registers_kernels.h"
