/* The IBGDA device path's counter arithmetic (device/ibgda_ring.h) and the emulated transport's
 * QP numbers, then the device path's protocol replayed on the host against the emulated NIC's
 * engine (nic_emul.c): reserve with back-pressure, WQE by the builders at the slot of its counter,
 * the send doorbell record, and polling of a collapsed CQ (one entry, the newest CQE) that widens
 * its 16-bit counter, as device/ibgda.cuh does, over several wraps of the 16-bit counter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "device/ibgda_ring.h"
#include "runtime/base/log.h"
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

/* The collapsed CQE widens to its WQE's counter plus its BBs whenever the WQE lies within 32767
 * of done: ahead (a new completion), across the 16-bit wrap, and behind (one already counted,
 * which must never move done back past what it was). */
static void test_collapsed_done(void **state)
{
    (void)state;
    for (unsigned long long done = 40000; done < 400000; done += 997) {
        for (unsigned long long ahead = 0; ahead < 32768; ahead += ahead < 8 ? 1 : 4099) {
            const unsigned long long k = done + ahead;
            assert_true(gshmemi_ibgda_collapsed_done(done, (uint16_t)k, 1) == k + 1);
            assert_true(gshmemi_ibgda_collapsed_done(done, (uint16_t)k, 2) == k + 2);
        }
        for (unsigned long long behind = 1; behind <= 32768; behind += behind < 8 ? 1 : 4099) {
            const unsigned long long k = done - behind; /* completed earlier: k + bbs <= done */
            assert_true(gshmemi_ibgda_collapsed_done(done, (uint16_t)k, 1) <= done);
            if (behind >= 2) assert_true(gshmemi_ibgda_collapsed_done(done, (uint16_t)k, 2) <= done);
        }
    }
    assert_true(gshmemi_ibgda_collapsed_done(0, 0, 1) == 1);
    assert_true(gshmemi_ibgda_collapsed_done(65535, 65535, 2) == 65537); /* a 2-BB WQE across the wrap */
    assert_true(gshmemi_ibgda_collapsed_done(65536, 0, 1) == 65537);
    assert_true(gshmemi_ibgda_collapsed_done(65530, 3, 1) == 65540);
    assert_true(gshmemi_ibgda_collapsed_done(65540, 65534, 1) == 65535); /* behind, across the wrap */
    assert_true(gshmemi_ibgda_collapsed_done(3 * 65536 + 10, 9, 1) == 3 * 65536 + 10); /* the last one counted */
}

static void test_qpn(void **state)
{
    (void)state;
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++)
            for (int k = 0; k < 64; k += 7) {
                const uint32_t q = gshmemi_ibgda_qpn(a, b, k);
                assert_true(q != 0 && q <= 0xffffffu);
                for (int c = 0; c < 64; c++)
                    if (c != b) assert_true(gshmemi_ibgda_qpn(a, c, k) != q);
                if (k) assert_true(gshmemi_ibgda_qpn(a, b, k - 1) != q);
                if (a) assert_true(gshmemi_ibgda_qpn(a - 1, b, k) != q);
            }
    assert_true(gshmemi_ibgda_qpn(0, 1, 0) == 0x800001u); /* docs/transports.md's example message */
    assert_true(gshmemi_ibgda_qpn(3, 511, 63) != gshmemi_ibgda_qpn(3, 510, 63));
}

/* The QP a poster takes (nqp a power of two, as GSHMEM_IBGDA_NUM_RC_PER_PE must be): the first
 * CTAs of a launch load no QP more than twice the even share (one CTA of 16 warps on 64 QPs: 16
 * QPs once each); a CTA's warps take distinct QPs (up to nqp of them); warp 0 of nqp consecutive
 * CTAs takes every QP once; one QP is always QP 0. */
static void test_qp_pick(void **state)
{
    (void)state;
    for (unsigned nqp = 1; nqp <= 64; nqp *= 2)
        for (unsigned warps = 1; warps <= 48; warps += warps < 8 ? 1 : 5) {
            unsigned uses[64] = {0}, lead[64] = {0};
            for (unsigned cta = 0; cta < 2 * nqp; cta++) {
                unsigned in_cta[64] = {0}, most = 0;
                for (unsigned w = 0; w < warps; w++) {
                    const unsigned k = gshmemi_ibgda_qp_pick(cta, w, warps, nqp);
                    assert_true(k < nqp);
                    uses[k]++;
                    if (w < nqp) assert_int_equal(in_cta[k]++, 0);
                }
                for (unsigned k = 0; k < nqp; k++) most = uses[k] > most ? uses[k] : most;
                const unsigned share = ((cta + 1) * warps + nqp - 1) / nqp;
                if (most > 2 * share) fail_msg("%u QPs, %u warps a CTA, %u CTAs: a QP has %u posters, the even share is %u", nqp, warps, cta + 1, most, share);
                if (cta >= nqp) lead[gshmemi_ibgda_qp_pick(cta, 0, warps, nqp)]++;
            }
            for (unsigned k = 0; k < nqp; k++) assert_int_equal(lead[k], 1);
        }
    assert_int_equal(gshmemi_ibgda_qp_pick(12345, 17, 20, 1), 0);
}

/* ---- the protocol against the engine, in host memory ---- */
#define SQ_BBS 8u
#define WORDS 64
#define RKEY 0x48000001u

