/* The host proxy: the remote transport of peers that P2P does not reach. GPU threads post
 * requests into this PE's FIFO (device/proxy_fifo.h, in pinned host memory mapped for the GPU);
 * one proxy thread, started at init on a core of the GPU's NUMA node, takes them in ticket order
 * and hands each to the backend of its peer (common/backend.h: copy engine for PEs of this machine,
 * ibverbs RC for other machines), writes results and the completion count, and on a backend
 * error logs the request, the peer and the cause and fails the FIFO, so the waiting device call
 * reports and traps instead of hanging. The same thread runs the host-initiated operations to
 * verbs peers (hostreq.h): the verbs backend is driven by this thread alone. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../device/proxy_fifo.h"
#include "../../runtime/base/clock.h"
#include "../../runtime/base/env.h"
#include "../common/backend.h"
#include "../common/mapped.h"
#include "../route.h"
#include "hostreq.h"
#include "join.h"

#define PROXY_F_WAIT 1u       /* as GSHMEMI_PROXY_F_WAIT (device/proxy.cuh) */
#define PROXY_BLOB_BYTES 256  /* [int64 verbs status][verbs blob] */

enum { VERBS_OFF = 0, VERBS_OK = 1, VERBS_UNAVAILABLE = 2, VERBS_FAILED = 3 };

static struct {
    int serves;                       /* some peer is routed here */
    gshmemi_proxy_fifo_t host;        /* the FIFO, host pointers (the consumer's view) */
    void *block;                      /* pinned: slots, results, head, done, error */
    uint64_t *dmem;                   /* device memory: the producers' tail, head and done caches, poll stamp */
    uint64_t *scratch;                /* pinned: [0] a g's value, [1] a fetched old value */
    cudaStream_t quiet_stream;        /* the host quiet's reads of the ticket count (no kernel waits on it) */
    gshmemi_proxy_backend_t *copy, *verbs;
    gshmemi_hostq_t *hostq;           /* host-initiated operations to verbs peers, run by the proxy thread */
    int verbs_state;                  /* VERBS_* */
    int verbs_connected;              /* every PE opened verbs and they connected: chunks are registered (collective) */
    pthread_t thread;
    int thread_started;
    volatile int stop;
    int device;
    gshmemi_transport_ctx_t *ctx;
    uint64_t taken;                   /* requests taken (for GSHMEM_PROXY_INJECT_ERROR) */
    struct {                          /* what the thread did, counted where GSHMEM_DEBUG=info or above */
        uint64_t requests, puts_merged, copies, flushes, polls;
        uint64_t post_ns, flush_ns, poll_ns;
    } stats;
    int counting;
} px;

static const char *op_name(int op)
{
    switch (op) {
    case GSHMEMI_PROXY_PUT: return "put";
    case GSHMEMI_PROXY_GET: return "get";
    case GSHMEMI_PROXY_PUT_VALUE: return "p";
    case GSHMEMI_PROXY_AMO: return "atomic";
    case GSHMEMI_PROXY_PUT_SIGNAL: return "put-with-signal";
    case GSHMEMI_PROXY_QUIET: return "quiet";
    case GSHMEMI_PROXY_FENCE: return "fence";
    default: return "unknown request";
    }
}

/* pe is a PE whose requests this proxy carries (a copy or verbs peer). */
static int serves(int pe)
{
    return pe >= 0 && pe < px.ctx->n_pes &&
           (px.ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY || px.ctx->route[pe] == GSHMEMI_ROUTE_PROXY_VERBS);
}

static gshmemi_proxy_backend_t *backend_of(int pe, const gshmemi_proxy_backend_ops_t **ops)
{
    if (px.ctx->route[pe] == GSHMEMI_ROUTE_PROXY_VERBS) {
        *ops = &gshmemi_proxy_backend_verbs;
        return px.verbs;
    }
    *ops = &gshmemi_proxy_backend_copy;
    return px.copy;
}

/* Every backend in use: everything posted so far complete. */
static int flush_all(void)
{
    if (px.copy) GSHMEMI_CHECK(gshmemi_proxy_backend_copy.flush(px.copy));
    if (px.verbs) GSHMEMI_CHECK(gshmemi_proxy_backend_verbs.flush(px.verbs));
    return GSHMEMI_OK;
}

static int all_idle(int *idle)
{
    int a = 1, b = 1;
    *idle = 1;
    if (px.copy) GSHMEMI_CHECK(gshmemi_proxy_backend_copy.progress(px.copy, &a));
    if (px.verbs) GSHMEMI_CHECK(gshmemi_proxy_backend_verbs.progress(px.verbs, &b));
    *idle = a && b;
    return GSHMEMI_OK;
}

