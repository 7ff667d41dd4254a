/* Put-with-signal, signal fetch/wait (OpenSHMEM 1.5, 9.9) and the point-to-point synchronization
 * families wait_until_{all,any,some}[_vector] and test* (9.10). Included at the end of
 * gshmem/device.cuh, after device/amo.cuh. */
#ifndef GSHMEM_DEVICE_SIGNAL_CUH
#define GSHMEM_DEVICE_SIGNAL_CUH

#include <stdint.h>
#include <string.h>

#include "amo.cuh"
#include "sync.cuh"

/* The signal update: a release at system scope, so a consumer whose acquire load sees the signal
 * also sees everything this thread (and, through the group barrier before it, its group) wrote. */
GSHMEMI_AMO_D void gshmemi_signal_update(void *sig_peer, uint64_t signal, int sig_op)
{
    if (sig_op == SHMEM_SIGNAL_ADD)
        asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(sig_peer), "l"(signal) : "memory");
    else
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(sig_peer), "l"(signal) : "memory");
}

/* The group copies, every thread fences its own stores to the system (so the data is out before
 * the barrier, whichever thread wrote it), the group syncs, and one thread signals. */
GSHMEMI_AMO_D void gshmemi_put_signal_group(void *dest_peer, const void *src, size_t n, void *sig_peer, uint64_t signal,
                                            int sig_op, int scope)
{
    unsigned tid = gshmemi_scope_tid(scope);
    gshmemi_scope_sync(scope);
    if (n) gshmemi_copy(dest_peer, src, n, tid, gshmemi_scope_size(scope));
    __threadfence_system();
    gshmemi_scope_sync(scope);
    if (tid == 0) gshmemi_signal_update(sig_peer, signal, sig_op);
}

/* Blocking and _nbi are the same over P2P: the stores are issued and fenced before the signal. */
#define GSHMEMI_DEFINE_PUT_SIGNAL(suffix, blocking)                                                           \
    GSHMEMI_AMO_HD void shmem_putmem_signal##suffix(void *dest, const void *source, size_t nelems,            \
                                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)  \
    {                                                                                                         \
        GSHMEMI_AMO_BRANCH(gshmemi_put_signal_group(gshmemi_peer_ptr(dest, pe), source, nelems,               \
                                                    gshmemi_peer_ptr(sig_addr, pe), signal, sig_op,           \
                                                    GSHMEMI_SCOPE_THREAD),                                    \
                           gshmemi_host_putmem_signal("shmem_putmem_signal" #suffix, dest, source, nelems,    \
                                                      sig_addr, signal, sig_op, pe, blocking));               \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmemx_putmem_signal##suffix##_warp(void *dest, const void *source, size_t nelems,     \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op,   \
                                                           int pe)                                            \
    {                                                                                                         \
        gshmemi_put_signal_group(gshmemi_peer_ptr(dest, pe), source, nelems, gshmemi_peer_ptr(sig_addr, pe),  \
                                 signal, sig_op, GSHMEMI_SCOPE_WARP);                                         \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmemx_putmem_signal##suffix##_block(void *dest, const void *source, size_t nelems,    \
                                                            uint64_t *sig_addr, uint64_t signal, int sig_op,  \
                                                            int pe)                                           \
    {                                                                                                         \
        gshmemi_put_signal_group(gshmemi_peer_ptr(dest, pe), source, nelems, gshmemi_peer_ptr(sig_addr, pe),  \
                                 signal, sig_op, GSHMEMI_SCOPE_BLOCK);                                        \
    }
GSHMEMI_DEFINE_PUT_SIGNAL(, 1)
GSHMEMI_DEFINE_PUT_SIGNAL(_nbi, 0)
#undef GSHMEMI_DEFINE_PUT_SIGNAL

