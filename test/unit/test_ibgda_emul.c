/* The emulated NIC's engine (transports/ibgda/nic_emul.c) against host memory: WQEs built with
 * device/mlx5_wqe.h's builders into a host SQ ring, the doorbell record rung, progress run, and
 * then the data, the atomics' old and new values and every CQE field checked against a model the
 * test keeps itself (a shadow copy of each memory, expected values written out by hand), over
 * several wraps of the 16-bit WQE counter and of the CQ. Every malformed WQE, bad key and range
 * must give its error CQE and then flushes; null mode, fault injection, CQ overrun and failing
 * callbacks too. The read and write_cqe callbacks count their calls: a progress call reads the
 * posted SQ in one or two reads, and writes one CQE a call on a collapsed CQ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stderr_capture.h"

#include "runtime/base/log.h"
#include "transports/ibgda/nic_emul.h"

/* ---- the host "PE memories" ---------------------------------------------------------------- */
#define LMEM 8192
#define RMEM 8192
#define SMALL 256
#define LKEY 0x100u    /* lmem: local read and write */
#define LKEY_RO 0x101u /* lro: local read only */
#define RKEY 0x200u    /* rmem at PE 1: remote read, write, atomic */
#define RKEY_RO 0x201u /* rro at PE 1: remote read only */
#define RKEY_PE0 0x300u /* a region at PE 0, which the QP (to PE 1) must not reach */
#define QPN 0x1234u
#define PEER 1

typedef struct region {
    uint32_t key;
    uint8_t *base;
    size_t len;
    int access;
} region_t;

typedef struct harness {
    uint8_t *sq;
    uint32_t sq_bbs;
    uint32_t sq_dbrec[2];
    gshmemi_mlx5_cqe_t *cq;
    uint32_t ncqe;
    uint32_t cq_dbrec[2];
    uint16_t pi; /* the producer's WQE counter */
    uint32_t ci; /* the consumer's CQ index */
    _Alignas(8) uint8_t lmem[LMEM];
    _Alignas(8) uint8_t lro[SMALL];
    _Alignas(8) uint8_t rmem[RMEM];
    _Alignas(8) uint8_t rro[SMALL];
    _Alignas(8) uint8_t pe0[SMALL];
    region_t local[2], remote[2][2];
    unsigned n_resolve, n_copy, n_store, n_atomic, n_cqe, n_ci_reads;
    unsigned n_reads, n_sq_reads;     /* every read; those of the SQ ring */
    unsigned sq_read_slot[4], sq_read_bbs[4]; /* the first SQ reads since the counts were reset */
    int sq_read_outside;              /* a read began in the ring and ran past its end */
    unsigned fail_copy;               /* the fail_copy-th copy (from 1) fails with GSHMEMI_ERR_CUDA */
    gshmemi_mlx5_cqe_t cqe_log[64];   /* the first CQEs written, in order, wherever they went */
    gshmemi_nic_emul_qp_cfg_t cfg;
    gshmemi_nic_emul_qp_t qp;
} harness_t;

static int find(const region_t *r, unsigned n, uint32_t key, uint64_t addr, uint64_t len, int access, void **ptr)
{
    for (unsigned i = 0; i < n; i++) {
        if (r[i].key != key) continue;
        uintptr_t base = (uintptr_t)r[i].base;
        if (addr < base || len > r[i].len || addr - base > r[i].len - len) return GSHMEMI_NIC_EMUL_KEY_RANGE;
        if ((r[i].access & access) != access) return GSHMEMI_NIC_EMUL_KEY_ACCESS;
        *ptr = (void *)(uintptr_t)addr;
        return 0;
    }
    return GSHMEMI_NIC_EMUL_KEY_UNKNOWN;
}

static int h_read(void *ctx, void *dst, const void *src, size_t n)
{
    harness_t *h = ctx;
    const uint8_t *p = src, *end = h->sq + (size_t)h->sq_bbs * 64;
    h->n_reads++;
    h->n_ci_reads += src == h->cfg.cq_dbrec;
    if (p >= h->sq && p < end) {
        if (n > (size_t)(end - p)) h->sq_read_outside = 1;
        if (h->n_sq_reads < 4) {
            h->sq_read_slot[h->n_sq_reads] = (unsigned)((p - h->sq) / 64);
            h->sq_read_bbs[h->n_sq_reads] = (unsigned)(n / 64);
        }
        h->n_sq_reads++;
    }
    memcpy(dst, src, n);
    return 0;
}

static void reset_counts(harness_t *h)
{
    h->n_reads = h->n_sq_reads = h->n_ci_reads = h->n_cqe = 0;
}

static int h_write_cqe(void *ctx, void *addr, const gshmemi_mlx5_cqe_t *cqe)
{
    harness_t *h = ctx;
    if (h->n_cqe < 64) h->cqe_log[h->n_cqe] = *cqe;
    h->n_cqe++;
    memcpy(addr, cqe, 63);
    __atomic_store_n((uint8_t *)addr + 63, cqe->bytes[63], __ATOMIC_RELEASE);
    return 0;
}

static int h_resolve_local(void *ctx, const gshmemi_nic_emul_qp_t *qp, uint32_t lkey, uint64_t addr, uint64_t len,
                           int access, void **ptr)
{
    harness_t *h = ctx;
    (void)qp;
    h->n_resolve++;
    return find(h->local, 2, lkey, addr, len, access, ptr);
}

static int h_resolve_remote(void *ctx, const gshmemi_nic_emul_qp_t *qp, uint32_t rkey, uint64_t raddr, uint64_t len,
                            int access, void **ptr)
{
    harness_t *h = ctx;
    h->n_resolve++;
    return find(h->remote[qp->cfg.peer], 2, rkey, raddr, len, access, ptr);
}

static int h_copy(void *ctx, void *dst, const void *src, size_t n)
{
    harness_t *h = ctx;
    h->n_copy++;
    if (h->fail_copy && h->n_copy >= h->fail_copy) return GSHMEMI_ERR_CUDA;
    memcpy(dst, src, n);
    return 0;
}

static int h_store(void *ctx, void *dst, const void *src, size_t n)
{
    harness_t *h = ctx;
    h->n_store++;
    memcpy(dst, src, n);
    return 0;
}

