/* The preemptive collective engine, host side (gshmem/engine.h, docs/engine.md): creation (the
 * flags pool, pinned queue and words, device contexts), registration, submission, completion,
 * and the poller thread that runs callbacks and relaunches the daemon (engine.cu) while requests
 * are pending. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gshmem.h"
#include "../runtime/base/clock.h"
#include "../runtime/base/cudawrap.h"
#include "../runtime/base/log.h"
#include "engine_launch.h"
#include "engine_queue.h"
#include "launch.h"

#define SEQ_BITS 48
#define SEQ_MASK ((1ull << SEQ_BITS) - 1)
#define MAX_TEAM_HANDLES 64 /* GSHMEM_MAX_TEAMS at most */
#define RELAUNCH_PAUSE_NS 1000000ull

typedef struct {
    shmemx_engine_callback_t cb;
    void *arg;
} engine_cb_t;

struct shmemx_engine {
    gshmemi_engine_sq_t sq;
    gshmemi_engine_host_t *host;     /* pinned */
    gshmemi_engine_sqe_t *ring;      /* pinned */
    gshmemi_engine_dev_t dev;        /* the daemon's argument */
    gshmemi_engine_coll_t colls[GSHMEMI_ENGINE_MAX_COLLS];
    size_t max_count[GSHMEMI_ENGINE_MAX_COLLS];
    int team_regs[MAX_TEAM_HANDLES]; /* registrations per team handle */
    char *pool;                      /* symmetric flags: [team][GSHMEMI_ENGINE_PER_TEAM][slot_bytes] */
    int teams;                       /* team handles the pool has rows for */
    size_t slot_bytes, flags_bytes; /* a collective's area, and its flags' part (the LL rows follow) */
    int threads, device;
    CUcontext ctx; /* the creating thread's, made current in the poller */
    uint64_t timeout_ns;
    cudaStream_t stream;      /* the daemon's */
    cudaStream_t copy_stream; /* copies that must not queue behind the daemon */
    cudaEvent_t ended;
    pthread_t poller;
    pthread_mutex_t lock; /* submission with its callback, the poller's state */
    pthread_cond_t wake;
    int quit, running, poller_started;
    volatile int error; /* the daemon failed: every wait reports it */
    uint64_t cb_seen[GSHMEMI_ENGINE_MAX_COLLS];
    uint64_t stalled_since[GSHMEMI_ENGINE_MAX_COLLS]; /* when its oldest pending request last moved (0: none pending) */
    uint64_t stalled_done[GSHMEMI_ENGINE_MAX_COLLS];  /* done count then */
    int stall_reported[GSHMEMI_ENGINE_MAX_COLLS];
    engine_cb_t cbs[GSHMEMI_ENGINE_MAX_COLLS][GSHMEMI_ENGINE_TASKS];
    uint64_t launches, exits;
    uint64_t launched_next; /* queue entries published when the daemon was last launched */
    uint64_t exit_ns;       /* when the daemon was last seen ended */
    /* stream waits (gshmemi_engine_host_t's hold): the generation last published, and the
     * requests held (per collective, the highest); holding: the active bit is set */
    uint64_t hold_gen;
    uint64_t hold_seq[GSHMEMI_ENGINE_MAX_COLLS];
    int holding;
};

static int require_init(const char *routine)
{
    return gshmemi_coll_require_init(routine) ? GSHMEMI_OK : GSHMEMI_ERR_STATE;
}

/* ---- the poller ---- */
/* Under e->lock: callbacks of newly complete requests (run unlocked), the daemon's end, its
 * relaunch when requests are pending. Returns 1 when work is pending. */
