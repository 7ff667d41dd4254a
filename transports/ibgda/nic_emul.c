/* The emulated NIC's engine: see nic_emul.h. Checks are done in the order a ConnectX meets them
 * (control segment, then the segments of the opcode, local keys, then the remote side), and the
 * first that fails decides the error CQE. */
#include "nic_emul.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/base/log.h"

#define SUB "ibgda-emul"

#define MSG_MAX (1ull << 31) /* IB's largest message; a data segment's byte count 0 means it */
#define WQE_MAX_BBS 16       /* ds is 6 bits: at most 63 units, 16 BBs */
#define WQE_FAILED 1         /* a WQE got its error CQE (internal: not a failure of progress) */

const char *gshmemi_nic_emul_reason_str(uint8_t vendor)
{
    switch (vendor) {
#define GSHMEMI_NIC_EMUL_REASON_CASE(name, value, text)                                            \
    case value: return text;
        GSHMEMI_NIC_EMUL_REASON_X(GSHMEMI_NIC_EMUL_REASON_CASE)
#undef GSHMEMI_NIC_EMUL_REASON_CASE
    default: return "unknown";
    }
}

uint64_t gshmemi_nic_emul_amo_apply(const gshmemi_nic_emul_amo_t *a, uint64_t old) { return gshmemi_nic_emul_amo_apply_hd(a, old); }

/* ---- the WQE being decoded ---------------------------------------------------------------- */
typedef struct wqe {
    _Alignas(16) uint8_t buf[WQE_MAX_BBS * GSHMEMI_MLX5_SEND_WQE_BB];
    uint16_t idx;    /* the counter the SQ expects (not what the WQE says) */
    uint16_t widx;   /* what the WQE says */
    uint8_t opcode, opmod, ds, fm_ce_se;
    uint32_t qpn;
    unsigned bbs;    /* BBs its ds covers (at least 1) */
    uint64_t number; /* 1-based among this QP's WQEs */
} wqe_t;

static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return gshmemi_mlx5_be32(v);
}

static uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return gshmemi_mlx5_be64(v);
}

static const char *op_name(uint8_t opcode, char *buf, size_t n)
{
    const char *s = gshmemi_mlx5_opcode_name(opcode);
    if (s) return s;
    snprintf(buf, n, "opcode 0x%02x", opcode);
    return buf;
}

