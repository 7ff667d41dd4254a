/* The device API: header-only inline CUDA. Included by gshmem.h when compiled by nvcc. Every
 * typed family is made here from its list (gshmem/rma.h, gshmem/amo.h): each row becomes a
 * __host__ __device__ routine (the device body on the GPU, the host body, a libgshmem call, on
 * the CPU) or a device-only one. */
#ifndef GSHMEM_DEVICE_CUH
#define GSHMEM_DEVICE_CUH

#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "device/p2p.cuh"
#include "device/signal.cuh"
#include "device/sync.cuh"
#include "device/team.cuh"
#include "gshmem/amo.h"
#include "gshmem/rma.h"

#define GSHMEMI_HOSTDEV GSHMEMI_EMIT_INLINE
#define GSHMEMI_DEVONLY GSHMEMI_EMIT_DEVICE
GSHMEMI_CORE_FAMILY
GSHMEMI_RMA_FAMILY
GSHMEM_RMA_EXT_TYPES(GSHMEMI_RMA_TYPED)
GSHMEMI_AMO_FAMILY
GSHMEMI_SIGNAL_FAMILY
GSHMEMI_SYNC_FAMILY
#undef GSHMEMI_HOSTDEV
#undef GSHMEMI_DEVONLY

/* Barriers and syncs on the device: called by one thread per PE (the _warp/_block forms by the
 * whole group). barrier = quiet + sync. */
GSHMEMI_HD void shmem_barrier(shmem_team_t team)
{
    GSHMEMI_HOSTDEV_BRANCH(gshmemi_team_barrier_scope(team, GSHMEMI_SCOPE_THREAD, "shmem_barrier"),
                           gshmemi_host_barrier(team, "shmem_barrier"));
}
GSHMEMI_HD void shmem_sync(shmem_team_t team)
{
    GSHMEMI_HOSTDEV_BRANCH(gshmemi_team_barrier_scope(team, GSHMEMI_SCOPE_THREAD, "shmem_sync"),
                           gshmemi_host_barrier(team, "shmem_sync"));
}
GSHMEMI_HD void shmem_sync_all(void) { shmem_sync(SHMEM_TEAM_WORLD); }
#define GSHMEMI_DEFINE_BARRIER_SCOPE(sfx, SCOPE)                                                                     \
    GSHMEMI_DEV void shmemx_barrier_all##sfx(void) { gshmemi_team_barrier_scope(SHMEM_TEAM_WORLD, SCOPE, __func__); } \
    GSHMEMI_DEV void shmemx_barrier##sfx(shmem_team_t team) { gshmemi_team_barrier_scope(team, SCOPE, __func__); }     \
    GSHMEMI_DEV void shmemx_sync##sfx(shmem_team_t team) { gshmemi_team_barrier_scope(team, SCOPE, __func__); }        \
    GSHMEMI_DEV void shmemx_sync_all##sfx(void) { gshmemi_team_barrier_scope(SHMEM_TEAM_WORLD, SCOPE, __func__); }
GSHMEMI_DEFINE_BARRIER_SCOPE(_warp, GSHMEMI_SCOPE_WARP)
GSHMEMI_DEFINE_BARRIER_SCOPE(_block, GSHMEMI_SCOPE_BLOCK)
#undef GSHMEMI_DEFINE_BARRIER_SCOPE

/* Teams and collectives. */
#include "gshmem/coll.cuh"

#endif
