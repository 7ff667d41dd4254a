/* IBGDA's host setup through libibverbs + libmlx5 DEVX (setup.h). Both libraries are dlopen'ed
 * so libgshmem loads without rdma-core; libibverbs through the table the proxy's verbs backend
 * uses (transports/common/ibv_lib.c), libmlx5 through the table below.
 *
 * Order of making (and, reversed, of release): device context (DEVX), PD, UAR, the umems of the
 * wq / cq / dbr buffers, then per QP its CQ and the QP. Every pointer is stored as soon as it is
 * made, so gshmemi_ibgda_close releases exactly what exists after any failure.
 *
 * NOT RUN ON A NIC: written and tested against a fake libmlx5 only. What only hardware can
 * confirm: that the firmware accepts these CREATE_CQ/CREATE_QP/transition commands (the umem
 * offsets, log_page_size 0 for the SQ, the zero-length RQ with cqn_rcv = the send CQ), that
 * umems over GPU memory register (dmabuf or peer memory), the UAR type choice, RoCE addressing
 * (GID index 0, the MAC from an address handle, the UDP source port) and the timeouts. */
#include "setup.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "../../runtime/base/env.h"
#include "../../runtime/base/log.h"
#include "../common/ibv_lib.h"
#include "mlx5_prm.h"

#define SUB "ibgda"

/* ---------------------------------------------------------------- libmlx5 */

#define GSHMEMI_MLX5_FUNCS(X)                                                                     \
    X(is_supported)                                                                               \
    X(open_device)                                                                                \
    X(init_obj)                                                                                   \
    X(devx_alloc_uar)                                                                             \
    X(devx_free_uar)                                                                              \
    X(devx_query_eqn)                                                                             \
    X(devx_umem_reg)                                                                              \
    X(devx_umem_dereg)                                                                            \
    X(devx_obj_create)                                                                            \
    X(devx_obj_modify)                                                                            \
    X(devx_obj_destroy)
/* rdma-core 35+: without it a dmabuf cannot be registered (address registration remains). */
#define GSHMEMI_MLX5_OPTIONAL_FUNCS(X) X(devx_umem_reg_ex)

static struct {
#define GSHMEMI_MLX5_FIELD(fn) __typeof__(&mlx5dv_##fn) fn;
    GSHMEMI_MLX5_FUNCS(GSHMEMI_MLX5_FIELD)
    GSHMEMI_MLX5_OPTIONAL_FUNCS(GSHMEMI_MLX5_FIELD)
#undef GSHMEMI_MLX5_FIELD
} mlx5;

static gshmemi_dl_lib_t mlx5_lib = {"libmlx5.so.1", "rdma-core's mlx5 provider", NULL};

static const gshmemi_dl_sym_t mlx5_syms[] = {
#define GSHMEMI_MLX5_SYM(fn) {"mlx5dv_" #fn, offsetof(__typeof__(mlx5), fn), 0},
    GSHMEMI_MLX5_FUNCS(GSHMEMI_MLX5_SYM)
#undef GSHMEMI_MLX5_SYM
#define GSHMEMI_MLX5_SYM(fn) {"mlx5dv_" #fn, offsetof(__typeof__(mlx5), fn), 1},
    GSHMEMI_MLX5_OPTIONAL_FUNCS(GSHMEMI_MLX5_SYM)
#undef GSHMEMI_MLX5_SYM
};

void gshmemi_ibgda_set_libraries_for_test(const char *ibverbs, const char *mlx5_name)
{
    gshmemi_ibv_set_library_for_test(ibverbs);
    gshmemi_dl_table_unload(&mlx5_lib, &mlx5, sizeof(mlx5));
    mlx5_lib.name = mlx5_name ? mlx5_name : "libmlx5.so.1";
}

/* On GSHMEMI_ERR_UNSUPPORTED, why says what is missing (the caller logs it). */
static int mlx5_load(char *why, size_t cap)
{
    return gshmemi_dl_table_load(&mlx5_lib, mlx5_syms, sizeof(mlx5_syms) / sizeof(mlx5_syms[0]), &mlx5, sizeof(mlx5), "IBGDA",
                                 why, cap);
}

/* ---------------------------------------------------------------- blob */

size_t gshmemi_ibgda_blob_size(int n_pes, int n_rc)
{
    return sizeof(gshmemi_ibgda_blob_t) + (size_t)n_pes * (size_t)n_rc * sizeof(uint32_t);
}