static int fatal(gshmemi_nic_emul_qp_t *qp, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fatal(gshmemi_nic_emul_qp_t *qp, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(qp->reason, sizeof(qp->reason), fmt, ap);
    va_end(ap);
    GSHMEMI_ERROR(SUB, "%s", qp->reason);
    qp->state = GSHMEMI_NIC_EMUL_QP_FATAL;
    qp->fatal_rc = rc;
    return rc;
}

static int callback_failed(gshmemi_nic_emul_qp_t *qp, const char *name, int rc)
{
    return fatal(qp, rc < 0 ? rc : GSHMEMI_ERR_INVALID, "QP 0x%x to PE %d: the %s callback failed (%d: %s); the emulated NIC stops",
                 qp->cfg.qpn, qp->cfg.peer, name, rc, gshmemi_strerror(rc));
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        int try_rc_ = (call);                                                                      \
        if (try_rc_) return try_rc_;                                                               \
    } while (0)

/* ---- CQEs ----------------------------------------------------------------------------------- */
/* Writes the success CQE a collapsed CQ kept back. In the fatal state (a callback failed after
 * the CQE's WQE completed) it is still written, and that first failure stays the one reported. */
static int flush_cqe(gshmemi_nic_emul_qp_t *qp)
{
    if (!qp->cqe_pending) return 0;
    qp->cqe_pending = 0;
    int rc = qp->ops->write_cqe(qp->ctx, qp->cfg.cq, &qp->cqe_stash);
    if (!rc) return 0;
    if (qp->state == GSHMEMI_NIC_EMUL_QP_FATAL) return qp->fatal_rc;
    return callback_failed(qp, "write_cqe", rc);
}

static int put_cqe(gshmemi_nic_emul_qp_t *qp, gshmemi_mlx5_cqe_t *cqe, uint8_t cqe_opcode)
{
    const gshmemi_nic_emul_qp_cfg_t *c = &qp->cfg;
    uint32_t slot = c->cq_collapsed ? 0 : gshmemi_mlx5_cq_slot(qp->cq_pi, c->ncqe);
    /* the consumer index only grows: read it again only when the last value read leaves no room */
    if (!c->cq_collapsed && !c->cq_overrun_ignore && ((qp->cq_pi - qp->cq_ci) & 0xffffffu) >= c->ncqe) {
        uint32_t ci_be;
        int rc = qp->ops->read(qp->ctx, &ci_be, c->cq_dbrec, sizeof(ci_be));
        if (rc) return callback_failed(qp, "read (CQ doorbell record)", rc);
        qp->cq_ci = gshmemi_mlx5_be32(ci_be) & 0xffffffu;
        if (((qp->cq_pi - qp->cq_ci) & 0xffffffu) >= c->ncqe)
            return fatal(qp, GSHMEMI_ERR_INVALID,
                         "QP 0x%x to PE %d: CQ overrun: CQE %u would overwrite one not yet consumed (consumer index %u "
                         "in the CQ doorbell record, %u CQEs); the emulated NIC stops",
                         c->qpn, c->peer, qp->cq_pi, qp->cq_ci, c->ncqe);
    }
    /* the owner bit flips on every pass over the ring, from 0 on the first */
    cqe->ok.op_own = (uint8_t)(cqe_opcode << 4 | gshmemi_mlx5_cq_owner(qp->cq_pi, c->ncqe));
    if (c->cq_collapsed) {
        /* entry 0 shows only the newest CQE: a success waits for the next CQE or the end of the
         * call, each write being a copy to GPU memory; an error is written at once, after the
         * success before it, so the consumer never sees an older CQE after a newer one */
        if (cqe_opcode == GSHMEMI_MLX5_CQE_REQ) {
            qp->cqe_stash = *cqe;
            qp->cqe_pending = 1;
            qp->cq_pi++;
            return 0;
        }
        TRY(flush_cqe(qp));
    }
    int rc = qp->ops->write_cqe(qp->ctx, (uint8_t *)c->cq + (size_t)slot * GSHMEMI_MLX5_CQE_BYTES, cqe);
    if (rc) return callback_failed(qp, "write_cqe", rc);
    qp->cq_pi++;
    return 0;
}

static int complete(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, uint32_t byte_cnt)
{
    if (((w->fm_ce_se >> 2) & 3) < 2) return 0; /* ce 0 (and 1): a CQE only on error */
    gshmemi_mlx5_cqe_t cqe;
    memset(&cqe, 0, sizeof(cqe));
    cqe.ok.byte_cnt = gshmemi_mlx5_be32(byte_cnt);
    cqe.ok.sop_drop_qpn = gshmemi_mlx5_be32((uint32_t)w->opcode << 24 | qp->cfg.qpn);
    cqe.ok.wqe_counter = gshmemi_mlx5_be16(w->idx);
    return put_cqe(qp, &cqe, GSHMEMI_MLX5_CQE_REQ);
}

static int err_cqe(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, uint8_t syndrome, uint8_t vendor)
{
    gshmemi_mlx5_cqe_t cqe;
    memset(&cqe, 0, sizeof(cqe));
    cqe.err.syndrome = syndrome;
    cqe.err.vendor_err_synd = vendor;
    cqe.err.s_wqe_opcode_qpn = gshmemi_mlx5_be32((uint32_t)w->opcode << 24 | qp->cfg.qpn);
    cqe.err.wqe_counter = gshmemi_mlx5_be16(w->idx);
    return put_cqe(qp, &cqe, GSHMEMI_MLX5_CQE_REQ_ERR);
}

/* The WQE fails: logged, an error CQE whatever its ce bits, the QP to the error state. Returns
 * WQE_FAILED, or a negative code when the CQE could not be written. */
static int fail(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, uint8_t syndrome, uint8_t vendor, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, uint8_t syndrome, uint8_t vendor, const char *fmt, ...)
{
    char detail[128], sbuf[GSHMEMI_MLX5_SYNDROME_BUF], obuf[16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    snprintf(qp->reason, sizeof(qp->reason), "QP 0x%x to PE %d: WQE %llu (index %u, %s): %s: %s", qp->cfg.qpn,
             qp->cfg.peer, (unsigned long long)w->number, w->idx, op_name(w->opcode, obuf, sizeof(obuf)), detail,
             gshmemi_mlx5_syndrome_str(syndrome, sbuf));
    GSHMEMI_ERROR(SUB, "%s", qp->reason);
    qp->state = GSHMEMI_NIC_EMUL_QP_ERR;
    qp->err.syndrome = syndrome;
    qp->err.vendor_err_synd = vendor;
    qp->err.wqe_opcode = w->opcode;
    qp->err.qpn = qp->cfg.qpn;
    qp->err.wqe_counter = w->idx;
    int rc = err_cqe(qp, w, syndrome, vendor);
    return rc ? rc : WQE_FAILED;
}

/* ---- keys ----------------------------------------------------------------------------------- */
/* What the resolve callback answered for a local (lkey) or remote (rkey) range: 0 when it resolved,
 * else the error completion a NIC gives (access_name: the access refused, "reads", "writes"...). */
static int key_refused(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, int rc, int remote, uint32_t key, uint64_t addr,
                       uint64_t len, const char *access_name)
{
    const uint8_t syndrome = remote ? GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR : GSHMEMI_MLX5_SYNDROME_LOCAL_PROT_ERR;
    const char *key_name = remote ? "rkey" : "lkey", *side = remote ? "remote" : "local";
    switch (rc) {
    case 0: return 0;
    case GSHMEMI_NIC_EMUL_KEY_UNKNOWN:
        if (remote)
            return fail(qp, w, syndrome, GSHMEMI_NIC_EMUL_RKEY, "rkey 0x%x is not registered at PE %d", key, qp->cfg.peer);
        return fail(qp, w, syndrome, GSHMEMI_NIC_EMUL_LKEY, "lkey 0x%x is not registered", key);
    case GSHMEMI_NIC_EMUL_KEY_RANGE:
        return fail(qp, w, syndrome, remote ? GSHMEMI_NIC_EMUL_RRANGE : GSHMEMI_NIC_EMUL_LRANGE,
                    "%s [0x%llx, +%llu) is outside %s 0x%x's region", side, (unsigned long long)addr, (unsigned long long)len,
                    key_name, key);
    case GSHMEMI_NIC_EMUL_KEY_ACCESS:
        return fail(qp, w, syndrome, remote ? GSHMEMI_NIC_EMUL_RACCESS : GSHMEMI_NIC_EMUL_LACCESS,
                    "%s 0x%x's region does not allow %s %s", key_name, key, side, access_name);
    default: return callback_failed(qp, remote ? "resolve_remote" : "resolve_local", rc);
    }
}

static int res_local(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, uint32_t lkey, uint64_t addr, uint64_t len,
                     int access, void **ptr)
{
    *ptr = NULL;
    if (qp->cfg.null_mode) return 0;
    int rc = qp->ops->resolve_local(qp->ctx, qp, lkey, addr, len, access, ptr);
    return key_refused(qp, w, rc, 0, lkey, addr, len, access == GSHMEMI_NIC_EMUL_LOCAL_WRITE ? "writes" : "reads");
}

/* len 0: an RDMA of no bytes, whose rkey and address the responder does not check (IB). */
static int res_remote(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, uint32_t rkey, uint64_t raddr, uint64_t len,
                      int access, void **ptr)
{
    *ptr = NULL;
    if (qp->inject.bad_rkey_at == w->number)
        return fail(qp, w, GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR, GSHMEMI_NIC_EMUL_INJECT_RKEY,
                    "rkey 0x%x treated as unknown: bad rkey injected", rkey);
    if (qp->inject.bad_range_at == w->number)
        return fail(qp, w, GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR, GSHMEMI_NIC_EMUL_INJECT_RANGE,
                    "remote 0x%llx treated as outside rkey 0x%x's region: out-of-range address injected",
                    (unsigned long long)raddr, rkey);
    if (qp->cfg.null_mode || len == 0) return 0;
    int rc = qp->ops->resolve_remote(qp->ctx, qp, rkey, raddr, len, access, ptr);
    return key_refused(qp, w, rc, 1, rkey, raddr, len,
                       access == GSHMEMI_NIC_EMUL_REMOTE_READ    ? "reads"
                       : access == GSHMEMI_NIC_EMUL_REMOTE_WRITE ? "writes"
                                                                 : "atomics");
}

/* ---- one opcode each ------------------------------------------------------------------------ */
#define SEG(w, ds_index) ((w)->buf + (size_t)(ds_index) * GSHMEMI_MLX5_DS_BYTES)

/* The data segments from unit first to the WQE's end (an RDMA WRITE's gather list or an RDMA
 * READ's scatter list): checked, their lengths summed, their keys resolved into ptr[]. */
static int data_segs(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, unsigned first, int access, void **ptr,
                     uint64_t *len, uint64_t *total)
{
    *total = 0;
    for (unsigned i = first; i < w->ds; i++) {
        uint32_t bc = ld32(SEG(w, i));
        if (bc & GSHMEMI_MLX5_INLINE_SEG)
            return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_SEG,
                        "unit %u is an inline segment (byte count 0x%08x) where a data segment must be", i, bc);
        len[i - first] = bc ? bc : MSG_MAX;
        *total += len[i - first];
    }
    if (*total > MSG_MAX)
        return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_LENGTH_ERR, GSHMEMI_NIC_EMUL_MSG_LEN,
                    "%u data segments of %llu bytes in all", w->ds - first, (unsigned long long)*total);
    for (unsigned i = first; i < w->ds; i++)
        TRY(res_local(qp, w, ld32(SEG(w, i) + 4), ld64(SEG(w, i) + 8), len[i - first], access, &ptr[i - first]));
    return 0;
}

