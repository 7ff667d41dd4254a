/* The IBGDA transport: kernels post mlx5 WQEs to an RC QP per peer themselves (device/ibgda.cuh).
 * This file makes what they post into, and, with GSHMEM_IBGDA_NIC=emulated (or null), plays the
 * NIC: a test vehicle for the device path on hosts with no ConnectX.
 *
 * Every peer routed here has GSHMEM_IBGDA_NUM_RC_PER_PE QPs (records QP by QP, peer by peer: the
 * device path picks one per poster, device/ibgda_ring.h gshmemi_ibgda_qp_pick).
 *
 * Emulated: the SQ and CQ rings, the doorbell records, the GPU's counters and the result words of
 * each QP are in GPU memory (one VMM allocation, which every CUDA context of the device reaches);
 * the doorbell page is pinned host memory mapped for the GPU, one 8-byte register per QP. One host
 * thread per PE watches the page and runs the engine of nic_emul.c on each QP whose doorbell
 * changed (and on every QP now and then, so a doorbell value that repeats is not missed). Its
 * callbacks read the SQ and doorbell records with copies on a stream of the thread's own, resolve
 * the made-up keys against the heaps, and move data with the proxy's copy backend between heaps
 * mapped here (ctx->host_view), in that backend's CUDA context (its own under MPS: see common/copy.c).
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
 * buffer registered: not modelled).
 *
 * Hardware (GSHMEM_IBGDA_NIC=hw; NOT RUN ON A NIC: written blind, see setup.c for what only a
 * ConnectX can confirm): setup.c opens the device with DEVX and makes GSHMEM_IBGDA_NUM_RC_PER_PE
 * RC QPs per peer routed here, their SQs, collapsed CQs (one CQE) and doorbell records in one VMM
 * allocation (umems through dmabuf where the driver gives one), the per-peer counters, result
 * words and BB counts after them. The QP numbers are allgathered in connect (a blob of setup.c's
 * format, over the bootstrap: its size depends on the job, the transport's own blob does not),
 * the QPs go to RTS, and each heap chunk is registered (dmabuf first) and its rkeys allgathered.
 * The device path carries one key per peer, so the heap is backed as one chunk (GSHMEM_HEAP_GROWTH
 * is raised to the heap's size). Doorbells: the UAR page mapped for the GPU by cudaHostRegister(IoMemory); cpu mode (or
 * auto when that fails): the send doorbell records in pinned host memory and the ringer thread
 * writes the UAR's doorbell register. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../device/ibgda_ring.h" /* gshmemi_ibgda_collapsed_done */
