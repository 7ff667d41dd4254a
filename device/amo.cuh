/* Atomic memory operations (OpenSHMEM 1.5, 9.8) on a word that is already the peer's mapped
 * address: native system-scope atomics, relaxed (as in OpenSHMEM, ordering with other operations
 * comes from shmem_fence / shmem_quiet, a system fence). Stateless, so the P2P transport's host-AMO
 * kernel uses it too. The typed routines are generated in gshmem/device.cuh from the list in
 * gshmem/amo.h; the P2P step that finds the peer's word is gshmemi_amo_at (device/p2p.cuh). */
#ifndef GSHMEM_DEVICE_AMO_CUH
#define GSHMEM_DEVICE_AMO_CUH

#include <stdint.h>
#include <string.h>

#include "gshmem/amo.h"
#include "memops.cuh"

/* ---- raw 32/64-bit operations: gshmemi_amo_atom_{exch,add,and,or,xor}_bN (fetching),
 * gshmemi_amo_red_relaxed_{add,and,or,xor}_bN (non-fetching), gshmemi_amo_red_release_add_b64 (the
 * signal), gshmemi_amo_cas_bN; N = 32, 64 ---- */
#define GSHMEMI_DEFINE_ATOM_RMW(op, ptx, bits)                                                                \
    GSHMEMI_DEV uint##bits##_t gshmemi_amo_atom_##op##_b##bits(void *p, uint##bits##_t v)                      \
    {                                                                                                         \
        uint##bits##_t r;                                                                                     \
        asm volatile("atom.relaxed.sys.global." ptx #bits " %0, [%1], %2;"                                    \
                     : "=" GSHMEMI_PTX_REG##bits(r) : "l"(p), GSHMEMI_PTX_REG##bits(v) : "memory");          \
        return r;                                                                                             \
    }
/* Non-fetching forms: red does not wait for the old value to come back over the link. */
#define GSHMEMI_DEFINE_RED(sem, op, ptx, bits)                                                                \
    GSHMEMI_DEV void gshmemi_amo_red_##sem##_##op##_b##bits(void *p, uint##bits##_t v)                         \
    {                                                                                                         \
        asm volatile("red." #sem ".sys.global." ptx #bits " [%0], %1;" ::"l"(p), GSHMEMI_PTX_REG##bits(v) : "memory"); \
    }
#define GSHMEMI_DEFINE_CAS(bits)                                                                              \
    GSHMEMI_DEV uint##bits##_t gshmemi_amo_cas_b##bits(void *p, uint##bits##_t cond, uint##bits##_t v)         \
    {                                                                                                         \
        uint##bits##_t r;                                                                                     \
        asm volatile("atom.relaxed.sys.global.cas.b" #bits " %0, [%1], %2, %3;"                                \
                     : "=" GSHMEMI_PTX_REG##bits(r)                                                           \
                     : "l"(p), GSHMEMI_PTX_REG##bits(cond), GSHMEMI_PTX_REG##bits(v)                          \
                     : "memory");                                                                             \
        return r;                                                                                             \
    }
/* One operation (GSHMEMI_AMO_*) on a mapped word; returns the old value (0 for non-fetching ops).
 * op is a constant in the inline routines, so the switch folds away; the transport's host-AMO
 * kernel passes it at run time. set is an exchange so that it is atomic with concurrent RMWs. */
#define GSHMEMI_DEFINE_AMO_OP(bits)                                                                           \
    GSHMEMI_DEV uint##bits##_t gshmemi_amo_op_b##bits(int op, void *p, uint##bits##_t v, uint##bits##_t cond)  \
    {                                                                                                         \
        switch (op) {                                                                                         \
        case GSHMEMI_AMO_FETCH: return gshmemi_ld_relaxed_u##bits(p);                                         \
        case GSHMEMI_AMO_SET: (void)gshmemi_amo_atom_exch_b##bits(p, v); return 0;                            \
        case GSHMEMI_AMO_SWAP: return gshmemi_amo_atom_exch_b##bits(p, v);                                    \
        case GSHMEMI_AMO_CSWAP: return gshmemi_amo_cas_b##bits(p, cond, v);                                   \
        case GSHMEMI_AMO_FETCH_ADD: return gshmemi_amo_atom_add_b##bits(p, v);                                \
        case GSHMEMI_AMO_ADD: gshmemi_amo_red_relaxed_add_b##bits(p, v); return 0;                            \
        case GSHMEMI_AMO_FETCH_AND: return gshmemi_amo_atom_and_b##bits(p, v);                                \
        case GSHMEMI_AMO_AND: gshmemi_amo_red_relaxed_and_b##bits(p, v); return 0;                            \
        case GSHMEMI_AMO_FETCH_OR: return gshmemi_amo_atom_or_b##bits(p, v);                                  \
        case GSHMEMI_AMO_OR: gshmemi_amo_red_relaxed_or_b##bits(p, v); return 0;                              \
        case GSHMEMI_AMO_FETCH_XOR: return gshmemi_amo_atom_xor_b##bits(p, v);                                \
        case GSHMEMI_AMO_XOR: gshmemi_amo_red_relaxed_xor_b##bits(p, v); return 0;                            \
        default: return 0;                                                                                    \
        }                                                                                                     \
    }
#define GSHMEMI_DEFINE_WORD_OPS(bits)                                                                         \
    GSHMEMI_DEFINE_ATOM_RMW(exch, "exch.b", bits)                                                             \
    GSHMEMI_DEFINE_ATOM_RMW(add, "add.u", bits)                                                               \
    GSHMEMI_DEFINE_ATOM_RMW(and, "and.b", bits)                                                               \
    GSHMEMI_DEFINE_ATOM_RMW(or, "or.b", bits)                                                                 \
    GSHMEMI_DEFINE_ATOM_RMW(xor, "xor.b", bits)                                                               \
    GSHMEMI_DEFINE_RED(relaxed, add, "add.u", bits)                                                           \
    GSHMEMI_DEFINE_RED(relaxed, and, "and.b", bits)                                                           \
    GSHMEMI_DEFINE_RED(relaxed, or, "or.b", bits)                                                             \
    GSHMEMI_DEFINE_RED(relaxed, xor, "xor.b", bits)                                                           \
    GSHMEMI_DEFINE_CAS(bits)                                                                                  \
    GSHMEMI_DEFINE_AMO_OP(bits)
GSHMEMI_DEFINE_WORD_OPS(32)
GSHMEMI_DEFINE_WORD_OPS(64)
GSHMEMI_DEFINE_RED(release, add, "add.u", 64)
#undef GSHMEMI_DEFINE_WORD_OPS
#undef GSHMEMI_DEFINE_ATOM_RMW
#undef GSHMEMI_DEFINE_RED
#undef GSHMEMI_DEFINE_CAS
#undef GSHMEMI_DEFINE_AMO_OP

/* ---- typed layer: every AMO type is a 4- or 8-byte word; float/double travel as their bits ---- */
template <typename T> GSHMEMI_DEV uint64_t gshmemi_amo_bits(T v)
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
template <typename T> GSHMEMI_DEV T gshmemi_amo_unbits(uint64_t b)
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
template <typename T> GSHMEMI_DEV T gshmemi_amo_dev(int op, void *peer, T value, T cond)
{
    uint64_t r;
    if (sizeof(T) == 4)
        r = gshmemi_amo_op_b32(op, peer, (uint32_t)gshmemi_amo_bits(value), (uint32_t)gshmemi_amo_bits(cond));
    else
        r = gshmemi_amo_op_b64(op, peer, gshmemi_amo_bits(value), gshmemi_amo_bits(cond));
    return gshmemi_amo_unbits<T>(r);
}

#endif
