/* The device code behind put-with-signal (OpenSHMEM 1.5, 9.9) and the array forms of the
 * point-to-point synchronization families wait_until_{all,any,some}[_vector] and test* (9.10).
 * The public routines are rows of the lists in gshmem/amo.h, made in gshmem/device.cuh. */
#ifndef GSHMEM_DEVICE_SIGNAL_CUH
#define GSHMEM_DEVICE_SIGNAL_CUH

#include <stdint.h>
#include <string.h>

#include "amo.cuh"
#include "sync.cuh"

/* The signal update: a release at system scope, so a consumer whose acquire load sees the signal
 * also sees everything this thread (and, through the group barrier before it, its group) wrote. */
GSHMEMI_DEV void gshmemi_signal_update(void *sig_peer, uint64_t signal, int sig_op)
{
    if (sig_op == SHMEM_SIGNAL_ADD) gshmemi_amo_red_release_add_b64(sig_peer, signal);
    else gshmemi_st_release_u64(sig_peer, signal);
}

/* A signal update of sig_addr on pe, routed: P2P, or through the proxy. */
GSHMEMI_DEV void gshmemi_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, const char *routine)
{
    char *base = gshmemi_route(sig_addr, sizeof(uint64_t), pe, routine);
    if (base) gshmemi_signal_update(gshmemi_at(base, sig_addr), signal, sig_op);
    else gshmemi_remote_put_signal(NULL, NULL, 0, sig_addr, signal, sig_op, pe, 0, routine);
}

/* Over P2P: the group copies, every thread fences its own stores to the system (so the data is
 * out before the barrier, whichever thread wrote it), the group syncs, and one thread signals. A
 * thread alone needs no fence: the signal's release orders its own stores before the signal.
 * Remote: one thread posts data and signal as one request, which the proxy executes in order. */
GSHMEMI_DEV void gshmemi_put_signal_scope(void *dest, const void *src, size_t n, uint64_t *sig_addr, uint64_t signal,
                                          int sig_op, int pe, int scope, int blocking, const char *routine)
{
    char *base = gshmemi_route(dest, n, pe, routine);
    if (!base) {
        gshmemi_remote_put_signal_scope(dest, src, n, sig_addr, signal, sig_op, pe, blocking, scope, routine);
        return;
    }
    unsigned tid = gshmemi_scope_tid_fresh(scope);
    gshmemi_scope_sync(scope);
    gshmemi_check_sym(sig_addr, sizeof(uint64_t), pe, routine);
    void *sig_peer = gshmemi_at(base, sig_addr);
    if (n) gshmemi_copy(gshmemi_at(base, dest), src, n, tid, gshmemi_scope_size_fresh(scope));
    if (scope != GSHMEMI_SCOPE_THREAD) __threadfence_system();
    gshmemi_scope_sync(scope);
    if (tid == 0) gshmemi_signal_update(sig_peer, signal, sig_op);
}

/* ---- point-to-point synchronization on arrays of local symmetric words (load, compare and
 * spin: device/wait.cuh) ---- */
/* Element i takes part unless status[i] != 0; cmp_values (the _vector forms) or value. */
#define GSHMEMI_SYNC_ACTIVE(status, i) (!(status) || (status)[i] == 0)
#define GSHMEMI_SYNC_VALUE(values, value, i) ((values) ? (values)[i] : (value))

template <typename T>
GSHMEMI_DEV void gshmemi_sync_wait_all(T *ivars, size_t n, const int *status, int cmp, T value, const T *values,
                                       const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (GSHMEMI_SYNC_ACTIVE(status, i))
            (void)gshmemi_spin_until_of(ivars + i, cmp, [&] { return GSHMEMI_SYNC_VALUE(values, value, i); }, what,
                                        gshmemi_dstate_bound());
    }
    gshmemi_sync_done<T>();
}

template <typename T>
GSHMEMI_DEV size_t gshmemi_sync_test_any(T *ivars, size_t n, const int *status, int cmp, T value, const T *values)
{
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i) && gshmemi_sync_test1(ivars + i, cmp, GSHMEMI_SYNC_VALUE(values, value, i))) {
            gshmemi_sync_done<T>();
            return i;
        }
    return SIZE_MAX;
}

template <typename T>
GSHMEMI_DEV size_t gshmemi_sync_test_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, T value,
                                          const T *values)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i) && gshmemi_sync_test1(ivars + i, cmp, GSHMEMI_SYNC_VALUE(values, value, i)))
            indices[count++] = i;
    if (count) gshmemi_sync_done<T>();
    return count;
}

template <typename T>
GSHMEMI_DEV int gshmemi_sync_test_all(T *ivars, size_t n, const int *status, int cmp, T value, const T *values)
{
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i) && !gshmemi_sync_test1(ivars + i, cmp, GSHMEMI_SYNC_VALUE(values, value, i)))
            return 0;
    gshmemi_sync_done<T>();
    return 1;
}

GSHMEMI_DEV int gshmemi_sync_any_active(size_t n, const int *status)
{
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i)) return 1;
    return 0;
}

/* SIZE_MAX when nelems is 0 or every element is excluded (nothing could ever satisfy it). */
template <typename T>
GSHMEMI_DEV size_t gshmemi_sync_wait_any(T *ivars, size_t n, const int *status, int cmp, T value, const T *values,
                                         const char *what)
{
    uint64_t start = 0;
    uint32_t spins = 0;
    if (!gshmemi_sync_any_active(n, status)) return SIZE_MAX;
    for (;;) {
        size_t i = gshmemi_sync_test_any(ivars, n, status, cmp, value, values);
        if (i != SIZE_MAX) return i;
        gshmemi_wait_check(&start, &spins, what, ivars, -1);
    }
}

/* 0 when nelems is 0 or every element is excluded; else waits for at least one. */
template <typename T>
GSHMEMI_DEV size_t gshmemi_sync_wait_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, T value,
                                          const T *values, const char *what)
{
    uint64_t start = 0;
    uint32_t spins = 0;
    if (!gshmemi_sync_any_active(n, status)) return 0;
    for (;;) {
        size_t c = gshmemi_sync_test_some(ivars, n, indices, status, cmp, value, values);
        if (c) return c;
        gshmemi_wait_check(&start, &spins, what, ivars, -1);
    }
}


#endif
