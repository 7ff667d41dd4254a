/* Atomic memory operations (OpenSHMEM 1.5, 9.8) on the P2P path: native system-scope atomics on
 * the peer's mapped word. Relaxed: as in OpenSHMEM, ordering with other operations comes from
 * shmem_fence / shmem_quiet (a system fence), not from the atomic itself. Included at the end of
 * gshmem/device.cuh; the host side of the __host__ __device__ routines is runtime/host_amo.c. */
#ifndef GSHMEM_DEVICE_AMO_CUH
#define GSHMEM_DEVICE_AMO_CUH

#include <stdint.h>
#include <string.h>

#include "p2p.cuh"

#define GSHMEMI_AMO_HD static __host__ __device__ __forceinline__
#define GSHMEMI_AMO_D static __device__ __forceinline__

#ifdef __CUDA_ARCH__
#define GSHMEMI_AMO_BRANCH(device_code, host_code) device_code
#else
#define GSHMEMI_AMO_BRANCH(device_code, host_code) host_code
#endif

/* ---- raw 32/64-bit operations on a pointer that is already the peer's mapped address ---- */
#define GSHMEMI_DEFINE_ATOM_RMW(op, ptx)                                                                      \
    GSHMEMI_AMO_D uint32_t gshmemi_amo_atom_##op##_b32(void *p, uint32_t v)                                   \
    {                                                                                                         \
        uint32_t r;                                                                                           \
        asm volatile("atom.relaxed.sys.global." ptx "32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory"); \
        return r;                                                                                             \
    }                                                                                                         \
    GSHMEMI_AMO_D uint64_t gshmemi_amo_atom_##op##_b64(void *p, uint64_t v)                                   \
    {                                                                                                         \
        uint64_t r;                                                                                           \
        asm volatile("atom.relaxed.sys.global." ptx "64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(v) : "memory"); \
        return r;                                                                                             \
    }
GSHMEMI_DEFINE_ATOM_RMW(exch, "exch.b")
GSHMEMI_DEFINE_ATOM_RMW(add, "add.u")
GSHMEMI_DEFINE_ATOM_RMW(and, "and.b")
GSHMEMI_DEFINE_ATOM_RMW(or, "or.b")
GSHMEMI_DEFINE_ATOM_RMW(xor, "xor.b")
#undef GSHMEMI_DEFINE_ATOM_RMW

/* Non-fetching forms: red does not wait for the old value to come back over the link. */
#define GSHMEMI_DEFINE_RED(op, ptx)                                                                           \
    GSHMEMI_AMO_D void gshmemi_amo_red_##op##_b32(void *p, uint32_t v)                                        \
    {                                                                                                         \
        asm volatile("red.relaxed.sys.global." ptx "32 [%0], %1;" ::"l"(p), "r"(v) : "memory");               \
    }                                                                                                         \
    GSHMEMI_AMO_D void gshmemi_amo_red_##op##_b64(void *p, uint64_t v)                                        \
    {                                                                                                         \
        asm volatile("red.relaxed.sys.global." ptx "64 [%0], %1;" ::"l"(p), "l"(v) : "memory");               \
    }
GSHMEMI_DEFINE_RED(add, "add.u")
GSHMEMI_DEFINE_RED(and, "and.b")
GSHMEMI_DEFINE_RED(or, "or.b")
GSHMEMI_DEFINE_RED(xor, "xor.b")
#undef GSHMEMI_DEFINE_RED

GSHMEMI_AMO_D uint32_t gshmemi_amo_cas_b32(void *p, uint32_t cond, uint32_t v)
{
    uint32_t r;
    asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(r) : "l"(p), "r"(cond), "r"(v) : "memory");
    return r;
}
GSHMEMI_AMO_D uint64_t gshmemi_amo_cas_b64(void *p, uint64_t cond, uint64_t v)
{
    uint64_t r;
    asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;" : "=l"(r) : "l"(p), "l"(cond), "l"(v) : "memory");
    return r;
}
GSHMEMI_AMO_D uint32_t gshmemi_amo_ld_b32(const void *p)
{
    uint32_t r;
    asm volatile("ld.relaxed.sys.global.b32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
    return r;
}
GSHMEMI_AMO_D uint64_t gshmemi_amo_ld_b64(const void *p)
{
    uint64_t r;
    asm volatile("ld.relaxed.sys.global.b64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
    return r;
}

/* One operation (GSHMEMI_AMO_*) on a mapped word; returns the old value (0 for non-fetching ops).
 * op is a constant in the inline routines, so the switch folds away; the transport's host-AMO
 * kernel passes it at run time. set is an exchange so that it is atomic with concurrent RMWs. */
#define GSHMEMI_DEFINE_AMO_OP(bits, U)                                                                        \
    GSHMEMI_AMO_D U gshmemi_amo_op_b##bits(int op, void *p, U v, U cond)                                      \
    {                                                                                                         \
        switch (op) {                                                                                         \
        case GSHMEMI_AMO_FETCH: return gshmemi_amo_ld_b##bits(p);                                             \
        case GSHMEMI_AMO_SET: (void)gshmemi_amo_atom_exch_b##bits(p, v); return 0;                            \
        case GSHMEMI_AMO_SWAP: return gshmemi_amo_atom_exch_b##bits(p, v);                                    \
        case GSHMEMI_AMO_CSWAP: return gshmemi_amo_cas_b##bits(p, cond, v);                                   \
        case GSHMEMI_AMO_FETCH_ADD: return gshmemi_amo_atom_add_b##bits(p, v);                                \
        case GSHMEMI_AMO_ADD: gshmemi_amo_red_add_b##bits(p, v); return 0;                                    \
        case GSHMEMI_AMO_FETCH_AND: return gshmemi_amo_atom_and_b##bits(p, v);                                \
        case GSHMEMI_AMO_AND: gshmemi_amo_red_and_b##bits(p, v); return 0;                                    \
        case GSHMEMI_AMO_FETCH_OR: return gshmemi_amo_atom_or_b##bits(p, v);                                  \
        case GSHMEMI_AMO_OR: gshmemi_amo_red_or_b##bits(p, v); return 0;                                      \
        case GSHMEMI_AMO_FETCH_XOR: return gshmemi_amo_atom_xor_b##bits(p, v);                                \
        case GSHMEMI_AMO_XOR: gshmemi_amo_red_xor_b##bits(p, v); return 0;                                    \
        default: return 0;                                                                                    \
        }                                                                                                     \
    }
GSHMEMI_DEFINE_AMO_OP(32, uint32_t)
GSHMEMI_DEFINE_AMO_OP(64, uint64_t)
#undef GSHMEMI_DEFINE_AMO_OP

/* ---- typed layer: every AMO type is a 4- or 8-byte word; float/double travel as their bits ---- */
template <typename T> GSHMEMI_AMO_HD uint64_t gshmemi_amo_bits(T v)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMO types are 4 or 8 bytes");
    if (sizeof(T) == 4) {
        uint32_t b;
        memcpy(&b, &v, 4);
        return b;
    }
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}
template <typename T> GSHMEMI_AMO_HD T gshmemi_amo_unbits(uint64_t b)
{
    T v;
    if (sizeof(T) == 4) {
        uint32_t b32 = (uint32_t)b;
        memcpy(&v, &b32, 4);
    } else {
        memcpy(&v, &b, 8);
    }
    return v;
}
template <typename T> GSHMEMI_AMO_D T gshmemi_amo_dev(int op, void *peer, T value, T cond)
{
    uint64_t r;
    if (sizeof(T) == 4)
        r = gshmemi_amo_op_b32(op, peer, (uint32_t)gshmemi_amo_bits(value), (uint32_t)gshmemi_amo_bits(cond));
    else
        r = gshmemi_amo_op_b64(op, peer, gshmemi_amo_bits(value), gshmemi_amo_bits(cond));
    return gshmemi_amo_unbits<T>(r);
}
template <typename T>
static __host__ __forceinline__ T gshmemi_amo_host(const char *routine, int op, const T *dest, T value, T cond, int pe)
{
    return gshmemi_amo_unbits<T>(gshmemi_host_amo(routine, op, (void *)dest, gshmemi_amo_bits(value),
                                                  gshmemi_amo_bits(cond), sizeof(T), pe));
}
template <typename T>
static __host__ __forceinline__ void gshmemi_amo_host_nbi(const char *routine, int op, T *fetch, const T *dest, T value,
                                                          T cond, int pe)
{
    gshmemi_host_amo_fetch_nbi(routine, op, fetch, (void *)dest, gshmemi_amo_bits(value), gshmemi_amo_bits(cond),
                               sizeof(T), pe);
}

/* The peer pointer is taken inside each public routine, so that a debug-check report names it. */
#define GSHMEMI_AMO_RET(T, routine, op, dest, value, cond, pe)                                                \
    GSHMEMI_AMO_BRANCH(return gshmemi_amo_dev<T>(op, gshmemi_peer_ptr(dest, pe), value, cond),                \
                       return gshmemi_amo_host<T>(routine, op, dest, value, cond, pe))
#define GSHMEMI_AMO_VOID(T, routine, op, dest, value, cond, pe)                                               \
    GSHMEMI_AMO_BRANCH((void)gshmemi_amo_dev<T>(op, gshmemi_peer_ptr(dest, pe), value, cond),                 \
                       (void)gshmemi_amo_host<T>(routine, op, dest, value, cond, pe))
/* Fetching _nbi: over P2P the value is back when the atomic returns, so it completes at once. */
#define GSHMEMI_AMO_NBI(T, routine, op, fetch, dest, value, cond, pe)                                         \
    GSHMEMI_AMO_BRANCH(*(fetch) = gshmemi_amo_dev<T>(op, gshmemi_peer_ptr(dest, pe), value, cond),            \
                       gshmemi_amo_host_nbi<T>(routine, op, fetch, dest, value, cond, pe))

#define GSHMEMI_DEFINE_AMO_STD(name, T)                                                                       \
    GSHMEMI_AMO_HD T shmem_##name##_atomic_compare_swap(T *dest, T cond, T value, int pe)                     \
    {                                                                                                         \
        GSHMEMI_AMO_RET(T, "shmem_" #name "_atomic_compare_swap", GSHMEMI_AMO_CSWAP, dest, value, cond, pe);  \
    }                                                                                                         \
    GSHMEMI_AMO_HD T shmem_##name##_atomic_fetch_inc(T *dest, int pe)                                         \
    {                                                                                                         \
        GSHMEMI_AMO_RET(T, "shmem_" #name "_atomic_fetch_inc", GSHMEMI_AMO_FETCH_ADD, dest, (T)1, (T)0, pe);  \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_inc(T *dest, int pe)                                            \
    {                                                                                                         \
        GSHMEMI_AMO_VOID(T, "shmem_" #name "_atomic_inc", GSHMEMI_AMO_ADD, dest, (T)1, (T)0, pe);             \
    }                                                                                                         \
    GSHMEMI_AMO_HD T shmem_##name##_atomic_fetch_add(T *dest, T value, int pe)                                \
    {                                                                                                         \
        GSHMEMI_AMO_RET(T, "shmem_" #name "_atomic_fetch_add", GSHMEMI_AMO_FETCH_ADD, dest, value, (T)0, pe); \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_add(T *dest, T value, int pe)                                   \
    {                                                                                                         \
        GSHMEMI_AMO_VOID(T, "shmem_" #name "_atomic_add", GSHMEMI_AMO_ADD, dest, value, (T)0, pe);            \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)    \
    {                                                                                                         \
        GSHMEMI_AMO_NBI(T, "shmem_" #name "_atomic_compare_swap_nbi", GSHMEMI_AMO_CSWAP, fetch, dest, value,  \
                        cond, pe);                                                                            \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                        \
    {                                                                                                         \
        GSHMEMI_AMO_NBI(T, "shmem_" #name "_atomic_fetch_inc_nbi", GSHMEMI_AMO_FETCH_ADD, fetch, dest, (T)1,  \
                        (T)0, pe);                                                                            \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)               \
    {                                                                                                         \
        GSHMEMI_AMO_NBI(T, "shmem_" #name "_atomic_fetch_add_nbi", GSHMEMI_AMO_FETCH_ADD, fetch, dest, value, \
                        (T)0, pe);                                                                            \
    }

#define GSHMEMI_DEFINE_AMO_EXT(name, T)                                                                       \
    GSHMEMI_AMO_HD T shmem_##name##_atomic_fetch(const T *source, int pe)                                     \
    {                                                                                                         \
        GSHMEMI_AMO_RET(T, "shmem_" #name "_atomic_fetch", GSHMEMI_AMO_FETCH, source, (T)0, (T)0, pe);        \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_set(T *dest, T value, int pe)                                   \
    {                                                                                                         \
        GSHMEMI_AMO_VOID(T, "shmem_" #name "_atomic_set", GSHMEMI_AMO_SET, dest, value, (T)0, pe);            \
    }                                                                                                         \
    GSHMEMI_AMO_HD T shmem_##name##_atomic_swap(T *dest, T value, int pe)                                     \
    {                                                                                                         \
        GSHMEMI_AMO_RET(T, "shmem_" #name "_atomic_swap", GSHMEMI_AMO_SWAP, dest, value, (T)0, pe);           \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                    \
    {                                                                                                         \
        GSHMEMI_AMO_NBI(T, "shmem_" #name "_atomic_fetch_nbi", GSHMEMI_AMO_FETCH, fetch, source, (T)0, (T)0,  \
                        pe);                                                                                  \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                    \
    {                                                                                                         \
        GSHMEMI_AMO_NBI(T, "shmem_" #name "_atomic_swap_nbi", GSHMEMI_AMO_SWAP, fetch, dest, value, (T)0, pe); \
    }

#define GSHMEMI_DEFINE_AMO_BIT1(name, T, op, OP)                                                              \
    GSHMEMI_AMO_HD T shmem_##name##_atomic_fetch_##op(T *dest, T value, int pe)                               \
    {                                                                                                         \
        GSHMEMI_AMO_RET(T, "shmem_" #name "_atomic_fetch_" #op, GSHMEMI_AMO_FETCH_##OP, dest, value, (T)0, pe); \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_##op(T *dest, T value, int pe)                                  \
    {                                                                                                         \
        GSHMEMI_AMO_VOID(T, "shmem_" #name "_atomic_" #op, GSHMEMI_AMO_##OP, dest, value, (T)0, pe);          \
    }                                                                                                         \
    GSHMEMI_AMO_HD void shmem_##name##_atomic_fetch_##op##_nbi(T *fetch, T *dest, T value, int pe)            \
    {                                                                                                         \
        GSHMEMI_AMO_NBI(T, "shmem_" #name "_atomic_fetch_" #op "_nbi", GSHMEMI_AMO_FETCH_##OP, fetch, dest,   \
                        value, (T)0, pe);                                                                     \
    }
#define GSHMEMI_DEFINE_AMO_BIT(name, T)                                                                       \
    GSHMEMI_DEFINE_AMO_BIT1(name, T, and, AND)                                                                \
    GSHMEMI_DEFINE_AMO_BIT1(name, T, or, OR)                                                                  \
    GSHMEMI_DEFINE_AMO_BIT1(name, T, xor, XOR)

GSHMEM_AMO_TYPES(GSHMEMI_DEFINE_AMO_STD)
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DEFINE_AMO_EXT)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DEFINE_AMO_BIT)
#undef GSHMEMI_DEFINE_AMO_STD
#undef GSHMEMI_DEFINE_AMO_EXT
#undef GSHMEMI_DEFINE_AMO_BIT
#undef GSHMEMI_DEFINE_AMO_BIT1
#undef GSHMEMI_AMO_RET
#undef GSHMEMI_AMO_VOID
#undef GSHMEMI_AMO_NBI

#endif
