/* The proxy's ibverbs RC backend: one reliable-connected QP per peer on another host, every heap
 * chunk registered with the NIC (dmabuf, else a peer-memory module), RDMA WRITE/READ for data and
 * IB atomics (8-byte fetch-add and compare-swap; everything else a compare-swap loop).
 *
 * libibverbs is reached through dlopen (transports/common/ibv_lib.c) so that libgshmem loads on hosts
 * without rdma-core; only the headers are needed to build. ibv_post_send and ibv_poll_cq are
 * inline calls through the context's ops, so they need no symbol.
 *
 * Ordering: one RC QP per peer executes its work in order; an atomic that follows a write to the
 * same peer carries IBV_SEND_FENCE, so a signal lands after its data. NIC atomics are atomic with
 * respect to other NIC atomics on the word, not to the target GPU's own atomic instructions (they
 * are read-modify-writes over PCIe): common/backend.h asks more than a NIC gives.
 *
 * Not yet run on a NIC: no machine it was written on has one. */
#include "verbs.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../runtime/base/clock.h"
#include "../../runtime/base/env.h"
#include "../../runtime/base/log.h"
#include "../common/ibv_lib.h"
#include "../common/backend.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the verbs backend assumes a little-endian host (the 4-byte fields of an 8-byte atomic word)"
#endif

#define SUB "verbs"

/* ---------------------------------------------------------------- pure parts */

void gshmemi_verbs_set_library_for_test(const char *name) { gshmemi_ibv_set_library_for_test(name); }

void gshmemi_verbs_blob_pack(const gshmemi_verbs_blob_t *in, void *out) { memcpy(out, in, sizeof(*in)); }

int gshmemi_verbs_blob_unpack(const void *in, int pe, gshmemi_verbs_blob_t *out)
{
    memcpy(out, in, sizeof(*out));
    return gshmemi_ib_addr_check(out, GSHMEMI_VERBS_BLOB_MAGIC, SUB, "verbs", "verbs backend", pe);
}

int gshmemi_verbs_rkey_lookup(const gshmemi_verbs_rkey_t *table, int n_chunks, int n_pes, int pe, uint64_t off,
                              uint64_t *raddr, uint32_t *rkey, uint64_t *avail)
{
    int c;
    if (pe < 0 || pe >= n_pes) return GSHMEMI_ERR_INVALID;
    for (c = 0; c < n_chunks; c++) {
        const gshmemi_verbs_rkey_t *k = &table[(size_t)c * n_pes + pe];
        if (k->size && off >= k->offset && off - k->offset < k->size) {
            *raddr = k->addr + (off - k->offset);
            *rkey = k->rkey;
            *avail = k->size - (off - k->offset);
            return GSHMEMI_OK;
        }
    }
    return GSHMEMI_ERR_INVALID;
}

int gshmemi_verbs_region_find(const gshmemi_verbs_region_t *regs, int n, const void *p, size_t *avail)
{
    uintptr_t a = (uintptr_t)p;
    int i;
    for (i = 0; i < n; i++) {
        if (regs[i].size && a >= regs[i].addr && a - regs[i].addr < regs[i].size) {
            *avail = regs[i].size - (a - regs[i].addr);
            return i;
        }
    }
    return -1;
}

int gshmemi_verbs_parse_device(const char *text, char *name, size_t cap, int *port)
{
    return gshmemi_ibv_parse_device(SUB, text, name, cap, port);
}

uint64_t gshmemi_verbs_amo_apply(int op, size_t width, unsigned shift, uint64_t word, uint64_t value, uint64_t cond)
{
    uint64_t mask = width == 8 ? ~0ull : ((1ull << (8 * width)) - 1);
    uint64_t cur = (word >> shift) & mask, res;
    switch (op) {
    case GSHMEMI_AMO_SET:
    case GSHMEMI_AMO_SWAP: res = value; break;
    case GSHMEMI_AMO_CSWAP: res = cur == (cond & mask) ? value : cur; break;
    case GSHMEMI_AMO_ADD:
    case GSHMEMI_AMO_FETCH_ADD: res = cur + value; break;
    case GSHMEMI_AMO_AND:
    case GSHMEMI_AMO_FETCH_AND: res = cur & value; break;
    case GSHMEMI_AMO_OR:
    case GSHMEMI_AMO_FETCH_OR: res = cur | value; break;
    case GSHMEMI_AMO_XOR:
    case GSHMEMI_AMO_FETCH_XOR: res = cur ^ value; break;
    default: res = cur; break; /* FETCH */
    }
    return (word & ~(mask << shift)) | ((res & mask) << shift);
}

const char *gshmemi_verbs_op_name(int kind)
{
    switch (kind) {
    case GSHMEMI_VERBS_OP_WRITE: return "RDMA WRITE";
    case GSHMEMI_VERBS_OP_WRITE_INLINE: return "RDMA WRITE (inline value)";
    case GSHMEMI_VERBS_OP_READ: return "RDMA READ";
    case GSHMEMI_VERBS_OP_FETCH_ADD: return "ATOMIC FETCH_ADD";
    case GSHMEMI_VERBS_OP_CMP_SWAP: return "ATOMIC CMP_SWAP";
    default: return "unknown work request";
    }
}

char *gshmemi_verbs_cqe_message(char *buf, size_t cap, int kind, int pe, const char *status_str, int status,
                                uint32_t vendor_err)
{
    snprintf(buf, cap, "%s %s PE %d failed: %s (status %d, vendor error 0x%x)", gshmemi_verbs_op_name(kind),
             kind == GSHMEMI_VERBS_OP_READ ? "from" : (kind >= GSHMEMI_VERBS_OP_FETCH_ADD ? "on" : "to"), pe,
             status_str ? status_str : "unknown status", status, vendor_err);
    return buf;
}

/* ---------------------------------------------------------------- state */

#define SQ_DEPTH 256        /* send WRs in flight per QP; post waits by polling beyond it */
#define MAX_INLINE 64       /* asked of each QP; put_value needs 8 */
#define N_SLOTS 1024        /* 8-byte landing slots of atomics (their old value) */
#define REG_CACHE_MAX 64    /* non-heap buffers kept registered */
#define CQ_BATCH 32