static int bad_ds(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, const char *need)
{
    return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_DS, "ds %u, %s", w->ds, need);
}

static int bad_opmod(gshmemi_nic_emul_qp_t *qp, const wqe_t *w)
{
    return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_OPMOD, "opmod 0x%02x", w->opmod);
}

/* The bytes of an RDMA WRITE (to_remote) or READ between the remote range at remote and the local
 * buffers of the WQE's data segments (from segment 2 on); none in the null modes. */
static int copy_segs(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, void *remote, void *const *ptr, const uint64_t *len, int to_remote)
{
    uint64_t off = 0;
    if (qp->cfg.null_mode || qp->cfg.null_data) return 0;
    for (unsigned i = 0; i + 2 < w->ds; off += len[i], i++) {
        uint8_t *r = (uint8_t *)remote + off;
        int rc = to_remote ? qp->ops->copy(qp->ctx, r, ptr[i], len[i]) : qp->ops->copy(qp->ctx, ptr[i], r, len[i]);
        if (rc) return callback_failed(qp, "copy", rc);
    }
    return 0;
}

/* What an RDMA WRITE or READ starts with: no opmod, the ctrl and raddr segments (too_few says
 * so when they are missing), and the remote address and key of the raddr segment. */
static int rdma_head(gshmemi_nic_emul_qp_t *qp, const wqe_t *w, const char *too_few, uint64_t *raddr, uint32_t *rkey)
{
    if (w->opmod) return bad_opmod(qp, w);
    if (w->ds < 2) return bad_ds(qp, w, too_few);
    *raddr = ld64(SEG(w, 1));
    *rkey = ld32(SEG(w, 1) + 8);
    return 0;
}