static int h_atomic(void *ctx, void *target, const gshmemi_nic_emul_amo_t *amo, uint64_t *old)
{
    harness_t *h = ctx;
    h->n_atomic++;
    if (amo->size == 4) {
        uint32_t *t = target, o = __atomic_load_n(t, __ATOMIC_RELAXED), n;
        do n = (uint32_t)gshmemi_nic_emul_amo_apply(amo, o);
        while (!__atomic_compare_exchange_n(t, &o, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        *old = o;
    } else {
        uint64_t *t = target, o = __atomic_load_n(t, __ATOMIC_RELAXED), n;
        do n = gshmemi_nic_emul_amo_apply(amo, o);
        while (!__atomic_compare_exchange_n(t, &o, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        *old = o;
    }
    return 0;
}

static const gshmemi_nic_emul_ops_t host_ops = {
    .read = h_read, .write_cqe = h_write_cqe, .resolve_local = h_resolve_local, .resolve_remote = h_resolve_remote,
    .copy = h_copy, .store = h_store, .atomic = h_atomic,
};

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

static void fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)rnd();
}

/* cfg changes go in through the hook before init */
static void h_setup(harness_t *h, uint32_t sq_bbs, uint32_t ncqe, void (*tweak)(gshmemi_nic_emul_qp_cfg_t *))
{
    memset(h, 0, sizeof(*h));
    h->sq_bbs = sq_bbs;
    h->ncqe = ncqe;
    h->sq = aligned_alloc(64, (size_t)sq_bbs * 64);
    h->cq = aligned_alloc(64, (size_t)ncqe * 64);
    assert_non_null(h->sq);
    assert_non_null(h->cq);
    memset(h->sq, 0xcc, (size_t)sq_bbs * 64); /* stale bytes, as a reused ring has */
    for (uint32_t i = 0; i < ncqe; i++) gshmemi_mlx5_cqe_init(&h->cq[i]);
    fill(h->lmem, LMEM);
    fill(h->lro, SMALL);
    fill(h->rmem, RMEM);
    fill(h->rro, SMALL);
    fill(h->pe0, SMALL);
    h->local[0] = (region_t){LKEY, h->lmem, LMEM, GSHMEMI_NIC_EMUL_LOCAL_READ | GSHMEMI_NIC_EMUL_LOCAL_WRITE};
    h->local[1] = (region_t){LKEY_RO, h->lro, SMALL, GSHMEMI_NIC_EMUL_LOCAL_READ};
    h->remote[1][0] = (region_t){RKEY, h->rmem, RMEM,
                                 GSHMEMI_NIC_EMUL_REMOTE_READ | GSHMEMI_NIC_EMUL_REMOTE_WRITE | GSHMEMI_NIC_EMUL_REMOTE_ATOMIC};
    h->remote[1][1] = (region_t){RKEY_RO, h->rro, SMALL, GSHMEMI_NIC_EMUL_REMOTE_READ};
    h->remote[0][0] = (region_t){RKEY_PE0, h->pe0, SMALL,
                                 GSHMEMI_NIC_EMUL_REMOTE_READ | GSHMEMI_NIC_EMUL_REMOTE_WRITE | GSHMEMI_NIC_EMUL_REMOTE_ATOMIC};
    h->cfg = (gshmemi_nic_emul_qp_cfg_t){
        .qpn = QPN, .peer = PEER, .sq = h->sq, .sq_bbs = sq_bbs, .sq_dbrec = &h->sq_dbrec[GSHMEMI_MLX5_DBR_SND],
        .cq = h->cq, .ncqe = ncqe, .cq_dbrec = &h->cq_dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI],
    };
    if (tweak) tweak(&h->cfg);
    assert_int_equal(gshmemi_nic_emul_qp_init(&h->qp, &h->cfg, &host_ops, h), GSHMEMI_OK);
}

static void h_teardown(harness_t *h)
{
    assert_false(h->sq_read_outside);
    gshmemi_nic_emul_qp_fini(&h->qp);
    free(h->sq);
    free(h->cq);
}

static uint64_t A(const void *p) { return (uint64_t)(uintptr_t)p; }

/* Copies a WQE built in a flat buffer into the ring, BB by BB (a 2-BB WQE may wrap), and moves
 * the producer's counter past it. */
static void post(harness_t *h, const void *wqe, unsigned ds)
{
    unsigned bbs = gshmemi_mlx5_wqe_bbs(ds ? ds : 1);
    for (unsigned i = 0; i < bbs; i++)
        memcpy(h->sq + (size_t)gshmemi_mlx5_sq_slot((uint16_t)(h->pi + i), h->sq_bbs) * 64, (const uint8_t *)wqe + i * 64,
               64);
    h->pi = (uint16_t)(h->pi + bbs);
}

static void ring(harness_t *h) { h->sq_dbrec[GSHMEMI_MLX5_DBR_SND] = gshmemi_mlx5_sq_dbrec(h->pi); }

typedef struct {
    _Alignas(16) uint8_t b[1024];
} wqebuf_t;

#define SIG GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE

static void post_put(harness_t *h, uint8_t f, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t n)
{
    wqebuf_t w;
    post(h, w.b, gshmemi_mlx5_wqe_put(w.b, h->pi, QPN, f, raddr, rkey, laddr, lkey, n));
}

static void post_get(harness_t *h, uint8_t f, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t n)
{
    wqebuf_t w;
    post(h, w.b, gshmemi_mlx5_wqe_get(w.b, h->pi, QPN, f, raddr, rkey, laddr, lkey, n));
}

static void post_inline(harness_t *h, uint8_t f, uint64_t raddr, uint32_t rkey, const void *src, uint32_t n)
{
    wqebuf_t w;
    unsigned ds = gshmemi_mlx5_wqe_put_inline(w.b, h->pi, QPN, f, raddr, rkey, src, n);
    assert_true(ds > 0);
    post(h, w.b, ds);
}

static void post_nop(harness_t *h, uint8_t f)
{
    wqebuf_t w;
    post(h, w.b, gshmemi_mlx5_wqe_nop(w.b, h->pi, QPN, f));
}

/* ---- the consumer side: CQEs checked field by field ----------------------------------------- */
static int poll_cqe(harness_t *h, gshmemi_mlx5_cqe_t *out)
{
    const gshmemi_mlx5_cqe_t *c = &h->cq[h->ci & (h->ncqe - 1)];
    uint8_t op_own = __atomic_load_n(&c->ok.op_own, __ATOMIC_ACQUIRE);
    if (!gshmemi_mlx5_cqe_is_new(op_own, h->ci, h->ncqe)) return 0;
    /* the owner bit the NIC writes on pass p is p & 1: checked here without the header's helper */
    assert_int_equal(op_own & 1, (h->ci / h->ncqe) & 1);
    memcpy(out, c, sizeof(*out));
    h->ci++;
    h->cq_dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI] = gshmemi_mlx5_cq_dbrec(h->ci);
    return 1;
}

static void expect_ok(harness_t *h, uint8_t opcode, uint16_t idx, uint32_t bytes)
{
    gshmemi_mlx5_cqe_t c;
    if (!poll_cqe(h, &c)) {
        fprintf(stderr, "no CQE at consumer index %u (expected %s index %u)\n", h->ci, gshmemi_mlx5_opcode_name(opcode), idx);
        fail();
    }
    assert_int_equal(c.ok.op_own >> 4, GSHMEMI_MLX5_CQE_REQ);
    assert_int_equal((c.ok.op_own >> 1) & 7, 0); /* format 0, no solicited event */
    assert_int_equal(gshmemi_mlx5_be16(c.ok.wqe_counter), idx);
    assert_int_equal(gshmemi_mlx5_be32(c.ok.byte_cnt), bytes);
    assert_int_equal(gshmemi_mlx5_be32(c.ok.sop_drop_qpn), (uint32_t)opcode << 24 | QPN);
}

static void expect_err(harness_t *h, uint8_t opcode, uint16_t idx, uint8_t syndrome, uint8_t vendor)
{
    gshmemi_mlx5_cqe_t c;
    if (!poll_cqe(h, &c)) {
        fprintf(stderr, "no error CQE at consumer index %u (expected index %u)\n", h->ci, idx);
        fail();
    }
    assert_int_equal(c.err.op_own >> 4, GSHMEMI_MLX5_CQE_REQ_ERR);
    assert_true(gshmemi_mlx5_cqe_is_error(c.err.op_own));
    gshmemi_mlx5_err_info_t e = gshmemi_mlx5_err_decode(&c.err);
    if (e.syndrome != syndrome || e.vendor_err_synd != vendor) {
        char b[GSHMEMI_MLX5_SYNDROME_BUF];
        fprintf(stderr, "index %u: syndrome 0x%02x (%s), vendor 0x%02x (%s); expected 0x%02x, 0x%02x\n", e.wqe_counter,
                e.syndrome, gshmemi_mlx5_syndrome_str(e.syndrome, b), e.vendor_err_synd,
                gshmemi_nic_emul_reason_str(e.vendor_err_synd), syndrome, vendor);
        fail();
    }
    assert_int_equal(e.wqe_opcode, opcode);
    assert_int_equal(e.qpn, QPN);
    assert_int_equal(e.wqe_counter, idx);
}

static void expect_flush(harness_t *h, uint8_t opcode, uint16_t idx)
{
    expect_err(h, opcode, idx, GSHMEMI_MLX5_SYNDROME_WR_FLUSH_ERR, GSHMEMI_NIC_EMUL_FLUSH);
}

static void expect_no_cqe(harness_t *h)
{
    gshmemi_mlx5_cqe_t c;
    assert_int_equal(poll_cqe(h, &c), 0);
}


/* ---- the atomic semantics, by hand ----------------------------------------------------------- */
static void test_amo_apply(void **state)
{
    (void)state;
    gshmemi_nic_emul_amo_t a = {.kind = GSHMEMI_NIC_EMUL_AMO_FA, .size = 8, .add = 5};
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0xfffffffffffffffeull) == 3);
    a.size = 4; /* truncated to the operand */
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0xfffffffe) == 3);

    a = (gshmemi_nic_emul_amo_t){.kind = GSHMEMI_NIC_EMUL_AMO_CS, .size = 8, .compare = 7, .swap = 9};
    assert_true(gshmemi_nic_emul_amo_apply(&a, 7) == 9);
    assert_true(gshmemi_nic_emul_amo_apply(&a, 8) == 8);

    /* fields of a byte each: carries stop at bits 7, 15, 23, 31 */
    a = (gshmemi_nic_emul_amo_t){.kind = GSHMEMI_NIC_EMUL_AMO_MASKED_FA, .size = 4, .add = 0x01010101,
                                 .field_boundary = 0x80808080};
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0x01ff7f80) == 0x02008081);
    a.field_boundary = 0; /* one field: a plain add */
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0x01ff7f80) == 0x03008081);
    a.field_boundary = 0xffffffff, a.add = 0x0f0f00ff; /* every bit a field: XOR */
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0x00ff0f0f) == 0x0ff00ff0);
    a = (gshmemi_nic_emul_amo_t){.kind = GSHMEMI_NIC_EMUL_AMO_MASKED_FA, .size = 8, .add = 1,
                                 .field_boundary = 0x00000000ffffffffull << 0}; /* carry out of bit 0..31 dropped */
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0x00000001ffffffffull) == 0x00000001fffffffeull);

    a = (gshmemi_nic_emul_amo_t){.kind = GSHMEMI_NIC_EMUL_AMO_MASKED_CS, .size = 8, .swap = 0xabcd000000000000ull,
                                 .swap_mask = 0xffff000000000000ull, .compare = 0x12, .compare_mask = 0xff};
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0x1111000000000012ull) == 0xabcd000000000012ull);
    assert_true(gshmemi_nic_emul_amo_apply(&a, 0x1111000000000013ull) == 0x1111000000000013ull); /* compare fails */
}

