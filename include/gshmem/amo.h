/* Atomics, signals and point-to-point synchronization (OpenSHMEM 1.5 sections 9.8-9.10): the
 * constants, the host-only declarations, and the family lists from which every routine
 * of these sections is made for host and device (how the lists work: gshmem/rma.h). The device
 * code they call is device/amo.cuh, device/p2p.cuh (gshmemi_amo_at), device/signal.cuh and
 * device/wait.cuh; the host code runtime/host_amo.c. */
#ifndef GSHMEM_AMO_H
#define GSHMEM_AMO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rma.h"
#include "types.h"

/* The AMO and point-to-point synchronization type lists (GSHMEM_AMO_TYPES, GSHMEM_AMO_BITWISE_TYPES,
 * GSHMEM_AMO_EXTENDED_TYPES, GSHMEM_SYNC_TYPES) are in gshmem/types.h, with the RMA types they make up. */

/* sig_op of the put-with-signal routines. */
enum {
    SHMEM_SIGNAL_SET = 0,
    SHMEM_SIGNAL_ADD = 1,
};

/* Internal operation codes shared by the inline code, libgshmem and the transports. */
enum {
    GSHMEMI_AMO_FETCH = 0,
    GSHMEMI_AMO_SET,
    GSHMEMI_AMO_SWAP,
    GSHMEMI_AMO_CSWAP,
    GSHMEMI_AMO_FETCH_ADD,
    GSHMEMI_AMO_ADD,
    GSHMEMI_AMO_FETCH_AND,
    GSHMEMI_AMO_AND,
    GSHMEMI_AMO_FETCH_OR,
    GSHMEMI_AMO_OR,
    GSHMEMI_AMO_FETCH_XOR,
    GSHMEMI_AMO_XOR,
};

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* ---- host-only extensions (stream-ordered: enqueue and return; capturable in a CUDA graph) ---- */
/* The signal update is ordered after the data on stream. */
void shmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                    int sig_op, int pe, struct CUstream_st *stream);
/* Later work on stream starts once the local *sig_addr compares cmp to value. */
void shmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t value, struct CUstream_st *stream);
#define GSHMEMI_DECL_WAIT_ON_STREAM(name, T)                                                     \
    void shmemx_##name##_wait_until_on_stream(T *ivar, int cmp, T value, struct CUstream_st *stream);
GSHMEM_SYNC_TYPES(GSHMEMI_DECL_WAIT_ON_STREAM)
#undef GSHMEMI_DECL_WAIT_ON_STREAM

/* Internal entry points of the host side of the __host__ __device__ routines. value/cond/the
 * result are the 4- or 8-byte words' bits (width bytes), zero-extended. */
uint64_t gshmemi_host_amo(const char *routine, int op, void *dest, uint64_t value, uint64_t cond, size_t width, int pe);
/* The fetching _nbi forms: the old value is stored to fetch (host or device memory). */
void gshmemi_host_amo_fetch_nbi(const char *routine, int op, void *fetch, void *dest, uint64_t value, uint64_t cond,
                                size_t width, int pe);
void gshmemi_host_putmem_signal(const char *routine, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                uint64_t signal, int sig_op, int pe, int blocking);
uint64_t gshmemi_host_signal_fetch(const uint64_t *sig_addr);
uint64_t gshmemi_host_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value);

#ifdef __cplusplus
}
#endif