#include "../../device/layout.h"
#include "../../runtime/base/clock.h"
#include "../../runtime/base/env.h"
#include "../common/backend.h"
#include "../common/mapped.h"
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
    gshmemi_proxy_backend_t *copy;    /* moves the data (its context: see common/copy.c) */
    CUdeviceptr va;                   /* the GPU allocation */
    size_t va_size;
    CUmemGenericAllocationHandle handle;
    int reserved, created, mapped;
    int nqp, n_qps;                   /* QPs per peer (GSHMEM_IBGDA_NUM_RC_PER_PE); n_pes * nqp */
    uint64_t *db_page;                /* pinned, mapped for the GPU: [n_qps] doorbell registers */
    int doorbell;                     /* GSHMEMI_DOORBELL_GPU or _CPU */
    uint32_t *dbr_host;               /* cpu doorbells: pinned, mapped: [n_qps] send doorbell records */
    pthread_t ringer;
    int ringer_started;
    gshmemi_ibgda_qp_t *recs;         /* host copy of the device records [n_qps]: QP k to PE pe at pe * nqp + k */
    gshmemi_ibgda_qp_t *d_recs;       /* device array [n_qps] */
    emul_qp_t *qps;                   /* [n_qps], indexed as recs; peer < 0: none */
    cudaStream_t stream;              /* the NIC thread's reads and CQE writes (the backend's context) */
    cudaStream_t quiet_stream;        /* the host quiet's reads (the application's context) */
    gshmemi_mlx5_cqe_t *cqe_stage;    /* pinned: a CQE on its way to the GPU */
    uint8_t *stage;                   /* pinned: inline payloads that are no single value, atomic results */
    uint64_t *amo_old;                /* pinned: the old value an atomic kernel read */
    pthread_t thread;
    int thread_started;
    volatile int stop;
    volatile int failed;              /* the engine failed (logged); quiet reports it */
    /* GSHMEM_IBGDA_NIC=hw */
    int hw_job;                       /* every PE takes part in the exchanges (ctx->job_uses_ibgda_hw) */
    gshmemi_ibgda_t *hw;              /* this PE's DEVX objects (setup.c), when it serves a peer */
    gshmemi_ibgda_layout_t lay;
    size_t off_cq, off_dbr, off_aux, aux_stride; /* in the GPU allocation; the SQs at 0 */
    uint32_t *hw_dbr_host;            /* cpu doorbells: every doorbell record, pinned host memory */
    void *uar_page;                   /* registered for the GPU (cudaHostRegister), or NULL */
    volatile uint64_t *uar_db;        /* cpu doorbells: the doorbell register as this CPU maps it */
    uint32_t **ring_rec;              /* cpu doorbells: [n_qps] the send doorbell record of each QP */
    uint32_t result_lkey;
    unsigned long long *hw_done;      /* host quiet: BBs completed per QP, as the CQE says */
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
    if (ib.dbr_host && (const uint32_t *)src >= ib.dbr_host && (const uint32_t *)src < ib.dbr_host + (size_t)ib.n_qps * DBR_WORDS &&
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
    (void)qp, (void)access;
    if (lkey == (GSHMEMI_IBGDA_KEY_HEAP | (uint32_t)me)) {
        if (!in_range((uint64_t)(uintptr_t)ib.ctx->heap->my_base, ib.ctx->heap->region, addr, len)) return GSHMEMI_NIC_EMUL_KEY_RANGE;
    } else if (lkey == (GSHMEMI_IBGDA_KEY_RESULT | (uint32_t)me)) {
        const gshmemi_ibgda_qp_t *r = &ib.recs[(const emul_qp_t *)c - ib.qps]; /* this QP's result words (c: its emul_qp_t) */
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
        for (int i = 0; i < ib.n_qps; i++) {
            emul_qp_t *q = &ib.qps[i];
            if (q->peer < 0) continue;
            const uint64_t db = ((volatile uint64_t *)ib.db_page)[i * (DB_STRIDE / 8)];
            /* a doorbell that changed, or now and then every QP (a value seen twice) */
            if (db == q->last_db && (idle & 4095) != 4095) continue;
            if (db != q->last_db) rang = 1;
            q->last_db = db;
            if (progress_qp(q) != GSHMEMI_OK) {
                GSHMEMI_ERROR(SUB, "the emulated NIC stopped on QP %d to PE %d (logged above); device calls waiting on it time out",
                              i % ib.nqp, q->peer);
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

/* A ConnectX's doorbell register (UAR): the record read above is ordered before it, the value
 * goes as one 8-byte store (as rdma-core's mmio_write64_be), then is flushed from the CPU's write
 * buffers. Unverified without a NIC. */
static void ring_uar(uint64_t v)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *ib.uar_db = v;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static void *ringer_main(void *arg)
{
    uint32_t *last = calloc((size_t)ib.n_qps, sizeof(uint32_t));
    unsigned idle = 0;
    (void)arg;
    if (!last) {
        GSHMEMI_ERROR(SUB, "the doorbell ringer cannot start: out of memory");
        ib.failed = 1;
        return NULL;
    }
    while (!ib.stop) {
        int rang = 0;
        for (int i = 0; i < ib.n_qps; i++) {
            if (ib.qps[i].peer < 0) continue;
            const uint32_t *recp = ib.ring_rec ? ib.ring_rec[i] : &ib.dbr_host[i * DBR_WORDS + GSHMEMI_MLX5_DBR_SND];
            const uint32_t rec = __atomic_load_n(recp, __ATOMIC_ACQUIRE);
            if (rec == last[i]) continue;
            last[i] = rec;
            const uint64_t v = doorbell_value(ib.recs[i].qpn, (uint16_t)gshmemi_mlx5_be32(rec));
            if (ib.uar_db) ring_uar(v);
            else __atomic_store_n(&ib.db_page[i * (DB_STRIDE / 8)], v, __ATOMIC_RELEASE);
            rang = 1;
        }
        idle_step(&idle, rang);
    }
    free(last);
    return NULL;
}

/* The host thread that rings the doorbells (GSHMEM_IBGDA_DOORBELL=cpu). */
static int start_ringer(void)
{
    int err = pthread_create(&ib.ringer, NULL, ringer_main, NULL);
    if (err != 0) {
        GSHMEMI_ERROR(SUB, "cannot start the doorbell ringer's thread: %s", strerror(err));
        return GSHMEMI_ERR_SYSTEM;
    }
    ib.ringer_started = 1;
    return GSHMEMI_OK;
}

/* ---- the transport's life cycle ---- */

static int ibgda_init(gshmemi_transport_ctx_t *ctx, void *my_blob)
{
    ibgda_blob_t *b = (ibgda_blob_t *)my_blob;
    memset(&ib, 0, sizeof(ib));
    ib.ctx = ctx;
    ib.nic = gshmemi_env.IBGDA_NIC;
    ib.nqp = gshmemi_env.IBGDA_NUM_RC_PER_PE;
    ib.n_qps = ctx->n_pes * ib.nqp;
    for (int pe = 0; pe < ctx->n_pes; pe++)
        if (ctx->route[pe] == GSHMEMI_ROUTE_IBGDA) ib.serves = 1;
    b->heap_base = (uint64_t)(uintptr_t)ctx->heap->my_base;
    b->heap_size = ctx->heap->region;
    b->rkey = GSHMEMI_IBGDA_KEY_HEAP | (uint32_t)ctx->my_pe;
    b->pad = 0;
    ib.hw_job = ib.nic == GSHMEMI_NIC_HW && ctx->job_uses_ibgda_hw;
    if (ib.hw_job) {
        b->rkey = 0; /* a ConnectX's keys come with the heap's registration (register_chunk) */
        /* One key per peer in the device records: the heap is backed as one chunk. On every PE
         * of the job, so that the PEs of a host grow their heaps in the same steps (P2P maps
         * them collectively). */
        if (ctx->heap->cfg.growth_min < ctx->heap->region) {
            if (ctx->my_pe == 0)
                GSHMEMI_INFO(SUB, "IBGDA on a ConnectX: the heap is backed whole (%zu bytes) at the first allocation, not by "
                                  "GSHMEM_HEAP_GROWTH=%zu (the device path carries one key per peer)",
                             ctx->heap->region, ctx->heap->cfg.growth_min);
            ctx->heap->cfg.growth_min = ctx->heap->region;
        }
    }
    return GSHMEMI_OK;
}

int gshmemi_ibgda_hw_probe(int forced) { return gshmemi_ibgda_probe(forced); }

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

/* QP k of me -> pe: its record for the GPU and its emulated NIC. */
static int make_qp(int pe, int k, char *area, uint64_t *db_dev, uint32_t *dbr_dev, gshmemi_mlx5_cqe_t *cq_init)
{
    gshmemi_transport_ctx_t *ctx = ib.ctx;
    const int i = pe * ib.nqp + k;
    gshmemi_ibgda_qp_t *r = &ib.recs[i];
    emul_qp_t *q = &ib.qps[i];
    gshmemi_nic_emul_qp_cfg_t cfg;

    r->sq = area + OFF_SQ;
    r->sq_dbrec = ib.doorbell == GSHMEMI_DOORBELL_CPU ? dbr_dev + i * DBR_WORDS : (uint32_t *)(area + OFF_SQ_DBR);
    r->db = ib.doorbell == GSHMEMI_DOORBELL_CPU ? NULL : db_dev + i * (DB_STRIDE / 8);
    r->cq = area + OFF_CQ;
    r->cq_dbrec = (uint32_t *)(area + OFF_CQ_DBR);
    r->ctr = (unsigned long long *)(area + OFF_CTR);
    r->result = (uint64_t *)(area + OFF_RESULT);
    r->bbs = (uint8_t *)(area + OFF_BBS);
    r->sq_bbs = GSHMEMI_IBGDA_SQ_BBS;
    r->ncqe = GSHMEMI_IBGDA_NCQE;
    r->qpn = gshmemi_ibgda_qpn(ctx->my_pe, pe, k);
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
    cfg.sq_dbrec = ib.doorbell == GSHMEMI_DOORBELL_CPU ? ib.dbr_host + i * DBR_WORDS + GSHMEMI_MLX5_DBR_SND
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

/* The host copies of every QP's record and emulator state, [n_qps], no QP made yet (peer -1). */
static int alloc_qp_tables(void)
{
    ib.recs = calloc((size_t)ib.n_qps, sizeof(*ib.recs));
    ib.qps = calloc((size_t)ib.n_qps, sizeof(*ib.qps));
    if (!ib.recs || !ib.qps) return GSHMEMI_ERR_NOMEM;
    for (int i = 0; i < ib.n_qps; i++) ib.qps[i].peer = -1;
    return GSHMEMI_OK;
}

/* The records to the GPU and into the device state (before any kernel runs). */
static int publish_records(gshmemi_transport_ctx_t *ctx)
{
    GSHMEMI_CUDACHECK(cudaStreamCreateWithFlags(&ib.quiet_stream, cudaStreamNonBlocking));
    GSHMEMI_CUDACHECK(cudaMalloc((void **)&ib.d_recs, (size_t)ib.n_qps * sizeof(*ib.d_recs)));
    GSHMEMI_CUDACHECK(cudaMemcpy(ib.d_recs, ib.recs, (size_t)ib.n_qps * sizeof(*ib.d_recs), cudaMemcpyHostToDevice));
    *ctx->dev_ibgda = ib.d_recs;
    *ctx->dev_ibgda_nqp = (uint32_t)ib.nqp;
    return GSHMEMI_OK;
}

/* ---- GSHMEM_IBGDA_NIC=hw: a ConnectX through setup.c (NOT RUN ON A NIC) ---- */

#define HW_LOG_SQ_BBS 10 /* GSHMEMI_IBGDA_SQ_BBS */
#define HW_LOG_CQES 0    /* GSHMEMI_IBGDA_NCQE: collapsed, device/ibgda.cuh reads entry 0 only */
_Static_assert((1u << HW_LOG_SQ_BBS) == GSHMEMI_IBGDA_SQ_BBS && (1u << HW_LOG_CQES) == GSHMEMI_IBGDA_NCQE,
               "the ConnectX QPs have the emulated ones' sizes");

/* A dmabuf fd of [addr, addr+size) of GPU memory, or -1 (then memory is registered by address,
 * which needs a peer-memory module). */
static int dmabuf_of(void *addr, size_t size, const char *what)
{
    int fd = -1;
    CUresult cr = CUDA_ERROR_NOT_SUPPORTED;
    if (gshmemi_cu.cuMemGetHandleForAddressRange)
        cr = gshmemi_cu.cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)(uintptr_t)addr, size, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (cr == CUDA_SUCCESS) return fd;
    GSHMEMI_INFO(SUB, "%s (%zu bytes at %p): no dmabuf (cuMemGetHandleForAddressRange: %s); registered by address (needs nvidia-peermem)",
                 what, size, addr, gshmemi_cu_errstr(cr));
    return -1;
}

/* Registers GPU memory for the NIC (what = its name in messages): dmabuf first, else by address. */
static int hw_reg(void *addr, size_t size, const char *what, uint32_t *lkey, uint32_t *rkey)
{
    gshmemi_ibgda_mr_t *mr;
    int fd = dmabuf_of(addr, size, what), rc;
    rc = gshmemi_ibgda_reg_mr(ib.hw, addr, size, fd, 0, &mr, lkey, rkey); /* by address if the dmabuf fails */
    if (fd >= 0) close(fd); /* the MR holds its own reference */
    return rc; /* the MR is released by gshmemi_ibgda_close */
}

/* Opens the DEVX objects over the GPU allocation; the doorbell records in pinned host memory
 * when host_dbr (cpu doorbells). */
static int hw_open(const uint8_t *remote, int host_dbr)
{
    gshmemi_transport_ctx_t *ctx = ib.ctx;
    char *gpu = (char *)(uintptr_t)ib.va;
    gshmemi_ibgda_args_t a;
    int rc;

    memset(&a, 0, sizeof(a));
    a.my_pe = ctx->my_pe;
    a.n_pes = ctx->n_pes;
    a.n_rc = ib.nqp;
    a.remote = remote;
    a.log_sq_bbs = HW_LOG_SQ_BBS;
    a.log_cqes = HW_LOG_CQES;
    a.collapsed_cq = 1;
    a.wq = (gshmemi_ibgda_buf_t){gpu, ib.lay.wq_bytes, dmabuf_of(gpu, ib.lay.wq_bytes, "the SQs")};
    a.cq = (gshmemi_ibgda_buf_t){gpu + ib.off_cq, ib.lay.cq_bytes, dmabuf_of(gpu + ib.off_cq, ib.lay.cq_bytes, "the CQs")};
    if (host_dbr) {
        if (!ib.hw_dbr_host) {
            rc = cuda_ok(cudaHostAlloc((void **)&ib.hw_dbr_host, ib.lay.dbr_bytes, cudaHostAllocMapped | cudaHostAllocPortable),
                         "allocating the doorbell records in host memory");
            if (rc != GSHMEMI_OK) ib.hw_dbr_host = NULL;
            else memset(ib.hw_dbr_host, 0, ib.lay.dbr_bytes);
        }
        a.dbr = (gshmemi_ibgda_buf_t){ib.hw_dbr_host, ib.lay.dbr_bytes, -1};
    } else {
        a.dbr = (gshmemi_ibgda_buf_t){gpu + ib.off_dbr, ib.lay.dbr_bytes, dmabuf_of(gpu + ib.off_dbr, ib.lay.dbr_bytes, "the doorbell records")};
    }
    rc = host_dbr && !ib.hw_dbr_host ? GSHMEMI_ERR_CUDA : gshmemi_ibgda_open(&a, &ib.hw);
    if (a.wq.dmabuf_fd >= 0) close(a.wq.dmabuf_fd);
    if (a.cq.dmabuf_fd >= 0) close(a.cq.dmabuf_fd);
    if (a.dbr.dmabuf_fd >= 0) close(a.dbr.dmabuf_fd);
    return rc;
}

/* The UAR page mapped for the GPU: the doorbell register's device address, or NULL with why. */
static volatile uint64_t *hw_map_uar(char *why, size_t cap)
{
    void *page, *reg, *dpage = NULL;
    uint32_t id;
    const size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    cudaError_t err;

    gshmemi_ibgda_uar(ib.hw, &page, &reg, &id);
    err = cudaHostRegister(page, psz, cudaHostRegisterIoMemory | cudaHostRegisterMapped | cudaHostRegisterPortable);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, cap, "cudaHostRegister(IoMemory) of UAR page %u failed: %s (the GPU cannot map the doorbell page; "
                           "PeerMappingOverride=1 in the nvidia module's RegistryDwords may allow it)",
                 id, cudaGetErrorString(err));
        return NULL;
    }
    ib.uar_page = page;
    err = cudaHostGetDevicePointer(&dpage, page, 0);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, cap, "cudaHostGetDevicePointer of UAR page %u failed: %s", id, cudaGetErrorString(err));
        return NULL; /* finalize unregisters it */
    }
    return (volatile uint64_t *)((char *)dpage + ((char *)reg - (char *)page));
}