int gshmemi_ibgda_blob_check(const void *blob, int pe, int n_pes, int n_rc, gshmemi_ibgda_blob_t *hdr)
{
    gshmemi_ibgda_blob_t h;
    memcpy(&h, blob, sizeof(h));
    if (hdr) *hdr = h;
    GSHMEMI_CHECK(gshmemi_ib_addr_check(&h.addr, GSHMEMI_IBGDA_BLOB_MAGIC, SUB, "IBGDA", "IBGDA setup", pe));
    if (h.n_pes != n_pes || h.n_rc != n_rc) {
        GSHMEMI_ERROR(SUB, "PE %d published QPs for %u PEs x %u QPs, this PE expects %d x %d (GSHMEM_IBGDA_NUM_RC_PER_PE differs?)",
                      pe, h.n_pes, h.n_rc, n_pes, n_rc);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

uint32_t gshmemi_ibgda_blob_qpn(const void *blob, int to_pe, int k, int n_rc)
{
    uint32_t q;
    memcpy(&q, (const char *)blob + sizeof(gshmemi_ibgda_blob_t) + ((size_t)to_pe * n_rc + k) * sizeof(q), sizeof(q));
    return q;
}

/* ---------------------------------------------------------------- layout */

int gshmemi_ibgda_layout(int n_qps, unsigned log_sq_bbs, unsigned log_cqes, gshmemi_ibgda_layout_t *out)
{
    memset(out, 0, sizeof(*out));
    if (n_qps < 0) {
        GSHMEMI_ERROR(SUB, "IBGDA layout: n_qps %d is negative", n_qps);
        return GSHMEMI_ERR_INVALID;
    }
    if (log_sq_bbs > 15) { /* qpc.log_sq_size is 4 bits */
        GSHMEMI_ERROR(SUB, "IBGDA layout: log_sq_bbs %u is above 15 (32768 basic blocks per SQ)", log_sq_bbs);
        return GSHMEMI_ERR_INVALID;
    }
    if (log_cqes > 24) { /* the largest CQ ConnectX reports (log_max_cq_sz) */
        GSHMEMI_ERROR(SUB, "IBGDA layout: log_cqes %u is above 24", log_cqes);
        return GSHMEMI_ERR_INVALID;
    }
    out->n_qps = n_qps;
    /* each ring on its own 4 KiB pages: the umem's page size is the PRM's unit (log_page_size 0) */
    out->wq_stride = ((size_t)64 << log_sq_bbs) < 4096 ? 4096 : (size_t)64 << log_sq_bbs;
    out->cq_stride = ((size_t)64 << log_cqes) < 4096 ? 4096 : (size_t)64 << log_cqes;
    out->wq_bytes = out->wq_stride * (size_t)n_qps;
    out->cq_bytes = out->cq_stride * (size_t)n_qps;
    /* whole pages: a dmabuf of GPU memory is exported in host pages */
    out->dbr_bytes = ((size_t)GSHMEMI_IBGDA_DBR_STRIDE * 2 * (size_t)n_qps + 4095) & ~(size_t)4095;
    return GSHMEMI_OK;
}

/* ---------------------------------------------------------------- state */

typedef struct {
    int peer, k;
    struct mlx5dv_devx_obj *cq, *qp;
    uint32_t cqn, qpn;
} qp_t;

struct gshmemi_ibgda {
    int my_pe, n_pes, n_rc;
    unsigned log_sq_bbs, log_cqes;
    struct ibv_context *ctx;
    char devname[GSHMEMI_IBV_NAME_MAX];
    uint8_t port;
    struct ibv_device_attr dattr;
    struct ibv_port_attr pattr;
    struct ibv_pd *pd;
    uint32_t pdn, eqn;
    struct mlx5dv_devx_uar *uar;
    struct mlx5dv_devx_umem *wq_umem, *cq_umem, *dbr_umem;
    gshmemi_ibgda_layout_t lay;
    qp_t *qps;
    int n_qps;
    struct ibv_mr **mrs;     /* registered and not yet released: close releases them */
    int n_mrs, cap_mrs;
    gshmemi_ibgda_blob_t me;
};

static unsigned ilog2_floor(unsigned v)
{
    unsigned l = 0;
    while (v >>= 1) l++;
    return l;
}

void gshmemi_ibgda_close(gshmemi_ibgda_t *g)
{
    int q;
    if (!g) return;
    for (q = g->n_qps - 1; q >= 0 && g->qps; q--) {
        /* a destroy that fails (the device went away) leaves nothing we could still release */
        if (g->qps[q].qp && mlx5.devx_obj_destroy(g->qps[q].qp))
            GSHMEMI_WARN(SUB, "destroying QP %u (to PE %d) failed: %s", g->qps[q].qpn, g->qps[q].peer, strerror(errno));
        if (g->qps[q].cq && mlx5.devx_obj_destroy(g->qps[q].cq))
            GSHMEMI_WARN(SUB, "destroying CQ %u failed: %s", g->qps[q].cqn, strerror(errno));
    }
    free(g->qps);
    while (g->n_mrs > 0) gshmemi_ibv.dereg_mr(g->mrs[--g->n_mrs]);
    free(g->mrs);
    if (g->dbr_umem) mlx5.devx_umem_dereg(g->dbr_umem);
    if (g->cq_umem) mlx5.devx_umem_dereg(g->cq_umem);
    if (g->wq_umem) mlx5.devx_umem_dereg(g->wq_umem);
    if (g->uar) mlx5.devx_free_uar(g->uar);
    if (g->pd) gshmemi_ibv.dealloc_pd(g->pd);
    if (g->ctx) gshmemi_ibv.close_device(g->ctx);
    free(g);
}

/* ---------------------------------------------------------------- open */

/* gshmemi_ibv_find_device's opener: mlx5 devices only, with DEVX. */
static struct ibv_context *open_devx(void *arg, struct ibv_device *dev, const char *name, char *why, size_t cap)
{
    int *any_mlx5 = arg;
    struct mlx5dv_context_attr cattr;
    struct ibv_context *c;

    if (!mlx5.is_supported(dev)) {
        snprintf(why, cap, "%s is not an mlx5 (ConnectX) device", name);
        return NULL;
    }
    *any_mlx5 = 1;
    memset(&cattr, 0, sizeof(cattr));
    cattr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
    errno = 0;
    c = mlx5.open_device(dev, &cattr);
    if (!c)
        snprintf(why, cap, "%s: mlx5dv_open_device with DEVX failed: %s (DEVX needs a kernel with mlx5 DEVX support and may need CAP_NET_RAW)",
                 name, strerror(errno ? errno : EOPNOTSUPP));
    return c;
}

/* The device: GSHMEM_IB_DEVICE's, or the first mlx5 one with an active port, opened with DEVX.
 * Nothing is logged: on a failure why says why, and the caller logs it (GSHMEMI_ERR_UNSUPPORTED:
 * this host has none; GSHMEMI_ERR_INVALID or GSHMEMI_ERR_SYSTEM: the device GSHMEM_IB_DEVICE
 * names is absent or unusable). */
static int open_device(gshmemi_ibgda_t *g, char *why_out, size_t why_cap)
{
    char want[GSHMEMI_IBV_NAME_MAX];
    int want_port, any_mlx5 = 0;
    gshmemi_ibv_found_t found;

    GSHMEMI_CHECK(gshmemi_ibv_parse_device(SUB, gshmemi_env.IB_DEVICE, want, sizeof(want), &want_port));
    GSHMEMI_CHECK(gshmemi_ibv_load_why("IBGDA", why_out, why_cap));
    GSHMEMI_CHECK(mlx5_load(why_out, why_cap));

    gshmemi_ibv_find_device(want, want_port, open_devx, &any_mlx5, &found);
    if (found.ctx) {
        g->ctx = found.ctx;
        g->port = found.port;
        snprintf(g->devname, sizeof(g->devname), "%s", found.name);
        return GSHMEMI_OK;
    }
    if (want[0] && !found.named_found) {
        snprintf(why_out, why_cap, "GSHMEM_IB_DEVICE=%s: no such RDMA device on this host (devices present: %s%s)",
                 gshmemi_env.IB_DEVICE, found.present, found.none_cause);
        return GSHMEMI_ERR_INVALID;
    }
    if (!found.listed) {
        snprintf(why_out, why_cap, "no RDMA device on this host (libibverbs lists none%s): no IBGDA", found.none_cause);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    if (!any_mlx5) {
        snprintf(why_out, why_cap, "no mlx5 RDMA device (%s; devices present: %s): no IBGDA", found.why, found.present);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    if (want[0]) {
        snprintf(why_out, why_cap, "GSHMEM_IB_DEVICE=%s: not usable for IBGDA (%s)", gshmemi_env.IB_DEVICE, found.why);
        return GSHMEMI_ERR_SYSTEM;
    }
    snprintf(why_out, why_cap, "no usable mlx5 device (%s): no IBGDA", found.why);
    return GSHMEMI_ERR_UNSUPPORTED;
}

static int reg_umem(gshmemi_ibgda_t *g, const char *what, const gshmemi_ibgda_buf_t *b, size_t need,
                    struct mlx5dv_devx_umem **out)
{
    if (!b->addr || b->size < need) {
        GSHMEMI_ERROR(SUB, "the %s buffer (%p, %zu bytes) is smaller than the %zu bytes the QPs need", what, b->addr,
                      b->size, need);
        return GSHMEMI_ERR_INVALID;
    }
    errno = 0;
    if (b->dmabuf_fd >= 0 && mlx5.devx_umem_reg_ex) {
        struct mlx5dv_devx_umem_in in;
        memset(&in, 0, sizeof(in));
        in.addr = NULL; /* with a dmabuf: the offset into it; the caller's fd starts at the buffer */
        in.size = b->size;
        in.access = IBV_ACCESS_LOCAL_WRITE;
        in.pgsz_bitmap = ~0xfffull; /* any page size from 4 KiB up */
        in.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
        in.dmabuf_fd = b->dmabuf_fd;
        *out = mlx5.devx_umem_reg_ex(g->ctx, &in);
        if (!*out) { /* the peer-memory fallback */
            GSHMEMI_INFO(SUB, "%s: registering the %s buffer through its dmabuf failed (%s); trying by address (GPU memory then needs nvidia-peermem)",
                         g->devname, what, strerror(errno ? errno : EIO));
            errno = 0;
            *out = mlx5.devx_umem_reg(g->ctx, b->addr, b->size, IBV_ACCESS_LOCAL_WRITE);
        }
    } else {
        if (b->dmabuf_fd >= 0)
            GSHMEMI_INFO(SUB, "libmlx5 has no mlx5dv_devx_umem_reg_ex: the %s buffer is registered by address (GPU memory then needs nvidia-peermem)",
                         what);
        *out = mlx5.devx_umem_reg(g->ctx, b->addr, b->size, IBV_ACCESS_LOCAL_WRITE);
    }
    if (!*out) {
        GSHMEMI_ERROR(SUB, "%s: registering the %s buffer (%zu bytes%s) as a umem failed: %s", g->devname, what, b->size,
                      b->dmabuf_fd >= 0 ? ", dmabuf" : "", strerror(errno ? errno : EIO));
        return GSHMEMI_ERR_SYSTEM;
    }
    return GSHMEMI_OK;
}

/* A DEVX command's failure: errno and, when the firmware answered, its status and syndrome. */
static void log_cmd_failure(const gshmemi_ibgda_t *g, const char *cmd, const char *target, const uint8_t *out)
{
    uint32_t synd = 0;
    unsigned st = gshmemi_prm_out_status(out, &synd);
    GSHMEMI_ERROR(SUB, "%s: %s for %s failed: %s (firmware status 0x%x %s, syndrome 0x%x)", g->devname, cmd, target,
                  strerror(errno ? errno : EIO), st, gshmemi_prm_status_name(st), synd);
}

/* DEVX object creation by the command in `in` (in_bytes): *obj and its number in *num, or
 * GSHMEMI_ERR_SYSTEM logged naming the command, the target and the firmware's status. */
static int create_obj(gshmemi_ibgda_t *g, const char *cmd, const char *target, const uint8_t *in, size_t in_bytes,
                      struct mlx5dv_devx_obj **obj, uint32_t *num)
{
    uint8_t out[GSHMEMI_PRM_OUT_BYTES];
    memset(out, 0, sizeof(out));
    errno = 0;
    *obj = mlx5.devx_obj_create(g->ctx, in, in_bytes, out, sizeof(out));
    if (!*obj) {
        log_cmd_failure(g, cmd, target, out);
        return GSHMEMI_ERR_SYSTEM;
    }
    *num = gshmemi_prm_out_obj_num(out);
    return GSHMEMI_OK;
}

static int make_qp(gshmemi_ibgda_t *g, const gshmemi_ibgda_args_t *a, int q)
{
    qp_t *p = &g->qps[q];
    uint8_t in[GSHMEMI_PRM_CREATE_QP_IN_BYTES];
    char target[64];
    gshmemi_prm_cq_t cq;
    gshmemi_prm_qp_t qp;

    snprintf(target, sizeof(target), "PE %d (QP %d of %d)", p->peer, p->k, g->n_rc);
    memset(&cq, 0, sizeof(cq));
    cq.uar_page = g->uar->page_id;
    cq.eqn = g->eqn;
    cq.log_cq_size = a->log_cqes;
    cq.log_page_size = 0; /* 4 KiB: the ring starts on a 4 KiB boundary of the umem */
    cq.cq_umem_id = g->cq_umem->umem_id;
    cq.cq_umem_offset = (uint64_t)q * g->lay.cq_stride;
    cq.dbr_umem_id = g->dbr_umem->umem_id;
    cq.dbr_umem_offset = (uint64_t)(g->lay.n_qps + q) * GSHMEMI_IBGDA_DBR_STRIDE; /* after every QP's */
    cq.collapsed = a->collapsed_cq;
    cq.overrun_ignore = 1; /* the GPU consumes CQEs late and in batches */
    GSHMEMI_CHECK(gshmemi_prm_create_cq(in, sizeof(in), &cq));
    GSHMEMI_CHECK(create_obj(g, "CREATE_CQ", target, in, GSHMEMI_PRM_CREATE_CQ_IN_BYTES, &p->cq, &p->cqn));

    memset(&qp, 0, sizeof(qp));
    qp.pd = g->pdn;
    qp.uar_page = g->uar->page_id;
    qp.cqn_snd = p->cqn;
    qp.cqn_rcv = p->cqn; /* no RQ: nothing completes there */
    qp.user_index = (uint32_t)q;
    qp.log_sq_size = a->log_sq_bbs;
    qp.wq_umem_id = g->wq_umem->umem_id;
    qp.wq_umem_offset = (uint64_t)q * g->lay.wq_stride;
    qp.dbr_umem_id = g->dbr_umem->umem_id;
    qp.dbr_umem_offset = (uint64_t)q * GSHMEMI_IBGDA_DBR_STRIDE;
    GSHMEMI_CHECK(gshmemi_prm_create_qp(in, sizeof(in), &qp));
    return create_obj(g, "CREATE_QP", target, in, GSHMEMI_PRM_CREATE_QP_IN_BYTES, &p->qp, &p->qpn);
}

static int open_all(gshmemi_ibgda_t *g, const gshmemi_ibgda_args_t *a)
{
    struct mlx5dv_obj obj;
    struct mlx5dv_pd dvpd;
    union ibv_gid gid;
    char why[1024] = "";
    int rc, pe, k, q;

    rc = open_device(g, why, sizeof(why));
    if (rc == GSHMEMI_ERR_UNSUPPORTED) GSHMEMI_INFO(SUB, "%s", why);
    else if (rc != GSHMEMI_OK) GSHMEMI_ERROR(SUB, "%s", why);
    GSHMEMI_CHECK(rc);
    GSHMEMI_CHECK(gshmemi_ibv_query_attrs(SUB, g->ctx, g->devname, g->port, &g->dattr, &g->pattr, &gid));

    errno = 0;
    g->pd = gshmemi_ibv.alloc_pd(g->ctx);
    if (!g->pd) {
        GSHMEMI_ERROR(SUB, "%s: ibv_alloc_pd failed: %s", g->devname, strerror(errno ? errno : ENOMEM));
        return GSHMEMI_ERR_SYSTEM;
    }
    memset(&obj, 0, sizeof(obj));
    memset(&dvpd, 0, sizeof(dvpd));
    obj.pd.in = g->pd;
    obj.pd.out = &dvpd;
    rc = mlx5.init_obj(&obj, MLX5DV_OBJ_PD);
    if (rc) {
        GSHMEMI_ERROR(SUB, "%s: mlx5dv_init_obj(PD) failed: %s", g->devname, strerror(rc < 0 ? -rc : rc));
        return GSHMEMI_ERR_SYSTEM;
    }
    g->pdn = dvpd.pdn;

    /* The doorbell page. Non-cached first: a GPU or CPU write reaches the NIC as one posted
     * write; which type maps for a GPU on a given platform is unverified. */
    errno = 0;
    g->uar = mlx5.devx_alloc_uar(g->ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
    if (!g->uar) {
        int nc_err = errno;
        errno = 0;
        g->uar = mlx5.devx_alloc_uar(g->ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
        if (!g->uar) {
            GSHMEMI_ERROR(SUB, "%s: mlx5dv_devx_alloc_uar failed (non-cached: %s; blue flame: %s)", g->devname,
                          strerror(nc_err ? nc_err : ENOMEM), strerror(errno ? errno : ENOMEM));
            return GSHMEMI_ERR_SYSTEM;
        }
        GSHMEMI_INFO(SUB, "%s: no non-cached UAR (%s); using a blue-flame one", g->devname, strerror(nc_err));
    }
    errno = 0;
    rc = mlx5.devx_query_eqn(g->ctx, 0, &g->eqn);
    if (rc) {
        GSHMEMI_ERROR(SUB, "%s: mlx5dv_devx_query_eqn(0) failed: %s", g->devname, strerror(rc < 0 ? -rc : rc));
        return GSHMEMI_ERR_SYSTEM;
    }

    if (g->lay.n_qps == 0) {
        GSHMEMI_INFO(SUB, "%s opened, but no peer is served by IBGDA: no QP made", g->devname);
    } else {
        GSHMEMI_CHECK(reg_umem(g, "SQ", &a->wq, g->lay.wq_bytes, &g->wq_umem));
        GSHMEMI_CHECK(reg_umem(g, "CQ", &a->cq, g->lay.cq_bytes, &g->cq_umem));
        GSHMEMI_CHECK(reg_umem(g, "doorbell record", &a->dbr, g->lay.dbr_bytes, &g->dbr_umem));
    }

    g->qps = calloc((size_t)g->lay.n_qps, sizeof(*g->qps));
    if (g->lay.n_qps && !g->qps) {
        GSHMEMI_ERROR(SUB, "out of host memory for %d QPs", g->lay.n_qps);
        return GSHMEMI_ERR_NOMEM;
    }
    q = 0;
    for (pe = 0; pe < g->n_pes; pe++) {
        if (pe == g->my_pe || (a->remote && !a->remote[pe])) continue;
        for (k = 0; k < g->n_rc; k++, q++) {
            g->qps[q].peer = pe;
            g->qps[q].k = k;
            g->n_qps = q + 1; /* close sees it from here on */
            GSHMEMI_CHECK(make_qp(g, a, q));
        }
    }

    /* any 24-bit PSN; distinct ones help packet traces */
    gshmemi_ib_addr_make(&g->me.addr, GSHMEMI_IBGDA_BLOB_MAGIC, 0x2000u + (uint32_t)g->my_pe, g->port, &g->pattr, &gid);
    g->me.n_pes = (uint16_t)g->n_pes;
    g->me.n_rc = (uint16_t)g->n_rc;
    GSHMEMI_INFO(SUB, "opened %s port %u (%s, LID %u, MTU %d) with DEVX: %d RC QPs, UAR page %u", g->devname, g->port,
                 g->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand", g->pattr.lid,
                 128 << g->pattr.active_mtu, g->n_qps, g->uar->page_id);
    return GSHMEMI_OK;
}

int gshmemi_ibgda_open(const gshmemi_ibgda_args_t *a, gshmemi_ibgda_t **out)
{
    gshmemi_ibgda_t *g;
    int rc, pe, n_remote = 0;

    *out = NULL;
    if (!a || a->n_pes < 1 || a->n_pes > 65535 || a->my_pe < 0 || a->my_pe >= a->n_pes) {
        GSHMEMI_ERROR(SUB, "IBGDA setup: bad PE numbers (my_pe %d of n_pes %d)", a ? a->my_pe : -1, a ? a->n_pes : 0);
        return GSHMEMI_ERR_INVALID;
    }
    if (a->n_rc < 1 || a->n_rc > 64) {
        GSHMEMI_ERROR(SUB, "IBGDA setup: n_rc %d is not 1..64 (GSHMEM_IBGDA_NUM_RC_PER_PE)", a->n_rc);
        return GSHMEMI_ERR_INVALID;
    }
    for (pe = 0; pe < a->n_pes; pe++) n_remote += pe != a->my_pe && (!a->remote || a->remote[pe]);
    g = calloc(1, sizeof(*g));
    if (!g) {
        GSHMEMI_ERROR(SUB, "out of host memory for the IBGDA setup");
        return GSHMEMI_ERR_NOMEM;
    }
    g->my_pe = a->my_pe;
    g->n_pes = a->n_pes;
    g->n_rc = a->n_rc;
    g->log_sq_bbs = a->log_sq_bbs;
    g->log_cqes = a->log_cqes;
    rc = gshmemi_ibgda_layout(n_remote * a->n_rc, a->log_sq_bbs, a->log_cqes, &g->lay);
    if (rc == GSHMEMI_OK) rc = open_all(g, a);
    if (rc != GSHMEMI_OK) {
        gshmemi_ibgda_close(g);
        return rc;
    }
    *out = g;
    return GSHMEMI_OK;
}

void gshmemi_ibgda_blob(const gshmemi_ibgda_t *g, void *out)
{
    char *o = out;
    int q;
    memcpy(o, &g->me, sizeof(g->me));
    memset(o + sizeof(g->me), 0, (size_t)g->n_pes * g->n_rc * sizeof(uint32_t));
    for (q = 0; q < g->n_qps; q++)
        memcpy(o + sizeof(g->me) + ((size_t)g->qps[q].peer * g->n_rc + g->qps[q].k) * sizeof(uint32_t),
               &g->qps[q].qpn, sizeof(uint32_t));
}

/* ---------------------------------------------------------------- connect */

static int modify(gshmemi_ibgda_t *g, qp_t *p, const char *cmd, const uint8_t *in)
{
    uint8_t out[GSHMEMI_PRM_OUT_BYTES];
    char target[64];
    int rc;
    memset(out, 0, sizeof(out));
    errno = 0;
    rc = mlx5.devx_obj_modify(p->qp, in, GSHMEMI_PRM_QP_TRANSITION_IN_BYTES, out, sizeof(out));
    if (rc == 0) return GSHMEMI_OK;
    /* rdma-core returns an errno value (some versions negated) */
    errno = rc < 0 ? -rc : rc;
    snprintf(target, sizeof(target), "QP %u to PE %d", p->qpn, p->peer);
    log_cmd_failure(g, cmd, target, out);
    return GSHMEMI_ERR_SYSTEM;
}

/* RoCE: the next hop's MAC, as the provider resolves it for an address handle to gid. */
static int roce_mac(gshmemi_ibgda_t *g, const gshmemi_ibgda_blob_t *peer, int pe, uint8_t mac[6])
{
    struct ibv_ah_attr aa;
    struct ibv_ah *ah;
    struct mlx5dv_obj obj;
    struct mlx5dv_ah dvah;
    int rc;

    gshmemi_ib_ah_attr(&g->me.addr, &peer->addr, &aa); /* RoCE: global routing */
    errno = 0;
    ah = gshmemi_ibv.create_ah(g->pd, &aa);
    if (!ah) {
        GSHMEMI_ERROR(SUB, "%s: ibv_create_ah towards PE %d's GID failed: %s (is it reachable from port %u?)", g->devname,
                      pe, strerror(errno ? errno : EHOSTUNREACH), g->port);
        return GSHMEMI_ERR_SYSTEM;
    }
    memset(&obj, 0, sizeof(obj));
    memset(&dvah, 0, sizeof(dvah));
    obj.ah.in = ah;
    obj.ah.out = &dvah;
    rc = mlx5.init_obj(&obj, MLX5DV_OBJ_AH);
    if (rc == 0 && dvah.av) memcpy(mac, dvah.av->rmac, 6);
    gshmemi_ibv.destroy_ah(ah); /* the MAC is copied; the QP keeps no handle */
    if (rc || !dvah.av) {
        GSHMEMI_ERROR(SUB, "%s: mlx5dv_init_obj(AH) towards PE %d failed: %s", g->devname, pe,
                      strerror(rc < 0 ? -rc : (rc ? rc : EINVAL)));
        return GSHMEMI_ERR_SYSTEM;
    }
    return GSHMEMI_OK;
}

static int connect_qp(gshmemi_ibgda_t *g, qp_t *p, const void *blob)
{
    uint8_t in[GSHMEMI_PRM_QP_TRANSITION_IN_BYTES];
    gshmemi_ibgda_blob_t peer;
    gshmemi_prm_rst2init_t r2i;
    gshmemi_prm_init2rtr_t i2r;
    gshmemi_prm_rtr2rts_t r2r;
    unsigned rd = g->dattr.max_qp_rd_atom > 0 ? (unsigned)g->dattr.max_qp_rd_atom : 1;
    unsigned rd_init = g->dattr.max_qp_init_rd_atom > 0 ? (unsigned)g->dattr.max_qp_init_rd_atom : 1;
    uint32_t remote_qpn;

    GSHMEMI_CHECK(gshmemi_ibgda_blob_check(blob, p->peer, g->n_pes, g->n_rc, &peer));
    remote_qpn = gshmemi_ibgda_blob_qpn(blob, g->my_pe, p->k, g->n_rc);
    if (remote_qpn == 0) {
        GSHMEMI_ERROR(SUB, "PE %d published no QP %d towards this PE (does it serve this PE by IBGDA?)", p->peer, p->k);
        return GSHMEMI_ERR_INVALID;
    }
    GSHMEMI_CHECK(gshmemi_ib_addr_joinable(&g->me.addr, &peer.addr, SUB, p->peer));

    memset(&r2i, 0, sizeof(r2i));
    r2i.qpn = p->qpn;
    r2i.port = g->port;
    r2i.pkey_index = 0;
    r2i.remote_write = r2i.remote_read = r2i.remote_atomic = 1;
    r2i.atomic_mode = GSHMEMI_PRM_QPC_ATOMIC_8B;
    GSHMEMI_CHECK(gshmemi_prm_rst2init(in, sizeof(in), &r2i));
    GSHMEMI_CHECK(modify(g, p, "RST2INIT_QP", in));

    memset(&i2r, 0, sizeof(i2r));
    i2r.qpn = p->qpn;
    i2r.remote_qpn = remote_qpn;
    i2r.next_rcv_psn = peer.addr.psn;
    i2r.mtu = (unsigned)gshmemi_ib_path_mtu(&g->me.addr, &peer.addr);
    i2r.log_msg_max = g->pattr.max_msg_sz ? ilog2_floor(g->pattr.max_msg_sz > (1u << 30) ? (1u << 30) : g->pattr.max_msg_sz) : 30;
    i2r.log_rra_max = ilog2_floor(rd > 128 ? 128 : rd);
    i2r.min_rnr_nak = 12;
    if (peer.addr.link_layer == IBV_LINK_LAYER_ETHERNET) {
        i2r.roce = 1;
        memcpy(i2r.rgid, peer.addr.gid, 16);
        i2r.src_addr_index = g->me.addr.gid_index;
        i2r.hop_limit = 64;
        i2r.udp_sport = 0xc000u | (p->qpn & 0x3fffu); /* spread QPs over ECMP paths */
        GSHMEMI_CHECK(roce_mac(g, &peer, p->peer, i2r.rmac));
    } else {
        i2r.rlid = peer.addr.lid;
    }
    GSHMEMI_CHECK(gshmemi_prm_init2rtr(in, sizeof(in), &i2r));
    GSHMEMI_CHECK(modify(g, p, "INIT2RTR_QP", in));

    memset(&r2r, 0, sizeof(r2r));
    r2r.qpn = p->qpn;
    r2r.next_send_psn = g->me.addr.psn;
    r2r.log_sra_max = ilog2_floor(rd_init > 128 ? 128 : rd_init);
    r2r.retry_count = 7;
    r2r.rnr_retry = 7;
    r2r.ack_timeout = 14; /* 4.096 us * 2^14 = 67 ms, as the verbs backend */
    GSHMEMI_CHECK(gshmemi_prm_rtr2rts(in, sizeof(in), &r2r));
    return modify(g, p, "RTR2RTS_QP", in);
}

int gshmemi_ibgda_connect(gshmemi_ibgda_t *g, const void *blobs)
{
    size_t bs = gshmemi_ibgda_blob_size(g->n_pes, g->n_rc);
    int q;
    for (q = 0; q < g->n_qps; q++)
        GSHMEMI_CHECK(connect_qp(g, &g->qps[q], (const char *)blobs + bs * (size_t)g->qps[q].peer));
    GSHMEMI_INFO(SUB, "%d QPs in RTS", g->n_qps);
    return GSHMEMI_OK;
}

/* ---------------------------------------------------------------- memory regions */

int gshmemi_ibgda_reg_mr(gshmemi_ibgda_t *g, void *addr, size_t size, int dmabuf_fd, uint64_t dmabuf_offset,
                         gshmemi_ibgda_mr_t **out, uint32_t *lkey, uint32_t *rkey)
{
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                       IBV_ACCESS_REMOTE_ATOMIC;
    const int by_dmabuf = dmabuf_fd >= 0 && gshmemi_ibv.reg_dmabuf_mr;
    struct ibv_mr *mr;

    *out = NULL;
    if (!addr || size == 0) {
        GSHMEMI_ERROR(SUB, "registering memory for IBGDA: empty range (%p, %zu bytes)", addr, size);
        return GSHMEMI_ERR_INVALID;
    }
    if (g->n_mrs == g->cap_mrs) {
        int cap = g->cap_mrs ? 2 * g->cap_mrs : 16;
        struct ibv_mr **m = realloc(g->mrs, (size_t)cap * sizeof(*m));
        if (!m) {
            GSHMEMI_ERROR(SUB, "out of host memory for %d memory regions", cap);
            return GSHMEMI_ERR_NOMEM;
        }
        g->mrs = m;
        g->cap_mrs = cap;
    }
    char dmabuf_why[128] = "";
    errno = 0;
    mr = NULL;
    if (by_dmabuf) {
        mr = gshmemi_ibv.reg_dmabuf_mr(g->pd, dmabuf_offset, size, (uint64_t)(uintptr_t)addr, dmabuf_fd, access);
        if (!mr) { /* the peer-memory fallback */
            snprintf(dmabuf_why, sizeof(dmabuf_why), "%s", strerror(errno ? errno : EIO));
            GSHMEMI_INFO(SUB, "%s: registering %zu bytes at %p through its dmabuf failed (%s); trying by address (needs a peer-memory module such as nvidia-peermem)",
                         g->devname, size, addr, dmabuf_why);
            errno = 0;
        }
    }
    if (!mr) mr = gshmemi_ibv.reg_mr(g->pd, addr, size, access);
    if (!mr) {
        GSHMEMI_ERROR(SUB, "%s: registering %zu bytes at %p by address failed: %s%s%s%s", g->devname, size, addr,
                      strerror(errno ? errno : EIO), by_dmabuf ? "; through its dmabuf: " : "", dmabuf_why,
                      " (GPU memory needs a dmabuf or a peer-memory module such as nvidia-peermem)");
        return GSHMEMI_ERR_SYSTEM;
    }
    g->mrs[g->n_mrs++] = mr;
    *lkey = mr->lkey;
    *rkey = mr->rkey;
    *out = (gshmemi_ibgda_mr_t *)mr;
    return GSHMEMI_OK;
}

void gshmemi_ibgda_dereg_mr(gshmemi_ibgda_t *g, gshmemi_ibgda_mr_t *mr)
{
    int i;
    if (!mr) return;
    for (i = 0; i < g->n_mrs; i++) {
        if (g->mrs[i] == (struct ibv_mr *)mr) {
            g->mrs[i] = g->mrs[--g->n_mrs];
            if (gshmemi_ibv.dereg_mr((struct ibv_mr *)mr))
                GSHMEMI_WARN(SUB, "%s: ibv_dereg_mr failed: %s", g->devname, strerror(errno));
            return;
        }
    }
    GSHMEMI_WARN(SUB, "releasing a memory region IBGDA does not hold (%p): ignored", (void *)mr);
}

/* ---------------------------------------------------------------- accessors */

int gshmemi_ibgda_n_qps(const gshmemi_ibgda_t *g) { return g->n_qps; }

void gshmemi_ibgda_qp_info(const gshmemi_ibgda_t *g, int q, gshmemi_ibgda_qp_info_t *out)
{
    const qp_t *p = &g->qps[q];
    out->peer = p->peer;
    out->k = p->k;
    out->qpn = p->qpn;
    out->cqn = p->cqn;
    out->wq_offset = (size_t)q * g->lay.wq_stride;
    out->cq_offset = (size_t)q * g->lay.cq_stride;
    out->qp_dbr_offset = (size_t)q * GSHMEMI_IBGDA_DBR_STRIDE;
    out->cq_dbr_offset = (size_t)(g->lay.n_qps + q) * GSHMEMI_IBGDA_DBR_STRIDE;
}

void gshmemi_ibgda_uar(const gshmemi_ibgda_t *g, void **page, void **doorbell, uint32_t *page_id)
{
    *page = g->uar->base_addr;
    *doorbell = g->uar->reg_addr;
    *page_id = g->uar->page_id;
}

/* ---------------------------------------------------------------- doorbell mode */

int gshmemi_ibgda_doorbell_mode(int asked, int uar_mapped, const char *map_error, int *mode)
{
    const char *cause = map_error && *map_error ? map_error : "no reason given";
    switch (asked) {
    case GSHMEMI_DOORBELL_GPU:
        if (!uar_mapped) {
            GSHMEMI_ERROR(SUB, "GSHMEM_IBGDA_DOORBELL=gpu, but the doorbell page could not be mapped for the GPU (%s); set GSHMEM_IBGDA_DOORBELL=cpu or auto",
                          cause);
            return GSHMEMI_ERR_UNSUPPORTED;
        }
        *mode = GSHMEMI_DOORBELL_GPU;
        GSHMEMI_INFO(SUB, "doorbells rung by the GPU (GSHMEM_IBGDA_DOORBELL=gpu)");
        return GSHMEMI_OK;
    case GSHMEMI_DOORBELL_CPU:
        *mode = GSHMEMI_DOORBELL_CPU;
        GSHMEMI_INFO(SUB, "doorbells rung by a host thread (GSHMEM_IBGDA_DOORBELL=cpu)");
        return GSHMEMI_OK;
    case GSHMEMI_DOORBELL_AUTO:
        if (uar_mapped) {
            *mode = GSHMEMI_DOORBELL_GPU;
            GSHMEMI_INFO(SUB, "doorbells rung by the GPU (GSHMEM_IBGDA_DOORBELL=auto: the doorbell page maps for the GPU)");
        } else {
            *mode = GSHMEMI_DOORBELL_CPU;
            GSHMEMI_INFO(SUB, "doorbells rung by a host thread (GSHMEM_IBGDA_DOORBELL=auto: the doorbell page could not be mapped for the GPU: %s)",
                         cause);
        }
        return GSHMEMI_OK;
    default:
        GSHMEMI_ERROR(SUB, "doorbell mode %d is not one of GSHMEMI_DOORBELL_AUTO/GPU/CPU", asked);
        return GSHMEMI_ERR_INVALID;
    }
}

/* ---------------------------------------------------------------- probe */

int gshmemi_ibgda_probe_why(char *dev, size_t dev_cap, char *why, size_t why_cap)
{
    gshmemi_ibgda_t *g = calloc(1, sizeof(*g));
    int rc;

    dev[0] = why[0] = '\0';
    if (!g) {
        snprintf(why, why_cap, "out of host memory for the IBGDA probe");
        return 0;
    }
    rc = open_device(g, why, why_cap);
    if (rc == GSHMEMI_OK) snprintf(dev, dev_cap, "%s port %u", g->devname, g->port);
    gshmemi_ibgda_close(g); /* the transport opens it again, with its QPs, at init */
    return rc == GSHMEMI_OK ? 1 : rc == GSHMEMI_ERR_UNSUPPORTED ? 0 : -1;
}

int gshmemi_ibgda_probe(int forced)
{
    char why[2048], dev[GSHMEMI_IBV_NAME_MAX + 16];
    int usable = gshmemi_ibgda_probe_why(dev, sizeof(dev), why, sizeof(why));

    if (usable > 0) {
        GSHMEMI_INFO(SUB, "%s opens with DEVX: IBGDA on a ConnectX is possible from this PE", dev);
        return 1;
    }
    if (usable < 0) { /* GSHMEM_IB_DEVICE names a device that is absent or unusable */
        GSHMEMI_ERROR(SUB, "%s", why);
        snprintf(why, sizeof(why), "the device GSHMEM_IB_DEVICE=%s names cannot be used (logged above)", gshmemi_env.IB_DEVICE);
    }
    if (forced)
        GSHMEMI_ERROR(SUB, "GSHMEM_REMOTE_TRANSPORT=ibgda with GSHMEM_IBGDA_NIC=hw, but this PE cannot use IBGDA: %s", why);
    else
        GSHMEMI_INFO(SUB, "GSHMEM_REMOTE_TRANSPORT=auto: the proxy serves this PE's remote peers, no IBGDA: %s", why);
    return 0;
}

/* ---------------------------------------------------------------- device records */

size_t gshmemi_ibgda_aux_bytes(uint32_t sq_bbs)
{
    const size_t n = GSHMEMI_IBGDA_CTR_WORDS * 8 + (size_t)sq_bbs * 8 + sq_bbs;
    return (n + 4095) & ~(size_t)4095;
}

int gshmemi_ibgda_fill_records(const gshmemi_ibgda_t *g, const gshmemi_ibgda_gpu_view_t *v, gshmemi_ibgda_qp_t *recs)
{
    const uint32_t sq_bbs = 1u << g->log_sq_bbs;
    int q, served = 0;
    for (q = 0; q < g->n_qps; q++) {
        gshmemi_ibgda_qp_info_t qi;
        gshmemi_ibgda_qp_t *r;
        char *aux;
        gshmemi_ibgda_qp_info(g, q, &qi);
        served += qi.k == 0;
        r = &recs[(size_t)qi.peer * g->n_rc + qi.k];
        aux = v->aux + (size_t)q * v->aux_stride;
        memset(r, 0, sizeof(*r));
        r->sq = v->wq + qi.wq_offset;
        r->sq_dbrec = (uint32_t *)(v->dbr + qi.qp_dbr_offset);
        r->db = v->db;
        r->cq = v->cq + qi.cq_offset;
        r->cq_dbrec = (uint32_t *)(v->dbr_cq + qi.cq_dbr_offset);
        r->ctr = (unsigned long long *)aux;
        r->result = (uint64_t *)(aux + GSHMEMI_IBGDA_CTR_WORDS * 8);
        r->bbs = (uint8_t *)(aux + GSHMEMI_IBGDA_CTR_WORDS * 8 + (size_t)sq_bbs * 8);
        r->sq_bbs = sq_bbs;
        r->ncqe = 1u << g->log_cqes;
        r->qpn = qi.qpn;
    }
    return served;
}