typedef struct {
    struct ibv_qp *qp;
    int served;
    int outstanding;        /* WRs posted and not completed */
    int write_since_fence;  /* a WRITE posted since the last fenced atomic */
    int error;              /* sticky: the first failure on this QP */
    int flushed;            /* WRs flushed after the error (reported once) */
    gshmemi_verbs_blob_t info;
} peer_t;

typedef struct {
    int in_use, done;
    uint64_t *fetched;      /* where the old value goes (NULL: nowhere) */
    unsigned shift;
    size_t width;
} slot_t;

struct gshmemi_proxy_backend {
    gshmemi_transport_ctx_t *ctx;
    struct ibv_context *ibctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    int cq_depth;
    uint8_t port;
    char devname[GSHMEMI_VERBS_NAME_MAX];
    struct ibv_port_attr pattr;
    struct ibv_device_attr dattr;
    gshmemi_verbs_blob_t me;
    peer_t *peers;             /* [n_pes] */
    int in_flight;             /* sum of peers' outstanding */
    int error;                 /* sticky: first failure of any peer */
    /* atomics' landing slots: pinned host memory registered once */
    uint64_t *slot_buf;
    struct ibv_mr *slot_mr;
    slot_t slots[N_SLOTS];
    int next_slot;
    /* remote keys: [n_chunks][n_pes] */
    gshmemi_verbs_rkey_t *rkeys;
    int n_chunks;
    /* guards rkeys and regions: register_chunk runs on shmem_malloc's thread, the rest on the
     * proxy thread */
    pthread_mutex_t lock;
    int lock_made;
    /* local registrations: heap chunks and cached buffers */
    gshmemi_verbs_region_t *regions;
    int n_regions, cap_regions, n_cached;
};

#define IBV_ACCESS_ALL                                                                            \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* ---------------------------------------------------------------- open */

static void verbs_close(gshmemi_proxy_backend_t *be);
static int drain(gshmemi_proxy_backend_t *be);

static struct ibv_context *open_plain(void *arg, struct ibv_device *dev, const char *name, char *why, size_t cap)
{
    struct ibv_context *c = gshmemi_ibv.open_device(dev);
    (void)arg;
    if (!c) snprintf(why, cap, "%s: ibv_open_device failed: %s", name, strerror(errno));
    return c;
}