#define GSHMEMI_DEFINE_TYPED_PUT_SIGNAL(name, T)                                                              \
    GSHMEMI_AMO_HD void shmem_##name##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                                  uint64_t signal, int sig_op, int pe)                        \
    {                                                                                                         \
        shmem_putmem_signal(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);                  \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_put_signal_nbi(T *dest, const T *source, size_t nelems,                \
                                                      uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                         \
        shmem_putmem_signal_nbi(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);              \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmemx_##name##_put_signal_warp(T *dest, const T *source, size_t nelems,               \
                                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                         \
        shmemx_putmem_signal_warp(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);            \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmemx_##name##_put_signal_block(T *dest, const T *source, size_t nelems,              \
                                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                         \
        shmemx_putmem_signal_block(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);           \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmemx_##name##_put_signal_nbi_warp(T *dest, const T *source, size_t nelems,           \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op,   \
                                                           int pe)                                            \
    {                                                                                                         \
        shmemx_putmem_signal_nbi_warp(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);        \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmemx_##name##_put_signal_nbi_block(T *dest, const T *source, size_t nelems,          \
                                                            uint64_t *sig_addr, uint64_t signal, int sig_op,  \
                                                            int pe)                                           \
    {                                                                                                         \
        shmemx_putmem_signal_nbi_block(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);       \
    }
GSHMEM_RMA_TYPES(GSHMEMI_DEFINE_TYPED_PUT_SIGNAL)
#undef GSHMEMI_DEFINE_TYPED_PUT_SIGNAL

/* A signal update without data (NVSHMEM's signal_op); a release like the one of put_signal. */
GSHMEMI_AMO_HD void shmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    GSHMEMI_AMO_BRANCH(gshmemi_signal_update(gshmemi_peer_ptr(sig_addr, pe), signal, sig_op),
                       gshmemi_host_putmem_signal("shmemx_signal_op", NULL, NULL, 0, sig_addr, signal, sig_op, pe, 1));
}

/* An acquire: data delivered before the signal is visible after this returns. */
GSHMEMI_AMO_HD uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    return GSHMEMI_AMO_BRANCH(gshmemi_ld_acquire_u64(sig_addr), gshmemi_host_signal_fetch(sig_addr));
}

GSHMEMI_AMO_D uint64_t gshmemi_signal_wait_dev(uint64_t *sig_addr, int cmp, uint64_t value)
{
    uint64_t start = 0, cur;
    uint32_t spins = 0;
    while (!gshmemi_cmp_u(cmp, cur = gshmemi_ld_acquire_u64(sig_addr), value))
        gshmemi_wait_check(&start, &spins, "shmem_signal_wait_until", sig_addr, -1);
    return cur;
}

/* Returns the value that satisfied the comparison; the load that saw it is an acquire. */
GSHMEMI_AMO_HD uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    return GSHMEMI_AMO_BRANCH(gshmemi_signal_wait_dev(sig_addr, cmp, cmp_value),
                              gshmemi_host_signal_wait_until(sig_addr, cmp, cmp_value));
}

/* ---- point-to-point synchronization on arrays of local symmetric words ---- */
/* 4- and 8-byte words are read with an acquire; shorter ones with a volatile load, and a fence
 * after the satisfying one gives the same ordering (gshmemi_sync_done). */
template <typename T> GSHMEMI_AMO_D T gshmemi_sync_load(const T *p)
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
template <typename T> GSHMEMI_AMO_D void gshmemi_sync_done(void)
{
    if (sizeof(T) < 4) __threadfence_system();
}
template <typename T> GSHMEMI_AMO_D int gshmemi_sync_test1(const T *p, int cmp, T value)
{
    T cur = gshmemi_sync_load(p);
    return !((T)-1 > (T)0) ? gshmemi_cmp(cmp, (long long)cur, (long long)value)
                        : gshmemi_cmp_u(cmp, (unsigned long long)cur, (unsigned long long)value);
}
/* Element i takes part unless status[i] != 0; cmp_values (the _vector forms) or value. */
#define GSHMEMI_SYNC_ACTIVE(status, i) (!(status) || (status)[i] == 0)
#define GSHMEMI_SYNC_VALUE(values, value, i) ((values) ? (values)[i] : (value))

template <typename T>
GSHMEMI_AMO_D void gshmemi_sync_wait_all(T *ivars, size_t n, const int *status, int cmp, T value, const T *values,
                                         const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (!GSHMEMI_SYNC_ACTIVE(status, i)) continue;
        uint64_t start = 0;
        uint32_t spins = 0;
        while (!gshmemi_sync_test1(ivars + i, cmp, GSHMEMI_SYNC_VALUE(values, value, i)))
            gshmemi_wait_check(&start, &spins, what, ivars + i, -1);
    }
    gshmemi_sync_done<T>();
}

template <typename T>
GSHMEMI_AMO_D size_t gshmemi_sync_test_any(T *ivars, size_t n, const int *status, int cmp, T value, const T *values)
{
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i) && gshmemi_sync_test1(ivars + i, cmp, GSHMEMI_SYNC_VALUE(values, value, i))) {
            gshmemi_sync_done<T>();
            return i;
        }
    return SIZE_MAX;
}

template <typename T>
GSHMEMI_AMO_D size_t gshmemi_sync_test_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, T value,
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
GSHMEMI_AMO_D int gshmemi_sync_test_all(T *ivars, size_t n, const int *status, int cmp, T value, const T *values)
{
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i) && !gshmemi_sync_test1(ivars + i, cmp, GSHMEMI_SYNC_VALUE(values, value, i)))
            return 0;
    gshmemi_sync_done<T>();
    return 1;
}

