/* The mlx5 PRM (ConnectX programmer's reference) commands IBGDA's host setup sends through DEVX:
 * CREATE_CQ, CREATE_QP and the RST->INIT->RTR->RTS transitions, as pure encoders into a caller
 * buffer, plus the few output fields read back. Host only (rdma-core's <infiniband/mlx5dv.h>
 * gives the DEVX_SET/DEVX_GET accessors); the device path never sees these.
 *
 * Layouts. Each struct mlx5_ifc_X_bits below spends one byte per bit of the command (the
 * convention DEVX_SET/DEVX_GET read: a field's offsetof is its bit offset, its sizeof its width;
 * fields are big-endian within 32-bit words). Only the fields gshmem sets or reads are named, the
 * rest are reserved_at_<bit offset>; offsets and widths were taken from the PRM as published in
 * rdma-core's and the Linux kernel's mlx5_ifc.h, each struct's total size is checked here at
 * compile time, and test/unit/test_ibgda_prm.c reads every encoded field back at its bit offset
 * written out by hand. Whether a ConnectX firmware accepts these exact commands has NOT been
 * verified: no machine this was written on has a NIC. */
#ifndef GSHMEMI_IBGDA_MLX5_PRM_H
#define GSHMEMI_IBGDA_MLX5_PRM_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- command opcodes (the first 16 bits of every command) ----------------------------------- */
#define GSHMEMI_PRM_CMD_CREATE_CQ 0x400
#define GSHMEMI_PRM_CMD_CREATE_QP 0x500
#define GSHMEMI_PRM_CMD_RST2INIT_QP 0x502
#define GSHMEMI_PRM_CMD_INIT2RTR_QP 0x503
#define GSHMEMI_PRM_CMD_RTR2RTS_QP 0x504

/* ---- field values -------------------------------------------------------------------------- */
#define GSHMEMI_PRM_QPC_ST_RC 0x0
#define GSHMEMI_PRM_QPC_PM_MIGRATED 0x3
#define GSHMEMI_PRM_QPC_RQ_ZERO 0x3        /* rq_type: no receive queue (IBGDA only sends) */
#define GSHMEMI_PRM_QPC_ATOMIC_8B 0x3      /* atomic_mode: atomics up to 8 bytes, masked ones included */
#define GSHMEMI_PRM_CQC_CQE_64B 0x0        /* cqe_sz */
#define GSHMEMI_PRM_ADAPTER_PAGE_SHIFT 12  /* log_page_size counts in 4 KiB pages */

typedef uint8_t gshmemi_prm_bit_t; /* one element per bit: the struct fields below are widths */

/* Address path (ads): how a QP reaches its peer. 0x160 bits. */
struct mlx5_ifc_ads_bits {
    gshmemi_prm_bit_t reserved_at_0[0x10];
    gshmemi_prm_bit_t pkey_index[0x10];
    gshmemi_prm_bit_t reserved_at_20[0x8];
    gshmemi_prm_bit_t grh[0x1];
    gshmemi_prm_bit_t mlid[0x7];
    gshmemi_prm_bit_t rlid[0x10];
    gshmemi_prm_bit_t ack_timeout[0x5];
    gshmemi_prm_bit_t reserved_at_45[0x3];
    gshmemi_prm_bit_t src_addr_index[0x8];
    gshmemi_prm_bit_t reserved_at_50[0x8];
    gshmemi_prm_bit_t hop_limit[0x8];
    gshmemi_prm_bit_t reserved_at_60[0x4];
    gshmemi_prm_bit_t tclass[0x8];
    gshmemi_prm_bit_t reserved_at_6c[0x14];
    gshmemi_prm_bit_t rgid_rip[16][0x8];
    gshmemi_prm_bit_t reserved_at_100[0x10];
    gshmemi_prm_bit_t udp_sport[0x10];
    gshmemi_prm_bit_t reserved_at_120[0x4];
    gshmemi_prm_bit_t sl[0x4];
    gshmemi_prm_bit_t vhca_port_num[0x8];
    gshmemi_prm_bit_t rmac_47_32[0x10];
    gshmemi_prm_bit_t rmac_31_0[0x20];
};