static int do_write(gshmemi_nic_emul_qp_t *qp, const wqe_t *w)
{
    void *ptr[GSHMEMI_MLX5_MAX_DS], *dst;
    uint64_t len[GSHMEMI_MLX5_MAX_DS], total, raddr = 0;
    uint32_t rkey = 0;
    TRY(rdma_head(qp, w, "an RDMA_WRITE needs at least 2 (ctrl, raddr)", &raddr, &rkey));
    if (w->ds > 2 && (ld32(SEG(w, 2)) & GSHMEMI_MLX5_INLINE_SEG)) {
        uint32_t n = ld32(SEG(w, 2)) & ~GSHMEMI_MLX5_INLINE_SEG;
        uint32_t max = qp->cfg.max_inline ? qp->cfg.max_inline : GSHMEMI_MLX5_INLINE_MAX;
        if (n > max)
            return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_LENGTH_ERR, GSHMEMI_NIC_EMUL_INLINE_LEN,
                        "%u bytes of inline data, the QP takes at most %u", n, max);
        unsigned need = (36 + n + GSHMEMI_MLX5_DS_BYTES - 1) / GSHMEMI_MLX5_DS_BYTES;
        if (w->ds != need) {
            char what[64];
            snprintf(what, sizeof(what), "an inline RDMA_WRITE of %u bytes needs %u", n, need);
            return bad_ds(qp, w, what);
        }
        TRY(res_remote(qp, w, rkey, raddr, n, GSHMEMI_NIC_EMUL_REMOTE_WRITE, &dst));
        if (n && !qp->cfg.null_mode) {
            int rc = qp->ops->store(qp->ctx, dst, w->buf + 36, n);
            if (rc) return callback_failed(qp, "store", rc);
        }
        return complete(qp, w, n);
    }
    /* ds 2: a WRITE of no bytes (how mlx5 posts one); else a gather list */
    TRY(data_segs(qp, w, 2, GSHMEMI_NIC_EMUL_LOCAL_READ, ptr, len, &total));
    TRY(res_remote(qp, w, rkey, raddr, total, GSHMEMI_NIC_EMUL_REMOTE_WRITE, &dst));
    TRY(copy_segs(qp, w, dst, ptr, len, 1));
    return complete(qp, w, (uint32_t)total);
}