/* ---- host side of the AMO rows: a word's bits (float/double travel as their representation) ---- */
static inline uint64_t gshmemi_host_bits(const void *v, size_t width)
{
    uint16_t x16;
    uint32_t x32;
    uint64_t b = 0;
    if (width == 2) {
        memcpy(&x16, v, 2);
        b = x16;
    } else if (width == 4) {
        memcpy(&x32, v, 4);
        b = x32;
    } else {
        memcpy(&b, v, 8);
    }
    return b;
}
static inline void gshmemi_host_unbits(void *v, uint64_t b, size_t width)
{
    uint32_t x32 = (uint32_t)b;
    if (width == 4) memcpy(v, &x32, 4);
    else memcpy(v, &b, 8);
}
/* gshmemi_amo_host_TYPE and gshmemi_amo_host_nbi_TYPE for every AMO type. */
#define GSHMEMI_AMO_HOST_HELPERS(name, T)                                                                     \
    static inline T gshmemi_amo_host_##name(const char *routine, int op, const T *dest, T value, T cond, int pe) \
    {                                                                                                         \
        T r;                                                                                                  \
        gshmemi_host_unbits(&r,                                                                               \
                            gshmemi_host_amo(routine, op, (void *)dest, gshmemi_host_bits(&value, sizeof(T)), \
                                             gshmemi_host_bits(&cond, sizeof(T)), sizeof(T), pe),             \
                            sizeof(T));                                                                       \
        return r;                                                                                             \
    }                                                                                                         \
    static inline void gshmemi_amo_host_nbi_##name(const char *routine, int op, T *fetch, const T *dest, T value, \
                                                   T cond, int pe)                                            \
    {                                                                                                         \
        gshmemi_host_amo_fetch_nbi(routine, op, fetch, (void *)dest, gshmemi_host_bits(&value, sizeof(T)),    \
                                   gshmemi_host_bits(&cond, sizeof(T)), sizeof(T), pe);                       \
    }
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_AMO_HOST_HELPERS)
#undef GSHMEMI_AMO_HOST_HELPERS

/* ---- the AMO family ----
 * One row per operation of one type (name, T): X(name, T, op, GSHMEMI_AMO_ code, FETCHING or
 * NONFETCHING, operands), grouped by the type list it is defined for. operands: COND (dest, cond,
 * value), VALUE (dest, value), ONE (dest; the value is 1), SOURCE (source). A fetching op also
 * gets its _nbi form (the old value stored to *fetch). */
#define GSHMEMI_AMO_STD_OPS(X, name, T)                                                                       \
    X(name, T, compare_swap, CSWAP, FETCHING, COND)                                                           \
    X(name, T, fetch_inc, FETCH_ADD, FETCHING, ONE)                                                           \
    X(name, T, inc, ADD, NONFETCHING, ONE)                                                                    \
    X(name, T, fetch_add, FETCH_ADD, FETCHING, VALUE)                                                         \
    X(name, T, add, ADD, NONFETCHING, VALUE)
#define GSHMEMI_AMO_EXT_OPS(X, name, T)                                                                       \
    X(name, T, fetch, FETCH, FETCHING, SOURCE)                                                                \
    X(name, T, set, SET, NONFETCHING, VALUE)                                                                  \
    X(name, T, swap, SWAP, FETCHING, VALUE)
#define GSHMEMI_AMO_BIT_OPS(X, name, T)                                                                       \
    X(name, T, fetch_and, FETCH_AND, FETCHING, VALUE)                                                         \
    X(name, T, and, AND, NONFETCHING, VALUE)                                                                  \
    X(name, T, fetch_or, FETCH_OR, FETCHING, VALUE)                                                           \
    X(name, T, or, OR, NONFETCHING, VALUE)                                                                    \
    X(name, T, fetch_xor, FETCH_XOR, FETCHING, VALUE)                                                         \
    X(name, T, xor, XOR, NONFETCHING, VALUE)
#define GSHMEMI_AMO_PARAMS_COND(T) T *dest, T cond, T value
#define GSHMEMI_AMO_PARAMS_VALUE(T) T *dest, T value
#define GSHMEMI_AMO_PARAMS_ONE(T) T *dest
#define GSHMEMI_AMO_PARAMS_SOURCE(T) const T *source
#define GSHMEMI_AMO_OPERANDS_COND(T) dest, value, cond
#define GSHMEMI_AMO_OPERANDS_VALUE(T) dest, value, (T)0
#define GSHMEMI_AMO_OPERANDS_ONE(T) dest, (T)1, (T)0
#define GSHMEMI_AMO_OPERANDS_SOURCE(T) source, (T)0, (T)0
#define GSHMEMI_AMO_RET_FETCHING(T) T
#define GSHMEMI_AMO_RET_NONFETCHING(T) void
#define GSHMEMI_AMO_RESULT_FETCHING return
#define GSHMEMI_AMO_RESULT_NONFETCHING (void)
/* One row: shmem_TYPE_atomic_OP, and shmem_TYPE_atomic_OP_nbi for a fetching OP. On the device the
 * peer's word is found in the routine itself (gshmemi_amo_at), so a debug-check report names it. */