/* ---- data over several wraps of the 16-bit counter and of the CQ ---------------------------- */
static void test_rma_wraps(void **state)
{
    (void)state;
    static harness_t h;
    static uint8_t lshadow[LMEM], rshadow[RMEM];
    h_setup(&h, 16, 8, NULL);
    memcpy(lshadow, h.lmem, LMEM);
    memcpy(rshadow, h.rmem, RMEM);
    struct {
        uint8_t op;
        uint16_t idx;
        uint32_t bytes;
    } want[8];
    uint64_t bbs_done = 0, wqes = 0;
    unsigned inl_2bb = 0, gets = 0;
    while (bbs_done < 3 * 65536 + 1000) {
        unsigned k = 1 + rnd() % 4, nw = 0, used = 0;
        uint64_t wqes_before = wqes;
        for (unsigned i = 0; i < k; i++) {
            unsigned kind = rnd() % 3;
            uint32_t n = 1 + rnd() % (kind == 1 ? GSHMEMI_MLX5_INLINE_MAX : 300);
            uint32_t loff = rnd() % (LMEM - n), roff = rnd() % (RMEM - n);
            uint8_t f = (rnd() % 2 || i == k - 1) ? SIG : 0;
            uint16_t idx = h.pi;
            uint8_t op;
            if (used + 2 > h.sq_bbs) break;
            if (kind == 0) {
                post_put(&h, f, A(h.rmem + roff), RKEY, A(h.lmem + loff), LKEY, n);
                memcpy(rshadow + roff, lshadow + loff, n);
                op = GSHMEMI_MLX5_OPCODE_RDMA_WRITE;
            } else if (kind == 1) {
                uint8_t src[GSHMEMI_MLX5_INLINE_MAX];
                fill(src, n);
                post_inline(&h, f, A(h.rmem + roff), RKEY, src, n);
                memcpy(rshadow + roff, src, n);
                op = GSHMEMI_MLX5_OPCODE_RDMA_WRITE;
                inl_2bb += n > GSHMEMI_MLX5_INLINE_MAX_1BB;
            } else {
                post_get(&h, f, A(h.rmem + roff), RKEY, A(h.lmem + loff), LKEY, n);
                memcpy(lshadow + loff, rshadow + roff, n);
                op = GSHMEMI_MLX5_OPCODE_RDMA_READ;
                gets++;
            }
            used += (uint16_t)(h.pi - idx);
            if (f) want[nw].op = op, want[nw].idx = idx, want[nw].bytes = n, nw++;
            wqes++;
        }
        ring(&h);
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), (int)(wqes - wqes_before));
        assert_int_equal(h.qp.sq_ci & 0xffff, h.pi); /* everything posted was consumed */
        for (unsigned i = 0; i < nw; i++) expect_ok(&h, want[i].op, want[i].idx, want[i].bytes);
        expect_no_cqe(&h);
        bbs_done += used;
        assert_memory_equal(h.rmem, rshadow, RMEM);
        assert_memory_equal(h.lmem, lshadow, LMEM);
    }
    assert_int_equal(h.qp.wqes, wqes);
    assert_int_equal(h.qp.state, GSHMEMI_NIC_EMUL_QP_RTS);
    assert_true(h.ci > 8 * 1000); /* many passes over the CQ */
    assert_true(inl_2bb > 100 && gets > 100);
    h_teardown(&h);
}

/* ---- atomics: old value back, new value at the target, neighbours untouched ------------------ */
typedef struct {
    const char *name;
    unsigned size;
    uint64_t init, want_new;
    uint8_t opcode;
    int kind; /* 0 fetch_add, 1 compare_swap, 2+ bitwise op */
    uint64_t a, b;
} amo_case_t;

static void test_atomics(void **state)
{
    (void)state;
    static const amo_case_t cases[] = {
        {"fadd8", 8, 0x00000000fffffffeull, 0x0000000100000003ull, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, 0, 5, 0},
        {"fadd8 wrap", 8, 0xffffffffffffffffull, 1, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, 0, 2, 0},
        {"fadd4", 4, 0xfffffffe, 3, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA, 0, 5, 0},
        {"cswap8 hit", 8, 0x1122334455667788ull, 0x99, GSHMEMI_MLX5_OPCODE_ATOMIC_CS, 1, 0x1122334455667788ull, 0x99},
        {"cswap8 miss", 8, 0x1122334455667788ull, 0x1122334455667788ull, GSHMEMI_MLX5_OPCODE_ATOMIC_CS, 1, 0x1, 0x99},
        {"cswap4 hit", 4, 0xdeadbeef, 0x12345678, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, 1, 0xdeadbeef, 0x12345678},
        {"cswap4 miss", 4, 0xdeadbeef, 0xdeadbeef, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, 1, 0xdeadbeee, 0x12345678},
        {"and8", 8, 0xff00ff00ff00ff00ull, 0xf000f000f000f000ull, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS,
         2 + GSHMEMI_MLX5_BIT_AND, 0xf0f0f0f0f0f0f0f0ull, 0},
        {"or8", 8, 0xff00ff00ff00ff00ull, 0xfff0fff0fff0fff0ull, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS,
         2 + GSHMEMI_MLX5_BIT_OR, 0xf0f0f0f0f0f0f0f0ull, 0},
        {"xor8", 8, 0xff00ff00ff00ff00ull, 0x0ff00ff00ff00ff0ull, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA,
         2 + GSHMEMI_MLX5_BIT_XOR, 0xf0f0f0f0f0f0f0f0ull, 0},
        {"swap8", 8, 0xff00ff00ff00ff00ull, 0x0123456789abcdefull, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS,
         2 + GSHMEMI_MLX5_BIT_SWAP, 0x0123456789abcdefull, 0},
        {"and4", 4, 0xff00ff00, 0xf000f000, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, 2 + GSHMEMI_MLX5_BIT_AND, 0xf0f0f0f0, 0},
        {"or4", 4, 0xff00ff00, 0xfff0fff0, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, 2 + GSHMEMI_MLX5_BIT_OR, 0xf0f0f0f0, 0},
        {"xor4", 4, 0xff00ff00, 0x0ff00ff0, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA, 2 + GSHMEMI_MLX5_BIT_XOR, 0xf0f0f0f0, 0},
        {"swap4", 4, 0xff00ff00, 0x89abcdef, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, 2 + GSHMEMI_MLX5_BIT_SWAP, 0x89abcdef, 0},
    };
    static harness_t h;
    h_setup(&h, 8, 4, NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const amo_case_t *c = &cases[i];
        uint8_t *t = h.rmem + 64, *r = h.lmem + 128;
        memset(h.rmem + 48, 0xa5, 48); /* the target and 16 guard bytes each side */
        memset(h.lmem + 112, 0x5a, 48);
        memcpy(t, &c->init, c->size); /* host order, as the emulator assumes */
        wqebuf_t w;
        unsigned ds;
        uint16_t idx = h.pi;
        if (c->kind == 0)
            ds = gshmemi_mlx5_wqe_fetch_add(w.b, idx, QPN, SIG, A(t), RKEY, A(r), LKEY, c->size, c->a);
        else if (c->kind == 1)
            ds = gshmemi_mlx5_wqe_compare_swap(w.b, idx, QPN, SIG, A(t), RKEY, A(r), LKEY, c->size, c->a, c->b);
        else
            ds = gshmemi_mlx5_wqe_bitwise(w.b, idx, QPN, SIG, A(t), RKEY, A(r), LKEY, c->size, c->kind - 2, c->a);
        assert_true(ds > 0);
        post(&h, w.b, ds);
        ring(&h);
        if (gshmemi_nic_emul_progress(&h.qp) != 1) {
            fprintf(stderr, "%s: not consumed\n", c->name);
            fail();
        }
        expect_ok(&h, c->opcode, idx, c->size);
        expect_no_cqe(&h);
        uint64_t got_new = 0, got_old = 0;
        memcpy(&got_new, t, c->size);
        memcpy(&got_old, r, c->size);
        if (got_new != c->want_new || got_old != c->init) {
            fprintf(stderr, "%s: target 0x%llx (expected 0x%llx), old value 0x%llx (expected 0x%llx)\n", c->name,
                    (unsigned long long)got_new, (unsigned long long)c->want_new, (unsigned long long)got_old,
                    (unsigned long long)c->init);
            fail();
        }
        for (unsigned b = 0; b < 16; b++) {
            assert_int_equal(h.rmem[48 + b], 0xa5);
            assert_int_equal(h.rmem[64 + c->size + b], 0xa5);
            assert_int_equal(h.lmem[112 + b], 0x5a);
            assert_int_equal(h.lmem[128 + c->size + b], 0x5a);
        }
    }
    h_teardown(&h);
}

/* ---- well-formed edge cases ----------------------------------------------------------------- */
static void test_edge_cases(void **state)
{
    (void)state;
    static harness_t h;
    static uint8_t rsnap[RMEM];
    h_setup(&h, 16, 16, NULL);
    memcpy(rsnap, h.rmem, RMEM);
    wqebuf_t w;

    /* mlx5 posts an RDMA of no bytes as ctrl + raddr (ds 2); the responder checks no rkey */
    uint16_t i0 = h.pi;
    gshmemi_mlx5_wqe_hdr_t *hd = (gshmemi_mlx5_wqe_hdr_t *)w.b;
    gshmemi_mlx5_set_ctrl(&hd->ctrl, h.pi, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, QPN, 2, SIG, 0);
    gshmemi_mlx5_set_raddr(&hd->raddr, 0xdead0000, 0xbad);
    post(&h, w.b, 2);
    uint16_t i1 = h.pi;
    gshmemi_mlx5_set_ctrl(&hd->ctrl, h.pi, GSHMEMI_MLX5_OPCODE_RDMA_READ, 0, QPN, 2, SIG, 0);
    post(&h, w.b, 2);
    /* an inline write of no bytes */
    uint16_t i2 = h.pi;
    post_inline(&h, SIG, 0xdead0000, 0xbad, "", 0);
    /* a signalled NOP */
    uint16_t i3 = h.pi;
    post_nop(&h, SIG);
    /* signature byte set, strongest fence, solicited: accepted */
    uint16_t i4 = h.pi;
    gshmemi_mlx5_wqe_put(w.b, h.pi, QPN, SIG | GSHMEMI_MLX5_WQE_CTRL_FENCE | GSHMEMI_MLX5_WQE_CTRL_SOLICITED, A(h.rmem),
                         RKEY, A(h.lmem), LKEY, 32);
    w.b[8] = 0xab;
    post(&h, w.b, 3);
    /* unsignalled: moves data, writes no CQE */
    post_put(&h, GSHMEMI_MLX5_WQE_CTRL_SMALL_FENCE, A(h.rmem + 100), RKEY, A(h.lmem + 100), LKEY, 50);
    /* a NOP that pads 2 BBs (ds 8) */
    uint16_t i6 = h.pi;
    gshmemi_mlx5_set_ctrl((gshmemi_mlx5_ctrl_seg_t *)w.b, h.pi, GSHMEMI_MLX5_OPCODE_NOP, 0, QPN, 8, SIG, 0);
    post(&h, w.b, 8);
    ring(&h);
    unsigned resolves = h.n_resolve;
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 7);
    assert_int_equal(h.n_resolve - resolves, 4); /* only the two puts' keys */
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, i0, 0);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_READ, i1, 0);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, i2, 0);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, i3, 0);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, i4, 32);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, i6, 0);
    expect_no_cqe(&h);
    assert_memory_equal(h.rmem, h.lmem, 32);
    assert_memory_equal(h.rmem + 100, h.lmem + 100, 50);
    assert_memory_equal(h.rmem + 32, rsnap + 32, 68);
    assert_memory_equal(h.rmem + 150, rsnap + 150, RMEM - 150);
    assert_int_equal(h.pi, h.qp.sq_ci & 0xffff);

    /* nothing new posted: nothing consumed */
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 0);
    h_teardown(&h);
}

