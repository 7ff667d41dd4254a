/* A stand-in for libibverbs.so.1 and libmlx5.so.1 at once (IBGDA's setup loads it under both
 * names), for test_ibgda_setup. Devices fake_mlx5_<i> (mlx5) or fake_other_<i>, one port each,
 * ACTIVE, InfiniBand or Ethernet as configured. DEVX commands are decoded with mlx5_prm.h's
 * layouts: CREATE_CQ / CREATE_QP hand out numbers (a QP's send CQ must exist), a QP's
 * transitions must come in order RST->INIT->RTR->RTS naming its own number, and the last input of
 * each command is kept for the test to read. Every object is counted (fake_mlx5_live), and
 * fake_mlx5_fail_at(n) makes the n-th fallible call fail as a driver would. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "transports/ibgda/mlx5_prm.h"
#include "fake_verbs_objects.h"

#define MAX_DEV 4
#define CMD_BYTES 272

static struct ibv_device devs[MAX_DEV];
static struct ibv_device *devlist[MAX_DEV + 1];
static int n_devs = 1, link_layer = IBV_LINK_LAYER_INFINIBAND, devx_ok = 1;
static unsigned mlx5_mask = 1;
static int calls, fail_at;
static uint32_t next_num = 0x40;
static uint8_t last_in[8][CMD_BYTES]; /* by opcode: 0x400 -> 0, 0x500 -> 1, 0x502..0x504 -> 2..4 */
static const uint8_t fake_mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};

void fake_mlx5_config(int n, unsigned mask, int ll, int devx)
{
    n_devs = n;
    mlx5_mask = mask;
    link_layer = ll;
    devx_ok = devx;
}
void fake_mlx5_fail_at(int n)
{
    fail_at = n;
    calls = 0;
}
int fake_mlx5_calls(void) { return calls; }
int fake_mlx5_live(void) { return live; }
const void *fake_mlx5_last(unsigned opcode)
{
    return opcode == 0x400 ? last_in[0] : opcode == 0x500 ? last_in[1] : last_in[2 + (opcode - 0x502)];
}
const uint8_t *fake_mlx5_mac(void) { return fake_mac; }

/* 1 when this fallible call is the one to fail */
static int failing(void) { return ++calls == fail_at; }

/* ---- libibverbs */
struct ibv_device **ibv_get_device_list(int *num)
{
    for (int i = 0; i < n_devs; i++) {
        snprintf(devs[i].name, sizeof(devs[i].name), "%s_%d", (mlx5_mask >> i) & 1 ? "fake_mlx5" : "fake_other", i);
        devlist[i] = &devs[i];
    }
    devlist[n_devs] = NULL;
    *num = n_devs;
    live++;
    return devlist;
}
struct ibv_context *ibv_open_device(struct ibv_device *d)
{
    (void)d;
    errno = ENOSYS; /* IBGDA opens through mlx5dv_open_device */
    return NULL;
}
int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    (void)c;
    if (failing()) return EIO;
    memset(a, 0, sizeof(*a));
    a->phys_port_cnt = 1;
    a->max_qp_rd_atom = 16;
    a->max_qp_init_rd_atom = 16;
    return 0;
}
int(ibv_query_port)(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *pa)
{
    struct ibv_port_attr *a = (struct ibv_port_attr *)pa;
    (void)c;
    if (failing()) return EIO;
    if (port != 1) return EINVAL;
    a->state = IBV_PORT_ACTIVE;
    a->active_mtu = IBV_MTU_4096;
    a->lid = link_layer == IBV_LINK_LAYER_INFINIBAND ? 7 : 0;
    a->link_layer = (uint8_t)link_layer;
    a->max_msg_sz = 1u << 30;
    return 0;
}
int ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
    (void)c, (void)port, (void)index;
    if (failing()) {
        errno = EIO;
        return -1;
    }
    memset(gid, 0, sizeof(*gid));
    gid->raw[0] = 0xfe, gid->raw[1] = 0x80, gid->raw[15] = 0x01;
    return 0;
}
struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
    struct ibv_pd *pd;
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    pd = calloc(1, sizeof(*pd));
    pd->context = c;
    pd->handle = 0x33;
    live++;
    return pd;
}
struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
    struct ibv_ah *ah;
    (void)attr;
    if (failing()) {
        errno = EHOSTUNREACH;
        return NULL;
    }
    ah = calloc(1, sizeof(*ah) + sizeof(struct mlx5_wqe_av));
    ah->pd = pd;
    live++;
    return ah;
}
int ibv_destroy_ah(struct ibv_ah *ah) { return fake_free(ah); }
/* the rest of the table the loader wants: never reached by IBGDA */
struct ibv_cq *ibv_create_cq(struct ibv_context *c, int n, void *u, struct ibv_comp_channel *ch, int v)
{
    (void)c, (void)n, (void)u, (void)ch, (void)v;
    errno = ENOSYS;
    return NULL;
}
int ibv_destroy_cq(struct ibv_cq *cq) { return (void)cq, ENOSYS; }
struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    (void)pd, (void)a;
    errno = ENOSYS;
    return NULL;
}
int ibv_destroy_qp(struct ibv_qp *qp) { return (void)qp, ENOSYS; }
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int m) { return (void)qp, (void)a, (void)m, ENOSYS; }
/* memory regions: keys handed out in order; the last dmabuf registration is kept */
static uint32_t next_key = 0x900;
static int last_dmabuf_fd = -1;
static uint64_t last_dmabuf_offset, last_iova;
static int full_access(int a)
{
    return (a & IBV_ACCESS_REMOTE_WRITE) && (a & IBV_ACCESS_REMOTE_READ) && (a & IBV_ACCESS_REMOTE_ATOMIC);
}
struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    struct ibv_mr *mr;
    int f = failing();
    if (f || !full_access(access)) {
        errno = f ? EFAULT : EINVAL;
        return NULL;
    }
    mr = calloc(1, sizeof(*mr));
    mr->pd = pd;
    mr->addr = addr;
    mr->length = len;
    mr->lkey = next_key++;
    mr->rkey = next_key++;
    live++;
    return mr;
}
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova, int fd, int access)
{
    last_dmabuf_fd = fd;
    last_dmabuf_offset = offset;
    last_iova = iova;
    return (ibv_reg_mr)(pd, (void *)(uintptr_t)iova, len, access);
}
int fake_mlx5_last_dmabuf(uint64_t *offset, uint64_t *iova)
{
    *offset = last_dmabuf_offset;
    *iova = last_iova;
    return last_dmabuf_fd;
}
int ibv_dereg_mr(struct ibv_mr *mr) { return fake_free(mr); }
const char *ibv_wc_status_str(enum ibv_wc_status s) { return (void)s, "fake status"; }

