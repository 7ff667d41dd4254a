/* The reductions of 32- and 64-bit integers (coll_kernels.cuh): the signed kinds only for min and
 * max (coll.cu maps the others to the unsigned kernels). */
#include "coll_kernels.cuh"

#define WIDE_KINDS(X)                                                                           \
    X(GSHMEMI_DT_INT32, int32_t, minmax_kernel_of) X(GSHMEMI_DT_UINT32, uint32_t, reduce_kernel_of) \
    X(GSHMEMI_DT_INT64, int64_t, minmax_kernel_of) X(GSHMEMI_DT_UINT64, uint64_t, reduce_kernel_of)
GSHMEMI_DEFINE_COLL_KERNEL_OF(gshmemi_coll_kernel_int_wide, WIDE_KINDS)