/* A gather write and a scatter read of 3 data segments (ds 5: 2 BBs) whose 2nd BB wraps to
 * slot 0 of the ring. */
static void test_sge_lists_wrap(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 8, 8, NULL);
    for (int i = 0; i < 7; i++) post_nop(&h, 0);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 7);
    expect_no_cqe(&h);

    wqebuf_t w;
    static const uint32_t len[3] = {10, 1, 300};
    static const uint32_t loff[3] = {4000, 17, 900};
    gshmemi_mlx5_wqe_hdr_t *hd = (gshmemi_mlx5_wqe_hdr_t *)w.b;
    gshmemi_mlx5_data_seg_t *d = (gshmemi_mlx5_data_seg_t *)(hd + 1);
    uint16_t iw = h.pi;
    assert_int_equal(gshmemi_mlx5_sq_slot(iw, h.sq_bbs), 7);
    gshmemi_mlx5_set_ctrl(&hd->ctrl, iw, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, QPN, 5, SIG, 0);
    gshmemi_mlx5_set_raddr(&hd->raddr, A(h.rmem + 2000), RKEY);
    for (int i = 0; i < 3; i++) gshmemi_mlx5_set_data(&d[i], len[i], LKEY, A(h.lmem + loff[i]));
    post(&h, w.b, 5);
    uint16_t ir = h.pi;
    gshmemi_mlx5_set_ctrl(&hd->ctrl, ir, GSHMEMI_MLX5_OPCODE_RDMA_READ, 0, QPN, 5, SIG, 0);
    gshmemi_mlx5_set_raddr(&hd->raddr, A(h.rmem + 5000), RKEY);
    static const uint32_t soff[3] = {6000, 7000, 7500};
    for (int i = 0; i < 3; i++) gshmemi_mlx5_set_data(&d[i], len[i], LKEY, A(h.lmem + soff[i]));
    post(&h, w.b, 5);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 2);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, iw, 311);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_READ, ir, 311);
    assert_memory_equal(h.rmem + 2000, h.lmem + 4000, 10);
    assert_memory_equal(h.rmem + 2010, h.lmem + 17, 1);
    assert_memory_equal(h.rmem + 2011, h.lmem + 900, 300);
    assert_memory_equal(h.lmem + 6000, h.rmem + 5000, 10);
    assert_memory_equal(h.lmem + 7000, h.rmem + 5010, 1);
    assert_memory_equal(h.lmem + 7500, h.rmem + 5011, 300);
    h_teardown(&h);
}

/* ---- malformed WQEs: the error CQE, then flushes, and nothing moved ------------------------- */
typedef struct err_case {
    const char *name;
    void (*tweak)(gshmemi_nic_emul_qp_cfg_t *);
    unsigned (*build)(harness_t *h, uint8_t *w); /* returns the ds to post by */
    uint8_t opcode, syndrome, vendor;
    const char *says; /* in the logged reason */
} err_case_t;

static void set_ds(uint8_t *w, unsigned ds)
{
    gshmemi_mlx5_ctrl_seg_t *c = (gshmemi_mlx5_ctrl_seg_t *)w;
    uint32_t v = gshmemi_mlx5_be32(c->qpn_ds);
    c->qpn_ds = gshmemi_mlx5_be32((v & ~0x3fu) | ds);
}

static void set_opcode(uint8_t *w, uint8_t opcode, uint8_t opmod)
{
    gshmemi_mlx5_ctrl_seg_t *c = (gshmemi_mlx5_ctrl_seg_t *)w;
    uint32_t v = gshmemi_mlx5_be32(c->opmod_idx_opcode);
    c->opmod_idx_opcode = gshmemi_mlx5_be32((uint32_t)opmod << 24 | (v & 0xffff00u) | opcode);
}

#define PUT(h, w, raddr, rkey, laddr, lkey, n) gshmemi_mlx5_wqe_put(w, (h)->pi, QPN, SIG, raddr, rkey, laddr, lkey, n)
#define GET(h, w, raddr, rkey, laddr, lkey, n) gshmemi_mlx5_wqe_get(w, (h)->pi, QPN, SIG, raddr, rkey, laddr, lkey, n)
#define FADD(h, w, raddr, size) gshmemi_mlx5_wqe_fetch_add(w, (h)->pi, QPN, SIG, raddr, RKEY, A((h)->lmem), LKEY, size, 1)

static unsigned b_put_ds4(harness_t *h, uint8_t *w)
{
    PUT(h, w, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
    set_ds(w, 4);
    return 4;
}
static unsigned b_fadd_ds3(harness_t *h, uint8_t *w)
{
    FADD(h, w, A(h->rmem), 8);
    set_ds(w, 3);
    return 3;
}
static unsigned b_mcs8_ds4(harness_t *h, uint8_t *w)
{
    gshmemi_mlx5_wqe_compare_swap(w, h->pi, QPN, SIG, A(h->rmem), RKEY, A(h->lmem), LKEY, 4, 0, 1);
    set_opcode(w, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(3)); /* 8 bytes need ds 5 */
    return 4;
}
static unsigned b_inline_ds4(harness_t *h, uint8_t *w)
{
    gshmemi_mlx5_wqe_put_inline(w, h->pi, QPN, SIG, A(h->rmem), RKEY, "0123456789", 10);
    set_ds(w, 4);
    return 4;
}
static unsigned b_ds0(harness_t *h, uint8_t *w)
{
    PUT(h, w, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
    set_ds(w, 0);
    return 0;
}
static unsigned b_bad_index(harness_t *h, uint8_t *w)
{
    return gshmemi_mlx5_wqe_put(w, (uint16_t)(h->pi + 1), QPN, SIG, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
}
static unsigned b_bad_qpn(harness_t *h, uint8_t *w)
{
    return gshmemi_mlx5_wqe_put(w, h->pi, QPN + 1, SIG, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
}
static unsigned b_unknown_opcode(harness_t *h, uint8_t *w)
{
    gshmemi_mlx5_wqe_nop(w, h->pi, QPN, SIG);
    set_opcode(w, 0x1f, 0);
    return 1;
}
static unsigned b_send(harness_t *h, uint8_t *w)
{
    PUT(h, w, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
    set_opcode(w, GSHMEMI_MLX5_OPCODE_SEND, 0);
    return 3;
}
static unsigned b_write_opmod(harness_t *h, uint8_t *w)
{
    PUT(h, w, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
    set_opcode(w, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 1);
    return 3;
}
static unsigned b_masked_16B(harness_t *h, uint8_t *w)
{
    unsigned ds = gshmemi_mlx5_wqe_bitwise(w, h->pi, QPN, SIG, A(h->rmem), RKEY, A(h->lmem), LKEY, 4, GSHMEMI_MLX5_BIT_OR, 1);
    set_opcode(w, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(4));
    return ds;
}
static unsigned b_fence5(harness_t *h, uint8_t *w)
{
    return gshmemi_mlx5_wqe_put(w, h->pi, QPN, SIG | 5 << 5, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
}
static unsigned b_bad_lkey(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->rmem), RKEY, A(h->lmem), 0x777, 8); }
static unsigned b_lrange(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->rmem), RKEY, A(h->lmem + LMEM - 4), LKEY, 8); }
static unsigned b_laccess(harness_t *h, uint8_t *w) { return GET(h, w, A(h->rmem), RKEY, A(h->lro), LKEY_RO, 8); }
static unsigned b_bad_rkey(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->rmem), 0x999, A(h->lmem), LKEY, 8); }
static unsigned b_rkey_other_pe(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->pe0), RKEY_PE0, A(h->lmem), LKEY, 8); }
static unsigned b_rrange(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->rmem + RMEM - 7), RKEY, A(h->lmem), LKEY, 8); }
static unsigned b_rrange_below(harness_t *h, uint8_t *w) { return GET(h, w, A(h->rmem) - 1, RKEY, A(h->lmem), LKEY, 8); }
static unsigned b_raccess(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->rro), RKEY_RO, A(h->lmem), LKEY, 8); }
static unsigned b_ratomic_ro(harness_t *h, uint8_t *w)
{
    return gshmemi_mlx5_wqe_fetch_add(w, h->pi, QPN, SIG, A(h->rro), RKEY_RO, A(h->lmem), LKEY, 8, 1);
}
static unsigned b_misaligned(harness_t *h, uint8_t *w) { return FADD(h, w, A(h->rmem + 4), 8); }
static unsigned b_misaligned4(harness_t *h, uint8_t *w) { return FADD(h, w, A(h->rmem + 2), 4); }
static unsigned b_atomic_len(harness_t *h, uint8_t *w)
{
    FADD(h, w, A(h->rmem), 8);
    ((gshmemi_mlx5_data_seg_t *)(w + 48))->byte_count = gshmemi_mlx5_be32(4);
    return 4;
}
static unsigned b_zero_bc(harness_t *h, uint8_t *w) { return PUT(h, w, A(h->rmem), RKEY, A(h->lmem), LKEY, 0); }
static unsigned b_msg_len(harness_t *h, uint8_t *w)
{
    gshmemi_mlx5_wqe_hdr_t *hd = (gshmemi_mlx5_wqe_hdr_t *)w;
    gshmemi_mlx5_set_ctrl(&hd->ctrl, h->pi, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, QPN, 4, SIG, 0);
    gshmemi_mlx5_set_raddr(&hd->raddr, A(h->rmem), RKEY);
    gshmemi_mlx5_set_data((gshmemi_mlx5_data_seg_t *)(hd + 1), 0x40000000, LKEY, A(h->lmem));
    gshmemi_mlx5_set_data((gshmemi_mlx5_data_seg_t *)(hd + 1) + 1, 0x40000001, LKEY, A(h->lmem));
    return 4;
}
static unsigned b_inline_in_read(harness_t *h, uint8_t *w)
{
    GET(h, w, A(h->rmem), RKEY, A(h->lmem), LKEY, 8);
    ((gshmemi_mlx5_data_seg_t *)(w + 32))->byte_count = gshmemi_mlx5_be32(GSHMEMI_MLX5_INLINE_SEG | 8);
    return 3;
}
static void max_inline_32(gshmemi_nic_emul_qp_cfg_t *c) { c->max_inline = 32; }
static unsigned b_inline_long(harness_t *h, uint8_t *w)
{
    static const char s[40] = "forty bytes of inline data, 8 too many.";
    return gshmemi_mlx5_wqe_put_inline(w, h->pi, QPN, SIG, A(h->rmem), RKEY, s, 40);
}

