#include "cudawrap.h"

#include <string.h>

gshmemi_driver_t gshmemi_cu;

const char *gshmemi_cu_errstr(CUresult res)
{
    const char *s = NULL;
    if (gshmemi_cu.cuGetErrorString && gshmemi_cu.cuGetErrorString(res, &s) == CUDA_SUCCESS && s) return s;
    return "unknown CUDA driver error";
}

int gshmemi_driver_load(void)
{
    static int loaded;
    int ndev = 0;
    cudaError_t err;
    enum cudaDriverEntryPointQueryResult q;

    if (loaded) return GSHMEMI_OK;
    /* The first runtime call loads libcuda.so.1; its failure is how a missing driver shows. */
    err = cudaGetDeviceCount(&ndev);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR("cuda", "no usable CUDA driver or GPU on this host (cudaGetDeviceCount: %s); gshmem needs an NVIDIA GPU and its driver (libcuda.so.1)",
                      cudaGetErrorString(err));
        return GSHMEMI_ERR_CUDA;
    }
    if (ndev == 0) {
        GSHMEMI_ERROR("cuda", "the CUDA driver reports no GPU on this host");
        return GSHMEMI_ERR_CUDA;
    }
#define GSHMEMI_DRIVER_LOAD_AS(field, name)                                                       \
    err = cudaGetDriverEntryPointByVersion(name, (void **)&gshmemi_cu.field, 12000, cudaEnableDefault, &q); \
    if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || !gshmemi_cu.field) {            \
        GSHMEMI_ERROR("cuda", "the CUDA driver has no entry point %s (%s); a driver for CUDA 12.0 or newer is needed", \
                      name, cudaGetErrorString(err));                                             \
        return GSHMEMI_ERR_CUDA;                                                                  \
    }
#define GSHMEMI_DRIVER_LOAD(fn) GSHMEMI_DRIVER_LOAD_AS(fn, #fn)
    GSHMEMI_DRIVER_FUNCS(GSHMEMI_DRIVER_LOAD)
    GSHMEMI_DRIVER_LOAD_AS(cuCtxCreate_12, "cuCtxCreate")
#define GSHMEMI_DRIVER_LOAD_OPTIONAL(fn, version)                                                 \
    if (cudaGetDriverEntryPointByVersion(#fn, (void **)&gshmemi_cu.fn, version, cudaEnableDefault, &q) != cudaSuccess || \
        q != cudaDriverEntryPointSuccess)                                                         \
        gshmemi_cu.fn = NULL;
    GSHMEMI_DRIVER_FUNCS_OPTIONAL(GSHMEMI_DRIVER_LOAD_OPTIONAL)
#undef GSHMEMI_DRIVER_LOAD_OPTIONAL
#undef GSHMEMI_DRIVER_LOAD
#undef GSHMEMI_DRIVER_LOAD_AS
    loaded = 1;
    return GSHMEMI_OK;
}