static int do_read(gshmemi_nic_emul_qp_t *qp, const wqe_t *w)
{
    void *ptr[GSHMEMI_MLX5_MAX_DS], *src;
    uint64_t len[GSHMEMI_MLX5_MAX_DS], total, raddr = 0;
    uint32_t rkey = 0;
    TRY(rdma_head(qp, w, "an RDMA_READ needs at least 2 (ctrl, raddr)", &raddr, &rkey));
    TRY(data_segs(qp, w, 2, GSHMEMI_NIC_EMUL_LOCAL_WRITE, ptr, len, &total));
    TRY(res_remote(qp, w, rkey, raddr, total, GSHMEMI_NIC_EMUL_REMOTE_READ, &src));
    TRY(copy_segs(qp, w, src, ptr, len, 0));
    return complete(qp, w, (uint32_t)total);
}

static int do_atomic(gshmemi_nic_emul_qp_t *qp, const wqe_t *w)
{
    gshmemi_nic_emul_amo_t a;
    unsigned need, dseg;
    memset(&a, 0, sizeof(a));
    const uint8_t *s = SEG(w, 2);
    switch (w->opcode) {
    case GSHMEMI_MLX5_OPCODE_ATOMIC_CS:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_FA:
        if (w->opmod) return bad_opmod(qp, w);
        a.size = 8, need = 4, dseg = 3;
        if (w->opcode == GSHMEMI_MLX5_OPCODE_ATOMIC_CS) {
            a.kind = GSHMEMI_NIC_EMUL_AMO_CS;
            a.swap = ld64(s);
            a.compare = ld64(s + 8);
        } else {
            a.kind = GSHMEMI_NIC_EMUL_AMO_FA; /* the compare field is not used */
            a.add = ld64(s);
        }
        break;
    default: /* the extended atomics: opmod 0x08 | log2(size) - 2, 4 and 8 bytes emulated */
        if (w->opmod == GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(2))
            a.size = 4;
        else if (w->opmod == GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(3))
            a.size = 8;
        else
            return bad_opmod(qp, w);
        if (w->opcode == GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS) {
            a.kind = GSHMEMI_NIC_EMUL_AMO_MASKED_CS;
            if (a.size == 8) {
                a.swap = ld64(s), a.compare = ld64(s + 8), a.swap_mask = ld64(s + 16), a.compare_mask = ld64(s + 24);
                need = 5, dseg = 4;
            } else {
                a.swap = ld32(s), a.compare = ld32(s + 4), a.swap_mask = ld32(s + 8), a.compare_mask = ld32(s + 12);
                need = 4, dseg = 3;
            }
        } else {
            a.kind = GSHMEMI_NIC_EMUL_AMO_MASKED_FA;
            if (a.size == 8)
                a.add = ld64(s), a.field_boundary = ld64(s + 8);
            else
                a.add = ld32(s), a.field_boundary = ld32(s + 4);
            need = 4, dseg = 3;
        }
        break;
    }
    if (w->ds != need) {
        char what[80];
        snprintf(what, sizeof(what), "this %u-byte atomic needs %u (ctrl, raddr, operands, one data segment)", a.size,
                 need);
        return bad_ds(qp, w, what);
    }
    uint64_t raddr = ld64(SEG(w, 1));
    uint32_t rkey = ld32(SEG(w, 1) + 8);
    uint32_t bc = ld32(SEG(w, dseg));
    if (bc & GSHMEMI_MLX5_INLINE_SEG)
        return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_SEG,
                    "unit %u is an inline segment (byte count 0x%08x) where the result's data segment must be", dseg, bc);
    if (bc != a.size)
        return fail(qp, w, GSHMEMI_MLX5_SYNDROME_LOCAL_LENGTH_ERR, GSHMEMI_NIC_EMUL_ATOMIC_LEN,
                    "the result segment has %llu bytes, the operand %u", bc ? (unsigned long long)bc : MSG_MAX, a.size);
    void *local, *target;
    TRY(res_local(qp, w, ld32(SEG(w, dseg) + 4), ld64(SEG(w, dseg) + 8), a.size, GSHMEMI_NIC_EMUL_LOCAL_WRITE, &local));
    if (raddr % a.size)
        return fail(qp, w, GSHMEMI_MLX5_SYNDROME_REMOTE_INVAL_REQ_ERR, GSHMEMI_NIC_EMUL_ATOMIC_ALIGN,
                    "remote 0x%llx is not %u-byte aligned", (unsigned long long)raddr, a.size);
    TRY(res_remote(qp, w, rkey, raddr, a.size, GSHMEMI_NIC_EMUL_REMOTE_ATOMIC, &target));
    if (!qp->cfg.null_mode) {
        uint64_t old = 0;
        int rc = qp->ops->atomic(qp->ctx, target, &a, &old);
        if (rc) return callback_failed(qp, "atomic", rc);
        uint32_t old32 = (uint32_t)old;
        rc = qp->ops->store(qp->ctx, local, a.size == 4 ? (const void *)&old32 : (const void *)&old, a.size);
        if (rc) return callback_failed(qp, "store", rc);
    }
    return complete(qp, w, a.size);
}