/* Every QP's collapsed CQ: its one entry invalid until the first completion. */
static int hw_init_cqs(void)
{
    gshmemi_mlx5_cqe_t cqe;
    gshmemi_mlx5_cqe_init(&cqe);
    for (int q = 0; q < gshmemi_ibgda_n_qps(ib.hw); q++) {
        gshmemi_ibgda_qp_info_t qi;
        gshmemi_ibgda_qp_info(ib.hw, q, &qi);
        GSHMEMI_CUDACHECK(cudaMemcpy((char *)(uintptr_t)ib.va + ib.off_cq + qi.cq_offset, &cqe, sizeof(cqe), cudaMemcpyHostToDevice));
    }
    return GSHMEMI_OK;
}

/* This PE's side when it serves some peer: GPU memory, the DEVX objects, the doorbell mode, the
 * device records (keys still 0) and the QP blob. */
static int hw_setup(const uint8_t *remote, int served, void *my_blob)
{
    const int asked = gshmemi_env.IBGDA_DOORBELL;
    char why[512] = "";
    volatile uint64_t *db_dev = NULL;
    char *gpu, *dbr_dev;
    gshmemi_ibgda_gpu_view_t v;
    uint32_t rkey_unused;

    GSHMEMI_CHECK(gshmemi_ibgda_layout(served * ib.nqp, HW_LOG_SQ_BBS, HW_LOG_CQES, &ib.lay));
    ib.aux_stride = gshmemi_ibgda_aux_bytes(1u << HW_LOG_SQ_BBS);
    ib.off_cq = ib.lay.wq_bytes;
    ib.off_dbr = ib.off_cq + ib.lay.cq_bytes;
    ib.off_aux = ib.off_dbr + ib.lay.dbr_bytes;
    GSHMEMI_CHECK(alloc_gpu(ib.off_aux + (size_t)served * ib.nqp * ib.aux_stride));
    gpu = (char *)(uintptr_t)ib.va;

    GSHMEMI_CHECK(hw_open(remote, asked == GSHMEMI_DOORBELL_CPU));
    if (asked != GSHMEMI_DOORBELL_CPU) db_dev = hw_map_uar(why, sizeof(why));
    else snprintf(why, sizeof(why), "not tried");
    GSHMEMI_CHECK(gshmemi_ibgda_doorbell_mode(asked, db_dev != NULL, why, &ib.doorbell));
    if (ib.doorbell == GSHMEMI_DOORBELL_CPU && asked != GSHMEMI_DOORBELL_CPU) {
        /* auto without a GPU mapping: the records move to host memory, so the QPs are made again */
        GSHMEMI_INFO(SUB, "remaking the QPs with their doorbell records in pinned host memory");
        if (ib.uar_page) cudaHostUnregister(ib.uar_page);
        ib.uar_page = NULL;
        gshmemi_ibgda_close(ib.hw);
        ib.hw = NULL;
        GSHMEMI_CHECK(hw_open(remote, 1));
    }
    GSHMEMI_CHECK(hw_init_cqs());

    dbr_dev = gpu + ib.off_dbr;
    if (ib.doorbell == GSHMEMI_DOORBELL_CPU) {
        void *page, *reg;
        uint32_t id;
        GSHMEMI_CUDACHECK(cudaHostGetDevicePointer((void **)&dbr_dev, ib.hw_dbr_host, 0));
        gshmemi_ibgda_uar(ib.hw, &page, &reg, &id);
        ib.uar_db = (volatile uint64_t *)reg;
        ib.ring_rec = calloc((size_t)ib.n_qps, sizeof(*ib.ring_rec));
        if (!ib.ring_rec) return GSHMEMI_ERR_NOMEM;
        for (int q = 0; q < gshmemi_ibgda_n_qps(ib.hw); q++) {
            gshmemi_ibgda_qp_info_t qi;
            gshmemi_ibgda_qp_info(ib.hw, q, &qi);
            ib.ring_rec[qi.peer * ib.nqp + qi.k] = ib.hw_dbr_host + qi.qp_dbr_offset / 4 + GSHMEMI_MLX5_DBR_SND;
        }
    }
    v.wq = gpu;
    v.cq = gpu + ib.off_cq;
    v.dbr = v.dbr_cq = dbr_dev;
    v.db = ib.doorbell == GSHMEMI_DOORBELL_GPU ? db_dev : NULL;
    v.aux = gpu + ib.off_aux;
    v.aux_stride = ib.aux_stride;
    if (gshmemi_ibgda_fill_records(ib.hw, &v, ib.recs) != served) {
        GSHMEMI_ERROR(SUB, "IBGDA: the setup made QPs for a number of peers other than the %d routed here", served);
        return GSHMEMI_ERR_STATE;
    }
    for (int i = 0; i < ib.n_qps; i++)
        if (remote[i / ib.nqp]) {
            ib.qps[i].peer = i / ib.nqp;
            ib.recs[i].raddr = ib.blobs[i / ib.nqp].heap_base;
        }
    /* the result words (atomics' old values, g) are what the NIC writes locally */
    GSHMEMI_CHECK(hw_reg(v.aux, (size_t)served * ib.nqp * ib.aux_stride, "the result words", &ib.result_lkey, &rkey_unused));
    for (int i = 0; i < ib.n_qps; i++)
        if (ib.qps[i].peer >= 0) ib.recs[i].result_lkey = ib.result_lkey;
    gshmemi_ibgda_blob(ib.hw, my_blob);
    return GSHMEMI_OK;
}

