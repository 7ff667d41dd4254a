/* The IBGDA device path's counter arithmetic (device/ibgda_ring.h) and the emulated transport's
 * QP numbers, then the device path's protocol replayed on the host against the emulated NIC's
 * engine (nic_emul.c): reserve with back-pressure, WQE by the builders at the slot of its counter,
 * the send doorbell record, and CQ polling that widens each CQE's 16-bit counter and advances the
 * consumer-index record, as device/ibgda.cuh does, over several wraps of the 16-bit counter with
 * a CQ of as many entries as the SQ (the transport's sizing: it must never overrun). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "device/ibgda_ring.h"
#include "runtime/log.h"
#include "transports/ibgda/ibgda.h"
#include "transports/ibgda/nic_emul.h"

static void test_slot_needs(void **state)
{
    (void)state;
    assert_int_equal(gshmemi_ibgda_slot_needs(0, 1024), 0);
    assert_int_equal(gshmemi_ibgda_slot_needs(1023, 1024), 0);
    assert_int_equal(gshmemi_ibgda_slot_needs(1024, 1024), 1);
    assert_int_equal(gshmemi_ibgda_slot_needs(5 * 1024 + 7, 1024), 4 * 1024 + 8);
    assert_true(gshmemi_ibgda_slot_needs(0x10000ull * 3 + 5, 8) == 0x10000ull * 3 - 2);
}

/* A CQE widens to its WQE's counter plus its BBs from the count completed before it, whenever
 * the WQE lies in [done, done + 65536): across the 16-bit wrap, and far behind the reservations. */
static void test_cqe_done(void **state)
{
    (void)state;
    for (unsigned long long done = 0; done < 300000; done += 997) {
        for (unsigned long long ahead = 0; ahead < 65536; ahead += ahead < 8 ? 1 : 4099) {
            const unsigned long long k = done + ahead;
            assert_true(gshmemi_ibgda_cqe_done(done, (uint16_t)k, 1) == k + 1);
            assert_true(gshmemi_ibgda_cqe_done(done, (uint16_t)k, 2) == k + 2);
        }
    }
    /* at the wrap itself */
    assert_true(gshmemi_ibgda_cqe_done(65535, 65535, 1) == 65536);
    assert_true(gshmemi_ibgda_cqe_done(65535, 65535, 2) == 65537); /* a 2-BB WQE across the wrap */
    assert_true(gshmemi_ibgda_cqe_done(65536, 0, 1) == 65537);
    assert_true(gshmemi_ibgda_cqe_done(65530, 3, 1) == 65540);
    assert_true(gshmemi_ibgda_cqe_done(3 * 65536 + 10, 9, 1) == 4 * 65536 + 10); /* 65535 ahead */
}

static void test_qpn(void **state)
{
    (void)state;
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++) {
            const uint32_t q = gshmemi_ibgda_qpn(a, b);
            assert_true(q != 0 && q <= 0xffffffu);
            for (int c = 0; c < 64; c++)
                if (c != b) assert_true(gshmemi_ibgda_qpn(a, c) != q);
            if (a) assert_true(gshmemi_ibgda_qpn(a - 1, b) != q);
        }
}

/* ---- the protocol against the engine, in host memory ---- */
#define SQ_BBS 8u
#define NCQE SQ_BBS
#define WORDS 64
#define RKEY 0x48000001u

static struct {
    uint8_t sq[SQ_BBS * 64];
    gshmemi_mlx5_cqe_t cq[NCQE];
    uint32_t sq_dbrec[2], cq_dbrec[2];
    uint32_t target[WORDS + 16]; /* the peer's heap: WORDS words of 4-byte puts, then one 40-byte area */
    uint8_t bbs[SQ_BBS];
    unsigned long long resv, posted, done;
    uint32_t ci;
} h;

