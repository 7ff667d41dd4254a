/* A stand-in for libibverbs.so.1 with one device, fake_0 (port 1 ACTIVE InfiniBand, port 2 DOWN),
 * whose QPs execute every work request at once on this process's memory: a PE made to reach
 * "PE 1" through it reaches its own heap, so put/get/atomics can be checked byte by byte. Keys are
 * checked like a NIC would (an unknown rkey gives a remote-access-error completion), QPs must go
 * INIT -> RTR -> RTS before posting, and every object is counted so a test can see close() free
 * them all. fake_ibv_fail_next() makes the next work request complete in error; fake_ibv_wr()
 * reads back the work requests posted (fake_ibverbs.h). */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "fake_ibverbs.h"
#include "fake_verbs_objects.h"

#define MAX_MR 256
#define WR_LOG 1024
#define MAX_WC 4096

static struct ibv_device dev0, *devlist[2];
static struct ibv_mr *mrs[MAX_MR];
static struct ibv_wc cq_q[MAX_WC];
static int cq_head, cq_n;
static int fail_status, fail_vendor;
static int posted, hold, last_flags, last_opcode;
static fake_ibv_wr_t wr_log[WR_LOG]; /* wr_log[i % WR_LOG]: the ith work request posted */

int fake_ibv_live(void) { return live; }
int fake_ibv_posted(void) { return posted; }
/* send_flags and opcode of the last work request posted */
int fake_ibv_last_flags(void) { return last_flags; }
int fake_ibv_last_opcode(void) { return last_opcode; }
int fake_ibv_wr(int i, fake_ibv_wr_t *out)
{
    if (i < 0 || i >= posted || i < posted - WR_LOG) return 0;
    *out = wr_log[i % WR_LOG];
    return 1;
}
/* 1: completions stay invisible to ibv_poll_cq (a peer that never answers); 0: delivered */
void fake_ibv_hold(int on) { hold = on; }
void fake_ibv_fail_next(int status, int vendor_err)
{
    fail_status = status;
    fail_vendor = vendor_err;
}

struct ibv_device **ibv_get_device_list(int *num)
{
    strcpy(dev0.name, "fake_0");
    devlist[0] = &dev0;
    devlist[1] = NULL;
    *num = 1;
    live++;
    return devlist;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

struct ibv_context *ibv_open_device(struct ibv_device *d)
{
    struct ibv_context *c = calloc(1, sizeof(*c));
    c->device = d;
    c->ops.post_send = fake_post_send;
    c->ops.poll_cq = fake_poll_cq;
    c->abi_compat = NULL; /* not extended: ibv_query_port goes through the symbol */
    live++;
    return c;
}

int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    (void)c;
    memset(a, 0, sizeof(*a));
    a->phys_port_cnt = 2;
    a->max_qp_rd_atom = 16;
    a->max_qp_init_rd_atom = 16;
    a->max_cqe = 4096;
    a->atomic_cap = IBV_ATOMIC_HCA;
    return 0;
}

int(ibv_query_port)(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *pa)
{
    struct ibv_port_attr *a = (struct ibv_port_attr *)pa;
    (void)c;
    if (port < 1 || port > 2) return EINVAL;
    a->state = port == 1 ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
    a->active_mtu = IBV_MTU_4096;
    a->lid = 17;
    a->link_layer = IBV_LINK_LAYER_INFINIBAND;
    a->max_msg_sz = 1u << 30;
    return 0;
}

int ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
    (void)c, (void)port, (void)index;
    memset(gid, 0, sizeof(*gid));
    return 0;
}