#define GSHMEMI_AMO_ROUTINE(name, T, op, OPC, KIND, IN)                                                       \
    GSHMEMI_HOSTDEV(GSHMEMI_AMO_RET_##KIND(T), shmem_##name##_atomic_##op, (GSHMEMI_AMO_PARAMS_##IN(T), int pe), \
                    GSHMEMI_AMO_RESULT_##KIND gshmemi_amo_at<T>(GSHMEMI_AMO_##OPC, GSHMEMI_AMO_OPERANDS_##IN(T), pe, __func__), \
                    GSHMEMI_AMO_RESULT_##KIND gshmemi_amo_host_##name(__func__, GSHMEMI_AMO_##OPC,           \
                                                                      GSHMEMI_AMO_OPERANDS_##IN(T), pe))      \
    GSHMEMI_AMO_NBI_##KIND(name, T, op, OPC, IN)
/* Fetching _nbi: over P2P the value is back when the atomic returns, so it completes at once. */
#define GSHMEMI_AMO_NBI_FETCHING(name, T, op, OPC, IN)                                                        \
    GSHMEMI_HOSTDEV(void, shmem_##name##_atomic_##op##_nbi, (T *fetch, GSHMEMI_AMO_PARAMS_##IN(T), int pe),   \
                    *fetch = gshmemi_amo_at<T>(GSHMEMI_AMO_##OPC, GSHMEMI_AMO_OPERANDS_##IN(T), pe, __func__), \
                    gshmemi_amo_host_nbi_##name(__func__, GSHMEMI_AMO_##OPC, fetch, GSHMEMI_AMO_OPERANDS_##IN(T), pe))
#define GSHMEMI_AMO_NBI_NONFETCHING(name, T, op, OPC, IN)
#define GSHMEMI_AMO_STD(name, T) GSHMEMI_AMO_STD_OPS(GSHMEMI_AMO_ROUTINE, name, T)
#define GSHMEMI_AMO_EXT(name, T) GSHMEMI_AMO_EXT_OPS(GSHMEMI_AMO_ROUTINE, name, T)
#define GSHMEMI_AMO_BIT(name, T) GSHMEMI_AMO_BIT_OPS(GSHMEMI_AMO_ROUTINE, name, T)
/* Makes, for TYPE of GSHMEM_AMO_TYPES: shmem_TYPE_atomic_compare_swap, _fetch_inc, _inc, _fetch_add,
 * _add, _compare_swap_nbi, _fetch_inc_nbi, _fetch_add_nbi; for TYPE of GSHMEM_AMO_EXTENDED_TYPES:
 * shmem_TYPE_atomic_fetch, _set, _swap, _fetch_nbi, _swap_nbi; for TYPE of GSHMEM_AMO_BITWISE_TYPES:
 * shmem_TYPE_atomic_fetch_and, _and, _fetch_or, _or, _fetch_xor, _xor, _fetch_and_nbi,
 * _fetch_or_nbi, _fetch_xor_nbi (e.g. shmem_int_atomic_fetch_add, shmem_uint64_atomic_xor). */
#define GSHMEMI_AMO_FAMILY                                                                                    \
    GSHMEM_AMO_TYPES(GSHMEMI_AMO_STD)                                                                         \
    GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_AMO_EXT)                                                                \
    GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_AMO_BIT)

/* ---- the signal family (9.9) ----
 * Makes shmem_putmem_signal, shmem_putmem_signal_nbi, shmem_TYPE_put_signal,
 * shmem_TYPE_put_signal_nbi, shmemx_signal_op, shmem_signal_fetch, shmem_signal_wait_until, and on
 * the device shmemx_putmem_signal_warp, _block, shmemx_putmem_signal_nbi_warp, _nbi_block,
 * shmemx_TYPE_put_signal_warp, _block, _nbi_warp, _nbi_block. Blocking and _nbi are the same over
 * P2P: the stores are issued and fenced before the signal (gshmemi_put_signal_scope); through the
 * proxy, blocking waits for completion and _nbi only posts. */
#define GSHMEMI_SIGNAL_PARAMS uint64_t *sig_addr, uint64_t signal, int sig_op, int pe
#define GSHMEMI_SIGNAL_GROUP(scope, blocking)                                                                 \
    gshmemi_put_signal_scope(dest, source, nelems, sig_addr, signal, sig_op, pe, scope, blocking, __func__)
#define GSHMEMI_SIGNAL_MEM(nbi, blocking)                                                                     \
    GSHMEMI_HOSTDEV(void, shmem_putmem_signal##nbi, (void *dest, const void *source, size_t nelems, GSHMEMI_SIGNAL_PARAMS), \
                    GSHMEMI_SIGNAL_GROUP(GSHMEMI_SCOPE_THREAD, blocking),                                     \
                    gshmemi_host_putmem_signal(__func__, dest, source, nelems, sig_addr, signal, sig_op, pe, blocking)) \
    GSHMEMI_DEVONLY(void, shmemx_putmem_signal##nbi##_warp, (void *dest, const void *source, size_t nelems,   \
                    GSHMEMI_SIGNAL_PARAMS), GSHMEMI_SIGNAL_GROUP(GSHMEMI_SCOPE_WARP, blocking))               \
    GSHMEMI_DEVONLY(void, shmemx_putmem_signal##nbi##_block, (void *dest, const void *source, size_t nelems,  \
                    GSHMEMI_SIGNAL_PARAMS), GSHMEMI_SIGNAL_GROUP(GSHMEMI_SCOPE_BLOCK, blocking))
