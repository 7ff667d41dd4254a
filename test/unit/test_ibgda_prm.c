/* transports/ibgda/mlx5_prm.c's PRM command encoders against bit offsets written out here by
 * hand from the PRM (not from mlx5_prm.h's structs): every field is set alone, read back at its
 * offset with a plain big-endian bit reader, and every other bit of the command is compared with
 * the encoding without it (neighbours untouched). The constant fields (opcodes, RC, migrated,
 * no RQ, 64-byte CQEs, umem-valid bits) are checked where they land; values too wide for their
 * field and short buffers are refused with a message naming them. */
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
#include "transports/ibgda/mlx5_prm.h"

#define CMD_BYTES 272 /* 0x880 bits: every input command here */


/* Bit i of a big-endian bit stream: bit 0 is the top bit of byte 0 (the PRM's numbering). */
static unsigned bit_at(const uint8_t *b, unsigned i) { return (b[i / 8] >> (7 - i % 8)) & 1u; }
static uint64_t bits(const uint8_t *b, unsigned off, unsigned width)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++) v = v << 1 | bit_at(b, off + i);
    return v;
}

/* Every bit of a and b outside [off, off + width) is equal. */
static void assert_same_outside(const uint8_t *a, const uint8_t *b, unsigned off, unsigned width, const char *what)
{
    for (unsigned i = 0; i < CMD_BYTES * 8; i++) {
        if (i >= off && i < off + width) continue;
        if (bit_at(a, i) != bit_at(b, i)) {
            fprintf(stderr, "setting %s changed bit 0x%x outside its field [0x%x, 0x%x)\n", what, i, off, off + width);
            fail();
        }
    }
}

/* One field: where it lives in the attr struct, and where the PRM puts it. */
typedef struct {
    const char *name;
    size_t member;    /* offsetof in the attr struct */
    size_t msize;     /* 4 or 8 */
    unsigned off, width;
} field_t;

typedef int (*encode_fn)(void *in, size_t len, const void *attr);

/* For each field: base attrs + that field at a value using every bit of its width (all ones,
 * then a pattern), encoded; the field reads back, nothing else moves. */
static void check_fields(encode_fn enc, const void *base_attr, size_t attr_size, const field_t *f, int n)
{
    uint8_t base[CMD_BYTES], buf[CMD_BYTES];
    char attr[256];
    assert_true(attr_size <= sizeof(attr));
    assert_int_equal(enc(base, sizeof(base), base_attr), GSHMEMI_OK);
    for (int i = 0; i < n; i++) {
        uint64_t max = f[i].width >= 64 ? ~0ull : (1ull << f[i].width) - 1;
        uint64_t values[2] = {max, 0x5a5a5a5a5a5a5a5aull & max};
        for (int k = 0; k < 2; k++) {
            memcpy(attr, base_attr, attr_size);
            if (f[i].msize == 8) memcpy(attr + f[i].member, &values[k], 8);
            else {
                uint32_t v32 = (uint32_t)values[k];
                memcpy(attr + f[i].member, &v32, 4);
            }
            memset(buf, 0xee, sizeof(buf)); /* the encoder clears the buffer itself */
            assert_int_equal(enc(buf, sizeof(buf), attr), GSHMEMI_OK);
            if (bits(buf, f[i].off, f[i].width) != values[k]) {
                fprintf(stderr, "%s: read back 0x%llx at bit 0x%x, set 0x%llx\n", f[i].name,
                        (unsigned long long)bits(buf, f[i].off, f[i].width), f[i].off, (unsigned long long)values[k]);
                fail();
            }
            assert_same_outside(base, buf, f[i].off, f[i].width, f[i].name);
        }
    }
}

#define F(type, m, off, w) {#m, offsetof(type, m), sizeof(((type *)0)->m), off, w}

/* ---- CREATE_CQ */
static int enc_cq(void *in, size_t len, const void *a) { return gshmemi_prm_create_cq(in, len, a); }