static int h_read(void *c, void *dst, const void *src, size_t n) { (void)c; memcpy(dst, src, n); return 0; }
static int h_write_cqe(void *c, void *at, const gshmemi_mlx5_cqe_t *cqe)
{
    (void)c;
    memcpy(at, cqe, 63);
    ((uint8_t *)at)[63] = cqe->bytes[63];
    return 0;
}
static int h_local(void *c, const gshmemi_nic_emul_qp_t *qp, uint32_t lkey, uint64_t addr, uint64_t len, int access, void **ptr)
{
    (void)c, (void)qp, (void)lkey, (void)addr, (void)len, (void)access, (void)ptr;
    return GSHMEMI_NIC_EMUL_KEY_UNKNOWN; /* only inline puts here */
}
static int h_remote(void *c, const gshmemi_nic_emul_qp_t *qp, uint32_t rkey, uint64_t raddr, uint64_t len, int access, void **ptr)
{
    (void)c, (void)qp, (void)access;
    if (rkey != RKEY) return GSHMEMI_NIC_EMUL_KEY_UNKNOWN;
    if (raddr + len > sizeof(h.target)) return GSHMEMI_NIC_EMUL_KEY_RANGE;
    *ptr = (uint8_t *)h.target + raddr;
    return 0;
}
static int h_copy(void *c, void *dst, const void *src, size_t n) { (void)c; memcpy(dst, src, n); return 0; }
static int h_atomic(void *c, void *t, const gshmemi_nic_emul_amo_t *a, uint64_t *old)
{
    (void)c, (void)t, (void)a, (void)old;
    return GSHMEMI_ERR_UNSUPPORTED;
}
static const gshmemi_nic_emul_ops_t h_ops = {h_read, h_write_cqe, h_local, h_remote, h_copy, h_copy, h_atomic};

/* device/ibgda.cuh's gshmemi_ibgda_poll, single-threaded */
static void poll_cq(void)
{
    for (;;) {
        const gshmemi_mlx5_cqe_t *e = &h.cq[gshmemi_mlx5_cq_slot(h.ci, NCQE)];
        if (!gshmemi_mlx5_cqe_is_new(e->ok.op_own, h.ci, NCQE)) break;
        assert_false(gshmemi_mlx5_cqe_is_error(e->ok.op_own));
        const uint16_t idx = gshmemi_mlx5_be16(e->ok.wqe_counter);
        assert_int_equal(idx, (uint16_t)h.done); /* every WQE signalled: the next CQE is the oldest WQE's */
        const unsigned long long upto = gshmemi_ibgda_cqe_done(h.done, idx, h.bbs[gshmemi_mlx5_sq_slot(idx, SQ_BBS)]);
        assert_true(upto > h.done && upto <= h.posted); /* in order, never past what was posted */
        h.done = upto;
        h.ci++;
    }
    h.cq_dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI] = gshmemi_mlx5_cq_dbrec(h.ci);
}

static void test_protocol(void **state)
{
    gshmemi_nic_emul_qp_t qp;
    gshmemi_nic_emul_qp_cfg_t cfg;
    const unsigned long long total = 3 * 65536 + 1234; /* WQEs; the 16-bit counter wraps three times */
    unsigned long long waits = 0, last_big = 0, bigs = 0, wrapped_big = 0;
    (void)state;
    memset(&h, 0, sizeof(h));
    for (unsigned i = 0; i < NCQE; i++) gshmemi_mlx5_cqe_init(&h.cq[i]);
    memset(&cfg, 0, sizeof(cfg));
    cfg.qpn = gshmemi_ibgda_qpn(0, 1);
    cfg.peer = 1;
    cfg.sq = h.sq;
    cfg.sq_bbs = SQ_BBS;
    cfg.sq_dbrec = &h.sq_dbrec[GSHMEMI_MLX5_DBR_SND];
    cfg.cq = h.cq;
    cfg.ncqe = NCQE;
    cfg.cq_dbrec = &h.cq_dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI];
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &cfg, &h_ops, NULL), 0);
    for (unsigned long long i = 0; i < total; i++) {
        /* every 5th WQE a 40-byte inline put: two BBs, the second of which may wrap to slot 0 */
        const int big = i % 5 == 3;
        const unsigned nbbs = big ? 2 : 1;
        const unsigned long long t = h.resv;
        h.resv += nbbs;
        /* back-pressure: the NIC runs and the CQ is polled until the slots are free */
        while (h.done < gshmemi_ibgda_slot_needs(t + nbbs - 1, SQ_BBS)) {
            waits++;
            assert_true(gshmemi_nic_emul_progress(&qp) >= 0);
            poll_cq();
        }
        uint32_t v[10];
        _Alignas(16) uint8_t wqe[128];
        for (int k = 0; k < 10; k++) v[k] = (uint32_t)i + (uint32_t)k;
        const uint32_t word = big ? WORDS : (uint32_t)(i % WORDS);
        const unsigned ds = gshmemi_mlx5_wqe_put_inline(wqe, (uint16_t)t, cfg.qpn, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, word * 4, RKEY, v,
                                                        big ? 40 : 4);
        assert_int_equal(gshmemi_mlx5_wqe_bbs(ds), nbbs);
        for (unsigned b = 0; b < nbbs; b++) memcpy(h.sq + gshmemi_mlx5_sq_slot((uint16_t)(t + b), SQ_BBS) * 64, wqe + b * 64, 64);
        if (big) {
            last_big = i;
            bigs++;
            wrapped_big += gshmemi_mlx5_sq_slot((uint16_t)t, SQ_BBS) == SQ_BBS - 1;
        }
        h.bbs[gshmemi_mlx5_sq_slot((uint16_t)t, SQ_BBS)] = (uint8_t)nbbs;
        h.sq_dbrec[GSHMEMI_MLX5_DBR_SND] = gshmemi_mlx5_sq_dbrec((uint16_t)(t + nbbs));
        h.posted = t + nbbs;
        if (i % 13 == 0) assert_true(gshmemi_nic_emul_progress(&qp) >= 0); /* the NIC now and then: the SQ fills */
        if (i % 3 == 0) poll_cq();
    }
    /* quiet */
    while (h.done < h.resv) {
        assert_true(gshmemi_nic_emul_progress(&qp) >= 0);
        poll_cq();
    }
    assert_int_equal(qp.state, GSHMEMI_NIC_EMUL_QP_RTS);
    assert_true(qp.wqes == total && h.done == total + bigs && h.resv == total + bigs);
    assert_true(waits > 0);       /* the SQ did fill */
    assert_true(wrapped_big > 0); /* some 2-BB WQE wrapped around the ring's end */
    for (unsigned w = 0; w < WORDS; w++) { /* the last 4-byte put to each word */
        unsigned long long last = total - 1 - ((total - 1 - w) % WORDS);
        while (last % 5 == 3) last -= WORDS;
        assert_int_equal(h.target[w], (uint32_t)last);
    }
    for (int k = 0; k < 10; k++) assert_int_equal(h.target[WORDS + k], (uint32_t)last_big + (uint32_t)k);
}