/* One request: hand it to the peer's backend; a request a device thread waits for is completed
 * (and its result returned) before the next is taken. */
static int handle(const gshmemi_proxy_req_t *r, uint64_t t, int *defer)
{
    const int op = gshmemi_proxy_req_op(r), pe = gshmemi_proxy_req_pe(r);
    const gshmemi_proxy_backend_ops_t *ops = NULL;
    gshmemi_proxy_backend_t *be;
    unsigned flags = 0;
    int fetch = 0, rc = GSHMEMI_OK;
    uint64_t result = 0;

    const int any_pe = op == GSHMEMI_PROXY_QUIET || op == GSHMEMI_PROXY_FENCE;
    if (pe < 0 || pe >= px.ctx->n_pes || (!any_pe && !serves(pe))) {
        GSHMEMI_ERROR("proxy", "request %llu: %s to PE %d, which the proxy does not serve", (unsigned long long)t, op_name(op), pe);
        return GSHMEMI_ERR_INVALID;
    }
    if (gshmemi_env.PROXY_INJECT_ERROR > 0 && ++px.taken == (uint64_t)gshmemi_env.PROXY_INJECT_ERROR) {
        GSHMEMI_ERROR("proxy", "request %llu: %s to PE %d failed: error injected by GSHMEM_PROXY_INJECT_ERROR=%d",
                      (unsigned long long)t, op_name(op), pe, gshmemi_env.PROXY_INJECT_ERROR);
        return GSHMEMI_ERR_REMOTE;
    }
    be = any_pe ? NULL : backend_of(pe, &ops);
    GSHMEMI_TRACE("proxy", "request %llu: %s to PE %d (%#llx %#llx %#llx %#llx %#llx %#llx)", (unsigned long long)t, op_name(op), pe,
                  (unsigned long long)r->arg[1], (unsigned long long)r->arg[2], (unsigned long long)r->arg[3],
                  (unsigned long long)r->arg[4], (unsigned long long)r->arg[5], (unsigned long long)r->arg[6]);
    switch (op) {
    case GSHMEMI_PROXY_PUT:
        flags = (unsigned)r->arg[4];
        rc = ops->put(be, pe, r->arg[1], (const void *)(uintptr_t)r->arg[2], (size_t)r->arg[3]);
        break;
    case GSHMEMI_PROXY_GET:
        flags = (unsigned)r->arg[4];
        if (r->arg[2]) {
            rc = ops->get(be, pe, (void *)(uintptr_t)r->arg[2], r->arg[1], (size_t)r->arg[3]);
        } else { /* a g: into the scratch word, returned below */
            px.scratch[0] = 0;
            rc = ops->get(be, pe, &px.scratch[0], r->arg[1], (size_t)r->arg[3]);
            fetch = 1;
        }
        break;
    case GSHMEMI_PROXY_PUT_VALUE:
        rc = ops->put_value(be, pe, r->arg[1], r->arg[2], (size_t)r->arg[3]);
        break;
    case GSHMEMI_PROXY_AMO:
        flags = (unsigned)r->arg[5];
        fetch = (flags & PROXY_F_WAIT) != 0;
        rc = ops->amo(be, pe, (int)(r->arg[4] & 0xff), r->arg[1], r->arg[2], r->arg[3], (size_t)(r->arg[4] >> 8 & 0xff),
                      fetch ? &px.scratch[1] : NULL);
        break;
    case GSHMEMI_PROXY_PUT_SIGNAL:
        flags = (unsigned)(r->arg[6] >> 8);
        if (r->arg[3]) rc = ops->put(be, pe, r->arg[1], (const void *)(uintptr_t)r->arg[2], (size_t)r->arg[3]);
        if (rc == GSHMEMI_OK)
            rc = ops->amo(be, pe, (r->arg[6] & 0xff) == 1 /* SHMEM_SIGNAL_ADD */ ? GSHMEMI_AMO_ADD : GSHMEMI_AMO_SET, r->arg[4],
                          r->arg[5], 0, sizeof(uint64_t), NULL);
        break;
    case GSHMEMI_PROXY_QUIET:
        flags = PROXY_F_WAIT;
        break;
    case GSHMEMI_PROXY_FENCE: /* later requests to a PE take effect after the earlier ones */
        if (px.copy && gshmemi_proxy_backend_copy.fence) rc = gshmemi_proxy_backend_copy.fence(px.copy);
        if (rc == GSHMEMI_OK && px.verbs && gshmemi_proxy_backend_verbs.fence) rc = gshmemi_proxy_backend_verbs.fence(px.verbs);
        break;
    default:
        GSHMEMI_ERROR("proxy", "request %llu to PE %d: unknown operation %d (a corrupted FIFO slot?)", (unsigned long long)t, pe, op);
        return GSHMEMI_ERR_INVALID;
    }
    if (rc != GSHMEMI_OK) {
        GSHMEMI_ERROR("proxy", "request %llu: %s to PE %d (offset %#llx, %llu bytes) failed in the %s backend", (unsigned long long)t,
                      op_name(op), pe, (unsigned long long)r->arg[1], (unsigned long long)r->arg[3], ops ? ops->name : "?");
        return rc;
    }
    if (!(flags & PROXY_F_WAIT) && !fetch) return GSHMEMI_OK;
    if (!fetch) { /* the caller completes it, after the requests already queued behind it */
        *defer = 1;
        return GSHMEMI_OK;
    }
    rc = flush_all();
    if (rc != GSHMEMI_OK) {
        GSHMEMI_ERROR("proxy", "request %llu: %s to PE %d: completing the requests before it failed", (unsigned long long)t, op_name(op), pe);
        return rc;
    }
    if (fetch) {
        result = op == GSHMEMI_PROXY_GET ? px.scratch[0] : px.scratch[1];
        gshmemi_fifo_return(&px.host, t, result);
    }
    gshmemi_fifo_complete(&px.host, t + 1);
    return GSHMEMI_OK;
}

