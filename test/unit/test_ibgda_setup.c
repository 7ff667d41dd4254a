/* IBGDA's host setup (transports/ibgda/setup.c) without a NIC: each way a host can lack one
 * (no libibverbs, no libmlx5, no RDMA device, no mlx5 device, no DEVX) is refused with
 * GSHMEMI_ERR_UNSUPPORTED and one info line naming why (read back from stderr); GSHMEM_IB_DEVICE
 * naming a missing device is an error; against fake_mlx5.c (loaded as both libraries) a 3-PE
 * setup creates its CQs and QPs, publishes a blob and connects to RTS, InfiniBand and RoCE, with
 * the commands' fields checked; a fake whose n-th call fails, for every n, leaves no object
 * behind (memory regions included); the blob checks and the doorbell-mode decision with their
 * messages; the route's probe (one line naming why there is no IBGDA: info under auto, error
 * when forced; nothing kept) and the device records the transport fills for GSHMEM_IBGDA_NIC=hw
 * (first QP of each peer, collapsed CQ of one CQE, doorbell register or none). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <cmocka.h>

#include "stderr_capture.h"

#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "transports/ibgda/mlx5_prm.h"
#include "transports/ibgda/setup.h"


static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ---- the environment, through the real table */
static const char *env_ib_device;
static const char *fake_get(const char *name)
{
    if (strcmp(name, "GSHMEM_IB_DEVICE") == 0) return env_ib_device;
    return NULL;
}

/* ---- the fake's controls */
static void *fake_handle; /* held for the whole test, so the fake's state outlives the setup's dlclose */
static void *fake_sym(const char *name)
{
    void *f;
    if (!fake_handle) fake_handle = dlopen(FAKE_MLX5, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake_handle);
    f = dlsym(fake_handle, name);
    assert_non_null(f);
    return f;
}
static void fake_config(int n, unsigned mask, int ll, int devx)
{
    ((void (*)(int, unsigned, int, int))fake_sym("fake_mlx5_config"))(n, mask, ll, devx);
}
static void fake_fail_at(int n) { ((void (*)(int))fake_sym("fake_mlx5_fail_at"))(n); }
static int fake_live(void) { return ((int (*)(void))fake_sym("fake_mlx5_live"))(); }
static int fake_calls(void) { return ((int (*)(void))fake_sym("fake_mlx5_calls"))(); }
static const uint8_t *fake_last(unsigned op) { return ((const void *(*)(unsigned))fake_sym("fake_mlx5_last"))(op); }
static int fake_qp_state(uint32_t qpn) { return ((int (*)(uint32_t))fake_sym("fake_mlx5_qp_state"))(qpn); }

/* ---- a 3-PE job seen from PE 0, two QPs per peer, buffers in host memory */
enum { N_PES = 3, N_RC = 2, LOG_SQ = 6, LOG_CQ = 6 };
static gshmemi_ibgda_args_t args;
static gshmemi_ibgda_layout_t lay;
static void *wq, *cq, *dbr;

static int setup(void **state)
{
    (void)state;
    env_ib_device = NULL;
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    gshmemi_log_level = GSHMEMI_LOG_INFO;
    gshmemi_ibgda_set_libraries_for_test(FAKE_MLX5, FAKE_MLX5);
    fake_config(1, 1, 1 /* IBV_LINK_LAYER_INFINIBAND */, 1);
    fake_fail_at(0);
    assert_int_equal(gshmemi_ibgda_layout((N_PES - 1) * N_RC, LOG_SQ, LOG_CQ, &lay), GSHMEMI_OK);
    wq = calloc(1, lay.wq_bytes);
    cq = calloc(1, lay.cq_bytes);
    dbr = calloc(1, lay.dbr_bytes);
    memset(&args, 0, sizeof(args));
    args.my_pe = 0;
    args.n_pes = N_PES;
    args.n_rc = N_RC;
    args.log_sq_bbs = LOG_SQ;
    args.log_cqes = LOG_CQ;
    args.wq = (gshmemi_ibgda_buf_t){wq, lay.wq_bytes, -1};
    args.cq = (gshmemi_ibgda_buf_t){cq, lay.cq_bytes, -1};
    args.dbr = (gshmemi_ibgda_buf_t){dbr, lay.dbr_bytes, -1};
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(wq), free(cq), free(dbr);
    gshmemi_ibgda_set_libraries_for_test(NULL, NULL);
    return 0;
}

