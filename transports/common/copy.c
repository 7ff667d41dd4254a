/* The copy backend (common/backend.h), the proxy's for PEs of this machine that are remote to
 * each other (P2P disabled, or another host by GSHMEM_HOST_ID), and the emulated IBGDA NIC's data
 * mover. P2P maps their heaps here whether or not it serves them
 * (ctx->host_view), so data moves with the copy engine between mapped addresses.
 *
 * Two streams per destination PE, both at the highest priority. The data stream carries copies
 * and the signals of puts-with-signal (stream memory operations, after their data). The atomic
 * stream carries the one-thread kernels of the other atomics (copy_kernels.cu), each after an
 * event of the data stream, so an atomic lands after the data before it, and the proxy's plain
 * values (p, a collective's credits and flags) while the data stream has copies in flight: a
 * value does not wait for the copies queued before it (OpenSHMEM orders a p after a put only
 * through a fence); behind megabytes of a collective's copies, its credits would stall the
 * peer's next steps. With no copy in flight a value takes the data stream (its latency there is
 * the lower, measured), and values to a PE stay in order whichever stream they take: one goes to
 * the data stream only when the atomic stream is idle, and the atomic stream waits for an event
 * recorded after the values on the data stream before a copy follows them. 4- and 8-byte values
 * are stream memory operations, 1- and 2-byte ones copies from a pinned staging ring, so none
 * needs an SM. A fence makes each stream of a PE wait for the other. A kernel waits for a free
 * SM: kept apart, a device kernel that holds every SM while it waits for a flag or a copy cannot
 * stall the copies behind an atomic. The emulated IBGDA NIC's instance keeps its values on the
 * data stream, in the order of its send queue (values_apart = 0).
 *
 * Under MPS (how PEs share one GPU) the backend works in a CUDA context of its own. Measured on
 * an H100 under MPS: a stream write or copy posted on a stream of the application's context can
 * wait, for good, behind kernels another thread of the process has queued (an on-stream barrier's
 * kernels, each waiting for the proxy); from a context of its own, another MPS client, it runs.
 * Without MPS a second context is time-sliced with the application's, so there the backend shares
 * the application's (GSHMEM_PROXY_OWN_CONTEXT overrides). The heap, every PE's as mapped here, is
 * VMM memory that every context of the device reaches, and pinned host memory is portable; a
 * cudaMalloc buffer of the application belongs to its context, and copies to or from one name
 * both contexts (cuMemcpyPeerAsync). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../runtime/base/clock.h"
#include "../../runtime/base/env.h"
#include "../route.h"
#include "backend.h"
#include "copy.h"

#define STAGING_SLOTS 4096 /* 1- and 2-byte values in flight */

enum { DATA = 0, ATOMIC = 1 };

/* Where a PE's plain values go (value_stream): what the data stream holds since its last copy. */
typedef struct copy_values {
    cudaEvent_t event;  /* on the data stream after its last values, before a copy */
    uint64_t copy_mark; /* the data stream's mark that follows its last copy */
    char on_data;       /* a value went on the data stream since event was recorded */
    char unwaited;      /* the atomic stream has not yet waited for event */
    char copy_posted;   /* a copy went on the data stream since its last mark */
} copy_values_t;

struct gshmemi_proxy_backend {
    gshmemi_transport_ctx_t *ctx;
    CUcontext own;        /* the backend's own context, or NULL: it works in the application's */
    cudaStream_t *stream; /* [n_pes][2] (DATA, ATOMIC) of the peers served, made at connect */
    cudaEvent_t *event;   /* [n_pes][2] ordering points between a PE's two streams */
    copy_values_t *values; /* [n_pes] */
    char *busy;           /* [n_pes][2] work posted since the stream's last completion mark */
    uint64_t *mark_seq;   /* [n_pes][2] the last completion mark posted on each stream */
    volatile uint64_t *marks; /* pinned [n_pes][2]: the stream writes its mark here once the work before it is done */
    uint64_t *marks_dev;  /* marks as the GPU addresses them */
    unsigned slow_polls;  /* progress calls that found work pending, since the last error check */
    uint64_t *staging;    /* pinned [STAGING_SLOTS] */
    unsigned staging_next;
    int values_apart;     /* plain values go on the atomic stream (the proxy's), not after the data */
};