static int poll_once(shmemx_engine_t *e)
{
    for (int id = 0; id < e->sq.ncolls; id++) {
        uint64_t done = __atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE);
        while (e->cb_seen[id] < done) {
            uint64_t seq = ++e->cb_seen[id];
            engine_cb_t c = e->cbs[id][seq % GSHMEMI_ENGINE_TASKS];
            e->cbs[id][seq % GSHMEMI_ENGINE_TASKS].cb = NULL;
            if (c.cb) {
                pthread_mutex_unlock(&e->lock);
                c.cb(c.arg, ((uint64_t)(id + 1) << SEQ_BITS) | seq);
                pthread_mutex_lock(&e->lock);
            }
        }
    }
    /* a collective pending, without progress, longer than the device wait timeout: say so once
     * (a member has not submitted it, or has stopped); the engine keeps trying */
    const uint64_t now = gshmemi_now_ns();
    for (int id = 0; id < e->sq.ncolls; id++) {
        uint64_t done = __atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE);
        if (done >= e->sq.seq[id]) {
            e->stalled_since[id] = 0, e->stall_reported[id] = 0;
        } else if (!e->stalled_since[id] || done != e->stalled_done[id]) {
            e->stalled_since[id] = now, e->stalled_done[id] = done, e->stall_reported[id] = 0;
        } else if (!e->stall_reported[id] && now - e->stalled_since[id] > e->timeout_ns) {
            const gshmemi_engine_coll_t *c = &e->colls[id];
            GSHMEMI_WARN("engine", "collective %d (kind %d, team of %d from PE %d, stride %d): request %llu pending for %.0f s "
                         "without progress; a member has not submitted it, or has stopped",
                         id, c->kind, c->size, c->start, c->stride, (unsigned long long)done + 1, (now - e->stalled_since[id]) / 1e9);
            e->stall_reported[id] = 1;
        }
    }
    /* every request a stream wait held is complete: the daemon may leave again */
    if (e->holding) {
        int held = 0;
        for (int id = 0; id < e->sq.ncolls && !held; id++) held = __atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE) < e->hold_seq[id];
        if (!held) {
            __atomic_store_n(&e->host->hold, e->hold_gen << 1, __ATOMIC_RELEASE);
            e->holding = 0;
        }
    }
    if (e->running) {
        cudaError_t q = cudaEventQuery(e->ended);
        if (q == cudaSuccess) {
            e->running = 0;
            e->exits++;
            e->exit_ns = gshmemi_now_ns();
        } else if (q != cudaErrorNotReady && !e->error) {
            GSHMEMI_ERROR("engine", "the daemon kernel failed: %s; every pending request of this engine fails", cudaGetErrorString(q));
            e->error = 1;
        }
    }
    const int pending = gshmemi_engine_sq_outstanding(&e->sq) > 0;
    /* A daemon that left with nothing new queued since its launch left stuck: it comes back after
     * a pause, which lets a cudaDeviceSynchronize of this process that waited for it return. */
    const int fresh = e->sq.next != e->launched_next || gshmemi_now_ns() - e->exit_ns >= RELAUNCH_PAUSE_NS;
    if (pending && !e->running && !e->error && fresh) {
        e->launched_next = e->sq.next;
        cudaError_t z = cudaMemsetAsync(e->dev.left, 0, sizeof(uint32_t), e->stream);
        if (z != cudaSuccess) GSHMEMI_ERROR("engine", "cudaMemsetAsync of the daemon's exit count failed: %s", cudaGetErrorString(z));
        if (z != cudaSuccess || gshmemi_engine_launch(&e->dev, e->threads, e->stream) != GSHMEMI_OK ||
            cudaEventRecord(e->ended, e->stream) != cudaSuccess) {
            GSHMEMI_ERROR("engine", "relaunching the daemon failed; every pending request of this engine fails");
            e->error = 1;
        } else {
            e->running = 1;
            e->launches++;
        }
    }
    return pending || e->running;
}

static void *poller_main(void *arg)
{
    shmemx_engine_t *e = arg;
    /* the creating thread's context (the runtime's, which need not be the device's primary one) */
    CUresult cr = e->ctx ? gshmemi_cu.cuCtxSetCurrent(e->ctx) : CUDA_SUCCESS;
    if (cr != CUDA_SUCCESS || (!e->ctx && cudaSetDevice(e->device) != cudaSuccess)) {
        GSHMEMI_ERROR("engine", "the poller thread cannot make the context of device %d current (%s); the engine runs nothing", e->device,
                      cr != CUDA_SUCCESS ? gshmemi_cu_errstr(cr) : "cudaSetDevice failed");
        e->error = 1;
        return NULL;
    }
    pthread_mutex_lock(&e->lock);
    while (!e->quit) {
        if (poll_once(e)) {
            pthread_mutex_unlock(&e->lock);
            struct timespec nap = {0, 20000};
            nanosleep(&nap, NULL);
            pthread_mutex_lock(&e->lock);
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 20 * 1000000;
            if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&e->wake, &e->lock, &until);
        }
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* ---- creation ---- */
/* Frees what create made; a failing release is logged (the engine is gone either way). */
#define RELEASE_CUDA(call)                                                                        \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) GSHMEMI_ERROR("engine", "%s failed: %s", #call, cudaGetErrorString(err_)); \
    } while (0)
static void release(shmemx_engine_t *e)
{
    if (e->stream) RELEASE_CUDA(cudaStreamDestroy(e->stream));
    if (e->copy_stream) RELEASE_CUDA(cudaStreamDestroy(e->copy_stream));
    if (e->ended) RELEASE_CUDA(cudaEventDestroy(e->ended));
    if (e->host) RELEASE_CUDA(cudaFreeHost(e->host));
    if (e->dev.colls) RELEASE_CUDA(cudaFree((void *)e->dev.colls));
    if (e->dev.ctx) RELEASE_CUDA(cudaFree(e->dev.ctx));
    if (e->dev.cta) RELEASE_CUDA(cudaFree(e->dev.cta));
    if (e->dev.finished) RELEASE_CUDA(cudaFree(e->dev.finished));
    if (e->dev.left) RELEASE_CUDA(cudaFree(e->dev.left));
    if (e->dev.dsq) RELEASE_CUDA(cudaFree(e->dev.dsq));
    if (e->dev.mirror) RELEASE_CUDA(cudaFree(e->dev.mirror));
    free(e);
}

#define ENGINE_CUDA(call)                                                                         \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            GSHMEMI_ERROR("engine", "%s failed: %s", #call, cudaGetErrorString(err_));            \
            rc = GSHMEMI_ERR_CUDA;                                                                \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