static int open_logged(gshmemi_ibgda_t **g, const char **log)
{
    int rc;
    capture_begin();
    rc = gshmemi_ibgda_open(&args, g);
    *log = capture_end();
    return rc;
}

/* ---- refusals: one info line each */
static void test_no_libibverbs(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    gshmemi_ibgda_set_libraries_for_test("libibverbs-gshmem-test-missing.so.1", FAKE_MLX5);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_null(g);
    assert_non_null(strstr(log, "INFO ibgda: libibverbs-gshmem-test-missing.so.1 is missing ("));
    assert_non_null(strstr(log, "no IBGDA on this host"));
    assert_int_equal(count_lines(log), 1);
}

static void test_no_libmlx5(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    gshmemi_ibgda_set_libraries_for_test(FAKE_MLX5, "libmlx5-gshmem-test-missing.so.1");
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_null(g);
    assert_non_null(strstr(log, "INFO ibgda: libmlx5-gshmem-test-missing.so.1 is missing ("));
    assert_non_null(strstr(log, "no IBGDA on this host (install rdma-core's mlx5 provider)"));
    assert_int_equal(count_lines(log), 1);
}

static void test_no_device(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    fake_config(0, 0, 1, 1);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_non_null(strstr(log, "INFO ibgda: no RDMA device on this host (libibverbs lists none): no IBGDA"));
    assert_int_equal(count_lines(log), 1);
    assert_int_equal(fake_live(), 0);
}

static void test_not_mlx5(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    fake_config(1, 0, 1, 1);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_non_null(strstr(log, "INFO ibgda: no mlx5 RDMA device (fake_other_0 is not an mlx5 (ConnectX) device; devices present: fake_other_0): no IBGDA"));
    assert_int_equal(count_lines(log), 1);
    assert_int_equal(fake_live(), 0);
}

static void test_no_devx(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    fake_config(1, 1, 1, 0);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_non_null(strstr(log, "INFO ibgda: no usable mlx5 device (fake_mlx5_0: mlx5dv_open_device with DEVX failed: "));
    assert_int_equal(count_lines(log), 1);
    assert_int_equal(fake_live(), 0);
}

/* a second device is taken when the first is not mlx5; a named missing one is an error */
static void test_device_choice(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    fake_config(2, 2, 1, 1);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_OK);
    assert_non_null(strstr(log, "opened fake_mlx5_1 port 1 (InfiniBand, LID 7, MTU 4096) with DEVX: 4 RC QPs"));
    gshmemi_ibgda_close(g);
    assert_int_equal(fake_live(), 0);

    env_ib_device = "mlx5_9";
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=mlx5_9: no such RDMA device on this host (devices present: fake_other_0 fake_mlx5_1)"));
    env_ib_device = "fake_mlx5_1:2";
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_SYSTEM);
    assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=fake_mlx5_1:2: not usable for IBGDA (fake_mlx5_1 has 1 port(s), no port 2)"));
    assert_int_equal(fake_live(), 0);
    env_ib_device = NULL;
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
}

static void test_small_buffer(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log;
    (void)state;
    args.cq.size = lay.cq_bytes - 1;
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "the CQ buffer"));
    assert_non_null(strstr(log, "is smaller than the"));
    assert_int_equal(fake_live(), 0);
    args.n_rc = 0;
    assert_int_equal(open_logged(&g, &log), GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "n_rc 0 is not 1..64 (GSHMEM_IBGDA_NUM_RC_PER_PE)"));
}

/* umems through a dmabuf; one whose dmabuf registration fails is registered by address (one
 * info line), the setup goes on */
static void test_umem_dmabuf_fallback(void **state)
{
    gshmemi_ibgda_t *g;
    const char *log = "";
    int n, rc = GSHMEMI_ERR_STATE;
    (void)state;
    args.wq.dmabuf_fd = 7;
    args.cq.dmabuf_fd = 8;
    args.dbr.dmabuf_fd = 9;
    assert_int_equal(open_logged(&g, &log), GSHMEMI_OK);
    assert_null(strstr(log, "dmabuf failed"));
    gshmemi_ibgda_close(g);
    for (n = 1; n < 100; n++) { /* the call that registers the SQ buffer's dmabuf */
        fake_fail_at(n);
        rc = open_logged(&g, &log);
        if (strstr(log, "registering the SQ buffer through its dmabuf failed")) break;
        gshmemi_ibgda_close(g);
        assert_int_equal(fake_live(), 0);
    }
    assert_true(n < 100);
    assert_int_equal(rc, GSHMEMI_OK);
    assert_non_null(strstr(log, "INFO ibgda: fake_mlx5_0: registering the SQ buffer through its dmabuf failed (")); /* its errno */
    assert_non_null(strstr(log, "); trying by address"));
    assert_null(strstr(log, "ERROR"));
    gshmemi_ibgda_close(g);
    assert_int_equal(fake_live(), 0);
    fake_fail_at(0);
}