/* QP context (qpc). 0x740 bits. */
struct mlx5_ifc_qpc_bits {
    gshmemi_prm_bit_t state[0x4];
    gshmemi_prm_bit_t reserved_at_4[0x4];
    gshmemi_prm_bit_t st[0x8];
    gshmemi_prm_bit_t reserved_at_10[0x3];
    gshmemi_prm_bit_t pm_state[0x2];
    gshmemi_prm_bit_t reserved_at_15[0xb];
    gshmemi_prm_bit_t reserved_at_20[0x8];
    gshmemi_prm_bit_t pd[0x18];
    gshmemi_prm_bit_t mtu[0x3];
    gshmemi_prm_bit_t log_msg_max[0x5];
    gshmemi_prm_bit_t reserved_at_48[0x1];
    gshmemi_prm_bit_t log_rq_size[0x4];
    gshmemi_prm_bit_t log_rq_stride[0x3];
    gshmemi_prm_bit_t no_sq[0x1];
    gshmemi_prm_bit_t log_sq_size[0x4];
    gshmemi_prm_bit_t reserved_at_55[0xb];
    gshmemi_prm_bit_t counter_set_id[0x8];
    gshmemi_prm_bit_t uar_page[0x18];
    gshmemi_prm_bit_t reserved_at_80[0x8];
    gshmemi_prm_bit_t user_index[0x18];
    gshmemi_prm_bit_t reserved_at_a0[0x3];
    gshmemi_prm_bit_t log_page_size[0x5];
    gshmemi_prm_bit_t remote_qpn[0x18];
    struct mlx5_ifc_ads_bits primary_address_path;   /* at 0xc0 */
    gshmemi_prm_bit_t reserved_at_220[0x160];        /* the secondary path: unused */
    gshmemi_prm_bit_t log_ack_req_freq[0x4];
    gshmemi_prm_bit_t reserved_at_384[0x4];
    gshmemi_prm_bit_t log_sra_max[0x3];
    gshmemi_prm_bit_t reserved_at_38b[0x2];
    gshmemi_prm_bit_t retry_count[0x3];
    gshmemi_prm_bit_t rnr_retry[0x3];
    gshmemi_prm_bit_t reserved_at_393[0xd];
    gshmemi_prm_bit_t reserved_at_3a0[0x20];
    gshmemi_prm_bit_t reserved_at_3c0[0x8];
    gshmemi_prm_bit_t next_send_psn[0x18];
    gshmemi_prm_bit_t reserved_at_3e0[0x8];
    gshmemi_prm_bit_t cqn_snd[0x18];
    gshmemi_prm_bit_t reserved_at_400[0x80];
    gshmemi_prm_bit_t reserved_at_480[0x8];
    gshmemi_prm_bit_t log_rra_max[0x3];
    gshmemi_prm_bit_t reserved_at_48b[0x1];
    gshmemi_prm_bit_t atomic_mode[0x4];
    gshmemi_prm_bit_t rre[0x1];
    gshmemi_prm_bit_t rwe[0x1];
    gshmemi_prm_bit_t rae[0x1];
    gshmemi_prm_bit_t reserved_at_493[0x1];
    gshmemi_prm_bit_t page_offset[0x6];
    gshmemi_prm_bit_t reserved_at_49a[0x6];
    gshmemi_prm_bit_t reserved_at_4a0[0x3];
    gshmemi_prm_bit_t min_rnr_nak[0x5];
    gshmemi_prm_bit_t next_rcv_psn[0x18];
    gshmemi_prm_bit_t reserved_at_4c0[0x20];
    gshmemi_prm_bit_t reserved_at_4e0[0x8];
    gshmemi_prm_bit_t cqn_rcv[0x18];
    gshmemi_prm_bit_t dbr_addr[0x40];   /* with dbr_umem_valid: the offset in dbr_umem_id */
    gshmemi_prm_bit_t reserved_at_540[0x20];
    gshmemi_prm_bit_t reserved_at_560[0x5];
    gshmemi_prm_bit_t rq_type[0x3];
    gshmemi_prm_bit_t reserved_at_568[0x18];
    gshmemi_prm_bit_t reserved_at_580[0x100];
    gshmemi_prm_bit_t reserved_at_680[0x3];
    gshmemi_prm_bit_t dbr_umem_valid[0x1];
    gshmemi_prm_bit_t reserved_at_684[0x9c];
    gshmemi_prm_bit_t dbr_umem_id[0x20];
};