static void test_create_cq(void **state)
{
    static const field_t fields[] = {
        F(gshmemi_prm_cq_t, cq_umem_offset, 0x280, 64),
        F(gshmemi_prm_cq_t, cq_umem_id, 0x2c0, 32),
        F(gshmemi_prm_cq_t, dbr_umem_id, 0x80 + 0x20, 32),
        F(gshmemi_prm_cq_t, log_cq_size, 0x80 + 0x63, 5),
        F(gshmemi_prm_cq_t, uar_page, 0x80 + 0x68, 24),
        F(gshmemi_prm_cq_t, eqn, 0x80 + 0xa0, 32),
        F(gshmemi_prm_cq_t, log_page_size, 0x80 + 0xc3, 5),
    };
    gshmemi_prm_cq_t a;
    uint8_t b[CMD_BYTES];
    (void)state;
    memset(&a, 0, sizeof(a));
    check_fields(enc_cq, &a, sizeof(a), fields, (int)(sizeof(fields) / sizeof(fields[0])));

    /* the dbr offset must stay 8-byte aligned: its own check with aligned patterns */
    a.dbr_umem_offset = 0xfedcba9876543210ull & ~7ull;
    assert_int_equal(gshmemi_prm_create_cq(b, sizeof(b), &a), GSHMEMI_OK);
    assert_true(bits(b, 0x80 + 0x1c0, 64) == a.dbr_umem_offset);

    /* constants: opcode, umem-valid bits, 64-byte CQEs; cc and oi follow their flags */
    memset(&a, 0, sizeof(a));
    assert_int_equal(gshmemi_prm_create_cq(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0, 16), 0x400);
    assert_int_equal(bits(b, 0x2e0, 1), 1);      /* cq_umem_valid */
    assert_int_equal(bits(b, 0x80 + 0x6, 1), 1); /* dbr_umem_valid */
    assert_int_equal(bits(b, 0x80 + 0x8, 3), 0); /* cqe_sz: 64 bytes */
    assert_int_equal(bits(b, 0x80 + 0xb, 1), 0); /* cc */
    assert_int_equal(bits(b, 0x80 + 0xe, 1), 0); /* oi */
    a.collapsed = 1;
    assert_int_equal(gshmemi_prm_create_cq(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0x80 + 0xb, 1), 1);
    assert_int_equal(bits(b, 0x80 + 0xe, 1), 0);
    a.collapsed = 0;
    a.overrun_ignore = 1;
    assert_int_equal(gshmemi_prm_create_cq(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0x80 + 0xb, 1), 0);
    assert_int_equal(bits(b, 0x80 + 0xe, 1), 1);
    /* DEVX_GET through the structs reads what the hand offsets read */
    assert_int_equal(DEVX_GET(create_cq_in, b, opcode), 0x400);
}

/* ---- CREATE_QP */
static int enc_qp(void *in, size_t len, const void *a) { return gshmemi_prm_create_qp(in, len, a); }

static void test_create_qp(void **state)
{
    static const field_t fields[] = {
        F(gshmemi_prm_qp_t, wq_umem_offset, 0x800, 64),
        F(gshmemi_prm_qp_t, wq_umem_id, 0x840, 32),
        F(gshmemi_prm_qp_t, pd, 0xc0 + 0x28, 24),
        F(gshmemi_prm_qp_t, log_sq_size, 0xc0 + 0x51, 4),
        F(gshmemi_prm_qp_t, uar_page, 0xc0 + 0x68, 24),
        F(gshmemi_prm_qp_t, user_index, 0xc0 + 0x88, 24),
        F(gshmemi_prm_qp_t, cqn_snd, 0xc0 + 0x3e8, 24),
        F(gshmemi_prm_qp_t, cqn_rcv, 0xc0 + 0x4e8, 24),
        F(gshmemi_prm_qp_t, dbr_umem_id, 0xc0 + 0x720, 32),
    };
    gshmemi_prm_qp_t a;
    uint8_t b[CMD_BYTES];
    (void)state;
    memset(&a, 0, sizeof(a));
    check_fields(enc_qp, &a, sizeof(a), fields, (int)(sizeof(fields) / sizeof(fields[0])));

    a.dbr_umem_offset = 0x0123456789abcdefull & ~7ull;
    assert_int_equal(gshmemi_prm_create_qp(b, sizeof(b), &a), GSHMEMI_OK);
    assert_true(bits(b, 0xc0 + 0x500, 64) == a.dbr_umem_offset);

    memset(&a, 0, sizeof(a));
    assert_int_equal(gshmemi_prm_create_qp(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0, 16), 0x500);
    assert_int_equal(bits(b, 0x860, 1), 1);          /* wq_umem_valid */
    assert_int_equal(bits(b, 0xc0 + 0x8, 8), 0);     /* st: RC */
    assert_int_equal(bits(b, 0xc0 + 0x13, 2), 3);    /* pm_state: migrated */
    assert_int_equal(bits(b, 0xc0 + 0x50, 1), 0);    /* no_sq: it has one */
    assert_int_equal(bits(b, 0xc0 + 0x49, 4), 0);    /* log_rq_size */
    assert_int_equal(bits(b, 0xc0 + 0x565, 3), 3);   /* rq_type: zero-length RQ */
    assert_int_equal(bits(b, 0xc0 + 0x683, 1), 1);   /* dbr_umem_valid */
    assert_int_equal(DEVX_GET(create_qp_in, b, opcode), 0x500);
}

