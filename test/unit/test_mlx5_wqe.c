/* device/mlx5_wqe.h against rdma-core's <infiniband/mlx5dv.h> (its header only: the encoders used
 * here are static inline, nothing of rdma-core is linked) and against segments written out byte
 * by byte below, so that a wrong builder cannot agree with the test by construction: layouts and
 * constants at compile time, ctrl and data segments against mlx5dv_set_ctrl_seg /
 * mlx5dv_set_data_seg over many inputs, every WQE kind as bytes, ds counts, the 16-bit WQE counter
 * and the CQ owner bit over wrap-around, and error-CQE decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <endian.h>
#include <cmocka.h>

#include <infiniband/mlx5dv.h>

#include "device/mlx5_wqe.h"

/* ---- layouts and constants, at compile time ------------------------------------------------- */
#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs), #ours " size")
#define SAME_OFF(ours, theirs, f1, f2)                                                             \
    _Static_assert(offsetof(ours, f1) == offsetof(theirs, f2) && sizeof(((ours *)0)->f1) == sizeof(((theirs *)0)->f2), \
                   #ours "." #f1 " offset and size")
#define SAME_VAL(ours, theirs) _Static_assert((long long)(ours) == (long long)(theirs), #ours " == " #theirs)

SAME_SIZE(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg);
SAME_OFF(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg, opmod_idx_opcode, opmod_idx_opcode);
SAME_OFF(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg, qpn_ds, qpn_ds);
SAME_OFF(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg, signature, signature);
SAME_OFF(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg, rsvd, dci_stream_channel_id);
SAME_OFF(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg, fm_ce_se, fm_ce_se);
SAME_OFF(gshmemi_mlx5_ctrl_seg_t, struct mlx5_wqe_ctrl_seg, imm, imm);

SAME_SIZE(gshmemi_mlx5_raddr_seg_t, struct mlx5_wqe_raddr_seg);
SAME_OFF(gshmemi_mlx5_raddr_seg_t, struct mlx5_wqe_raddr_seg, raddr, raddr);
SAME_OFF(gshmemi_mlx5_raddr_seg_t, struct mlx5_wqe_raddr_seg, rkey, rkey);
SAME_OFF(gshmemi_mlx5_raddr_seg_t, struct mlx5_wqe_raddr_seg, rsvd, reserved);

SAME_SIZE(gshmemi_mlx5_data_seg_t, struct mlx5_wqe_data_seg);
SAME_OFF(gshmemi_mlx5_data_seg_t, struct mlx5_wqe_data_seg, byte_count, byte_count);
SAME_OFF(gshmemi_mlx5_data_seg_t, struct mlx5_wqe_data_seg, lkey, lkey);
SAME_OFF(gshmemi_mlx5_data_seg_t, struct mlx5_wqe_data_seg, addr, addr);

SAME_SIZE(gshmemi_mlx5_inl_data_seg_t, struct mlx5_wqe_inl_data_seg);
SAME_OFF(gshmemi_mlx5_inl_data_seg_t, struct mlx5_wqe_inl_data_seg, byte_count, byte_count);

SAME_SIZE(gshmemi_mlx5_atomic_seg_t, struct mlx5_wqe_atomic_seg);
SAME_OFF(gshmemi_mlx5_atomic_seg_t, struct mlx5_wqe_atomic_seg, swap_add, swap_add);
SAME_OFF(gshmemi_mlx5_atomic_seg_t, struct mlx5_wqe_atomic_seg, compare, compare);

SAME_SIZE(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, srqn_uidx, srqn_uidx);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, imm_inval_pkey, imm_inval_pkey);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, byte_cnt, byte_cnt);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, timestamp, timestamp);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, sop_drop_qpn, sop_drop_qpn);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, wqe_counter, wqe_counter);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, signature, signature);
SAME_OFF(gshmemi_mlx5_cqe64_t, struct mlx5_cqe64, op_own, op_own);

SAME_SIZE(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe);
SAME_OFF(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe, srqn, srqn);
SAME_OFF(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe, vendor_err_synd, vendor_err_synd);
SAME_OFF(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe, syndrome, syndrome);
SAME_OFF(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe, s_wqe_opcode_qpn, s_wqe_opcode_qpn);
SAME_OFF(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe, wqe_counter, wqe_counter);
SAME_OFF(gshmemi_mlx5_err_cqe_t, struct mlx5_err_cqe, op_own, op_own);