#define W GSHMEMI_MLX5_OPCODE_RDMA_WRITE
#define R GSHMEMI_MLX5_OPCODE_RDMA_READ
#define QPOP GSHMEMI_MLX5_SYNDROME_LOCAL_QP_OP_ERR
#define LPROT GSHMEMI_MLX5_SYNDROME_LOCAL_PROT_ERR
#define LLEN GSHMEMI_MLX5_SYNDROME_LOCAL_LENGTH_ERR
#define RACC GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR
static const err_case_t err_cases[] = {
    /* a WRITE's ds sets the length of its gather list: the 4th unit (zeros) is a segment of 2^31 */
    {"put with ds 4", NULL, b_put_ds4, W, LLEN, GSHMEMI_NIC_EMUL_MSG_LEN, "2 data segments of 2147483656 bytes"},
    {"fetch-add with ds 3", NULL, b_fadd_ds3, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, QPOP, GSHMEMI_NIC_EMUL_BAD_DS, "ds 3"},
    {"8-byte masked CS with ds 4", NULL, b_mcs8_ds4, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, QPOP, GSHMEMI_NIC_EMUL_BAD_DS,
     "needs 5"},
    {"inline of 10 bytes with ds 4", NULL, b_inline_ds4, W, QPOP, GSHMEMI_NIC_EMUL_BAD_DS, "10 bytes needs 3"},
    {"ds 0", NULL, b_ds0, W, QPOP, GSHMEMI_NIC_EMUL_BAD_DS, "ds 0"},
    {"wrong index", NULL, b_bad_index, W, QPOP, GSHMEMI_NIC_EMUL_BAD_INDEX, "the WQE says index"},
    {"wrong qpn", NULL, b_bad_qpn, W, QPOP, GSHMEMI_NIC_EMUL_BAD_QPN, "qpn 0x1235"},
    {"unknown opcode", NULL, b_unknown_opcode, 0x1f, QPOP, GSHMEMI_NIC_EMUL_BAD_OPCODE, "unknown opcode"},
    {"SEND", NULL, b_send, GSHMEMI_MLX5_OPCODE_SEND, QPOP, GSHMEMI_NIC_EMUL_BAD_OPCODE, "not executed"},
    {"write with opmod 1", NULL, b_write_opmod, W, QPOP, GSHMEMI_NIC_EMUL_BAD_OPMOD, "opmod 0x01"},
    {"16-byte masked atomic", NULL, b_masked_16B, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, QPOP, GSHMEMI_NIC_EMUL_BAD_OPMOD,
     "opmod 0x0a"},
    {"fence mode 5", NULL, b_fence5, W, QPOP, GSHMEMI_NIC_EMUL_BAD_FENCE, "fence mode 5"},
    {"unknown lkey", NULL, b_bad_lkey, W, LPROT, GSHMEMI_NIC_EMUL_LKEY, "lkey 0x777"},
    {"past the lkey's region", NULL, b_lrange, W, LPROT, GSHMEMI_NIC_EMUL_LRANGE, "outside lkey 0x100"},
    {"read into a read-only lkey", NULL, b_laccess, R, LPROT, GSHMEMI_NIC_EMUL_LACCESS, "local writes"},
    {"unknown rkey", NULL, b_bad_rkey, W, RACC, GSHMEMI_NIC_EMUL_RKEY, "rkey 0x999 is not registered at PE 1"},
    {"another PE's rkey", NULL, b_rkey_other_pe, W, RACC, GSHMEMI_NIC_EMUL_RKEY, "rkey 0x300"},
    {"past the rkey's region", NULL, b_rrange, W, RACC, GSHMEMI_NIC_EMUL_RRANGE, "outside rkey 0x200"},
    {"below the rkey's region", NULL, b_rrange_below, R, RACC, GSHMEMI_NIC_EMUL_RRANGE, "outside rkey 0x200"},
    {"write to a read-only rkey", NULL, b_raccess, W, RACC, GSHMEMI_NIC_EMUL_RACCESS, "remote writes"},
    {"atomic on a read-only rkey", NULL, b_ratomic_ro, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, RACC, GSHMEMI_NIC_EMUL_RACCESS,
     "remote atomics"},
    {"misaligned 8-byte atomic", NULL, b_misaligned, GSHMEMI_MLX5_OPCODE_ATOMIC_FA,
     GSHMEMI_MLX5_SYNDROME_REMOTE_INVAL_REQ_ERR, GSHMEMI_NIC_EMUL_ATOMIC_ALIGN, "8-byte aligned"},
    {"misaligned 4-byte atomic", NULL, b_misaligned4, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA,
     GSHMEMI_MLX5_SYNDROME_REMOTE_INVAL_REQ_ERR, GSHMEMI_NIC_EMUL_ATOMIC_ALIGN, "4-byte aligned"},
    {"atomic result of 4 bytes for 8", NULL, b_atomic_len, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, LLEN,
     GSHMEMI_NIC_EMUL_ATOMIC_LEN, "4 bytes, the operand 8"},
    {"data segment of byte count 0 (2^31)", NULL, b_zero_bc, W, LPROT, GSHMEMI_NIC_EMUL_LRANGE, "+2147483648"},
    {"gather longer than 2^31", NULL, b_msg_len, W, LLEN, GSHMEMI_NIC_EMUL_MSG_LEN, "2147483649 bytes"},
    {"inline segment in a read", NULL, b_inline_in_read, R, QPOP, GSHMEMI_NIC_EMUL_BAD_SEG, "inline segment"},
    {"inline beyond max_inline", max_inline_32, b_inline_long, W, LLEN, GSHMEMI_NIC_EMUL_INLINE_LEN, "at most 32"},
};

