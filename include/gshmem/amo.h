/* Atomics, signals and point-to-point synchronization (OpenSHMEM 1.5 sections 9.8-9.10): the type
 * lists, the constants, and the host declarations. The device side is device/amo.cuh and
 * device/signal.cuh; routines that exist on both sides are __host__ __device__ inline in CUDA code
 * and plain library calls in C, as in gshmem.h. */
#ifndef GSHMEM_AMO_H
#define GSHMEM_AMO_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Standard AMO types: fetch_inc, inc, fetch_add, add, compare_swap (and the extended ops). */
#define GSHMEM_AMO_TYPES(X)                                                                      \
    X(int, int)                                                                                  \
    X(long, long)                                                                                \
    X(longlong, long long)                                                                       \
    X(uint, unsigned int)                                                                        \
    X(ulong, unsigned long)                                                                      \
    X(ulonglong, unsigned long long)                                                             \
    X(int32, int32_t)                                                                            \
    X(int64, int64_t)                                                                            \
    X(uint32, uint32_t)                                                                          \
    X(uint64, uint64_t)                                                                          \
    X(size, size_t)                                                                              \
    X(ptrdiff, ptrdiff_t)

/* Extended AMO types: fetch, set, swap. */
#define GSHMEM_AMO_EXTENDED_TYPES(X)                                                             \
    GSHMEM_AMO_TYPES(X)                                                                          \
    X(float, float)                                                                              \
    X(double, double)

/* Bitwise AMO types: fetch_and, and, fetch_or, or, fetch_xor, xor. */
#define GSHMEM_AMO_BITWISE_TYPES(X)                                                              \
    X(uint, unsigned int)                                                                        \
    X(ulong, unsigned long)                                                                      \
    X(ulonglong, unsigned long long)                                                             \
    X(int32, int32_t)                                                                            \
    X(int64, int64_t)                                                                            \
    X(uint32, uint32_t)                                                                          \
    X(uint64, uint64_t)

/* Point-to-point synchronization types: wait_until_{all,any,some}[_vector], test* and the
 * on-stream waits. */
#define GSHMEM_SYNC_TYPES(X)                                                                     \
    X(short, short)                                                                              \
    X(int, int)                                                                                  \
    X(long, long)                                                                                \
    X(longlong, long long)                                                                       \
    X(ushort, unsigned short)                                                                    \
    X(uint, unsigned int)                                                                        \
    X(ulong, unsigned long)                                                                      \
    X(ulonglong, unsigned long long)                                                             \
    X(int32, int32_t)                                                                            \
    X(int64, int64_t)                                                                            \
    X(uint32, uint32_t)                                                                          \
    X(uint64, uint64_t)                                                                          \
    X(size, size_t)                                                                              \
    X(ptrdiff, ptrdiff_t)

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

#ifndef __CUDACC__
/* ---- routines CUDA code gets as __host__ __device__ inline (device/amo.cuh, device/signal.cuh) ---- */
#define GSHMEMI_DECL_AMO_STD(name, T)                                                            \
    T shmem_##name##_atomic_compare_swap(T *dest, T cond, T value, int pe);                      \
    T shmem_##name##_atomic_fetch_inc(T *dest, int pe);                                          \
    void shmem_##name##_atomic_inc(T *dest, int pe);                                             \
    T shmem_##name##_atomic_fetch_add(T *dest, T value, int pe);                                 \
    void shmem_##name##_atomic_add(T *dest, T value, int pe);                                    \
    void shmem_##name##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);     \
    void shmem_##name##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                         \
    void shmem_##name##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);
#define GSHMEMI_DECL_AMO_EXT(name, T)                                                            \
    T shmem_##name##_atomic_fetch(const T *source, int pe);                                      \
    void shmem_##name##_atomic_set(T *dest, T value, int pe);                                    \
    T shmem_##name##_atomic_swap(T *dest, T value, int pe);                                      \
    void shmem_##name##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                     \
    void shmem_##name##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);
#define GSHMEMI_DECL_AMO_BIT(name, T)                                                            \
    T shmem_##name##_atomic_fetch_and(T *dest, T value, int pe);                                 \
    void shmem_##name##_atomic_and(T *dest, T value, int pe);                                    \
    T shmem_##name##_atomic_fetch_or(T *dest, T value, int pe);                                  \
    void shmem_##name##_atomic_or(T *dest, T value, int pe);                                     \
    T shmem_##name##_atomic_fetch_xor(T *dest, T value, int pe);                                 \
    void shmem_##name##_atomic_xor(T *dest, T value, int pe);                                    \
    void shmem_##name##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);                \
    void shmem_##name##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);                 \
    void shmem_##name##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);
GSHMEM_AMO_TYPES(GSHMEMI_DECL_AMO_STD)
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DECL_AMO_EXT)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DECL_AMO_BIT)
#undef GSHMEMI_DECL_AMO_STD
#undef GSHMEMI_DECL_AMO_EXT
#undef GSHMEMI_DECL_AMO_BIT

void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op,
                         int pe);
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                             int sig_op, int pe);
#define GSHMEMI_DECL_PUT_SIGNAL(name, T)                                                         \
    void shmem_##name##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,  \
                                   uint64_t signal, int sig_op, int pe);                         \
    void shmem_##name##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                       uint64_t signal, int sig_op, int pe);
GSHMEM_RMA_TYPES(GSHMEMI_DECL_PUT_SIGNAL)
#undef GSHMEMI_DECL_PUT_SIGNAL
void shmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);
#endif

#ifdef __cplusplus
}
#endif
#endif
