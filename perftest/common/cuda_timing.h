/* What the perftests (perftest.h) and the comparison benchmarks (compare/compare.h) share: a CUDA
 * call checked (the program exits on an error, naming the call) and the timing of a launch with a
 * pair of CUDA events. Plain CUDA: nothing here names a library. */
#ifndef GSHMEM_CUDA_TIMING_H
#define GSHMEM_CUDA_TIMING_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static inline void cuda_check_or_exit(cudaError_t err, const char *who, const char *call, const char *file, int line)
{
    if (err == cudaSuccess) return;
    fprintf(stderr, "%s: %s failed: %s (%s:%d)\n", who, call, cudaGetErrorString(err), file, line);
    exit(1);
}
#define CUDA_OR_EXIT(who, call) cuda_check_or_exit((call), who, #call, __FILE__, __LINE__)

/* Events around launches on one stream; who prefixes the error messages. */
typedef struct {
    cudaEvent_t start, stop;
    const char *who;
} cuda_timer_t;

/* Records the start on stream. */
static inline cuda_timer_t cuda_timer_start(cudaStream_t stream, const char *who)
{
    cuda_timer_t t;
    t.who = who;
    CUDA_OR_EXIT(who, cudaEventCreate(&t.start));
    CUDA_OR_EXIT(who, cudaEventCreate(&t.stop));
    CUDA_OR_EXIT(who, cudaEventRecord(t.start, stream));
    return t;
}

/* Milliseconds from the start to now on stream (waits for what was launched; a failed launch
 * exits). */
static inline float cuda_timer_ms(cuda_timer_t *t, cudaStream_t stream)
{
    float ms = 0;
    CUDA_OR_EXIT(t->who, cudaGetLastError());
    CUDA_OR_EXIT(t->who, cudaEventRecord(t->stop, stream));
    CUDA_OR_EXIT(t->who, cudaEventSynchronize(t->stop));
    CUDA_OR_EXIT(t->who, cudaEventElapsedTime(&ms, t->start, t->stop));
    return ms;
}

static inline void cuda_timer_free(cuda_timer_t *t)
{
    CUDA_OR_EXIT(t->who, cudaEventDestroy(t->start));
    CUDA_OR_EXIT(t->who, cudaEventDestroy(t->stop));
}

#endif