/* ---- RST2INIT */
static int enc_r2i(void *in, size_t len, const void *a) { return gshmemi_prm_rst2init(in, len, a); }

static void test_rst2init(void **state)
{
    static const field_t fields[] = {
        F(gshmemi_prm_rst2init_t, qpn, 0x48, 24),
        F(gshmemi_prm_rst2init_t, pkey_index, 0x180 + 0x10, 16),
        F(gshmemi_prm_rst2init_t, atomic_mode, 0xc0 + 0x48c, 4),
    };
    gshmemi_prm_rst2init_t a;
    uint8_t b[CMD_BYTES], base[CMD_BYTES];
    (void)state;
    memset(&a, 0, sizeof(a));
    a.port = 1; /* port 0 is refused */
    check_fields(enc_r2i, &a, sizeof(a), fields, (int)(sizeof(fields) / sizeof(fields[0])));

    assert_int_equal(gshmemi_prm_rst2init(base, sizeof(base), &a), GSHMEMI_OK);
    assert_int_equal(bits(base, 0, 16), 0x502);
    assert_int_equal(bits(base, 0xc0 + 0x13, 2), 3);     /* pm_state */
    assert_int_equal(bits(base, 0x180 + 0x128, 8), 1);   /* vhca_port_num */
    a.port = 255;
    assert_int_equal(gshmemi_prm_rst2init(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0x180 + 0x128, 8), 255);
    assert_same_outside(base, b, 0x180 + 0x128, 8, "port");
    a.port = 1;
    /* access flags, one at a time: rre 0x490, rwe 0x491, rae 0x492 in the qpc */
    a.remote_read = 1;
    assert_int_equal(gshmemi_prm_rst2init(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0xc0 + 0x490, 1), 1);
    assert_same_outside(base, b, 0xc0 + 0x490, 1, "remote_read");
    a.remote_read = 0, a.remote_write = 1;
    assert_int_equal(gshmemi_prm_rst2init(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0xc0 + 0x491, 1), 1);
    assert_same_outside(base, b, 0xc0 + 0x491, 1, "remote_write");
    a.remote_write = 0, a.remote_atomic = 1;
    assert_int_equal(gshmemi_prm_rst2init(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0xc0 + 0x492, 1), 1);
    assert_same_outside(base, b, 0xc0 + 0x492, 1, "remote_atomic");
}

/* ---- INIT2RTR */
static int enc_i2r(void *in, size_t len, const void *a) { return gshmemi_prm_init2rtr(in, len, a); }

static void test_init2rtr_ib(void **state)
{
    static const field_t fields[] = {
        F(gshmemi_prm_init2rtr_t, qpn, 0x48, 24),
        F(gshmemi_prm_init2rtr_t, log_msg_max, 0xc0 + 0x43, 5),
        F(gshmemi_prm_init2rtr_t, remote_qpn, 0xc0 + 0xa8, 24),
        F(gshmemi_prm_init2rtr_t, log_rra_max, 0xc0 + 0x488, 3),
        F(gshmemi_prm_init2rtr_t, min_rnr_nak, 0xc0 + 0x4a3, 5),
        F(gshmemi_prm_init2rtr_t, next_rcv_psn, 0xc0 + 0x4a8, 24),
        F(gshmemi_prm_init2rtr_t, rlid, 0x180 + 0x30, 16),
        F(gshmemi_prm_init2rtr_t, sl, 0x180 + 0x124, 4),
    };
    gshmemi_prm_init2rtr_t a;
    uint8_t b[CMD_BYTES], base[CMD_BYTES];
    (void)state;
    memset(&a, 0, sizeof(a));
    a.mtu = 1;
    check_fields(enc_i2r, &a, sizeof(a), fields, (int)(sizeof(fields) / sizeof(fields[0])));
    assert_int_equal(gshmemi_prm_init2rtr(base, sizeof(base), &a), GSHMEMI_OK);
    assert_int_equal(bits(base, 0, 16), 0x503);
    assert_int_equal(bits(base, 0xc0 + 0x40, 3), 1);   /* mtu */
    assert_int_equal(bits(base, 0x180 + 0x28, 1), 0);  /* grh: InfiniBand without GRH */
    a.mtu = 5;
    assert_int_equal(gshmemi_prm_init2rtr(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0xc0 + 0x40, 3), 5);
    assert_same_outside(base, b, 0xc0 + 0x40, 3, "mtu");
}