#define GSHMEMI_SIGNAL_TYPED_NBI(name, T, nbi, blocking)                                                      \
    GSHMEMI_HOSTDEV(void, shmem_##name##_put_signal##nbi, (T *dest, const T *source, size_t nelems, GSHMEMI_SIGNAL_PARAMS), \
                    shmem_putmem_signal##nbi(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe), \
                    gshmemi_host_putmem_signal(__func__, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, \
                                               blocking))                                                     \
    GSHMEMI_DEVONLY(void, shmemx_##name##_put_signal##nbi##_warp, (T *dest, const T *source, size_t nelems,   \
                    GSHMEMI_SIGNAL_PARAMS),                                                                   \
                    shmemx_putmem_signal##nbi##_warp(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe)) \
    GSHMEMI_DEVONLY(void, shmemx_##name##_put_signal##nbi##_block, (T *dest, const T *source, size_t nelems,  \
                    GSHMEMI_SIGNAL_PARAMS),                                                                   \
                    shmemx_putmem_signal##nbi##_block(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe))
#define GSHMEMI_SIGNAL_TYPED(name, T)                                                                         \
    GSHMEMI_SIGNAL_TYPED_NBI(name, T, , 1)                                                                    \
    GSHMEMI_SIGNAL_TYPED_NBI(name, T, _nbi, 0)
#define GSHMEMI_SIGNAL_FAMILY                                                                                 \
    GSHMEMI_SIGNAL_MEM(, 1)                                                                                   \
    GSHMEMI_SIGNAL_MEM(_nbi, 0)                                                                               \
    GSHMEM_RMA_TYPES(GSHMEMI_SIGNAL_TYPED)                                                                    \
    /* a signal update without data (NVSHMEM's signal_op); a release like the one of put_signal */           \
    GSHMEMI_HOSTDEV(void, shmemx_signal_op, (GSHMEMI_SIGNAL_PARAMS),                                          \
                    gshmemi_signal_op(sig_addr, signal, sig_op, pe, __func__),                                \
                    gshmemi_host_putmem_signal(__func__, NULL, NULL, 0, sig_addr, signal, sig_op, pe, 1))     \
    /* an acquire: data delivered before the signal is visible after this returns */                          \
    GSHMEMI_HOSTDEV(uint64_t, shmem_signal_fetch, (const uint64_t *sig_addr), return gshmemi_ld_acquire_u64(sig_addr), \
                    return gshmemi_host_signal_fetch(sig_addr))                                               \
    /* returns the value that satisfied the comparison; the load that saw it is an acquire */                 \
    GSHMEMI_HOSTDEV(uint64_t, shmem_signal_wait_until, (uint64_t *sig_addr, int cmp, uint64_t cmp_value),     \
                    return gshmemi_spin_until<uint64_t>(sig_addr, cmp, cmp_value, __func__, gshmemi_dstate_bound()), \
                    return gshmemi_host_signal_wait_until(sig_addr, cmp, cmp_value))