/* ---- the queue ------------------------------------------------------------------------------ */
/* The BBs posted since the last WQE consumed, avail of them, into the host copy at their slots:
 * one read, or two where the ring wraps. Never past the ring's size: a doorbell record further
 * ahead is one()'s error to report, and every slot then holds what the ring holds. */
static int read_sq(gshmemi_nic_emul_qp_t *qp, uint32_t avail)
{
    uint32_t n = avail < qp->cfg.sq_bbs ? avail : qp->cfg.sq_bbs;
    uint32_t slot = gshmemi_mlx5_sq_slot((uint16_t)qp->sq_ci, qp->cfg.sq_bbs);
    while (n) {
        uint32_t run = qp->cfg.sq_bbs - slot < n ? qp->cfg.sq_bbs - slot : n;
        size_t off = (size_t)slot * GSHMEMI_MLX5_SEND_WQE_BB;
        int rc = qp->ops->read(qp->ctx, qp->sq_cache + off, (const uint8_t *)qp->cfg.sq + off,
                               (size_t)run * GSHMEMI_MLX5_SEND_WQE_BB);
        if (rc) return callback_failed(qp, "read (SQ)", rc);
        n -= run;
        slot = 0;
    }
    return 0;
}

/* n BBs of the WQE at counter idx, from its BB first on, into dst (the ring may wrap between),
 * from the host copy read_sq filled. */
static void read_bbs(gshmemi_nic_emul_qp_t *qp, uint16_t idx, unsigned first, unsigned n, uint8_t *dst)
{
    while (n) {
        uint32_t slot = gshmemi_mlx5_sq_slot((uint16_t)(idx + first), qp->cfg.sq_bbs);
        unsigned run = qp->cfg.sq_bbs - slot < n ? qp->cfg.sq_bbs - slot : n;
        memcpy(dst, qp->sq_cache + (size_t)slot * GSHMEMI_MLX5_SEND_WQE_BB, (size_t)run * GSHMEMI_MLX5_SEND_WQE_BB);
        dst += (size_t)run * GSHMEMI_MLX5_SEND_WQE_BB;
        first += run;
        n -= run;
    }
}

