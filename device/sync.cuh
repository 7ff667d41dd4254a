/* Ordering, point-to-point waits and the device barrier. */
#ifndef GSHMEM_DEVICE_SYNC_CUH
#define GSHMEM_DEVICE_SYNC_CUH

#include <stdio.h>

#include "p2p.cuh"

/* All prior stores of this thread to any PE are complete and visible system-wide. */
GSHMEMI_DEV void gshmemi_quiet(void) { __threadfence_system(); }
/* Orders this thread's prior stores before its later ones, per destination PE. Over P2P the
 * same fence gives that ordering. */
GSHMEMI_DEV void gshmemi_fence(void) { __threadfence_system(); }

/* Bounded spinning: a wait on another PE that lasts longer than the runtime's device wait timeout
 * is reported (routine, PE, address) and traps instead of hanging silently. The check is cheap
 * and the report cold: a spin loop tests gshmemi_wait_expired and only then works out what to
 * report, so computing the peer never slows the spin. */
GSHMEMI_DEV bool gshmemi_wait_expired(uint64_t *start, uint32_t *spins)
{
    if ((++*spins & 0xffff) != 0) return false;
    uint64_t now = gshmemi_globaltimer();
    if (*start == 0) {
        *start = now;
        return false;
    }
    return gshmemi_dstate.wait_timeout_ns && now - *start > gshmemi_dstate.wait_timeout_ns;
}
GSHMEMI_DEV void gshmemi_wait_report(const char *what, const void *addr, int peer)
{
    printf("gshmem: PE %d: %s waited more than %llu s (address %p, peer PE %d); see GSHMEM_DEVICE_WAIT_TIMEOUT\n",
           gshmemi_dstate.my_pe, what, (unsigned long long)(gshmemi_dstate.wait_timeout_ns / 1000000000ull), addr, peer);
    __trap();
}
GSHMEMI_DEV void gshmemi_wait_check(uint64_t *start, uint32_t *spins, const char *what, const void *addr, int peer)
{
    if (gshmemi_wait_expired(start, spins)) gshmemi_wait_report(what, addr, peer);
}

/* Waits until *ivar cmp value holds; the load that sees it is an acquire. */
#define GSHMEMI_WAIT_UNTIL(T, ivar, cmp, value, what)                                                \
    do {                                                                                             \
        uint64_t start_ = 0;                                                                         \
        uint32_t spins_ = 0;                                                                         \
        for (;;) {                                                                                   \
            T cur_;                                                                                  \
            if (sizeof(T) == 8) {                                                                    \
                uint64_t raw_ = gshmemi_ld_acquire_u64(ivar);                                        \
                memcpy(&cur_, &raw_, 8);                                                             \
            } else if (sizeof(T) == 4) {                                                             \
                uint32_t raw_ = gshmemi_ld_acquire_u32(ivar);                                        \
                memcpy(&cur_, &raw_, 4);                                                             \
            } else {                                                                                 \
                cur_ = *(volatile T *)(ivar);                                                        \
            }                                                                                        \
            if ((T)-1 < (T)0 ? gshmemi_cmp(cmp, (long long)cur_, (long long)(value))                 \
                             : gshmemi_cmp_u(cmp, (unsigned long long)cur_, (unsigned long long)(value))) \
                break;                                                                               \
            gshmemi_wait_check(&start_, &spins_, what, ivar, -1);                                    \
        }                                                                                            \
        if (sizeof(T) < 4) __threadfence_system();                                                   \
    } while (0)

#endif