/* present because the loader wants them; the verbs backend makes no address handle */
struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
    (void)pd, (void)attr;
    errno = ENOSYS;
    return NULL;
}
int ibv_destroy_ah(struct ibv_ah *ah)
{
    (void)ah;
    return ENOSYS;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
    struct ibv_pd *pd = calloc(1, sizeof(*pd));
    pd->context = c;
    live++;
    return pd;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *uctx, struct ibv_comp_channel *ch, int vec)
{
    struct ibv_cq *cq = calloc(1, sizeof(*cq));
    (void)uctx, (void)ch, (void)vec;
    cq->context = c;
    cq->cqe = cqe;
    live++;
    return cq;
}
int ibv_destroy_cq(struct ibv_cq *cq) { return fake_free(cq); }

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    static uint32_t next_qpn = 0x100;
    struct ibv_qp *qp = calloc(1, sizeof(*qp));
    if (ia->qp_type != IBV_QPT_RC) {
        free(qp);
        errno = EINVAL;
        return NULL;
    }
    qp->context = pd->context;
    qp->pd = pd;
    qp->send_cq = ia->send_cq;
    qp->qp_num = next_qpn++;
    qp->state = IBV_QPS_RESET;
    live++;
    return qp;
}
int ibv_destroy_qp(struct ibv_qp *qp) { return fake_free(qp); }

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    enum ibv_qp_state want = qp->state == IBV_QPS_RESET ? IBV_QPS_INIT
                             : qp->state == IBV_QPS_INIT ? IBV_QPS_RTR
                                                          : IBV_QPS_RTS;
    if (!(mask & IBV_QP_STATE) || a->qp_state != want) return EINVAL;
    if (want == IBV_QPS_INIT &&
        (!(mask & IBV_QP_ACCESS_FLAGS) ||
         a->qp_access_flags != (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                IBV_ACCESS_REMOTE_ATOMIC) ||
         a->port_num != 1))
        return EINVAL;
    if (want == IBV_QPS_RTR && (!(mask & IBV_QP_DEST_QPN) || a->dest_qp_num == 0 || a->ah_attr.dlid != 17 ||
                                a->path_mtu != IBV_MTU_4096))
        return EINVAL;
    if (want == IBV_QPS_RTS && (!(mask & IBV_QP_SQ_PSN) || a->max_rd_atomic == 0)) return EINVAL;
    qp->state = want;
    return 0;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    static uint32_t next_key = 0x500;
    struct ibv_mr *mr;
    int i;
    for (i = 0; i < MAX_MR && mrs[i]; i++) {
    }
    if (i == MAX_MR) {
        errno = ENOMEM;
        return NULL;
    }
    mr = calloc(1, sizeof(*mr));
    mr->pd = pd;
    mr->context = pd->context;
    mr->addr = addr;
    mr->length = len;
    mr->lkey = next_key++;
    mr->rkey = (access & IBV_ACCESS_REMOTE_WRITE) ? next_key++ : 0;
    mrs[i] = mr;
    live++;
    return mr;
}
/* dmabuf: the fd must be open; the fake reaches the memory at iova (the test's own address) */
static int dmabuf_regs;
int fake_ibv_dmabuf_regs(void) { return dmabuf_regs; }
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova, int fd, int access)
{
    if (fcntl(fd, F_GETFD) < 0 || offset != 0) {
        errno = EBADF;
        return NULL;
    }
    dmabuf_regs++;
    return (ibv_reg_mr)(pd, (void *)(uintptr_t)iova, len, access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
    for (int i = 0; i < MAX_MR; i++)
        if (mrs[i] == mr) mrs[i] = NULL;
    return fake_free(mr);
}

const char *ibv_wc_status_str(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    default: return "other error";
    }
}

/* The mr whose key is key (rkey or lkey) covering [addr, addr+len); NULL if none. */
static struct ibv_mr *find_mr(uint64_t addr, size_t len, uint32_t key, int remote)
{
    for (int i = 0; i < MAX_MR; i++) {
        struct ibv_mr *m = mrs[i];
        if (m && (remote ? m->rkey : m->lkey) == key && addr >= (uint64_t)(uintptr_t)m->addr &&
            addr + len <= (uint64_t)(uintptr_t)m->addr + m->length)
            return m;
    }
    return NULL;
}

uint32_t fake_ibv_rkey_at(uint64_t addr)
{
    for (int i = 0; i < MAX_MR; i++) {
        struct ibv_mr *m = mrs[i];
        if (m && m->rkey && addr >= (uint64_t)(uintptr_t)m->addr && addr < (uint64_t)(uintptr_t)m->addr + m->length)
            return m->rkey;
    }
    return 0;
}

