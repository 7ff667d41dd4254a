/* mlx5 (ConnectX) send-queue and completion-queue layouts, constants and encoders, shared by the
 * IBGDA device path (the GPU builds the WQEs), the host setup and the emulated NIC (which decodes
 * the same bytes). Plain C99 that also compiles under nvcc: every function is __host__ __device__
 * there, so the host unit test checks the exact bytes a GPU thread writes.
 *
 * Deliberately self-contained: device code and users cannot depend on rdma-core's headers, so
 * this file never includes <infiniband/mlx5dv.h>; test/unit/test_mlx5_wqe.c checks every size,
 * offset and number here against that header at compile time, and the encoders byte for byte
 * against mlx5dv_set_ctrl_seg / mlx5dv_set_data_seg and hand-written segments.
 *
 * Byte order. Every multi-byte field of a segment or CQE is big-endian in memory, as the NIC
 * reads it; the structs hold the big-endian bit patterns (fields named *_be make no sense when
 * all are), and the builders take host-order values. Callers never store into a segment without
 * gshmemi_mlx5_be*().
 *
 * A WQE is a run of 16-byte units ("ds", data segments) in 64-byte basic blocks (BBs): the
 * control segment first, its ds count covering the whole WQE. The SQ is a power-of-two ring of
 * BBs, indexed by a 16-bit wrapping WQE counter (the ctrl segment's index and the send doorbell
 * record both carry it). A WQE of two BBs whose first BB is the ring's last wraps to slot 0: the
 * builders here write into a contiguous buffer, and a caller posting a two-BB WQE into the ring
 * copies it one BB at a time to gshmemi_mlx5_sq_slot(idx) and gshmemi_mlx5_sq_slot(idx + 1). */
#ifndef GSHMEMI_MLX5_WQE_H
#define GSHMEMI_MLX5_WQE_H

#include <stddef.h>
#include <stdint.h>

#include "gshmem/types.h" /* GSHMEMI_HD_INLINE */

#ifdef __cplusplus
#define GSHMEMI_MLX5_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define GSHMEMI_MLX5_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "device/mlx5_wqe.h: the byte swaps assume a little-endian host (as every CUDA host is)"
#endif

/* ---- sizes ---------------------------------------------------------------------------------- */
#define GSHMEMI_MLX5_SEND_WQE_BB 64   /* basic block: the SQ's unit and ring slot */
#define GSHMEMI_MLX5_SEND_WQE_SHIFT 6
#define GSHMEMI_MLX5_DS_BYTES 16      /* the unit of the ctrl segment's ds count */
#define GSHMEMI_MLX5_DS_PER_BB 4
#define GSHMEMI_MLX5_MAX_DS 63        /* ds is a 6-bit field */
#define GSHMEMI_MLX5_CQE_BYTES 64
#define GSHMEMI_MLX5_MAX_WQE_BBS 2    /* the largest WQE these builders make */

/* ---- WQE opcodes (ctrl segment, low byte of opmod_idx_opcode) ------------------------------- */
#define GSHMEMI_MLX5_OPCODE_NOP 0x00
#define GSHMEMI_MLX5_OPCODE_RDMA_WRITE 0x08
#define GSHMEMI_MLX5_OPCODE_RDMA_WRITE_IMM 0x09
#define GSHMEMI_MLX5_OPCODE_SEND 0x0a
#define GSHMEMI_MLX5_OPCODE_RDMA_READ 0x10
#define GSHMEMI_MLX5_OPCODE_ATOMIC_CS 0x11        /* 8-byte compare-and-swap */
#define GSHMEMI_MLX5_OPCODE_ATOMIC_FA 0x12        /* 8-byte fetch-and-add */
#define GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS 0x14 /* extended: 4 or 8 bytes, with masks */
#define GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA 0x15 /* extended: 4 or 8 bytes, field boundary */

/* opmod of the extended (masked) atomics: bit 3 set, low bits log2(operand bytes) - 2 */
#define GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(log2_bytes) (0x08 | ((log2_bytes) - 2))

/* ---- ctrl segment fm_ce_se byte ------------------------------------------------------------- */
#define GSHMEMI_MLX5_WQE_CTRL_SOLICITED 0x02
#define GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE 0x08    /* ce = 2: a CQE for this WQE */
#define GSHMEMI_MLX5_WQE_CTRL_SMALL_FENCE 0x20  /* fm = 1: initiator small fence */
#define GSHMEMI_MLX5_WQE_CTRL_FENCE 0x80        /* fm = 4: wait for earlier RDMA READs/atomics */

#define GSHMEMI_MLX5_INLINE_SEG 0x80000000u /* inline segment's byte_count flag */

