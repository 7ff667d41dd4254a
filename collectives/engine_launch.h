/* Between the engine's host side (engine.c) and its daemon kernel (engine.cu). */
#ifndef GSHMEMI_COLL_ENGINE_LAUNCH_H
#define GSHMEMI_COLL_ENGINE_LAUNCH_H

#include <cuda_runtime_api.h>

#include "device/coll/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_ENGINE_MAX_THREADS 512 /* the daemon's launch bound */

/* CTAs of `threads` threads the daemon can keep resident on one SM, into *per_sm. */
int gshmemi_engine_fit(int threads, int *per_sm);
/* Launches the daemon: d->ctas CTAs of `threads` on stream. */
int gshmemi_engine_launch(const gshmemi_engine_dev_t *d, int threads, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