/* ---- a whole setup */

/* PE pe's blob as the fake job publishes it: QP numbers 0x1000 * pe + 0x10 * to + k */
static void peer_blob(void *out, int pe, int roce)
{
    gshmemi_ibgda_blob_t h;
    uint32_t q;
    memset(&h, 0, sizeof(h));
    h.addr.magic = GSHMEMI_IBGDA_BLOB_MAGIC;
    h.addr.psn = 0x300 + (uint32_t)pe;
    h.addr.lid = roce ? 0 : (uint16_t)(20 + pe);
    h.addr.port = 1;
    h.addr.mtu = 3; /* 1024: the path takes the smaller of the two */
    h.addr.link_layer = roce ? 2 : 1;
    h.n_pes = N_PES;
    h.n_rc = N_RC;
    for (int i = 0; i < 16; i++) h.addr.gid[i] = (uint8_t)(0x10 * pe + i);
    memcpy(out, &h, sizeof(h));
    for (int to = 0; to < N_PES; to++)
        for (int k = 0; k < N_RC; k++) {
            q = to == pe ? 0 : 0x1000u * (uint32_t)pe + 0x10u * (uint32_t)to + (uint32_t)k;
            memcpy((char *)out + sizeof(h) + ((size_t)to * N_RC + k) * 4, &q, 4);
        }
}

static uint64_t bits(const uint8_t *b, unsigned off, unsigned width)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++) v = v << 1 | ((b[(off + i) / 8] >> (7 - (off + i) % 8)) & 1u);
    return v;
}

