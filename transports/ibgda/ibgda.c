/* The IBGDA transport: kernels post mlx5 WQEs to an RC QP per peer themselves (device/ibgda.cuh).
 * This file makes what they post into, and, with GSHMEM_IBGDA_NIC=emulated (or null), plays the
 * NIC: a test vehicle for the device path on hosts with no ConnectX.
 *
 * Emulated: the SQ and CQ rings, the doorbell records, the GPU's counters and the result words of
 * each QP are in GPU memory (one VMM allocation, which every CUDA context of the device reaches);
 * the doorbell page is pinned host memory mapped for the GPU, one 8-byte register per QP. One host
 * thread per PE watches the page and runs the engine of nic_emul.c on each QP whose doorbell
 * changed (and on every QP now and then, so a doorbell value that repeats is not missed). Its
 * callbacks read the SQ and doorbell records with copies on a stream of the thread's own, resolve
 * the made-up keys against the heaps, and move data with the proxy's copy backend between heaps
 * mapped here (ctx->host_view), in that backend's CUDA context (its own under MPS: see copy.c).
 * Atomics are one-thread kernels (ibgda_kernels.cu) after the backend's copies. A CQE is written
 * only after the backend has completed every copy before it.
 *
 * Doorbells (GSHMEM_IBGDA_DOORBELL): gpu, the kernel writes the send doorbell record and the
 * doorbell register; cpu, the send doorbell records are in pinned host memory, the kernel writes
 * only them, and a ringer thread (transport code, not the emulator: it is what a host whose
 * doorbell page cannot be mapped for the GPU runs) rings for every record that advanced. auto is
 * gpu here: the emulated doorbell page is host memory, which always maps.
 *
 * Keys and QP numbers are made up, consistently: PE p's heap is one memory region with key
 * KEY_HEAP | p (lkey = rkey), the result words KEY_RESULT | p, and local buffers outside the heap
 * KEY_BUF | p, which the emulator accepts anywhere in device memory (a ConnectX would need such a
 * buffer registered: not modelled). Hardware (GSHMEM_IBGDA_NIC=hw) is not wired in yet
 * (transports/route.c refuses it when forced; auto takes the proxy). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../device/layout.h"
#include "../../runtime/env.h"
#include "../p2p/p2p.h"
#include "../proxy/backend.h"
#include "../route.h"
#include "ibgda.h"
#include "ibgda_kernels.h"
#include "nic_emul.h"
#include "setup.h" /* gshmemi_ibgda_doorbell_mode */

#define SUB "ibgda"

/* Per QP, in the GPU allocation: SQ ring, CQ ring, doorbell records, counters, result words. */
#define OFF_SQ 0
#define OFF_CQ (OFF_SQ + GSHMEMI_IBGDA_SQ_BBS * GSHMEMI_MLX5_SEND_WQE_BB)
#define OFF_SQ_DBR (OFF_CQ + GSHMEMI_IBGDA_NCQE * GSHMEMI_MLX5_CQE_BYTES)
#define OFF_CQ_DBR (OFF_SQ_DBR + 64)
#define OFF_CTR (OFF_CQ_DBR + 64)
#define OFF_RESULT (OFF_CTR + GSHMEMI_IBGDA_CTR_WORDS * 8)
#define OFF_BBS (OFF_RESULT + GSHMEMI_IBGDA_SQ_BBS * 8)
#define QP_AREA ((OFF_BBS + GSHMEMI_IBGDA_SQ_BBS + 4095) / 4096 * 4096)

#define DB_STRIDE 8 /* bytes between two QPs' doorbell registers in the page */
#define DBR_WORDS 16 /* cpu doorbells: 32-bit words between two QPs' records (64 bytes) */

typedef struct {
    uint64_t heap_base; /* this PE's heap as its NIC addresses it (its own VA) */
    uint64_t heap_size;
    uint32_t rkey;
    uint32_t pad;
} ibgda_blob_t;

typedef struct {
    int peer;
    gshmemi_nic_emul_qp_t emu;
    volatile uint64_t executed; /* the engine's sq_ci after its last progress call (host quiet reads it) */
    uint64_t last_db;           /* the doorbell value last seen */
} emul_qp_t;