/* ---- non-blocking puts taken together (join.h) ----
 * Up to GSHMEMI_PROXY_JOIN_MAX requests at a time; only sources in this PE's symmetric heap are
 * joined (one reservation: a run never spans two allocations). Not with GSHMEM_PROXY_INJECT_ERROR,
 * which counts requests one by one. */
static int put_joinable(const gshmemi_proxy_req_t *r)
{
    const gshmemi_heap_t *h = px.ctx->heap;
    const uintptr_t src = (uintptr_t)r->arg[2];
    const size_t n = (size_t)r->arg[3];

    if (gshmemi_proxy_req_op(r) != GSHMEMI_PROXY_PUT || (unsigned)r->arg[4] != 0 || n == 0) return 0;
    if (!serves(gshmemi_proxy_req_pe(r))) return 0;
    return h && src >= (uintptr_t)h->reserve && src - (uintptr_t)h->reserve < h->reserve_size &&
           n <= h->reserve_size - (src - (uintptr_t)h->reserve);
}

/* Takes the joinable puts from ticket pos on (first, already taken, is one), posts them as joined
 * runs, and says in *taken how many requests that was. On a failure *failed is the ticket of the
 * first request of the run that failed. */
static int handle_puts(const gshmemi_proxy_req_t *first, uint64_t pos, uint64_t *taken, uint64_t *failed)
{
    gshmemi_proxy_req_t b[GSHMEMI_PROXY_JOIN_MAX];
    gshmemi_proxy_put_run_t run[GSHMEMI_PROXY_JOIN_MAX];
    int n = 1, nrun;

    b[0] = *first;
    while (n < GSHMEMI_PROXY_JOIN_MAX && gshmemi_fifo_take(&px.host, pos + (uint64_t)n, &b[n]) && put_joinable(&b[n])) n++;
    nrun = gshmemi_proxy_join_puts(b, n, pos, run);
    *taken = (uint64_t)n;
    for (int k = 0; k < nrun; k++) {
        const gshmemi_proxy_backend_ops_t *ops = NULL;
        gshmemi_proxy_backend_t *be = backend_of(run[k].pe, &ops);
        GSHMEMI_TRACE("proxy", "requests %llu..%llu: put of %llu bytes to PE %d at %#llx (run %d of %d)", (unsigned long long)pos,
                      (unsigned long long)(pos + (uint64_t)n - 1), (unsigned long long)run[k].n, run[k].pe,
                      (unsigned long long)run[k].dst, k + 1, nrun);
        int rc = ops->put(be, run[k].pe, run[k].dst, (const void *)(uintptr_t)run[k].src, (size_t)run[k].n);
        if (rc != GSHMEMI_OK) {
            GSHMEMI_ERROR("proxy", "requests %llu..%llu: a put of %llu bytes to PE %d (offset %#llx), joined from non-blocking puts, failed in the %s backend",
                          (unsigned long long)pos, (unsigned long long)(pos + (uint64_t)n - 1), (unsigned long long)run[k].n, run[k].pe,
                          (unsigned long long)run[k].dst, ops->name);
            *failed = run[k].first;
            return rc;
        }
    }
    px.stats.puts_merged += (uint64_t)(n - nrun);
    px.stats.copies += (uint64_t)nrun;
    return GSHMEMI_OK;
}