/* ---- CQE op_own byte: opcode << 4 | format << 2 | se << 1 | owner --------------------------- */
#define GSHMEMI_MLX5_CQE_OWNER_MASK 0x01
#define GSHMEMI_MLX5_CQE_REQ 0x0      /* a send-side WQE completed */
#define GSHMEMI_MLX5_CQE_REQ_ERR 0xd  /* a send-side WQE failed: an error CQE */
#define GSHMEMI_MLX5_CQE_RESP_ERR 0xe /* a receive-side error: an error CQE */
#define GSHMEMI_MLX5_CQE_INVALID 0xf  /* what software writes into a fresh CQ */

/* ---- error CQE syndromes (gshmemi_mlx5_err_cqe_t.syndrome) ---------------------------------- */
#define GSHMEMI_MLX5_SYNDROME_X(X)                                                                 \
    X(LOCAL_LENGTH_ERR, 0x01, "local length error")                                                \
    X(LOCAL_QP_OP_ERR, 0x02, "local QP operation error")                                           \
    X(LOCAL_PROT_ERR, 0x04, "local protection error")                                              \
    X(WR_FLUSH_ERR, 0x05, "work request flushed")                                                  \
    X(MW_BIND_ERR, 0x06, "memory window bind error")                                               \
    X(BAD_RESP_ERR, 0x10, "bad response")                                                          \
    X(LOCAL_ACCESS_ERR, 0x11, "local access error")                                                \
    X(REMOTE_INVAL_REQ_ERR, 0x12, "remote invalid request")                                        \
    X(REMOTE_ACCESS_ERR, 0x13, "remote access error")                                              \
    X(REMOTE_OP_ERR, 0x14, "remote operation error")                                               \
    X(TRANSPORT_RETRY_EXC_ERR, 0x15, "transport retry counter exceeded")                           \
    X(RNR_RETRY_EXC_ERR, 0x16, "RNR retry counter exceeded")                                       \
    X(REMOTE_ABORTED_ERR, 0x22, "remote aborted")
#define GSHMEMI_MLX5_SYNDROME_ENUM(name, value, text) GSHMEMI_MLX5_SYNDROME_##name = value,
enum { GSHMEMI_MLX5_SYNDROME_X(GSHMEMI_MLX5_SYNDROME_ENUM) };
#undef GSHMEMI_MLX5_SYNDROME_ENUM

/* ---- doorbell records: 32-bit big-endian words --------------------------------------------- */
#define GSHMEMI_MLX5_DBR_RCV 0 /* QP dbrec[0]: receive counter */
#define GSHMEMI_MLX5_DBR_SND 1 /* QP dbrec[1]: send counter, the 16-bit WQE counter after the
                                * last posted WQE; byte offset 4 */
#define GSHMEMI_MLX5_DBR_SND_OFFSET (GSHMEMI_MLX5_DBR_SND * 4)
#define GSHMEMI_MLX5_CQ_DBR_SET_CI 0 /* CQ dbrec[0]: consumer index, 24 bits */
#define GSHMEMI_MLX5_CQ_DBR_ARM 1    /* CQ dbrec[1]: arm (unused: IBGDA polls) */

/* ---- segments ------------------------------------------------------------------------------- */
typedef struct gshmemi_mlx5_ctrl_seg {
    uint32_t opmod_idx_opcode; /* opmod << 24 | wqe index (16 bits) << 8 | opcode */
    uint32_t qpn_ds;           /* qp number (24 bits) << 8 | ds count (6 bits) */
    uint8_t signature;         /* 0: WQE signatures are not enabled */
    uint8_t rsvd[2];           /* DCI stream channel id (DC only) */
    uint8_t fm_ce_se;          /* fence mode, completion request, solicited event */
    uint32_t imm;              /* immediate data (RDMA_WRITE_IMM, SEND_IMM) */
} gshmemi_mlx5_ctrl_seg_t;

typedef struct gshmemi_mlx5_raddr_seg {
    uint64_t raddr; /* remote virtual address */
    uint32_t rkey;  /* remote key */
    uint32_t rsvd;
} gshmemi_mlx5_raddr_seg_t;

typedef struct gshmemi_mlx5_data_seg {
    uint32_t byte_count; /* bytes to gather (write) or scatter (read, atomic result) */
    uint32_t lkey;       /* local key */
    uint64_t addr;       /* local virtual address */
} gshmemi_mlx5_data_seg_t;

typedef struct gshmemi_mlx5_inl_data_seg {
    uint32_t byte_count; /* GSHMEMI_MLX5_INLINE_SEG | payload bytes; the payload follows */
} gshmemi_mlx5_inl_data_seg_t;

typedef struct gshmemi_mlx5_atomic_seg {
    uint64_t swap_add; /* swap value (CS) or addend (FA) */
    uint64_t compare;  /* compare value (CS); 0 for FA */
} gshmemi_mlx5_atomic_seg_t;

/* Extended atomics: new = (old & ~swap_mask) | (swap & swap_mask), done only where
 * (old ^ compare) & compare_mask == 0. 8-byte operands take two ds units, 4-byte ones one. */