static struct {
    gshmemi_transport_ctx_t *ctx;
    int serves;                       /* some peer is routed here */
    int nic;                          /* GSHMEMI_NIC_* */
    ibgda_blob_t *blobs;              /* [n_pes] every PE's */
    gshmemi_proxy_backend_t *copy;    /* moves the data (its context: see copy.c) */
    CUdeviceptr va;                   /* the GPU allocation */
    size_t va_size;
    CUmemGenericAllocationHandle handle;
    int reserved, created, mapped;
    uint64_t *db_page;                /* pinned, mapped for the GPU: [n_pes] doorbell registers */
    int doorbell;                     /* GSHMEMI_DOORBELL_GPU or _CPU */
    uint32_t *dbr_host;               /* cpu doorbells: pinned, mapped: [n_pes] send doorbell records */
    pthread_t ringer;
    int ringer_started;
    gshmemi_ibgda_qp_t *recs;         /* host copy of the device records [n_pes] */
    gshmemi_ibgda_qp_t *d_recs;       /* device array [n_pes] */
    emul_qp_t *qps;                   /* [n_pes]; peer < 0: none */
    cudaStream_t stream;              /* the NIC thread's reads and CQE writes (the backend's context) */
    cudaStream_t quiet_stream;        /* the host quiet's reads (the application's context) */
    gshmemi_mlx5_cqe_t *cqe_stage;    /* pinned: a CQE on its way to the GPU */
    uint8_t *stage;                   /* pinned: inline payloads that are no single value, atomic results */
    uint64_t *amo_old;                /* pinned: the old value an atomic kernel read */
    pthread_t thread;
    int thread_started;
    volatile int stop;
    volatile int failed;              /* the engine failed (logged); quiet reports it */
} ib;

/* ---- the engine's callbacks: GPU memory through CUDA ---- */

static int cuda_ok(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return GSHMEMI_OK;
    GSHMEMI_ERROR(SUB, "emulated NIC: %s: %s", what, cudaGetErrorString(err));
    return GSHMEMI_ERR_CUDA;
}

static int cb_read(void *c, void *dst, const void *src, size_t n)
{
    (void)c;
    if (ib.dbr_host && (const uint32_t *)src >= ib.dbr_host && (const uint32_t *)src < ib.dbr_host + (size_t)ib.ctx->n_pes * DBR_WORDS &&
        n == sizeof(uint32_t)) { /* a doorbell record in host memory (cpu doorbells) */
        *(uint32_t *)dst = __atomic_load_n((const uint32_t *)src, __ATOMIC_ACQUIRE);
        return GSHMEMI_OK;
    }
    cudaError_t err = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, ib.stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ib.stream);
    return cuda_ok(err, "reading the SQ or a doorbell record");
}

/* The data before the CQE: every copy the backend holds completes first; then 63 bytes, then the
 * owner byte, in stream order. */
static int cb_write_cqe(void *c, void *cqe_addr, const gshmemi_mlx5_cqe_t *cqe)
{
    (void)c;
    GSHMEMI_CHECK(gshmemi_proxy_backend_copy.flush(ib.copy));
    *ib.cqe_stage = *cqe;
    cudaError_t err = cudaMemcpyAsync(cqe_addr, ib.cqe_stage, GSHMEMI_MLX5_CQE_BYTES - 1, cudaMemcpyHostToDevice, ib.stream);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync((char *)cqe_addr + GSHMEMI_MLX5_CQE_BYTES - 1, &ib.cqe_stage->bytes[GSHMEMI_MLX5_CQE_BYTES - 1], 1,
                              cudaMemcpyHostToDevice, ib.stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ib.stream);
    return cuda_ok(err, "writing a CQE");
}

static int in_range(uint64_t base, uint64_t size, uint64_t addr, uint64_t len)
{
    return addr >= base && addr - base <= size && len <= size - (addr - base);
}