SAME_VAL(GSHMEMI_MLX5_OPCODE_NOP, MLX5_OPCODE_NOP);
SAME_VAL(GSHMEMI_MLX5_OPCODE_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE);
SAME_VAL(GSHMEMI_MLX5_OPCODE_RDMA_WRITE_IMM, MLX5_OPCODE_RDMA_WRITE_IMM);
SAME_VAL(GSHMEMI_MLX5_OPCODE_SEND, MLX5_OPCODE_SEND);
SAME_VAL(GSHMEMI_MLX5_OPCODE_RDMA_READ, MLX5_OPCODE_RDMA_READ);
SAME_VAL(GSHMEMI_MLX5_OPCODE_ATOMIC_CS, MLX5_OPCODE_ATOMIC_CS);
SAME_VAL(GSHMEMI_MLX5_OPCODE_ATOMIC_FA, MLX5_OPCODE_ATOMIC_FA);
SAME_VAL(GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, MLX5_OPCODE_ATOMIC_MASKED_CS);
SAME_VAL(GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA, MLX5_OPCODE_ATOMIC_MASKED_FA);
SAME_VAL(GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, MLX5_WQE_CTRL_CQ_UPDATE);
SAME_VAL(GSHMEMI_MLX5_WQE_CTRL_SOLICITED, MLX5_WQE_CTRL_SOLICITED);
SAME_VAL(GSHMEMI_MLX5_WQE_CTRL_FENCE, MLX5_WQE_CTRL_FENCE);
SAME_VAL(GSHMEMI_MLX5_WQE_CTRL_SMALL_FENCE, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
SAME_VAL(GSHMEMI_MLX5_SEND_WQE_BB, MLX5_SEND_WQE_BB);
SAME_VAL(GSHMEMI_MLX5_SEND_WQE_SHIFT, MLX5_SEND_WQE_SHIFT);
SAME_VAL(GSHMEMI_MLX5_INLINE_SEG, (uint32_t)MLX5_INLINE_SEG);
SAME_VAL(GSHMEMI_MLX5_CQE_OWNER_MASK, MLX5_CQE_OWNER_MASK);
SAME_VAL(GSHMEMI_MLX5_CQE_REQ, MLX5_CQE_REQ);
SAME_VAL(GSHMEMI_MLX5_CQE_REQ_ERR, MLX5_CQE_REQ_ERR);
SAME_VAL(GSHMEMI_MLX5_CQE_RESP_ERR, MLX5_CQE_RESP_ERR);
SAME_VAL(GSHMEMI_MLX5_CQE_INVALID, MLX5_CQE_INVALID);
SAME_VAL(GSHMEMI_MLX5_DBR_RCV, MLX5_RCV_DBR);
SAME_VAL(GSHMEMI_MLX5_DBR_SND, MLX5_SND_DBR);
SAME_VAL(GSHMEMI_MLX5_DBR_SND_OFFSET, 4);
#define SAME_SYNDROME(name, value, text) SAME_VAL(GSHMEMI_MLX5_SYNDROME_##name, MLX5_CQE_SYNDROME_##name);
GSHMEMI_MLX5_SYNDROME_X(SAME_SYNDROME)

/* ---- helpers -------------------------------------------------------------------------------- */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void expect_bytes(const void *got, const uint8_t *want, size_t n, const char *what)
{
    const uint8_t *g = got;
    for (size_t i = 0; i < n; i++) {
        if (g[i] != want[i]) {
            fprintf(stderr, "%s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, g[i], want[i]);
            fail();
        }
    }
}

static const uint16_t idxs[] = {0, 1, 0x7f, 0x80, 0xff, 0x100, 0x1234, 0x7fff, 0x8000, 0xfffe, 0xffff};
static const uint8_t opcodes[] = {MLX5_OPCODE_NOP, MLX5_OPCODE_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE_IMM,
                                  MLX5_OPCODE_RDMA_READ, MLX5_OPCODE_ATOMIC_CS, MLX5_OPCODE_ATOMIC_FA,
                                  MLX5_OPCODE_ATOMIC_MASKED_CS, MLX5_OPCODE_ATOMIC_MASKED_FA};
static const uint32_t qpns[] = {0, 1, 0xab, 0x123456, 0x800000, 0xffffff};
static const uint8_t dss[] = {0, 1, 2, 3, 4, 5, 8, 16, 32, 62, 63};

/* ---- segments against mlx5dv.h -------------------------------------------------------------- */
static void test_ctrl_vs_mlx5dv(void **state)
{
    (void)state;
    static const uint8_t opmods[] = {0, GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(2), GSHMEMI_MLX5_OPMOD_EXT_ATOMIC(3), 0xff};
    static const uint32_t imms[] = {0, 1, 0x12345678, 0xffffffff};
    unsigned n = 0;
    for (size_t a = 0; a < ARRAY_LEN(idxs); a++)
        for (size_t b = 0; b < ARRAY_LEN(opcodes); b++)
            for (size_t c = 0; c < ARRAY_LEN(opmods); c++)
                for (size_t d = 0; d < ARRAY_LEN(qpns); d++)
                    for (size_t e = 0; e < ARRAY_LEN(dss); e++)
                        for (unsigned fm = 0; fm < 256; fm += (a == 0 && b == 1 && d == 3) ? 1 : 37) {
                            uint32_t imm = imms[(a + e + fm) % ARRAY_LEN(imms)];
                            struct mlx5_wqe_ctrl_seg ref;
                            gshmemi_mlx5_ctrl_seg_t ours;
                            memset(&ref, 0, sizeof(ref)); /* mlx5dv leaves dci_stream_channel_id alone */
                            memset(&ours, 0x5a, sizeof(ours)); /* ours must write every byte */
                            /* mlx5dv takes imm already big-endian; ours takes it in host order */
                            mlx5dv_set_ctrl_seg(&ref, idxs[a], opcodes[b], opmods[c], qpns[d], (uint8_t)fm, dss[e],
                                                0, htobe32(imm));
                            gshmemi_mlx5_set_ctrl(&ours, idxs[a], opcodes[b], opmods[c], qpns[d], dss[e], (uint8_t)fm,
                                                  imm);
                            expect_bytes(&ours, (const uint8_t *)&ref, 16, "ctrl segment");
                            n++;
                        }
    assert_true(n > 10000);
}

/* qpn and ds are 24 and 6 bits: a wider value must not spill into the neighbouring field */
static void test_ctrl_field_bounds(void **state)
{
    (void)state;
    gshmemi_mlx5_ctrl_seg_t c;
    gshmemi_mlx5_set_ctrl(&c, 0xffff, 0x08, 0x00, 0xff123456, 0xff, 0, 0);
    static const uint8_t want[16] = {0x00, 0xff, 0xff, 0x08, 0x12, 0x34, 0x56, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&c, want, 16, "ctrl with out-of-range qpn and ds");
}

static void test_data_vs_mlx5dv(void **state)
{
    (void)state;
    static const uint32_t lens[] = {0, 1, 8, 4096, 0x7fffffff, 0x80000000, 0xffffffff};
    static const uint32_t lkeys[] = {0, 0x100, 0x12345678, 0xffffffff};
    static const uint64_t addrs[] = {0, 1, 0x7f0012345678, 0x0123456789abcdefull, 0xffffffffffffffffull};
    for (size_t a = 0; a < ARRAY_LEN(lens); a++)
        for (size_t b = 0; b < ARRAY_LEN(lkeys); b++)
            for (size_t c = 0; c < ARRAY_LEN(addrs); c++) {
                struct mlx5_wqe_data_seg ref;
                gshmemi_mlx5_data_seg_t ours;
                memset(&ours, 0x5a, sizeof(ours));
                mlx5dv_set_data_seg(&ref, lens[a], lkeys[b], (uintptr_t)addrs[c]);
                gshmemi_mlx5_set_data(&ours, lens[a], lkeys[b], addrs[c]);
                expect_bytes(&ours, (const uint8_t *)&ref, 16, "data segment");
            }
}

/* ---- segments against bytes written out by hand --------------------------------------------- */
static void test_data_hand(void **state)
{
    (void)state;
    gshmemi_mlx5_data_seg_t d;
    gshmemi_mlx5_set_data(&d, 0x00010203, 0xa1b2c3d4, 0x0011223344556677ull);
    static const uint8_t want[16] = {0x00, 0x01, 0x02, 0x03, 0xa1, 0xb2, 0xc3, 0xd4,
                                     0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
    expect_bytes(&d, want, 16, "data segment");
}

static void test_raddr_hand(void **state)
{
    (void)state;
    gshmemi_mlx5_raddr_seg_t r;
    memset(&r, 0x5a, sizeof(r));
    gshmemi_mlx5_set_raddr(&r, 0x0123456789abcdefull, 0xdeadbeef);
    static const uint8_t want[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                     0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x00};
    expect_bytes(&r, want, 16, "raddr segment");
}

static void test_atomic_hand(void **state)
{
    (void)state;
    gshmemi_mlx5_atomic_seg_t a;
    gshmemi_mlx5_set_atomic(&a, 0x1122334455667788ull, 0x99aabbccddeeff00ull);
    static const uint8_t want[16] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                     0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00};
    expect_bytes(&a, want, 16, "atomic segment");
}

static void test_inline_hand(void **state)
{
    (void)state;
    gshmemi_mlx5_inl_data_seg_t s;
    gshmemi_mlx5_set_inline(&s, 5);
    static const uint8_t want5[4] = {0x80, 0x00, 0x00, 0x05};
    expect_bytes(&s, want5, 4, "inline header (5)");
    gshmemi_mlx5_set_inline(&s, 0x5c);
    static const uint8_t want92[4] = {0x80, 0x00, 0x00, 0x5c};
    expect_bytes(&s, want92, 4, "inline header (92)");
}

static void test_masked_hand(void **state)
{
    (void)state;
    gshmemi_mlx5_masked_cs64_seg_t c64;
    gshmemi_mlx5_set_masked_cs64(&c64, 0x0102030405060708ull, 0x1112131415161718ull, 0x2122232425262728ull,
                                 0x3132333435363738ull);
    static const uint8_t want_c64[32] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x11, 0x12, 0x13,
                                         0x14, 0x15, 0x16, 0x17, 0x18, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26,
                                         0x27, 0x28, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38};
    expect_bytes(&c64, want_c64, 32, "masked CS 64");

    gshmemi_mlx5_masked_cs32_seg_t c32;
    gshmemi_mlx5_set_masked_cs32(&c32, 0x01020304, 0x11121314, 0x21222324, 0x31323334);
    static const uint8_t want_c32[16] = {0x01, 0x02, 0x03, 0x04, 0x11, 0x12, 0x13, 0x14,
                                         0x21, 0x22, 0x23, 0x24, 0x31, 0x32, 0x33, 0x34};
    expect_bytes(&c32, want_c32, 16, "masked CS 32");

    gshmemi_mlx5_masked_fa64_seg_t f64;
    gshmemi_mlx5_set_masked_fa64(&f64, 0x0102030405060708ull, 0x8000000080000000ull);
    static const uint8_t want_f64[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                         0x80, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00};
    expect_bytes(&f64, want_f64, 16, "masked FA 64");

    gshmemi_mlx5_masked_fa32_seg_t f32;
    memset(&f32, 0x5a, sizeof(f32));
    gshmemi_mlx5_set_masked_fa32(&f32, 0x01020304, 0xffffffff);
    static const uint8_t want_f32[16] = {0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&f32, want_f32, 16, "masked FA 32");
}

/* ---- whole WQEs ----------------------------------------------------------------------------- */
/* Common to the WQEs below: qpn 0x000abc, raddr 0x00007f0000001000 rkey 0x11223344,
 * laddr 0x00007e0000002000 lkey 0x55667788; the ctrl and raddr lines are spelled out per WQE. */
#define QPN 0xabcu
#define RADDR 0x00007f0000001000ull
#define RKEY 0x11223344u
#define LADDR 0x00007e0000002000ull
#define LKEY 0x55667788u
#define RADDR_BYTES 0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0
#define LOCAL_BYTES 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0x7e, 0x00, 0x00, 0x00, 0x20, 0x00

static void test_wqe_put(void **state)
{
    (void)state;
    uint8_t w[128];
    memset(w, 0xaa, sizeof(w));
    assert_int_equal(gshmemi_mlx5_wqe_put(w, 0xfffe, QPN, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, RADDR, RKEY, LADDR, LKEY,
                                          0x10000),
                     3);
    static const uint8_t want[48] = {0x00, 0xff, 0xfe, 0x08, 0x00, 0x0a, 0xbc, 0x03, 0, 0, 0, 0x08, 0, 0, 0, 0,
                                     RADDR_BYTES, 0x00, 0x01, 0x00, 0x00, LOCAL_BYTES};
    expect_bytes(w, want, 48, "put WQE");
    for (int i = 48; i < 128; i++) assert_int_equal(w[i], 0xaa); /* nothing past its 3 ds */
}

static void test_wqe_get(void **state)
{
    (void)state;
    uint8_t w[64];
    assert_int_equal(gshmemi_mlx5_wqe_get(w, 0xffff, QPN, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE | GSHMEMI_MLX5_WQE_CTRL_FENCE,
                                          RADDR, RKEY, LADDR, LKEY, 8),
                     3);
    static const uint8_t want[48] = {0x00, 0xff, 0xff, 0x10, 0x00, 0x0a, 0xbc, 0x03, 0, 0, 0, 0x88, 0, 0, 0, 0,
                                     RADDR_BYTES, 0x00, 0x00, 0x00, 0x08, LOCAL_BYTES};
    expect_bytes(w, want, 48, "get WQE");
}

static void test_wqe_fetch_add_cswap(void **state)
{
    (void)state;
    uint8_t w[128];
    assert_int_equal(gshmemi_mlx5_wqe_fetch_add(w, 0x0000, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, 0x0102030405060708ull), 4);
    static const uint8_t fa[64] = {0x00, 0x00, 0x00, 0x12, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                   RADDR_BYTES,
                                   0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0x00, 0x00, 0x00, 0x08, LOCAL_BYTES};
    expect_bytes(w, fa, 64, "fetch-add 8 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_compare_swap(w, 0x0001, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8,
                                                   0x1111111111111111ull /* compare */, 0x2222222222222222ull),
                     4);
    static const uint8_t cs[64] = {0x00, 0x00, 0x01, 0x11, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                   RADDR_BYTES,
                                   0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, /* swap first */
                                   0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                                   0x00, 0x00, 0x00, 0x08, LOCAL_BYTES};
    expect_bytes(w, cs, 64, "compare-swap 8 WQE");

    /* 4-byte forms go through the extended atomics: opmod 0x08 (ext, 2^2 bytes) */
    assert_int_equal(gshmemi_mlx5_wqe_fetch_add(w, 0x0002, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, 0xfffffffe), 4);
    static const uint8_t fa4[64] = {0x08, 0x00, 0x02, 0x15, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                    RADDR_BYTES,
                                    0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0x00, 0x00, 0x00, 0x04, LOCAL_BYTES};
    expect_bytes(w, fa4, 64, "fetch-add 4 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_compare_swap(w, 0x0003, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, 7, 9), 4);
    static const uint8_t cs4[64] = {0x08, 0x00, 0x03, 0x14, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                    RADDR_BYTES,
                                    0, 0, 0, 9, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0x00, 0x00, 0x00, 0x04, LOCAL_BYTES};
    expect_bytes(w, cs4, 64, "compare-swap 4 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_fetch_add(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 2, 1), 0);
    assert_int_equal(gshmemi_mlx5_wqe_compare_swap(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 16, 1, 2), 0);
}

static void test_wqe_bitwise(void **state)
{
    (void)state;
    uint8_t w[128];
    const uint64_t v = 0x00ff00ff0f0f0f0full;
    /* AND 8 bytes: masked CS, opmod 0x09, 5 ds; swap v, compare 0, swap_mask ~v, compare_mask 0 */
    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0x8000, QPN, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, RADDR, RKEY, LADDR,
                                              LKEY, 8, GSHMEMI_MLX5_BIT_AND, v),
                     5);
    static const uint8_t and8[80] = {0x09, 0x80, 0x00, 0x14, 0x00, 0x0a, 0xbc, 0x05, 0, 0, 0, 0x08, 0, 0, 0, 0,
                                     RADDR_BYTES,
                                     0x00, 0xff, 0x00, 0xff, 0x0f, 0x0f, 0x0f, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0xff, 0x00, 0xff, 0x00, 0xf0, 0xf0, 0xf0, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0x00, 0x00, 0x00, 0x08, LOCAL_BYTES};
    expect_bytes(w, and8, 80, "AND 8 WQE");
    assert_int_equal(gshmemi_mlx5_wqe_bbs(5), 2);

    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0x8001, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, GSHMEMI_MLX5_BIT_OR, v), 5);
    static const uint8_t or8[80] = {0x09, 0x80, 0x01, 0x14, 0x00, 0x0a, 0xbc, 0x05, 0, 0, 0, 0, 0, 0, 0, 0,
                                    RADDR_BYTES,
                                    0x00, 0xff, 0x00, 0xff, 0x0f, 0x0f, 0x0f, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0x00, 0xff, 0x00, 0xff, 0x0f, 0x0f, 0x0f, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0x00, 0x00, 0x00, 0x08, LOCAL_BYTES};
    expect_bytes(w, or8, 80, "OR 8 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0x8002, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, GSHMEMI_MLX5_BIT_XOR, v), 4);
    static const uint8_t xor8[64] = {0x09, 0x80, 0x02, 0x15, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                     RADDR_BYTES,
                                     0x00, 0xff, 0x00, 0xff, 0x0f, 0x0f, 0x0f, 0x0f,
                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0x00, 0x00, 0x00, 0x08, LOCAL_BYTES};
    expect_bytes(w, xor8, 64, "XOR 8 WQE");

    /* 4 bytes: the operand's high half is dropped, opmod 0x08, 4 ds */
    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0x8003, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, GSHMEMI_MLX5_BIT_AND,
                                              0xdeadbeef0000ffffull),
                     4);
    static const uint8_t and4[64] = {0x08, 0x80, 0x03, 0x14, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                     RADDR_BYTES,
                                     0x00, 0x00, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0x00, 0x00, 0, 0, 0, 0,
                                     0x00, 0x00, 0x00, 0x04, LOCAL_BYTES};
    expect_bytes(w, and4, 64, "AND 4 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0x8004, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, GSHMEMI_MLX5_BIT_XOR, 0x0f), 4);
    static const uint8_t xor4[64] = {0x08, 0x80, 0x04, 0x15, 0x00, 0x0a, 0xbc, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
                                     RADDR_BYTES,
                                     0x00, 0x00, 0x00, 0x0f, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0x00, 0x00, 0x00, 0x04, LOCAL_BYTES};
    expect_bytes(w, xor4, 64, "XOR 4 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0x8005, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, GSHMEMI_MLX5_BIT_SWAP, 5), 5);
    static const uint8_t swap8[64] = {0x09, 0x80, 0x05, 0x14, 0x00, 0x0a, 0xbc, 0x05, 0, 0, 0, 0, 0, 0, 0, 0,
                                      RADDR_BYTES,
                                      0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(w, swap8, 64, "SWAP 8 WQE");

    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, 99, v), 0);
    assert_int_equal(gshmemi_mlx5_wqe_bitwise(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 2, GSHMEMI_MLX5_BIT_OR, v), 0);
}