static int hw_connect(gshmemi_transport_ctx_t *ctx)
{
    const int n = ctx->n_pes, n_rc = ib.nqp;
    const size_t bs = gshmemi_ibgda_blob_size(n, n_rc);
    uint8_t *remote = calloc((size_t)n, 1);
    char *blobs = calloc((size_t)n, bs);
    int served = 0, rc = GSHMEMI_OK, arc;

    if (!remote || !blobs) rc = GSHMEMI_ERR_NOMEM;
    if (rc == GSHMEMI_OK) rc = alloc_qp_tables();
    for (int pe = 0; pe < n && rc == GSHMEMI_OK; pe++) {
        remote[pe] = ctx->route[pe] == GSHMEMI_ROUTE_IBGDA;
        served += remote[pe];
    }
    if (rc == GSHMEMI_OK && served) rc = hw_setup(remote, served, blobs + (size_t)ctx->my_pe * bs);
    /* collective even after a local failure: a PE that failed publishes no QPs (magic 0), and
     * its peers' connect names it */
    if (rc != GSHMEMI_OK && blobs) memset(blobs + (size_t)ctx->my_pe * bs, 0, bs);
    arc = blobs ? ctx->bs->allgather(ctx->bs, blobs, bs) : GSHMEMI_ERR_NOMEM;
    if (rc == GSHMEMI_OK) rc = arc;
    if (rc == GSHMEMI_OK && served) rc = gshmemi_ibgda_connect(ib.hw, blobs);
    free(remote);
    free(blobs);
    GSHMEMI_CHECK(rc);
    if (!served) return GSHMEMI_OK;

    GSHMEMI_CHECK(publish_records(ctx));
    ib.hw_done = calloc((size_t)ib.n_qps, sizeof(*ib.hw_done));
    if (!ib.hw_done) return GSHMEMI_ERR_NOMEM;
    if (ib.doorbell == GSHMEMI_DOORBELL_CPU) GSHMEMI_CHECK(start_ringer());
    GSHMEMI_INFO(SUB, "ConnectX: %d peers, %d QPs each, %u slots, collapsed CQs, doorbells rung by %s",
                 served, n_rc, 1u << HW_LOG_SQ_BBS, ib.doorbell == GSHMEMI_DOORBELL_CPU ? "a host thread" : "the GPU");
    return GSHMEMI_OK;
}