/* Makes the backend's context current on this thread until leave(); nothing without one. */
static int enter(gshmemi_proxy_backend_t *be)
{
    if (be->own) GSHMEMI_CUCHECK(cuCtxPushCurrent(be->own));
    return GSHMEMI_OK;
}

static void leave(gshmemi_proxy_backend_t *be)
{
    CUcontext popped;
    if (be->own) (void)gshmemi_cu.cuCtxPopCurrent(&popped);
}

int gshmemi_copy_backend_enter(gshmemi_proxy_backend_t *be) { return enter(be); }
void gshmemi_copy_backend_leave(gshmemi_proxy_backend_t *be) { leave(be); }

/* Whether the backend needs a context of its own: GSHMEM_PROXY_OWN_CONTEXT, else whether the
 * device runs under MPS. */
static int wants_own_context(gshmemi_transport_ctx_t *ctx)
{
    int mps = 0;
    if (gshmemi_env.PROXY_OWN_CONTEXT >= 0) return gshmemi_env.PROXY_OWN_CONTEXT;
    CUresult res = gshmemi_cu.cuDeviceGetAttribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, ctx->cudev);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_INFO("proxy", "copy backend: whether GPU %d runs under MPS is unknown (%s): it shares the application's context", ctx->device,
                     gshmemi_cu_errstr(res));
        return 0;
    }
    return mps;
}

/* What the backend makes in its context (the current one): the staging ring and its kernel. */
static int open_in_context(gshmemi_proxy_backend_t *be)
{
    const size_t n = 2 * (size_t)be->ctx->n_pes;
    GSHMEMI_CUDACHECK(cudaHostAlloc((void **)&be->staging, STAGING_SLOTS * sizeof(uint64_t), cudaHostAllocPortable));
    GSHMEMI_CUDACHECK(cudaHostAlloc((void **)&be->marks, n * sizeof(uint64_t), cudaHostAllocPortable | cudaHostAllocMapped));
    memset((void *)be->marks, 0, n * sizeof(uint64_t));
    GSHMEMI_CUDACHECK(cudaHostGetDevicePointer((void **)&be->marks_dev, (void *)be->marks, 0));
    if (gshmemi_copy_kernels_load() != cudaSuccess) {
        GSHMEMI_ERROR("proxy", "copy backend: loading its kernels failed: %s", cudaGetErrorString(cudaGetLastError()));
        return GSHMEMI_ERR_CUDA;
    }
    return GSHMEMI_OK;
}

static int copy_open(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_backend_t **out, void *my_blob)
{
    gshmemi_proxy_backend_t *be = calloc(1, sizeof(*be));
    const size_t n = 2 * (size_t)ctx->n_pes;
    int rc;

    (void)my_blob;
    *out = be; /* the caller closes it, also after a failure here */
    if (!be) return GSHMEMI_ERR_NOMEM;
    be->ctx = ctx;
    be->stream = calloc(n, sizeof(*be->stream));
    be->event = calloc(n, sizeof(*be->event));
    be->busy = calloc(n, 1);
    be->mark_seq = calloc(n, sizeof(*be->mark_seq));
    be->values = calloc((size_t)ctx->n_pes, sizeof(*be->values));
    if (!be->stream || !be->event || !be->busy || !be->mark_seq || !be->values) return GSHMEMI_ERR_NOMEM;
    if (wants_own_context(ctx)) {
        CUcontext popped;
        GSHMEMI_CUCHECK(cuCtxCreate_12(&be->own, NULL, 0, 0, ctx->cudev)); /* current on this thread until popped */
        rc = open_in_context(be);
        GSHMEMI_CUCHECK(cuCtxPopCurrent(&popped));
        GSHMEMI_INFO("proxy", "copy backend: in a CUDA context of its own (%s)",
                     gshmemi_env.PROXY_OWN_CONTEXT >= 0 ? "GSHMEM_PROXY_OWN_CONTEXT" : "the GPU runs under MPS");
        return rc;
    }
    return open_in_context(be);
}

