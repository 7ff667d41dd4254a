/* The PRM command encoders of mlx5_prm.h. Every value is checked against its field's width
 * before it is written, so a wrong size or number fails here with its name instead of reaching
 * the firmware truncated. */
#include "mlx5_prm.h"

#include <string.h>

#include "../../runtime/base/log.h"

#define SUB "ibgda"

/* The width in bits of field fld of command typ, and whether v fits it. */
#define FIELD_BITS(typ, fld) __devx_bit_sz(typ, fld)
static int fits(uint64_t v, unsigned bits) { return bits >= 64 || v < (1ull << bits); }

/* Field fld of command typ in the buffer at p set to v, after checking that v fits the field
 * (GSHMEMI_ERR_INVALID, logged naming the command and the field, from the calling encoder). */
#define SET_FIELD(cmd, typ, p, fld, v)                                                            \
    do {                                                                                          \
        if (!fits((uint64_t)(v), FIELD_BITS(typ, fld))) {                                         \
            GSHMEMI_ERROR(SUB, "%s: %s = %llu does not fit its %u-bit field", cmd, #fld,          \
                          (unsigned long long)(v), (unsigned)FIELD_BITS(typ, fld));               \
            return GSHMEMI_ERR_INVALID;                                                           \
        }                                                                                         \
        DEVX_SET(typ, p, fld, v);                                                                 \
    } while (0)