static void run_job(int roce)
{
    size_t bs = gshmemi_ibgda_blob_size(N_PES, N_RC);
    char *blobs = calloc(N_PES, bs);
    gshmemi_ibgda_t *g;
    gshmemi_ibgda_qp_info_t qi;
    gshmemi_ibgda_blob_t me;
    const uint8_t *c;
    const char *log;
    void *page, *db;
    uint32_t page_id;

    fake_config(1, 1, roce ? 2 : 1, 1);
    assert_int_equal(open_logged(&g, &log), GSHMEMI_OK);
    assert_int_equal(gshmemi_ibgda_n_qps(g), (N_PES - 1) * N_RC);
    gshmemi_ibgda_blob(g, blobs); /* PE 0's own */
    assert_int_equal(gshmemi_ibgda_blob_check(blobs, 0, N_PES, N_RC, &me), GSHMEMI_OK);
    assert_int_equal(me.addr.port, 1);
    assert_int_equal(me.addr.mtu, 5);
    for (int q = 0; q < gshmemi_ibgda_n_qps(g); q++) {
        gshmemi_ibgda_qp_info(g, q, &qi);
        assert_int_equal(qi.peer, 1 + q / N_RC);
        assert_int_equal(qi.k, q % N_RC);
        assert_int_equal(gshmemi_ibgda_blob_qpn(blobs, qi.peer, qi.k, N_RC), qi.qpn);
        assert_int_equal(qi.wq_offset, (size_t)q * lay.wq_stride);
        assert_int_equal(qi.cq_dbr_offset, (size_t)(4 + q) * 64);
        assert_int_equal(fake_qp_state(qi.qpn), 0);
    }
    assert_int_equal(gshmemi_ibgda_blob_qpn(blobs, 0, 0, N_RC), 0); /* none to itself */
    /* the last CREATE_QP: the last QP's CQ, SQ offset and doorbell record */
    c = fake_last(0x500);
    assert_int_equal(bits(c, 0xc0 + 0x3e8, 24), qi.cqn);
    assert_int_equal(bits(c, 0x800, 64), qi.wq_offset);
    assert_int_equal(bits(c, 0xc0 + 0x500, 64), qi.qp_dbr_offset);
    assert_int_equal(bits(c, 0xc0 + 0x51, 4), LOG_SQ);
    assert_int_equal(bits(c, 0xc0 + 0x68, 24), 0x77); /* the UAR's page */
    assert_int_equal(bits(c, 0xc0 + 0x28, 24), 0x33); /* the PD's number */
    c = fake_last(0x400);
    assert_int_equal(bits(c, 0x80 + 0x63, 5), LOG_CQ);
    assert_int_equal(bits(c, 0x80 + 0xa0, 32), 9); /* EQ */
    assert_int_equal(bits(c, 0x280, 64), qi.cq_offset);
    assert_int_equal(bits(c, 0x80 + 0x1c0, 64), qi.cq_dbr_offset); /* its doorbell record, after the QPs' */
    assert_int_equal(qi.cq_dbr_offset, (size_t)(4 + 3) * 64);
    gshmemi_ibgda_uar(g, &page, &db, &page_id);
    assert_int_equal(page_id, 0x77);
    assert_non_null(db);

    peer_blob(blobs + bs, 1, roce);
    peer_blob(blobs + 2 * bs, 2, roce);
    capture_begin();
    assert_int_equal(gshmemi_ibgda_connect(g, blobs), GSHMEMI_OK);
    capture_end();
    for (int q = 0; q < gshmemi_ibgda_n_qps(g); q++) {
        gshmemi_ibgda_qp_info(g, q, &qi);
        assert_int_equal(fake_qp_state(qi.qpn), 3); /* RTS */
    }
    /* the last QP (to PE 2, k 1): its transitions name the peer's QP for PE 0 and its address */
    c = fake_last(0x502);
    assert_int_equal(bits(c, 0x48, 24), qi.qpn);
    assert_int_equal(bits(c, 0xc0 + 0x490, 3), 7);          /* rre, rwe, rae */
    assert_int_equal(bits(c, 0xc0 + 0x48c, 4), 3);          /* atomics up to 8 bytes */
    assert_int_equal(bits(c, 0x180 + 0x128, 8), 1);         /* port */
    c = fake_last(0x503);
    assert_int_equal(bits(c, 0xc0 + 0xa8, 24), 0x2000 + 0x00 + 1); /* PE 2's QP 1 to PE 0 */
    assert_int_equal(bits(c, 0xc0 + 0x4a8, 24), 0x302);     /* PE 2's PSN */
    assert_int_equal(bits(c, 0xc0 + 0x40, 3), 3);           /* the smaller MTU */
    if (roce) {
        assert_int_equal(bits(c, 0x180 + 0x28, 1), 1);      /* GRH */
        for (int i = 0; i < 16; i++) assert_int_equal(c[(0x180 + 0x80) / 8 + i], 0x20 + i);
        assert_memory_equal(c + (0x180 + 0x130) / 8, ((const uint8_t *(*)(void))fake_sym("fake_mlx5_mac"))(), 6);
    } else {
        assert_int_equal(bits(c, 0x180 + 0x28, 1), 0);
        assert_int_equal(bits(c, 0x180 + 0x30, 16), 22);    /* PE 2's LID */
    }
    c = fake_last(0x504);
    assert_int_equal(bits(c, 0xc0 + 0x3c8, 24), me.addr.psn);
    assert_int_equal(bits(c, 0xc0 + 0x38d, 3), 7);          /* retries */

    /* memory regions: by address, then through a dmabuf (the fd's offset maps addr); close
     * releases the one still registered */
    {
        static char heap[2][8192];
        gshmemi_ibgda_mr_t *m1, *m2;
        uint32_t l1, r1, l2, r2;
        uint64_t off, iova;
        int before = fake_live();
        assert_int_equal(gshmemi_ibgda_reg_mr(g, heap[0], sizeof(heap[0]), -1, 0, &m1, &l1, &r1), GSHMEMI_OK);
        assert_int_equal(gshmemi_ibgda_reg_mr(g, heap[1], sizeof(heap[1]), 5, 0x1000, &m2, &l2, &r2), GSHMEMI_OK);
        assert_true(l1 && r1 && l2 && r2 && l1 != l2 && r1 != r2);
        assert_int_equal(((int (*)(uint64_t *, uint64_t *))fake_sym("fake_mlx5_last_dmabuf"))(&off, &iova), 5);
        assert_int_equal(off, 0x1000);
        assert_true(iova == (uint64_t)(uintptr_t)heap[1]);
        assert_int_equal(fake_live(), before + 2);
        gshmemi_ibgda_dereg_mr(g, m1);
        assert_int_equal(fake_live(), before + 1);
        capture_begin();
        assert_int_equal(gshmemi_ibgda_reg_mr(g, NULL, 64, -1, 0, &m1, &l1, &r1), GSHMEMI_ERR_INVALID);
        log = capture_end();
        assert_non_null(strstr(log, "registering memory for IBGDA: empty range"));
        assert_null(m1);
        /* a dmabuf registration that fails falls back to the address (one info line) */
        fake_fail_at(1); /* the next call: the dmabuf one */
        capture_begin();
        assert_int_equal(gshmemi_ibgda_reg_mr(g, heap[0], sizeof(heap[0]), 6, 0, &m1, &l1, &r1), GSHMEMI_OK);
        log = capture_end();
        assert_non_null(strstr(log, "INFO ibgda: fake_mlx5_0: registering 8192 bytes at "));
        assert_non_null(strstr(log, "through its dmabuf failed (Bad address); trying by address"));
        assert_null(strstr(log, "ERROR"));
        assert_int_equal(count_lines(log), 1);
        assert_non_null(m1);
        assert_int_equal(fake_live(), before + 2);
        gshmemi_ibgda_dereg_mr(g, m1);
        fake_fail_at(0);
    }

    gshmemi_ibgda_close(g);
    assert_int_equal(fake_live(), 0);
    free(blobs);
}