static int copy_attach(gshmemi_proxy_backend_t *be)
{
    if (be->own) GSHMEMI_CUCHECK(cuCtxSetCurrent(be->own));
    return GSHMEMI_OK;
}

/* Both streams of pe, at the highest priority (a request's copy or atomic goes ahead of the
 * application's queued work), with their events. */
static int make_streams(gshmemi_proxy_backend_t *be, int pe)
{
    int least = 0, greatest = 0;
    GSHMEMI_CUDACHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int which = DATA; which <= ATOMIC; which++) {
        const size_t i = 2 * (size_t)pe + which;
        GSHMEMI_CUDACHECK(cudaStreamCreateWithPriority(&be->stream[i], cudaStreamNonBlocking, greatest));
        GSHMEMI_CUDACHECK(cudaEventCreateWithFlags(&be->event[i], cudaEventDisableTiming));
    }
    GSHMEMI_CUDACHECK(cudaEventCreateWithFlags(&be->values[pe].event, cudaEventDisableTiming));
    return GSHMEMI_OK;
}

/* Each kind of work the thread will post on pe's streams, done once now within a scratch buffer of
 * this GPU (the peer's heap may have no memory mapped yet): whatever the driver sets up on first
 * use is set up before any kernel can be waiting for the proxy. */
static int warm_up(gshmemi_proxy_backend_t *be, int pe, uint64_t *scratch)
{
    cudaStream_t data = be->stream[2 * (size_t)pe + DATA], atomic = be->stream[2 * (size_t)pe + ATOMIC];

    GSHMEMI_CUDACHECK(cudaMemcpyAsync(scratch, scratch + 1, sizeof(uint64_t), cudaMemcpyDeviceToDevice, data));
    GSHMEMI_CUCHECK(cuStreamWriteValue64((CUstream)data, (CUdeviceptr)(uintptr_t)scratch, 0, 0));
    GSHMEMI_CUCHECK(cuStreamWriteValue32((CUstream)data, (CUdeviceptr)(uintptr_t)scratch, 0, 0));
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(scratch, be->staging, 1, cudaMemcpyHostToDevice, data));
    GSHMEMI_CUCHECK(cuStreamWriteValue64((CUstream)atomic, (CUdeviceptr)(uintptr_t)scratch, 0, 0));
    GSHMEMI_CUCHECK(cuStreamWriteValue32((CUstream)atomic, (CUdeviceptr)(uintptr_t)scratch, 0, 0));
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(scratch, be->staging, 1, cudaMemcpyHostToDevice, atomic));
    GSHMEMI_CUDACHECK(cudaEventRecord(be->event[2 * (size_t)pe + DATA], data));
    GSHMEMI_CUDACHECK(cudaStreamWaitEvent(atomic, be->event[2 * (size_t)pe + DATA], 0));
    GSHMEMI_CUDACHECK((cudaError_t)gshmemi_copy_amo(scratch, GSHMEMI_AMO_FETCH_ADD, 0, 0, 8, &be->staging[0], atomic));
    GSHMEMI_CUDACHECK(cudaStreamSynchronize(atomic));
    GSHMEMI_CUDACHECK(cudaStreamSynchronize(data));
    return GSHMEMI_OK;
}

/* Every peer routed here must be mapped (P2P maps each PE of this machine whose GPU ours reaches).
 * Its streams are made now, at init: the proxy thread makes no CUDA object while a kernel waits
 * for it. serve: the peers to serve (the emulated IBGDA NIC's); NULL: those routed to the proxy's
 * copy engine. */
