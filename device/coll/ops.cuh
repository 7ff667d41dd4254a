/* Element operators and unaligned word access, shared by every protocol. */
#ifndef GSHMEM_DEVICE_COLL_OPS_CUH
#define GSHMEM_DEVICE_COLL_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "gshmem/coll.h" /* GSHMEMI_OP_NONE */
#include "../team.cuh"
#include "policy.h"

/* Member functions of the protocol and algorithm objects (GSHMEMI_DEV is static). */
#define GSHMEMI_DEVM __device__ __forceinline__

/* ---- element operators ---- */
/* half and bfloat16 are combined in float and rounded once. */
template <int OP, typename T> GSHMEMI_DEV T gshmemi_redop(T a, T b)
{
    if constexpr (std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value)
        return T(gshmemi_redop<OP, float>((float)a, (float)b));
    else if constexpr (OP == GSHMEMI_OP_AND) return (T)(a & b);
    else if constexpr (OP == GSHMEMI_OP_OR) return (T)(a | b);
    else if constexpr (OP == GSHMEMI_OP_XOR) return (T)(a ^ b);
    else if constexpr (OP == GSHMEMI_OP_MIN) return b < a ? b : a;
    else if constexpr (OP == GSHMEMI_OP_MAX) return b > a ? b : a;
    else if constexpr (OP == GSHMEMI_OP_SUM) return (T)(a + b);
    else return (T)(a * b);
}

/* Two half or bfloat16 elements as one register, to and from float2 (packed conversions). */
GSHMEMI_DEV float2 gshmemi_pair_float2(__half2 p) { return __half22float2(p); }
GSHMEMI_DEV float2 gshmemi_pair_float2(__nv_bfloat162 p) { return __bfloat1622float2(p); }
GSHMEMI_DEV void gshmemi_pair_round(__half2 *p, float lo, float hi) { *p = __floats2half2_rn(lo, hi); }
GSHMEMI_DEV void gshmemi_pair_round(__nv_bfloat162 *p, float lo, float hi) { *p = __floats2bfloat162_rn(lo, hi); }

/* Element-wise op on W bytes held in a register-sized word; half and bfloat16 a pair at a time
 * through packed conversions (each element still combined in float and rounded once: the grid
 * collectives of half prod took 125 registers element by element, 96 so). */
template <int OP, typename T, typename W> GSHMEMI_DEV W gshmemi_redop_word(W a, W b)
{
    constexpr bool half = std::is_same<T, __half>::value, bf16 = std::is_same<T, __nv_bfloat16>::value;
    if constexpr ((half || bf16) && sizeof(W) % 4 == 0) {
        using P = typename std::conditional<half, __half2, __nv_bfloat162>::type;
        union { W w; P e[sizeof(W) / 4]; } x, y;
        x.w = a;
        y.w = b;
#pragma unroll
        for (int i = 0; i < (int)(sizeof(W) / 4); i++) {
            const float2 p = gshmemi_pair_float2(x.e[i]), q = gshmemi_pair_float2(y.e[i]);
            gshmemi_pair_round(&x.e[i], gshmemi_redop<OP, float>(p.x, q.x), gshmemi_redop<OP, float>(p.y, q.y));
        }
        return x.w;
    } else {
        union { W w; T e[sizeof(W) / sizeof(T)]; } x, y;
        x.w = a;
        y.w = b;
#pragma unroll
        for (int i = 0; i < (int)(sizeof(W) / sizeof(T)); i++) x.e[i] = gshmemi_redop<OP, T>(x.e[i], y.e[i]);
        return x.w;
    }
}

/* The operator chosen at run time (the routed path of a team with remote members, compiled once
 * per element type for every operator), over a word of elements (W = T: one element): the same
 * arithmetic as gshmemi_redop_word, so both paths give the same bits. Bitwise operators exist
 * for integers only. */
template <typename T, typename W> GSHMEMI_DEV W gshmemi_redop_word_dyn(int op, W a, W b)
{
    if constexpr (std::is_integral<T>::value) {
        if (op == GSHMEMI_OP_AND) return gshmemi_redop_word<GSHMEMI_OP_AND, T>(a, b);
        if (op == GSHMEMI_OP_OR) return gshmemi_redop_word<GSHMEMI_OP_OR, T>(a, b);
        if (op == GSHMEMI_OP_XOR) return gshmemi_redop_word<GSHMEMI_OP_XOR, T>(a, b);
    }
    switch (op) {
    case GSHMEMI_OP_MIN: return gshmemi_redop_word<GSHMEMI_OP_MIN, T>(a, b);
    case GSHMEMI_OP_MAX: return gshmemi_redop_word<GSHMEMI_OP_MAX, T>(a, b);
    case GSHMEMI_OP_PROD: return gshmemi_redop_word<GSHMEMI_OP_PROD, T>(a, b);
    default: return gshmemi_redop_word<GSHMEMI_OP_SUM, T>(a, b);
    }
}
template <typename T> GSHMEMI_DEV T gshmemi_redop_dyn(int op, T a, T b) { return gshmemi_redop_word_dyn<T>(op, a, b); }

/* ---- unaligned 8-byte access (payload lines of LL) ---- */
GSHMEMI_DEV uint64_t gshmemi_load8(const char *p, unsigned n)
{
    if (n == 8 && ((uintptr_t)p & 7) == 0) return *(const uint64_t *)p;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)(uint8_t)p[i] << (8 * i);
    return v;
}
GSHMEMI_DEV void gshmemi_store8(char *p, uint64_t v, unsigned n)
{
    if (n == 8 && ((uintptr_t)p & 7) == 0) {
        *(uint64_t *)p = v;
        return;
    }
    for (unsigned i = 0; i < n; i++) p[i] = (char)(v >> (8 * i));
}

#endif
