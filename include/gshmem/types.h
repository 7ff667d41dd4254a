/* Types and constants shared by the host API, the device API and the runtime. */
#ifndef GSHMEM_TYPES_H
#define GSHMEM_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Bitwise AMO types: fetch_and, and, fetch_or, or, fetch_xor, xor. */
#define GSHMEM_AMO_BITWISE_TYPES(X)                                                              \
    X(uint, unsigned int)                                                                        \
    X(ulong, unsigned long)                                                                      \
    X(ulonglong, unsigned long long)                                                             \
    X(int32, int32_t)                                                                            \
    X(int64, int64_t)                                                                            \
    X(uint32, uint32_t)                                                                          \
    X(uint64, uint64_t)

/* Standard AMO types: fetch_inc, inc, fetch_add, add, compare_swap (and the extended ops). */
#define GSHMEM_AMO_TYPES(X)                                                                      \
    X(int, int)                                                                                  \
    X(long, long)                                                                                \
    X(longlong, long long)                                                                       \
    GSHMEM_AMO_BITWISE_TYPES(X)                                                                  \
    X(size, size_t)                                                                              \
    X(ptrdiff, ptrdiff_t)

/* Extended AMO types: fetch, set, swap. */
#define GSHMEM_AMO_EXTENDED_TYPES(X)                                                             \
    GSHMEM_AMO_TYPES(X)                                                                          \
    X(float, float)                                                                              \
    X(double, double)

/* Point-to-point synchronization types: wait_until_{all,any,some}[_vector], test* and the
 * on-stream waits. */
#define GSHMEM_SYNC_TYPES(X)                                                                     \
    X(short, short)                                                                              \
    X(ushort, unsigned short)                                                                    \
    GSHMEM_AMO_TYPES(X)

/* Every standard RMA type, as (name, C type): the synchronization types and these. A new type is
 * one line in the narrowest list it belongs to. */
#define GSHMEM_RMA_TYPES(X)                                                                      \
    X(float, float)                                                                              \
    X(double, double)                                                                            \
    X(char, char)                                                                                \
    X(schar, signed char)                                                                        \
    X(uchar, unsigned char)                                                                      \
    X(int8, int8_t)                                                                              \
    X(int16, int16_t)                                                                            \
    X(uint8, uint8_t)                                                                            \
    X(uint16, uint16_t)                                                                          \
    GSHMEM_SYNC_TYPES(X)

/* The sizes of shmem_putSIZE / getSIZE / iputSIZE / igetSIZE, as (bits, bytes). */
#define GSHMEM_RMA_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

/* Comparison operators of wait_until / test. */
enum {
    SHMEM_CMP_EQ = 0,
    SHMEM_CMP_NE = 1,
    SHMEM_CMP_GT = 2,
    SHMEM_CMP_GE = 3,
    SHMEM_CMP_LT = 4,
    SHMEM_CMP_LE = 5,
};

/* Internal helpers compiled for the host and, under nvcc, for the device too. */
#ifdef __CUDACC__
#define GSHMEMI_HD_INLINE static __host__ __device__ inline
#else
#define GSHMEMI_HD_INLINE static inline
#endif

/* `a cmp b` for the SHMEM_CMP_* operators: one rule for the device waits and the host's. */
GSHMEMI_HD_INLINE int gshmemi_cmp_u(int cmp, unsigned long long a, unsigned long long b)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return a == b;
    case SHMEM_CMP_NE: return a != b;
    case SHMEM_CMP_GT: return a > b;
    case SHMEM_CMP_GE: return a >= b;
    case SHMEM_CMP_LT: return a < b;
    default: return a <= b;
    }
}
/* Signed: flipping the sign bit maps signed order onto unsigned order. */
GSHMEMI_HD_INLINE int gshmemi_cmp(int cmp, long long a, long long b)
{
    return gshmemi_cmp_u(cmp, (unsigned long long)a ^ (1ull << 63), (unsigned long long)b ^ (1ull << 63));
}

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 64
#define SHMEM_VENDOR_STRING "gshmem"
#define GSHMEM_VERSION_MAJOR 0
#define GSHMEM_VERSION_MINOR 1
#define GSHMEM_VERSION_PATCH 0
/* Thread levels (shmem_init_thread). */
enum { SHMEM_THREAD_SINGLE = 0, SHMEM_THREAD_FUNNELED = 1, SHMEM_THREAD_SERIALIZED = 2, SHMEM_THREAD_MULTIPLE = 3 };