static int cb_resolve_local(void *c, const gshmemi_nic_emul_qp_t *qp, uint32_t lkey, uint64_t addr, uint64_t len, int access,
                            void **ptr)
{
    const int me = ib.ctx->my_pe;
    (void)c, (void)qp, (void)access;
    if (lkey == (GSHMEMI_IBGDA_KEY_HEAP | (uint32_t)me)) {
        if (!in_range((uint64_t)(uintptr_t)ib.ctx->heap->my_base, ib.ctx->heap->region, addr, len)) return GSHMEMI_NIC_EMUL_KEY_RANGE;
    } else if (lkey == (GSHMEMI_IBGDA_KEY_RESULT | (uint32_t)me)) {
        const gshmemi_ibgda_qp_t *r = &ib.recs[qp->cfg.peer];
        if (!in_range((uint64_t)(uintptr_t)r->result, GSHMEMI_IBGDA_SQ_BBS * 8, addr, len)) return GSHMEMI_NIC_EMUL_KEY_RANGE;
    } else if (lkey != (GSHMEMI_IBGDA_KEY_BUF | (uint32_t)me)) {
        return GSHMEMI_NIC_EMUL_KEY_UNKNOWN;
    }
    *ptr = (void *)(uintptr_t)addr;
    return GSHMEMI_OK;
}

static int cb_resolve_remote(void *c, const gshmemi_nic_emul_qp_t *qp, uint32_t rkey, uint64_t raddr, uint64_t len, int access,
                             void **ptr)
{
    const int pe = qp->cfg.peer;
    const ibgda_blob_t *b = &ib.blobs[pe];
    (void)c, (void)access;
    if (rkey != b->rkey) return GSHMEMI_NIC_EMUL_KEY_UNKNOWN;
    if (!in_range(b->heap_base, b->heap_size, raddr, len)) return GSHMEMI_NIC_EMUL_KEY_RANGE;
    *ptr = ib.ctx->host_view[pe] + (raddr - b->heap_base);
    return GSHMEMI_OK;
}

/* Whether p lies in pe's heap as mapped here; *off its offset there. */
static int at_peer(int pe, const void *p, size_t n, uint64_t *off)
{
    const char *base = ib.ctx->host_view[pe];
    if (!base || !in_range((uint64_t)(uintptr_t)base, ib.blobs[pe].heap_size, (uint64_t)(uintptr_t)p, n)) return 0;
    *off = (uint64_t)((const char *)p - base);
    return 1;
}

static int cb_copy(void *c, void *dst, const void *src, size_t n)
{
    const emul_qp_t *q = (const emul_qp_t *)c;
    uint64_t off;
    if (at_peer(q->peer, dst, n, &off)) return gshmemi_proxy_backend_copy.put(ib.copy, q->peer, off, src, n); /* RDMA WRITE */
    if (at_peer(q->peer, src, n, &off)) return gshmemi_proxy_backend_copy.get(ib.copy, q->peer, dst, off, n); /* RDMA READ */
    GSHMEMI_ERROR(SUB, "emulated NIC: a copy of %zu bytes between %p and %p touches no heap of PE %d", n, dst, src, q->peer);
    return GSHMEMI_ERR_INVALID;
}

/* Inline data to the peer: one value as a stream write, else staged and completed at once. An
 * atomic's old value to a local result word: a copy, completed at once. */
static int cb_store(void *c, void *dst, const void *host_src, size_t n)
{
    const emul_qp_t *q = (const emul_qp_t *)c;
    uint64_t off, v = 0;
    if (n > GSHMEMI_MLX5_INLINE_MAX) {
        GSHMEMI_ERROR(SUB, "emulated NIC: a store of %zu bytes to %p (at most %d)", n, dst, GSHMEMI_MLX5_INLINE_MAX);
        return GSHMEMI_ERR_INVALID;
    }
    if (!at_peer(q->peer, dst, n, &off)) { /* local: the engine resolved it through an lkey */
        memcpy(ib.stage, host_src, n);
        cudaError_t err = cudaMemcpyAsync(dst, ib.stage, n, cudaMemcpyHostToDevice, ib.stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(ib.stream);
        return cuda_ok(err, "storing an atomic's old value");
    }
    if (n == 1 || n == 2 || n == 4 || n == 8) {
        memcpy(&v, host_src, n);
        return gshmemi_proxy_backend_copy.put_value(ib.copy, q->peer, off, v, n);
    }
    GSHMEMI_CHECK(gshmemi_proxy_backend_copy.flush(ib.copy)); /* the stage is free */
    memcpy(ib.stage, host_src, n);
    GSHMEMI_CHECK(gshmemi_proxy_backend_copy.put(ib.copy, q->peer, off, ib.stage, n));
    return gshmemi_proxy_backend_copy.flush(ib.copy);
}

/* The atomic at the target, after every copy before it, completed before it returns. */
static int cb_atomic(void *c, void *target, const gshmemi_nic_emul_amo_t *amo, uint64_t *old)
{
    const emul_qp_t *q = (const emul_qp_t *)c;
    GSHMEMI_CHECK(gshmemi_proxy_backend_copy.flush(ib.copy));
    cudaError_t err = (cudaError_t)gshmemi_ibgda_emul_amo(target, amo, ib.amo_old, ib.stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ib.stream);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR(SUB, "emulated NIC: an atomic (kind %d, %u bytes) to PE %d: %s", amo->kind, amo->size, q->peer, cudaGetErrorString(err));
        return GSHMEMI_ERR_CUDA;
    }
    *old = *(volatile uint64_t *)ib.amo_old;
    return GSHMEMI_OK;
}