/* CQ context (cqc). 0x200 bits. */
struct mlx5_ifc_cqc_bits {
    gshmemi_prm_bit_t status[0x4];
    gshmemi_prm_bit_t reserved_at_4[0x2];
    gshmemi_prm_bit_t dbr_umem_valid[0x1];
    gshmemi_prm_bit_t reserved_at_7[0x1];
    gshmemi_prm_bit_t cqe_sz[0x3];
    gshmemi_prm_bit_t cc[0x1];                 /* collapsed: every CQE lands in entry 0 */
    gshmemi_prm_bit_t reserved_at_c[0x2];
    gshmemi_prm_bit_t oi[0x1];                 /* overrun ignore */
    gshmemi_prm_bit_t reserved_at_f[0x11];
    gshmemi_prm_bit_t dbr_umem_id[0x20];
    gshmemi_prm_bit_t reserved_at_40[0x14];
    gshmemi_prm_bit_t page_offset[0x6];
    gshmemi_prm_bit_t reserved_at_5a[0x6];
    gshmemi_prm_bit_t reserved_at_60[0x3];
    gshmemi_prm_bit_t log_cq_size[0x5];
    gshmemi_prm_bit_t uar_page[0x18];
    gshmemi_prm_bit_t reserved_at_80[0x20];
    gshmemi_prm_bit_t c_eqn[0x20];             /* older PRMs: 8 bits at 0xb8, the same low bits */
    gshmemi_prm_bit_t reserved_at_c0[0x3];
    gshmemi_prm_bit_t log_page_size[0x5];
    gshmemi_prm_bit_t reserved_at_c8[0x18];
    gshmemi_prm_bit_t reserved_at_e0[0xe0];
    gshmemi_prm_bit_t dbr_addr[0x40];
};

/* CREATE_CQ input. 0x880 bits (no page list: the buffer is a umem). */
struct mlx5_ifc_create_cq_in_bits {
    gshmemi_prm_bit_t opcode[0x10];
    gshmemi_prm_bit_t uid[0x10];
    gshmemi_prm_bit_t reserved_at_20[0x10];
    gshmemi_prm_bit_t op_mod[0x10];
    gshmemi_prm_bit_t reserved_at_40[0x40];
    struct mlx5_ifc_cqc_bits cq_context;       /* at 0x80 */
    gshmemi_prm_bit_t cq_umem_offset[0x40];
    gshmemi_prm_bit_t cq_umem_id[0x20];
    gshmemi_prm_bit_t cq_umem_valid[0x1];
    gshmemi_prm_bit_t reserved_at_2e1[0x1f];
    gshmemi_prm_bit_t reserved_at_300[0x580];
};

/* CREATE_QP input. 0x880 bits. */
struct mlx5_ifc_create_qp_in_bits {
    gshmemi_prm_bit_t opcode[0x10];
    gshmemi_prm_bit_t uid[0x10];
    gshmemi_prm_bit_t reserved_at_20[0x10];
    gshmemi_prm_bit_t op_mod[0x10];
    gshmemi_prm_bit_t reserved_at_40[0x40];
    gshmemi_prm_bit_t opt_param_mask[0x20];
    gshmemi_prm_bit_t reserved_at_a0[0x20];
    struct mlx5_ifc_qpc_bits qpc;              /* at 0xc0 */
    gshmemi_prm_bit_t wq_umem_offset[0x40];
    gshmemi_prm_bit_t wq_umem_id[0x20];
    gshmemi_prm_bit_t wq_umem_valid[0x1];
    gshmemi_prm_bit_t reserved_at_861[0x1f];
};

/* RST2INIT_QP, INIT2RTR_QP and RTR2RTS_QP inputs: one layout (the PRM gives the three the same).
 * 0x880 bits. */
