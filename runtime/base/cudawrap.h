/* The CUDA driver API, reached through the runtime's entry-point query so that nothing links
 * libcuda: libgshmem and its CPU tests load on machines without a driver, and shmem_init reports
 * a missing driver as an error. */
#ifndef GSHMEMI_CUDAWRAP_H
#define GSHMEMI_CUDAWRAP_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_DRIVER_FUNCS(X)                                                                   \
    X(cuGetErrorString)                                                                           \
    X(cuDeviceGet)                                                                                \
    X(cuDeviceGetAttribute)                                                                       \
    X(cuDeviceCanAccessPeer)                                                                      \
    X(cuDeviceGetP2PAttribute)                                                                    \
    X(cuDeviceGetUuid)                                                                            \
    X(cuDevicePrimaryCtxRetain)                                                                   \
    X(cuDevicePrimaryCtxRelease)                                                                  \
    X(cuCtxGetCurrent)                                                                            \
    X(cuCtxSetCurrent)                                                                            \
    X(cuCtxGetDevice)                                                                             \
    X(cuCtxGetLimit)                                                                              \
    X(cuCtxSetLimit)                                                                              \
    X(cuCtxDestroy)                                                                               \
    X(cuCtxPushCurrent)                                                                           \
    X(cuCtxPopCurrent)                                                                            \
    X(cuMemAddressReserve)                                                                        \
    X(cuMemAddressFree)                                                                           \
    X(cuMemCreate)                                                                                \
    X(cuMemRelease)                                                                               \
    X(cuMemMap)                                                                                   \
    X(cuMemUnmap)                                                                                 \
    X(cuMemSetAccess)                                                                             \
    X(cuMemGetAllocationGranularity)                                                              \
    X(cuMemExportToShareableHandle)                                                               \
    X(cuMemImportFromShareableHandle)                                                             \
    X(cuMemGetHandleForAddressRange)                                                              \
    X(cuMemGetAddressRange)                                                                       \
    X(cuPointerGetAttribute)                                                                      \
    X(cuMemcpyPeerAsync)                                                                          \
    X(cuStreamWriteValue32)                                                                       \
    X(cuStreamWriteValue64)                                                                       \
    X(cuStreamWaitValue64)

/* Entry points a driver may lack, with the CUDA version that brought them: NULL when it is older,
 * and what uses them says so (the module preload: modules.c). */
#define GSHMEMI_DRIVER_FUNCS_OPTIONAL(X)                                                          \
    X(cuModuleGetLoadingMode, 12000)                                                              \
    X(cuFuncGetModule, 12000)                                                                     \
    X(cuModuleGetFunctionCount, 12040)                                                            \
    X(cuModuleEnumerateFunctions, 12040)                                                          \
    X(cuFuncIsLoaded, 12040)                                                                      \
    X(cuFuncLoad, 12040)

typedef struct {
#define GSHMEMI_DRIVER_FIELD(fn) __typeof__(&fn) fn;
#define GSHMEMI_DRIVER_FIELD_OPTIONAL(fn, version) __typeof__(&fn) fn;
    GSHMEMI_DRIVER_FUNCS(GSHMEMI_DRIVER_FIELD)
    GSHMEMI_DRIVER_FUNCS_OPTIONAL(GSHMEMI_DRIVER_FIELD_OPTIONAL)
#undef GSHMEMI_DRIVER_FIELD_OPTIONAL
#undef GSHMEMI_DRIVER_FIELD
    /* cuCtxCreate as CUDA 12.0 defines it (its third version, with execution-affinity parameters;
     * cuda.h's name is a later one) */
    CUresult (*cuCtxCreate_12)(CUcontext *pctx, CUexecAffinityParam *params, int n_params, unsigned int flags, CUdevice dev);
} gshmemi_driver_t;

extern gshmemi_driver_t gshmemi_cu;

/* Loads every entry point; a clear error when there is no driver or no GPU. */
int gshmemi_driver_load(void);

const char *gshmemi_cu_errstr(CUresult res);

#define GSHMEMI_CUCHECK(call)                                                                     \
    do {                                                                                          \
        CUresult gshmemi_cures_ = gshmemi_cu.call;                                                \
        if (gshmemi_cures_ != CUDA_SUCCESS) {                                                     \
            GSHMEMI_ERROR("cuda", "%s failed: %s", #call, gshmemi_cu_errstr(gshmemi_cures_));     \
            return GSHMEMI_ERR_CUDA;                                                              \
        }                                                                                         \
    } while (0)

#define GSHMEMI_CUDACHECK(call)                                                                   \
    do {                                                                                          \
        cudaError_t gshmemi_cerr_ = (call);                                                       \
        if (gshmemi_cerr_ != cudaSuccess) {                                                       \
            GSHMEMI_ERROR("cuda", "%s failed: %s", #call, cudaGetErrorString(gshmemi_cerr_));     \
            return GSHMEMI_ERR_CUDA;                                                              \
        }                                                                                         \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