static struct {
    uint8_t sq[SQ_BBS * 64];
    gshmemi_mlx5_cqe_t cq[1]; /* collapsed */
    uint32_t sq_dbrec[2], cq_dbrec[2];
    uint32_t target[WORDS + 16]; /* the peer's heap: WORDS words of 4-byte puts, then one 40-byte area */
    uint8_t bbs[SQ_BBS];
    unsigned long long resv, posted, done, polls_behind;
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

/* device/ibgda.cuh's gshmemi_ibgda_poll: the last 8 bytes of the one CQE, read at once */
static void poll_cq(void)
{
    uint64_t tail;
    memcpy(&tail, h.cq[0].bytes + 56, 8);
    const uint8_t op_own = (uint8_t)(tail >> 56);
    if (gshmemi_mlx5_cqe_opcode(op_own) == GSHMEMI_MLX5_CQE_INVALID) return;
    assert_false(gshmemi_mlx5_cqe_is_error(op_own));
    const uint16_t idx = gshmemi_mlx5_be16((uint16_t)(tail >> 32));
    const unsigned long long upto = gshmemi_ibgda_collapsed_done(h.done, idx, h.bbs[gshmemi_mlx5_sq_slot(idx, SQ_BBS)]);
    assert_true(upto <= h.posted); /* never past what was posted */
    if (upto > h.done) h.done = upto;
    else h.polls_behind++; /* nothing new since the last poll */
}

/* A fresh harness and the engine on QP me -> peer: a collapsed CQ, as the transport makes it. */
static void h_open(gshmemi_nic_emul_qp_t *qp, gshmemi_nic_emul_qp_cfg_t *cfg, int me, int peer)
{
    memset(&h, 0, sizeof(h));
    gshmemi_mlx5_cqe_init(&h.cq[0]);
    memset(cfg, 0, sizeof(*cfg));
    cfg->qpn = gshmemi_ibgda_qpn(me, peer, 0);
    cfg->peer = peer;
    cfg->sq = h.sq;
    cfg->sq_bbs = SQ_BBS;
    cfg->sq_dbrec = &h.sq_dbrec[GSHMEMI_MLX5_DBR_SND];
    cfg->cq = h.cq;
    cfg->ncqe = 1;
    cfg->cq_collapsed = 1;
    cfg->cq_dbrec = &h.cq_dbrec[GSHMEMI_MLX5_CQ_DBR_SET_CI];
    assert_int_equal(gshmemi_nic_emul_qp_init(qp, cfg, &h_ops, NULL), 0);
}

static void test_protocol(void **state)
{
    gshmemi_nic_emul_qp_t qp;
    gshmemi_nic_emul_qp_cfg_t cfg;
    const unsigned long long total = 3 * 65536 + 1234; /* WQEs; the 16-bit counter wraps three times */
    unsigned long long waits = 0, last_big = 0, bigs = 0, wrapped_big = 0;
    (void)state;
    h_open(&qp, &cfg, 0, 1);
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
    assert_true(h.polls_behind > 0); /* polls met a CQE already counted, and kept done */
    assert_true(wrapped_big > 0); /* some 2-BB WQE wrapped around the ring's end */
    for (unsigned w = 0; w < WORDS; w++) { /* the last 4-byte put to each word */
        unsigned long long last = total - 1 - ((total - 1 - w) % WORDS);
        while (last % 5 == 3) last -= WORDS;
        assert_int_equal(h.target[w], (uint32_t)last);
    }
    for (int k = 0; k < 10; k++) assert_int_equal(h.target[WORDS + k], (uint32_t)last_big + (uint32_t)k);
    gshmemi_nic_emul_qp_fini(&qp);
}

/* A WQE with a wrong rkey: the poller meets an error CQE naming the RDMA WRITE and the syndrome. */
static void test_error_cqe(void **state)
{
    gshmemi_nic_emul_qp_t qp;
    gshmemi_nic_emul_qp_cfg_t cfg;
    uint32_t v = 7;
    (void)state;
    h_open(&qp, &cfg, 2, 3);
    gshmemi_mlx5_wqe_put_inline(h.sq, 0, cfg.qpn, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, 0, RKEY + 1, &v, 4);
    h.sq_dbrec[GSHMEMI_MLX5_DBR_SND] = gshmemi_mlx5_sq_dbrec(1);
    assert_int_equal(gshmemi_nic_emul_progress(&qp), 1);
    const gshmemi_mlx5_cqe_t *e = &h.cq[0];
    assert_true(gshmemi_mlx5_cqe_opcode(e->ok.op_own) != GSHMEMI_MLX5_CQE_INVALID);
    assert_true(gshmemi_mlx5_cqe_is_error(e->ok.op_own));
    const gshmemi_mlx5_err_info_t i = gshmemi_mlx5_err_decode(&e->err);
    char buf[GSHMEMI_MLX5_SYNDROME_BUF];
    assert_int_equal(i.wqe_opcode, GSHMEMI_MLX5_OPCODE_RDMA_WRITE);
    assert_int_equal(i.qpn, cfg.qpn);
    assert_int_equal(i.syndrome, GSHMEMI_MLX5_SYNDROME_REMOTE_ACCESS_ERR);
    assert_string_equal(gshmemi_mlx5_syndrome_str(i.syndrome, buf), "remote access error");
    assert_string_equal(gshmemi_mlx5_opcode_name(i.wqe_opcode), "RDMA_WRITE");
    gshmemi_nic_emul_qp_fini(&qp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_needs), cmocka_unit_test(test_collapsed_done), cmocka_unit_test(test_qpn), cmocka_unit_test(test_qp_pick),
        cmocka_unit_test(test_protocol),   cmocka_unit_test(test_error_cqe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