struct mlx5_ifc_qp_transition_in_bits {
    gshmemi_prm_bit_t opcode[0x10];
    gshmemi_prm_bit_t uid[0x10];
    gshmemi_prm_bit_t reserved_at_20[0x10];
    gshmemi_prm_bit_t op_mod[0x10];
    gshmemi_prm_bit_t reserved_at_40[0x8];
    gshmemi_prm_bit_t qpn[0x18];
    gshmemi_prm_bit_t reserved_at_60[0x20];
    gshmemi_prm_bit_t opt_param_mask[0x20];
    gshmemi_prm_bit_t reserved_at_a0[0x20];
    struct mlx5_ifc_qpc_bits qpc;              /* at 0xc0 */
    gshmemi_prm_bit_t reserved_at_800[0x80];
};

/* Every command's output starts with status and syndrome; CREATE_CQ and CREATE_QP return the
 * object's number in the low 24 bits of the third word. 0x80 bits. */
struct mlx5_ifc_cmd_out_bits {
    gshmemi_prm_bit_t status[0x8];
    gshmemi_prm_bit_t reserved_at_8[0x18];
    gshmemi_prm_bit_t syndrome[0x20];
    gshmemi_prm_bit_t reserved_at_40[0x8];
    gshmemi_prm_bit_t obj_num[0x18];           /* cqn / qpn */
    gshmemi_prm_bit_t reserved_at_60[0x20];
};

#ifdef __cplusplus
#define GSHMEMI_PRM_ASSERT(c, m) static_assert(c, m)
#else
#define GSHMEMI_PRM_ASSERT(c, m) _Static_assert(c, m)
#endif
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_ads_bits) == 0x160, "ads is 0x160 bits");
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_qpc_bits) == 0x740, "qpc is 0x740 bits");
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_cqc_bits) == 0x200, "cqc is 0x200 bits");
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_create_cq_in_bits) == 0x880, "create_cq_in is 0x880 bits");
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_create_qp_in_bits) == 0x880, "create_qp_in is 0x880 bits");
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_qp_transition_in_bits) == 0x880, "rst2init/init2rtr/rtr2rts_qp_in are 0x880 bits");
GSHMEMI_PRM_ASSERT(sizeof(struct mlx5_ifc_cmd_out_bits) == 0x80, "the create/modify outputs are 0x80 bits");
GSHMEMI_PRM_ASSERT(offsetof(struct mlx5_ifc_create_qp_in_bits, qpc) == 0xc0 &&
                       offsetof(struct mlx5_ifc_qp_transition_in_bits, qpc) == 0xc0 &&
                       offsetof(struct mlx5_ifc_create_cq_in_bits, cq_context) == 0x80 &&
                       offsetof(struct mlx5_ifc_qpc_bits, primary_address_path) == 0xc0,
                   "contexts sit where the PRM puts them");

#define GSHMEMI_PRM_CREATE_CQ_IN_BYTES DEVX_ST_SZ_BYTES(create_cq_in)
#define GSHMEMI_PRM_CREATE_QP_IN_BYTES DEVX_ST_SZ_BYTES(create_qp_in)
#define GSHMEMI_PRM_QP_TRANSITION_IN_BYTES DEVX_ST_SZ_BYTES(qp_transition_in)
#define GSHMEMI_PRM_OUT_BYTES DEVX_ST_SZ_BYTES(cmd_out)

/* ---- encoders ---------------------------------------------------------------------------------
 * Each zeroes in[0 .. its command's size) and writes the command; len is the buffer's size.
 * GSHMEMI_ERR_INVALID, logged naming the command, the field and the value, when len is short or
 * a value does not fit its field (nothing is truncated silently). */

typedef struct {
    uint32_t uar_page;        /* page id of a UAR (the CQ's arm doorbell: IBGDA never arms) */
    uint32_t eqn;             /* completion event queue (mlx5dv_devx_query_eqn) */
    uint32_t log_cq_size;     /* log2 of the number of 64-byte CQEs (5 bits) */
    uint32_t log_page_size;   /* log2 of the buffer's page size in 4 KiB units (5 bits) */
    uint32_t cq_umem_id;      /* the CQE buffer */
    uint64_t cq_umem_offset;
    uint32_t dbr_umem_id;     /* the doorbell record (consumer index, 8 bytes) */
    uint64_t dbr_umem_offset;
    int collapsed;            /* cc: every CQE is written to entry 0 (NVSHMEM's choice) */
    int overrun_ignore;       /* oi: a consumer index left behind does not fail the CQ */
} gshmemi_prm_cq_t;
int gshmemi_prm_create_cq(void *in, size_t len, const gshmemi_prm_cq_t *a);

