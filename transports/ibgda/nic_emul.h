/* The engine of the emulated NIC (GSHMEM_IBGDA_NIC=emulated): plays a ConnectX send queue for
 * one RC QP. It reads the bytes a ConnectX reads (the send doorbell record, the WQEs of the SQ
 * ring), decodes each WQE strictly with the layouts of device/mlx5_wqe.h, executes it against
 * the target PE's memory and writes 64-byte CQEs as mlx5 defines them. A WQE it cannot decode
 * exactly, or whose keys or addresses do not check, is never guessed at: it gets an error CQE
 * (REQ_ERR with the syndrome a ConnectX would report) and the QP goes to the error state, where
 * every later WQE gets a flush error CQE, as on hardware.
 *
 * Pure C: it touches nothing itself. Every read of the SQ and the doorbell records, every key
 * lookup, copy, atomic and CQE write goes through the caller's ops table, so the transport drives
 * GPU memory through CUDA calls and test/unit/test_ibgda_emul.c drives plain host memory with the
 * same engine. One QP is driven by one thread at a time (the engine keeps no lock).
 *
 * What it cannot show about hardware: see docs/transports.md (IBGDA). In short, it checks what the WQEs
 * say, not how PCIe delivers them, and its vendor syndromes are its own. */
#ifndef GSHMEMI_NIC_EMUL_H
#define GSHMEMI_NIC_EMUL_H

#include <stddef.h>
#include <stdint.h>

#include "../../device/mlx5_wqe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- why a WQE failed: the error CQE's vendor_err_synd byte ----------------------------------
 * Values of the emulator's own (a ConnectX's vendor syndromes are undocumented): the syndrome
 * byte carries the standard mlx5 class, this byte which check failed. */
#define GSHMEMI_NIC_EMUL_REASON_X(X)                                                               \
    X(NONE, 0x00, "no error")                                                                      \
    X(BAD_INDEX, 0xe1, "the WQE's index is not the SQ's next WQE counter")                         \
    X(BAD_QPN, 0xe2, "the WQE's qp number is not this QP's")                                       \
    X(BAD_DS, 0xe3, "the ds count does not match the segments of the opcode")                      \
    X(BAD_OPCODE, 0xe4, "unknown opcode, or one the emulator does not execute")                     \
    X(BAD_OPMOD, 0xe5, "opmod not valid for the opcode")                                           \
    X(BAD_FENCE, 0xe6, "reserved fence mode")                                                      \
    X(BAD_SEG, 0xe7, "an inline segment where a data segment must be")                             \
    X(PAST_DBREC, 0xe8, "the WQE extends past the send doorbell record")                           \
    X(SQ_OVERFLOW, 0xe9, "the doorbell record is more than the SQ's size ahead")                   \
    X(INLINE_LEN, 0xea, "inline data longer than the QP's maximum")                                \
    X(MSG_LEN, 0xeb, "message longer than 2^31 bytes")                                             \
    X(ATOMIC_LEN, 0xec, "the atomic's result segment is not the operand size")                     \
    X(ATOMIC_ALIGN, 0xed, "the atomic's remote address is not aligned to the operand size")        \
    X(LKEY, 0xf0, "unknown lkey")                                                                  \
    X(LRANGE, 0xf1, "local address range outside the lkey's region")                               \
    X(LACCESS, 0xf2, "the lkey's region does not allow the local access")                          \
    X(RKEY, 0xf3, "unknown rkey at the target")                                                    \
    X(RRANGE, 0xf4, "remote address range outside the rkey's region")                              \
    X(RACCESS, 0xf5, "the rkey's region does not allow the remote access")                         \
    X(INJECT_RKEY, 0xf8, "bad rkey injected")                                                      \
    X(INJECT_RANGE, 0xf9, "out-of-range address injected")                                         \
    X(FLUSH, 0xfe, "flushed: the QP is in the error state")
#define GSHMEMI_NIC_EMUL_REASON_ENUM(name, value, text) GSHMEMI_NIC_EMUL_##name = value,
enum { GSHMEMI_NIC_EMUL_REASON_X(GSHMEMI_NIC_EMUL_REASON_ENUM) };
#undef GSHMEMI_NIC_EMUL_REASON_ENUM

/* The text of a vendor_err_synd byte above ("unknown" for another). */
const char *gshmemi_nic_emul_reason_str(uint8_t vendor);