static void test_job_ib(void **state)
{
    (void)state;
    run_job(0);
}
static void test_job_roce(void **state)
{
    (void)state;
    run_job(1);
}

/* Every fallible call of the fake failing in turn: open releases what it made itself, a failed
 * connect leaves what close releases; nothing survives, and every failure says something. */
static void test_unwind(void **state)
{
    size_t bs = gshmemi_ibgda_blob_size(N_PES, N_RC);
    char *blobs = calloc(N_PES, bs);
    int n, rc, roce, failures = 0;
    (void)state;
    for (roce = 0; roce < 2; roce++) {
        fake_config(1, 1, roce ? 2 : 1, 1);
        peer_blob(blobs + bs, 1, roce);
        peer_blob(blobs + 2 * bs, 2, roce);
        for (n = 1;; n++) {
            gshmemi_ibgda_t *g = NULL;
            const char *log;
            assert_true(n < 500);
            fake_fail_at(n);
            capture_begin();
            rc = gshmemi_ibgda_open(&args, &g);
            if (rc == GSHMEMI_OK) rc = gshmemi_ibgda_connect(g, blobs);
            if (rc == GSHMEMI_OK) {
                static char chunk[4096];
                gshmemi_ibgda_mr_t *m;
                uint32_t lk, rk;
                rc = gshmemi_ibgda_reg_mr(g, chunk, sizeof(chunk), -1, 0, &m, &lk, &rk);
            }
            gshmemi_ibgda_close(g);
            log = capture_end();
            assert_int_equal(fake_live(), 0);
            if (fake_calls() < n) { /* the n-th call never came: the whole setup passed */
                assert_int_equal(rc, GSHMEMI_OK);
                break;
            }
            /* the one failure absorbed: no non-cached UAR, a blue-flame one is taken */
            if (rc == GSHMEMI_OK) assert_non_null(strstr(log, "no non-cached UAR"));
            assert_true(strlen(log) > 0);
            failures++;
        }
    }
    /* both link layers get this far: device, port, PD, UAR, EQ, 3 umems, 4 CQs and QPs, 12
     * transitions (RoCE: 4 address handles more) */
    assert_true(failures > 2 * 30);
    fake_fail_at(0);
    free(blobs);
}