typedef struct {
    uint32_t pd;              /* protection domain number (mlx5dv_init_obj on the ibv_pd) */
    uint32_t uar_page;        /* the UAR whose doorbell register rings this QP's SQ */
    uint32_t cqn_snd;         /* send completions */
    uint32_t cqn_rcv;         /* no RQ, but the field is a CQ number all the same */
    uint32_t user_index;      /* 24 bits, echoed in CQEs */
    uint32_t log_sq_size;     /* log2 of the SQ's 64-byte basic blocks (4 bits) */
    uint32_t wq_umem_id;      /* the SQ ring */
    uint64_t wq_umem_offset;
    uint32_t dbr_umem_id;     /* the doorbell record (receive, send counters: 8 bytes) */
    uint64_t dbr_umem_offset;
} gshmemi_prm_qp_t;
int gshmemi_prm_create_qp(void *in, size_t len, const gshmemi_prm_qp_t *a);

typedef struct {
    uint32_t qpn;
    uint32_t port;            /* vhca_port_num, 1-based */
    uint32_t pkey_index;
    int remote_write, remote_read, remote_atomic;
    uint32_t atomic_mode;     /* GSHMEMI_PRM_QPC_ATOMIC_8B with remote_atomic */
} gshmemi_prm_rst2init_t;
int gshmemi_prm_rst2init(void *in, size_t len, const gshmemi_prm_rst2init_t *a);

typedef struct {
    uint32_t qpn;
    uint32_t remote_qpn;
    uint32_t next_rcv_psn;    /* the peer's first PSN */
    uint32_t mtu;             /* path MTU code 1..5 (256..4096 bytes, as enum ibv_mtu) */
    uint32_t log_msg_max;     /* 5 bits */
    uint32_t log_rra_max;     /* log2 of the RDMA READ / atomic requests answered at once (3 bits) */
    uint32_t min_rnr_nak;     /* 5 bits */
    int roce;                 /* 0: InfiniBand, by LID; 1: RoCE, by GID with GRH and the next hop's MAC */
    uint32_t rlid;            /* InfiniBand */
    uint32_t sl;
    uint8_t rgid[16];         /* RoCE */
    uint32_t src_addr_index;  /* RoCE: the local GID index */
    uint32_t hop_limit;
    uint32_t tclass;
    uint8_t rmac[6];
    uint32_t udp_sport;       /* RoCE v2 UDP source port (ECMP entropy) */
} gshmemi_prm_init2rtr_t;
int gshmemi_prm_init2rtr(void *in, size_t len, const gshmemi_prm_init2rtr_t *a);

typedef struct {
    uint32_t qpn;
    uint32_t next_send_psn;   /* this QP's first PSN (24 bits) */
    uint32_t log_sra_max;     /* log2 of the READ / atomic requests outstanding (3 bits) */
    uint32_t retry_count;     /* 3 bits */
    uint32_t rnr_retry;       /* 3 bits */
    uint32_t ack_timeout;     /* 4.096 us * 2^ack_timeout (5 bits) */
    uint32_t log_ack_req_freq;
} gshmemi_prm_rtr2rts_t;
int gshmemi_prm_rtr2rts(void *in, size_t len, const gshmemi_prm_rtr2rts_t *a);

/* Output of any command above: the status byte (0: success) and the syndrome. */
unsigned gshmemi_prm_out_status(const void *out, uint32_t *syndrome);
/* CREATE_CQ's cqn / CREATE_QP's qpn. */
uint32_t gshmemi_prm_out_obj_num(const void *out);
/* The PRM's name of a command status ("bad parameter"), "unknown status" for others. */
const char *gshmemi_prm_status_name(unsigned status);

#ifdef __cplusplus
}
#endif
#endif
