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

/* Element-wise op on W bytes held in a register-sized word; half and bfloat16 a pair at a time
 * (packed conversions to and from float: each element still combined in float, rounded once). */
template <int OP, typename T, typename W> GSHMEMI_DEV W gshmemi_redop_word(W a, W b)
{
    if constexpr (std::is_same<T, __half>::value && sizeof(W) % 4 == 0) {
        union { W w; __half2 e[sizeof(W) / 4]; } x, y;
        x.w = a;
        y.w = b;
#pragma unroll
        for (int i = 0; i < (int)(sizeof(W) / 4); i++) {
            const float2 p = __half22float2(x.e[i]), q = __half22float2(y.e[i]);
            x.e[i] = __floats2half2_rn(gshmemi_redop<OP, float>(p.x, q.x), gshmemi_redop<OP, float>(p.y, q.y));
        }
        return x.w;
    } else if constexpr (std::is_same<T, __nv_bfloat16>::value && sizeof(W) % 4 == 0) {
        union { W w; __nv_bfloat162 e[sizeof(W) / 4]; } x, y;
        x.w = a;
        y.w = b;
#pragma unroll
        for (int i = 0; i < (int)(sizeof(W) / 4); i++) {
            const float2 p = __bfloat1622float2(x.e[i]), q = __bfloat1622float2(y.e[i]);
            x.e[i] = __floats2bfloat162_rn(gshmemi_redop<OP, float>(p.x, q.x), gshmemi_redop<OP, float>(p.y, q.y));
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