/* ---- teams ---- */
typedef int shmem_team_t;
#define SHMEM_TEAM_INVALID (-1)
#define SHMEM_TEAM_WORLD 0
#define SHMEM_TEAM_SHARED 1         /* the PEs of this host */
#define SHMEMX_TEAM_NODE 2          /* the PEs of this host (NVSHMEM's name) */
#define SHMEMX_TEAM_SAME_MYPE_NODE 3 /* the PEs with this PE's local index on every host */
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)
typedef struct {
    int num_contexts;
} shmem_team_config_t;

/* Element types and operators of the reductions. Each reduction type names its element kind
 * (the last column of the lists below), so every C type of one size and signedness shares one
 * set of kernels. */
enum {
    GSHMEMI_DT_INT8, GSHMEMI_DT_UINT8, GSHMEMI_DT_INT16, GSHMEMI_DT_UINT16, GSHMEMI_DT_INT32, GSHMEMI_DT_UINT32,
    GSHMEMI_DT_INT64, GSHMEMI_DT_UINT64, GSHMEMI_DT_FLOAT, GSHMEMI_DT_DOUBLE, GSHMEMI_DT_HALF, GSHMEMI_DT_BFLOAT16,
    GSHMEMI_DT_COUNT
};
enum { GSHMEMI_OP_AND, GSHMEMI_OP_OR, GSHMEMI_OP_XOR, GSHMEMI_OP_MIN, GSHMEMI_OP_MAX, GSHMEMI_OP_SUM, GSHMEMI_OP_PROD, GSHMEMI_OP_COUNT };

/* Reduction types of OpenSHMEM 1.5, as X(op, OPC, name, C type, element kind) for one operator
 * (op is the name suffix, OPC its code). char is taken as signed (x86-64); coll_api.c refuses to
 * build where it is not. */
#define GSHMEM_REDUCE_BITWISE_TYPES(X, op, OPC)                                                  \
    X(op, OPC, uchar, unsigned char, GSHMEMI_DT_UINT8)                                           \
    X(op, OPC, ushort, unsigned short, GSHMEMI_DT_UINT16)                                        \
    X(op, OPC, uint, unsigned int, GSHMEMI_DT_UINT32)                                            \
    X(op, OPC, ulong, unsigned long, GSHMEMI_DT_UINT64)                                          \
    X(op, OPC, ulonglong, unsigned long long, GSHMEMI_DT_UINT64)                                 \
    X(op, OPC, int8, int8_t, GSHMEMI_DT_INT8)                                                    \
    X(op, OPC, int16, int16_t, GSHMEMI_DT_INT16)                                                 \
    X(op, OPC, int32, int32_t, GSHMEMI_DT_INT32)                                                 \
    X(op, OPC, int64, int64_t, GSHMEMI_DT_INT64)                                                 \
    X(op, OPC, uint8, uint8_t, GSHMEMI_DT_UINT8)                                                 \
    X(op, OPC, uint16, uint16_t, GSHMEMI_DT_UINT16)                                              \
    X(op, OPC, uint32, uint32_t, GSHMEMI_DT_UINT32)                                              \
    X(op, OPC, uint64, uint64_t, GSHMEMI_DT_UINT64)                                              \
    X(op, OPC, size, size_t, GSHMEMI_DT_UINT64)