/* ---- what the callbacks are asked ------------------------------------------------------------ */
/* Access a key's region must allow. */
enum {
    GSHMEMI_NIC_EMUL_LOCAL_READ = 1,    /* gather of an RDMA WRITE */
    GSHMEMI_NIC_EMUL_LOCAL_WRITE = 2,   /* scatter of an RDMA READ or an atomic's result */
    GSHMEMI_NIC_EMUL_REMOTE_READ = 4,
    GSHMEMI_NIC_EMUL_REMOTE_WRITE = 8,
    GSHMEMI_NIC_EMUL_REMOTE_ATOMIC = 16,
};

/* What a resolve callback answers when it does not resolve (0 when it does, a negative
 * GSHMEMI_ERR_* when it fails itself). */
enum {
    GSHMEMI_NIC_EMUL_KEY_UNKNOWN = 1, /* no region has this key */
    GSHMEMI_NIC_EMUL_KEY_RANGE = 2,   /* [addr, addr + len) is not inside the key's region */
    GSHMEMI_NIC_EMUL_KEY_ACCESS = 3,  /* the region does not allow this access */
};

/* An atomic as decoded from a WQE, operands in host order. The word at the target is in host
 * order too: the emulator assumes the QP's atomics use host endianness (mlx5's
 * atomic_req_8B_endianness_mode = 1); the old value returned is host order. */
enum {
    GSHMEMI_NIC_EMUL_AMO_FA = 1,    /* new = old + add (8 bytes) */
    GSHMEMI_NIC_EMUL_AMO_CS,        /* new = swap if old == compare (8 bytes) */
    GSHMEMI_NIC_EMUL_AMO_MASKED_FA, /* add field by field, carries stop at field_boundary bits */
    GSHMEMI_NIC_EMUL_AMO_MASKED_CS, /* where (old ^ compare) & compare_mask == 0:
                                     * new = (old & ~swap_mask) | (swap & swap_mask) */
};

typedef struct gshmemi_nic_emul_amo {
    int kind;                /* GSHMEMI_NIC_EMUL_AMO_* */
    unsigned size;           /* operand bytes: 4 or 8 */
    uint64_t add;            /* FA, MASKED_FA */
    uint64_t swap;           /* CS, MASKED_CS */
    uint64_t compare;        /* CS, MASKED_CS */
    uint64_t swap_mask;      /* MASKED_CS */
    uint64_t compare_mask;   /* MASKED_CS */
    uint64_t field_boundary; /* MASKED_FA: bit i set, no carry out of bit i */
} gshmemi_nic_emul_amo_t;

/* The value an atomic leaves in a word that held old (size bytes; the result is truncated to
 * them). An atomic callback runs it inside its compare-and-swap loop, so the semantics live in
 * one place; the _hd form is the same for a GPU kernel (the transport's atomic callback). */
uint64_t gshmemi_nic_emul_amo_apply(const gshmemi_nic_emul_amo_t *amo, uint64_t old);
GSHMEMI_HD_INLINE uint64_t gshmemi_nic_emul_amo_apply_hd(const gshmemi_nic_emul_amo_t *a, uint64_t old)
{
    unsigned bits = a->size == 4 ? 32 : 64;
    uint64_t all = bits == 32 ? 0xffffffffull : ~0ull;
    uint64_t nv = old &= all;
    switch (a->kind) {
    case GSHMEMI_NIC_EMUL_AMO_FA: nv = old + a->add; break;
    case GSHMEMI_NIC_EMUL_AMO_CS: nv = old == (a->compare & all) ? a->swap : old; break;
    case GSHMEMI_NIC_EMUL_AMO_MASKED_FA: {
        /* a ripple-carry adder whose carry is dropped out of every boundary bit */
        uint64_t carry = 0;
        nv = 0;
        for (unsigned i = 0; i < bits; i++) {
            uint64_t x = (old >> i) & 1, y = (a->add >> i) & 1;
            nv |= (x ^ y ^ carry) << i;
            carry = (x & y) | (x & carry) | (y & carry);
            if ((a->field_boundary >> i) & 1) carry = 0;
        }
        break;
    }
    case GSHMEMI_NIC_EMUL_AMO_MASKED_CS:
        if (((old ^ a->compare) & a->compare_mask & all) == 0) nv = (old & ~a->swap_mask) | (a->swap & a->swap_mask);
        break;
    default: break;
    }
    return nv & all;
}