static const gshmemi_nic_emul_ops_t emul_ops = {
    .read = cb_read,
    .write_cqe = cb_write_cqe,
    .resolve_local = cb_resolve_local,
    .resolve_remote = cb_resolve_remote,
    .copy = cb_copy,
    .store = cb_store,
    .atomic = cb_atomic,
};

/* ---- the NIC thread ---- */

static int progress_qp(emul_qp_t *q)
{
    int rc = gshmemi_nic_emul_progress(&q->emu);
    if (rc < 0) return rc;
    __atomic_store_n(&q->executed, q->emu.sq_ci, __ATOMIC_RELEASE);
    return GSHMEMI_OK;
}

/* The host threads' loop pace: spin while there was work, then pause, then sleep 20 us a turn. */
static void idle_step(unsigned *idle, int worked)
{
    if (worked) {
        *idle = 0;
    } else if (++*idle < 4096) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static void *nic_main(void *arg)
{
    unsigned idle = 0;
    (void)arg;
    if (cudaSetDevice(ib.ctx->device) != cudaSuccess || gshmemi_proxy_backend_copy.attach(ib.copy) != GSHMEMI_OK) {
        GSHMEMI_ERROR(SUB, "the emulated NIC's thread cannot use GPU %d", ib.ctx->device);
        ib.failed = 1;
        return NULL;
    }
    while (!ib.stop) {
        int rang = 0;
        for (int pe = 0; pe < ib.ctx->n_pes; pe++) {
            emul_qp_t *q = &ib.qps[pe];
            if (q->peer < 0) continue;
            const uint64_t db = ((volatile uint64_t *)ib.db_page)[pe * (DB_STRIDE / 8)];
            /* a doorbell that changed, or now and then every QP (a value seen twice) */
            if (db == q->last_db && (idle & 4095) != 4095) continue;
            if (db != q->last_db) rang = 1;
            q->last_db = db;
            if (progress_qp(q) != GSHMEMI_OK) {
                GSHMEMI_ERROR(SUB, "the emulated NIC stopped on the QP to PE %d (logged above); device calls waiting on it time out", pe);
                ib.failed = 1;
                return NULL;
            }
        }
        idle_step(&idle, rang);
    }
    return NULL;
}

/* ---- the ringer (GSHMEM_IBGDA_DOORBELL=cpu) ---- */

/* The doorbell of a QP whose send doorbell record reads pi: the first 8 bytes of a control
 * segment naming the QP and the producer index (the record is what the NIC executes up to). */
static uint64_t doorbell_value(uint32_t qpn, uint16_t pi)
{
    const uint32_t w0 = gshmemi_mlx5_be32((uint32_t)pi << 8 | GSHMEMI_MLX5_OPCODE_NOP), w1 = gshmemi_mlx5_be32(qpn << 8);
    return (uint64_t)w1 << 32 | w0;
}

static void *ringer_main(void *arg)
{
    uint32_t *last = calloc((size_t)ib.ctx->n_pes, sizeof(uint32_t));
    unsigned idle = 0;
    (void)arg;
    if (!last) {
        GSHMEMI_ERROR(SUB, "the doorbell ringer cannot start: out of memory");
        ib.failed = 1;
        return NULL;
    }
    while (!ib.stop) {
        int rang = 0;
        for (int pe = 0; pe < ib.ctx->n_pes; pe++) {
            if (ib.qps[pe].peer < 0) continue;
            const uint32_t rec = __atomic_load_n(&ib.dbr_host[pe * DBR_WORDS + GSHMEMI_MLX5_DBR_SND], __ATOMIC_ACQUIRE);
            if (rec == last[pe]) continue;
            last[pe] = rec;
            __atomic_store_n(&ib.db_page[pe * (DB_STRIDE / 8)], doorbell_value(ib.recs[pe].qpn, (uint16_t)gshmemi_mlx5_be32(rec)),
                             __ATOMIC_RELEASE);
            rang = 1;
        }
        idle_step(&idle, rang);
    }
    free(last);
    return NULL;
}

/* ---- the transport's life cycle ---- */

static int ibgda_init(gshmemi_transport_ctx_t *ctx, void *my_blob)
{
    ibgda_blob_t *b = (ibgda_blob_t *)my_blob;
    memset(&ib, 0, sizeof(ib));
    ib.ctx = ctx;
    ib.nic = gshmemi_env.IBGDA_NIC;
    for (int pe = 0; pe < ctx->n_pes; pe++)
        if (ctx->route[pe] == GSHMEMI_ROUTE_IBGDA) ib.serves = 1;
    b->heap_base = (uint64_t)(uintptr_t)ctx->heap->my_base;
    b->heap_size = ctx->heap->region;
    b->rkey = GSHMEMI_IBGDA_KEY_HEAP | (uint32_t)ctx->my_pe;
    b->pad = 0;
    if (!ib.serves && gshmemi_env.REMOTE_TRANSPORT == GSHMEMI_REMOTE_AUTO && ctx->my_pe == 0)
        for (int pe = 0; pe < ctx->n_pes; pe++)
            if (ctx->route[pe] != GSHMEMI_ROUTE_P2P) {
                GSHMEMI_INFO(SUB, "GSHMEM_REMOTE_TRANSPORT=auto: IBGDA on a ConnectX is not wired in yet, the proxy serves remote peers");
                break;
            }
    return GSHMEMI_OK;
}

/* The GPU allocation of every QP: VMM memory, so the backend's own context reaches it too. */
static int alloc_gpu(size_t want)
{
    CUmemAllocationProp prop;
    CUmemAccessDesc desc;
    size_t gran = 0;

    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)ib.ctx->cudev;
    GSHMEMI_CUCHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    ib.va_size = (want + gran - 1) / gran * gran;
    GSHMEMI_CUCHECK(cuMemAddressReserve(&ib.va, ib.va_size, 0, 0, 0));
    ib.reserved = 1;
    GSHMEMI_CUCHECK(cuMemCreate(&ib.handle, ib.va_size, &prop, 0));
    ib.created = 1;
    GSHMEMI_CUCHECK(cuMemMap(ib.va, ib.va_size, 0, ib.handle, 0));
    ib.mapped = 1;
    memset(&desc, 0, sizeof(desc));
    desc.location = prop.location;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    GSHMEMI_CUCHECK(cuMemSetAccess(ib.va, ib.va_size, &desc, 1));
    GSHMEMI_CUDACHECK(cudaMemset((void *)(uintptr_t)ib.va, 0, ib.va_size));
    return GSHMEMI_OK;
}