/* A heap chunk: registered (dmabuf first) where this PE serves a peer, the rkeys allgathered
 * (collective: the heap grows on every PE at once), and the chunk at offset 0's keys put into
 * the device records. The heap is one chunk (ibgda_init); a second one cannot be carried. */
static int hw_register_chunk(gshmemi_transport_ctx_t *ctx, const gshmemi_heap_chunk_t *chunk)
{
    const int n = ctx->n_pes;
    uint32_t *rkeys = calloc((size_t)n, sizeof(uint32_t)), lkey = 0;
    int rc = rkeys ? GSHMEMI_OK : GSHMEMI_ERR_NOMEM, arc;

    if (rc == GSHMEMI_OK && ib.hw) rc = hw_reg(chunk->addr, chunk->size, "a heap chunk", &lkey, &rkeys[ctx->my_pe]);
    if (rc != GSHMEMI_OK && rkeys) rkeys[ctx->my_pe] = 0;
    arc = rkeys ? ctx->bs->allgather(ctx->bs, rkeys, sizeof(uint32_t)) : GSHMEMI_ERR_NOMEM;
    if (rc == GSHMEMI_OK) rc = arc;
    if (rc == GSHMEMI_OK && ib.hw) {
        if (chunk->offset != 0) {
            GSHMEMI_ERROR(SUB, "IBGDA on a ConnectX: heap chunk [%zu, +%zu) has keys of its own, and the device path carries one key "
                               "per peer (the first chunk's)", chunk->offset, chunk->size);
            rc = GSHMEMI_ERR_UNSUPPORTED;
        }
        for (int i = 0; i < ib.n_qps && rc == GSHMEMI_OK; i++) {
            const int pe = ib.qps[i].peer;
            if (pe < 0) continue;
            if (rkeys[pe] == 0) {
                GSHMEMI_ERROR(SUB, "PE %d published no key for its heap (its registration failed: its log says why)", pe);
                rc = GSHMEMI_ERR_REMOTE;
                break;
            }
            ib.recs[i].lkey = lkey;
            ib.recs[i].buf_lkey = lkey; /* local buffers outside the heap are not registered: a WQE on one fails with a local protection error CQE */
            ib.recs[i].rkey = rkeys[pe];
        }
        if (rc == GSHMEMI_OK) /* before any kernel: the heap's first chunk is made at init */
            rc = cuda_ok(cudaMemcpy(ib.d_recs, ib.recs, (size_t)ib.n_qps * sizeof(*ib.d_recs), cudaMemcpyHostToDevice),
                         "updating the QP records' keys");
    }
    free(rkeys);
    return rc;
}