static void test_errors(void **state)
{
    (void)state;
    static harness_t h;
    static uint8_t rsnap[RMEM], lsnap[LMEM];
    for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
        const err_case_t *c = &err_cases[i];
        fprintf(stderr, "case: %s\n", c->name);
        h_setup(&h, 16, 16, c->tweak);
        /* one good WQE first, so that the failing one is not at index 0 */
        post_put(&h, SIG, A(h.rmem + 4096), RKEY, A(h.lmem + 4096), LKEY, 64);
        ring(&h);
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1);
        expect_ok(&h, W, 0, 64);
        memcpy(rsnap, h.rmem, RMEM);
        memcpy(lsnap, h.lmem, LMEM);

        wqebuf_t w;
        memset(w.b, 0, sizeof(w.b));
        uint16_t ibad = h.pi;
        post(&h, w.b, c->build(&h, w.b));
        uint16_t i2 = h.pi;
        post_put(&h, SIG, A(h.rmem + 200), RKEY, A(h.lmem + 300), LKEY, 16);
        uint16_t i3 = h.pi;
        post_get(&h, 0, A(h.rmem + 400), RKEY, A(h.lmem + 500), LKEY, 16); /* unsignalled: flushed all the same */
        ring(&h);
        capture_begin();
        int got = gshmemi_nic_emul_progress(&h.qp);
        const char *log = capture_end();
        assert_int_equal(got, 3);
        expect_err(&h, c->opcode, ibad, c->syndrome, c->vendor);
        expect_flush(&h, W, i2);
        expect_flush(&h, R, i3);
        expect_no_cqe(&h);
        assert_int_equal(h.qp.state, GSHMEMI_NIC_EMUL_QP_ERR);
        assert_int_equal(h.qp.err.syndrome, c->syndrome);
        assert_int_equal(h.qp.err.wqe_counter, ibad);
        if (!strstr(h.qp.reason, c->says) || !strstr(log, c->says) || !strstr(log, "QP 0x1234 to PE 1: WQE 2")) {
            fprintf(stderr, "reason \"%s\" / log \"%s\" do not say \"%s\"\n", h.qp.reason, log, c->says);
            fail();
        }
        assert_memory_equal(h.rmem, rsnap, RMEM); /* nothing moved, by the bad WQE or the flushed ones */
        assert_memory_equal(h.lmem, lsnap, LMEM);
        /* later WQEs keep being flushed */
        uint16_t i4 = h.pi;
        post_nop(&h, 0);
        ring(&h);
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1);
        expect_flush(&h, GSHMEMI_MLX5_OPCODE_NOP, i4);
        expect_no_cqe(&h);
        h_teardown(&h);
    }
}

/* The doorbell record stops inside a 2-BB WQE; then one that claims more than the ring holds. */
static void test_doorbell_errors(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 32, NULL);
    static const uint8_t data[80] = {1, 2, 3};
    post_inline(&h, SIG, A(h.rmem), RKEY, data, 80); /* 2 BBs */
    h.sq_dbrec[GSHMEMI_MLX5_DBR_SND] = gshmemi_mlx5_sq_dbrec(1);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1);
    expect_err(&h, W, 0, QPOP, GSHMEMI_NIC_EMUL_PAST_DBREC);
    expect_no_cqe(&h);
    assert_non_null(strstr(h.qp.reason, "the doorbell record covers 1"));
    h_teardown(&h);

    h_setup(&h, 16, 32, NULL);
    for (int i = 0; i < 17; i++) post_nop(&h, SIG); /* the 17th overwrites the 1st */
    ring(&h);
    reset_counts(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 17);
    assert_int_equal(h.n_sq_reads, 1); /* the ring once, not past it */
    assert_int_equal(h.sq_read_bbs[0], 16);
    expect_err(&h, GSHMEMI_MLX5_OPCODE_NOP, 0, QPOP, GSHMEMI_NIC_EMUL_SQ_OVERFLOW);
    for (int i = 1; i < 17; i++) expect_flush(&h, GSHMEMI_MLX5_OPCODE_NOP, (uint16_t)i);
    expect_no_cqe(&h);
    assert_non_null(strstr(h.qp.reason, "17 BBs ahead, the SQ holds 16"));
    h_teardown(&h);
}

/* ---- null mode ------------------------------------------------------------------------------ */
static void null_data(gshmemi_nic_emul_qp_cfg_t *c) { c->null_data = 1; }

/* null_data (GSHMEM_IBGDA_NIC=null): puts and gets from data segments complete and move nothing,
 * while an inline write and an atomic still land, so signals and barriers keep working. */
static void test_null_data(void **state)
{
    (void)state;
    static harness_t h;
    static uint8_t rsnap[RMEM], lsnap[LMEM];
    h_setup(&h, 16, 16, null_data);
    memcpy(rsnap, h.rmem, RMEM);
    memcpy(lsnap, h.lmem, LMEM);
    wqebuf_t w;
    post_put(&h, SIG, A(h.rmem), RKEY, A(h.lmem), LKEY, 100);
    post_get(&h, SIG, A(h.rmem + 300), RKEY, A(h.lmem + 500), LKEY, 77);
    post_inline(&h, SIG, A(h.rmem + 200), RKEY, "abcdefgh", 8);
    uint16_t ia = h.pi;
    post(&h, w.b, gshmemi_mlx5_wqe_fetch_add(w.b, h.pi, QPN, SIG, A(h.rmem + 8), RKEY, A(h.lmem + 8), LKEY, 8, 5));
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 4);
    expect_ok(&h, W, 0, 100);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_READ, 1, 77);
    expect_ok(&h, W, 2, 8);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, ia, 8);
    expect_no_cqe(&h);
    assert_int_equal(h.n_copy, 0);                                /* no bulk bytes moved */
    assert_memory_equal(h.rmem, rsnap, 8);                        /* the put's target untouched */
    assert_memory_equal(h.lmem + 500, lsnap + 500, 77);           /* the get's landing untouched */
    assert_memory_equal(h.rmem + 200, "abcdefgh", 8);             /* the inline write landed */
    uint64_t v;
    memcpy(&v, h.rmem + 8, 8);
    uint64_t was;
    memcpy(&was, rsnap + 8, 8);
    assert_true(v == was + 5);                                     /* the atomic ran */
    /* keys are still checked */
    post_put(&h, SIG, A(h.rmem), 0x7777u, A(h.lmem), LKEY, 8); /* a key no region has */
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1);
    expect_err(&h, W, (uint16_t)(h.pi - 1), GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR, GSHMEMI_NIC_EMUL_RKEY);
    h_teardown(&h);
}

static void null_mode(gshmemi_nic_emul_qp_cfg_t *c) { c->null_mode = 1; }

static void test_null_mode(void **state)
{
    (void)state;
    static harness_t h;
    static uint8_t rsnap[RMEM], lsnap[LMEM];
    h_setup(&h, 16, 16, null_mode);
    memcpy(rsnap, h.rmem, RMEM);
    memcpy(lsnap, h.lmem, LMEM);
    wqebuf_t w;
    post_put(&h, SIG, A(h.rmem), RKEY, A(h.lmem), LKEY, 100);
    post_inline(&h, SIG, A(h.rmem + 200), RKEY, "abcdefgh", 8);
    post_get(&h, 0, A(h.rmem), RKEY, A(h.lmem + 500), LKEY, 77);
    uint16_t ia = h.pi;
    post(&h, w.b, gshmemi_mlx5_wqe_fetch_add(w.b, h.pi, QPN, SIG, A(h.rmem + 8), RKEY, A(h.lmem + 8), LKEY, 8, 1));
    uint16_t ic = h.pi;
    post(&h, w.b, gshmemi_mlx5_wqe_compare_swap(w.b, h.pi, QPN, SIG, A(h.rmem + 16), RKEY, A(h.lmem + 16), LKEY, 4, 0, 1));
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 5);
    expect_ok(&h, W, 0, 100);
    expect_ok(&h, W, 1, 8);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, ia, 8);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, ic, 4);
    expect_no_cqe(&h);
    assert_memory_equal(h.rmem, rsnap, RMEM);
    assert_memory_equal(h.lmem, lsnap, LMEM);
    assert_int_equal(h.n_resolve + h.n_copy + h.n_store + h.n_atomic, 0);
    /* still strict: a wrong qpn fails */
    post(&h, w.b, gshmemi_mlx5_wqe_nop(w.b, h.pi, QPN ^ 1, SIG));
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1);
    expect_err(&h, GSHMEMI_MLX5_OPCODE_NOP, (uint16_t)(h.pi - 1), QPOP, GSHMEMI_NIC_EMUL_BAD_QPN);
    h_teardown(&h);
}

/* ---- injection ------------------------------------------------------------------------------ */
static void test_inject_bad_rkey(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 16, NULL);
    h.qp.inject.bad_rkey_at = 3;
    static uint8_t rsnap[RMEM];
    memcpy(rsnap, h.rmem, RMEM);
    for (int i = 0; i < 5; i++) post_put(&h, SIG, A(h.rmem + 64 * i), RKEY, A(h.lmem + 1000 + 64 * i), LKEY, 64);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 5);
    expect_ok(&h, W, 0, 64);
    expect_ok(&h, W, 1, 64);
    expect_err(&h, W, 2, RACC, GSHMEMI_NIC_EMUL_INJECT_RKEY);
    expect_flush(&h, W, 3);
    expect_flush(&h, W, 4);
    assert_memory_equal(h.rmem, h.lmem + 1000, 128);
    assert_memory_equal(h.rmem + 128, rsnap + 128, RMEM - 128);
    assert_non_null(strstr(h.qp.reason, "bad rkey injected"));
    h_teardown(&h);
}

static void test_inject_bad_range(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 16, NULL);
    h.qp.inject.bad_range_at = 2;
    uint64_t v = 41, r = 0;
    memcpy(h.rmem + 8, &v, 8);
    wqebuf_t w;
    post_nop(&h, SIG); /* WQE 1 */
    post(&h, w.b, gshmemi_mlx5_wqe_fetch_add(w.b, h.pi, QPN, SIG, A(h.rmem + 8), RKEY, A(h.lmem), LKEY, 8, 1));
    ring(&h);
    memset(h.lmem, 0, 8);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 2);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, 0, 0);
    expect_err(&h, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, 1, RACC, GSHMEMI_NIC_EMUL_INJECT_RANGE);
    memcpy(&v, h.rmem + 8, 8);
    memcpy(&r, h.lmem, 8);
    assert_true(v == 41 && r == 0);
    assert_non_null(strstr(h.qp.reason, "out-of-range address injected"));
    h_teardown(&h);
}

