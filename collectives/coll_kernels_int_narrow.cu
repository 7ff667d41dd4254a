/* The reductions of 8- and 16-bit integers (coll_kernels.cuh): the signed kinds only for min and
 * max (coll.cu maps the others to the unsigned kernels). */
#include "coll_kernels.cuh"

coll_kernel_t gshmemi_coll_kernel_int_narrow(int dtype, int op)
{
    switch (dtype) {
    case GSHMEMI_DT_INT8: return minmax_kernel_of<int8_t>(op);
    case GSHMEMI_DT_UINT8: return reduce_kernel_of<uint8_t>(op);
    case GSHMEMI_DT_INT16: return minmax_kernel_of<int16_t>(op);
    case GSHMEMI_DT_UINT16: return reduce_kernel_of<uint16_t>(op);
    default: return NULL;
    }
}