static void test_init2rtr_roce(void **state)
{
    static const field_t fields[] = {
        F(gshmemi_prm_init2rtr_t, src_addr_index, 0x180 + 0x48, 8),
        F(gshmemi_prm_init2rtr_t, hop_limit, 0x180 + 0x58, 8),
        F(gshmemi_prm_init2rtr_t, tclass, 0x180 + 0x64, 8),
        F(gshmemi_prm_init2rtr_t, udp_sport, 0x180 + 0x110, 16),
    };
    static const uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
    static const uint8_t mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    gshmemi_prm_init2rtr_t a;
    uint8_t b[CMD_BYTES], base[CMD_BYTES];
    (void)state;
    memset(&a, 0, sizeof(a));
    a.mtu = 3;
    a.roce = 1;
    check_fields(enc_i2r, &a, sizeof(a), fields, (int)(sizeof(fields) / sizeof(fields[0])));
    assert_int_equal(gshmemi_prm_init2rtr(base, sizeof(base), &a), GSHMEMI_OK);
    assert_int_equal(bits(base, 0x180 + 0x28, 1), 1);  /* grh */
    assert_int_equal(bits(base, 0x180 + 0x30, 16), 0); /* no LID on RoCE */

    memcpy(a.rgid, gid, 16);
    assert_int_equal(gshmemi_prm_init2rtr(b, sizeof(b), &a), GSHMEMI_OK);
    assert_memory_equal(b + (0x180 + 0x80) / 8, gid, 16); /* rgid_rip: the GID's bytes in order */
    assert_same_outside(base, b, 0x180 + 0x80, 128, "rgid");
    memset(a.rgid, 0, 16);
    memcpy(a.rmac, mac, 6);
    assert_int_equal(gshmemi_prm_init2rtr(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0x180 + 0x130, 16), 0x0211);     /* rmac_47_32 */
    assert_int_equal(bits(b, 0x180 + 0x140, 32), 0x22334455); /* rmac_31_0 */
    assert_memory_equal(b + (0x180 + 0x130) / 8, mac, 6);     /* i.e. the MAC's bytes in order */
    assert_same_outside(base, b, 0x180 + 0x130, 48, "rmac");
}

/* ---- RTR2RTS */
static int enc_r2r(void *in, size_t len, const void *a) { return gshmemi_prm_rtr2rts(in, len, a); }

static void test_rtr2rts(void **state)
{
    static const field_t fields[] = {
        F(gshmemi_prm_rtr2rts_t, qpn, 0x48, 24),
        F(gshmemi_prm_rtr2rts_t, ack_timeout, 0x180 + 0x40, 5),
        F(gshmemi_prm_rtr2rts_t, log_ack_req_freq, 0xc0 + 0x380, 4),
        F(gshmemi_prm_rtr2rts_t, log_sra_max, 0xc0 + 0x388, 3),
        F(gshmemi_prm_rtr2rts_t, retry_count, 0xc0 + 0x38d, 3),
        F(gshmemi_prm_rtr2rts_t, rnr_retry, 0xc0 + 0x390, 3),
        F(gshmemi_prm_rtr2rts_t, next_send_psn, 0xc0 + 0x3c8, 24),
    };
    gshmemi_prm_rtr2rts_t a;
    uint8_t b[CMD_BYTES];
    (void)state;
    memset(&a, 0, sizeof(a));
    check_fields(enc_r2r, &a, sizeof(a), fields, (int)(sizeof(fields) / sizeof(fields[0])));
    assert_int_equal(gshmemi_prm_rtr2rts(b, sizeof(b), &a), GSHMEMI_OK);
    assert_int_equal(bits(b, 0, 16), 0x504);
}