/* The doorbell record's offset in its umem, which the device reads 8 bytes at a time. */
static int check_dbr_offset(const char *cmd, uint64_t offset)
{
    if (offset % 8) {
        GSHMEMI_ERROR(SUB, "%s: the doorbell record offset %llu is not 8-byte aligned", cmd, (unsigned long long)offset);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static int check_len(const char *cmd, size_t len, size_t need)
{
    if (len < need) {
        GSHMEMI_ERROR(SUB, "%s: the command buffer has %zu bytes, the command needs %zu", cmd, len, need);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

int gshmemi_prm_create_cq(void *in, size_t len, const gshmemi_prm_cq_t *a)
{
    static const char cmd[] = "CREATE_CQ";
    void *cqc;

    GSHMEMI_CHECK(check_len(cmd, len, GSHMEMI_PRM_CREATE_CQ_IN_BYTES));
    GSHMEMI_CHECK(check_dbr_offset(cmd, a->dbr_umem_offset));

    memset(in, 0, GSHMEMI_PRM_CREATE_CQ_IN_BYTES);
    DEVX_SET(create_cq_in, in, opcode, GSHMEMI_PRM_CMD_CREATE_CQ);
    DEVX_SET64(create_cq_in, in, cq_umem_offset, a->cq_umem_offset);
    SET_FIELD(cmd, create_cq_in, in, cq_umem_id, a->cq_umem_id);
    DEVX_SET(create_cq_in, in, cq_umem_valid, 1);

    cqc = DEVX_ADDR_OF(create_cq_in, in, cq_context);
    DEVX_SET(cqc, cqc, dbr_umem_valid, 1);
    DEVX_SET(cqc, cqc, cqe_sz, GSHMEMI_PRM_CQC_CQE_64B);
    DEVX_SET(cqc, cqc, cc, a->collapsed ? 1 : 0);
    DEVX_SET(cqc, cqc, oi, a->overrun_ignore ? 1 : 0);
    SET_FIELD(cmd, cqc, cqc, dbr_umem_id, a->dbr_umem_id);
    SET_FIELD(cmd, cqc, cqc, log_cq_size, a->log_cq_size);
    SET_FIELD(cmd, cqc, cqc, uar_page, a->uar_page);
    SET_FIELD(cmd, cqc, cqc, c_eqn, a->eqn);
    SET_FIELD(cmd, cqc, cqc, log_page_size, a->log_page_size);
    /* with dbr_umem_valid, dbr_addr is the record's offset in dbr_umem_id, not an address */
    DEVX_SET64(cqc, cqc, dbr_addr, a->dbr_umem_offset);
    return GSHMEMI_OK;
}

int gshmemi_prm_create_qp(void *in, size_t len, const gshmemi_prm_qp_t *a)
{
    static const char cmd[] = "CREATE_QP";
    void *qpc;

    GSHMEMI_CHECK(check_len(cmd, len, GSHMEMI_PRM_CREATE_QP_IN_BYTES));
    GSHMEMI_CHECK(check_dbr_offset(cmd, a->dbr_umem_offset));

    memset(in, 0, GSHMEMI_PRM_CREATE_QP_IN_BYTES);
    DEVX_SET(create_qp_in, in, opcode, GSHMEMI_PRM_CMD_CREATE_QP);
    DEVX_SET64(create_qp_in, in, wq_umem_offset, a->wq_umem_offset);
    SET_FIELD(cmd, create_qp_in, in, wq_umem_id, a->wq_umem_id);
    DEVX_SET(create_qp_in, in, wq_umem_valid, 1);

    qpc = DEVX_ADDR_OF(create_qp_in, in, qpc);
    DEVX_SET(qpc, qpc, st, GSHMEMI_PRM_QPC_ST_RC);
    DEVX_SET(qpc, qpc, pm_state, GSHMEMI_PRM_QPC_PM_MIGRATED);
    SET_FIELD(cmd, qpc, qpc, pd, a->pd);
    SET_FIELD(cmd, qpc, qpc, uar_page, a->uar_page);
    SET_FIELD(cmd, qpc, qpc, user_index, a->user_index);
    SET_FIELD(cmd, qpc, qpc, log_sq_size, a->log_sq_size);
    DEVX_SET(qpc, qpc, no_sq, 0);
    DEVX_SET(qpc, qpc, rq_type, GSHMEMI_PRM_QPC_RQ_ZERO);
    DEVX_SET(qpc, qpc, log_rq_size, 0);
    SET_FIELD(cmd, qpc, qpc, cqn_snd, a->cqn_snd);
    SET_FIELD(cmd, qpc, qpc, cqn_rcv, a->cqn_rcv);
    DEVX_SET(qpc, qpc, dbr_umem_valid, 1);
    SET_FIELD(cmd, qpc, qpc, dbr_umem_id, a->dbr_umem_id);
    DEVX_SET64(qpc, qpc, dbr_addr, a->dbr_umem_offset);
    return GSHMEMI_OK;
}

/* The header of a QP state transition; *qpc gets its QP context. */
static int transition_header(const char *cmd, void *in, unsigned opcode, uint32_t qpn, void **qpc)
{
    memset(in, 0, GSHMEMI_PRM_QP_TRANSITION_IN_BYTES);
    DEVX_SET(qp_transition_in, in, opcode, opcode);
    SET_FIELD(cmd, qp_transition_in, in, qpn, qpn);
    *qpc = DEVX_ADDR_OF(qp_transition_in, in, qpc);
    return GSHMEMI_OK;
}

int gshmemi_prm_rst2init(void *in, size_t len, const gshmemi_prm_rst2init_t *a)
{
    static const char cmd[] = "RST2INIT_QP";
    void *qpc;

    GSHMEMI_CHECK(check_len(cmd, len, GSHMEMI_PRM_QP_TRANSITION_IN_BYTES));
    if (a->port == 0) {
        GSHMEMI_ERROR(SUB, "%s: port 0 (ports count from 1)", cmd);
        return GSHMEMI_ERR_INVALID;
    }

    GSHMEMI_CHECK(transition_header(cmd, in, GSHMEMI_PRM_CMD_RST2INIT_QP, a->qpn, &qpc));
    DEVX_SET(qpc, qpc, pm_state, GSHMEMI_PRM_QPC_PM_MIGRATED);
    DEVX_SET(qpc, qpc, rwe, a->remote_write ? 1 : 0);
    DEVX_SET(qpc, qpc, rre, a->remote_read ? 1 : 0);
    DEVX_SET(qpc, qpc, rae, a->remote_atomic ? 1 : 0);
    SET_FIELD(cmd, qpc, qpc, atomic_mode, a->atomic_mode);
    SET_FIELD(cmd, qpc, qpc, primary_address_path.vhca_port_num, a->port);
    SET_FIELD(cmd, qpc, qpc, primary_address_path.pkey_index, a->pkey_index);
    return GSHMEMI_OK;
}

int gshmemi_prm_init2rtr(void *in, size_t len, const gshmemi_prm_init2rtr_t *a)
{
    static const char cmd[] = "INIT2RTR_QP";
    void *qpc;

    GSHMEMI_CHECK(check_len(cmd, len, GSHMEMI_PRM_QP_TRANSITION_IN_BYTES));
    if (a->mtu < 1 || a->mtu > 5) {
        GSHMEMI_ERROR(SUB, "%s: mtu code %u is not 1..5 (256..4096 bytes)", cmd, a->mtu);
        return GSHMEMI_ERR_INVALID;
    }
    if (a->roce) {
    } else {
    }

    GSHMEMI_CHECK(transition_header(cmd, in, GSHMEMI_PRM_CMD_INIT2RTR_QP, a->qpn, &qpc));
    DEVX_SET(qpc, qpc, mtu, a->mtu);
    SET_FIELD(cmd, qpc, qpc, log_msg_max, a->log_msg_max);
    SET_FIELD(cmd, qpc, qpc, remote_qpn, a->remote_qpn);
    SET_FIELD(cmd, qpc, qpc, next_rcv_psn, a->next_rcv_psn);
    SET_FIELD(cmd, qpc, qpc, log_rra_max, a->log_rra_max);
    SET_FIELD(cmd, qpc, qpc, min_rnr_nak, a->min_rnr_nak);
    SET_FIELD(cmd, qpc, qpc, primary_address_path.sl, a->sl);
    if (a->roce) {
        uint8_t *gid = DEVX_ADDR_OF(qpc, qpc, primary_address_path.rgid_rip);
        /* the MAC's high 16 bits, then its low 32, each big-endian: the six bytes in order */
        DEVX_SET(qpc, qpc, primary_address_path.rmac_47_32, (uint32_t)a->rmac[0] << 8 | a->rmac[1]);
        DEVX_SET(qpc, qpc, primary_address_path.rmac_31_0,
                 (uint32_t)a->rmac[2] << 24 | (uint32_t)a->rmac[3] << 16 | (uint32_t)a->rmac[4] << 8 | a->rmac[5]);
        memcpy(gid, a->rgid, 16); /* a GID is a byte string, network order already */
        DEVX_SET(qpc, qpc, primary_address_path.grh, 1);
        SET_FIELD(cmd, qpc, qpc, primary_address_path.src_addr_index, a->src_addr_index);
        SET_FIELD(cmd, qpc, qpc, primary_address_path.hop_limit, a->hop_limit);
        SET_FIELD(cmd, qpc, qpc, primary_address_path.tclass, a->tclass);
        SET_FIELD(cmd, qpc, qpc, primary_address_path.udp_sport, a->udp_sport);
    } else {
        DEVX_SET(qpc, qpc, primary_address_path.grh, 0);
        SET_FIELD(cmd, qpc, qpc, primary_address_path.rlid, a->rlid);
    }
    return GSHMEMI_OK;
}

int gshmemi_prm_rtr2rts(void *in, size_t len, const gshmemi_prm_rtr2rts_t *a)
{
    static const char cmd[] = "RTR2RTS_QP";
    void *qpc;

    GSHMEMI_CHECK(check_len(cmd, len, GSHMEMI_PRM_QP_TRANSITION_IN_BYTES));

    GSHMEMI_CHECK(transition_header(cmd, in, GSHMEMI_PRM_CMD_RTR2RTS_QP, a->qpn, &qpc));
    SET_FIELD(cmd, qpc, qpc, next_send_psn, a->next_send_psn);
    SET_FIELD(cmd, qpc, qpc, log_sra_max, a->log_sra_max);
    SET_FIELD(cmd, qpc, qpc, retry_count, a->retry_count);
    SET_FIELD(cmd, qpc, qpc, rnr_retry, a->rnr_retry);
    SET_FIELD(cmd, qpc, qpc, primary_address_path.ack_timeout, a->ack_timeout);
    SET_FIELD(cmd, qpc, qpc, log_ack_req_freq, a->log_ack_req_freq);
    return GSHMEMI_OK;
}

unsigned gshmemi_prm_out_status(const void *out, uint32_t *syndrome)
{
    if (syndrome) *syndrome = DEVX_GET(cmd_out, out, syndrome);
    return DEVX_GET(cmd_out, out, status);
}

uint32_t gshmemi_prm_out_obj_num(const void *out) { return DEVX_GET(cmd_out, out, obj_num); }

const char *gshmemi_prm_status_name(unsigned status)
{
    switch (status) {
    case 0x00: return "ok";
    case 0x01: return "internal error";
    case 0x02: return "bad operation";
    case 0x03: return "bad parameter";
    case 0x04: return "bad system state";
    case 0x05: return "bad resource";
    case 0x06: return "resource busy";
    case 0x08: return "limits exceeded";
    case 0x09: return "bad resource state";
    case 0x0a: return "bad index";
    case 0x0f: return "no resources";
    case 0x10: return "bad QP state";
    case 0x30: return "bad packet";
    case 0x40: return "bad size of outstanding CQEs";
    case 0x50: return "bad input length";
    case 0x51: return "bad output length";
    default: return "unknown status";
    }
}