static int ibgda_register_chunk(gshmemi_transport_ctx_t *ctx, const gshmemi_heap_chunk_t *chunk)
{
    return ib.hw_job ? hw_register_chunk(ctx, chunk) : GSHMEMI_OK; /* the emulated keys cover each heap's whole region */
}

/* Host quiet on a ConnectX: every BB this PE's device code reserved is covered by the newest CQE
 * of its QP's collapsed CQ (read here, with the BB count of its WQE). Bounded by GSHMEM_PEER_TIMEOUT. */
static int hw_quiet(gshmemi_transport_ctx_t *ctx)
{
    const double deadline = gshmemi_now_s() + ctx->peer_timeout;
    for (int i = 0; i < ib.n_qps; i++) {
        const gshmemi_ibgda_qp_t *r = &ib.recs[i];
        const int pe = ib.qps[i].peer;
        unsigned long long ctr[2] = {0, 0};
        if (pe < 0) continue;
        GSHMEMI_CUDACHECK(cudaMemcpyAsync(&ctr[0], r->ctr + GSHMEMI_IBGDA_CTR_RESV, 8, cudaMemcpyDeviceToHost, ib.quiet_stream));
        GSHMEMI_CUDACHECK(cudaMemcpyAsync(&ctr[1], r->ctr + GSHMEMI_IBGDA_CTR_DONE, 8, cudaMemcpyDeviceToHost, ib.quiet_stream));
        GSHMEMI_CUDACHECK(cudaStreamSynchronize(ib.quiet_stream));
        if (ctr[1] > ib.hw_done[i]) ib.hw_done[i] = ctr[1];
        while (ib.hw_done[i] < ctr[0]) {
            gshmemi_mlx5_cqe_t cqe;
            uint8_t nbbs = 0;
            GSHMEMI_CUDACHECK(cudaMemcpyAsync(&cqe, r->cq, sizeof(cqe), cudaMemcpyDeviceToHost, ib.quiet_stream));
            GSHMEMI_CUDACHECK(cudaStreamSynchronize(ib.quiet_stream));
            const uint8_t op_own = cqe.bytes[GSHMEMI_MLX5_CQE_BYTES - 1];
            if (gshmemi_mlx5_cqe_is_error(op_own)) {
                const gshmemi_mlx5_err_info_t e = gshmemi_mlx5_err_decode(&cqe.err);
                char buf[GSHMEMI_MLX5_SYNDROME_BUF];
                GSHMEMI_ERROR(SUB, "quiet: a work request to PE %d failed: %s (syndrome 0x%02x, vendor syndrome 0x%02x), WQE %u, QP 0x%x", pe,
                              gshmemi_mlx5_syndrome_str(e.syndrome, buf), e.syndrome, e.vendor_err_synd, e.wqe_counter, e.qpn);
                return GSHMEMI_ERR_REMOTE;
            }
            if (gshmemi_mlx5_cqe_opcode(op_own) != GSHMEMI_MLX5_CQE_INVALID) {
                uint16_t idx;
                memcpy(&idx, &cqe.bytes[GSHMEMI_MLX5_CQE_BYTES - 4], 2);
                idx = gshmemi_mlx5_be16(idx);
                GSHMEMI_CUDACHECK(cudaMemcpyAsync(&nbbs, r->bbs + gshmemi_mlx5_sq_slot(idx, r->sq_bbs), 1, cudaMemcpyDeviceToHost, ib.quiet_stream));
                GSHMEMI_CUDACHECK(cudaStreamSynchronize(ib.quiet_stream));
                const unsigned long long d = gshmemi_ibgda_collapsed_done(ib.hw_done[i], idx, nbbs);
                if (d > ib.hw_done[i]) ib.hw_done[i] = d;
                if (ib.hw_done[i] >= ctr[0]) break;
            }
            if (gshmemi_now_s() > deadline) {
                GSHMEMI_ERROR(SUB, "quiet: %llu of %llu basic blocks to PE %d completed after GSHMEM_PEER_TIMEOUT=%g s", ib.hw_done[i],
                              ctr[0], pe, ctx->peer_timeout);
                return GSHMEMI_ERR_TIMEOUT;
            }
            sched_yield();
        }
    }
    return GSHMEMI_OK;
}

