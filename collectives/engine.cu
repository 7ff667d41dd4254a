/* The engine's daemon kernel (device/coll/engine.cuh) and its launch. */
#define GSHMEMI_REMOTE_DIRECT 1
#include "gshmem.h"
#include "../device/coll/engine.cuh"
#include "../runtime/base/cudawrap.h"
#include "engine_launch.h"

static __global__ void __launch_bounds__(GSHMEMI_ENGINE_MAX_THREADS) engine_daemon(gshmemi_engine_dev_t e)
{
    gshmemi_engine_daemon(e);
}

extern "C" int gshmemi_engine_fit(int threads, int *per_sm)
{
    GSHMEMI_CUDACHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, engine_daemon, threads, 0));
    return GSHMEMI_OK;
}

extern "C" int gshmemi_engine_launch(const gshmemi_engine_dev_t *d, int threads, cudaStream_t stream)
{
    engine_daemon<<<d->ctas, threads, 0, stream>>>(*d);
    GSHMEMI_CUDACHECK(cudaGetLastError());
    return GSHMEMI_OK;
}