/* ---- libmlx5 */
bool mlx5dv_is_supported(struct ibv_device *d) { return strncmp(d->name, "fake_mlx5", 9) == 0; }

struct ibv_context *mlx5dv_open_device(struct ibv_device *d, struct mlx5dv_context_attr *attr)
{
    struct ibv_context *c;
    if (!devx_ok || !(attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX)) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (failing()) {
        errno = EPERM;
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    c->device = d;
    c->abi_compat = NULL; /* not extended: ibv_query_port goes through the symbol */
    live++;
    return c;
}

int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
    static struct mlx5_wqe_av av;
    if (failing()) return EINVAL;
    if (type == MLX5DV_OBJ_PD) {
        obj->pd.out->pdn = obj->pd.in->handle;
        return 0;
    }
    if (type == MLX5DV_OBJ_AH) {
        memset(&av, 0, sizeof(av));
        memcpy(av.rmac, fake_mac, 6);
        obj->ah.out->av = &av;
        return 0;
    }
    return EINVAL;
}

struct mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(struct ibv_context *c, uint32_t flags)
{
    struct mlx5dv_devx_uar *u;
    (void)c, (void)flags;
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    u = calloc(1, sizeof(*u));
    u->page_id = 0x77;
    u->base_addr = u; /* any address: nothing writes it */
    u->reg_addr = (char *)u + 8;
    live++;
    return u;
}
void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *u)
{
    free(u);
    live--;
}
int mlx5dv_devx_query_eqn(struct ibv_context *c, uint32_t vector, uint32_t *eqn)
{
    (void)c, (void)vector;
    if (failing()) return EIO;
    *eqn = 9;
    return 0;
}

static uint32_t next_umem = 1;
struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg(struct ibv_context *c, void *addr, size_t size, uint32_t access)
{
    struct mlx5dv_devx_umem *m;
    (void)c, (void)addr, (void)size, (void)access;
    if (failing()) {
        errno = EFAULT;
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    m->umem_id = next_umem++;
    live++;
    return m;
}
struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg_ex(struct ibv_context *c, struct mlx5dv_devx_umem_in *in)
{
    if (!(in->comp_mask & MLX5DV_UMEM_MASK_DMABUF) || in->dmabuf_fd < 0) {
        errno = EINVAL;
        return NULL;
    }
    return mlx5dv_devx_umem_reg(c, in->addr, in->size, in->access);
}
int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *m) { return fake_free(m); }

