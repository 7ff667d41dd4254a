/* Per-module device state. Each CUDA translation unit that includes gshmem.h gets its own
 * __constant__ copy (internal linkage, so no -rdc is needed) and registers, from a static
 * constructor, a function that the runtime calls to fill that copy at shmem_init. The function is
 * compiled into the user's module, so it uses the user's CUDA runtime and symbol table. The
 * registration carries the layout table this module was compiled with (device/layout_check.h):
 * the runtime refuses a module whose table differs from its own, naming the first entry. */
#ifndef GSHMEM_DEVICE_STATE_CUH
#define GSHMEM_DEVICE_STATE_CUH

#include <cuda_runtime.h>

#include "gshmem/types.h" /* brings device/layout.h */
#include "layout_check.h"
#include "memops.cuh"

static __constant__ gshmemi_device_state_t gshmemi_dstate;

/* pe's heap as mapped here, NULL when pe is reached remotely. The constant load is made whatever
 * pe is (its index masked into the array), so that the compiler may hoist it, with the test of
 * pe, out of the caller's loop (a load inside the test was redone on every turn, which slowed
 * atomic_latency). The array starts at PE 0: one subtraction more, to start it at the lowest P2P
 * PE, slowed the on-stream barrier. */
GSHMEMI_DEV char *gshmemi_peer_base(int pe)
{
    char *near = gshmemi_dstate.peer_base_c[pe & (GSHMEMI_CONST_PEERS - 1)];
    return (unsigned)pe < GSHMEMI_CONST_PEERS ? near : gshmemi_dstate.peer_base[pe];
}

/* A kernel of this module that is never launched: its handle names the module, whose kernels the
 * runtime may load at once (gshmemi_module_preload). */
static __global__ void gshmemi_module_anchor(void) {}

static int gshmemi_module_update(const gshmemi_device_state_t *state, int device)
{
    cudaFunction_t anchor;
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess) err = cudaMemcpyToSymbol(gshmemi_dstate, state, sizeof(*state));
    if (err == cudaSuccess) err = cudaGetFuncBySymbol(&anchor, (const void *)gshmemi_module_anchor);
    if (err == cudaSuccess) (void)gshmemi_module_preload((void *)anchor);
    return (int)err;
}

/* A C++ dynamic initializer, not __attribute__((constructor)): nvcc appends the module's own CUDA
 * registration (a constructor) after this header's code, and a constructor function here would
 * run before it, so a module dlopen'ed after shmem_init would be filled before its symbols exist
 * ("invalid device symbol"). The translation unit's dynamic initializers run after every
 * constructor function of the unit. */
static const gshmemi_layout_entry_t gshmemi_module_layout[] = GSHMEMI_LAYOUT_ROWS;
static int gshmemi_module_ctor(void)
{
    gshmemi_module_register_layout(gshmemi_module_update, gshmemi_module_layout,
                                   (unsigned)(sizeof(gshmemi_module_layout) / sizeof(gshmemi_module_layout[0])));
    return 0;
}
__attribute__((unused)) static const int gshmemi_module_registered = gshmemi_module_ctor();

#endif