/* The daemon's CTAs, the same on every PE (the pool's layout depends on them), agreed over the
 * world: attr->ctas where every PE passes the same; where every PE passes 0, ENGINE_DEFAULT_CTAS,
 * fewer where this PE's share of its GPU (what an on-stream collective may take, launch.h) or what
 * fits at once (`fit`) is less, the least over the PEs. Measured on 2 H200s, allreduce at 2 PEs:
 * 8 to 32 CTAs take the same time below 8 MiB; at 8 and 128 MiB 8 CTAs are 1.9x and 2.8x slower
 * than the on-stream collective, 32 within 10 % (docs/engine.md). Collective. */
#define ENGINE_DEFAULT_CTAS 32
static int agree_ctas(const char *routine, int requested, int fit, int *ctas)
{
    int want = requested, most = gshmemi_coll_most_ctas(), *sym, rc = GSHMEMI_OK;
    if (!requested) {
        want = ENGINE_DEFAULT_CTAS;
        if (want > fit) want = fit;
        if (want > most) want = most;
        if (want < 1) want = 1;
    }
    /* maxima over the PEs of -want, want, "passed 0", "passed a number" */
    int mine[4] = {-want, want, !requested, !!requested}, all[4] = {0, 0, 0, 0};
    if (!(sym = gshmemi_coll_rt->sym_alloc(sizeof(mine) + sizeof(all)))) {
        GSHMEMI_ERROR("engine", "%s: 32 bytes of symmetric heap to agree on the CTAs could not be allocated", routine);
        return GSHMEMI_ERR_NOMEM;
    }
    /* a copy from pageable memory may return before it lands: the device synchronize */
    if (cudaMemcpy(sym, mine, sizeof(mine), cudaMemcpyHostToDevice) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
        shmem_int_max_reduce(SHMEM_TEAM_WORLD, sym + 4, sym, 4) != 0 ||
        cudaMemcpy(all, sym + 4, sizeof(all), cudaMemcpyDeviceToHost) != cudaSuccess) {
        GSHMEMI_ERROR("engine", "%s: agreeing on the daemon's CTAs over the PEs failed (logged above, or a CUDA copy)", routine);
        rc = GSHMEMI_ERR_CUDA;
    } else if (all[2] && all[3]) {
        GSHMEMI_ERROR("engine", "%s: attr->ctas is 0 (the default) on some PEs and a number on others; every PE must pass the same", routine);
        rc = GSHMEMI_ERR_INVALID;
    } else if (requested && -all[0] != all[1]) {
        GSHMEMI_ERROR("engine", "%s: attr->ctas is %d here but ranges over %d..%d on the PEs; every PE must pass the same", routine,
                      requested, -all[0], all[1]);
        rc = GSHMEMI_ERR_INVALID;
    }
    gshmemi_coll_rt->sym_free(sym);
    *ctas = -all[0];
    return rc;
}