/* ---- blob checks */
static void test_blob_check(void **state)
{
    size_t bs = gshmemi_ibgda_blob_size(N_PES, N_RC);
    char *b = calloc(1, bs);
    gshmemi_ibgda_blob_t h;
    const char *log;
    (void)state;
    assert_int_equal(bs, sizeof(gshmemi_ibgda_blob_t) + N_PES * N_RC * 4);
    capture_begin();
    assert_int_equal(gshmemi_ibgda_blob_check(b, 4, N_PES, N_RC, NULL), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "PE 4 published no IBGDA address (its IBGDA setup did not open)"));
    peer_blob(b, 1, 0);
    assert_int_equal(gshmemi_ibgda_blob_check(b, 1, N_PES, N_RC, &h), GSHMEMI_OK);
    capture_begin();
    assert_int_equal(gshmemi_ibgda_blob_check(b, 1, N_PES, 3, NULL), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "PE 1 published QPs for 3 PEs x 2 QPs, this PE expects 3 x 3"));
    h.addr.mtu = 9;
    memcpy(b, &h, sizeof(h));
    capture_begin();
    assert_int_equal(gshmemi_ibgda_blob_check(b, 1, N_PES, N_RC, NULL), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "PE 1 published a malformed IBGDA address (port 1, mtu code 9, link layer 1)"));
    free(b);
}

static void test_layout(void **state)
{
    gshmemi_ibgda_layout_t l;
    const char *log;
    (void)state;
    assert_int_equal(gshmemi_ibgda_layout(3, 10, 4, &l), GSHMEMI_OK);
    assert_int_equal(l.wq_stride, 64 << 10);
    assert_int_equal(l.cq_stride, 4096); /* 16 CQEs, a page of their own */
    assert_int_equal(l.wq_bytes, 3 * (64 << 10));
    assert_int_equal(l.dbr_bytes, 4096); /* 3 * 2 records of 64 bytes, a whole page */
    capture_begin();
    assert_int_equal(gshmemi_ibgda_layout(3, 16, 4, &l), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "log_sq_bbs 16 is above 15"));
}

/* ---- doorbell mode */
static void test_doorbell_mode(void **state)
{
    const char *log;
    int mode = -1;
    (void)state;
    capture_begin();
    assert_int_equal(gshmemi_ibgda_doorbell_mode(GSHMEMI_DOORBELL_AUTO, 1, NULL, &mode), GSHMEMI_OK);
    log = capture_end();
    assert_int_equal(mode, GSHMEMI_DOORBELL_GPU);
    assert_non_null(strstr(log, "INFO ibgda: doorbells rung by the GPU (GSHMEM_IBGDA_DOORBELL=auto: the doorbell page maps for the GPU)"));
    assert_int_equal(count_lines(log), 1);

    capture_begin();
    assert_int_equal(gshmemi_ibgda_doorbell_mode(GSHMEMI_DOORBELL_AUTO, 0, "cudaHostRegister(IoMemory): operation not supported", &mode), GSHMEMI_OK);
    log = capture_end();
    assert_int_equal(mode, GSHMEMI_DOORBELL_CPU);
    assert_non_null(strstr(log, "doorbells rung by a host thread (GSHMEM_IBGDA_DOORBELL=auto: the doorbell page could not be mapped for the GPU: cudaHostRegister(IoMemory): operation not supported)"));

    mode = -1;
    capture_begin();
    assert_int_equal(gshmemi_ibgda_doorbell_mode(GSHMEMI_DOORBELL_CPU, 1, NULL, &mode), GSHMEMI_OK);
    log = capture_end();
    assert_int_equal(mode, GSHMEMI_DOORBELL_CPU);
    assert_non_null(strstr(log, "(GSHMEM_IBGDA_DOORBELL=cpu)"));

    capture_begin();
    assert_int_equal(gshmemi_ibgda_doorbell_mode(GSHMEMI_DOORBELL_GPU, 1, NULL, &mode), GSHMEMI_OK);
    capture_end();
    assert_int_equal(mode, GSHMEMI_DOORBELL_GPU);

    mode = -1;
    capture_begin();
    assert_int_equal(gshmemi_ibgda_doorbell_mode(GSHMEMI_DOORBELL_GPU, 0, "no PeerMappingOverride", &mode), GSHMEMI_ERR_UNSUPPORTED);
    log = capture_end();
    assert_int_equal(mode, -1);
    assert_non_null(strstr(log, "ERROR ibgda: GSHMEM_IBGDA_DOORBELL=gpu, but the doorbell page could not be mapped for the GPU (no PeerMappingOverride); set GSHMEM_IBGDA_DOORBELL=cpu or auto"));
}

/* ---- what the transport (ibgda.c, GSHMEM_IBGDA_NIC=hw) uses */

