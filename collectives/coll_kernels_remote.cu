/* The kernels of teams with remote members (coll_kernels.cuh): data, or the reduction's element
 * kind (the table is in the order of GSHMEMI_DT_*). */
#include "coll_kernels.cuh"

coll_remote_kernel_t gshmemi_coll_remote_kernel(int reduces, int dtype)
{
    static const coll_remote_kernel_t by_dtype[] = {
        coll_remote_kernel<int8_t>,  coll_remote_kernel<uint8_t>,  coll_remote_kernel<int16_t>, coll_remote_kernel<uint16_t>,
        coll_remote_kernel<int32_t>, coll_remote_kernel<uint32_t>, coll_remote_kernel<int64_t>, coll_remote_kernel<uint64_t>,
        coll_remote_kernel<float>,   coll_remote_kernel<double>,   coll_remote_kernel<__half>,  coll_remote_kernel<__nv_bfloat16>};
    static_assert(sizeof(by_dtype) / sizeof(by_dtype[0]) == GSHMEMI_DT_COUNT, "one remote kernel per element kind");
    return reduces ? by_dtype[dtype] : coll_remote_kernel<char>;
}