static void test_inject_delay(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 16, NULL);
    h.qp.inject.delay_at = 2;
    h.qp.inject.delay_calls = 3;
    for (int i = 0; i < 3; i++) post_put(&h, SIG, A(h.rmem + 64 * i), RKEY, A(h.lmem + 1000 + 64 * i), LKEY, 64);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1); /* WQE 1 runs, WQE 2 is held from here */
    expect_ok(&h, W, 0, 64);
    for (int call = 0; call < 2; call++) {
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 0);
        expect_no_cqe(&h);
        assert_memory_not_equal(h.rmem + 64, h.lmem + 1064, 64);
        assert_int_equal(h.qp.hold_left, 1 - call);
    }
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 2); /* the 4th call runs it and WQE 3 */
    expect_ok(&h, W, 1, 64);
    expect_ok(&h, W, 2, 64);
    assert_memory_equal(h.rmem, h.lmem + 1000, 192);

    /* every WQE held one call */
    h.qp.inject.delay_at = 0;
    h.qp.inject.delay_calls = 1;
    for (int i = 0; i < 3; i++) post_nop(&h, SIG);
    ring(&h);
    static const int want[] = {0, 1, 1, 1, 0};
    for (int call = 0; call < 5; call++) assert_int_equal(gshmemi_nic_emul_progress(&h.qp), want[call]);
    for (int i = 0; i < 3; i++) expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, (uint16_t)(3 + i), 0);
    expect_no_cqe(&h);
    h_teardown(&h);
}

/* ---- the CQ: overrun, overrun ignored, collapsed -------------------------------------------- */
static void test_cq_overrun(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 4, NULL);
    for (int i = 0; i < 5; i++) post_nop(&h, SIG);
    ring(&h);
    capture_begin();
    int rc = gshmemi_nic_emul_progress(&h.qp);
    const char *log = capture_end();
    assert_int_equal(rc, GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "CQ overrun: CQE 4 would overwrite one not yet consumed (consumer index 0"));
    assert_int_equal(h.qp.state, GSHMEMI_NIC_EMUL_QP_FATAL);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), GSHMEMI_ERR_INVALID); /* and stays failed */
    for (int i = 0; i < 4; i++) expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, (uint16_t)i, 0);
    expect_no_cqe(&h);
    h_teardown(&h);

    /* consumed in time, the same CQ takes them all */
    h_setup(&h, 16, 4, NULL);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 4; i++) post_nop(&h, SIG);
        ring(&h);
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 4);
        for (int i = 0; i < 4; i++) expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, (uint16_t)(round * 4 + i), 0);
    }
    assert_int_equal(h.n_ci_reads, 4); /* read only when the CQ looked full: once a round after the first */
    h_teardown(&h);
}

static void overrun_ignore(gshmemi_nic_emul_qp_cfg_t *c) { c->cq_overrun_ignore = 1; }
static void collapsed(gshmemi_nic_emul_qp_cfg_t *c) { c->cq_collapsed = 1; }

static void test_cq_modes(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 4, overrun_ignore);
    for (int i = 0; i < 5; i++) post_nop(&h, SIG);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 5);
    /* the 5th overwrote entry 0 on the second pass: owner 1, index 4 */
    assert_int_equal(h.cq[0].ok.op_own, GSHMEMI_MLX5_CQE_REQ << 4 | 1);
    assert_int_equal(gshmemi_mlx5_be16(h.cq[0].ok.wqe_counter), 4);
    h_teardown(&h);

    h_setup(&h, 16, 4, collapsed);
    for (int i = 0; i < 10; i++) {
        post_nop(&h, SIG);
        ring(&h);
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 1);
        assert_int_equal(gshmemi_mlx5_be16(h.cq[0].ok.wqe_counter), i);
        assert_int_equal(h.cq[0].ok.op_own >> 4, GSHMEMI_MLX5_CQE_REQ);
    }
    for (int i = 1; i < 4; i++) assert_int_equal(h.cq[i].ok.op_own >> 4, GSHMEMI_MLX5_CQE_INVALID);
    h_teardown(&h);
}

/* ---- batching: the SQ in one or two reads, a collapsed CQ written once a call ---------------- */
/* 100 one-BB puts posted at once: one progress reads the doorbell record and the 100 BBs in one
 * read, executes them all and, on a CQ that is not collapsed, writes each CQE. The next 100 wrap
 * the ring: two SQ reads, the second from slot 0. */
static void test_batched_reads(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 128, 128, NULL);
    for (int round = 0; round < 2; round++) {
        const uint16_t first = h.pi;
        for (int i = 0; i < 100; i++)
            post_put(&h, SIG, A(h.rmem + 32 * i + round), RKEY, A(h.lmem + 4000 + 32 * i + round), LKEY, 24);
        ring(&h);
        reset_counts(&h);
        assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 100);
        assert_int_equal(h.n_sq_reads, round ? 2 : 1);
        assert_int_equal(h.n_reads, 1 + h.n_sq_reads + h.n_ci_reads); /* the doorbell record once */
        assert_true(h.n_reads <= 3u + (unsigned)round); /* round 1: the consumer index, once, where the CQ looked full */
        assert_int_equal(h.sq_read_slot[0], round ? 100 : 0);
        assert_int_equal(h.sq_read_bbs[0], round ? 28 : 100);
        if (round) {
            assert_int_equal(h.sq_read_slot[1], 0);
            assert_int_equal(h.sq_read_bbs[1], 72);
        }
        assert_int_equal(h.n_cqe, 100); /* not collapsed: one write per CQE */
        for (int i = 0; i < 100; i++) expect_ok(&h, W, (uint16_t)(first + i), 24);
        expect_no_cqe(&h);
        for (int i = 0; i < 100; i++) assert_memory_equal(h.rmem + 32 * i + round, h.lmem + 4000 + 32 * i + round, 24);
    }
    /* nothing posted: the doorbell record only */
    reset_counts(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 0);
    assert_int_equal(h.n_reads, 1);
    h_teardown(&h);
}

/* One batch across the ring's end, with 2-BB WQEs at slots 15 -> 0 and 2 -> 3, after a first pass
 * left NOPs in the low slots (a stale copy of them would fail the index check). */
static void test_batch_wrap(void **state)
{
    (void)state;
    static harness_t h;
    static uint8_t inl1[60], inl2[70];
    h_setup(&h, 16, 32, NULL); /* 32 CQEs: no consumer-index read in the count below */
    for (int i = 0; i < 13; i++) post_nop(&h, SIG);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 13);
    for (int i = 0; i < 13; i++) expect_ok(&h, GSHMEMI_MLX5_OPCODE_NOP, (uint16_t)i, 0);
    fill(inl1, sizeof(inl1));
    fill(inl2, sizeof(inl2));
    post_put(&h, SIG, A(h.rmem), RKEY, A(h.lmem + 100), LKEY, 40);  /* 13 */
    post_put(&h, 0, A(h.rmem + 40), RKEY, A(h.lmem + 200), LKEY, 9); /* 14 */
    post_inline(&h, SIG, A(h.rmem + 100), RKEY, inl1, 60);           /* 15, 16: slots 15 and 0 */
    post_get(&h, SIG, A(h.rmem + 300), RKEY, A(h.lmem + 3000), LKEY, 33); /* 17: slot 1 */
    post_inline(&h, SIG, A(h.rmem + 400), RKEY, inl2, 70);           /* 18, 19: slots 2 and 3 */
    post_put(&h, SIG, A(h.rmem + 500), RKEY, A(h.lmem + 500), LKEY, 300); /* 20: slot 4 */
    assert_int_equal(h.pi, 21);
    ring(&h);
    reset_counts(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 6);
    assert_int_equal(h.n_reads, 3);
    assert_int_equal(h.n_sq_reads, 2);
    assert_int_equal(h.sq_read_slot[0], 13);
    assert_int_equal(h.sq_read_bbs[0], 3);
    assert_int_equal(h.sq_read_slot[1], 0);
    assert_int_equal(h.sq_read_bbs[1], 5);
    expect_ok(&h, W, 13, 40);
    expect_ok(&h, W, 15, 60);
    expect_ok(&h, GSHMEMI_MLX5_OPCODE_RDMA_READ, 17, 33);
    expect_ok(&h, W, 18, 70);
    expect_ok(&h, W, 20, 300);
    expect_no_cqe(&h);
    assert_memory_equal(h.rmem, h.lmem + 100, 40);
    assert_memory_equal(h.rmem + 40, h.lmem + 200, 9);
    assert_memory_equal(h.rmem + 100, inl1, 60);
    assert_memory_equal(h.lmem + 3000, h.rmem + 300, 33);
    assert_memory_equal(h.rmem + 400, inl2, 70);
    assert_memory_equal(h.rmem + 500, h.lmem + 500, 300);
    assert_int_equal(h.qp.state, GSHMEMI_NIC_EMUL_QP_RTS);
    h_teardown(&h);
}

static void one_cqe(gshmemi_nic_emul_qp_cfg_t *c)
{
    c->cq_collapsed = 1;
    c->ncqe = 1;
}

/* The i-th CQE written: its opcode (REQ or REQ_ERR), WQE counter, owner bit, and for an error the
 * vendor syndrome. */
static void expect_written(const harness_t *h, unsigned i, uint8_t cqe_op, uint16_t idx, uint8_t vendor)
{
    const gshmemi_mlx5_cqe_t *c = &h->cqe_log[i];
    assert_true(i < 64 && i < h->n_cqe);
    assert_int_equal(c->ok.op_own >> 4, cqe_op);
    if (cqe_op == GSHMEMI_MLX5_CQE_REQ) {
        assert_int_equal(gshmemi_mlx5_be16(c->ok.wqe_counter), idx);
    } else {
        gshmemi_mlx5_err_info_t e = gshmemi_mlx5_err_decode(&c->err);
        assert_int_equal(e.wqe_counter, idx);
        assert_int_equal(e.vendor_err_synd, vendor);
    }
}