/* min/max and sum/prod: the bitwise types plus these. */
#define GSHMEM_REDUCE_ARITH_TYPES(X, op, OPC)                                                    \
    GSHMEM_REDUCE_BITWISE_TYPES(X, op, OPC)                                                      \
    X(op, OPC, char, char, GSHMEMI_DT_INT8)                                                      \
    X(op, OPC, schar, signed char, GSHMEMI_DT_INT8)                                              \
    X(op, OPC, short, short, GSHMEMI_DT_INT16)                                                   \
    X(op, OPC, int, int, GSHMEMI_DT_INT32)                                                       \
    X(op, OPC, long, long, GSHMEMI_DT_INT64)                                                     \
    X(op, OPC, longlong, long long, GSHMEMI_DT_INT64)                                            \
    X(op, OPC, ptrdiff, ptrdiff_t, GSHMEMI_DT_INT64)                                             \
    X(op, OPC, float, float, GSHMEMI_DT_FLOAT)                                                   \
    X(op, OPC, double, double, GSHMEMI_DT_DOUBLE)
/* Every (operator, type) pair of shmem_TYPE_OP_reduce. The op names carry their underscore
 * because and/or/xor are operator tokens in C++. */
#define GSHMEM_REDUCE_PAIRS(X)                                                                   \
    GSHMEM_REDUCE_BITWISE_TYPES(X, _and, GSHMEMI_OP_AND)                                         \
    GSHMEM_REDUCE_BITWISE_TYPES(X, _or, GSHMEMI_OP_OR)                                           \
    GSHMEM_REDUCE_BITWISE_TYPES(X, _xor, GSHMEMI_OP_XOR)                                         \
    GSHMEM_REDUCE_ARITH_TYPES(X, _min, GSHMEMI_OP_MIN)                                           \
    GSHMEM_REDUCE_ARITH_TYPES(X, _max, GSHMEMI_OP_MAX)                                           \
    GSHMEM_REDUCE_ARITH_TYPES(X, _sum, GSHMEMI_OP_SUM)                                           \
    GSHMEM_REDUCE_ARITH_TYPES(X, _prod, GSHMEMI_OP_PROD)
/* half and bfloat16 (CUDA code only): min, max, sum, prod. */
#define GSHMEMI_REDUCE_EXT_OPS(X, name, T, DT)                                                   \
    X(_min, GSHMEMI_OP_MIN, name, T, DT)                                                         \
    X(_max, GSHMEMI_OP_MAX, name, T, DT)                                                         \
    X(_sum, GSHMEMI_OP_SUM, name, T, DT)                                                         \
    X(_prod, GSHMEMI_OP_PROD, name, T, DT)
#define GSHMEM_REDUCE_EXT_PAIRS(X)                                                               \
    GSHMEMI_REDUCE_EXT_OPS(X, half, __half, GSHMEMI_DT_HALF)                                     \
    GSHMEMI_REDUCE_EXT_OPS(X, bfloat16, __nv_bfloat16, GSHMEMI_DT_BFLOAT16)

/* Collectives (other than reductions) come in every RMA type; their kernels only move bytes. */
enum { GSHMEMI_COLL_BROADCAST, GSHMEMI_COLL_FCOLLECT, GSHMEMI_COLL_COLLECT, GSHMEMI_COLL_ALLTOALL, GSHMEMI_COLL_ALLTOALLS,
       GSHMEMI_COLL_REDUCE, GSHMEMI_COLL_REDUCESCATTER };
/* Protocols (GSHMEM_COLL_PROTO forces one). */
enum { GSHMEMI_PROTO_AUTO = 0, GSHMEMI_PROTO_LL = 1, GSHMEMI_PROTO_LL128 = 2, GSHMEMI_PROTO_DIRECT = 3, GSHMEMI_PROTO_SIMPLE = 4 };

/* Internal layouts the inline device code needs (pSync geometry, team descriptor, device state).
 * Installed as gshmem/device/layout.h; the quoted path finds it there and, in the source tree, in
 * the top-level device/ folder. */
#include "device/layout.h"

#endif