typedef struct gshmemi_mlx5_masked_cs64_seg {
    uint64_t swap;
    uint64_t compare;
    uint64_t swap_mask;
    uint64_t compare_mask;
} gshmemi_mlx5_masked_cs64_seg_t;

typedef struct gshmemi_mlx5_masked_cs32_seg {
    uint32_t swap;
    uint32_t compare;
    uint32_t swap_mask;
    uint32_t compare_mask;
} gshmemi_mlx5_masked_cs32_seg_t;

/* Masked fetch-add: the operand is split into fields, a field ending at each set bit of
 * field_boundary; carries do not cross a boundary (all ones: every bit its own field, i.e. XOR). */
typedef struct gshmemi_mlx5_masked_fa64_seg {
    uint64_t add;
    uint64_t field_boundary;
} gshmemi_mlx5_masked_fa64_seg_t;

typedef struct gshmemi_mlx5_masked_fa32_seg {
    uint32_t add;
    uint32_t field_boundary;
    uint32_t rsvd[2];
} gshmemi_mlx5_masked_fa32_seg_t;

/* ---- completions ---------------------------------------------------------------------------- */
/* A 64-byte CQE, the fields a send-side poller reads (the rest are receive-side or reserved). */
typedef struct gshmemi_mlx5_cqe64 {
    uint8_t rsvd0[32];
    uint32_t srqn_uidx;
    uint32_t imm_inval_pkey;
    uint8_t app;
    uint8_t app_op;
    uint16_t app_info;
    uint32_t byte_cnt;     /* bytes of an RDMA READ / atomic result scattered */
    uint64_t timestamp;
    uint32_t sop_drop_qpn; /* qp number in the low 24 bits */
    uint16_t wqe_counter;  /* index (first BB) of the WQE this CQE completes */
    uint8_t signature;
    uint8_t op_own;        /* opcode << 4 | format << 2 | se << 1 | owner */
} gshmemi_mlx5_cqe64_t;

/* The same 64 bytes when the opcode is REQ_ERR or RESP_ERR. */
typedef struct gshmemi_mlx5_err_cqe {
    uint8_t rsvd0[32];
    uint32_t srqn;
    uint8_t rsvd1[18];
    uint8_t vendor_err_synd;   /* vendor-specific detail */
    uint8_t syndrome;          /* GSHMEMI_MLX5_SYNDROME_* */
    uint32_t s_wqe_opcode_qpn; /* failed WQE's opcode << 24 | qp number */
    uint16_t wqe_counter;      /* index of the failed WQE */
    uint8_t signature;
    uint8_t op_own;
} gshmemi_mlx5_err_cqe_t;

typedef union gshmemi_mlx5_cqe {
    gshmemi_mlx5_cqe64_t ok;
    gshmemi_mlx5_err_cqe_t err;
    uint8_t bytes[64];
} gshmemi_mlx5_cqe_t;

GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_ctrl_seg_t) == 16, "ctrl segment is 16 bytes");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_raddr_seg_t) == 16, "raddr segment is 16 bytes");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_data_seg_t) == 16, "data segment is 16 bytes");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_atomic_seg_t) == 16, "atomic segment is 16 bytes");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_masked_cs64_seg_t) == 32, "masked CS 64 is 2 ds");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_masked_cs32_seg_t) == 16, "masked CS 32 is 1 ds");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_masked_fa64_seg_t) == 16, "masked FA 64 is 1 ds");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_masked_fa32_seg_t) == 16, "masked FA 32 is 1 ds");
GSHMEMI_MLX5_STATIC_ASSERT(sizeof(gshmemi_mlx5_cqe64_t) == 64 && sizeof(gshmemi_mlx5_err_cqe_t) == 64 &&
                               sizeof(gshmemi_mlx5_cqe_t) == 64,
                           "a CQE is 64 bytes");
GSHMEMI_MLX5_STATIC_ASSERT(offsetof(gshmemi_mlx5_cqe64_t, op_own) == 63 &&
                               offsetof(gshmemi_mlx5_err_cqe_t, syndrome) == 55,
                           "CQE field offsets");

/* ---- byte order ----------------------------------------------------------------------------- */
GSHMEMI_HD_INLINE uint32_t gshmemi_mlx5_be32(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(x, 0, 0x0123);
#else
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
#endif
}
GSHMEMI_HD_INLINE uint16_t gshmemi_mlx5_be16(uint16_t x) { return (uint16_t)((x >> 8) | (x << 8)); }
GSHMEMI_HD_INLINE uint64_t gshmemi_mlx5_be64(uint64_t x)
{
    return ((uint64_t)gshmemi_mlx5_be32((uint32_t)x) << 32) | gshmemi_mlx5_be32((uint32_t)(x >> 32));
}

