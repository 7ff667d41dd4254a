/* The data movers' kernel and the floating-point reductions' (coll_kernels.cuh). */
#include "coll_kernels.cuh"

coll_kernel_t gshmemi_coll_kernel_data(void) { return coll_kernel<GSHMEMI_OP_NONE, char>; }

coll_kernel_t gshmemi_coll_kernel_float(int dtype, int op)
{
    switch (dtype) {
    case GSHMEMI_DT_FLOAT: return reduce_kernel_of<float>(op);
    case GSHMEMI_DT_DOUBLE: return reduce_kernel_of<double>(op);
    case GSHMEMI_DT_HALF: return reduce_kernel_of<__half>(op);
    case GSHMEMI_DT_BFLOAT16: return reduce_kernel_of<__nv_bfloat16>(op);
    default: return NULL;
    }
}