/* A WQE with a wrong rkey: the poller meets an error CQE naming the RDMA WRITE and the syndrome. */
static void test_error_cqe(void **state)
{
    gshmemi_nic_emul_qp_t qp;
    gshmemi_nic_emul_qp_cfg_t cfg;
    uint32_t v = 7;
    (void)state;
    memset(&h, 0, sizeof(h));
    for (unsigned i = 0; i < NCQE; i++) gshmemi_mlx5_cqe_init(&h.cq[i]);
    memset(&cfg, 0, sizeof(cfg));
    cfg.qpn = gshmemi_ibgda_qpn(2, 3);
    cfg.peer = 3;
    cfg.sq = h.sq;
    cfg.sq_bbs = SQ_BBS;
    cfg.sq_dbrec = &h.sq_dbrec[GSHMEMI_MLX5_DBR_SND];
    cfg.cq = h.cq;
    cfg.ncqe = NCQE;
    cfg.cq_dbrec = &h.cq_dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI];
    assert_int_equal(gshmemi_nic_emul_qp_init(&qp, &cfg, &h_ops, NULL), 0);
    gshmemi_mlx5_wqe_put_inline(h.sq, 0, cfg.qpn, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, 0, RKEY + 1, &v, 4);
    h.sq_dbrec[GSHMEMI_MLX5_DBR_SND] = gshmemi_mlx5_sq_dbrec(1);
    assert_int_equal(gshmemi_nic_emul_progress(&qp), 1);
    const gshmemi_mlx5_cqe_t *e = &h.cq[0];
    assert_true(gshmemi_mlx5_cqe_is_new(e->ok.op_own, 0, NCQE));
    assert_true(gshmemi_mlx5_cqe_is_error(e->ok.op_own));
    const gshmemi_mlx5_err_info_t i = gshmemi_mlx5_err_decode(&e->err);
    char buf[GSHMEMI_MLX5_SYNDROME_BUF];
    assert_int_equal(i.wqe_opcode, GSHMEMI_MLX5_OPCODE_RDMA_WRITE);
    assert_int_equal(i.qpn, cfg.qpn);
    assert_int_equal(i.syndrome, GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR);
    assert_string_equal(gshmemi_mlx5_syndrome_str(i.syndrome, buf), "remote access error");
    assert_string_equal(gshmemi_mlx5_opcode_name(i.wqe_opcode), "RDMA_WRITE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_needs), cmocka_unit_test(test_cqe_done), cmocka_unit_test(test_qpn),
        cmocka_unit_test(test_protocol),   cmocka_unit_test(test_error_cqe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