/* ---- sizes, outputs, refusals */
static void test_sizes_and_outputs(void **state)
{
    uint8_t out[GSHMEMI_PRM_OUT_BYTES];
    uint32_t synd = 0;
    (void)state;
    assert_int_equal(GSHMEMI_PRM_CREATE_CQ_IN_BYTES, CMD_BYTES);
    assert_int_equal(GSHMEMI_PRM_CREATE_QP_IN_BYTES, CMD_BYTES);
    assert_int_equal(GSHMEMI_PRM_QP_TRANSITION_IN_BYTES, CMD_BYTES);
    assert_int_equal(sizeof(out), 16);
    /* status 0x03, syndrome 0x12345678, object number 0xabcdef: big-endian words */
    memset(out, 0, sizeof(out));
    out[0] = 0x03;
    out[4] = 0x12, out[5] = 0x34, out[6] = 0x56, out[7] = 0x78;
    out[8] = 0xff; /* the reserved byte above the 24-bit number */
    out[9] = 0xab, out[10] = 0xcd, out[11] = 0xef;
    assert_int_equal(gshmemi_prm_out_status(out, &synd), 3);
    assert_int_equal(synd, 0x12345678);
    assert_int_equal(gshmemi_prm_out_obj_num(out), 0xabcdef);
    assert_string_equal(gshmemi_prm_status_name(3), "bad parameter");
    assert_string_equal(gshmemi_prm_status_name(0x77), "unknown status");
}

static void test_refusals(void **state)
{
    uint8_t b[CMD_BYTES];
    gshmemi_prm_qp_t q;
    gshmemi_prm_cq_t c;
    gshmemi_prm_rst2init_t r;
    gshmemi_prm_init2rtr_t i;
    const char *m;
    (void)state;
    memset(&q, 0, sizeof(q));
    q.log_sq_size = 16;
    capture_begin();
    assert_int_equal(gshmemi_prm_create_qp(b, sizeof(b), &q), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "CREATE_QP: log_sq_size = 16 does not fit its 4-bit field"));

    memset(&q, 0, sizeof(q));
    q.pd = 1u << 24;
    capture_begin();
    assert_int_equal(gshmemi_prm_create_qp(b, sizeof(b), &q), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "CREATE_QP: pd = 16777216 does not fit its 24-bit field"));

    memset(&q, 0, sizeof(q));
    q.dbr_umem_offset = 4;
    capture_begin();
    assert_int_equal(gshmemi_prm_create_qp(b, sizeof(b), &q), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "CREATE_QP: the doorbell record offset 4 is not 8-byte aligned"));

    memset(&c, 0, sizeof(c));
    capture_begin();
    assert_int_equal(gshmemi_prm_create_cq(b, CMD_BYTES - 1, &c), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "CREATE_CQ: the command buffer has 271 bytes, the command needs 272"));
    c.log_cq_size = 32;
    capture_begin();
    assert_int_equal(gshmemi_prm_create_cq(b, sizeof(b), &c), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "CREATE_CQ: log_cq_size = 32 does not fit its 5-bit field"));

    memset(&r, 0, sizeof(r));
    capture_begin();
    assert_int_equal(gshmemi_prm_rst2init(b, sizeof(b), &r), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "RST2INIT_QP: port 0"));

    memset(&i, 0, sizeof(i));
    i.mtu = 6;
    capture_begin();
    assert_int_equal(gshmemi_prm_init2rtr(b, sizeof(b), &i), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "INIT2RTR_QP: mtu code 6 is not 1..5"));
    i.mtu = 5;
    i.rlid = 0x10000;
    capture_begin();
    assert_int_equal(gshmemi_prm_init2rtr(b, sizeof(b), &i), GSHMEMI_ERR_INVALID);
    m = capture_end();
    assert_non_null(strstr(m, "INIT2RTR_QP: primary_address_path.rlid = 65536 does not fit its 16-bit field"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_cq),   cmocka_unit_test(test_create_qp),
        cmocka_unit_test(test_rst2init),    cmocka_unit_test(test_init2rtr_ib),
        cmocka_unit_test(test_init2rtr_roce), cmocka_unit_test(test_rtr2rts),
        cmocka_unit_test(test_sizes_and_outputs), cmocka_unit_test(test_refusals),
    };
    gshmemi_log_level = GSHMEMI_LOG_WARN;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