/* The next WQE, with avail BBs posted. *used: the BBs it takes (0 while a delay holds it). */
static int one(gshmemi_nic_emul_qp_t *qp, uint32_t avail, unsigned *used)
{
    wqe_t w; /* its buffer is filled BB by BB as the ds count says */
    w.number = qp->wqes + 1;
    w.idx = (uint16_t)qp->sq_ci;
    *used = 0;
    if (qp->state == GSHMEMI_NIC_EMUL_QP_RTS && qp->inject.delay_calls &&
        (qp->inject.delay_at == 0 || qp->inject.delay_at == w.number)) {
        if (qp->held_wqe != w.number) {
            qp->held_wqe = w.number;
            qp->hold_left = qp->inject.delay_calls;
        }
        if (qp->hold_left) {
            qp->hold_left--;
            GSHMEMI_TRACE(SUB, "QP 0x%x: WQE %llu held (%u more progress calls)", qp->cfg.qpn,
                          (unsigned long long)w.number, qp->hold_left);
            return 0;
        }
    }
    read_bbs(qp, w.idx, 0, 1, w.buf);
    uint32_t w0 = ld32(w.buf), w1 = ld32(w.buf + 4);
    w.opcode = (uint8_t)w0;
    w.widx = (uint16_t)(w0 >> 8);
    w.opmod = (uint8_t)(w0 >> 24);
    w.qpn = w1 >> 8;
    w.ds = w1 & 0x3f;
    w.fm_ce_se = w.buf[11];
    w.bbs = w.ds ? gshmemi_mlx5_wqe_bbs(w.ds) : 1;
    *used = w.bbs < avail ? w.bbs : avail;

    if (qp->state != GSHMEMI_NIC_EMUL_QP_RTS) { /* flushed, whatever it holds */
        GSHMEMI_TRACE(SUB, "QP 0x%x: WQE %llu (index %u) flushed", qp->cfg.qpn, (unsigned long long)w.number, w.idx);
        return err_cqe(qp, &w, GSHMEMI_MLX5_SYNDROME_WR_FLUSH_ERR, GSHMEMI_NIC_EMUL_FLUSH);
    }
    if (avail > qp->cfg.sq_bbs)
        return fail(qp, &w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_SQ_OVERFLOW,
                    "the doorbell record is %u BBs ahead, the SQ holds %u", avail, qp->cfg.sq_bbs);
    if (w.widx != w.idx)
        return fail(qp, &w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_INDEX,
                    "the WQE says index %u", w.widx);
    if (w.qpn != qp->cfg.qpn)
        return fail(qp, &w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_QPN,
                    "the WQE says qpn 0x%x", w.qpn);
    if (w.ds == 0) return bad_ds(qp, &w, "a WQE has at least its ctrl segment");
    if (w.bbs > avail)
        return fail(qp, &w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_PAST_DBREC,
                    "ds %u takes %u BBs, the doorbell record covers %u", w.ds, w.bbs, avail);
    if ((w.fm_ce_se >> 5) > 4) /* 0 none, 1 small, 2 fence, 3 strong ordering, 4 small and fence */
        return fail(qp, &w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_FENCE,
                    "fence mode %u", w.fm_ce_se >> 5);
    if (w.bbs > 1) read_bbs(qp, w.idx, 1, w.bbs - 1, w.buf + GSHMEMI_MLX5_SEND_WQE_BB);
    /* Work runs in order, each WQE done before the next is read: every fence mode holds. The
     * signature byte is ignored, as with WQE signatures disabled (gshmem never enables them). */
    switch (w.opcode) {
    case GSHMEMI_MLX5_OPCODE_NOP: /* ds beyond 1 is padding: a NOP may fill BBs */
        if (w.opmod) return bad_opmod(qp, &w);
        return complete(qp, &w, 0);
    case GSHMEMI_MLX5_OPCODE_RDMA_WRITE: return do_write(qp, &w);
    case GSHMEMI_MLX5_OPCODE_RDMA_READ: return do_read(qp, &w);
    case GSHMEMI_MLX5_OPCODE_ATOMIC_CS:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_FA:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA: return do_atomic(qp, &w);
    default:
        return fail(qp, &w, GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR, GSHMEMI_NIC_EMUL_BAD_OPCODE,
                    gshmemi_mlx5_opcode_name(w.opcode) ? "not executed by the emulated NIC (no receive queues)"
                                                        : "unknown opcode");
    }
}