static int copy_connect(gshmemi_proxy_backend_t *be, const void *blobs, const int *serve)
{
    int rc = GSHMEMI_OK;

    uint64_t *scratch = NULL;

    (void)blobs;
    be->values_apart = serve == NULL; /* the proxy's instance; the emulated NIC's keeps its queue's order */
    GSHMEMI_CHECK(enter(be));
    if (cudaMalloc((void **)&scratch, 2 * sizeof(uint64_t)) != cudaSuccess) {
        GSHMEMI_ERROR("proxy", "copy backend: cannot allocate its 16-byte scratch buffer: %s", cudaGetErrorString(cudaGetLastError()));
        rc = GSHMEMI_ERR_CUDA;
    }
    for (int pe = 0; pe < be->ctx->n_pes && rc == GSHMEMI_OK; pe++) {
        if (serve ? !serve[pe] : be->ctx->route[pe] != GSHMEMI_ROUTE_PROXY_COPY) continue;
        if (!be->ctx->host_view[pe]) {
            GSHMEMI_ERROR("proxy", "copy backend: PE %d's heap is not mapped here", pe);
            rc = GSHMEMI_ERR_UNSUPPORTED;
        } else {
            rc = make_streams(be, pe);
            if (rc == GSHMEMI_OK) rc = warm_up(be, pe, scratch);
        }
    }
    if (scratch) cudaFree(scratch);
    leave(be);
    return rc;
}

static int copy_register_chunk(gshmemi_proxy_backend_t *be, const gshmemi_heap_chunk_t *chunk)
{
    (void)be, (void)chunk; /* P2P maps every chunk of this machine's PEs as the heaps grow */
    return GSHMEMI_OK;
}

/* Stream `which` of pe (made at connect), marked busy. */
static cudaStream_t stream_of(gshmemi_proxy_backend_t *be, int pe, int which)
{
    const size_t i = 2 * (size_t)pe + which;
    if (!be->stream[i]) {
        GSHMEMI_ERROR("proxy", "copy backend: PE %d is not served by this backend", pe);
        return NULL;
    }
    be->busy[i] = 1;
    return be->stream[i];
}

/* Whether stream i may hold work not yet complete: posted since its last mark, or marked and
 * the mark not yet written back. */
static int in_flight(gshmemi_proxy_backend_t *be, size_t i)
{
    return be->busy[i] || __atomic_load_n(&be->marks[i], __ATOMIC_ACQUIRE) < be->mark_seq[i];
}

/* Work posted later on stream `later` of pe starts after what stream `earlier` of pe holds now. */
static int order_after(gshmemi_proxy_backend_t *be, int pe, int earlier, int later)
{
    const size_t e = 2 * (size_t)pe + earlier;
    const int was_busy = be->stream[e] && in_flight(be, e);
    cudaStream_t s = stream_of(be, pe, later);
    if (!s) return GSHMEMI_ERR_CUDA;
    if (!was_busy) return GSHMEMI_OK;
    GSHMEMI_CUDACHECK(cudaEventRecord(be->event[e], be->stream[e]));
    GSHMEMI_CUDACHECK(cudaStreamWaitEvent(s, be->event[e], 0));
    return GSHMEMI_OK;
}

static char *remote_addr(gshmemi_proxy_backend_t *be, int pe, uint64_t off) { return be->ctx->host_view[pe] + off; }

static int check(cudaError_t err, const char *what, int pe)
{
    if (err == cudaSuccess) return GSHMEMI_OK;
    GSHMEMI_ERROR("proxy", "copy backend: %s to PE %d: %s", what, pe, cudaGetErrorString(err));
    return GSHMEMI_ERR_CUDA;
}

/* The context a local buffer of a request belongs to when it is not the backend's own (a
 * cudaMalloc buffer of the application); NULL otherwise: the heap, pinned host memory, or no own
 * context. Such a copy names both contexts, the documented form (a plain copy resolved by unified
 * addressing also ran in a probe, at the same 1180 GB/s). */
static CUcontext foreign_context(gshmemi_proxy_backend_t *be, const void *p)
{
    const gshmemi_heap_t *h = be->ctx->heap;
    const CUdeviceptr a = (CUdeviceptr)(uintptr_t)p;
    unsigned type = 0;
    CUcontext owner = NULL;

    if (!be->own || (h && a >= h->reserve && a - h->reserve < h->reserve_size)) return NULL;
    if (gshmemi_cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a) != CUDA_SUCCESS || type != CU_MEMORYTYPE_DEVICE)
        return NULL;
    if (gshmemi_cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, a) != CUDA_SUCCESS || owner == be->own) return NULL;
    return owner;
}