static int probe_logged(int forced, const char **log)
{
    int r;
    capture_begin();
    r = gshmemi_ibgda_probe(forced);
    *log = capture_end();
    return r;
}

/* the route's probe: one line naming why, info under auto (the proxy serves), error when forced;
 * nothing kept either way */
static void test_probe(void **state)
{
    const char *log;
    (void)state;
    fake_config(0, 0, 1, 1); /* no device */
    assert_int_equal(probe_logged(0, &log), 0);
    assert_non_null(strstr(log, "INFO ibgda: GSHMEM_REMOTE_TRANSPORT=auto: the proxy serves this PE's remote peers, no IBGDA: no RDMA "
                                "device on this host (libibverbs lists none): no IBGDA"));
    assert_int_equal(count_lines(log), 1);
    assert_int_equal(probe_logged(1, &log), 0);
    assert_non_null(strstr(log, "ERROR ibgda: GSHMEM_REMOTE_TRANSPORT=ibgda with GSHMEM_IBGDA_NIC=hw, but this PE cannot use IBGDA: no RDMA "
                                "device on this host"));
    assert_int_equal(count_lines(log), 1);
    gshmemi_log_level = GSHMEMI_LOG_WARN; /* the forced error shows at any level, the auto line at info only */
    assert_int_equal(probe_logged(0, &log), 0);
    assert_int_equal(count_lines(log), 0);
    assert_int_equal(probe_logged(1, &log), 0);
    assert_int_equal(count_lines(log), 1);
    gshmemi_log_level = GSHMEMI_LOG_INFO;

    fake_config(1, 0, 1, 1); /* not mlx5 */
    assert_int_equal(probe_logged(0, &log), 0);
    assert_non_null(strstr(log, "no IBGDA: no mlx5 RDMA device (fake_other_0 is not an mlx5 (ConnectX) device"));
    assert_int_equal(count_lines(log), 1);
    fake_config(1, 1, 1, 0); /* no DEVX */
    assert_int_equal(probe_logged(1, &log), 0);
    assert_non_null(strstr(log, "cannot use IBGDA: no usable mlx5 device (fake_mlx5_0: mlx5dv_open_device with DEVX failed: "));
    assert_int_equal(count_lines(log), 1);
    assert_int_equal(fake_live(), 0);

    gshmemi_ibgda_set_libraries_for_test("libibverbs-gshmem-test-missing.so.1", FAKE_MLX5);
    assert_int_equal(probe_logged(0, &log), 0);
    assert_non_null(strstr(log, "no IBGDA: libibverbs-gshmem-test-missing.so.1 is missing ("));
    assert_int_equal(count_lines(log), 1);
    gshmemi_ibgda_set_libraries_for_test(FAKE_MLX5, FAKE_MLX5);

    env_ib_device = "mlx5_9"; /* named and absent: its own error, then the line */
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    fake_config(1, 1, 1, 1);
    assert_int_equal(probe_logged(0, &log), 0);
    assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=mlx5_9: no such RDMA device on this host"));
    assert_non_null(strstr(log, "no IBGDA: the device GSHMEM_IB_DEVICE=mlx5_9 names cannot be used (logged above)"));
    assert_int_equal(count_lines(log), 2);
    env_ib_device = NULL;
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);

    assert_int_equal(probe_logged(0, &log), 1); /* a ConnectX: opened, and closed again */
    assert_non_null(strstr(log, "fake_mlx5_0 port 1 opens with DEVX"));
    assert_int_equal(count_lines(log), 1);
    assert_int_equal(fake_live(), 0);
}

/* the device records from the setup: every QP of each peer at peer * N_RC + k, collapsed CQs of
 * one CQE, the doorbell register or none (cpu doorbells), the aux areas in QP order */