/* ---- point-to-point synchronization (9.10), device only ----
 * For TYPE of GSHMEM_RMA_TYPES: shmem_TYPE_wait_until. For TYPE of GSHMEM_SYNC_TYPES:
 * shmem_TYPE_wait_until_all, _any, _some, _all_vector, _any_vector, _some_vector, shmem_TYPE_test,
 * _test_all, _test_any, _test_some, _test_all_vector, _test_any_vector, _test_some_vector. The
 * waits spin in gshmemi_spin_until (device/wait.cuh); the array forms are device/signal.cuh. */
#define GSHMEMI_WAIT_UNTIL_TYPED(name, T)                                                                     \
    GSHMEMI_DEVONLY(void, shmem_##name##_wait_until, (T *ivar, int cmp, T value),                             \
                    gshmemi_check_sym(ivar, sizeof(T), gshmemi_dstate.my_pe, __func__);                       \
                    gshmemi_spin_until<T>(ivar, cmp, value, __func__, gshmemi_dstate_bound());                \
                    gshmemi_sync_done<T>())
#define GSHMEMI_SYNC_ARRAY_PARAMS(T) T *ivars, size_t nelems, const int *status, int cmp
#define GSHMEMI_SYNC_VECTOR(name, T, vec, values_param, value, values)                                        \
    GSHMEMI_DEVONLY(void, shmem_##name##_wait_until_all##vec, (GSHMEMI_SYNC_ARRAY_PARAMS(T), values_param),   \
                    gshmemi_sync_wait_all<T>(ivars, nelems, status, cmp, value, values, __func__))            \
    GSHMEMI_DEVONLY(size_t, shmem_##name##_wait_until_any##vec, (GSHMEMI_SYNC_ARRAY_PARAMS(T), values_param), \
                    return gshmemi_sync_wait_any<T>(ivars, nelems, status, cmp, value, values, __func__))     \
    GSHMEMI_DEVONLY(size_t, shmem_##name##_wait_until_some##vec,                                              \
                    (T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, values_param),     \
                    return gshmemi_sync_wait_some<T>(ivars, nelems, indices, status, cmp, value, values, __func__)) \
    GSHMEMI_DEVONLY(int, shmem_##name##_test_all##vec, (GSHMEMI_SYNC_ARRAY_PARAMS(T), values_param),          \
                    return gshmemi_sync_test_all<T>(ivars, nelems, status, cmp, value, values))               \
    GSHMEMI_DEVONLY(size_t, shmem_##name##_test_any##vec, (GSHMEMI_SYNC_ARRAY_PARAMS(T), values_param),       \
                    return gshmemi_sync_test_any<T>(ivars, nelems, status, cmp, value, values))               \
    GSHMEMI_DEVONLY(size_t, shmem_##name##_test_some##vec,                                                    \
                    (T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, values_param),     \
                    return gshmemi_sync_test_some<T>(ivars, nelems, indices, status, cmp, value, values))
#define GSHMEMI_SYNC_TYPED(name, T)                                                                           \
    GSHMEMI_SYNC_VECTOR(name, T, , T cmp_value, cmp_value, NULL)                                              \
    GSHMEMI_SYNC_VECTOR(name, T, _vector, const T *cmp_values, (T)0, cmp_values)                              \
    GSHMEMI_DEVONLY(int, shmem_##name##_test, (T *ivar, int cmp, T cmp_value),                                \
                    return gshmemi_sync_test_all<T>(ivar, 1, NULL, cmp, cmp_value, NULL))
#define GSHMEMI_SYNC_FAMILY                                                                                   \
    GSHMEM_RMA_TYPES(GSHMEMI_WAIT_UNTIL_TYPED)                                                                \
    GSHMEM_SYNC_TYPES(GSHMEMI_SYNC_TYPED)

#endif