/* What hw_connect made that finalize's common part does not release, before the GPU memory the
 * umems cover goes. */
static void hw_release(void)
{
    if (ib.uar_page) cudaHostUnregister(ib.uar_page);
    gshmemi_ibgda_close(ib.hw);
    if (ib.hw_dbr_host) cudaFreeHost(ib.hw_dbr_host);
    free(ib.ring_rec);
    free(ib.hw_done);
}

static int ibgda_connect(gshmemi_transport_ctx_t *ctx, const void *blobs)
{
    const int n = ctx->n_pes;
    int served = 0, slot = 0, rc;
    int *serve;
    gshmemi_mlx5_cqe_t *cq_init;
    uint64_t *db_dev = NULL;
    uint32_t *dbr_dev = NULL;

    if (ib.hw_job) {
        ib.blobs = calloc((size_t)n, sizeof(*ib.blobs));
        if (!ib.blobs) return GSHMEMI_ERR_NOMEM;
        memcpy(ib.blobs, blobs, (size_t)n * sizeof(*ib.blobs));
        return hw_connect(ctx);
    }
    if (!ib.serves) return GSHMEMI_OK;
    GSHMEMI_CHECK(gshmemi_ibgda_doorbell_mode(gshmemi_env.IBGDA_DOORBELL, 1, NULL, &ib.doorbell));
    ib.blobs = calloc((size_t)n, sizeof(*ib.blobs));
    serve = calloc((size_t)n, sizeof(int));
    cq_init = malloc(GSHMEMI_IBGDA_NCQE * sizeof(*cq_init));
    if (!ib.blobs || !serve || !cq_init || alloc_qp_tables() != GSHMEMI_OK) {
        free(serve);
        free(cq_init);
        return GSHMEMI_ERR_NOMEM;
    }
    memcpy(ib.blobs, blobs, (size_t)n * sizeof(*ib.blobs));
    for (int pe = 0; pe < n; pe++) {
        serve[pe] = ctx->route[pe] == GSHMEMI_ROUTE_IBGDA;
        served += serve[pe];
    }
    for (unsigned i = 0; i < GSHMEMI_IBGDA_NCQE; i++) gshmemi_mlx5_cqe_init(&cq_init[i]);

    rc = gshmemi_proxy_backend_copy.open(ctx, &ib.copy, NULL);
    if (rc == GSHMEMI_OK) rc = gshmemi_proxy_backend_copy.connect(ib.copy, NULL, serve);
    if (rc == GSHMEMI_OK) rc = alloc_gpu((size_t)served * ib.nqp * QP_AREA);
    if (rc == GSHMEMI_OK) rc = cuda_ok(cudaHostAlloc((void **)&ib.db_page, (size_t)ib.n_qps * DB_STRIDE, cudaHostAllocMapped | cudaHostAllocPortable),
                                       "allocating the doorbell page");
    if (rc == GSHMEMI_OK) {
        memset(ib.db_page, 0, (size_t)ib.n_qps * DB_STRIDE);
        rc = cuda_ok(cudaHostGetDevicePointer((void **)&db_dev, ib.db_page, 0), "mapping the doorbell page for the GPU");
    }
    if (rc == GSHMEMI_OK && ib.doorbell == GSHMEMI_DOORBELL_CPU) {
        const size_t bytes = (size_t)ib.n_qps * DBR_WORDS * sizeof(uint32_t);
        rc = cuda_ok(cudaHostAlloc((void **)&ib.dbr_host, bytes, cudaHostAllocMapped | cudaHostAllocPortable), "allocating the doorbell records");
        if (rc == GSHMEMI_OK) {
            memset(ib.dbr_host, 0, bytes);
            rc = cuda_ok(cudaHostGetDevicePointer((void **)&dbr_dev, ib.dbr_host, 0), "mapping the doorbell records for the GPU");
        }
    }
    for (int pe = 0; pe < n && rc == GSHMEMI_OK; pe++)
        for (int k = 0; k < ib.nqp && serve[pe] && rc == GSHMEMI_OK; k++)
            rc = make_qp(pe, k, (char *)(uintptr_t)ib.va + (size_t)slot++ * QP_AREA, db_dev, dbr_dev, cq_init);
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

    GSHMEMI_CHECK(publish_records(ctx));

    int err = pthread_create(&ib.thread, NULL, nic_main, NULL);
    if (err != 0) {
        GSHMEMI_ERROR(SUB, "cannot start the emulated NIC's thread: %s", strerror(err)); /* pthread_create returns its error */
        return GSHMEMI_ERR_SYSTEM;
    }
    ib.thread_started = 1;
    if (ib.doorbell == GSHMEMI_DOORBELL_CPU) GSHMEMI_CHECK(start_ringer());
    GSHMEMI_INFO(SUB, "%s NIC: %d peers x %d QPs of %u slots, doorbell registers in pinned host memory, rung by %s",
                 ib.nic == GSHMEMI_NIC_NULL ? "null" : "emulated", served, ib.nqp, GSHMEMI_IBGDA_SQ_BBS,
                 ib.doorbell == GSHMEMI_DOORBELL_CPU ? "a host thread (doorbell records in pinned host memory)" : "the GPU");
    return GSHMEMI_OK;
}

