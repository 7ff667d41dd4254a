/* The reductions of 8- and 16-bit integers (coll_kernels.cuh): the signed kinds only for min and
 * max (coll.cu maps the others to the unsigned kernels). */
#include "coll_kernels.cuh"

#define NARROW_KINDS(X)                                                                       \
    X(GSHMEMI_DT_INT8, int8_t, minmax_kernel_of) X(GSHMEMI_DT_UINT8, uint8_t, reduce_kernel_of) \
    X(GSHMEMI_DT_INT16, int16_t, minmax_kernel_of) X(GSHMEMI_DT_UINT16, uint16_t, reduce_kernel_of)
GSHMEMI_DEFINE_COLL_KERNEL_OF(gshmemi_coll_kernel_int_narrow, NARROW_KINDS)