/* QP me -> pe: its record for the GPU and its emulated NIC. */
static int make_qp(int pe, char *area, uint64_t *db_dev, uint32_t *dbr_dev, gshmemi_mlx5_cqe_t *cq_init)
{
    gshmemi_transport_ctx_t *ctx = ib.ctx;
    gshmemi_ibgda_qp_t *r = &ib.recs[pe];
    emul_qp_t *q = &ib.qps[pe];
    gshmemi_nic_emul_qp_cfg_t cfg;

    r->sq = area + OFF_SQ;
    r->sq_dbrec = ib.doorbell == GSHMEMI_DOORBELL_CPU ? dbr_dev + pe * DBR_WORDS : (uint32_t *)(area + OFF_SQ_DBR);
    r->db = ib.doorbell == GSHMEMI_DOORBELL_CPU ? NULL : db_dev + pe * (DB_STRIDE / 8);
    r->cq = area + OFF_CQ;
    r->cq_dbrec = (uint32_t *)(area + OFF_CQ_DBR);
    r->ctr = (unsigned long long *)(area + OFF_CTR);
    r->result = (uint64_t *)(area + OFF_RESULT);
    r->bbs = (uint8_t *)(area + OFF_BBS);
    r->sq_bbs = GSHMEMI_IBGDA_SQ_BBS;
    r->ncqe = GSHMEMI_IBGDA_NCQE;
    r->qpn = gshmemi_ibgda_qpn(ctx->my_pe, pe);
    r->lkey = GSHMEMI_IBGDA_KEY_HEAP | (uint32_t)ctx->my_pe;
    r->result_lkey = GSHMEMI_IBGDA_KEY_RESULT | (uint32_t)ctx->my_pe;
    r->buf_lkey = GSHMEMI_IBGDA_KEY_BUF | (uint32_t)ctx->my_pe;
    r->rkey = ib.blobs[pe].rkey;
    r->raddr = ib.blobs[pe].heap_base;
    /* a fresh CQ: its entry invalid until the first completion */
    GSHMEMI_CUDACHECK(cudaMemcpy(r->cq, cq_init, GSHMEMI_IBGDA_NCQE * sizeof(*cq_init), cudaMemcpyHostToDevice));

    memset(&cfg, 0, sizeof(cfg));
    cfg.qpn = r->qpn;
    cfg.peer = pe;
    cfg.sq = r->sq;
    cfg.sq_bbs = r->sq_bbs;
    cfg.sq_dbrec = ib.doorbell == GSHMEMI_DOORBELL_CPU ? ib.dbr_host + pe * DBR_WORDS + GSHMEMI_MLX5_DBR_SND
                                                       : r->sq_dbrec + GSHMEMI_MLX5_DBR_SND;
    cfg.cq = r->cq;
    cfg.ncqe = r->ncqe;
    cfg.cq_collapsed = 1; /* device/ibgda.cuh reads the newest CQE only */
    cfg.cq_dbrec = r->cq_dbrec + GSHMEMI_MLX5_CQ_DBR_SET_CI;
    cfg.null_data = ib.nic == GSHMEMI_NIC_NULL; /* bulk bytes skipped; signals and syncs still land */
    q->peer = pe;
    GSHMEMI_CHECK(gshmemi_nic_emul_qp_init(&q->emu, &cfg, &emul_ops, q));
    q->emu.inject.bad_rkey_at = (uint64_t)gshmemi_env.IBGDA_INJECT_BAD_RKEY;
    return GSHMEMI_OK;
}