static void check_records(int gpu_doorbell)
{
    gshmemi_ibgda_t *g;
    gshmemi_ibgda_qp_t recs[N_PES * N_RC];
    gshmemi_ibgda_gpu_view_t v;
    gshmemi_ibgda_qp_info_t qi;
    const char *log;
    const uint8_t *c;
    int mode = -1, slot = 0;
    char *gpu = (char *)(uintptr_t)0x7f0000000000ull, *host_dbr = (char *)(uintptr_t)0x200000000ull; /* addresses only: never touched */

    args.log_cqes = 0;
    args.collapsed_cq = 1;
    assert_int_equal(open_logged(&g, &log), GSHMEMI_OK);
    c = fake_last(0x400); /* CREATE_CQ: collapsed, one CQE */
    assert_int_equal(bits(c, 0x80 + 0xb, 1), 1);
    assert_int_equal(bits(c, 0x80 + 0x63, 5), 0);

    capture_begin();
    assert_int_equal(gshmemi_ibgda_doorbell_mode(GSHMEMI_DOORBELL_AUTO, gpu_doorbell, gpu_doorbell ? NULL : "cudaHostRegister failed",
                                                 &mode), GSHMEMI_OK);
    capture_end();
    assert_int_equal(mode, gpu_doorbell ? GSHMEMI_DOORBELL_GPU : GSHMEMI_DOORBELL_CPU);
    memset(&v, 0, sizeof(v));
    memset(recs, 0xab, sizeof(recs));
    for (int k = 0; k < N_RC; k++) recs[k].sq = NULL; /* this PE: not filled */
    v.wq = gpu;
    v.cq = gpu + lay.wq_bytes;
    v.dbr = v.dbr_cq = mode == GSHMEMI_DOORBELL_CPU ? host_dbr : gpu + lay.wq_bytes + lay.cq_bytes;
    v.db = mode == GSHMEMI_DOORBELL_GPU ? (volatile uint64_t *)(gpu + (1u << 30)) : NULL;
    v.aux = gpu + (2u << 30);
    v.aux_stride = gshmemi_ibgda_aux_bytes(1u << LOG_SQ);
    assert_int_equal(v.aux_stride, 4096); /* 384 + 64 * 8 + 64 bytes, a page */
    assert_int_equal(gshmemi_ibgda_aux_bytes(1024), 12288); /* the transport's 1024 slots: 384 + 8192 + 1024, three pages */
    assert_int_equal(gshmemi_ibgda_fill_records(g, &v, recs), N_PES - 1);
    for (int k = 0; k < N_RC; k++) assert_null(recs[k].sq);
    for (int q = 0; q < gshmemi_ibgda_n_qps(g); q++) {
        gshmemi_ibgda_qp_t *r;
        gshmemi_ibgda_qp_info(g, q, &qi);
        assert_true(qi.k < N_RC);
        r = &recs[qi.peer * N_RC + qi.k];
        assert_ptr_equal(r->sq, gpu + qi.wq_offset);
        assert_ptr_equal(r->cq, v.cq + qi.cq_offset);
        assert_ptr_equal(r->sq_dbrec, v.dbr + qi.qp_dbr_offset);
        assert_ptr_equal(r->cq_dbrec, v.dbr + qi.cq_dbr_offset);
        assert_ptr_equal(r->db, v.db);
        assert_ptr_equal(r->ctr, v.aux + (size_t)slot * v.aux_stride);
        assert_ptr_equal(r->result, (char *)r->ctr + 48 * 8);
        assert_ptr_equal(r->bbs, (char *)r->result + 64 * 8);
        assert_int_equal(r->sq_bbs, 1u << LOG_SQ);
        assert_int_equal(r->ncqe, 1);
        assert_int_equal(r->qpn, qi.qpn);
        assert_int_equal(r->lkey, 0); /* keys come with the heap's registration */
        assert_int_equal(r->rkey, 0);
        assert_int_equal(r->raddr, 0);
        slot++;
    }
    assert_int_equal(slot, (N_PES - 1) * N_RC);
    assert_true(recs[1 * N_RC + 1].qpn != recs[1 * N_RC].qpn && recs[1 * N_RC + 1].sq != recs[1 * N_RC].sq);
    if (mode == GSHMEMI_DOORBELL_CPU)
        assert_true((char *)recs[N_RC].sq_dbrec >= host_dbr && (char *)recs[2 * N_RC + 1].sq_dbrec < host_dbr + lay.dbr_bytes);
    else assert_non_null(recs[N_RC].db);
    gshmemi_ibgda_close(g);
    assert_int_equal(fake_live(), 0);
}

static void test_records_gpu_doorbell(void **state)
{
    (void)state;
    check_records(1);
}

static void test_records_cpu_doorbell(void **state)
{
    (void)state;
    check_records(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_libibverbs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_libmlx5, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_mlx5, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_devx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_umem_dmabuf_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_ib, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_roce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_doorbell_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_gpu_doorbell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_cpu_doorbell, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