/* The proxy thread on the CPUs of the GPU's NUMA node (sysfs local_cpulist of its PCI device). */
static void place_thread(void)
{
    char bus[32], path[128], list[512];
    cpu_set_t set;
    FILE *f;
    int n = 0;

    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), px.device) != cudaSuccess) return;
    for (char *c = bus; *c; c++) *c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", bus);
    f = fopen(path, "r");
    if (!f) {
        GSHMEMI_INFO("proxy", "no %s: the proxy thread keeps the default CPU affinity", path);
        return;
    }
    if (!fgets(list, sizeof(list), f)) list[0] = '\0';
    fclose(f);
    CPU_ZERO(&set);
    for (char *tok = strtok(list, ",\n"); tok; tok = strtok(NULL, ",\n")) {
        int lo, hi;
        if (sscanf(tok, "%d-%d", &lo, &hi) == 2 || (sscanf(tok, "%d", &lo) == 1 && (hi = lo, 1)))
            for (int c = lo; c <= hi && c < CPU_SETSIZE; c++, n++) CPU_SET(c, &set);
    }
    if (n && pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
        GSHMEMI_INFO("proxy", "cannot place the proxy thread on the CPUs of GPU %s (%s)", bus, strerror(errno));
    else if (n) GSHMEMI_INFO("proxy", "proxy thread on the %d CPUs of GPU %s's NUMA node", n, bus);
}

/* stmt, and while the proxy counts (its statistics are on), one more in px.stats.count and the
 * nanoseconds it took in px.stats.ns. */
#define TIMED(count, ns, stmt)                                                                    \
    do {                                                                                          \
        const uint64_t timed_t0_ = px.counting ? gshmemi_fifo_now_ns() : 0;                       \
        stmt;                                                                                     \
        if (timed_t0_) {                                                                          \
            px.stats.count++;                                                                     \
            px.stats.ns += gshmemi_fifo_now_ns() - timed_t0_;                                     \
        }                                                                                         \
    } while (0)