static int ibgda_connect(gshmemi_transport_ctx_t *ctx, const void *blobs)
{
    const int n = ctx->n_pes;
    int served = 0, slot = 0, rc;
    int *serve;
    gshmemi_mlx5_cqe_t *cq_init;
    uint64_t *db_dev = NULL;
    uint32_t *dbr_dev = NULL;

    if (!ib.serves) return GSHMEMI_OK;
    GSHMEMI_CHECK(gshmemi_ibgda_doorbell_mode(gshmemi_env.IBGDA_DOORBELL, 1, NULL, &ib.doorbell));
    ib.blobs = calloc((size_t)n, sizeof(*ib.blobs));
    ib.recs = calloc((size_t)n, sizeof(*ib.recs));
    ib.qps = calloc((size_t)n, sizeof(*ib.qps));
    serve = calloc((size_t)n, sizeof(int));
    cq_init = malloc(GSHMEMI_IBGDA_NCQE * sizeof(*cq_init));
    if (!ib.blobs || !ib.recs || !ib.qps || !serve || !cq_init) {
        free(serve);
        free(cq_init);
        return GSHMEMI_ERR_NOMEM;
    }
    memcpy(ib.blobs, blobs, (size_t)n * sizeof(*ib.blobs));
    for (int pe = 0; pe < n; pe++) {
        ib.qps[pe].peer = -1;
        serve[pe] = ctx->route[pe] == GSHMEMI_ROUTE_IBGDA;
        served += serve[pe];
    }
    for (unsigned i = 0; i < GSHMEMI_IBGDA_NCQE; i++) gshmemi_mlx5_cqe_init(&cq_init[i]);

    rc = gshmemi_proxy_backend_copy.open(ctx, &ib.copy, NULL);
    if (rc == GSHMEMI_OK) rc = gshmemi_proxy_backend_copy.connect(ib.copy, NULL, serve);
    if (rc == GSHMEMI_OK) rc = alloc_gpu((size_t)served * QP_AREA);
    if (rc == GSHMEMI_OK) rc = cuda_ok(cudaHostAlloc((void **)&ib.db_page, (size_t)n * DB_STRIDE, cudaHostAllocMapped | cudaHostAllocPortable),
                                       "allocating the doorbell page");
    if (rc == GSHMEMI_OK) {
        memset(ib.db_page, 0, (size_t)n * DB_STRIDE);
        rc = cuda_ok(cudaHostGetDevicePointer((void **)&db_dev, ib.db_page, 0), "mapping the doorbell page for the GPU");
    }
    if (rc == GSHMEMI_OK && ib.doorbell == GSHMEMI_DOORBELL_CPU) {
        const size_t bytes = (size_t)n * DBR_WORDS * sizeof(uint32_t);
        rc = cuda_ok(cudaHostAlloc((void **)&ib.dbr_host, bytes, cudaHostAllocMapped | cudaHostAllocPortable), "allocating the doorbell records");
        if (rc == GSHMEMI_OK) {
            memset(ib.dbr_host, 0, bytes);
            rc = cuda_ok(cudaHostGetDevicePointer((void **)&dbr_dev, ib.dbr_host, 0), "mapping the doorbell records for the GPU");
        }
    }
    for (int pe = 0; pe < n && rc == GSHMEMI_OK; pe++)
        if (serve[pe]) rc = make_qp(pe, (char *)(uintptr_t)ib.va + (size_t)slot++ * QP_AREA, db_dev, dbr_dev, cq_init);
    free(serve);
    free(cq_init);
    GSHMEMI_CHECK(rc);

    /* the NIC thread's CUDA objects, in the backend's context, made now (no kernel waits yet) */
    GSHMEMI_CHECK(gshmemi_copy_backend_enter(ib.copy));
    rc = cuda_ok(cudaStreamCreateWithFlags(&ib.stream, cudaStreamNonBlocking), "creating the NIC's stream");
    if (rc == GSHMEMI_OK) rc = cuda_ok(cudaHostAlloc((void **)&ib.cqe_stage, sizeof(*ib.cqe_stage), cudaHostAllocPortable), "CQE staging");
    if (rc == GSHMEMI_OK) rc = cuda_ok(cudaHostAlloc((void **)&ib.stage, GSHMEMI_MLX5_INLINE_MAX, cudaHostAllocPortable), "inline staging");
    if (rc == GSHMEMI_OK)
        rc = cuda_ok(cudaHostAlloc((void **)&ib.amo_old, sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable), "atomic results");
    if (rc == GSHMEMI_OK) rc = cuda_ok((cudaError_t)gshmemi_ibgda_emul_kernels_load(), "loading the atomic kernel");
    gshmemi_copy_backend_leave(ib.copy);
    GSHMEMI_CHECK(rc);

    GSHMEMI_CUDACHECK(cudaStreamCreateWithFlags(&ib.quiet_stream, cudaStreamNonBlocking));
    GSHMEMI_CUDACHECK(cudaMalloc((void **)&ib.d_recs, (size_t)n * sizeof(*ib.d_recs)));
    GSHMEMI_CUDACHECK(cudaMemcpy(ib.d_recs, ib.recs, (size_t)n * sizeof(*ib.d_recs), cudaMemcpyHostToDevice));
    *ctx->dev_ibgda = ib.d_recs;

    if (pthread_create(&ib.thread, NULL, nic_main, NULL) != 0) {
        GSHMEMI_ERROR(SUB, "cannot start the emulated NIC's thread: %s", strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    ib.thread_started = 1;
    if (ib.doorbell == GSHMEMI_DOORBELL_CPU) {
        if (pthread_create(&ib.ringer, NULL, ringer_main, NULL) != 0) {
            GSHMEMI_ERROR(SUB, "cannot start the doorbell ringer's thread: %s", strerror(errno));
            return GSHMEMI_ERR_SYSTEM;
        }
        ib.ringer_started = 1;
    }
    GSHMEMI_INFO(SUB, "%s NIC: %d QPs of %u slots, doorbell registers in pinned host memory, rung by %s",
                 ib.nic == GSHMEMI_NIC_NULL ? "null" : "emulated", served, GSHMEMI_IBGDA_SQ_BBS,
                 ib.doorbell == GSHMEMI_DOORBELL_CPU ? "a host thread (doorbell records in pinned host memory)" : "the GPU");
    return GSHMEMI_OK;
}

/* Every WQE this PE's device code reserved so far is executed (its CQE written): the GPU's
 * reservation counters (read on a stream of the application's context that no kernel waits on)
 * against what the NIC thread executed. Bounded by GSHMEM_PEER_TIMEOUT. */
static int ibgda_quiet(gshmemi_transport_ctx_t *ctx)
{
    struct timespec t0, now;
    if (!ib.thread_started) return GSHMEMI_OK;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int pe = 0; pe < ctx->n_pes; pe++) {
        unsigned long long want = 0;
        if (ib.qps[pe].peer < 0) continue;
        GSHMEMI_CUDACHECK(cudaMemcpyAsync(&want, ib.recs[pe].ctr + GSHMEMI_IBGDA_CTR_RESV, sizeof(want), cudaMemcpyDeviceToHost,
                                          ib.quiet_stream));
        GSHMEMI_CUDACHECK(cudaStreamSynchronize(ib.quiet_stream));
        while (__atomic_load_n(&ib.qps[pe].executed, __ATOMIC_ACQUIRE) < want) {
            if (ib.failed) {
                GSHMEMI_ERROR(SUB, "quiet: the emulated NIC failed (logged above); work to PE %d is not complete", pe);
                return GSHMEMI_ERR_REMOTE;
            }
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > ctx->peer_timeout) {
                GSHMEMI_ERROR(SUB, "quiet: %llu of %llu work requests to PE %d executed after GSHMEM_PEER_TIMEOUT=%g s",
                              (unsigned long long)ib.qps[pe].executed, want, pe, ctx->peer_timeout);
                return GSHMEMI_ERR_TIMEOUT;
            }
            sched_yield();
        }
    }
    return GSHMEMI_OK;
}