int shmemx_engine_create(const shmemx_engine_attr_t *attr, shmemx_engine_t **engine)
{
    static const char *routine = "shmemx_engine_create";
    shmemx_engine_attr_t a = {0};
    int rc, per_sm = 0, sms = 0;

    if ((rc = require_init(routine)) != GSHMEMI_OK) return rc;
    if (!engine) {
        GSHMEMI_ERROR("engine", "%s: engine is NULL", routine);
        return GSHMEMI_ERR_INVALID;
    }
    *engine = NULL;
    if (attr) a = *attr;
    const int requested_ctas = a.ctas;
    if (!a.ctas) a.ctas = ENGINE_DEFAULT_CTAS; /* fitted and agreed below */
    if (!a.threads) a.threads = 512;
    if (a.idle_exit_s <= 0) a.idle_exit_s = 0.002;
    if (a.stuck_exit_s <= 0) a.stuck_exit_s = 0.002;
    if (!a.spin_base) a.spin_base = 1024;
    if (!a.queue_slots) a.queue_slots = 64;
    if (a.ctas < 1 || a.ctas > GSHMEMI_ENGINE_MAX_CTAS) {
        GSHMEMI_ERROR("engine", "%s: attr->ctas %d is outside 1..%d", routine, a.ctas, GSHMEMI_ENGINE_MAX_CTAS);
        return GSHMEMI_ERR_INVALID;
    }
    if (a.threads < 32 || a.threads > GSHMEMI_ENGINE_MAX_THREADS || a.threads % 32) {
        GSHMEMI_ERROR("engine", "%s: attr->threads %d is not a multiple of 32 in 32..%d", routine, a.threads, GSHMEMI_ENGINE_MAX_THREADS);
        return GSHMEMI_ERR_INVALID;
    }
    if (a.idle_exit_s > 1e6 || a.stuck_exit_s > 1e6) {
        GSHMEMI_ERROR("engine", "%s: attr->idle_exit_s %g / stuck_exit_s %g exceed 1e6 s", routine, a.idle_exit_s, a.stuck_exit_s);
        return GSHMEMI_ERR_INVALID;
    }
    if (a.spin_base > GSHMEMI_ENGINE_SPIN_MAX) {
        GSHMEMI_ERROR("engine", "%s: attr->spin_base %u exceeds %u", routine, a.spin_base, GSHMEMI_ENGINE_SPIN_MAX);
        return GSHMEMI_ERR_INVALID;
    }
    if (a.queue_slots < 2 || a.queue_slots > 65536 || (a.queue_slots & (a.queue_slots - 1))) {
        GSHMEMI_ERROR("engine", "%s: attr->queue_slots %u is not a power of two in 2..65536", routine, a.queue_slots);
        return GSHMEMI_ERR_INVALID;
    }

    const gshmemi_device_state_t *ds = gshmemi_coll_rt->dstate();
    shmemx_engine_t *e = calloc(1, sizeof(*e));
    if (!e) {
        GSHMEMI_ERROR("engine", "%s: out of host memory", routine);
        return GSHMEMI_ERR_NOMEM;
    }
    e->threads = a.threads;
    e->timeout_ns = ds->wait_timeout_ns ? ds->wait_timeout_ns : 120000000000ull;
    ENGINE_CUDA(cudaGetDevice(&e->device));
    {
        CUresult cr = gshmemi_cu.cuCtxGetCurrent(&e->ctx);
        if (cr != CUDA_SUCCESS) {
            GSHMEMI_ERROR("engine", "%s: cuCtxGetCurrent failed: %s", routine, gshmemi_cu_errstr(cr));
            rc = GSHMEMI_ERR_CUDA;
            goto fail;
        }
    }
    /* every CTA resident: the daemon spins, and a CTA waiting for a slot would wait for that */
    {
        if ((rc = gshmemi_engine_fit(a.threads, &per_sm)) != GSHMEMI_OK) goto fail;
        ENGINE_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, e->device));
        if ((rc = agree_ctas(routine, requested_ctas, per_sm * sms, &a.ctas)) != GSHMEMI_OK) goto fail;
        if (per_sm * sms < a.ctas) {
            GSHMEMI_ERROR("engine", "%s: attr->ctas %d of %d threads do not fit on the GPU at once (%d a SM, %d SMs)", routine,
                          a.ctas, a.threads, per_sm, sms);
            rc = GSHMEMI_ERR_INVALID;
            goto fail;
        }
    }
    ENGINE_CUDA(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    ENGINE_CUDA(cudaStreamCreateWithFlags(&e->copy_stream, cudaStreamNonBlocking));
    ENGINE_CUDA(cudaEventCreateWithFlags(&e->ended, cudaEventDisableTiming));
    /* the host words and the ring, one pinned, mapped block */
    {
        size_t words = (sizeof(gshmemi_engine_host_t) + 127) / 128 * 128;
        void *p;
        ENGINE_CUDA(cudaHostAlloc(&p, words + (size_t)a.queue_slots * sizeof(gshmemi_engine_sqe_t), cudaHostAllocMapped | cudaHostAllocPortable));
        memset(p, 0, words + (size_t)a.queue_slots * sizeof(gshmemi_engine_sqe_t));
        e->host = p;
        e->ring = (gshmemi_engine_sqe_t *)((char *)p + words);
        ENGINE_CUDA(cudaHostGetDevicePointer((void **)&e->dev.host, e->host, 0));
        ENGINE_CUDA(cudaHostGetDevicePointer((void **)&e->dev.sq, e->ring, 0));
    }
    if ((rc = gshmemi_engine_sq_init(&e->sq, e->ring, a.queue_slots, e->host, a.ctas, GSHMEMI_ENGINE_TASKS)) != GSHMEMI_OK) goto fail;
    {
        gshmemi_engine_coll_t *colls;
        ENGINE_CUDA(cudaMalloc((void **)&colls, sizeof(gshmemi_engine_coll_t) * GSHMEMI_ENGINE_MAX_COLLS));
        e->dev.colls = colls;
        ENGINE_CUDA(cudaMalloc((void **)&e->dev.ctx, sizeof(gshmemi_engine_ctx_t) * GSHMEMI_ENGINE_MAX_COLLS * a.ctas));
        ENGINE_CUDA(cudaMalloc((void **)&e->dev.cta, sizeof(gshmemi_engine_cta_t) * a.ctas));
        ENGINE_CUDA(cudaMalloc((void **)&e->dev.finished, sizeof(uint32_t) * GSHMEMI_ENGINE_MAX_COLLS * GSHMEMI_ENGINE_TASKS));
        ENGINE_CUDA(cudaMemsetAsync(colls, 0, sizeof(gshmemi_engine_coll_t) * GSHMEMI_ENGINE_MAX_COLLS, e->stream));
        ENGINE_CUDA(cudaMemsetAsync(e->dev.ctx, 0, sizeof(gshmemi_engine_ctx_t) * GSHMEMI_ENGINE_MAX_COLLS * a.ctas, e->stream));
        ENGINE_CUDA(cudaMemsetAsync(e->dev.cta, 0, sizeof(gshmemi_engine_cta_t) * a.ctas, e->stream));
        ENGINE_CUDA(cudaMemsetAsync(e->dev.finished, 0, sizeof(uint32_t) * GSHMEMI_ENGINE_MAX_COLLS * GSHMEMI_ENGINE_TASKS, e->stream));
        ENGINE_CUDA(cudaMalloc((void **)&e->dev.left, sizeof(uint32_t)));
        ENGINE_CUDA(cudaMalloc((void **)&e->dev.dsq, sizeof(gshmemi_engine_sqe_t) * a.queue_slots));
        ENGINE_CUDA(cudaMalloc((void **)&e->dev.mirror, 4 * sizeof(uint64_t)));
        ENGINE_CUDA(cudaMemsetAsync(e->dev.mirror, 0, 4 * sizeof(uint64_t), e->stream));
    }
    e->dev.sq_slots = a.queue_slots;
    e->dev.ctas = a.ctas;
    e->dev.idle_ns = (uint64_t)(a.idle_exit_s * 1e9);
    e->dev.stuck_ns = (uint64_t)(a.stuck_exit_s * 1e9);
    e->dev.spin_base = a.spin_base;

    /* the flags of every (team handle, registration) the engine may hold, zeroed on every PE
     * before any PE can signal into them (the barrier after) */
    {
        e->teams = ds->max_teams < MAX_TEAM_HANDLES ? ds->max_teams : MAX_TEAM_HANDLES;
        e->slot_bytes = gshmemi_engine_slot_bytes(a.ctas, ds->n_pes);
        e->flags_bytes = gshmemi_engine_flags_bytes(a.ctas, ds->n_pes);
        size_t bytes = (size_t)e->teams * GSHMEMI_ENGINE_PER_TEAM * e->slot_bytes;
        e->pool = gshmemi_coll_rt->sym_alloc(bytes);
        if (!e->pool) {
            GSHMEMI_ERROR("engine", "%s: the flags pool (%zu bytes of symmetric heap) could not be allocated", routine, bytes);
            rc = GSHMEMI_ERR_NOMEM;
            goto fail;
        }
        ENGINE_CUDA(cudaMemsetAsync(e->pool, 0, bytes, e->stream));
        ENGINE_CUDA(cudaStreamSynchronize(e->stream));
        if (gshmemi_host_barrier(SHMEM_TEAM_WORLD, routine) != 0) {
            rc = GSHMEMI_ERR_CUDA;
            goto fail;
        }
    }
    if (pthread_mutex_init(&e->lock, NULL) || pthread_cond_init(&e->wake, NULL)) {
        GSHMEMI_ERROR("engine", "%s: pthread_mutex_init/pthread_cond_init failed", routine);
        rc = GSHMEMI_ERR_SYSTEM;
        goto fail;
    }
    if ((errno = pthread_create(&e->poller, NULL, poller_main, e)) != 0) {
        GSHMEMI_ERROR("engine", "%s: pthread_create of the poller failed: %s", routine, strerror(errno));
        rc = GSHMEMI_ERR_SYSTEM;
        goto fail;
    }
    e->poller_started = 1;
    GSHMEMI_INFO("engine", "engine: %d CTAs x %d threads (%d fit a SM), queue %u, idle exit %g s, stuck exit %g s", a.ctas, a.threads,
                 per_sm, a.queue_slots, a.idle_exit_s, a.stuck_exit_s);
    *engine = e;
    return GSHMEMI_OK;
fail:
    if (e->pool) gshmemi_coll_rt->sym_free(e->pool);
    release(e);
    return rc;
}