static int open_device(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_backend_t **out, void *my_blob)
{
    char want[GSHMEMI_VERBS_NAME_MAX];
    int want_port, err;
    gshmemi_ibv_found_t found;
    gshmemi_proxy_backend_t *be;
    union ibv_gid gid;

    *out = NULL;
    GSHMEMI_CHECK(gshmemi_verbs_parse_device(gshmemi_env.IB_DEVICE, want, sizeof(want), &want_port));
    GSHMEMI_CHECK(gshmemi_ibv_load(SUB, "verbs backend"));

    gshmemi_ibv_find_device(want, want_port, open_plain, NULL, &found);
    if (!found.ctx) {
        if (want[0] && !found.named_found) {
            GSHMEMI_ERROR(SUB, "GSHMEM_IB_DEVICE=%s: no such RDMA device on this host (devices present: %s%s)",
                          gshmemi_env.IB_DEVICE, found.present, found.none_cause);
            return GSHMEMI_ERR_INVALID;
        }
        if (want[0]) {
            GSHMEMI_ERROR(SUB, "GSHMEM_IB_DEVICE=%s: no usable port (%s)", gshmemi_env.IB_DEVICE, found.why);
            return GSHMEMI_ERR_SYSTEM;
        }
        if (!found.listed)
            GSHMEMI_INFO(SUB, "no RDMA device on this host (libibverbs lists none%s): no verbs backend", found.none_cause);
        else
            GSHMEMI_INFO(SUB, "no RDMA device with an active port (%s): no verbs backend", found.why);
        return GSHMEMI_ERR_UNSUPPORTED;
    }

    be = calloc(1, sizeof(*be));
    if (!be) {
        gshmemi_ibv.close_device(found.ctx);
        GSHMEMI_ERROR(SUB, "out of host memory for the verbs backend");
        return GSHMEMI_ERR_NOMEM;
    }
    be->ctx = ctx;
    be->ibctx = found.ctx;
    be->port = found.port;
    snprintf(be->devname, sizeof(be->devname), "%s", found.name);
    *out = be;
    if ((err = pthread_mutex_init(&be->lock, NULL)) != 0) {
        GSHMEMI_ERROR(SUB, "pthread_mutex_init failed: %s", strerror(err));
        return GSHMEMI_ERR_SYSTEM;
    }
    be->lock_made = 1;

    GSHMEMI_CHECK(gshmemi_ibv_query_attrs(SUB, be->ibctx, be->devname, be->port, &be->dattr, &be->pattr, &gid));
    be->pd = gshmemi_ibv.alloc_pd(be->ibctx);
    if (!be->pd) {
        GSHMEMI_ERROR(SUB, "%s: ibv_alloc_pd failed: %s", be->devname, strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    be->peers = calloc((size_t)ctx->n_pes, sizeof(*be->peers));
    be->slot_buf = aligned_alloc(64, N_SLOTS * sizeof(uint64_t));
    if (!be->peers || !be->slot_buf) {
        GSHMEMI_ERROR(SUB, "out of host memory for the verbs backend (%d PEs)", ctx->n_pes);
        return GSHMEMI_ERR_NOMEM;
    }
    memset(be->slot_buf, 0, N_SLOTS * sizeof(uint64_t));
    be->slot_mr = gshmemi_ibv.reg_mr(be->pd, be->slot_buf, N_SLOTS * sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE);
    if (!be->slot_mr) {
        GSHMEMI_ERROR(SUB, "%s: ibv_reg_mr of the %zu-byte atomic landing buffer failed: %s", be->devname,
                      N_SLOTS * sizeof(uint64_t), strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }

    /* any 24-bit PSN; distinct ones help packet traces */
    gshmemi_ib_addr_make(&be->me, GSHMEMI_VERBS_BLOB_MAGIC, 0x1000u + (uint32_t)ctx->my_pe, be->port, &be->pattr, &gid);
    gshmemi_verbs_blob_pack(&be->me, my_blob);
    GSHMEMI_INFO(SUB, "opened %s port %d (%s, LID %u, MTU %d, atomics %s)", be->devname, be->port,
                 be->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand", be->pattr.lid,
                 128 << be->pattr.active_mtu, be->dattr.atomic_cap == IBV_ATOMIC_NONE ? "none" : "yes");
    return GSHMEMI_OK;
}

/* A failed open releases what it made itself: *be is NULL then, and close(NULL) does nothing. */
static int verbs_open(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_backend_t **be, void *my_blob)
{
    int rc = open_device(ctx, be, my_blob);
    if (rc != GSHMEMI_OK) {
        verbs_close(*be);
        *be = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------- connect */

static int qp_to_rts(gshmemi_proxy_backend_t *be, int pe, uint32_t remote_qpn)
{
    peer_t *p = &be->peers[pe];
    struct ibv_qp_attr a;
    int rc, rd_atom = be->dattr.max_qp_rd_atom > 0 ? be->dattr.max_qp_rd_atom : 1;
    int rd_init = be->dattr.max_qp_init_rd_atom > 0 ? be->dattr.max_qp_init_rd_atom : 1;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = be->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                        IBV_ACCESS_REMOTE_ATOMIC;
    rc = gshmemi_ibv.modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc) {
        GSHMEMI_ERROR(SUB, "QP to PE %d: ibv_modify_qp to INIT failed: %s", pe, strerror(rc));
        return GSHMEMI_ERR_SYSTEM;
    }

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)gshmemi_ib_path_mtu(&be->me, &p->info);
    a.dest_qp_num = remote_qpn;
    a.rq_psn = p->info.psn;
    a.max_dest_rd_atomic = (uint8_t)(rd_atom > 16 ? 16 : rd_atom);
    a.min_rnr_timer = 12;
    gshmemi_ib_ah_attr(&be->me, &p->info, &a.ah_attr);
    rc = gshmemi_ibv.modify_qp(p->qp, &a,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc) {
        GSHMEMI_ERROR(SUB, "QP to PE %d (its QP number %u, LID %u, port %u): ibv_modify_qp to RTR failed: %s", pe,
                      remote_qpn, p->info.lid, p->info.port, strerror(rc));
        return GSHMEMI_ERR_SYSTEM;
    }

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = be->me.psn;
    a.timeout = 14;   /* 4.096 us * 2^14 = 67 ms per retry */
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = (uint8_t)(rd_init > 16 ? 16 : rd_init);
    rc = gshmemi_ibv.modify_qp(p->qp, &a,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc) {
        GSHMEMI_ERROR(SUB, "QP to PE %d: ibv_modify_qp to RTS failed: %s", pe, strerror(rc));
        return GSHMEMI_ERR_SYSTEM;
    }
    return GSHMEMI_OK;
}

static int verbs_connect(gshmemi_proxy_backend_t *be, const void *blobs, const int *serve)
{
    gshmemi_transport_ctx_t *ctx = be->ctx;
    int n = ctx->n_pes, me = ctx->my_pe, pe, n_served = 0, rc = GSHMEMI_OK;
    uint32_t *qpns;
    struct ibv_qp_init_attr ia;

    for (pe = 0; pe < n; pe++) n_served += pe != me && serve[pe];
    /* every PE's array of QP numbers, [n][n]: row j is what PE j created for each peer */
    qpns = calloc((size_t)n * n, sizeof(uint32_t));
    if (!qpns) {
        GSHMEMI_ERROR(SUB, "out of host memory for %d PEs' QP numbers", n);
        return GSHMEMI_ERR_NOMEM; /* the peers' allgather then times out, naming this PE */
    }
    if (n_served) {
        be->cq_depth = n_served * SQ_DEPTH;
        if (be->dattr.max_cqe > 0 && be->cq_depth > be->dattr.max_cqe) be->cq_depth = be->dattr.max_cqe;
        be->cq = gshmemi_ibv.create_cq(be->ibctx, be->cq_depth, NULL, NULL, 0);
        if (!be->cq) {
            GSHMEMI_ERROR(SUB, "%s: ibv_create_cq(%d entries) failed: %s", be->devname, be->cq_depth, strerror(errno));
            rc = GSHMEMI_ERR_SYSTEM;
        }
    }
    for (pe = 0; pe < n && rc == GSHMEMI_OK; pe++) {
        peer_t *p = &be->peers[pe];
        if (pe == me || !serve[pe]) continue;
        rc = gshmemi_verbs_blob_unpack((const char *)blobs + (size_t)pe * GSHMEMI_VERBS_BLOB_SIZE, pe, &p->info);
        if (rc) break;
        rc = gshmemi_ib_addr_joinable(&be->me, &p->info, SUB, pe);
        if (rc) break;
        memset(&ia, 0, sizeof(ia));
        ia.send_cq = be->cq;
        ia.recv_cq = be->cq;
        ia.qp_type = IBV_QPT_RC;
        ia.sq_sig_all = 1; /* every WR completes: the CQ counts what is in flight per peer */
        ia.cap.max_send_wr = SQ_DEPTH;
        ia.cap.max_recv_wr = 1;
        ia.cap.max_send_sge = 1;
        ia.cap.max_recv_sge = 1;
        ia.cap.max_inline_data = MAX_INLINE;
        p->qp = gshmemi_ibv.create_qp(be->pd, &ia);
        if (!p->qp) {
            GSHMEMI_ERROR(SUB, "%s: ibv_create_qp (RC) for PE %d failed: %s", be->devname, pe, strerror(errno));
            rc = GSHMEMI_ERR_SYSTEM;
            break;
        }
        if (ia.cap.max_inline_data < 8) {
            GSHMEMI_ERROR(SUB, "%s: the QP for PE %d holds %u inline bytes; put_value needs 8", be->devname, pe,
                          ia.cap.max_inline_data);
            rc = GSHMEMI_ERR_UNSUPPORTED;
            break;
        }
        p->served = 1;
        qpns[(size_t)me * n + pe] = p->qp->qp_num;
    }
    /* collective even after a local failure, so peers do not wait for this PE */
    {
        int arc = ctx->bs->allgather(ctx->bs, qpns, (size_t)n * sizeof(uint32_t));
        if (arc != GSHMEMI_OK && rc == GSHMEMI_OK) {
            GSHMEMI_ERROR(SUB, "exchanging QP numbers over the bootstrap failed: %s", gshmemi_strerror(arc));
            rc = arc;
        }
    }
    for (pe = 0; pe < n && rc == GSHMEMI_OK; pe++) {
        uint32_t remote = qpns[(size_t)pe * n + me];
        if (!be->peers[pe].served) continue;
        if (remote == 0) {
            GSHMEMI_ERROR(SUB, "PE %d made no QP for this PE (its proxy does not reach this PE by verbs)", pe);
            rc = GSHMEMI_ERR_REMOTE;
            break;
        }
        rc = qp_to_rts(be, pe, remote);
    }
    free(qpns);
    if (rc == GSHMEMI_OK) GSHMEMI_INFO(SUB, "%d RC QP(s) connected on %s port %d", n_served, be->devname, be->port);
    return rc;
}

/* ---------------------------------------------------------------- registration */

static int add_region(gshmemi_proxy_backend_t *be, uintptr_t addr, size_t size, struct ibv_mr *mr, int kind,
                      uint64_t buffer_id)
{
    gshmemi_verbs_region_t *g;
    if (be->n_regions == be->cap_regions) {
        int cap = be->cap_regions ? 2 * be->cap_regions : 16;
        gshmemi_verbs_region_t *r = realloc(be->regions, (size_t)cap * sizeof(*r));
        if (!r) {
            GSHMEMI_ERROR(SUB, "out of host memory for %d registrations", cap);
            return GSHMEMI_ERR_NOMEM;
        }
        be->regions = r;
        be->cap_regions = cap;
    }
    g = &be->regions[be->n_regions++];
    g->addr = addr;
    g->size = size;
    g->lkey = mr->lkey;
    g->kind = kind;
    g->buffer_id = buffer_id;
    g->mr = mr;
    if (kind != GSHMEMI_VERBS_REG_HEAP) be->n_cached++;
    return GSHMEMI_OK;
}

/* Deregisters region i; nothing in flight may use it (the caller drained). */
static void drop_region(gshmemi_proxy_backend_t *be, int i)
{
    int rc = gshmemi_ibv.dereg_mr(be->regions[i].mr);
    if (rc) GSHMEMI_WARN(SUB, "ibv_dereg_mr of the buffer at %p failed: %s", (void *)be->regions[i].addr, strerror(rc));
    if (be->regions[i].kind != GSHMEMI_VERBS_REG_HEAP) be->n_cached--;
    memmove(&be->regions[i], &be->regions[i + 1], (size_t)(be->n_regions - i - 1) * sizeof(*be->regions));
    be->n_regions--;
}

/* Registers device memory [addr, addr+size): dmabuf first, else through a peer-memory module
 * (nvidia-peermem). NULL after logging both reasons. */
static struct ibv_mr *reg_device(gshmemi_proxy_backend_t *be, void *addr, size_t size, const char *what)
{
    char why[256] = "";
    struct ibv_mr *mr = NULL;
    int fd = -1;

    if (!gshmemi_ibv.reg_dmabuf_mr) {
        snprintf(why, sizeof(why), "libibverbs has no ibv_reg_dmabuf_mr (rdma-core older than 34)");
    } else if (!gshmemi_cu.cuMemGetHandleForAddressRange) {
        snprintf(why, sizeof(why), "the CUDA driver entry points are not loaded");
    } else {
        CUresult cr = gshmemi_cu.cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)addr, size,
                                                               CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
        if (cr != CUDA_SUCCESS) {
            snprintf(why, sizeof(why), "cuMemGetHandleForAddressRange(DMA_BUF_FD) failed: %s", gshmemi_cu_errstr(cr));
        } else {
            mr = gshmemi_ibv.reg_dmabuf_mr(be->pd, 0, size, (uint64_t)(uintptr_t)addr, fd, IBV_ACCESS_ALL);
            if (!mr) snprintf(why, sizeof(why), "ibv_reg_dmabuf_mr failed: %s", strerror(errno));
            close(fd); /* the MR holds its own reference */
        }
    }
    if (mr) return mr;
    GSHMEMI_INFO(SUB, "%s (%zu bytes at %p): no dmabuf registration (%s); trying ibv_reg_mr (needs nvidia-peermem)",
                 what, size, addr, why);
    mr = gshmemi_ibv.reg_mr(be->pd, addr, size, IBV_ACCESS_ALL);
    if (!mr)
        GSHMEMI_ERROR(SUB, "%s (%zu bytes at %p) cannot be registered with %s: dmabuf: %s; ibv_reg_mr: %s (load the nvidia-peermem module, or use a kernel and driver with dmabuf support)",
                      what, size, addr, be->devname, why, strerror(errno));
    return mr;
}

/* The keys are exchanged into a row of their own and added to the table under the lock: the
 * proxy thread may be looking keys up meanwhile (the heap grows from shmem_malloc's thread). */
static int verbs_register_chunk(gshmemi_proxy_backend_t *be, const gshmemi_heap_chunk_t *chunk)
{
    gshmemi_transport_ctx_t *ctx = be->ctx;
    int n = ctx->n_pes, rc = GSHMEMI_OK, arc;
    struct ibv_mr *mr;
    gshmemi_verbs_rkey_t *row, *t;

    row = calloc((size_t)n, sizeof(*row));
    if (!row) {
        GSHMEMI_ERROR(SUB, "out of host memory for the keys of %d PEs", n);
        return GSHMEMI_ERR_NOMEM; /* the peers' allgather then fails, naming this PE */
    }
    mr = reg_device(be, chunk->addr, chunk->size, "heap chunk");
    if (!mr) {
        rc = GSHMEMI_ERR_SYSTEM;
    } else {
        row[ctx->my_pe].offset = chunk->offset;
        row[ctx->my_pe].size = chunk->size;
        row[ctx->my_pe].addr = (uint64_t)(uintptr_t)chunk->addr;
        row[ctx->my_pe].rkey = mr->rkey;
    }
    /* collective even after a local failure; an empty entry makes ops to this chunk fail clearly */
    arc = ctx->bs->allgather(ctx->bs, row, sizeof(*row));
    if (arc != GSHMEMI_OK && rc == GSHMEMI_OK) {
        GSHMEMI_ERROR(SUB, "exchanging the keys of heap chunk [%zu, +%zu) failed: %s", chunk->offset, chunk->size,
                      gshmemi_strerror(arc));
        rc = arc;
    }
    pthread_mutex_lock(&be->lock);
    t = realloc(be->rkeys, (size_t)(be->n_chunks + 1) * n * sizeof(*t));
    if (!t) {
        GSHMEMI_ERROR(SUB, "out of host memory for the keys of %d chunks", be->n_chunks + 1);
        if (rc == GSHMEMI_OK) rc = GSHMEMI_ERR_NOMEM;
    } else {
        be->rkeys = t;
        memcpy(&t[(size_t)be->n_chunks * n], row, (size_t)n * sizeof(*row));
        be->n_chunks++;
    }
    if (mr) {
        int r2 = t ? add_region(be, (uintptr_t)chunk->addr, chunk->size, mr, GSHMEMI_VERBS_REG_HEAP, 0)
                   : GSHMEMI_ERR_NOMEM;
        if (r2 != GSHMEMI_OK) {
            gshmemi_ibv.dereg_mr(mr);
            if (rc == GSHMEMI_OK) rc = r2;
        }
    }
    pthread_mutex_unlock(&be->lock);
    free(row);
    return rc;
}

static int buffer_id_of(const void *p, uint64_t *id)
{
    unsigned long long v = 0;
    if (!gshmemi_cu.cuPointerGetAttribute ||
        gshmemi_cu.cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return -1;
    *id = v;
    return 0;
}

/* The lkey of a registered region holding p. A buffer outside the heap is registered on first
 * use: a device allocation whole (kept while its buffer id stays the same, so a freed and
 * reallocated address is registered again), host memory by the page (until the next flush: a
 * host address can be reused unseen). At most REG_CACHE_MAX such registrations, the oldest
 * dropped first. */
static int local_key_locked(gshmemi_proxy_backend_t *be, const void *p, size_t *avail, uint32_t *lkey)
{
    int i = gshmemi_verbs_region_find(be->regions, be->n_regions, p, avail), kind, rc;
    CUdeviceptr base = 0;
    size_t size = 0;
    uint64_t id = 0;
    struct ibv_mr *mr;

    if (i >= 0 && be->regions[i].kind == GSHMEMI_VERBS_REG_DEVICE &&
        (buffer_id_of(p, &id) != 0 || id != be->regions[i].buffer_id)) {
        GSHMEMI_CHECK(drain(be));
        drop_region(be, i);
        i = -1;
    }
    if (i >= 0) {
        *lkey = be->regions[i].lkey;
        return GSHMEMI_OK;
    }
    if (gshmemi_cu.cuMemGetAddressRange &&
        gshmemi_cu.cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS && size &&
        buffer_id_of(p, &id) == 0) {
        kind = GSHMEMI_VERBS_REG_DEVICE;
        mr = reg_device(be, (void *)(uintptr_t)base, size, "local buffer");
    } else {
        long pg = sysconf(_SC_PAGESIZE);
        uintptr_t a = (uintptr_t)p & ~((uintptr_t)pg - 1);
        kind = GSHMEMI_VERBS_REG_HOST;
        base = a;
        size = (size_t)pg;
        id = 0;
        mr = gshmemi_ibv.reg_mr(be->pd, (void *)a, size, IBV_ACCESS_ALL);
        if (!mr)
            GSHMEMI_ERROR(SUB, "local address %p is in no heap chunk, no device allocation, and its host page cannot be registered: %s",
                          p, strerror(errno));
    }
    if (!mr) return GSHMEMI_ERR_INVALID;
    if (be->n_cached == REG_CACHE_MAX) {
        rc = drain(be); /* nothing in flight may use what is dropped */
        if (rc) {
            gshmemi_ibv.dereg_mr(mr);
            return rc;
        }
        for (i = 0; be->regions[i].kind == GSHMEMI_VERBS_REG_HEAP; i++) {
        }
        drop_region(be, i);
    }
    rc = add_region(be, (uintptr_t)base, size, mr, kind, id);
    if (rc) {
        gshmemi_ibv.dereg_mr(mr);
        return rc;
    }
    i = gshmemi_verbs_region_find(be->regions, be->n_regions, p, avail);
    *lkey = be->regions[i].lkey;
    return GSHMEMI_OK;
}

static int local_key(gshmemi_proxy_backend_t *be, const void *p, size_t *avail, uint32_t *lkey)
{
    int rc;
    pthread_mutex_lock(&be->lock);
    rc = local_key_locked(be, p, avail, lkey);
    pthread_mutex_unlock(&be->lock);
    return rc;
}

/* ---------------------------------------------------------------- completions */

#define WRID(pe, kind, slot) (((uint64_t)(uint32_t)(pe) << 32) | ((uint64_t)(kind) << 24) | (uint64_t)((slot) + 1))
#define WRID_PE(id) ((int)((id) >> 32))
#define WRID_KIND(id) ((int)(((id) >> 24) & 0xff))
#define WRID_SLOT(id) ((int)((id) & 0xffffff) - 1)

/* A native atomic's slot (width 8) stores its old value and is free again; a CAS loop's (width
 * 0) is read and freed by the loop. */
static void complete_slot(gshmemi_proxy_backend_t *be, int s, int ok)
{
    slot_t *sl = &be->slots[s];
    if (ok && sl->fetched && sl->width == 8) *sl->fetched = be->slot_buf[s];
    sl->done = 1;
    if (sl->width) sl->in_use = 0;
}

static int poll_once(gshmemi_proxy_backend_t *be, int *got)
{
    struct ibv_wc wc[CQ_BATCH];
    int k, i;
    char msg[256];

    *got = 0;
    if (!be->cq) return be->error;
    k = ibv_poll_cq(be->cq, CQ_BATCH, wc);
    if (k < 0) {
        GSHMEMI_ERROR(SUB, "%s: ibv_poll_cq failed (%d)", be->devname, k);
        if (!be->error) be->error = GSHMEMI_ERR_SYSTEM;
        return be->error;
    }
    for (i = 0; i < k; i++) {
        int pe = WRID_PE(wc[i].wr_id), kind = WRID_KIND(wc[i].wr_id), s = WRID_SLOT(wc[i].wr_id);
        peer_t *p = pe >= 0 && pe < be->ctx->n_pes ? &be->peers[pe] : NULL;
        if (!p) continue;
        p->outstanding--;
        be->in_flight--;
        if (wc[i].status != IBV_WC_SUCCESS) {
            if (wc[i].status == IBV_WC_WR_FLUSH_ERR && p->error) {
                p->flushed++; /* the QP went to error earlier; that error was reported */
            } else {
                GSHMEMI_ERROR(SUB, "%s", gshmemi_verbs_cqe_message(msg, sizeof(msg), kind, pe,
                                                                   gshmemi_ibv.wc_status_str(wc[i].status), (int)wc[i].status,
                                                                   wc[i].vendor_err));
                if (!p->error) p->error = GSHMEMI_ERR_REMOTE;
                if (!be->error) be->error = GSHMEMI_ERR_REMOTE;
            }
        }
        if (s >= 0 && s < N_SLOTS) complete_slot(be, s, wc[i].status == IBV_WC_SUCCESS);
    }
    *got = k;
    return be->error;
}

/* Polls until cond(be, arg) holds, an error arrives, or ctx->peer_timeout passes (what names
 * the wait in the report). */
static int wait_until(gshmemi_proxy_backend_t *be, int (*cond)(gshmemi_proxy_backend_t *, void *), void *arg,
                      const char *what, int pe)
{
    double deadline = gshmemi_now_s() + be->ctx->peer_timeout;
    int got, rc;
    unsigned spins = 0;
    while (!cond(be, arg)) {
        rc = poll_once(be, &got);
        if (rc) return rc;
        if (got) continue;
        if ((++spins & 1023) == 0 && gshmemi_now_s() > deadline) {
            if (pe >= 0)
                GSHMEMI_ERROR(SUB, "%s: PE %d has %d work request(s) in flight after %g s (GSHMEM_PEER_TIMEOUT); %d in flight in all",
                              what, pe, be->peers[pe].outstanding, be->ctx->peer_timeout, be->in_flight);
            else
                GSHMEMI_ERROR(SUB, "%s: %d work request(s) still in flight after %g s (GSHMEM_PEER_TIMEOUT)", what,
                              be->in_flight, be->ctx->peer_timeout);
            return GSHMEMI_ERR_TIMEOUT;
        }
    }
    return GSHMEMI_OK;
}

static int cond_all_done(gshmemi_proxy_backend_t *be, void *arg)
{
    (void)arg;
    return be->in_flight == 0;
}

static int drain(gshmemi_proxy_backend_t *be) { return wait_until(be, cond_all_done, NULL, "flush", -1); }

static int cond_sq_room(gshmemi_proxy_backend_t *be, void *arg)
{
    return be->peers[*(int *)arg].outstanding < SQ_DEPTH;
}

static int cond_slot_done(gshmemi_proxy_backend_t *be, void *arg) { return be->slots[*(int *)arg].done; }

static int cond_slot_free(gshmemi_proxy_backend_t *be, void *arg)
{
    (void)arg;
    return !be->slots[be->next_slot].in_use;
}

/* ---------------------------------------------------------------- posting */

static int peer_ready(gshmemi_proxy_backend_t *be, int pe, const char *what)
{
    if (pe < 0 || pe >= be->ctx->n_pes || !be->peers[pe].served || !be->peers[pe].qp) {
        GSHMEMI_ERROR(SUB, "%s: PE %d is not reached by the verbs backend", what, pe);
        return GSHMEMI_ERR_INVALID;
    }
    if (be->peers[pe].error) return be->peers[pe].error;
    return GSHMEMI_OK;
}

static int post(gshmemi_proxy_backend_t *be, int pe, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad = NULL;
    peer_t *p = &be->peers[pe];
    char msg[256];
    int rc;

    if (p->outstanding >= SQ_DEPTH) GSHMEMI_CHECK(wait_until(be, cond_sq_room, &pe, "send queue full", pe));
    rc = ibv_post_send(p->qp, wr, &bad);
    if (rc) {
        GSHMEMI_ERROR(SUB, "%s: ibv_post_send failed: %s",
                      gshmemi_verbs_cqe_message(msg, sizeof(msg), WRID_KIND(wr->wr_id), pe, "not posted", 0, 0),
                      strerror(rc));
        if (!p->error) p->error = GSHMEMI_ERR_SYSTEM;
        return GSHMEMI_ERR_SYSTEM;
    }
    p->outstanding++;
    be->in_flight++;
    return GSHMEMI_OK;
}

static int remote_key(gshmemi_proxy_backend_t *be, const char *what, int pe, uint64_t off, uint64_t *raddr,
                      uint32_t *rkey, uint64_t *avail)
{
    int rc;
    pthread_mutex_lock(&be->lock);
    rc = gshmemi_verbs_rkey_lookup(be->rkeys, be->n_chunks, be->ctx->n_pes, pe, off, raddr, rkey, avail);
    pthread_mutex_unlock(&be->lock);
    if (rc == GSHMEMI_OK) return GSHMEMI_OK;
    GSHMEMI_ERROR(SUB, "%s: offset %llu of PE %d's heap is in none of its registered chunks", what,
                  (unsigned long long)off, pe);
    return GSHMEMI_ERR_INVALID;
}

/* WRITE or READ of n bytes, split where a local or remote registration ends. */
static int rdma(gshmemi_proxy_backend_t *be, int kind, int pe, uint64_t off, void *local, size_t n)
{
    const char *what = kind == GSHMEMI_VERBS_OP_READ ? "get" : "put";
    GSHMEMI_CHECK(peer_ready(be, pe, what));
    while (n > 0) {
        uint64_t raddr, ravail;
        uint32_t rkey, lkey;
        size_t lavail = 0, len = n;
        struct ibv_sge sge;
        struct ibv_send_wr wr;

        GSHMEMI_CHECK(remote_key(be, what, pe, off, &raddr, &rkey, &ravail));
        GSHMEMI_CHECK(local_key(be, local, &lavail, &lkey));
        if (len > ravail) len = ravail;
        if (len > lavail) len = lavail;
        if (be->pattr.max_msg_sz && len > be->pattr.max_msg_sz) len = be->pattr.max_msg_sz;
        sge.addr = (uint64_t)(uintptr_t)local;
        sge.length = (uint32_t)len;
        sge.lkey = lkey;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = WRID(pe, kind, -1);
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = kind == GSHMEMI_VERBS_OP_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = raddr;
        wr.wr.rdma.rkey = rkey;
        GSHMEMI_CHECK(post(be, pe, &wr));
        if (kind != GSHMEMI_VERBS_OP_READ) be->peers[pe].write_since_fence = 1;
        off += len;
        local = (char *)local + len;
        n -= len;
    }
    return GSHMEMI_OK;
}

static int verbs_put(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, const void *src, size_t n)
{
    return rdma(be, GSHMEMI_VERBS_OP_WRITE, pe, dst_off, (void *)src, n);
}

static int verbs_get(gshmemi_proxy_backend_t *be, int pe, void *dst, uint64_t src_off, size_t n)
{
    return rdma(be, GSHMEMI_VERBS_OP_READ, pe, src_off, dst, n);
}

static int verbs_put_value(gshmemi_proxy_backend_t *be, int pe, uint64_t dst_off, uint64_t value, size_t width)
{
    uint64_t raddr, ravail;
    uint32_t rkey;
    uint8_t bytes[8];
    struct ibv_sge sge;
    struct ibv_send_wr wr;

    if (width != 1 && width != 2 && width != 4 && width != 8) {
        GSHMEMI_ERROR(SUB, "put_value: width %zu is not 1, 2, 4 or 8", width);
        return GSHMEMI_ERR_INVALID;
    }
    GSHMEMI_CHECK(peer_ready(be, pe, "put_value"));
    GSHMEMI_CHECK(remote_key(be, "put_value", pe, dst_off, &raddr, &rkey, &ravail));
    if (ravail < width) {
        GSHMEMI_ERROR(SUB, "put_value: %zu bytes at offset %llu of PE %d cross the end of a registered chunk", width,
                      (unsigned long long)dst_off, pe);
        return GSHMEMI_ERR_INVALID;
    }
    memcpy(bytes, &value, width); /* the low bytes (little-endian host) */
    sge.addr = (uint64_t)(uintptr_t)bytes;
    sge.length = (uint32_t)width;
    sge.lkey = 0; /* inline: copied at post, no key */
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = WRID(pe, GSHMEMI_VERBS_OP_WRITE_INLINE, -1);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    GSHMEMI_CHECK(post(be, pe, &wr));
    be->peers[pe].write_since_fence = 1;
    return GSHMEMI_OK;
}

/* Posts one IB atomic on the 8-byte word at raddr landing in a fresh slot; returns the slot. */
static int post_atomic(gshmemi_proxy_backend_t *be, int pe, int kind, uint64_t raddr, uint32_t rkey,
                       uint64_t compare_add, uint64_t swap, uint64_t *fetched, size_t width, unsigned shift,
                       int *slot)
{
    struct ibv_sge sge;
    struct ibv_send_wr wr;
    int s;

    if (be->slots[be->next_slot].in_use)
        GSHMEMI_CHECK(wait_until(be, cond_slot_free, NULL, "atomic landing slots full", pe));
    s = be->next_slot;
    be->next_slot = (be->next_slot + 1) % N_SLOTS;
    be->slots[s].in_use = 1;
    be->slots[s].done = 0;
    be->slots[s].fetched = fetched;
    be->slots[s].width = width; /* 0: a CAS loop's slot, freed by the loop */
    be->slots[s].shift = shift;
    sge.addr = (uint64_t)(uintptr_t)&be->slot_buf[s];
    sge.length = 8;
    sge.lkey = be->slot_mr->lkey;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = WRID(pe, kind, s);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = kind == GSHMEMI_VERBS_OP_CMP_SWAP ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
    /* an atomic after a write waits for it: a signal lands after its data */
    wr.send_flags = be->peers[pe].write_since_fence ? IBV_SEND_FENCE : 0;
    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap = swap;
    if (post(be, pe, &wr) != GSHMEMI_OK) {
        be->slots[s].in_use = 0;
        return GSHMEMI_ERR_SYSTEM;
    }
    be->peers[pe].write_since_fence = 0;
    *slot = s;
    return GSHMEMI_OK;
}

/* IB atomics are 8-byte FETCH_ADD and CMP_SWAP. Width 8 add / fetch-add / compare-swap / fetch
 * map to one of them and return once posted. Every other op (set, swap, and/or/xor, any 4-byte
 * op) is a compare-swap loop run here to completion: atomic, since the word only changes by a
 * swap that saw its last value, but it costs a round trip per try (the first guesses 0, so an
 * uncontended op on a nonzero word takes two) and holds the proxy thread meanwhile, which also
 * keeps later work to pe behind it. */
static int verbs_amo(gshmemi_proxy_backend_t *be, int pe, int op, uint64_t dst_off, uint64_t value, uint64_t cond,
                     size_t width, uint64_t *fetched)
{
    uint64_t raddr, ravail, word_off, guess, next;
    uint32_t rkey;
    unsigned shift;
    int s, native;
    double deadline;

    if (width != 4 && width != 8) {
        GSHMEMI_ERROR(SUB, "amo: width %zu is not 4 or 8", width);
        return GSHMEMI_ERR_INVALID;
    }
    if (op < GSHMEMI_AMO_FETCH || op > GSHMEMI_AMO_XOR) {
        GSHMEMI_ERROR(SUB, "amo: unknown operation %d", op);
        return GSHMEMI_ERR_INVALID;
    }
    if (dst_off % width) {
        GSHMEMI_ERROR(SUB, "amo: offset %llu of PE %d is not %zu-byte aligned", (unsigned long long)dst_off, pe, width);
        return GSHMEMI_ERR_INVALID;
    }
    GSHMEMI_CHECK(peer_ready(be, pe, "amo"));
    if (be->dattr.atomic_cap == IBV_ATOMIC_NONE) {
        GSHMEMI_ERROR(SUB, "amo to PE %d: %s has no atomic operations (atomic_cap NONE)", pe, be->devname);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    word_off = dst_off & ~7ull;
    shift = (unsigned)(dst_off - word_off) * 8;
    if (width == 8) value &= ~0ull;
    else value &= 0xffffffffull, cond &= 0xffffffffull;
    GSHMEMI_CHECK(remote_key(be, "amo", pe, word_off, &raddr, &rkey, &ravail));

    native = width == 8 && (op == GSHMEMI_AMO_ADD || op == GSHMEMI_AMO_FETCH_ADD || op == GSHMEMI_AMO_CSWAP ||
                            op == GSHMEMI_AMO_FETCH);
    if (native) {
        if (op == GSHMEMI_AMO_CSWAP)
            return post_atomic(be, pe, GSHMEMI_VERBS_OP_CMP_SWAP, raddr, rkey, cond, value, fetched, 8, 0, &s);
        return post_atomic(be, pe, GSHMEMI_VERBS_OP_FETCH_ADD, raddr, rkey, op == GSHMEMI_AMO_FETCH ? 0 : value, 0,
                           fetched, 8, 0, &s);
    }
    deadline = gshmemi_now_s() + be->ctx->peer_timeout;
    guess = 0;
    for (;;) {
        uint64_t old;
        int rc;
        next = gshmemi_verbs_amo_apply(op, width, shift, guess, value, cond);
        GSHMEMI_CHECK(post_atomic(be, pe, GSHMEMI_VERBS_OP_CMP_SWAP, raddr, rkey, guess, next, NULL, 0, shift, &s));
        rc = wait_until(be, cond_slot_done, &s, "atomic (compare-swap loop)", pe);
        old = be->slot_buf[s];
        be->slots[s].in_use = 0;
        if (rc) return rc;
        if (old == guess) break;
        guess = old;
        if (gshmemi_now_s() > deadline) {
            GSHMEMI_ERROR(SUB, "amo on offset %llu of PE %d: the compare-swap loop found the word changing for %g s (GSHMEM_PEER_TIMEOUT)",
                          (unsigned long long)dst_off, pe, be->ctx->peer_timeout);
            return GSHMEMI_ERR_TIMEOUT;
        }
    }
    if (fetched) *fetched = width == 8 ? guess : (guess >> shift) & 0xffffffffull;
    return GSHMEMI_OK;
}

/* ---------------------------------------------------------------- progress, flush, close */

static int verbs_progress(gshmemi_proxy_backend_t *be, int *idle)
{
    int got, rc;
    do {
        rc = poll_once(be, &got);
    } while (rc == GSHMEMI_OK && got == CQ_BATCH);
    *idle = be->in_flight == 0;
    return rc;
}

static int verbs_flush(gshmemi_proxy_backend_t *be)
{
    int rc = drain(be), pe, i;
    pthread_mutex_lock(&be->lock);
    for (i = be->n_regions - 1; rc == GSHMEMI_OK && i >= 0; i--)
        if (be->regions[i].kind == GSHMEMI_VERBS_REG_HOST) drop_region(be, i);
    pthread_mutex_unlock(&be->lock);
    for (pe = 0; pe < be->ctx->n_pes; pe++) {
        if (be->peers[pe].flushed) {
            GSHMEMI_ERROR(SUB, "%d further work request(s) to PE %d were discarded after its QP failed",
                          be->peers[pe].flushed, pe);
            be->peers[pe].flushed = 0;
        }
    }
    return rc;
}

static void verbs_close(gshmemi_proxy_backend_t *be)
{
    int pe, i, rc;
    if (!be) return;
    if (be->in_flight && be->cq) (void)drain(be); /* nothing may land in freed memory */
    for (pe = 0; be->peers && pe < be->ctx->n_pes; pe++) {
        if (be->peers[pe].qp && (rc = gshmemi_ibv.destroy_qp(be->peers[pe].qp)) != 0)
            GSHMEMI_WARN(SUB, "ibv_destroy_qp (PE %d) failed: %s", pe, strerror(rc));
    }
    for (i = be->n_regions - 1; i >= 0; i--) {
        if ((rc = gshmemi_ibv.dereg_mr(be->regions[i].mr)) != 0) GSHMEMI_WARN(SUB, "ibv_dereg_mr failed: %s", strerror(rc));
    }
    if (be->slot_mr && (rc = gshmemi_ibv.dereg_mr(be->slot_mr)) != 0) GSHMEMI_WARN(SUB, "ibv_dereg_mr failed: %s", strerror(rc));
    if (be->cq && (rc = gshmemi_ibv.destroy_cq(be->cq)) != 0) GSHMEMI_WARN(SUB, "ibv_destroy_cq failed: %s", strerror(rc));
    if (be->pd && (rc = gshmemi_ibv.dealloc_pd(be->pd)) != 0) GSHMEMI_WARN(SUB, "ibv_dealloc_pd failed: %s", strerror(rc));
    if (be->ibctx && (rc = gshmemi_ibv.close_device(be->ibctx)) != 0)
        GSHMEMI_WARN(SUB, "ibv_close_device failed: %s", strerror(rc));
    if (be->lock_made) pthread_mutex_destroy(&be->lock);
    free(be->regions);
    free(be->rkeys);
    free(be->slot_buf);
    free(be->peers);
    free(be);
}

const gshmemi_proxy_backend_ops_t gshmemi_proxy_backend_verbs = {
    GSHMEMI_PROXY_BACKEND_COMMON(verbs),
    .blob_size = GSHMEMI_VERBS_BLOB_SIZE,
};