struct gshmemi_nic_emul_qp;

/* Everything the engine touches. Each callback returns 0, or a negative GSHMEMI_ERR_* that
 * stops the engine (logged with the callback's name, the QP goes to the fatal state); the
 * resolve callbacks may also answer GSHMEMI_NIC_EMUL_KEY_* (an error CQE, not a failure). A
 * callback returns once its effect is visible where the poller of the CQ looks: the engine
 * writes a CQE only after the data and the atomic result of its WQE. Pointers handed back by
 * the resolve callbacks are opaque to the engine (host or device addresses) and only passed
 * back to copy, store and atomic. */
typedef struct gshmemi_nic_emul_ops {
    /* n bytes at src of the QP's memory (the SQ ring, a doorbell record) into host dst. A read
     * acts as an acquire: the SQ bytes read after a doorbell record are at least as new as the
     * record (the producer writes the WQEs, then the record). */
    int (*read)(void *ctx, void *dst, const void *src, size_t n);
    /* Writes the CQE at cqe_addr, making its last byte (op_own, which holds the owner bit)
     * visible after the other 63. */
    int (*write_cqe)(void *ctx, void *cqe_addr, const gshmemi_mlx5_cqe_t *cqe);
    /* This side's (lkey, addr, len) with the given GSHMEMI_NIC_EMUL_LOCAL_* access: *ptr. */
    int (*resolve_local)(void *ctx, const struct gshmemi_nic_emul_qp *qp, uint32_t lkey, uint64_t addr,
                         uint64_t len, int access, void **ptr);
    /* The target PE's (qp->cfg.peer) (rkey, raddr, len), GSHMEMI_NIC_EMUL_REMOTE_* access. */
    int (*resolve_remote)(void *ctx, const struct gshmemi_nic_emul_qp *qp, uint32_t rkey, uint64_t raddr,
                          uint64_t len, int access, void **ptr);
    /* n bytes between resolved pointers (RDMA WRITE gather, RDMA READ scatter) */
    int (*copy)(void *ctx, void *dst, const void *src, size_t n);
    /* n bytes from the engine's host memory to a resolved pointer (inline data, atomic results) */
    int (*store)(void *ctx, void *dst, const void *host_src, size_t n);
    /* The atomic at a resolved target, atomic with respect to other atomics there; *old gets
     * the value before it (host order). */
    int (*atomic)(void *ctx, void *target, const gshmemi_nic_emul_amo_t *amo, uint64_t *old);
} gshmemi_nic_emul_ops_t;

/* ---- a QP as the emulator sees it ------------------------------------------------------------ */
typedef struct gshmemi_nic_emul_qp_cfg {
    uint32_t qpn;        /* 24 bits: WQEs must carry it */
    int peer;            /* the PE the QP's RDMA targets (handed to resolve_remote) */
    void *sq;            /* the SQ ring: sq_bbs basic blocks of 64 bytes */
    uint32_t sq_bbs;     /* a power of two, at most 65536 */
    void *sq_dbrec;      /* the send doorbell record: a big-endian 32-bit word, the 16-bit WQE
                          * counter after the last posted WQE (dbrec[GSHMEMI_MLX5_DBR_SND]) */
    void *cq;            /* ncqe CQEs of 64 bytes */
    uint32_t ncqe;       /* a power of two, at most 2^23 */
    void *cq_dbrec;      /* the CQ's consumer-index record: big-endian, 24 bits (dbrec[0]) */
    uint32_t max_inline; /* largest inline payload accepted; 0: GSHMEMI_MLX5_INLINE_MAX */
    int cq_collapsed;    /* mlx5 cqc.cc: every CQE in entry 0 (no overrun possible) */
    int cq_overrun_ignore; /* mlx5 cqc.oi: no overrun check against the consumer index */
    int null_mode;       /* complete every WQE it decodes without touching memory: no key
                          * lookup, copy, store or atomic (times the GPU side alone) */
    int null_data;       /* RDMA WRITE and READ from data segments complete without moving their
                          * bytes (keys still checked); inline writes and atomics execute, so
                          * signals, barriers and collectives still work (GSHMEM_IBGDA_NIC=null) */
} gshmemi_nic_emul_qp_cfg_t;