/* ---- segment builders (host-order arguments) ------------------------------------------------ */
/* qpn is 24 bits and ds 6 bits: higher bits are dropped, never carried into the next field. */
GSHMEMI_HD_INLINE void gshmemi_mlx5_set_ctrl(gshmemi_mlx5_ctrl_seg_t *c, uint16_t idx, uint8_t opcode,
                                             uint8_t opmod, uint32_t qpn, uint8_t ds, uint8_t fm_ce_se,
                                             uint32_t imm)
{
    c->opmod_idx_opcode = gshmemi_mlx5_be32(((uint32_t)opmod << 24) | ((uint32_t)idx << 8) | opcode);
    c->qpn_ds = gshmemi_mlx5_be32(((qpn & 0xffffffu) << 8) | (ds & 0x3fu));
    c->signature = 0;
    c->rsvd[0] = 0;
    c->rsvd[1] = 0;
    c->fm_ce_se = fm_ce_se;
    c->imm = gshmemi_mlx5_be32(imm);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_raddr(gshmemi_mlx5_raddr_seg_t *r, uint64_t raddr, uint32_t rkey)
{
    r->raddr = gshmemi_mlx5_be64(raddr);
    r->rkey = gshmemi_mlx5_be32(rkey);
    r->rsvd = 0;
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_data(gshmemi_mlx5_data_seg_t *d, uint32_t bytes, uint32_t lkey,
                                             uint64_t addr)
{
    d->byte_count = gshmemi_mlx5_be32(bytes);
    d->lkey = gshmemi_mlx5_be32(lkey);
    d->addr = gshmemi_mlx5_be64(addr);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_inline(gshmemi_mlx5_inl_data_seg_t *s, uint32_t bytes)
{
    s->byte_count = gshmemi_mlx5_be32(GSHMEMI_MLX5_INLINE_SEG | bytes);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_atomic(gshmemi_mlx5_atomic_seg_t *a, uint64_t swap_add,
                                               uint64_t compare)
{
    a->swap_add = gshmemi_mlx5_be64(swap_add);
    a->compare = gshmemi_mlx5_be64(compare);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_masked_cs64(gshmemi_mlx5_masked_cs64_seg_t *m, uint64_t swap,
                                                    uint64_t compare, uint64_t swap_mask,
                                                    uint64_t compare_mask)
{
    m->swap = gshmemi_mlx5_be64(swap);
    m->compare = gshmemi_mlx5_be64(compare);
    m->swap_mask = gshmemi_mlx5_be64(swap_mask);
    m->compare_mask = gshmemi_mlx5_be64(compare_mask);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_masked_cs32(gshmemi_mlx5_masked_cs32_seg_t *m, uint32_t swap,
                                                    uint32_t compare, uint32_t swap_mask,
                                                    uint32_t compare_mask)
{
    m->swap = gshmemi_mlx5_be32(swap);
    m->compare = gshmemi_mlx5_be32(compare);
    m->swap_mask = gshmemi_mlx5_be32(swap_mask);
    m->compare_mask = gshmemi_mlx5_be32(compare_mask);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_masked_fa64(gshmemi_mlx5_masked_fa64_seg_t *m, uint64_t add,
                                                    uint64_t field_boundary)
{
    m->add = gshmemi_mlx5_be64(add);
    m->field_boundary = gshmemi_mlx5_be64(field_boundary);
}

GSHMEMI_HD_INLINE void gshmemi_mlx5_set_masked_fa32(gshmemi_mlx5_masked_fa32_seg_t *m, uint32_t add,
                                                    uint32_t field_boundary)
{
    m->add = gshmemi_mlx5_be32(add);
    m->field_boundary = gshmemi_mlx5_be32(field_boundary);
    m->rsvd[0] = 0;
    m->rsvd[1] = 0;
}

/* ---- whole WQEs ----------------------------------------------------------------------------- */
/* Each writes one WQE at wqe (16-byte aligned, GSHMEMI_MLX5_SEND_WQE_BB bytes, or twice that
 * where noted) and returns its ds count, or 0 for arguments it cannot encode (nothing written).
 * gshmemi_mlx5_wqe_bbs(ds) is the number of SQ slots it takes. Common arguments: idx, the 16-bit
 * WQE counter of its first BB; qpn; fm_ce_se (GSHMEMI_MLX5_WQE_CTRL_*); the remote address and
 * rkey; the local address and lkey (source of a put, destination of a get or atomic result). */
typedef struct gshmemi_mlx5_wqe_hdr {
    gshmemi_mlx5_ctrl_seg_t ctrl;
    gshmemi_mlx5_raddr_seg_t raddr;
} gshmemi_mlx5_wqe_hdr_t;

GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_bbs(unsigned ds)
{
    return (ds + GSHMEMI_MLX5_DS_PER_BB - 1) / GSHMEMI_MLX5_DS_PER_BB;
}

/* RDMA WRITE of bytes from (laddr, lkey) to (raddr, rkey): ctrl + raddr + data, 3 ds. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_rdma(void *wqe, uint16_t idx, uint8_t opcode, uint32_t qpn, uint8_t fm_ce_se,
                                                 uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes)
{
    gshmemi_mlx5_wqe_hdr_t *h = (gshmemi_mlx5_wqe_hdr_t *)wqe;
    gshmemi_mlx5_set_ctrl(&h->ctrl, idx, opcode, 0, qpn, 3, fm_ce_se, 0);
    gshmemi_mlx5_set_raddr(&h->raddr, raddr, rkey);
    gshmemi_mlx5_set_data((gshmemi_mlx5_data_seg_t *)(h + 1), bytes, lkey, laddr);
    return 3;
}

GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_put(void *wqe, uint16_t idx, uint32_t qpn, uint8_t fm_ce_se,
                                                uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
                                                uint32_t bytes)
{
    return gshmemi_mlx5_wqe_rdma(wqe, idx, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, qpn, fm_ce_se, raddr, rkey, laddr, lkey, bytes);
}

/* The most an inline put carries in one BB and in two (ctrl, raddr and the 4-byte header first). */
#define GSHMEMI_MLX5_INLINE_MAX_1BB (GSHMEMI_MLX5_SEND_WQE_BB - 36)
#define GSHMEMI_MLX5_INLINE_MAX (GSHMEMI_MLX5_MAX_WQE_BBS * GSHMEMI_MLX5_SEND_WQE_BB - 36)

/* RDMA WRITE with the payload in the WQE (no lkey: the NIC reads no local memory). The payload
 * follows the 4-byte inline header unaligned; the rest of its last ds unit is zeroed. Up to
 * GSHMEMI_MLX5_INLINE_MAX_1BB bytes fit one BB; up to GSHMEMI_MLX5_INLINE_MAX, wqe must hold two.
 * Returns 0 for bytes > GSHMEMI_MLX5_INLINE_MAX. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_put_inline(void *wqe, uint16_t idx, uint32_t qpn,
                                                       uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                                       const void *src, uint32_t bytes)
{
    if (bytes > GSHMEMI_MLX5_INLINE_MAX) return 0;
    unsigned ds = (36 + bytes + GSHMEMI_MLX5_DS_BYTES - 1) / GSHMEMI_MLX5_DS_BYTES;
    gshmemi_mlx5_wqe_hdr_t *h = (gshmemi_mlx5_wqe_hdr_t *)wqe;
    gshmemi_mlx5_set_ctrl(&h->ctrl, idx, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, qpn, (uint8_t)ds, fm_ce_se, 0);
    gshmemi_mlx5_set_raddr(&h->raddr, raddr, rkey);
    gshmemi_mlx5_set_inline((gshmemi_mlx5_inl_data_seg_t *)(h + 1), bytes);
    uint8_t *dst = (uint8_t *)wqe + 36;
    const uint8_t *s = (const uint8_t *)src;
    uint32_t i = 0;
    for (; i < bytes; i++) dst[i] = s[i];
    for (; 36 + i < ds * GSHMEMI_MLX5_DS_BYTES; i++) dst[i] = 0;
    return ds;
}

/* RDMA READ of bytes from (raddr, rkey) into (laddr, lkey): ctrl + raddr + data, 3 ds. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_get(void *wqe, uint16_t idx, uint32_t qpn, uint8_t fm_ce_se,
                                                uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
                                                uint32_t bytes)
{
    return gshmemi_mlx5_wqe_rdma(wqe, idx, GSHMEMI_MLX5_OPCODE_RDMA_READ, qpn, fm_ce_se, raddr, rkey, laddr, lkey, bytes);
}

/* Masked compare-and-swap on a size-byte (4 or 8) word: ctrl + raddr + masked CS + data;
 * 4 ds for 4 bytes, 5 ds (two BBs: wqe must hold 128 bytes) for 8. The old value lands at
 * (laddr, lkey). Returns 0 for another size. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_masked_cs(void *wqe, uint16_t idx, uint32_t qpn,
                                                      uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                                      uint64_t laddr, uint32_t lkey, unsigned size,
                                                      uint64_t swap, uint64_t compare, uint64_t swap_mask,
                                                      uint64_t compare_mask)
{
    gshmemi_mlx5_wqe_hdr_t *h = (gshmemi_mlx5_wqe_hdr_t *)wqe;
    gshmemi_mlx5_data_seg_t *d;
    unsigned ds;
    if (size == 8) {
        gshmemi_mlx5_masked_cs64_seg_t *m = (gshmemi_mlx5_masked_cs64_seg_t *)(h + 1);
        gshmemi_mlx5_set_masked_cs64(m, swap, compare, swap_mask, compare_mask);
        d = (gshmemi_mlx5_data_seg_t *)(m + 1);
        ds = 5;
    } else if (size == 4) {
        gshmemi_mlx5_masked_cs32_seg_t *m = (gshmemi_mlx5_masked_cs32_seg_t *)(h + 1);
        gshmemi_mlx5_set_masked_cs32(m, (uint32_t)swap, (uint32_t)compare, (uint32_t)swap_mask,
                                     (uint32_t)compare_mask);
        d = (gshmemi_mlx5_data_seg_t *)(m + 1);
        ds = 4;
    } else {
        return 0;
    }
    gshmemi_mlx5_set_ctrl(&h->ctrl, idx, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS,
                          (uint8_t)GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(size == 8 ? 3 : 2), qpn, (uint8_t)ds,
                          fm_ce_se, 0);
    gshmemi_mlx5_set_raddr(&h->raddr, raddr, rkey);
    gshmemi_mlx5_set_data(d, size, lkey, laddr);
    return ds;
}

/* Masked fetch-and-add on a size-byte (4 or 8) word: ctrl + raddr + masked FA + data, 4 ds. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_masked_fa(void *wqe, uint16_t idx, uint32_t qpn,
                                                      uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                                      uint64_t laddr, uint32_t lkey, unsigned size,
                                                      uint64_t add, uint64_t field_boundary)
{
    gshmemi_mlx5_wqe_hdr_t *h = (gshmemi_mlx5_wqe_hdr_t *)wqe;
    if (size == 8)
        gshmemi_mlx5_set_masked_fa64((gshmemi_mlx5_masked_fa64_seg_t *)(h + 1), add, field_boundary);
    else if (size == 4)
        gshmemi_mlx5_set_masked_fa32((gshmemi_mlx5_masked_fa32_seg_t *)(h + 1), (uint32_t)add,
                                     (uint32_t)field_boundary);
    else
        return 0;
    gshmemi_mlx5_set_ctrl(&h->ctrl, idx, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA,
                          (uint8_t)GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(size == 8 ? 3 : 2), qpn, 4, fm_ce_se, 0);
    gshmemi_mlx5_set_raddr(&h->raddr, raddr, rkey);
    gshmemi_mlx5_set_data((gshmemi_mlx5_data_seg_t *)((uint8_t *)wqe + 48), size, lkey, laddr);
    return 4;
}

/* Fetch-and-add of add to the size-byte word at (raddr, rkey), old value to (laddr, lkey):
 * 8 bytes by ATOMIC_FA (ctrl + raddr + atomic + data, 4 ds), 4 bytes by a masked FA with no field
 * boundary (IB's plain atomics are 8-byte only). */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_fetch_add(void *wqe, uint16_t idx, uint32_t qpn,
                                                      uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                                      uint64_t laddr, uint32_t lkey, unsigned size,
                                                      uint64_t add)
{
    if (size == 4) return gshmemi_mlx5_wqe_masked_fa(wqe, idx, qpn, fm_ce_se, raddr, rkey, laddr, lkey, 4, add, 0);
    if (size != 8) return 0;
    gshmemi_mlx5_wqe_hdr_t *h = (gshmemi_mlx5_wqe_hdr_t *)wqe;
    gshmemi_mlx5_set_ctrl(&h->ctrl, idx, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, 0, qpn, 4, fm_ce_se, 0);
    gshmemi_mlx5_set_raddr(&h->raddr, raddr, rkey);
    gshmemi_mlx5_set_atomic((gshmemi_mlx5_atomic_seg_t *)(h + 1), add, 0);
    gshmemi_mlx5_set_data((gshmemi_mlx5_data_seg_t *)((uint8_t *)wqe + 48), 8, lkey, laddr);
    return 4;
}

/* Compare-and-swap: 8 bytes by ATOMIC_CS (4 ds), 4 bytes by a masked CS with full masks. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_compare_swap(void *wqe, uint16_t idx, uint32_t qpn,
                                                         uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                                         uint64_t laddr, uint32_t lkey, unsigned size,
                                                         uint64_t compare, uint64_t swap)
{
    if (size == 4)
        return gshmemi_mlx5_wqe_masked_cs(wqe, idx, qpn, fm_ce_se, raddr, rkey, laddr, lkey, 4, swap, compare,
                                          0xffffffffu, 0xffffffffu);
    if (size != 8) return 0;
    gshmemi_mlx5_wqe_hdr_t *h = (gshmemi_mlx5_wqe_hdr_t *)wqe;
    gshmemi_mlx5_set_ctrl(&h->ctrl, idx, GSHMEMI_MLX5_OPCODE_ATOMIC_CS, 0, qpn, 4, fm_ce_se, 0);
    gshmemi_mlx5_set_raddr(&h->raddr, raddr, rkey);
    gshmemi_mlx5_set_atomic((gshmemi_mlx5_atomic_seg_t *)(h + 1), swap, compare);
    gshmemi_mlx5_set_data((gshmemi_mlx5_data_seg_t *)((uint8_t *)wqe + 48), 8, lkey, laddr);
    return 4;
}

/* Bitwise AMOs through the extended atomics (the old value always comes back to (laddr, lkey)):
 *   AND v: masked CS, compare_mask 0 (always swap), swap v under swap_mask ~v (clears v's 0 bits)
 *   OR  v: masked CS, compare_mask 0, swap v under swap_mask v (sets v's 1 bits)
 *   XOR v: masked FA of v with every bit a field (no carries)
 *   SWAP v: masked CS, compare_mask 0, swap_mask all ones */
enum { GSHMEMI_MLX5_BIT_AND = 1, GSHMEMI_MLX5_BIT_OR, GSHMEMI_MLX5_BIT_XOR, GSHMEMI_MLX5_BIT_SWAP };

GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_bitwise(void *wqe, uint16_t idx, uint32_t qpn, uint8_t fm_ce_se,
                                                    uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                                    uint32_t lkey, unsigned size, int op, uint64_t v)
{
    uint64_t all = size == 8 ? ~0ull : 0xffffffffull;
    v &= all;
    switch (op) {
    case GSHMEMI_MLX5_BIT_AND:
        return gshmemi_mlx5_wqe_masked_cs(wqe, idx, qpn, fm_ce_se, raddr, rkey, laddr, lkey, size, v, 0, ~v & all, 0);
    case GSHMEMI_MLX5_BIT_OR:
        return gshmemi_mlx5_wqe_masked_cs(wqe, idx, qpn, fm_ce_se, raddr, rkey, laddr, lkey, size, v, 0, v, 0);
    case GSHMEMI_MLX5_BIT_XOR:
        return gshmemi_mlx5_wqe_masked_fa(wqe, idx, qpn, fm_ce_se, raddr, rkey, laddr, lkey, size, v, all);
    case GSHMEMI_MLX5_BIT_SWAP:
        return gshmemi_mlx5_wqe_masked_cs(wqe, idx, qpn, fm_ce_se, raddr, rkey, laddr, lkey, size, v, 0, all, 0);
    default: return 0;
    }
}

/* A NOP (ctrl only, 1 ds): fills a slot, or asks for a CQE with nothing to do. */
GSHMEMI_HD_INLINE unsigned gshmemi_mlx5_wqe_nop(void *wqe, uint16_t idx, uint32_t qpn, uint8_t fm_ce_se)
{
    gshmemi_mlx5_set_ctrl((gshmemi_mlx5_ctrl_seg_t *)wqe, idx, GSHMEMI_MLX5_OPCODE_NOP, 0, qpn, 1, fm_ce_se, 0);
    return 1;
}

/* ---- index arithmetic ----------------------------------------------------------------------- */
/* The SQ slot (BB) of WQE counter idx in a ring of sq_bbs BBs (a power of two, at most 65536:
 * the counter wraps at 65536, a multiple of the ring, so slots follow it across the wrap). */
GSHMEMI_HD_INLINE uint32_t gshmemi_mlx5_sq_slot(uint16_t idx, uint32_t sq_bbs) { return idx & (sq_bbs - 1); }

/* The value of the send doorbell record (dbrec[GSHMEMI_MLX5_DBR_SND]) once every WQE before
 * counter next_idx is written: the NIC may fetch up to, not including, next_idx. */
GSHMEMI_HD_INLINE uint32_t gshmemi_mlx5_sq_dbrec(uint16_t next_idx) { return gshmemi_mlx5_be32(next_idx); }

/* The 64-bit index nearest at or below ref whose low 16 bits are idx16: widens a CQE's
 * wqe_counter against the producer's 64-bit count (valid while fewer than 65536 WQEs are
 * outstanding, which any SQ of at most 65536 BBs ensures). */
GSHMEMI_HD_INLINE uint64_t gshmemi_mlx5_widen16(uint64_t ref, uint16_t idx16)
{
    return ref - (uint16_t)((uint16_t)ref - idx16);
}

/* CQ of ncqe entries (a power of two). Consumer index ci (free-running, 32 bits) reads slot
 * ci & (ncqe - 1); the NIC flips the owner bit it writes on every pass over the ring, starting
 * from 0 on the first pass, so the entry is new when its owner bit equals (ci / ncqe) & 1. */
GSHMEMI_HD_INLINE uint32_t gshmemi_mlx5_cq_slot(uint32_t ci, uint32_t ncqe) { return ci & (ncqe - 1); }
GSHMEMI_HD_INLINE uint8_t gshmemi_mlx5_cq_owner(uint32_t ci, uint32_t ncqe) { return (ci & ncqe) ? 1 : 0; }
GSHMEMI_HD_INLINE uint8_t gshmemi_mlx5_cqe_opcode(uint8_t op_own) { return op_own >> 4; }

/* Whether the CQE with this op_own byte, read at consumer index ci, is a new one (valid or
 * error) rather than the previous pass's or a fresh CQ's (opcode INVALID). */
GSHMEMI_HD_INLINE int gshmemi_mlx5_cqe_is_new(uint8_t op_own, uint32_t ci, uint32_t ncqe)
{
    return (op_own & GSHMEMI_MLX5_CQE_OWNER_MASK) == gshmemi_mlx5_cq_owner(ci, ncqe) &&
           gshmemi_mlx5_cqe_opcode(op_own) != GSHMEMI_MLX5_CQE_INVALID;
}

GSHMEMI_HD_INLINE int gshmemi_mlx5_cqe_is_error(uint8_t op_own)
{
    uint8_t op = gshmemi_mlx5_cqe_opcode(op_own);
    return op == GSHMEMI_MLX5_CQE_REQ_ERR || op == GSHMEMI_MLX5_CQE_RESP_ERR;
}

/* What software writes into every CQE of a new CQ: opcode INVALID (never new, whatever the
 * owner bit), and owner 1, which the first pass (owner 0) does not expect either. */
GSHMEMI_HD_INLINE void gshmemi_mlx5_cqe_init(gshmemi_mlx5_cqe_t *cqe)
{
    for (unsigned i = 0; i < GSHMEMI_MLX5_CQE_BYTES; i++) cqe->bytes[i] = 0;
    cqe->ok.op_own = (uint8_t)(GSHMEMI_MLX5_CQE_INVALID << 4 | 1);
}

/* The consumer-index doorbell record's value (dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI]). */
GSHMEMI_HD_INLINE uint32_t gshmemi_mlx5_cq_dbrec(uint32_t ci) { return gshmemi_mlx5_be32(ci & 0xffffffu); }

/* ---- error CQE decoding --------------------------------------------------------------------- */
typedef struct gshmemi_mlx5_err_info {
    uint8_t syndrome;
    uint8_t vendor_err_synd;
    uint8_t wqe_opcode; /* the failed WQE's opcode (GSHMEMI_MLX5_OPCODE_*) */
    uint32_t qpn;
    uint16_t wqe_counter;
} gshmemi_mlx5_err_info_t;

GSHMEMI_HD_INLINE gshmemi_mlx5_err_info_t gshmemi_mlx5_err_decode(const gshmemi_mlx5_err_cqe_t *e)
{
    gshmemi_mlx5_err_info_t r;
    uint32_t oq = gshmemi_mlx5_be32(e->s_wqe_opcode_qpn);
    r.syndrome = e->syndrome;
    r.vendor_err_synd = e->vendor_err_synd;
    r.wqe_opcode = (uint8_t)(oq >> 24);
    r.qpn = oq & 0xffffffu;
    r.wqe_counter = gshmemi_mlx5_be16(e->wqe_counter);
    return r;
}

/* The syndrome's name; for a value with no name, "unknown syndrome 0xNN" written into buf
 * (at least 24 bytes) and buf returned. No libc: the device calls it too. */
#define GSHMEMI_MLX5_SYNDROME_BUF 24
GSHMEMI_HD_INLINE const char *gshmemi_mlx5_syndrome_str(uint8_t syndrome, char *buf)
{
    switch (syndrome) {
#define GSHMEMI_MLX5_SYNDROME_CASE(name, value, text)                                              \
    case value: return text;
        GSHMEMI_MLX5_SYNDROME_X(GSHMEMI_MLX5_SYNDROME_CASE)
#undef GSHMEMI_MLX5_SYNDROME_CASE
    default: break;
    }
    const char *p = "unknown syndrome 0x";
    unsigned n = 0;
    while (p[n]) {
        buf[n] = p[n];
        n++;
    }
    buf[n++] = "0123456789abcdef"[syndrome >> 4];
    buf[n++] = "0123456789abcdef"[syndrome & 0xf];
    buf[n] = 0;
    return buf;
}

/* The WQE opcode's name, for error messages ("opcode 0x..": NULL for one these builders never use). */
GSHMEMI_HD_INLINE const char *gshmemi_mlx5_opcode_name(uint8_t opcode)
{
    switch (opcode) {
    case GSHMEMI_MLX5_OPCODE_NOP: return "NOP";
    case GSHMEMI_MLX5_OPCODE_RDMA_WRITE: return "RDMA_WRITE";
    case GSHMEMI_MLX5_OPCODE_RDMA_WRITE_IMM: return "RDMA_WRITE_IMM";
    case GSHMEMI_MLX5_OPCODE_SEND: return "SEND";
    case GSHMEMI_MLX5_OPCODE_RDMA_READ: return "RDMA_READ";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_CS: return "ATOMIC_CS";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_FA: return "ATOMIC_FA";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS: return "ATOMIC_MASKED_CS";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA: return "ATOMIC_MASKED_FA";
    default: return NULL;
    }
}

#endif /* GSHMEMI_MLX5_WQE_H */
