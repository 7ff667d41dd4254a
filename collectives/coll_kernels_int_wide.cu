/* The reductions of 32- and 64-bit integers (coll_kernels.cuh): the signed kinds only for min and
 * max (coll.cu maps the others to the unsigned kernels). */
#include "coll_kernels.cuh"

coll_kernel_t gshmemi_coll_kernel_int_wide(int dtype, int op)
{
    switch (dtype) {
    case GSHMEMI_DT_INT32: return minmax_kernel_of<int32_t>(op);
    case GSHMEMI_DT_UINT32: return reduce_kernel_of<uint32_t>(op);
    case GSHMEMI_DT_INT64: return minmax_kernel_of<int64_t>(op);
    case GSHMEMI_DT_UINT64: return reduce_kernel_of<uint64_t>(op);
    default: return NULL;
    }
}