/* n bytes from src to dst on s, one of them at pe's heap as mapped here, the other local. */
static int copy_bytes(gshmemi_proxy_backend_t *be, void *dst, const void *src, size_t n, const void *local, int pe,
                      const char *what, cudaStream_t s)
{
    CUcontext owner = foreign_context(be, local);
    if (!owner) return check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s), what, pe);
    CUcontext dst_ctx = local == dst ? owner : be->own, src_ctx = local == src ? owner : be->own;
    CUresult res = gshmemi_cu.cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)dst, dst_ctx, (CUdeviceptr)(uintptr_t)src, src_ctx, n, (CUstream)s);
    if (res == CUDA_SUCCESS) return GSHMEMI_OK;
    GSHMEMI_ERROR("proxy", "copy backend: %s to PE %d (%zu bytes, local buffer %p of the application's context): %s", what, pe, n, local,
                  gshmemi_cu_errstr(res));
    return GSHMEMI_ERR_CUDA;
}

/* pe's data stream for a copy; where values travel apart, the values before it are marked by the
 * PE's values event (the atomic stream's later values wait for it). */
static cudaStream_t copy_stream(gshmemi_proxy_backend_t *be, int pe)
{
    cudaStream_t s = stream_of(be, pe, DATA);
    copy_values_t *v = &be->values[pe];
    if (!s || !be->values_apart) return s;
    if (v->on_data) {
        cudaError_t err = cudaEventRecord(v->event, s);
        if (err != cudaSuccess) {
            GSHMEMI_ERROR("proxy", "copy backend: recording PE %d's values before a copy: %s", pe, cudaGetErrorString(err));
            return NULL;
        }
        v->on_data = 0;
        v->unwaited = 1;
    }
    v->copy_posted = 1;
    return s;
}

static int copy_put(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, const void *src, size_t n)
{
    cudaStream_t s = copy_stream(be, pe);
    if (!s) return GSHMEMI_ERR_CUDA;
    return copy_bytes(be, remote_addr(be, pe, dst_off), src, n, src, pe, "put", s);
}

static int copy_get(gshmemi_proxy_backend_t *be, int pe, void *dst, uint64_t src_off, size_t n)
{
    cudaStream_t s = copy_stream(be, pe);
    if (!s) return GSHMEMI_ERR_CUDA;
    return copy_bytes(be, dst, remote_addr(be, pe, src_off), n, dst, pe, "get", s);
}

/* The stream of pe a plain value takes (the header comment): the data stream unless values travel
 * apart and a copy is in flight there or the atomic stream is busy; the atomic stream first
 * waits for the values already on the data stream. -1 on a failure. */
static int value_stream(gshmemi_proxy_backend_t *be, int pe)
{
    const size_t d = 2 * (size_t)pe + DATA, a = 2 * (size_t)pe + ATOMIC;
    copy_values_t *v = &be->values[pe];
    if (!be->values_apart) return DATA;
    const int copying = v->copy_posted || __atomic_load_n(&be->marks[d], __ATOMIC_ACQUIRE) < v->copy_mark;
    if (!copying && !(be->stream[a] && in_flight(be, a))) {
        v->on_data = 1;
        return DATA;
    }
    if (v->unwaited && be->stream[a]) {
        cudaError_t err = cudaStreamWaitEvent(be->stream[a], v->event, 0);
        if (err != cudaSuccess) {
            GSHMEMI_ERROR("proxy", "copy backend: ordering PE %d's values: %s", pe, cudaGetErrorString(err));
            return -1;
        }
        v->unwaited = 0;
    }
    return ATOMIC;
}

/* A 4- or 8-byte value as a stream memory operation on pe's stream `which`: written by the GPU's
 * front end after a memory barrier (the default flags), no kernel. */
