/* The kernels of the stream-ordered collectives, private to collectives/: one per (operator,
 * element kind) for a P2P team, one per element kind for a team with remote members. They are
 * instantiated in four units (coll_kernels_*.cu), so that a build compiles them in parallel;
 * coll.cu picks one through the functions declared at the end. */
#ifndef GSHMEMI_COLL_KERNELS_CUH
#define GSHMEMI_COLL_KERNELS_CUH

/* The collective kernels call the remote path directly (device/memops.cuh: GSHMEMI_REMOTE_DIRECT). */
#define GSHMEMI_REMOTE_DIRECT 1
#include "gshmem.h"
#include "../device/coll.cuh"

#define LL_THREADS 256     /* one LL line of a 256-line buffer per thread */
#define DIRECT_THREADS 512
#define DIRECT_SLICE_BYTES (16u << 10) /* bytes moved per PE that justify one more CTA */

static_assert(GSHMEMI_LL_SLICE_DATA / 8 == LL_THREADS, "one LL line per thread");

/* The kernels of a P2P team: one per (operator, element type), each with only its own code. */
template <int OP, typename T>
static __global__ void __launch_bounds__(DIRECT_THREADS) coll_kernel(gshmemi_team_dev_t t, gshmemi_coll_args_t a)
{
    gshmemi_pdl_enter();
    gshmemi_coll_slice<OP, T, true, GSHMEMI_COLL_P2P_ONLY>(t, a, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x,
                                                           GSHMEMI_SCOPE_BLOCK);
}

/* The kernels of a team with members reached through the proxy (device/coll.cuh: the P2P kernels
 * carry no remote code, so their registers stay what they were): one per element type, the
 * operator an argument (GSHMEMI_OP_NONE: the collective moves data, T = char). CTA b works slice
 * b % slices as its part b / slices. */
template <typename T>
static __global__ void __launch_bounds__(DIRECT_THREADS)
    coll_remote_kernel(gshmemi_team_dev_t t, gshmemi_coll_args_t a, int op, int slices)
{
    gshmemi_pdl_enter();
    gshmemi_coll_remote_slice<T>(t, a, op, (int)blockIdx.x % slices, slices, threadIdx.x, blockDim.x, GSHMEMI_SCOPE_BLOCK,
                                 (int)blockIdx.x / slices, (int)gridDim.x / slices);
}

typedef void (*coll_kernel_t)(gshmemi_team_dev_t, gshmemi_coll_args_t);
typedef void (*coll_remote_kernel_t)(gshmemi_team_dev_t, gshmemi_coll_args_t, int, int);

/* The kernel of (element kind, operator); NULL for pairs OpenSHMEM does not define (bitwise ops
 * on floating point). */
template <typename T> static coll_kernel_t minmax_kernel_of(int op)
{
    return op == GSHMEMI_OP_MIN ? coll_kernel<GSHMEMI_OP_MIN, T> : op == GSHMEMI_OP_MAX ? coll_kernel<GSHMEMI_OP_MAX, T> : NULL;
}

template <typename T> static coll_kernel_t reduce_kernel_of(int op)
{
    switch (op) {
    case GSHMEMI_OP_MIN:
    case GSHMEMI_OP_MAX: return minmax_kernel_of<T>(op);
    case GSHMEMI_OP_SUM: return coll_kernel<GSHMEMI_OP_SUM, T>;
    case GSHMEMI_OP_PROD: return coll_kernel<GSHMEMI_OP_PROD, T>;
    default: break;
    }
    if constexpr (std::is_integral<T>::value) {
        switch (op) {
        case GSHMEMI_OP_AND: return coll_kernel<GSHMEMI_OP_AND, T>;
        case GSHMEMI_OP_OR: return coll_kernel<GSHMEMI_OP_OR, T>;
        case GSHMEMI_OP_XOR: return coll_kernel<GSHMEMI_OP_XOR, T>;
        default: break;
        }
    }
    return NULL;
}

/* The kernels by element kind (GSHMEMI_DT_*), NULL for a pair OpenSHMEM does not define:
 * coll_kernels_float.cu: the data movers' kernel (T = char) and the floating-point reductions;
 * coll_kernels_int_narrow.cu: 8- and 16-bit integers; coll_kernels_int_wide.cu: 32- and 64-bit;
 * coll_kernels_remote.cu: the kernels of teams with remote members. */
coll_kernel_t gshmemi_coll_kernel_data(void);
coll_kernel_t gshmemi_coll_kernel_float(int dtype, int op);
coll_kernel_t gshmemi_coll_kernel_int_narrow(int dtype, int op);
coll_kernel_t gshmemi_coll_kernel_int_wide(int dtype, int op);
coll_remote_kernel_t gshmemi_coll_remote_kernel(int reduces, int dtype);

/* Defines `name`, one of the functions above, from a list KINDS(X) of X(GSHMEMI_DT_*, element
 * type, reduce_kernel_of or minmax_kernel_of). */
#define GSHMEMI_COLL_KERNEL_CASE(dtype_, T, kernel_of_) \
    case dtype_: return kernel_of_<T>(op);
#define GSHMEMI_DEFINE_COLL_KERNEL_OF(name, KINDS)       \
    coll_kernel_t name(int dtype, int op)                \
    {                                                    \
        switch (dtype) {                                 \
            KINDS(GSHMEMI_COLL_KERNEL_CASE)              \
        default: return NULL;                            \
        }                                                \
    }

#endif