struct mlx5dv_devx_obj {
    int is_qp;
    uint32_t num;
    int state;        /* QP: 0 RST, 1 INIT, 2 RTR, 3 RTS */
    uint64_t dbr_key; /* doorbell record: umem id << 40 | offset */
};
#define MAX_OBJ 1024
static struct mlx5dv_devx_obj *objs[MAX_OBJ];

static void fail_out(void *out, unsigned status)
{
    memset(out, 0, 16);
    ((uint8_t *)out)[0] = (uint8_t)status;
    ((uint8_t *)out)[7] = 0x5a; /* syndrome 0x5a */
}

/* a live queue already uses this doorbell record (the NIC would mix two queues' counters) */
static int dbr_taken(uint64_t key)
{
    for (int i = 0; i < MAX_OBJ; i++)
        if (objs[i] && objs[i]->dbr_key == key) return 1;
    return 0;
}

static int cq_exists(uint32_t cqn)
{
    for (int i = 0; i < MAX_OBJ; i++)
        if (objs[i] && !objs[i]->is_qp && objs[i]->num == cqn) return 1;
    return 0;
}

struct mlx5dv_devx_obj *mlx5dv_devx_obj_create(struct ibv_context *c, const void *in, size_t inlen, void *out,
                                               size_t outlen)
{
    unsigned op = DEVX_GET(create_cq_in, in, opcode);
    struct mlx5dv_devx_obj *o;
    uint64_t key;
    (void)c;
    if (outlen < 16 || inlen != CMD_BYTES || (op != 0x400 && op != 0x500)) {
        errno = EINVAL;
        return NULL;
    }
    memcpy(last_in[op == 0x400 ? 0 : 1], in, CMD_BYTES);
    if (failing()) {
        fail_out(out, 0x0f); /* no resources */
        errno = EREMOTEIO;
        return NULL;
    }
    if (op == 0x500 && !cq_exists(DEVX_GET(qpc, DEVX_ADDR_OF(create_qp_in, in, qpc), cqn_snd))) {
        fail_out(out, 0x03);
        errno = EREMOTEIO;
        return NULL;
    }
    if (op == 0x400) {
        const void *cqc = DEVX_ADDR_OF(create_cq_in, in, cq_context);
        key = (uint64_t)DEVX_GET(cqc, cqc, dbr_umem_id) << 40 | DEVX_GET64(cqc, cqc, dbr_addr);
    } else {
        const void *qpc = DEVX_ADDR_OF(create_qp_in, in, qpc);
        key = (uint64_t)DEVX_GET(qpc, qpc, dbr_umem_id) << 40 | DEVX_GET64(qpc, qpc, dbr_addr);
    }
    if (dbr_taken(key)) {
        fail_out(out, 0x03); /* bad parameter */
        errno = EREMOTEIO;
        return NULL;
    }
    o = calloc(1, sizeof(*o));
    o->dbr_key = key;
    o->is_qp = op == 0x500;
    o->num = next_num++;
    for (int i = 0; i < MAX_OBJ; i++)
        if (!objs[i]) {
            objs[i] = o;
            break;
        }
    memset(out, 0, 16);
    DEVX_SET(cmd_out, out, obj_num, o->num);
    live++;
    return o;
}

int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *o, const void *in, size_t inlen, void *out, size_t outlen)
{
    unsigned op = DEVX_GET(qp_transition_in, in, opcode);
    if (outlen < 16 || inlen != CMD_BYTES || op < 0x502 || op > 0x504) return EINVAL;
    memcpy(last_in[2 + (op - 0x502)], in, CMD_BYTES);
    if (failing()) {
        fail_out(out, 0x01);
        return EREMOTEIO;
    }
    if (!o->is_qp || DEVX_GET(qp_transition_in, in, qpn) != o->num || (int)(op - 0x502) != o->state) {
        fail_out(out, 0x10); /* bad QP state */
        return EREMOTEIO;
    }
    o->state++;
    memset(out, 0, 16);
    return 0;
}

int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *o)
{
    for (int i = 0; i < MAX_OBJ; i++)
        if (objs[i] == o) objs[i] = NULL;
    return fake_free(o);
}

/* the QP state of the object with number num (-1: none) */
int fake_mlx5_qp_state(uint32_t num)
{
    for (int i = 0; i < MAX_OBJ; i++)
        if (objs[i] && objs[i]->is_qp && objs[i]->num == num) return objs[i]->state;
    return -1;
}