static int write_value(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, uint64_t value, size_t width, int which)
{
    cudaStream_t s = stream_of(be, pe, which);
    if (!s) return GSHMEMI_ERR_CUDA;
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)remote_addr(be, pe, dst_off);
    CUresult res = width == 8 ? gshmemi_cu.cuStreamWriteValue64((CUstream)s, addr, value, 0)
                              : gshmemi_cu.cuStreamWriteValue32((CUstream)s, addr, (cuuint32_t)value, 0);
    if (res == CUDA_SUCCESS) return GSHMEMI_OK;
    GSHMEMI_ERROR("proxy", "copy backend: a %zu-byte value to PE %d (offset %#llx): %s", width, pe, (unsigned long long)dst_off,
                  gshmemi_cu_errstr(res));
    return GSHMEMI_ERR_CUDA;
}

static int copy_flush(gshmemi_proxy_backend_t *be);

static int copy_put_value(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, uint64_t value, size_t width)
{
    const int which = value_stream(be, pe);
    cudaStream_t s;
    uint64_t *slot;

    if (which < 0) return GSHMEMI_ERR_CUDA;
    if (width == 4 || width == 8) return write_value(be, pe, dst_off, value, width, which);
    /* a staging slot is reused only after everything posted before it completed */
    if (be->staging_next == STAGING_SLOTS) {
        GSHMEMI_CHECK(copy_flush(be));
        be->staging_next = 0;
    }
    s = stream_of(be, pe, which);
    if (!s) return GSHMEMI_ERR_CUDA;
    slot = &be->staging[be->staging_next++];
    *slot = value; /* little-endian: the low `width` bytes first */
    return check(cudaMemcpyAsync(remote_addr(be, pe, dst_off), slot, width, cudaMemcpyHostToDevice, s), "p", pe);
}

static int copy_amo(gshmemi_proxy_backend_t *be, int pe, int op, uint64_t dst_off, uint64_t value, uint64_t cond, size_t width,
                    uint64_t *fetched)
{
    if (width != 4 && width != 8) {
        GSHMEMI_ERROR("proxy", "copy backend: atomic of %zu bytes to PE %d (4 or 8 only)", width, pe);
        return GSHMEMI_ERR_INVALID;
    }
    if (op == GSHMEMI_AMO_SET && !fetched) return write_value(be, pe, dst_off, value, width, DATA); /* a signal set */
    GSHMEMI_CHECK(order_after(be, pe, DATA, ATOMIC));
    return check((cudaError_t)gshmemi_copy_amo(remote_addr(be, pe, dst_off), op, value, cond, (int)width, fetched,
                                               be->stream[2 * (size_t)pe + ATOMIC]),
                 "atomic", pe);
}

/* Later work to every PE starts after the work posted to it so far: the data stream waits for
 * the atomics (and values), and where values travel apart, the atomic stream for the data. */
static int copy_fence(gshmemi_proxy_backend_t *be)
{
    for (int pe = 0; pe < be->ctx->n_pes; pe++) {
        const size_t d = 2 * (size_t)pe + DATA, a = 2 * (size_t)pe + ATOMIC;
        const int data_busy = be->values_apart && be->stream[d] && in_flight(be, d);
        if (be->stream[a] && in_flight(be, a)) GSHMEMI_CHECK(order_after(be, pe, ATOMIC, DATA));
        if (data_busy) GSHMEMI_CHECK(order_after(be, pe, DATA, ATOMIC));
    }
    return GSHMEMI_OK;
}

/* Completion without a driver call per poll: a stream with work since its last mark gets a new
 * mark, a stream write of a sequence number into pinned host memory that runs once the work
 * before it is done (the write's default memory barrier orders that work first); a stream is
 * idle once its mark is back. A failed copy or kernel never writes its mark, so every 4096 polls
 * that find work pending ask the streams for an error. */
