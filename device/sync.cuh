/* Ordering (quiet, fence) and the bound of every device wait of the inline API: the runtime's
 * GSHMEM_DEVICE_WAIT_TIMEOUT, read from this module's device state. The waits themselves are in
 * device/wait.cuh. */
#ifndef GSHMEM_DEVICE_SYNC_CUH
#define GSHMEM_DEVICE_SYNC_CUH

#include "p2p.cuh"
#include "wait.cuh"

/* All prior stores of this thread to any PE are complete and visible system-wide: a fence for
 * P2P, and, where this PE has a proxy, every request posted so far complete at its target. */
GSHMEMI_DEV void gshmemi_quiet(void)
{
    __threadfence_system();
    if (gshmemi_proxy_on()) gshmemi_remote_quiet("shmem_quiet");
}
/* Orders this thread's prior stores before its later ones, per destination PE. Over P2P the
 * same fence gives that ordering; the proxy is told too (its backends may run atomics apart
 * from copies); over IBGDA it is a quiet (a WQE fence flag would do, later). */
GSHMEMI_DEV void gshmemi_fence(void)
{
    __threadfence_system();
    if (gshmemi_proxy_on()) gshmemi_remote_fence("shmem_fence");
}

/* The wait bound of the inline API; read only when a wait has spun long enough to look. */
struct gshmemi_dstate_bound {
    __device__ __forceinline__ uint64_t timeout_ns() const { return gshmemi_dstate.wait_timeout_ns; }
    __device__ __forceinline__ int my_pe() const { return gshmemi_dstate.my_pe; }
    __device__ __forceinline__ bool proxy_failed() const
    {
        return gshmemi_dstate.proxy.size && *gshmemi_dstate.proxy.error;
    }
};

GSHMEMI_DEV bool gshmemi_wait_expired(uint64_t *start, uint32_t *spins)
{
    return gshmemi_wait_expired_in(start, spins, gshmemi_dstate_bound());
}
GSHMEMI_DEV_REPORT void gshmemi_wait_report(const char *what, const void *addr, int peer)
{
    gshmemi_wait_report_in(what, addr, peer, gshmemi_dstate_bound());
    __trap(); /* what the report ends in, spelled out for the noreturn check */
}
GSHMEMI_DEV void gshmemi_wait_check(uint64_t *start, uint32_t *spins, const char *what, const void *addr, int peer)
{
    if (gshmemi_wait_expired(start, spins)) gshmemi_wait_report(what, addr, peer);
}

#endif