static int ibgda_finalize(gshmemi_transport_ctx_t *ctx)
{
    ib.stop = 1;
    if (ib.ringer_started) pthread_join(ib.ringer, NULL);
    if (ib.thread_started) pthread_join(ib.thread, NULL);
    if (ctx && ctx->dev_ibgda) *ctx->dev_ibgda = NULL;
    if (ib.d_recs) cudaFree(ib.d_recs);
    if (ib.quiet_stream) cudaStreamDestroy(ib.quiet_stream);
    if (ib.copy && gshmemi_copy_backend_enter(ib.copy) == GSHMEMI_OK) {
        if (ib.stream) cudaStreamDestroy(ib.stream);
        if (ib.cqe_stage) cudaFreeHost(ib.cqe_stage);
        if (ib.stage) cudaFreeHost(ib.stage);
        if (ib.amo_old) cudaFreeHost(ib.amo_old);
        gshmemi_copy_backend_leave(ib.copy);
    }
    if (ib.copy) gshmemi_proxy_backend_copy.close(ib.copy);
    if (ib.db_page) cudaFreeHost(ib.db_page);
    if (ib.dbr_host) cudaFreeHost(ib.dbr_host);
    if (ib.mapped) (void)gshmemi_cu.cuMemUnmap(ib.va, ib.va_size);
    if (ib.created) (void)gshmemi_cu.cuMemRelease(ib.handle);
    if (ib.reserved) (void)gshmemi_cu.cuMemAddressFree(ib.va, ib.va_size);
    free(ib.blobs);
    free(ib.recs);
    free(ib.qps);
    memset(&ib, 0, sizeof(ib));
    return GSHMEMI_OK;
}

/* Host-initiated operations: through the heap mapping, as the proxy's copy engine does. */
const gshmemi_transport_t gshmemi_transport_ibgda = {
    .name = "ibgda",
    .blob_size = sizeof(ibgda_blob_t),
    .init = ibgda_init,
    .connect = ibgda_connect,
    .register_chunk = NULL, /* the emulated keys cover each heap's whole region */
    .quiet = ibgda_quiet,
    .progress = NULL, /* the NIC thread makes progress */
    .finalize = ibgda_finalize,
    .put = gshmemi_p2p_put,
    .get = gshmemi_p2p_get,
    .iput = gshmemi_p2p_iput,
    .iget = gshmemi_p2p_iget,
    .amo = gshmemi_p2p_amo,
    .wait_local = gshmemi_p2p_wait_local,
};
