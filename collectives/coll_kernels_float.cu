/* The data movers' kernel and the floating-point reductions' (coll_kernels.cuh). */
#include "coll_kernels.cuh"

coll_kernel_t gshmemi_coll_kernel_data(void) { return coll_kernel<GSHMEMI_OP_NONE, char>; }

#define FLOAT_KINDS(X)                                                                   \
    X(GSHMEMI_DT_FLOAT, float, reduce_kernel_of) X(GSHMEMI_DT_DOUBLE, double, reduce_kernel_of) \
    X(GSHMEMI_DT_HALF, __half, reduce_kernel_of) X(GSHMEMI_DT_BFLOAT16, __nv_bfloat16, reduce_kernel_of)
GSHMEMI_DEFINE_COLL_KERNEL_OF(gshmemi_coll_kernel_float, FLOAT_KINDS)