/* A collapsed CQ: the successes of one call give one write, the newest (whose owner bit is the
 * one its place in the CQ's order gives); an error gets the newest success before it, then its
 * own CQE and the flushes, each at once and never an older one after a newer. */
static void test_collapsed_coalesce(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 128, 1, one_cqe);
    for (int i = 0; i < 100; i++)
        post_put(&h, SIG, A(h.rmem + 16 * i), RKEY, A(h.lmem + 2000 + 16 * i), LKEY, 16);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 100);
    assert_int_equal(h.n_cqe, 1);
    expect_written(&h, 0, GSHMEMI_MLX5_CQE_REQ, 99, 0);
    assert_memory_equal(h.cq, &h.cqe_log[0], 64);
    assert_int_equal(h.cq[0].ok.op_own, GSHMEMI_MLX5_CQE_REQ << 4 | (99 & 1)); /* CQE 99 of a 1-entry CQ */
    assert_int_equal(gshmemi_mlx5_be32(h.cq[0].ok.byte_cnt), 16);
    assert_memory_equal(h.rmem, h.lmem + 2000, 1600);
    assert_int_equal(h.qp.cq_pi, 100);
    /* the newest WQE unsignalled: the newest signalled one shows */
    reset_counts(&h);
    for (int i = 0; i < 10; i++) post_nop(&h, i < 8 ? SIG : 0);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 10);
    assert_int_equal(h.n_cqe, 1);
    expect_written(&h, 0, GSHMEMI_MLX5_CQE_REQ, 107, 0);
    assert_int_equal(h.cq[0].ok.op_own, GSHMEMI_MLX5_CQE_REQ << 4 | (107 & 1));
    /* a delay splits the work: one write per call that completed something, none for a call
     * that only held */
    reset_counts(&h);
    h.qp.inject.delay_at = h.qp.wqes + 3;
    h.qp.inject.delay_calls = 1;
    for (int i = 0; i < 5; i++) post_nop(&h, SIG);
    ring(&h);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 2);
    assert_int_equal(h.n_cqe, 1);
    expect_written(&h, 0, GSHMEMI_MLX5_CQE_REQ, 111, 0);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 3);
    assert_int_equal(h.n_cqe, 2);
    expect_written(&h, 1, GSHMEMI_MLX5_CQE_REQ, 114, 0);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), 0);
    assert_int_equal(h.n_cqe, 2);
    h_teardown(&h);

    /* an error in the middle: success 3, then error 4, then flushes 5..9 */
    h_setup(&h, 16, 1, one_cqe);
    h.qp.inject.bad_rkey_at = 5;
    for (int i = 0; i < 10; i++) post_put(&h, SIG, A(h.rmem + 16 * i), RKEY, A(h.lmem + 16 * i), LKEY, 16);
    ring(&h);
    capture_begin();
    int got = gshmemi_nic_emul_progress(&h.qp);
    capture_end();
    assert_int_equal(got, 10);
    assert_int_equal(h.n_cqe, 7);
    expect_written(&h, 0, GSHMEMI_MLX5_CQE_REQ, 3, 0);
    expect_written(&h, 1, GSHMEMI_MLX5_CQE_REQ_ERR, 4, GSHMEMI_NIC_EMUL_INJECT_RKEY);
    for (unsigned i = 2; i < 7; i++) expect_written(&h, i, GSHMEMI_MLX5_CQE_REQ_ERR, (uint16_t)(i + 3), GSHMEMI_NIC_EMUL_FLUSH);
    assert_memory_equal(h.cq, &h.cqe_log[6], 64);
    assert_int_equal(h.qp.cq_pi, 10);
    h_teardown(&h);

    /* the error first (nothing before it to write), the WQE before it unsignalled */
    h_setup(&h, 16, 1, one_cqe);
    h.qp.inject.bad_rkey_at = 2;
    post_put(&h, 0, A(h.rmem), RKEY, A(h.lmem), LKEY, 16);
    post_put(&h, SIG, A(h.rmem + 16), RKEY, A(h.lmem + 16), LKEY, 16);
    post_nop(&h, SIG);
    ring(&h);
    capture_begin();
    got = gshmemi_nic_emul_progress(&h.qp);
    capture_end();
    assert_int_equal(got, 3);
    assert_int_equal(h.n_cqe, 2);
    expect_written(&h, 0, GSHMEMI_MLX5_CQE_REQ_ERR, 1, GSHMEMI_NIC_EMUL_INJECT_RKEY);
    expect_written(&h, 1, GSHMEMI_MLX5_CQE_REQ_ERR, 2, GSHMEMI_NIC_EMUL_FLUSH);
    h_teardown(&h);

    /* a callback fails after two successes: the newest of them is still written */
    h_setup(&h, 16, 1, one_cqe);
    h.fail_copy = 3;
    for (int i = 0; i < 4; i++) post_put(&h, SIG, A(h.rmem + 16 * i), RKEY, A(h.lmem + 16 * i), LKEY, 16);
    ring(&h);
    capture_begin();
    got = gshmemi_nic_emul_progress(&h.qp);
    const char *log = capture_end();
    assert_int_equal(got, GSHMEMI_ERR_CUDA);
    assert_non_null(strstr(log, "the copy callback failed"));
    assert_int_equal(h.n_cqe, 1);
    expect_written(&h, 0, GSHMEMI_MLX5_CQE_REQ, 1, 0);
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), GSHMEMI_ERR_CUDA);
    assert_int_equal(h.n_cqe, 1);
    h_teardown(&h);
}

/* ---- the engine's own failures -------------------------------------------------------------- */
static void test_callback_failure(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 4, NULL);
    h.fail_copy = 1;
    post_put(&h, SIG, A(h.rmem), RKEY, A(h.lmem), LKEY, 8);
    ring(&h);
    capture_begin();
    int rc = gshmemi_nic_emul_progress(&h.qp);
    const char *log = capture_end();
    assert_int_equal(rc, GSHMEMI_ERR_CUDA);
    assert_non_null(strstr(log, "the copy callback failed"));
    assert_int_equal(gshmemi_nic_emul_progress(&h.qp), GSHMEMI_ERR_CUDA);
    expect_no_cqe(&h);
    h_teardown(&h);
}

static void test_init_checks(void **state)
{
    (void)state;
    static harness_t h;
    h_setup(&h, 16, 4, NULL);
    gshmemi_nic_emul_qp_t qp;
    gshmemi_nic_emul_qp_cfg_t c = h.cfg;
    c.sq_bbs = 12;
    capture_begin();
    int rc = gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h);
    const char *log = capture_end();
    assert_int_equal(rc, GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "cfg.sq_bbs must be a power of two"));
    c = h.cfg, c.sq_bbs = 131072;
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h), GSHMEMI_ERR_INVALID);
    c = h.cfg, c.ncqe = 0;
    capture_begin();
    rc = gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h);
    log = capture_end();
    assert_int_equal(rc, GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "cfg.ncqe"));
    c = h.cfg, c.qpn = 0x1000000;
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h), GSHMEMI_ERR_INVALID);
    c = h.cfg, c.cq_dbrec = NULL;
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h), GSHMEMI_ERR_INVALID);
    c.cq_collapsed = 1; /* a collapsed CQ needs no consumer index */
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h), GSHMEMI_OK);
    assert_non_null(qp.sq_cache);
    gshmemi_nic_emul_qp_fini(&qp);
    assert_null(qp.sq_cache);
    gshmemi_nic_emul_qp_fini(&qp); /* twice, and on NULL: nothing */
    gshmemi_nic_emul_qp_fini(NULL);
    c = h.cfg, c.max_inline = 973;
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &c, &host_ops, &h), GSHMEMI_ERR_INVALID);
    gshmemi_nic_emul_ops_t o = host_ops;
    o.atomic = NULL;
    c = h.cfg;
    capture_begin();
    rc = gshmemi_nic_emul_qp_init(&qp, &c, &o, &h);
    log = capture_end();
    assert_int_equal(rc, GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "ops.resolve_local"));
    c.null_mode = 1; /* null mode needs no memory callbacks */
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &c, &o, &h), GSHMEMI_OK);
    gshmemi_nic_emul_qp_fini(&qp);
    assert_string_equal(gshmemi_nic_emul_reason_str(GSHMEMI_NIC_EMUL_FLUSH), "flushed: the QP is in the error state");
    assert_string_equal(gshmemi_nic_emul_reason_str(0x42), "unknown");
    h_teardown(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_amo_apply),       cmocka_unit_test(test_rma_wraps),
        cmocka_unit_test(test_atomics),         cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_sge_lists_wrap),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_doorbell_errors), cmocka_unit_test(test_null_mode), cmocka_unit_test(test_null_data),
        cmocka_unit_test(test_inject_bad_rkey), cmocka_unit_test(test_inject_bad_range),
        cmocka_unit_test(test_inject_delay),    cmocka_unit_test(test_cq_overrun),
        cmocka_unit_test(test_cq_modes),        cmocka_unit_test(test_callback_failure),
        cmocka_unit_test(test_batched_reads),   cmocka_unit_test(test_batch_wrap),
        cmocka_unit_test(test_collapsed_coalesce),
        cmocka_unit_test(test_init_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