/* ---- registration ---- */
static int reduce_type_ok(int dtype)
{
    return dtype == GSHMEMI_DT_FLOAT || dtype == GSHMEMI_DT_DOUBLE || dtype == GSHMEMI_DT_INT32 || dtype == GSHMEMI_DT_INT64 ||
           dtype == GSHMEMI_DT_BFLOAT16;
}

static size_t dtype_size(int dtype)
{
    static const size_t sz[GSHMEMI_DT_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2};
    return sz[dtype];
}

int shmemx_engine_register(shmemx_engine_t *e, const shmemx_engine_coll_t *d, int *id)
{
    static const char *routine = "shmemx_engine_register";
    int rc;
    if ((rc = require_init(routine)) != GSHMEMI_OK) return rc;
    if (!e || !d || !id) {
        GSHMEMI_ERROR("engine", "%s: engine, desc and id must not be NULL", routine);
        return GSHMEMI_ERR_INVALID;
    }
    if (d->kind < 0 || d->kind >= GSHMEMI_ENGINE_KINDS) {
        GSHMEMI_ERROR("engine", "%s: desc->kind %d is not a SHMEMX_ENGINE_* kind", routine, d->kind);
        return GSHMEMI_ERR_INVALID;
    }
    if (d->kind != GSHMEMI_ENGINE_BARRIER && (d->dtype < 0 || d->dtype >= GSHMEMI_DT_COUNT)) {
        GSHMEMI_ERROR("engine", "%s: desc->dtype %d is not an element type", routine, d->dtype);
        return GSHMEMI_ERR_INVALID;
    }
    if (d->kind == GSHMEMI_ENGINE_ALLREDUCE && !reduce_type_ok(d->dtype)) {
        GSHMEMI_ERROR("engine", "%s: desc->dtype %d: allreduce takes float, double, int32, int64 or bfloat16", routine, d->dtype);
        return GSHMEMI_ERR_INVALID;
    }
    if (d->kind == GSHMEMI_ENGINE_ALLREDUCE && d->op != GSHMEMI_OP_SUM && d->op != GSHMEMI_OP_PROD && d->op != GSHMEMI_OP_MIN &&
        d->op != GSHMEMI_OP_MAX) {
        GSHMEMI_ERROR("engine", "%s: desc->op %d: allreduce takes SHMEMX_ENGINE_SUM, PROD, MIN or MAX", routine, d->op);
        return GSHMEMI_ERR_INVALID;
    }
    if (d->priority < 0 || d->priority > GSHMEMI_ENGINE_PRIORITY_MAX) {
        GSHMEMI_ERROR("engine", "%s: desc->priority %d is outside 0..%d", routine, d->priority, GSHMEMI_ENGINE_PRIORITY_MAX);
        return GSHMEMI_ERR_INVALID;
    }
    const gshmemi_team_dev_t *t = gshmemi_coll_rt->team_member(d->team, routine);
    if (!t) return GSHMEMI_ERR_INVALID;
    if (t->has_remote) {
        GSHMEMI_ERROR("engine", "%s: desc->team %d has members not reachable by load/store (the engine moves data over P2P only)",
                      routine, d->team);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    if (d->team < 0 || d->team >= e->teams) {
        GSHMEMI_ERROR("engine", "%s: desc->team %d is outside the engine's team handles", routine, d->team);
        return GSHMEMI_ERR_INVALID;
    }
    pthread_mutex_lock(&e->lock);
    if (e->team_regs[d->team] >= GSHMEMI_ENGINE_PER_TEAM) {
        pthread_mutex_unlock(&e->lock);
        GSHMEMI_ERROR("engine", "%s: team %d already has %d collectives registered (the most an engine holds for one team)", routine,
                      d->team, GSHMEMI_ENGINE_PER_TEAM);
        return GSHMEMI_ERR_INVALID;
    }
    int n = gshmemi_engine_sq_add_coll(&e->sq);
    if (n < 0) {
        pthread_mutex_unlock(&e->lock);
        GSHMEMI_ERROR("engine", "%s: the engine already holds %d collectives", routine, GSHMEMI_ENGINE_MAX_COLLS);
        return GSHMEMI_ERR_INVALID;
    }
    int k = e->team_regs[d->team]++;
    gshmemi_engine_coll_t *c = &e->colls[n];
    c->kind = d->kind, c->dtype = d->kind == GSHMEMI_ENGINE_BARRIER ? GSHMEMI_DT_UINT8 : d->dtype;
    c->op = d->op, c->priority = d->priority;
    c->size = t->size, c->my_idx = t->my_idx, c->start = t->start, c->stride = t->stride;
    c->es = dtype_size(c->dtype);
    c->flags = (uint64_t *)(e->pool + ((size_t)d->team * GSHMEMI_ENGINE_PER_TEAM + (size_t)k) * e->slot_bytes);
    c->ll = (uint64_t *)((char *)c->flags + e->flags_bytes);
    e->max_count[n] = d->max_count;
    pthread_mutex_unlock(&e->lock);
    /* the daemon reads it only for requests submitted after this returns: the copy has landed
     * (on a stream of its own: the daemon's may be busy with the daemon) */
    cudaError_t err = cudaMemcpyAsync((void *)(e->dev.colls + n), c, sizeof(*c), cudaMemcpyHostToDevice, e->copy_stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(e->copy_stream);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR("engine", "%s: copying the collective's context to the GPU failed: %s", routine, cudaGetErrorString(err));
        return GSHMEMI_ERR_CUDA;
    }
    *id = n;
    return GSHMEMI_OK;
}

/* ---- submission and completion ---- */
static int check_buffers(shmemx_engine_t *e, int id, void *dest, const void *src, size_t count, int root, const char *routine)
{
    const gshmemi_engine_coll_t *c = &e->colls[id];
    if (c->kind == GSHMEMI_ENGINE_BARRIER) return GSHMEMI_OK;
    if (count > e->max_count[id]) {
        GSHMEMI_ERROR("engine", "%s: count %zu exceeds the collective's max_count %zu", routine, count, e->max_count[id]);
        return GSHMEMI_ERR_INVALID;
    }
    if (c->kind == GSHMEMI_ENGINE_BROADCAST && (root < 0 || root >= c->size)) {
        GSHMEMI_ERROR("engine", "%s: root %d is outside the team (0..%d)", routine, root, c->size - 1);
        return GSHMEMI_ERR_INVALID;
    }
    size_t blk = count * c->es, n = (size_t)c->size;
    size_t dbytes = c->kind == GSHMEMI_ENGINE_FCOLLECT || c->kind == GSHMEMI_ENGINE_ALLTOALL ? n * blk : blk;
    size_t sbytes = c->kind == GSHMEMI_ENGINE_ALLTOALL ? n * blk : blk;
    if (!count) return GSHMEMI_OK;
    if (!gshmemi_coll_rt->in_heap(dest, dbytes)) {
        GSHMEMI_ERROR("engine", "%s: dest %p (%zu bytes) is not inside the symmetric heap", routine, dest, dbytes);
        return GSHMEMI_ERR_INVALID;
    }
    if (!gshmemi_coll_rt->in_heap(src, sbytes)) {
        GSHMEMI_ERROR("engine", "%s: source %p (%zu bytes) is not inside the symmetric heap", routine, src, sbytes);
        return GSHMEMI_ERR_INVALID;
    }
    if (dest == src && c->kind == GSHMEMI_ENGINE_BROADCAST) return GSHMEMI_OK;
    if ((char *)dest < (const char *)src + sbytes && (const char *)src < (char *)dest + dbytes) {
        GSHMEMI_ERROR("engine", "%s: dest and source overlap (the members read each other's source while dest is written)", routine);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static int submit(shmemx_engine_t *e, int id, void *dest, const void *src, size_t count, int root, shmemx_engine_callback_t cb,
                  void *arg, shmemx_engine_ticket_t *ticket, const char *routine)
{
    int rc;
    const char *why = NULL;
    uint64_t seq = 0;
    if ((rc = require_init(routine)) != GSHMEMI_OK) return rc;
    if (!e || !ticket) {
        GSHMEMI_ERROR("engine", "%s: engine and ticket must not be NULL", routine);
        return GSHMEMI_ERR_INVALID;
    }
    if (id < 0 || id >= e->sq.ncolls) {
        GSHMEMI_ERROR("engine", "%s: id %d is not a registered collective (0..%d)", routine, id, e->sq.ncolls - 1);
        return GSHMEMI_ERR_INVALID;
    }
    if ((rc = check_buffers(e, id, dest, src, count, root, routine)) != GSHMEMI_OK) return rc;
    if (e->error) {
        GSHMEMI_ERROR("engine", "%s: the engine's daemon has failed (logged before)", routine);
        return GSHMEMI_ERR_CUDA;
    }
    pthread_mutex_lock(&e->lock);
    rc = gshmemi_engine_sq_push(&e->sq, id, dest, src, count, root, &seq, &why);
    if (rc == GSHMEMI_OK) {
        e->cbs[id][seq % GSHMEMI_ENGINE_TASKS].cb = cb;
        e->cbs[id][seq % GSHMEMI_ENGINE_TASKS].arg = arg;
        if (!e->running) pthread_cond_signal(&e->wake);
    }
    pthread_mutex_unlock(&e->lock);
    if (rc == GSHMEMI_ERR_AGAIN) {
        GSHMEMI_INFO("engine", "%s: collective %d not queued: %s; submit again once a request completed", routine, id, why);
        return rc;
    }
    *ticket = ((uint64_t)(id + 1) << SEQ_BITS) | seq;
    return rc;
}

int shmemx_engine_submit(shmemx_engine_t *e, int id, void *dest, const void *src, size_t count, int root,
                         shmemx_engine_ticket_t *ticket)
{
    return submit(e, id, dest, src, count, root, NULL, NULL, ticket, "shmemx_engine_submit");
}

int shmemx_engine_submit_cb(shmemx_engine_t *e, int id, void *dest, const void *src, size_t count, int root,
                            shmemx_engine_callback_t cb, void *arg, shmemx_engine_ticket_t *ticket)
{
    return submit(e, id, dest, src, count, root, cb, arg, ticket, "shmemx_engine_submit_cb");
}

static int decode(shmemx_engine_t *e, shmemx_engine_ticket_t t, int *id, uint64_t *seq, const char *routine)
{
    if (!e) {
        GSHMEMI_ERROR("engine", "%s: engine is NULL", routine);
        return GSHMEMI_ERR_INVALID;
    }
    *id = (int)(t >> SEQ_BITS) - 1;
    *seq = t & SEQ_MASK;
    if (*id < 0 || *id >= e->sq.ncolls || *seq == 0 || *seq > e->sq.seq[*id]) {
        GSHMEMI_ERROR("engine", "%s: ticket %#llx names no submitted request", routine, (unsigned long long)t);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

int shmemx_engine_test(shmemx_engine_t *e, shmemx_engine_ticket_t t, int *done)
{
    int id, rc;
    uint64_t seq;
    if ((rc = decode(e, t, &id, &seq, "shmemx_engine_test")) != GSHMEMI_OK) return rc;
    *done = __atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE) >= seq;
    if (!*done && e->error) return GSHMEMI_ERR_CUDA;
    return GSHMEMI_OK;
}

int shmemx_engine_wait(shmemx_engine_t *e, shmemx_engine_ticket_t t, double timeout_s)
{
    int id, rc;
    uint64_t seq, start = gshmemi_now_ns(), limit;
    if ((rc = decode(e, t, &id, &seq, "shmemx_engine_wait")) != GSHMEMI_OK) return rc;
    limit = timeout_s > 0 ? (uint64_t)(timeout_s * 1e9) : e->timeout_ns;
    for (uint32_t spins = 0; __atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE) < seq; spins++) {
        if (e->error) {
            GSHMEMI_ERROR("engine", "shmemx_engine_wait: request %llu of collective %d cannot complete: the daemon failed (logged before)",
                          (unsigned long long)seq, id);
            return GSHMEMI_ERR_CUDA;
        }
        if ((spins & 255) == 255) {
            if (gshmemi_now_ns() - start > limit) {
                GSHMEMI_ERROR("engine", "shmemx_engine_wait: request %llu of collective %d (team of %d from PE %d, stride %d) not complete "
                              "after %.3f s: %llu of its requests done; a member has not submitted it, or has stopped",
                              (unsigned long long)seq, id, e->colls[id].size, e->colls[id].start, e->colls[id].stride, limit / 1e9,
                              (unsigned long long)e->host->done[id]);
                return GSHMEMI_ERR_TIMEOUT;
            }
            sched_yield();
        }
    }
    return GSHMEMI_OK;
}

/* A stream wait makes the daemon stay resident until the request completes (engine.h,
 * gshmemi_engine_host_t's hold): the work it holds back on `stream` may share a hardware queue with
 * the daemon's stream, and a daemon relaunched behind it would never run. So the wait is enqueued
 * once every CTA of a running daemon has acknowledged the hold (the poller relaunches a daemon
 * that ended first), bounded as shmemx_engine_wait. */
int shmemx_engine_stream_wait(shmemx_engine_t *e, shmemx_engine_ticket_t t, struct CUstream_st *stream)
{
    int id, rc;
    uint64_t seq, gen, start = gshmemi_now_ns();
    void *word;
    if ((rc = decode(e, t, &id, &seq, "shmemx_engine_stream_wait")) != GSHMEMI_OK) return rc;
    GSHMEMI_CUDACHECK(cudaHostGetDevicePointer(&word, (void *)&e->host->done[id], 0));
    if (__atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE) < seq) {
        pthread_mutex_lock(&e->lock);
        if (e->hold_seq[id] < seq) e->hold_seq[id] = seq;
        gen = ++e->hold_gen;
        e->holding = 1;
        __atomic_store_n(&e->host->hold, gen << 1 | 1, __ATOMIC_RELEASE);
        if (!e->running) pthread_cond_signal(&e->wake);
        pthread_mutex_unlock(&e->lock);
        for (uint32_t spins = 0;; spins++) {
            int acked = 1;
            for (int b = 0; b < e->dev.ctas && acked; b++) acked = e->host->ack[b] >= gen;
            if (acked || __atomic_load_n(&e->host->done[id], __ATOMIC_ACQUIRE) >= seq) break;
            if (e->error) {
                GSHMEMI_ERROR("engine", "shmemx_engine_stream_wait: request %llu of collective %d cannot complete: the daemon failed "
                              "(logged before)", (unsigned long long)seq, id);
                return GSHMEMI_ERR_CUDA;
            }
            if ((spins & 255) == 255) {
                if (gshmemi_now_ns() - start > e->timeout_ns) {
                    int n = 0;
                    for (int b = 0; b < e->dev.ctas; b++) n += e->host->ack[b] >= gen;
                    GSHMEMI_ERROR("engine", "shmemx_engine_stream_wait: the daemon did not take the hold for request %llu of collective %d "
                                  "within %.3f s (%d of %d CTAs acknowledged; %s); nothing was enqueued on the stream",
                                  (unsigned long long)seq, id, e->timeout_ns / 1e9, n, e->dev.ctas,
                                  e->running ? "a launch is running" : "no launch is running");
                    return GSHMEMI_ERR_TIMEOUT;
                }
                sched_yield();
            }
        }
    }
    GSHMEMI_CUCHECK(cuStreamWaitValue64((CUstream)stream, (CUdeviceptr)(uintptr_t)word, seq, CU_STREAM_WAIT_VALUE_GEQ));
    return GSHMEMI_OK;
}

int shmemx_engine_stats(shmemx_engine_t *e, shmemx_engine_stats_t *s)
{
    if (!e || !s) {
        GSHMEMI_ERROR("engine", "shmemx_engine_stats: engine and stats must not be NULL");
        return GSHMEMI_ERR_INVALID;
    }
    memset(s, 0, sizeof(*s));
    for (int b = 0; b < e->dev.ctas; b++) s->preemptions += e->host->preempted[b], s->stuck_exits += e->host->stuck_exits[b];
    pthread_mutex_lock(&e->lock);
    s->launches = e->launches, s->exits = e->exits;
    pthread_mutex_unlock(&e->lock);
    return GSHMEMI_OK;
}

int shmemx_engine_destroy(shmemx_engine_t *e)
{
    static const char *routine = "shmemx_engine_destroy";
    int rc;
    if ((rc = require_init(routine)) != GSHMEMI_OK) return rc;
    if (!e) return GSHMEMI_OK;
    /* every request complete on this PE: then no member signals into this PE's flags again */
    for (int id = 0; id < e->sq.ncolls; id++) {
        if (e->sq.seq[id] == 0) continue;
        if ((rc = shmemx_engine_wait(e, ((uint64_t)(id + 1) << SEQ_BITS) | e->sq.seq[id], 0)) != GSHMEMI_OK) {
            GSHMEMI_ERROR("engine", "%s: collective %d still has requests outstanding; the engine is kept", routine, id);
            return rc;
        }
    }
    pthread_mutex_lock(&e->lock);
    e->quit = 1;
    pthread_cond_signal(&e->wake);
    pthread_mutex_unlock(&e->lock);
    if (e->poller_started) pthread_join(e->poller, NULL);
    pthread_mutex_lock(&e->lock);
    poll_once(e); /* callbacks of the last completions the poller had not seen */
    pthread_mutex_unlock(&e->lock);
    e->host->stop = 1;
    cudaError_t err = cudaStreamSynchronize(e->stream); /* a running daemon sees stop at its next look */
    if (err != cudaSuccess) GSHMEMI_ERROR("engine", "%s: the daemon's stream failed: %s", routine, cudaGetErrorString(err));
    gshmemi_coll_rt->sym_free(e->pool); /* collective: waits for every PE */
    gshmemi_engine_sq_fini(&e->sq);
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->wake);
    release(e);
    return err == cudaSuccess ? GSHMEMI_OK : GSHMEMI_ERR_CUDA;
}