/* Faults on purpose (the transport maps them to environment variables). WQE numbers count the
 * WQEs this QP consumed from 1. Set before or between progress calls. */
typedef struct gshmemi_nic_emul_inject {
    uint64_t bad_rkey_at;   /* this WQE, if it has an rkey, fails as with an unknown rkey */
    uint64_t bad_range_at;  /* this WQE, if it has an rkey, fails as outside the rkey's region */
    uint64_t delay_at;      /* this WQE (0: every WQE) waits delay_calls progress calls, the
                             * call that reaches it first included, and runs in the next */
    uint32_t delay_calls;   /* 0: no delay */
} gshmemi_nic_emul_inject_t;

enum {
    GSHMEMI_NIC_EMUL_QP_RTS = 0, /* executing */
    GSHMEMI_NIC_EMUL_QP_ERR,     /* a WQE failed: the rest are flushed */
    GSHMEMI_NIC_EMUL_QP_FATAL,   /* a callback failed or the CQ overran: progress fails */
};

typedef struct gshmemi_nic_emul_qp {
    gshmemi_nic_emul_qp_cfg_t cfg;
    gshmemi_nic_emul_inject_t inject;
    const gshmemi_nic_emul_ops_t *ops;
    void *ctx;
    /* engine state (read-only to the caller) */
    int state;              /* GSHMEMI_NIC_EMUL_QP_* */
    int fatal_rc;           /* what progress returns in the fatal state */
    uint64_t sq_ci;         /* WQE counter (in BBs, free-running) of the next WQE to read */
    uint64_t wqes;          /* WQEs consumed */
    uint32_t cq_pi;         /* CQEs written (free-running) */
    uint32_t cq_ci;         /* the CQ consumer index last read (24 bits) */
    uint64_t held_wqe;      /* the WQE number a delay holds (0: none yet) */
    uint32_t hold_left;     /* progress calls it still waits */
    gshmemi_mlx5_err_info_t err; /* the WQE error that put the QP in the error state */
    char reason[256];       /* that error in words (also logged) */
    uint8_t *sq_cache;      /* host copy of the SQ ring, slot for slot: the BBs one progress call
                             * read in at most two reads (sq_bbs * 64 bytes, freed by qp_fini) */
    int cqe_pending;        /* collapsed CQ: a success CQE kept back until the call ends */
    gshmemi_mlx5_cqe_t cqe_stash; /* that CQE, owner bit set */
} gshmemi_nic_emul_qp_t;

/* Checks cfg (power-of-two sizes, every address and callback given) and starts the QP in RTS
 * with its counters at 0. GSHMEMI_ERR_INVALID, logged naming the field, otherwise;
 * GSHMEMI_ERR_NOMEM (logged) when the host copy of the SQ cannot be allocated. Every QP that
 * init returned GSHMEMI_OK for needs gshmemi_nic_emul_qp_fini before it is freed or initialized
 * again. */
int gshmemi_nic_emul_qp_init(gshmemi_nic_emul_qp_t *qp, const gshmemi_nic_emul_qp_cfg_t *cfg,
                             const gshmemi_nic_emul_ops_t *ops, void *ctx);

/* Frees what init allocated; safe on NULL, on a zeroed QP and called twice. */
void gshmemi_nic_emul_qp_fini(gshmemi_nic_emul_qp_t *qp);

/* Reads the send doorbell record and consumes every WQE posted since the last call, in order:
 * executes it and writes its CQE when its ctrl segment asks for one (ce = 2 or 3), an error
 * CQE when it fails, a flush CQE in the error state. Stops early at a WQE a delay holds.
 * Each call reads the posted BBs in one or two reads (two where the ring wraps), since a read of
 * GPU memory costs microseconds; a WQE a delay holds is read again by the next call. On a
 * collapsed CQ only the last success CQE of a call is written (before any error CQE, which is
 * written at once, and before the call returns): what the consumer can observe is unchanged,
 * since a collapsed CQ shows only the newest entry.
 * Returns the number of WQEs consumed (errors and flushes included), or a negative GSHMEMI_ERR_*
 * when a callback failed or the CQ overran (logged; every later call returns it too). */
int gshmemi_nic_emul_progress(gshmemi_nic_emul_qp_t *qp);

#ifdef __cplusplus
}
#endif
#endif