GSHMEMI_AMO_D int gshmemi_sync_any_active(size_t n, const int *status)
{
    for (size_t i = 0; i < n; i++)
        if (GSHMEMI_SYNC_ACTIVE(status, i)) return 1;
    return 0;
}

/* SIZE_MAX when nelems is 0 or every element is excluded (nothing could ever satisfy it). */
template <typename T>
GSHMEMI_AMO_D size_t gshmemi_sync_wait_any(T *ivars, size_t n, const int *status, int cmp, T value, const T *values,
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
GSHMEMI_AMO_D size_t gshmemi_sync_wait_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, T value,
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

#define GSHMEMI_DEFINE_SYNC(name, T)                                                                          \
    GSHMEMI_AMO_D void shmem_##name##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,     \
                                                     T cmp_value)                                             \
    {                                                                                                         \
        gshmemi_sync_wait_all<T>(ivars, nelems, status, cmp, cmp_value, NULL, "shmem_" #name "_wait_until_all"); \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,   \
                                                       T cmp_value)                                           \
    {                                                                                                         \
        return gshmemi_sync_wait_any<T>(ivars, nelems, status, cmp, cmp_value, NULL,                          \
                                        "shmem_" #name "_wait_until_any");                                    \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_wait_until_some(T *ivars, size_t nelems, size_t *indices,             \
                                                        const int *status, int cmp, T cmp_value)              \
    {                                                                                                         \
        return gshmemi_sync_wait_some<T>(ivars, nelems, indices, status, cmp, cmp_value, NULL,                \
                                         "shmem_" #name "_wait_until_some");                                  \
    }                                                                                                         \
    GSHMEMI_AMO_D void shmem_##name##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,       \
                                                            int cmp, const T *cmp_values)                     \
    {                                                                                                         \
        gshmemi_sync_wait_all<T>(ivars, nelems, status, cmp, (T)0, cmp_values,                                \
                                 "shmem_" #name "_wait_until_all_vector");                                    \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,     \
                                                              int cmp, const T *cmp_values)                   \
    {                                                                                                         \
        return gshmemi_sync_wait_any<T>(ivars, nelems, status, cmp, (T)0, cmp_values,                         \
                                        "shmem_" #name "_wait_until_any_vector");                             \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,      \
                                                               const int *status, int cmp,                    \
                                                               const T *cmp_values)                           \
    {                                                                                                         \
        return gshmemi_sync_wait_some<T>(ivars, nelems, indices, status, cmp, (T)0, cmp_values,               \
                                         "shmem_" #name "_wait_until_some_vector");                           \
    }                                                                                                         \
    GSHMEMI_AMO_D int shmem_##name##_test(T *ivar, int cmp, T cmp_value)                                      \
    {                                                                                                         \
        return gshmemi_sync_test_all<T>(ivar, 1, NULL, cmp, cmp_value, NULL);                                 \
    }                                                                                                         \
    GSHMEMI_AMO_D int shmem_##name##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) \
    {                                                                                                         \
        return gshmemi_sync_test_all<T>(ivars, nelems, status, cmp, cmp_value, NULL);                         \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_test_any(T *ivars, size_t nelems, const int *status, int cmp,         \
                                                 T cmp_value)                                                 \
    {                                                                                                         \
        return gshmemi_sync_test_any<T>(ivars, nelems, status, cmp, cmp_value, NULL);                         \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                                  int cmp, T cmp_value)                                       \
    {                                                                                                         \
        return gshmemi_sync_test_some<T>(ivars, nelems, indices, status, cmp, cmp_value, NULL);               \
    }                                                                                                         \
    GSHMEMI_AMO_D int shmem_##name##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                                     const T *cmp_values)                                     \
    {                                                                                                         \
        return gshmemi_sync_test_all<T>(ivars, nelems, status, cmp, (T)0, cmp_values);                        \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                                        const T *cmp_values)                                  \
    {                                                                                                         \
        return gshmemi_sync_test_any<T>(ivars, nelems, status, cmp, (T)0, cmp_values);                       \
    }                                                                                                         \
    GSHMEMI_AMO_D size_t shmem_##name##_test_some_vector(T *ivars, size_t nelems, size_t *indices,            \
                                                         const int *status, int cmp, const T *cmp_values)     \
    {                                                                                                         \
        return gshmemi_sync_test_some<T>(ivars, nelems, indices, status, cmp, (T)0, cmp_values);              \
    }
GSHMEM_SYNC_TYPES(GSHMEMI_DEFINE_SYNC)
#undef GSHMEMI_DEFINE_SYNC

#endif