static int copy_progress(gshmemi_proxy_backend_t *be, int *idle)
{
    const int ask = ++be->slow_polls >= 4096;
    *idle = 1;
    for (size_t i = 0; i < 2 * (size_t)be->ctx->n_pes; i++) {
        if (!be->stream[i]) continue;
        if (be->busy[i]) {
            CUresult res = gshmemi_cu.cuStreamWriteValue64((CUstream)be->stream[i], (CUdeviceptr)(uintptr_t)(be->marks_dev + i),
                                                           be->mark_seq[i] + 1, 0);
            if (res != CUDA_SUCCESS) {
                GSHMEMI_ERROR("proxy", "copy backend: the completion mark of PE %d's %s stream: %s", (int)(i / 2), i % 2 ? "atomic" : "data",
                              gshmemi_cu_errstr(res));
                return GSHMEMI_ERR_CUDA;
            }
            be->mark_seq[i]++;
            be->busy[i] = 0;
            if (i % 2 == DATA && be->values[i / 2].copy_posted) { /* this mark follows the PE's last copy */
                be->values[i / 2].copy_mark = be->mark_seq[i];
                be->values[i / 2].copy_posted = 0;
            }
        }
        if (__atomic_load_n(&be->marks[i], __ATOMIC_ACQUIRE) >= be->mark_seq[i]) continue;
        *idle = 0;
        if (ask) {
            cudaError_t err = cudaStreamQuery(be->stream[i]);
            if (err != cudaSuccess && err != cudaErrorNotReady) return check(err, i % 2 ? "an atomic" : "a copy or value", (int)(i / 2));
        }
    }
    if (*idle || ask) be->slow_polls = 0;
    return GSHMEMI_OK;
}

/* Bounded by GSHMEM_PEER_TIMEOUT: a copy within one machine never waits for the peer's process,
 * but an atomic waits for a free SM, and a wedged GPU must not hang the proxy silently. */
static int copy_flush(gshmemi_proxy_backend_t *be)
{
    const double deadline = gshmemi_now_s() + be->ctx->peer_timeout;
    int idle = 0;

    for (;;) {
        GSHMEMI_CHECK(copy_progress(be, &idle));
        if (idle) return GSHMEMI_OK;
        if (gshmemi_now_s() > deadline) {
            for (size_t i = 0; i < 2 * (size_t)be->ctx->n_pes; i++)
                if (be->stream[i] && in_flight(be, i))
                    GSHMEMI_ERROR("proxy", "copy backend: %s to PE %d not complete after GSHMEM_PEER_TIMEOUT=%g s%s",
                                  i % 2 ? "an atomic" : "a copy or value", (int)(i / 2), be->ctx->peer_timeout,
                                  i % 2 ? " (its kernel waits for a free SM: does a kernel hold every SM while it waits?)" : "");
            return GSHMEMI_ERR_TIMEOUT;
        }
    }
}

static void copy_close(gshmemi_proxy_backend_t *be)
{
    if (!be) return;
    if (enter(be) != GSHMEMI_OK) be->own = NULL; /* a context that cannot be entered is not destroyed either */
    for (size_t i = 0; be->stream && be->event && i < 2 * (size_t)be->ctx->n_pes; i++) {
        if (be->stream[i]) {
            cudaStreamSynchronize(be->stream[i]);
            cudaStreamDestroy(be->stream[i]);
        }
        if (be->event[i]) cudaEventDestroy(be->event[i]);
    }
    for (int pe = 0; be->values && pe < be->ctx->n_pes; pe++)
        if (be->values[pe].event) cudaEventDestroy(be->values[pe].event);
    if (be->staging) cudaFreeHost(be->staging);
    if (be->marks) cudaFreeHost((void *)be->marks);
    leave(be);
    if (be->own) (void)gshmemi_cu.cuCtxDestroy(be->own);
    free(be->stream);
    free(be->event);
    free(be->busy);
    free(be->mark_seq);
    free(be->values);
    free(be);
}

const gshmemi_proxy_backend_ops_t gshmemi_proxy_backend_copy = {
    GSHMEMI_PROXY_BACKEND_COMMON(copy),
    .blob_size = 0,
    .attach = copy_attach,
    .fence = copy_fence,
};