static void push_wc(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wc_status st, uint32_t vendor)
{
    struct ibv_wc *wc = &cq_q[(cq_head + cq_n++) % MAX_WC];
    memset(wc, 0, sizeof(*wc));
    wc->wr_id = wr_id;
    wc->status = st;
    wc->vendor_err = vendor;
    wc->qp_num = qp->qp_num;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    for (; wr; wr = wr->next) {
        struct ibv_sge *s = wr->sg_list;
        void *local = (void *)(uintptr_t)s->addr;
        int inl = wr->send_flags & IBV_SEND_INLINE;
        if (qp->state != IBV_QPS_RTS || wr->num_sge != 1 || cq_n == MAX_WC) {
            *bad = wr;
            return EINVAL;
        }
        {
            fake_ibv_wr_t *l = &wr_log[posted % WR_LOG];
            memset(l, 0, sizeof(*l));
            l->opcode = (int)wr->opcode;
            l->send_flags = (int)wr->send_flags;
            l->local = s->addr;
            l->length = s->length;
            l->lkey = s->lkey;
            if (wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_READ) {
                l->remote = wr->wr.rdma.remote_addr;
                l->rkey = wr->wr.rdma.rkey;
            } else {
                l->remote = wr->wr.atomic.remote_addr;
                l->rkey = wr->wr.atomic.rkey;
                l->compare_add = wr->wr.atomic.compare_add;
                l->swap = wr->wr.atomic.swap;
            }
        }
        posted++;
        last_flags = (int)wr->send_flags;
        last_opcode = (int)wr->opcode;
        if (qp->state == IBV_QPS_ERR) {
            push_wc(qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, 0);
            continue;
        }
        if (fail_status) {
            push_wc(qp, wr->wr_id, (enum ibv_wc_status)fail_status, (uint32_t)fail_vendor);
            fail_status = 0;
            continue;
        }
        if (!inl && !find_mr(s->addr, s->length, s->lkey, 0)) {
            push_wc(qp, wr->wr_id, IBV_WC_LOC_PROT_ERR, 0x33);
            continue;
        }
        switch (wr->opcode) {
        case IBV_WR_RDMA_WRITE:
        case IBV_WR_RDMA_READ:
            if (!find_mr(wr->wr.rdma.remote_addr, s->length, wr->wr.rdma.rkey, 1)) {
                push_wc(qp, wr->wr_id, IBV_WC_REM_ACCESS_ERR, 0x88);
                continue;
            }
            if (wr->opcode == IBV_WR_RDMA_WRITE)
                memcpy((void *)(uintptr_t)wr->wr.rdma.remote_addr, local, s->length);
            else
                memcpy(local, (void *)(uintptr_t)wr->wr.rdma.remote_addr, s->length);
            break;
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
        case IBV_WR_ATOMIC_CMP_AND_SWP: {
            uint64_t *w = (uint64_t *)(uintptr_t)wr->wr.atomic.remote_addr, old;
            if ((wr->wr.atomic.remote_addr & 7) || s->length != 8 ||
                !find_mr(wr->wr.atomic.remote_addr, 8, wr->wr.atomic.rkey, 1)) {
                push_wc(qp, wr->wr_id, IBV_WC_REM_ACCESS_ERR, 0x88);
                continue;
            }
            old = *w;
            if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
                *w = old + wr->wr.atomic.compare_add;
            else if (old == wr->wr.atomic.compare_add)
                *w = wr->wr.atomic.swap;
            memcpy(local, &old, 8);
            break;
        }
        default:
            push_wc(qp, wr->wr_id, IBV_WC_LOC_QP_OP_ERR, 0);
            continue;
        }
        push_wc(qp, wr->wr_id, IBV_WC_SUCCESS, 0);
    }
    return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int k = 0;
    (void)cq;
    while (!hold && k < n && cq_n > 0) {
        wc[k++] = cq_q[cq_head];
        cq_head = (cq_head + 1) % MAX_WC;
        cq_n--;
    }
    return k;
}