/* Every WQE this PE's device code reserved so far is executed (its CQE written): the GPU's
 * reservation counters (read on a stream of the application's context that no kernel waits on)
 * against what the NIC thread executed. Bounded by GSHMEM_PEER_TIMEOUT. */
static int ibgda_quiet(gshmemi_transport_ctx_t *ctx)
{
    if (ib.hw && ib.hw_done) return hw_quiet(ctx);
    if (!ib.thread_started) return GSHMEMI_OK;
    const double deadline = gshmemi_now_s() + ctx->peer_timeout;
    for (int i = 0; i < ib.n_qps; i++) {
        unsigned long long want = 0;
        const int pe = ib.qps[i].peer;
        if (pe < 0) continue;
        GSHMEMI_CUDACHECK(cudaMemcpyAsync(&want, ib.recs[i].ctr + GSHMEMI_IBGDA_CTR_RESV, sizeof(want), cudaMemcpyDeviceToHost,
                                          ib.quiet_stream));
        GSHMEMI_CUDACHECK(cudaStreamSynchronize(ib.quiet_stream));
        while (__atomic_load_n(&ib.qps[i].executed, __ATOMIC_ACQUIRE) < want) {
            if (ib.failed) {
                GSHMEMI_ERROR(SUB, "quiet: the emulated NIC failed (logged above); work to PE %d is not complete", pe);
                return GSHMEMI_ERR_REMOTE;
            }
            if (gshmemi_now_s() > deadline) {
                GSHMEMI_ERROR(SUB, "quiet: %llu of %llu work requests to PE %d executed after GSHMEM_PEER_TIMEOUT=%g s",
                              (unsigned long long)ib.qps[i].executed, want, pe, ctx->peer_timeout);
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
    hw_release();
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
    for (int i = 0; ib.qps && i < ib.n_qps; i++)
        if (ib.qps[i].peer >= 0) gshmemi_nic_emul_qp_fini(&ib.qps[i].emu); /* zeroed on hw: nothing to free */
    free(ib.qps);
    memset(&ib, 0, sizeof(ib));
    return GSHMEMI_OK;
}

/* Host-initiated operations: through the heap mapping, as the proxy's copy engine does. */
const gshmemi_transport_t gshmemi_transport_ibgda = {
    GSHMEMI_TRANSPORT_LIFE_CYCLE(ibgda),
    .blob_size = sizeof(ibgda_blob_t),
    .quiet = ibgda_quiet,
    .progress = NULL, /* the NIC thread makes progress */
    GSHMEMI_MAPPED_HOST_OPS,
};