int gshmemi_nic_emul_progress(gshmemi_nic_emul_qp_t *qp)
{
    if (!qp) {
        GSHMEMI_ERROR(SUB, "gshmemi_nic_emul_progress: qp is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    if (qp->state == GSHMEMI_NIC_EMUL_QP_FATAL) return qp->fatal_rc;
    uint32_t db_be;
    int rc = qp->ops->read(qp->ctx, &db_be, qp->cfg.sq_dbrec, sizeof(db_be));
    if (rc) return callback_failed(qp, "read (send doorbell record)", rc);
    uint32_t avail = (uint16_t)(gshmemi_mlx5_be32(db_be) - (uint16_t)qp->sq_ci);
    if (avail) TRY(read_sq(qp, avail));
    int n = 0;
    while (avail) {
        unsigned used;
        rc = one(qp, avail, &used);
        if (rc < 0) {
            (void)flush_cqe(qp); /* the WQEs done before the failure still complete */
            return rc;
        }
        if (!used) break;
        qp->sq_ci += used;
        qp->wqes++;
        avail -= used;
        n++;
    }
    TRY(flush_cqe(qp));
    return n;
}

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

int gshmemi_nic_emul_qp_init(gshmemi_nic_emul_qp_t *qp, const gshmemi_nic_emul_qp_cfg_t *cfg,
                             const gshmemi_nic_emul_ops_t *ops, void *ctx)
{
    const char *bad = NULL;
    if (!qp || !cfg || !ops) {
        GSHMEMI_ERROR(SUB, "gshmemi_nic_emul_qp_init: qp, cfg and ops must not be NULL");
        return GSHMEMI_ERR_INVALID;
    }
    int cq_ci = !cfg->cq_collapsed && !cfg->cq_overrun_ignore;
    if (cfg->qpn > 0xffffffu) bad = "cfg.qpn is wider than 24 bits";
    else if (!is_pow2(cfg->sq_bbs) || cfg->sq_bbs > 65536) bad = "cfg.sq_bbs must be a power of two, at most 65536";
    else if (!is_pow2(cfg->ncqe) || cfg->ncqe > (1u << 23)) bad = "cfg.ncqe must be a power of two, at most 2^23";
    else if (!cfg->sq || !cfg->sq_dbrec || !cfg->cq) bad = "cfg.sq, cfg.sq_dbrec and cfg.cq must be given";
    else if (cq_ci && !cfg->cq_dbrec) bad = "cfg.cq_dbrec must be given (unless the CQ is collapsed or ignores overrun)";
    else if (cfg->max_inline > GSHMEMI_MLX5_MAX_DS * GSHMEMI_MLX5_DS_BYTES - 36)
        bad = "cfg.max_inline is more than a WQE of 63 ds holds (972 bytes)";
    else if (!ops->read || !ops->write_cqe) bad = "ops.read and ops.write_cqe must be given";
    else if (!cfg->null_mode && (!ops->resolve_local || !ops->resolve_remote || !ops->copy || !ops->store || !ops->atomic))
        bad = "ops.resolve_local, resolve_remote, copy, store and atomic must be given (except in null mode)";
    if (bad) {
        GSHMEMI_ERROR(SUB, "gshmemi_nic_emul_qp_init: QP 0x%x: %s (sq_bbs %u, ncqe %u, max_inline %u)", cfg->qpn, bad,
                      cfg->sq_bbs, cfg->ncqe, cfg->max_inline);
        return GSHMEMI_ERR_INVALID;
    }
    memset(qp, 0, sizeof(*qp));
    qp->sq_cache = malloc((size_t)cfg->sq_bbs * GSHMEMI_MLX5_SEND_WQE_BB);
    if (!qp->sq_cache) {
        GSHMEMI_ERROR(SUB, "gshmemi_nic_emul_qp_init: QP 0x%x: no host memory for the copy of its SQ (%u BBs, %zu bytes)",
                      cfg->qpn, cfg->sq_bbs, (size_t)cfg->sq_bbs * GSHMEMI_MLX5_SEND_WQE_BB);
        return GSHMEMI_ERR_NOMEM;
    }
    qp->cfg = *cfg;
    qp->ops = ops;
    qp->ctx = ctx;
    qp->state = GSHMEMI_NIC_EMUL_QP_RTS;
    return GSHMEMI_OK;
}

void gshmemi_nic_emul_qp_fini(gshmemi_nic_emul_qp_t *qp)
{
    if (!qp) return;
    free(qp->sq_cache);
    qp->sq_cache = NULL;
}
