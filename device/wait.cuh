/* The acquire-load-and-compare wait, written once: shmem_TYPE_wait_until, the wait_until_* and
 * test* families, shmem_signal_wait_until (device/signal.cuh) and the P2P transport's
 * stream-ordered wait kernel all spin here. Stateless: the bound of a wait (its timeout and the PE
 * named in the report) comes from a policy, gshmemi_dstate_bound for the inline API (device/sync.cuh). */
#ifndef GSHMEM_DEVICE_WAIT_CUH
#define GSHMEM_DEVICE_WAIT_CUH

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gshmem/types.h"
#include "memops.cuh"

/* Bounded spinning: a wait on another PE that lasts longer than the timeout is reported (routine,
 * PE, address) and traps instead of hanging silently; so is one still spinning once this PE's
 * host proxy has failed a request (whatever it waits for may have been that request). The check
 * is cheap and the report cold: a spin loop tests gshmemi_wait_expired_in and only then works out
 * what to report, so neither the timeout, the proxy's state nor the peer is read while spinning.
 * Bound: timeout_ns() (0 = never), proxy_failed() and my_pe(). */
template <typename Bound> GSHMEMI_DEV bool gshmemi_wait_expired_in(uint64_t *start, uint32_t *spins, const Bound &b)
{
    if ((++*spins & 0xffff) != 0) return false;
    if (b.proxy_failed()) return true;
    uint64_t now = gshmemi_globaltimer();
    if (*start == 0) {
        *start = now;
        return false;
    }
    return b.timeout_ns() && now - *start > b.timeout_ns();
}
template <typename Bound> GSHMEMI_DEV void gshmemi_wait_report_in(const char *what, const void *addr, int peer, const Bound &b)
{
    if (b.proxy_failed())
        printf("gshmem: PE %d: %s stopped waiting (address %p, peer PE %d): this PE's host proxy failed a request (its log "
               "names the request, the peer and the cause)\n",
               b.my_pe(), what, addr, peer);
    else
        printf("gshmem: PE %d: %s waited more than %llu s (address %p, peer PE %d); see GSHMEM_DEVICE_WAIT_TIMEOUT\n",
               b.my_pe(), what, (unsigned long long)(b.timeout_ns() / 1000000000ull), addr, peer);
    __trap();
}

/* 4- and 8-byte words are read with an acquire; shorter ones with a volatile load, and a fence
 * after the satisfying one (gshmemi_sync_done) gives the same ordering. */
template <typename T> GSHMEMI_DEV T gshmemi_sync_load(const T *p)
{
    T v;
    if (sizeof(T) == 8) {
        uint64_t r = gshmemi_ld_acquire_u64(p);
        memcpy(&v, &r, 8);
    } else if (sizeof(T) == 4) {
        uint32_t r = gshmemi_ld_acquire_u32(p);
        memcpy(&v, &r, 4);
    } else {
        v = *(const volatile T *)p;
    }
    return v;
}
template <typename T> GSHMEMI_DEV void gshmemi_sync_done(void)
{
    if (sizeof(T) < 4) __threadfence_system();
}
/* cur cmp value, signed or unsigned as T is. */
template <typename T> GSHMEMI_DEV int gshmemi_sync_cmp(int cmp, T cur, T value)
{
    return (T)-1 < (T)0 ? gshmemi_cmp(cmp, (long long)cur, (long long)value)
                        : gshmemi_cmp_u(cmp, (unsigned long long)cur, (unsigned long long)value);
}
template <typename T> GSHMEMI_DEV int gshmemi_sync_test1(const T *p, int cmp, T value)
{
    return gshmemi_sync_cmp<T>(cmp, gshmemi_sync_load(p), value);
}

/* Spins until *ivar cmp value_of() and returns the value of *ivar that satisfied it. value_of is
 * called on every spin, as the original loops re-read a cmp_values[i]. The caller ends the wait
 * with gshmemi_sync_done<T>() (once, after all the words it waits for). */
#define GSHMEMI_WAIT_BATCH 8 /* polls between two timeout tests */
template <typename T, typename ValueOf, typename Bound>
GSHMEMI_DEV T gshmemi_spin_until_of(const T *ivar, int cmp, const ValueOf &value_of, const char *what, const Bound &b)
{
    uint64_t start = 0;
    uint32_t spins = 0;
    T cur, value;
    /* Polls in unrolled batches, the timeout test between batches: where the kernel holds any
     * other loop (the remote paths' waits), ptxas gives each loop iteration a YIELD and a
     * convergence barrier, which a batch pays once. The value before the word: the acquire must
     * not hold back the read of cmp_values[i]. */
    for (;;) {
#pragma unroll
        for (int k = 0; k < GSHMEMI_WAIT_BATCH; k++)
            if (value = value_of(), gshmemi_sync_cmp<T>(cmp, cur = gshmemi_sync_load(ivar), value)) return cur;
        spins += GSHMEMI_WAIT_BATCH - 1;
        if (gshmemi_wait_expired_in(&start, &spins, b)) gshmemi_wait_report_in(what, ivar, -1, b);
    }
}
/* The same against one value. */
template <typename T, typename Bound>
GSHMEMI_DEV T gshmemi_spin_until(const T *ivar, int cmp, T value, const char *what, const Bound &b)
{
    return gshmemi_spin_until_of(ivar, cmp, [value] { return value; }, what, b);
}

#endif