/* Spins while there is work, then backs off: pause, yield, then short sleeps. */
static void *proxy_main(void *arg)
{
    uint64_t pos = 0, done = 0, owed = 0; /* owed: a waited-for request below this is not complete yet */
    uint64_t waiting_since = 0, reported = 0; /* GSHMEM_DEBUG=trace: since when (ns) requests wait for the backends */
    unsigned idle_rounds = 0, behind = 0;
    gshmemi_proxy_req_t r;

    (void)arg;
    if (cudaSetDevice(px.device) != cudaSuccess) {
        GSHMEMI_ERROR("proxy", "the proxy thread cannot use GPU %d", px.device);
        gshmemi_fifo_fail(&px.host, 0);
        gshmemi_hostq_stop(px.hostq, "it could not use the GPU");
        return NULL;
    }
    if (px.copy && gshmemi_proxy_backend_copy.attach(px.copy) != GSHMEMI_OK) {
        GSHMEMI_ERROR("proxy", "the proxy thread cannot enter the copy backend's CUDA context");
        gshmemi_fifo_fail(&px.host, 0);
        gshmemi_hostq_stop(px.hostq, "it could not enter the copy backend's CUDA context");
        return NULL;
    }
    place_thread();
    /* The idle back-off sleeps 20 us; Linux stretches a sleep by the thread's timer slack (50 us
     * by default), which a kernel's first request after an idle spell (a host barrier) then waits. */
    if (prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) != 0)
        GSHMEMI_INFO("proxy", "cannot shorten the proxy thread's timer slack (%s): idle wake-ups may take 50 us more", strerror(errno));
    while (!px.stop) {
        /* a host-initiated operation to a verbs peer: run to completion (posted and flushed)
         * between two device requests, whose bookkeeping it leaves as it was */
        if (px.hostq && gshmemi_hostq_serve(px.hostq, &gshmemi_proxy_backend_verbs, px.verbs)) idle_rounds = 0;
        if (gshmemi_fifo_take(&px.host, pos, &r)) {
            /* quiets queued back to back (one per CTA of a kernel, say) share one flush */
            gshmemi_proxy_req_t next;
            while (gshmemi_proxy_req_op(&r) == GSHMEMI_PROXY_QUIET && gshmemi_fifo_take(&px.host, pos + 1, &next) &&
                   gshmemi_proxy_req_op(&next) == GSHMEMI_PROXY_QUIET)
                pos++;
            int defer = 0;
            uint64_t taken = 1, failed = pos;
            const uint64_t t0 = px.counting ? gshmemi_fifo_now_ns() : 0;
            const int rc = gshmemi_env.PROXY_INJECT_ERROR == 0 && put_joinable(&r) ? handle_puts(&r, pos, &taken, &failed)
                                                                                  : handle(&r, pos, &defer);
            if (rc != GSHMEMI_OK) {
                gshmemi_fifo_fail(&px.host, failed);
                break;
            }
            if (t0) { /* a CUDA call of the backend that blocked */
                const uint64_t took = gshmemi_fifo_now_ns() - t0;
                px.stats.requests += taken;
                px.stats.post_ns += took;
                if (took > 50000000ull)
                    GSHMEMI_TRACE("proxy", "request %llu took %.1f ms in the backend", (unsigned long long)pos, 1e-6 * (double)took);
            }
            pos += taken;
            gshmemi_fifo_release(&px.host, pos);
            if (*px.host.done > done) done = *px.host.done;
            if (defer) owed = pos;
            /* A request a device thread waits for (blocking put or get, quiet) is completed once
             * the requests queued behind it are posted too, so that one flush serves them all
             * (the quiets of every CTA of a kernel, say), but never more than 64 requests later. */
            if (owed > done && (++behind >= 64 || !gshmemi_fifo_take(&px.host, pos, &r))) {
                int frc;
                TIMED(flushes, flush_ns, frc = flush_all());
                if (frc != GSHMEMI_OK) {
                    GSHMEMI_ERROR("proxy", "completing the requests before %llu failed", (unsigned long long)owed);
                    gshmemi_fifo_fail(&px.host, done);
                    break;
                }
                gshmemi_fifo_complete(&px.host, pos);
                GSHMEMI_TRACE("proxy", "requests before %llu complete (flushed)", (unsigned long long)pos);
                waiting_since = 0;
                done = pos;
                behind = 0;
            }
            idle_rounds = 0;
            continue;
        }
        if (done < pos) { /* nothing new: complete what the backends have finished */
            int idle = 0;
            if (gshmemi_log_level >= GSHMEMI_LOG_TRACE) { /* alive, and what it waits for */
                const uint64_t t = gshmemi_fifo_now_ns();
                if (waiting_since == 0) waiting_since = reported = t;
                else if (t - reported > 1000000000ull) {
                    reported = t;
                    GSHMEMI_TRACE("proxy", "requests %llu..%llu posted %.1f s ago are not complete yet", (unsigned long long)done,
                                  (unsigned long long)pos - 1, 1e-9 * (double)(t - waiting_since));
                }
            }
            int qrc;
            TIMED(polls, poll_ns, qrc = all_idle(&idle));
            if (qrc != GSHMEMI_OK) {
                GSHMEMI_ERROR("proxy", "a request before %llu failed in its backend", (unsigned long long)pos);
                gshmemi_fifo_fail(&px.host, done);
                break;
            }
            if (idle) {
                waiting_since = 0;
                gshmemi_fifo_complete(&px.host, pos);
                GSHMEMI_TRACE("proxy", "requests before %llu complete", (unsigned long long)pos);
                done = pos;
            }
        }
        if (++idle_rounds < 4096) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else if (idle_rounds < 65536) {
            sched_yield();
        } else {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    gshmemi_hostq_stop(px.hostq, px.stop ? "the runtime is finalizing" : "a device request failed (logged above)");
    return NULL;
}

/* ---- the transport's life cycle ---- */

static int proxy_finalize(gshmemi_transport_ctx_t *ctx);

static int alloc_fifo(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_fifo_t *dev)
{
    const uint32_t size = (uint32_t)gshmemi_env.PROXY_FIFO_SLOTS;
    const size_t bytes = gshmemi_fifo_host_bytes(size);

    GSHMEMI_CUDACHECK(cudaHostAlloc(&px.block, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    if (gshmemi_fifo_host_init(&px.host, size, px.block) != GSHMEMI_FIFO_OK) {
        GSHMEMI_ERROR("proxy", "cannot lay out a FIFO of %u slots", size);
        return GSHMEMI_ERR_INVALID;
    }
    GSHMEMI_CUDACHECK(cudaHostAlloc((void **)&px.scratch, 2 * sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable));
    GSHMEMI_CUDACHECK(cudaMalloc((void **)&px.dmem, 4 * 64));
    GSHMEMI_CUDACHECK(cudaMemset(px.dmem, 0, 4 * 64));
    GSHMEMI_CUDACHECK(cudaStreamCreateWithFlags(&px.quiet_stream, cudaStreamNonBlocking));
    /* the device's view: the pinned parts through their device addresses, tail, the caches and
     * the poll stamp in device memory (the producers' atomics and polls stay on the GPU) */
    *dev = px.host;
#define DEVPTR(field)                                                                                             \
    GSHMEMI_CUDACHECK(cudaHostGetDevicePointer((void **)&dev->field, (void *)px.host.field, 0))
    DEVPTR(slots);
    DEVPTR(ret);
    DEVPTR(head);
    DEVPTR(done);
    DEVPTR(error);
#undef DEVPTR
    dev->tail = px.dmem;
    dev->head_cache = px.dmem + 8;
    dev->done_cache = px.dmem + 16;
    dev->poll_stamp = px.dmem + 24;
    dev->timeout_ns = ctx->wait_timeout_ns;
    return GSHMEMI_OK;
}

static int proxy_init(gshmemi_transport_ctx_t *ctx, void *my_blob)
{
    int64_t *status = (int64_t *)my_blob;
    int need_copy = 0;

    memset(&px, 0, sizeof(px));
    px.ctx = ctx;
    px.device = ctx->device;
    for (int pe = 0; pe < ctx->n_pes; pe++) {
        if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY) need_copy = 1;
        if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY || ctx->route[pe] == GSHMEMI_ROUTE_PROXY_VERBS) px.serves = 1;
    }
    if (need_copy) GSHMEMI_CHECK(gshmemi_proxy_backend_copy.open(ctx, &px.copy, NULL));
    /* Verbs set-up is collective: every PE opens it when the job uses it, and a PE where it is
     * unavailable says so in its blob instead of failing here (the others would wait for its blob). */
    *status = VERBS_OFF;
    if (ctx->job_uses_verbs) {
        int rc;
        if (gshmemi_proxy_backend_verbs.blob_size > PROXY_BLOB_BYTES - sizeof(int64_t)) {
            GSHMEMI_ERROR("proxy", "the verbs backend's blob (%zu bytes) does not fit the proxy's (%d)",
                          gshmemi_proxy_backend_verbs.blob_size, PROXY_BLOB_BYTES);
            return GSHMEMI_ERR_INVALID;
        }
        rc = gshmemi_proxy_backend_verbs.open(ctx, &px.verbs, status + 1);
        px.verbs_state = rc == GSHMEMI_OK ? VERBS_OK : rc == GSHMEMI_ERR_UNSUPPORTED ? VERBS_UNAVAILABLE : VERBS_FAILED;
        if (rc != GSHMEMI_OK) px.verbs = NULL;
        *status = px.verbs_state;
    }
    return GSHMEMI_OK;
}

static int proxy_connect(gshmemi_transport_ctx_t *ctx, const void *blobs)
{
    const char *b = (const char *)blobs;
    int all_ok = ctx->job_uses_verbs, rc = GSHMEMI_OK;

    for (int pe = 0; pe < ctx->n_pes && all_ok; pe++)
        if (*(const int64_t *)(b + (size_t)pe * PROXY_BLOB_BYTES) != VERBS_OK) all_ok = 0;
    for (int pe = 0; pe < ctx->n_pes; pe++) {
        int64_t st = *(const int64_t *)(b + (size_t)pe * PROXY_BLOB_BYTES);
        if (ctx->route[pe] != GSHMEMI_ROUTE_PROXY_VERBS || all_ok) continue;
        if (px.verbs_state != VERBS_OK)
            GSHMEMI_ERROR("proxy", "PE %d is reached through the verbs backend, which is %s on this PE (GSHMEM_DEBUG=info says why)", pe,
                          px.verbs_state == VERBS_UNAVAILABLE ? "unavailable (no RDMA device or no libibverbs)" : "failed");
        else
            GSHMEMI_ERROR("proxy", "PE %d is reached through the verbs backend, which is %s on PE %d", pe,
                          st == VERBS_UNAVAILABLE ? "unavailable" : "failed", pe);
        rc = GSHMEMI_ERR_UNSUPPORTED;
    }
    if (all_ok) { /* every PE opened verbs: connect them (collective) */
        const size_t vb = gshmemi_proxy_backend_verbs.blob_size;
        char *vblobs = calloc((size_t)ctx->n_pes > 0 ? (size_t)ctx->n_pes : 1, vb ? vb : 1);
        int *serve = calloc((size_t)ctx->n_pes > 0 ? (size_t)ctx->n_pes : 1, sizeof(int));
        if (!vblobs || !serve) rc = GSHMEMI_ERR_NOMEM;
        for (int pe = 0; pe < ctx->n_pes && vblobs && serve; pe++) {
            memcpy(vblobs + (size_t)pe * vb, b + (size_t)pe * PROXY_BLOB_BYTES + sizeof(int64_t), vb);
            serve[pe] = ctx->route[pe] == GSHMEMI_ROUTE_PROXY_VERBS;
        }
        if (vblobs && serve) {
            int crc = gshmemi_proxy_backend_verbs.connect(px.verbs, vblobs, serve);
            if (rc == GSHMEMI_OK) rc = crc;
            px.verbs_connected = 1;
        }
        free(vblobs);
        free(serve);
    }
    if (px.copy && rc == GSHMEMI_OK) rc = gshmemi_proxy_backend_copy.connect(px.copy, NULL, NULL);
    if (rc != GSHMEMI_OK || !px.serves) return rc;
    GSHMEMI_CHECK(alloc_fifo(ctx, ctx->dev_proxy));
    if (px.verbs) GSHMEMI_CHECK(gshmemi_hostq_create(&px.hostq));
    px.counting = gshmemi_log_level >= GSHMEMI_LOG_INFO;
    int err = pthread_create(&px.thread, NULL, proxy_main, NULL);
    if (err != 0) {
        GSHMEMI_ERROR("proxy", "cannot start the proxy thread: %s", strerror(err)); /* pthread_create returns its error */
        return GSHMEMI_ERR_SYSTEM;
    }
    px.thread_started = 1;
    GSHMEMI_INFO("proxy", "proxy thread started: FIFO of %u requests%s%s", px.host.size, px.copy ? ", copy engine" : "",
                 px.verbs ? ", verbs" : "");
    return GSHMEMI_OK;
}

/* Waits until the proxy has completed every request this PE's device code posted so far: the
 * producers' ticket count (device memory, read on the proxy's own stream so that no running
 * kernel is waited for) against the completion count. Bounded by GSHMEM_PEER_TIMEOUT. */
static int proxy_quiet(gshmemi_transport_ctx_t *ctx)
{
    uint64_t posted = 0;

    if (!px.thread_started) return GSHMEMI_OK;
    cudaError_t err = cudaMemcpyAsync(&posted, px.dmem, sizeof(posted), cudaMemcpyDeviceToHost, px.quiet_stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(px.quiet_stream);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR("proxy", "reading the proxy's request count: %s", cudaGetErrorString(err));
        return GSHMEMI_ERR_CUDA;
    }
    const double deadline = gshmemi_now_s() + ctx->peer_timeout;
    while (*px.host.done < posted) {
        if (*px.host.error) {
            GSHMEMI_ERROR("proxy", "quiet: the proxy failed request %llu (logged above)", (unsigned long long)(*px.host.error - 1));
            return GSHMEMI_ERR_REMOTE;
        }
        if (gshmemi_now_s() > deadline) {
            GSHMEMI_ERROR("proxy", "quiet: %llu of %llu requests complete after GSHMEM_PEER_TIMEOUT=%g s",
                          (unsigned long long)*px.host.done, (unsigned long long)posted, ctx->peer_timeout);
            return GSHMEMI_ERR_TIMEOUT;
        }
        sched_yield();
    }
    return GSHMEMI_OK;
}

static int proxy_register_chunk(gshmemi_transport_ctx_t *ctx, const gshmemi_heap_chunk_t *chunk)
{
    (void)ctx;
    /* collective: only where every PE opened verbs (the same answer on every PE) */
    if (px.verbs_connected) return gshmemi_proxy_backend_verbs.register_chunk(px.verbs, chunk);
    return GSHMEMI_OK;
}

static int proxy_finalize(gshmemi_transport_ctx_t *ctx)
{
    (void)ctx;
    if (px.thread_started) {
        px.stop = 1;
        pthread_join(px.thread, NULL);
        if (px.counting) {
            const double us = 1e-3;
            GSHMEMI_INFO("proxy", "proxy thread: %llu requests (%llu non-blocking puts joined into others, %llu joined copies), %.1f us a request posting; %llu flushes, %.1f us each; %llu idle polls, %.2f us each",
                         (unsigned long long)px.stats.requests, (unsigned long long)px.stats.puts_merged, (unsigned long long)px.stats.copies,
                         px.stats.requests ? us * (double)px.stats.post_ns / (double)px.stats.requests : 0.0,
                         (unsigned long long)px.stats.flushes, px.stats.flushes ? us * (double)px.stats.flush_ns / (double)px.stats.flushes : 0.0,
                         (unsigned long long)px.stats.polls, px.stats.polls ? us * (double)px.stats.poll_ns / (double)px.stats.polls : 0.0);
        }
    }
    gshmemi_hostq_stop(px.hostq, "the runtime is finalizing");
    gshmemi_hostq_destroy(px.hostq);
    if (px.copy) gshmemi_proxy_backend_copy.close(px.copy);
    if (px.verbs) gshmemi_proxy_backend_verbs.close(px.verbs);
    if (px.quiet_stream) cudaStreamDestroy(px.quiet_stream);
    if (px.dmem) cudaFree(px.dmem);
    if (px.block) cudaFreeHost(px.block);
    if (px.scratch) cudaFreeHost(px.scratch);
    if (ctx && ctx->dev_proxy) memset(ctx->dev_proxy, 0, sizeof(*ctx->dev_proxy));
    memset(&px, 0, sizeof(px));
    return GSHMEMI_OK;
}

/* ---- host-initiated operations. A PE of this machine (the copy backend's): through the heap
 * mapping on the caller's stream, as P2P does. A PE behind verbs: a request the proxy thread runs
 * (hostreq.h), complete when the call returns.
 *
 * The stream forms to a verbs peer synchronize their stream first, then run the operation: it
 * comes after the work queued before it, and work queued after it is queued once the call has
 * returned, so after it. A host function on the stream (cudaLaunchHostFunc) would keep the call
 * asynchronous, but it may make no CUDA call, its failure could reach no caller, and it would
 * hold the stream for the network round trip anyway. Such a call cannot be captured into a CUDA
 * graph: on a capturing stream it is refused, saying so. The blocking forms pass the runtime's
 * internal stream and take the same path. ---- */

static int verbs_ready(gshmemi_transport_ctx_t *ctx, const char *what, int pe, cudaStream_t stream)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t err;

    if (ctx->route[pe] != GSHMEMI_ROUTE_PROXY_VERBS || !px.hostq) {
        GSHMEMI_ERROR("proxy", "host-initiated %s to PE %d: the proxy reaches PE %d by neither the copy engine nor a connected verbs backend",
                      what, pe, pe);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    err = cudaStreamIsCapturing(stream, &cs);
    if (err == cudaSuccess && cs != cudaStreamCaptureStatusNone) {
        GSHMEMI_ERROR("proxy", "host-initiated %s to PE %d: its stream is being captured into a graph, and an operation to a PE behind the verbs backend runs on the host, outside the stream",
                      what, pe);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR("proxy", "host-initiated %s to PE %d: waiting for the work queued before it on its stream failed: %s", what, pe,
                      cudaGetErrorString(err));
        return GSHMEMI_ERR_CUDA;
    }
    return GSHMEMI_OK;
}

static int proxy_put(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream)
{
    if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY) return gshmemi_mapped_put(ctx, dest, src, n, pe, stream);
    GSHMEMI_CHECK(verbs_ready(ctx, "put", pe, stream));
    return gshmemi_hostreq_rma(px.hostq, ctx, "put", 1, dest, n, src, n, n, 1, pe);
}
static int proxy_get(gshmemi_transport_ctx_t *ctx, void *dest, const void *src, size_t n, int pe, cudaStream_t stream)
{
    if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY) return gshmemi_mapped_get(ctx, dest, src, n, pe, stream);
    GSHMEMI_CHECK(verbs_ready(ctx, "get", pe, stream));
    return gshmemi_hostreq_rma(px.hostq, ctx, "get", 0, dest, n, src, n, n, 1, pe);
}
static int proxy_iput(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t es,
                      size_t nelems, int pe, cudaStream_t stream)
{
    if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY) return gshmemi_mapped_iput(ctx, dest, dpitch, src, spitch, es, nelems, pe, stream);
    GSHMEMI_CHECK(verbs_ready(ctx, "iput", pe, stream));
    return gshmemi_hostreq_rma(px.hostq, ctx, "iput", 1, dest, dpitch, src, spitch, es, nelems, pe);
}
static int proxy_iget(gshmemi_transport_ctx_t *ctx, void *dest, size_t dpitch, const void *src, size_t spitch, size_t es,
                      size_t nelems, int pe, cudaStream_t stream)
{
    if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY) return gshmemi_mapped_iget(ctx, dest, dpitch, src, spitch, es, nelems, pe, stream);
    GSHMEMI_CHECK(verbs_ready(ctx, "iget", pe, stream));
    return gshmemi_hostreq_rma(px.hostq, ctx, "iget", 0, dest, dpitch, src, spitch, es, nelems, pe);
}
/* To a verbs peer every atomic completes before it returns, the signal of a put-with-signal
 * (fetched NULL) too: the put before it has completed by then, so the signal lands after it. */
static int proxy_amo(gshmemi_transport_ctx_t *ctx, int op, void *dest, uint64_t value, uint64_t cond, size_t width, int pe,
                     cudaStream_t stream, uint64_t *fetched)
{
    if (ctx->route[pe] == GSHMEMI_ROUTE_PROXY_COPY)
        return gshmemi_mapped_amo(ctx, op, dest, value, cond, width, pe, stream, fetched);
    GSHMEMI_CHECK(verbs_ready(ctx, "atomic", pe, stream));
    return gshmemi_hostreq_amo(px.hostq, ctx, op, dest, value, cond, width, pe, fetched);
}

const gshmemi_transport_t gshmemi_transport_proxy = {
    GSHMEMI_TRANSPORT_LIFE_CYCLE(proxy),
    .blob_size = PROXY_BLOB_BYTES,
    .quiet = proxy_quiet,
    .progress = NULL, /* the proxy thread makes progress */
    GSHMEMI_TRANSPORT_HOST_OPS(proxy),
    .wait_local = gshmemi_mapped_wait_local, /* a wait on local memory is the same whoever writes it */
};