/* What the masks above do to a word, applied by the rule the NIC follows (the header's comment),
 * so that a wrong mask choice shows as a wrong result rather than only as other bytes. */
static uint64_t be64_at(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

static void test_bitwise_semantics(void **state)
{
    (void)state;
    static const uint64_t olds[] = {0, ~0ull, 0x0123456789abcdefull, 0xf0f0f0f0f0f0f0f0ull};
    static const uint64_t vals[] = {0, ~0ull, 0x00ff00ff0f0f0f0full, 0x8000000000000001ull};
    uint8_t w[128];
    for (size_t i = 0; i < ARRAY_LEN(olds); i++)
        for (size_t j = 0; j < ARRAY_LEN(vals); j++) {
            uint64_t old = olds[i], v = vals[j];
            gshmemi_mlx5_wqe_bitwise(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, GSHMEMI_MLX5_BIT_AND, v);
            uint64_t swap = be64_at(w + 32), cmp = be64_at(w + 40), smask = be64_at(w + 48), cmask = be64_at(w + 56);
            assert_true(((old ^ cmp) & cmask) == 0);
            assert_true(((old & ~smask) | (swap & smask)) == (old & v));
            gshmemi_mlx5_wqe_bitwise(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, GSHMEMI_MLX5_BIT_OR, v);
            swap = be64_at(w + 32), cmp = be64_at(w + 40), smask = be64_at(w + 48), cmask = be64_at(w + 56);
            assert_true(((old ^ cmp) & cmask) == 0);
            assert_true(((old & ~smask) | (swap & smask)) == (old | v));
            /* XOR: an add with a field boundary at every bit carries nothing: bitwise sum mod 2 */
            gshmemi_mlx5_wqe_bitwise(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, GSHMEMI_MLX5_BIT_XOR, v);
            uint64_t add = be64_at(w + 32), bound = be64_at(w + 40), r = 0;
            assert_true(bound == ~0ull);
            for (int b = 0; b < 64; b++) r |= (((old >> b) + (add >> b)) & 1) << b;
            assert_true(r == (old ^ v));
        }
}

static void test_wqe_inline(void **state)
{
    (void)state;
    uint8_t src[GSHMEMI_MLX5_INLINE_MAX + 1];
    for (size_t i = 0; i < sizeof(src); i++) src[i] = (uint8_t)(0x30 + i);
    /* one written out: 5 bytes, ds = ceil((36 + 5) / 16) = 3 */
    uint8_t w[128];
    memset(w, 0xaa, sizeof(w));
    assert_int_equal(gshmemi_mlx5_wqe_put_inline(w, 0x0102, QPN, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, RADDR, RKEY, src, 5), 3);
    static const uint8_t want[48] = {0x00, 0x01, 0x02, 0x08, 0x00, 0x0a, 0xbc, 0x03, 0, 0, 0, 0x08, 0, 0, 0, 0,
                                     RADDR_BYTES,
                                     0x80, 0x00, 0x00, 0x05, 0x30, 0x31, 0x32, 0x33, 0x34, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(w, want, 48, "inline put of 5 bytes");
    assert_int_equal(w[48], 0xaa);

    /* every length: ds, BBs, payload placement, zero padding to the ds unit, nothing beyond */
    for (uint32_t n = 0; n <= GSHMEMI_MLX5_INLINE_MAX; n++) {
        memset(w, 0xaa, sizeof(w));
        unsigned ds = gshmemi_mlx5_wqe_put_inline(w, (uint16_t)n, QPN, 0, RADDR, RKEY, src, n);
        unsigned want_ds = (36 + n + 15) / 16;
        assert_int_equal(ds, want_ds);
        assert_int_equal(w[7], want_ds);               /* the ds field in qpn_ds */
        assert_int_equal(gshmemi_mlx5_wqe_bbs(ds), n <= GSHMEMI_MLX5_INLINE_MAX_1BB ? 1 : 2);
        assert_int_equal(w[32] | w[33] << 8, 0x80);    /* inline flag, high bytes of byte_count */
        assert_int_equal(w[34] << 8 | w[35], n);
        assert_memory_equal(w + 36, src, n);
        for (unsigned i = 36 + n; i < ds * 16; i++) assert_int_equal(w[i], 0);
        for (unsigned i = ds * 16; i < sizeof(w); i++) assert_int_equal(w[i], 0xaa);
    }
    assert_int_equal(GSHMEMI_MLX5_INLINE_MAX_1BB, 28);
    assert_int_equal(GSHMEMI_MLX5_INLINE_MAX, 92);
    memset(w, 0xaa, sizeof(w));
    assert_int_equal(gshmemi_mlx5_wqe_put_inline(w, 0, QPN, 0, RADDR, RKEY, src, GSHMEMI_MLX5_INLINE_MAX + 1), 0);
    for (size_t i = 0; i < sizeof(w); i++) assert_int_equal(w[i], 0xaa); /* refused: nothing written */
}

static void test_wqe_nop(void **state)
{
    (void)state;
    uint8_t w[16];
    assert_int_equal(gshmemi_mlx5_wqe_nop(w, 0xabcd, QPN, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE), 1);
    static const uint8_t want[16] = {0x00, 0xab, 0xcd, 0x00, 0x00, 0x0a, 0xbc, 0x01, 0, 0, 0, 0x08, 0, 0, 0, 0};
    expect_bytes(w, want, 16, "NOP WQE");
}

/* every builder's ds agrees with the ctrl segment it wrote, and with its BB count */
static void test_ds_counts(void **state)
{
    (void)state;
    uint8_t w[128];
    struct {
        unsigned ds, want, bbs;
    } k[] = {
        {gshmemi_mlx5_wqe_put(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 1), 3, 1},
        {gshmemi_mlx5_wqe_get(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 1), 3, 1},
        {gshmemi_mlx5_wqe_fetch_add(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, 1), 4, 1},
        {gshmemi_mlx5_wqe_fetch_add(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, 1), 4, 1},
        {gshmemi_mlx5_wqe_compare_swap(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, 1, 2), 4, 1},
        {gshmemi_mlx5_wqe_compare_swap(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, 1, 2), 4, 1},
        {gshmemi_mlx5_wqe_masked_cs(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, 1, 2, 3, 4), 5, 2},
        {gshmemi_mlx5_wqe_masked_cs(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, 1, 2, 3, 4), 4, 1},
        {gshmemi_mlx5_wqe_masked_fa(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 8, 1, 2), 4, 1},
        {gshmemi_mlx5_wqe_masked_fa(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 4, 1, 2), 4, 1},
        {gshmemi_mlx5_wqe_nop(w, 0, QPN, 0), 1, 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(k); i++) {
        assert_int_equal(k[i].ds, k[i].want);
        assert_int_equal(gshmemi_mlx5_wqe_bbs(k[i].ds), k[i].bbs);
    }
    assert_int_equal(gshmemi_mlx5_wqe_masked_cs(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 3, 1, 2, 3, 4), 0);
    assert_int_equal(gshmemi_mlx5_wqe_masked_fa(w, 0, QPN, 0, RADDR, RKEY, LADDR, LKEY, 16, 1, 2), 0);
    assert_int_equal(gshmemi_mlx5_wqe_bbs(0), 0);
    assert_int_equal(gshmemi_mlx5_wqe_bbs(4), 1);
    assert_int_equal(gshmemi_mlx5_wqe_bbs(8), 2);
    assert_int_equal(gshmemi_mlx5_wqe_bbs(63), 16);
}

/* ---- index arithmetic ----------------------------------------------------------------------- */
static void test_sq_index_wrap(void **state)
{
    (void)state;
    /* a 64-bit producer count across the 16-bit counter's wrap: the slot follows the count */
    for (uint32_t sq = 1; sq <= 65536; sq <<= 1)
        for (uint64_t p = 65536 * 3 - 70; p < 65536 * 3 + 70; p++) {
            uint16_t idx = (uint16_t)p;
            assert_int_equal(gshmemi_mlx5_sq_slot(idx, sq), p % sq);
        }
    /* 0xfffe, 0xffff, 0x0000, 0x0001 in a 64-slot ring: slots 62, 63, 0, 1 */
    assert_int_equal(gshmemi_mlx5_sq_slot(0xfffe, 64), 62);
    assert_int_equal(gshmemi_mlx5_sq_slot(0xffff, 64), 63);
    assert_int_equal(gshmemi_mlx5_sq_slot(0x0000, 64), 0);
    assert_int_equal(gshmemi_mlx5_sq_slot(0x0001, 64), 1);
    /* the ctrl segment carries the counter's low 16 bits, wrapping with it */
    gshmemi_mlx5_ctrl_seg_t c;
    gshmemi_mlx5_set_ctrl(&c, (uint16_t)0x2ffffull, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, 1, 3, 0, 0);
    static const uint8_t want_ffff[4] = {0x00, 0xff, 0xff, 0x08};
    expect_bytes(&c, want_ffff, 4, "ctrl idx 0xffff");
    gshmemi_mlx5_set_ctrl(&c, (uint16_t)0x30000ull, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, 1, 3, 0, 0);
    static const uint8_t want_0[4] = {0x00, 0x00, 0x00, 0x08};
    expect_bytes(&c, want_0, 4, "ctrl idx 0x0000");
    /* the send doorbell record: big-endian 16-bit counter */
    uint32_t db = gshmemi_mlx5_sq_dbrec(0xffff);
    static const uint8_t want_db[4] = {0x00, 0x00, 0xff, 0xff};
    expect_bytes(&db, want_db, 4, "send dbrec 0xffff");
    db = gshmemi_mlx5_sq_dbrec(0x0001);
    static const uint8_t want_db1[4] = {0x00, 0x00, 0x00, 0x01};
    expect_bytes(&db, want_db1, 4, "send dbrec 0x0001");
    /* widening a CQE's 16-bit wqe_counter against the 64-bit producer count */
    static const uint64_t refs[] = {0, 1, 0xffff, 0x10000, 0x10001, 0x2fffe, 0x30000, 0xffffffffffff0005ull};
    for (size_t i = 0; i < ARRAY_LEN(refs); i++)
        for (uint64_t back = 0; back < 65536 && back <= refs[i]; back += (back < 300 ? 1 : 997)) {
            uint64_t x = refs[i] - back;
            assert_true(gshmemi_mlx5_widen16(refs[i], (uint16_t)x) == x);
        }
}

/* A NIC writing CQEs with the owner bit of its pass and a poller reading them, over 4+ passes of
 * an 8-entry CQ: every CQE is seen once and in order, and an unwritten slot (last pass's, or a
 * fresh CQ's) never reads as new. The owner bit is read through mlx5dv's accessor too. */
static void test_cq_wrap(void **state)
{
    (void)state;
    enum { NCQE = 8, TOTAL = NCQE * 4 + 3 };
    gshmemi_mlx5_cqe_t cq[NCQE];
    for (int i = 0; i < NCQE; i++) gshmemi_mlx5_cqe_init(&cq[i]);
    for (int i = 0; i < NCQE; i++) assert_false(gshmemi_mlx5_cqe_is_new(cq[i].ok.op_own, (uint32_t)i, NCQE));
    uint32_t pi = 0, ci = 0;
    while (ci < TOTAL) {
        /* the NIC produces up to 3 CQEs, never overrunning the consumer */
        for (int k = 0; k < 3 && pi < TOTAL && pi - ci < NCQE; k++, pi++) {
            gshmemi_mlx5_cqe_t *e = &cq[pi % NCQE];
            memset(e, 0, sizeof(*e));
            e->ok.wqe_counter = gshmemi_mlx5_be16((uint16_t)(0xfff0 + pi)); /* wraps past 0xffff too */
            e->ok.op_own = (uint8_t)(GSHMEMI_MLX5_CQE_REQ << 4 | ((pi / NCQE) & 1));
        }
        /* the poller drains what is new */
        int seen = 0;
        for (;;) {
            gshmemi_mlx5_cqe_t *e = &cq[gshmemi_mlx5_cq_slot(ci, NCQE)];
            struct mlx5_cqe64 ref;
            memcpy(&ref, e, sizeof(ref));
            assert_int_equal(mlx5dv_get_cqe_owner(&ref), e->ok.op_own & 1);
            assert_int_equal(mlx5dv_get_cqe_opcode(&ref), gshmemi_mlx5_cqe_opcode(e->ok.op_own));
            if (!gshmemi_mlx5_cqe_is_new(e->ok.op_own, ci, NCQE)) break;
            assert_true(ci < pi);
            assert_int_equal(gshmemi_mlx5_be16(e->ok.wqe_counter), (uint16_t)(0xfff0 + ci));
            assert_int_equal(gshmemi_mlx5_cq_owner(ci, NCQE), (ci / NCQE) & 1);
            assert_false(gshmemi_mlx5_cqe_is_error(e->ok.op_own));
            ci++;
            seen++;
        }
        assert_int_equal(ci, pi); /* stopped exactly at the first unwritten entry */
        assert_true(seen > 0);
    }
    assert_int_equal(ci, TOTAL);
    assert_true(TOTAL / NCQE >= 3);
    uint32_t db = gshmemi_mlx5_cq_dbrec(0x12345678);
    static const uint8_t want_db[4] = {0x00, 0x34, 0x56, 0x78}; /* 24-bit consumer index */
    expect_bytes(&db, want_db, 4, "CQ dbrec");
}

/* ---- error CQEs ----------------------------------------------------------------------------- */
static const struct {
    uint8_t value;
    const char *name;
} syndromes[] = {
    {MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "local length error"},
    {MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, "local QP operation error"},
    {MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "local protection error"},
    {MLX5_CQE_SYNDROME_WR_FLUSH_ERR, "work request flushed"},
    {MLX5_CQE_SYNDROME_MW_BIND_ERR, "memory window bind error"},
    {MLX5_CQE_SYNDROME_BAD_RESP_ERR, "bad response"},
    {MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, "local access error"},
    {MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "remote invalid request"},
    {MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "remote access error"},
    {MLX5_CQE_SYNDROME_REMOTE_OP_ERR, "remote operation error"},
    {MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "transport retry counter exceeded"},
    {MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, "RNR retry counter exceeded"},
    {MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, "remote aborted"},
};

static void test_error_cqe(void **state)
{
    (void)state;
    /* an error CQE as the NIC writes it, byte by byte: vendor 0x88 at 54, syndrome at 55, the
     * failed WQE's opcode (ATOMIC_CS) and qpn at 56..59, wqe_counter 0xfffe at 60, REQ_ERR owner 1 */
    uint8_t raw[64] = {0};
    raw[54] = 0x88;
    raw[56] = 0x11;
    raw[57] = 0x00;
    raw[58] = 0x0a;
    raw[59] = 0xbc;
    raw[60] = 0xff;
    raw[61] = 0xfe;
    raw[63] = 0xd1;
    char buf[GSHMEMI_MLX5_SYNDROME_BUF];
    for (size_t i = 0; i < ARRAY_LEN(syndromes); i++) {
        gshmemi_mlx5_cqe_t cqe;
        raw[55] = syndromes[i].value;
        memcpy(&cqe, raw, sizeof(raw));
        assert_true(gshmemi_mlx5_cqe_is_error(cqe.ok.op_own));
        assert_true(gshmemi_mlx5_cqe_is_new(cqe.ok.op_own, 8, 8)); /* second pass: owner 1 */
        gshmemi_mlx5_err_info_t e = gshmemi_mlx5_err_decode(&cqe.err);
        assert_int_equal(e.syndrome, syndromes[i].value);
        assert_int_equal(e.vendor_err_synd, 0x88);
        assert_int_equal(e.wqe_opcode, MLX5_OPCODE_ATOMIC_CS);
        assert_int_equal(e.qpn, 0xabc);
        assert_int_equal(e.wqe_counter, 0xfffe);
        assert_string_equal(gshmemi_mlx5_syndrome_str(e.syndrome, buf), syndromes[i].name);
        /* and read through mlx5dv's struct */
        struct mlx5_err_cqe ref;
        memcpy(&ref, raw, sizeof(ref));
        assert_int_equal(ref.syndrome, e.syndrome);
        assert_int_equal(be16toh(ref.wqe_counter), e.wqe_counter);
        assert_int_equal(be32toh(ref.s_wqe_opcode_qpn) & 0xffffff, e.qpn);
    }
    /* the responder's error opcode too, and a good CQE is not an error */
    assert_true(gshmemi_mlx5_cqe_is_error(MLX5_CQE_RESP_ERR << 4));
    assert_false(gshmemi_mlx5_cqe_is_error(MLX5_CQE_REQ << 4 | 1));
    assert_false(gshmemi_mlx5_cqe_is_error(MLX5_CQE_INVALID << 4));
    /* values with no name */
    assert_string_equal(gshmemi_mlx5_syndrome_str(0x00, buf), "unknown syndrome 0x00");
    assert_string_equal(gshmemi_mlx5_syndrome_str(0x03, buf), "unknown syndrome 0x03");
    assert_string_equal(gshmemi_mlx5_syndrome_str(0xab, buf), "unknown syndrome 0xab");
    assert_string_equal(gshmemi_mlx5_syndrome_str(0xff, buf), "unknown syndrome 0xff");
    /* exactly the named ones have names */
    int named = 0;
    for (unsigned s = 0; s < 256; s++)
        named += strncmp(gshmemi_mlx5_syndrome_str((uint8_t)s, buf), "unknown", 7) != 0;
    assert_int_equal(named, ARRAY_LEN(syndromes));
    assert_string_equal(gshmemi_mlx5_opcode_name(MLX5_OPCODE_ATOMIC_MASKED_CS), "ATOMIC_MASKED_CS");
    assert_null(gshmemi_mlx5_opcode_name(0x7f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctrl_vs_mlx5dv),  cmocka_unit_test(test_ctrl_field_bounds),
        cmocka_unit_test(test_data_vs_mlx5dv),  cmocka_unit_test(test_data_hand),
        cmocka_unit_test(test_raddr_hand),      cmocka_unit_test(test_atomic_hand),
        cmocka_unit_test(test_inline_hand),     cmocka_unit_test(test_masked_hand),
        cmocka_unit_test(test_wqe_put),         cmocka_unit_test(test_wqe_get),
        cmocka_unit_test(test_wqe_fetch_add_cswap), cmocka_unit_test(test_wqe_bitwise),
        cmocka_unit_test(test_bitwise_semantics), cmocka_unit_test(test_wqe_inline),
        cmocka_unit_test(test_wqe_nop),         cmocka_unit_test(test_ds_counts),
        cmocka_unit_test(test_sq_index_wrap),   cmocka_unit_test(test_cq_wrap),
        cmocka_unit_test(test_error_cqe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
