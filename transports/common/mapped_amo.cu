/* Host-initiated atomics through the heap mapping and stream-ordered waits: one-thread kernels, so
 * that they are ordered on the caller's stream (and capturable in a CUDA graph) and use the same
 * system-scope atomics as the device API. Host AMOs are rare: correctness first, a synchronize per
 * fetching call. */
#include <pthread.h>
#include <string.h>

/* Only the stateless device headers: including gshmem.h would make this file a registered device
 * module of its own. The wait's bound comes in its arguments instead. */
#include "device/amo.cuh"
#include "device/wait.cuh"
#include "mapped.h"

typedef struct {
    void *word;       /* the peer's word as mapped here */
    uint64_t value, cond;
    uint64_t *out;    /* where the old value goes, or NULL */
    int op, width;
} mapped_amo_args_t;

typedef struct {
    const void *ivar;
    uint64_t value;   /* width bytes, zero-extended */
    uint64_t *out;
    int width, is_signed, cmp;
    int my_pe;        /* named in a timeout report */
    uint64_t timeout_ns; /* GSHMEM_DEVICE_WAIT_TIMEOUT; 0 = never */
    char what[96];    /* routine named in a timeout report */
} mapped_wait_args_t;

/* The bound of the stream-ordered wait (device/wait.cuh), from its arguments. */
struct mapped_wait_bound {
    const mapped_wait_args_t *a;
    __device__ __forceinline__ uint64_t timeout_ns() const { return a->timeout_ns; }
    __device__ __forceinline__ int my_pe() const { return a->my_pe; }
    __device__ __forceinline__ bool proxy_failed() const { return false; } /* waits on P2P memory only */
};

/* One result slot for the blocking forms; the lock keeps concurrent host threads apart. */
static __device__ uint64_t mapped_result;
static pthread_mutex_t mapped_result_lock = PTHREAD_MUTEX_INITIALIZER;

static __global__ void mapped_amo_kernel(mapped_amo_args_t a)
{
    /* Stream order puts earlier work before this kernel; the fence makes this op a release for
     * remote observers too (the signal of the stream-ordered put_signal). */
    __threadfence_system();
    uint64_t old = a.width == 4 ? gshmemi_amo_op_b32(a.op, a.word, (uint32_t)a.value, (uint32_t)a.cond)
                                : gshmemi_amo_op_b64(a.op, a.word, a.value, a.cond);
    if (a.out) *a.out = old;
}

/* The word as a T of its width and signedness, so that the shared wait compares as the typed
 * routine would. */
template <typename T> static __device__ __forceinline__ uint64_t mapped_wait_as(const mapped_wait_args_t &a)
{
    return (uint64_t)gshmemi_spin_until<T>((const T *)a.ivar, a.cmp, (T)a.value, a.what, mapped_wait_bound{&a});
}

static __global__ void mapped_wait_kernel(mapped_wait_args_t a)
{
    uint64_t cur;
    if (a.width == 8) cur = a.is_signed ? mapped_wait_as<int64_t>(a) : mapped_wait_as<uint64_t>(a);
    else if (a.width == 4) cur = a.is_signed ? mapped_wait_as<int32_t>(a) : mapped_wait_as<uint32_t>(a);
    else cur = a.is_signed ? mapped_wait_as<int16_t>(a) : mapped_wait_as<uint16_t>(a);
    __threadfence_system(); /* what the writer released before the word is visible to later work */
    if (a.out) *a.out = cur;
}

/* Launches, and for the blocking forms copies the result back and synchronizes. */
template <typename Args>
static int mapped_launch(void (*kernel)(Args), Args *a, cudaStream_t stream, uint64_t *result)
{
    int rc = GSHMEMI_OK;
    if (!result) {
        a->out = NULL;
        kernel<<<1, 1, 0, stream>>>(*a);
        GSHMEMI_CUDACHECK(cudaGetLastError());
        return GSHMEMI_OK;
    }
    pthread_mutex_lock(&mapped_result_lock);
    cudaError_t err = cudaGetSymbolAddress((void **)&a->out, mapped_result);
    if (err == cudaSuccess) {
        kernel<<<1, 1, 0, stream>>>(*a);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpyFromSymbolAsync(result, mapped_result, sizeof(uint64_t), 0, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    pthread_mutex_unlock(&mapped_result_lock);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR("p2p", "host-initiated atomic/wait kernel failed: %s", cudaGetErrorString(err));
        rc = GSHMEMI_ERR_CUDA;
    }
    return rc;
}

extern "C" void gshmemi_mapped_kernels_load(void)
{
    cudaFunction_t f;
    if (cudaGetFuncBySymbol(&f, (const void *)mapped_amo_kernel) == cudaSuccess) (void)gshmemi_module_preload((void *)f);
    else GSHMEMI_WARN("p2p", "cannot name the host atomics' kernel module: %s", cudaGetErrorString(cudaGetLastError()));
}

extern "C" int gshmemi_mapped_amo(gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value, uint64_t cond, size_t width,
                               int pe, cudaStream_t stream, uint64_t *fetched)
{
    mapped_amo_args_t a;
    memset(&a, 0, sizeof(a));
    a.word = gshmemi_mapped_addr(ctx, pe, dest);
    a.value = value;
    a.cond = cond;
    a.op = op;
    a.width = (int)width;
    return mapped_launch(mapped_amo_kernel, &a, stream, fetched);
}

extern "C" int gshmemi_mapped_wait_local(gshmemi_transport_ctx_t *ctx, const void *ivar, size_t width, int is_signed, int cmp,
                                      uint64_t value, const char *what, cudaStream_t stream)
{
    mapped_wait_args_t a;
    memset(&a, 0, sizeof(a));
    a.my_pe = ctx->my_pe;
    a.timeout_ns = ctx->wait_timeout_ns;
    a.ivar = ivar;
    a.value = value;
    a.width = (int)width;
    a.is_signed = is_signed;
    a.cmp = cmp;
    strncpy(a.what, what, sizeof(a.what) - 1);
    return mapped_launch(mapped_wait_kernel, &a, stream, (uint64_t *)NULL);
}
