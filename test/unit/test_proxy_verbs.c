/* The proxy's verbs backend on a host without an RDMA device: open's refusals and their messages
 * (read back from stderr), GSHMEM_IB_DEVICE's parsing, the pure parts (blob, key lookup across
 * chunks, the CAS-loop step, the error-completion message), and every operation against a fake
 * libibverbs (fake_ibverbs.c) whose QPs act on this process's memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <cmocka.h>

#include "fake_ibverbs_helpers.h"

#include "stderr_capture.h"

#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "transports/common/backend.h"
#include "transports/proxy/verbs.h"

/* The backend reaches the driver only through these; no test here gets that far. */
gshmemi_driver_t gshmemi_cu;
const char *gshmemi_cu_errstr(CUresult res)
{
    (void)res;
    return "no driver in this test";
}


/* ---- the environment, through the real table */
static const char *env_ib_device;
static const char *fake_get(const char *name)
{
    if (strcmp(name, "GSHMEM_IB_DEVICE") == 0) return env_ib_device;
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    env_ib_device = NULL;
    gshmemi_log_level = GSHMEMI_LOG_INFO;
    gshmemi_verbs_set_library_for_test(NULL);
    return 0;
}

/* Opens the backend with GSHMEM_IB_DEVICE=ib_device read through the table; unchecked: set after
 * it, as if the table had let a bad value through, so the backend's own refusal shows. */
static int open_as(const char *ib_device, int unchecked, gshmemi_proxy_backend_t **be, const char **log)
{
    gshmemi_transport_ctx_t ctx;
    unsigned char blob[GSHMEMI_VERBS_BLOB_SIZE];
    int rc;

    memset(&ctx, 0, sizeof(ctx));
    ctx.my_pe = 0;
    ctx.n_pes = 1;
    ctx.peer_timeout = 1.0;
    env_ib_device = unchecked ? NULL : ib_device;
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    if (unchecked) gshmemi_env.IB_DEVICE = ib_device;
    *be = (gshmemi_proxy_backend_t *)&ctx; /* open must overwrite it */
    capture_begin();
    rc = gshmemi_proxy_backend_verbs.open(&ctx, be, blob);
    *log = capture_end();
    return rc;
}

static int open_with(const char *ib_device, gshmemi_proxy_backend_t **be, const char **log)
{
    return open_as(ib_device, 0, be, log);
}

/* an RDMA device is present here (a host with a NIC): the no-device cases cannot be shown */
static int have_rdma_device(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    struct dirent *e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n > 0;
}

static void test_no_device(void **state)
{
    gshmemi_proxy_backend_t *be;
    const char *log;
    (void)state;
    if (have_rdma_device()) skip();
    assert_int_equal(open_with(NULL, &be, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_null(be);
    assert_non_null(strstr(log, "INFO verbs: no RDMA device on this host"));
    assert_null(strstr(log, "ERROR"));
    gshmemi_proxy_backend_verbs.close(be); /* NULL: nothing */

    /* the reason is info only: at the default level (warn) the fallback is silent */
    gshmemi_log_level = GSHMEMI_LOG_WARN;
    assert_int_equal(open_with("", &be, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_null(strstr(log, "gshmem"));
}

static void test_named_device_missing(void **state)
{
    gshmemi_proxy_backend_t *be;
    const char *log;
    (void)state;
    gshmemi_log_level = GSHMEMI_LOG_WARN; /* an error whatever the level */
    assert_int_equal(open_with("mlx5_9", &be, &log), GSHMEMI_ERR_INVALID);
    assert_null(be);
    assert_non_null(strstr(log, "ERROR verbs: GSHMEM_IB_DEVICE=mlx5_9: no such RDMA device on this host (devices present: "));
    if (!have_rdma_device()) assert_non_null(strstr(log, "devices present: none"));
    /* with a port too */
    assert_int_equal(open_with("mlx5_9:2", &be, &log), GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=mlx5_9:2: no such RDMA device"));
}

static void test_bad_port_text(void **state)
{
    static const char *bad[] = {"mlx5_0:", "mlx5_0:x", "mlx5_0:0", "mlx5_0:256", "mlx5_0:1x", ":1", "mlx5_0:-1",
                                "mlx5_0:+1", "mlx 0", "mlx5_0:99999999999999999999"};
    gshmemi_proxy_backend_t *be;
    const char *log;
    char want[128];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gshmemi_env_t env;
        /* the table refuses it when it is read (the parser is the same), */
        env_ib_device = bad[i];
        capture_begin();
        assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_ERR_INVALID);
        log = capture_end();
        assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=\""));
        /* and so does the backend, should a value get past it */
        assert_int_equal(open_as(bad[i], 1, &be, &log), GSHMEMI_ERR_INVALID);
        assert_null(be);
        snprintf(want, sizeof(want), "ERROR verbs: GSHMEM_IB_DEVICE=%s: ", bad[i]);
        assert_non_null(strstr(log, want));
    }
    /* a name longer than a device name can be */
    {
        char longname[100];
        memset(longname, 'm', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_int_equal(open_as(longname, 1, &be, &log), GSHMEMI_ERR_INVALID);
        assert_non_null(strstr(log, "expected a device name of 1 to 63 characters"));
    }
}

static void test_parse_device(void **state)
{
    char name[64];
    int port = -1;
    (void)state;
    assert_int_equal(gshmemi_verbs_parse_device("mlx5_0:1", name, sizeof(name), &port), GSHMEMI_OK);
    assert_string_equal(name, "mlx5_0");
    assert_int_equal(port, 1);
    assert_int_equal(gshmemi_verbs_parse_device("mlx5_10:255", name, sizeof(name), &port), GSHMEMI_OK);
    assert_string_equal(name, "mlx5_10");
    assert_int_equal(port, 255);
    assert_int_equal(gshmemi_verbs_parse_device("rocep1s0f0", name, sizeof(name), &port), GSHMEMI_OK);
    assert_string_equal(name, "rocep1s0f0");
    assert_int_equal(port, 0);
    assert_int_equal(gshmemi_verbs_parse_device(NULL, name, sizeof(name), &port), GSHMEMI_OK);
    assert_string_equal(name, "");
    assert_int_equal(port, 0);
}

static void test_library_missing(void **state)
{
    gshmemi_proxy_backend_t *be;
    const char *log;
    (void)state;
    gshmemi_verbs_set_library_for_test("libibverbs-gshmem-test-missing.so.1");
    assert_int_equal(open_with(NULL, &be, &log), GSHMEMI_ERR_UNSUPPORTED);
    assert_null(be);
    assert_non_null(strstr(log, "INFO verbs: libibverbs-gshmem-test-missing.so.1 is missing ("));
    assert_non_null(strstr(log, "no verbs backend on this host"));
    assert_null(strstr(log, "ERROR"));
    /* a named device cannot be checked without the library: still unsupported, not a crash */
    assert_int_equal(open_with("mlx5_0", &be, &log), GSHMEMI_ERR_UNSUPPORTED);
    /* bad text is refused before the library is looked for */
    assert_int_equal(open_as("mlx5_0:q", 1, &be, &log), GSHMEMI_ERR_INVALID);
    gshmemi_verbs_set_library_for_test(NULL);
}

static void test_cqe_message(void **state)
{
    char buf[256];
    (void)state;
    assert_string_equal(gshmemi_verbs_cqe_message(buf, sizeof(buf), GSHMEMI_VERBS_OP_WRITE, 3, "remote access error",
                                                  10, 0x88),
                        "RDMA WRITE to PE 3 failed: remote access error (status 10, vendor error 0x88)");
    assert_string_equal(gshmemi_verbs_cqe_message(buf, sizeof(buf), GSHMEMI_VERBS_OP_READ, 0,
                                                  "transport retry counter exceeded", 12, 0x81),
                        "RDMA READ from PE 0 failed: transport retry counter exceeded (status 12, vendor error 0x81)");
    assert_string_equal(gshmemi_verbs_cqe_message(buf, sizeof(buf), GSHMEMI_VERBS_OP_CMP_SWAP, 7,
                                                  "remote invalid request error", 9, 0),
                        "ATOMIC CMP_SWAP on PE 7 failed: remote invalid request error (status 9, vendor error 0x0)");
    assert_string_equal(gshmemi_verbs_cqe_message(buf, sizeof(buf), GSHMEMI_VERBS_OP_FETCH_ADD, 1, NULL, 4, 0x32),
                        "ATOMIC FETCH_ADD on PE 1 failed: unknown status (status 4, vendor error 0x32)");
    assert_string_equal(gshmemi_verbs_cqe_message(buf, sizeof(buf), GSHMEMI_VERBS_OP_WRITE_INLINE, 2, "x", 1, 0),
                        "RDMA WRITE (inline value) to PE 2 failed: x (status 1, vendor error 0x0)");
    /* truncated, still terminated */
    assert_int_equal(strlen(gshmemi_verbs_cqe_message(buf, 12, GSHMEMI_VERBS_OP_WRITE, 3, "y", 1, 0)), 11);
}

static void test_blob(void **state)
{
    gshmemi_verbs_blob_t in, out;
    unsigned char bytes[GSHMEMI_VERBS_BLOB_SIZE];
    const char *log;
    (void)state;
    memset(&in, 0, sizeof(in));
    in.magic = GSHMEMI_VERBS_BLOB_MAGIC;
    in.psn = 0x1234;
    in.lid = 77;
    in.port = 2;
    in.mtu = 5; /* IBV_MTU_4096 */
    in.link_layer = 2;
    for (int i = 0; i < 16; i++) in.gid[i] = (uint8_t)(0xf0 + i);
    gshmemi_verbs_blob_pack(&in, bytes);
    memset(&out, 0, sizeof(out));
    assert_int_equal(gshmemi_verbs_blob_unpack(bytes, 4, &out), GSHMEMI_OK);
    assert_int_equal(out.psn, 0x1234);
    assert_int_equal(out.lid, 77);
    assert_int_equal(out.port, 2);
    assert_int_equal(out.mtu, 5);
    assert_int_equal(out.link_layer, 2);
    assert_memory_equal(out.gid, in.gid, 16);
    assert_int_equal(gshmemi_proxy_backend_verbs.blob_size, sizeof(gshmemi_verbs_blob_t));

    /* a PE whose backend did not open publishes zeros */
    memset(bytes, 0, sizeof(bytes));
    capture_begin();
    assert_int_equal(gshmemi_verbs_blob_unpack(bytes, 5, &out), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "PE 5 published no verbs address"));
    in.port = 0;
    gshmemi_verbs_blob_pack(&in, bytes);
    capture_begin();
    assert_int_equal(gshmemi_verbs_blob_unpack(bytes, 6, &out), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "PE 6 published a malformed verbs address (port 0"));
}

static void test_rkey_lookup(void **state)
{
    /* 3 PEs, 3 chunks; PE 1 has another layout (a 2 MiB chunk where the others have 1 MiB), PE 2
     * did not register the third chunk */
    enum { N = 3, C = 3, MiB = 1 << 20 };
    gshmemi_verbs_rkey_t t[C * N];
    uint64_t raddr, avail;
    uint32_t rkey;
    (void)state;
    memset(t, 0, sizeof(t));
    for (int pe = 0; pe < N; pe++) {
        uint64_t base = 0x7f0000000000ull + (uint64_t)pe * 0x100000000ull;
        uint64_t off = 0;
        for (int c = 0; c < C; c++) {
            gshmemi_verbs_rkey_t *k = &t[c * N + pe];
            uint64_t size = (pe == 1 && c == 1) ? 2 * MiB : MiB;
            if (pe == 2 && c == 2) continue;
            k->offset = off;
            k->size = size;
            k->addr = base + off;
            k->rkey = 1000u * (pe + 1) + c;
            off += size;
        }
    }
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 0, 0, &raddr, &rkey, &avail), GSHMEMI_OK);
    assert_int_equal(raddr, 0x7f0000000000ull);
    assert_int_equal(rkey, 1000);
    assert_int_equal(avail, MiB);
    /* the last byte of PE 0's first chunk, then the first of its second */
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 0, MiB - 1, &raddr, &rkey, &avail), GSHMEMI_OK);
    assert_int_equal(rkey, 1000);
    assert_int_equal(avail, 1);
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 0, MiB, &raddr, &rkey, &avail), GSHMEMI_OK);
    assert_int_equal(rkey, 1001);
    assert_int_equal(raddr, 0x7f0000000000ull + MiB);
    /* PE 1's 2 MiB second chunk holds offset 2.5 MiB; its third starts at 3 MiB */
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 1, 2 * MiB + MiB / 2, &raddr, &rkey, &avail), GSHMEMI_OK);
    assert_int_equal(rkey, 2001);
    assert_int_equal(raddr, 0x7f0100000000ull + 2 * MiB + MiB / 2);
    assert_int_equal(avail, MiB / 2);
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 1, 3 * MiB + 8, &raddr, &rkey, &avail), GSHMEMI_OK);
    assert_int_equal(rkey, 2002);
    assert_int_equal(avail, MiB - 8);
    /* PE 0's heap ends at 3 MiB; PE 2's at 2 MiB (its third entry is empty) */
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 0, 3 * MiB, &raddr, &rkey, &avail), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 2, 2 * MiB, &raddr, &rkey, &avail), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 2, 2 * MiB - 1, &raddr, &rkey, &avail), GSHMEMI_OK);
    assert_int_equal(rkey, 3001);
    /* PEs out of range; no chunks yet */
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, 3, 0, &raddr, &rkey, &avail), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, C, N, -1, 0, &raddr, &rkey, &avail), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_verbs_rkey_lookup(t, 0, N, 0, 0, &raddr, &rkey, &avail), GSHMEMI_ERR_INVALID);
}

static void test_region_find(void **state)
{
    gshmemi_verbs_region_t r[3] = {
        {.addr = 0x10000, .size = 0x1000, .lkey = 11}, {.addr = 0x20000, .size = 0x4000, .lkey = 22}, {.addr = 0x11000, .size = 0x1000, .lkey = 33}};
    size_t avail = 0;
    (void)state;
    assert_int_equal(gshmemi_verbs_region_find(r, 3, (void *)0x10000, &avail), 0);
    assert_int_equal(avail, 0x1000);
    assert_int_equal(gshmemi_verbs_region_find(r, 3, (void *)0x10fff, &avail), 0);
    assert_int_equal(avail, 1);
    assert_int_equal(gshmemi_verbs_region_find(r, 3, (void *)0x11000, &avail), 2);
    assert_int_equal(gshmemi_verbs_region_find(r, 3, (void *)0x23000, &avail), 1);
    assert_int_equal(avail, 0x1000);
    assert_int_equal(gshmemi_verbs_region_find(r, 3, (void *)0x24000, &avail), -1);
    assert_int_equal(gshmemi_verbs_region_find(r, 3, (void *)0xffff, &avail), -1);
    assert_int_equal(gshmemi_verbs_region_find(r, 0, (void *)0x10000, &avail), -1);
}

static void test_amo_apply(void **state)
{
    const uint64_t w = 0x11223344aabbccddull;
    (void)state;
    /* 8-byte */
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_SET, 8, 0, w, 5, 0), 5);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_SWAP, 8, 0, w, 6, 0), 6);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_FETCH, 8, 0, w, 6, 0), w);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_AND, 8, 0, w, 0xff, 0), 0xdd);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_FETCH_OR, 8, 0, 0x10, 0x01, 0), 0x11);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_XOR, 8, 0, w, w, 0), 0);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_CSWAP, 8, 0, 7, 9, 7), 9);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_CSWAP, 8, 0, 7, 9, 8), 7);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_ADD, 8, 0, ~0ull, 2, 0), 1);
    /* 4-byte, low half: the high half untouched, an add wraps in 32 bits without carrying */
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_SET, 4, 0, w, 0x01020304, 0), 0x1122334401020304ull);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_ADD, 4, 0, 0x00000005ffffffffull, 2, 0),
                     0x0000000500000001ull);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_FETCH_ADD, 4, 0, w, 1, 0), 0x11223344aabbccdeull);
    /* 4-byte, high half */
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_SET, 4, 32, w, 0x01020304, 0), 0x01020304aabbccddull);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_ADD, 4, 32, 0xffffffff00000007ull, 1, 0), 7);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_CSWAP, 4, 32, w, 0xabc, 0x11223344), 0x00000abcaabbccddull);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_CSWAP, 4, 32, w, 0xabc, 0xaabbccdd), w);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_OR, 4, 32, 0, 0x80000000u, 0), 0x8000000000000000ull);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_FETCH_XOR, 4, 32, w, 0xffffffffu, 0), 0xeeddccbbaabbccddull);
    assert_int_equal(gshmemi_verbs_amo_apply(GSHMEMI_AMO_FETCH, 4, 32, w, 0, 0), w);
}

/* ---- against test/unit/fake_ibverbs.c: a device whose QPs act on this process's memory, and a
 * bootstrap of 2 PEs where PE 1 mirrors PE 0 (fake_ibverbs_helpers.h) */

/* a stubbed driver that calls [fake_dev_base, +fake_dev_size) one device allocation */
static uintptr_t fake_dev_base;
static size_t fake_dev_size;
static unsigned long long fake_dev_id;

static CUresult stub_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    if (!fake_dev_base || p < fake_dev_base || p - fake_dev_base >= fake_dev_size) return CUDA_ERROR_NOT_FOUND;
    *base = fake_dev_base;
    *size = fake_dev_size;
    return CUDA_SUCCESS;
}

static CUresult stub_attr(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    if (attr != CU_POINTER_ATTRIBUTE_BUFFER_ID || !fake_dev_base || p < fake_dev_base ||
        p - fake_dev_base >= fake_dev_size)
        return CUDA_ERROR_INVALID_VALUE;
    *(unsigned long long *)data = fake_dev_id;
    return CUDA_SUCCESS;
}

static int dmabuf_ok;
static CUresult stub_handle(void *handle, CUdeviceptr p, size_t size, CUmemRangeHandleType type, unsigned long long flags)
{
    (void)p, (void)size;
    if (!dmabuf_ok || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || flags) return CUDA_ERROR_NOT_SUPPORTED;
    *(int *)handle = open("/dev/null", O_RDONLY); /* any open fd: the fake checks it is one */
    return CUDA_SUCCESS;
}

static void test_fake_refusals(void **state)
{
    gshmemi_proxy_backend_t *be;
    const char *log;
    (void)state;
    gshmemi_verbs_set_library_for_test(FAKE_IBVERBS);
    assert_int_equal(open_with("mlx5_9", &be, &log), GSHMEMI_ERR_INVALID);
    assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=mlx5_9: no such RDMA device on this host (devices present: fake_0)"));
    assert_int_equal(open_with("fake_0:2", &be, &log), GSHMEMI_ERR_SYSTEM);
    assert_non_null(strstr(log, "GSHMEM_IB_DEVICE=fake_0:2: no usable port (fake_0 port 2 DOWN)"));
    assert_int_equal(open_with("fake_0:3", &be, &log), GSHMEMI_ERR_SYSTEM);
    assert_non_null(strstr(log, "fake_0 has 2 port(s), no port 3"));
    assert_null(be);
    /* every failed open released what it made */
    assert_int_equal(((int (*)(void))fake_sym("fake_ibv_live"))(), 0);
    gshmemi_verbs_set_library_for_test(NULL);
}

#define MiB (1u << 20)

static void test_fake_ops(void **state)
{
    int (*live)(void), (*posted)(void), (*last_flags)(void), (*last_opcode)(void);
    void (*fail_next)(int, int), (*hold)(int);
    gshmemi_transport_ctx_t ctx;
    gshmemi_bootstrap_t bs;
    gshmemi_proxy_backend_t *be;
    const gshmemi_proxy_backend_ops_t *ops = &gshmemi_proxy_backend_verbs;
    unsigned char blobs[2][GSHMEMI_VERBS_BLOB_SIZE], pattern[256], *c0, *c1, *host, *chunk2 = NULL;
    gshmemi_verbs_blob_t b;
    gshmemi_heap_chunk_t ch0, ch1;
    int serve[2] = {0, 1}, idle = 0, p0, i;
    uint64_t f[8], w;
    const char *log;
    (void)state;

    gshmemi_verbs_set_library_for_test(FAKE_IBVERBS);
    memset(&bs, 0, sizeof(bs));
    bs.nranks = 2;
    bs.allgather = mirror_allgather;
    memset(&ctx, 0, sizeof(ctx));
    ctx.n_pes = 2;
    ctx.peer_timeout = 2.0;
    ctx.bs = &bs;
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    capture_begin();
    assert_int_equal(ops->open(&ctx, &be, blobs[0]), GSHMEMI_OK);
    log = capture_end();
    assert_non_null(strstr(log, "INFO verbs: opened fake_0 port 1 (InfiniBand, LID 17, MTU 4096, atomics yes)"));
    live = (int (*)(void))fake_sym("fake_ibv_live");
    posted = (int (*)(void))fake_sym("fake_ibv_posted");
    fail_next = (void (*)(int, int))fake_sym("fake_ibv_fail_next");
    hold = (void (*)(int))fake_sym("fake_ibv_hold");
    last_flags = (int (*)(void))fake_sym("fake_ibv_last_flags");
    last_opcode = (int (*)(void))fake_sym("fake_ibv_last_opcode");
    assert_int_equal(gshmemi_verbs_blob_unpack(blobs[0], 0, &b), GSHMEMI_OK);
    assert_int_equal(b.lid, 17);
    assert_int_equal(b.port, 1);
    assert_int_equal(b.mtu, IBV_MTU_4096);
    memcpy(blobs[1], blobs[0], sizeof(blobs[0]));
    /* the fake refuses an RTR without the peer's QP number, LID 17 and MTU 4096 */
    assert_int_equal(ops->connect(be, blobs, serve), GSHMEMI_OK);

    /* two chunks of 1 MiB, separately allocated (their addresses are not contiguous) */
    c0 = aligned_alloc(4096, MiB);
    c1 = aligned_alloc(4096, MiB);
    memset(c0, 0, MiB);
    memset(c1, 0, MiB);
    ch0 = (gshmemi_heap_chunk_t){.offset = 0, .size = MiB, .addr = (char *)c0};
    ch1 = (gshmemi_heap_chunk_t){.offset = MiB, .size = MiB, .addr = (char *)c1};
    capture_begin();
    assert_int_equal(ops->register_chunk(be, &ch0), GSHMEMI_OK);
    assert_int_equal(ops->register_chunk(be, &ch1), GSHMEMI_OK);
    log = capture_end();
    assert_non_null(strstr(log, "INFO verbs: heap chunk (1048576 bytes at "));
    assert_non_null(strstr(log, "no dmabuf registration (the CUDA driver entry points are not loaded); trying ibv_reg_mr (needs nvidia-peermem)"));

    /* a put across the chunk boundary is split in two writes */
    for (i = 0; i < 256; i++) pattern[i] = (unsigned char)(i * 7 + 1);
    memcpy(c1 + 4096, pattern, 256);
    p0 = posted();
    assert_int_equal(ops->put(be, 1, MiB - 100, c1 + 4096, 256), GSHMEMI_OK);
    assert_int_equal(posted() - p0, 2);
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    assert_memory_equal(c0 + MiB - 100, pattern, 100);
    assert_memory_equal(c1, pattern + 100, 156);
    /* get it back, into the heap and into plain host memory (registered on first use) */
    assert_int_equal(ops->get(be, 1, c1 + 8192, MiB - 100, 256), GSHMEMI_OK);
    host = calloc(1, 256);
    assert_int_equal(ops->get(be, 1, host, MiB - 100, 256), GSHMEMI_OK);
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    assert_memory_equal(c1 + 8192, pattern, 256);
    assert_memory_equal(host, pattern, 256);

    /* put_value: the low 2 bytes only */
    c0[202] = 0x55;
    assert_int_equal(ops->put_value(be, 1, 200, 0x1234beefull, 2), GSHMEMI_OK);
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    assert_int_equal(c0[200], 0xef);
    assert_int_equal(c0[201], 0xbe);
    assert_int_equal(c0[202], 0x55);

    /* atomics: native (8-byte add, fetch, compare-swap) and the CAS loop (the rest) */
    w = 10;
    memcpy(c0 + 512, &w, 8);
    w = 0xf0;
    memcpy(c0 + 520, &w, 8);
    memset(f, 0xa5, sizeof(f));
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_FETCH_ADD, 512, 5, 0, 8, &f[0]), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_CSWAP, 512, 99, 15, 8, &f[1]), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_SET, 516, 7, 0, 4, &f[2]), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_FETCH_ADD, 512, 1, 0, 4, &f[3]), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_FETCH_XOR, 520, 0xff, 0, 8, &f[4]), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_FETCH, 512, 0, 0, 8, &f[5]), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_ADD, 520, 1, 0, 8, NULL), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_CSWAP, 516, 9, 6, 4, &f[6]), GSHMEMI_OK); /* fails: 7 != 6 */
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    assert_int_equal(f[0], 10);
    assert_int_equal(f[1], 15);
    assert_int_equal(f[2], 0);
    assert_int_equal(f[3], 99);
    assert_int_equal(f[4], 0xf0);
    assert_int_equal(f[5], (7ull << 32) | 100);
    assert_int_equal(f[6], 7);
    memcpy(&w, c0 + 512, 8);
    assert_int_equal(w, (7ull << 32) | 100);
    memcpy(&w, c0 + 520, 8);
    assert_int_equal(w, 0x10);
    assert_int_equal(ops->progress(be, &idle), GSHMEMI_OK);
    assert_int_equal(idle, 1);

    /* an atomic after a write to the peer is fenced; one after an atomic is not */
    assert_int_equal(ops->put_value(be, 1, 600, 1, 8), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_ADD, 608, 1, 0, 8, NULL), GSHMEMI_OK);
    assert_int_equal(last_opcode(), IBV_WR_ATOMIC_FETCH_AND_ADD);
    assert_true(last_flags() & IBV_SEND_FENCE);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_ADD, 608, 1, 0, 8, NULL), GSHMEMI_OK);
    assert_false(last_flags() & IBV_SEND_FENCE);
    assert_int_equal(ops->put(be, 1, 616, c1 + 4096, 8), GSHMEMI_OK);
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_SET, 624, 3, 0, 8, NULL), GSHMEMI_OK); /* CAS loop */
    assert_int_equal(last_opcode(), IBV_WR_ATOMIC_CMP_AND_SWP);
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    memcpy(&w, c0 + 608, 8);
    assert_int_equal(w, 2);
    memcpy(&w, c0 + 624, 8);
    assert_int_equal(w, 3);

    /* more than a send queue (256) and more than the atomic landing slots (1024) without a flush:
     * posting waits by polling */
    p0 = posted();
    for (i = 0; i < 300; i++) assert_int_equal(ops->put_value(be, 1, 1024 + 8 * (uint64_t)i, (uint64_t)i, 8), GSHMEMI_OK);
    for (i = 0; i < 1100; i++) assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_FETCH_ADD, 640, 1, 0, 8, &f[7]), GSHMEMI_OK);
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    assert_int_equal(posted() - p0, 1400);
    for (i = 0; i < 300; i++) {
        memcpy(&w, c0 + 1024 + 8 * i, 8);
        assert_int_equal(w, (uint64_t)i);
    }
    memcpy(&w, c0 + 640, 8);
    assert_int_equal(w, 1100);
    assert_int_equal(f[7], 1099);

    /* more non-heap buffers than the registration cache holds (64): the oldest are dropped; host
     * pages are all dropped at flush */
    {
        unsigned char *pages = aligned_alloc(4096, 70 * 4096);
        int base_live;
        assert_int_equal(ops->flush(be), GSHMEMI_OK);
        base_live = live();
        for (i = 0; i < 70; i++) assert_int_equal(ops->get(be, 1, pages + 4096 * i, 0, 16), GSHMEMI_OK);
        assert_int_equal(live() - base_live, 64);
        assert_int_equal(ops->get(be, 1, pages, MiB - 100, 16), GSHMEMI_OK); /* registered again */
        assert_int_equal(live() - base_live, 64);
        assert_int_equal(ops->flush(be), GSHMEMI_OK);
        assert_int_equal(live(), base_live);
        for (i = 1; i < 70; i++) assert_memory_equal(pages + 4096 * i, c0, 16);
        assert_memory_equal(pages, pattern, 16);
        free(pages);
    }

    /* a device buffer outside the heap (the driver stubbed): registered whole on first use, kept
     * across flushes, registered again once its buffer id changes (freed and reallocated) */
    {
        unsigned char *dev = aligned_alloc(4096, 65536);
        int base_live = live();
        fake_dev_base = (uintptr_t)dev;
        fake_dev_size = 65536;
        fake_dev_id = 41;
        gshmemi_cu.cuMemGetAddressRange = stub_range;
        gshmemi_cu.cuPointerGetAttribute = stub_attr;
        gshmemi_cu.cuMemGetHandleForAddressRange = stub_handle;
        capture_begin();
        assert_int_equal(ops->get(be, 1, dev + 100, MiB - 100, 64), GSHMEMI_OK);
        assert_int_equal(ops->get(be, 1, dev + 60000, MiB - 100, 64), GSHMEMI_OK);
        assert_int_equal(ops->flush(be), GSHMEMI_OK);
        assert_int_equal(live() - base_live, 1);
        fake_dev_id = 42;
        assert_int_equal(ops->get(be, 1, dev + 200, MiB - 100, 64), GSHMEMI_OK);
        assert_int_equal(ops->flush(be), GSHMEMI_OK);
        log = capture_end();
        assert_int_equal(live() - base_live, 1);
        assert_memory_equal(dev + 100, pattern, 64);
        assert_memory_equal(dev + 60000, pattern, 64);
        assert_memory_equal(dev + 200, pattern, 64);
        {
            const char *a = strstr(log, "INFO verbs: local buffer (65536 bytes at "), *b;
            assert_non_null(a);
            assert_non_null(strstr(a, "no dmabuf registration (cuMemGetHandleForAddressRange(DMA_BUF_FD) failed: no driver in this test)"));
            b = strstr(a + 1, "INFO verbs: local buffer (65536 bytes at ");
            assert_non_null(b); /* the second registration, after the id changed */
            assert_null(strstr(b + 1, "INFO verbs: local buffer"));
        }
        /* with dmabuf export working, a new chunk is registered by dmabuf, with no info line */
        {
            int (*dmabuf_regs)(void) = (int (*)(void))fake_sym("fake_ibv_dmabuf_regs");
            unsigned char *c2 = aligned_alloc(4096, MiB);
            gshmemi_heap_chunk_t ch2 = {.offset = 2 * MiB, .size = MiB, .addr = (char *)c2};
            int d0 = dmabuf_regs();
            dmabuf_ok = 1;
            capture_begin();
            assert_int_equal(ops->register_chunk(be, &ch2), GSHMEMI_OK);
            log = capture_end();
            assert_int_equal(dmabuf_regs() - d0, 1);
            assert_null(strstr(log, "no dmabuf registration"));
            assert_int_equal(ops->put_value(be, 1, 2 * MiB + 8, 0x77, 1), GSHMEMI_OK);
            assert_int_equal(ops->flush(be), GSHMEMI_OK);
            assert_int_equal(c2[8], 0x77);
            dmabuf_ok = 0;
            chunk2 = c2; /* freed after close */
        }
        gshmemi_cu.cuMemGetAddressRange = NULL;
        gshmemi_cu.cuPointerGetAttribute = NULL;
        fake_dev_base = 0;
        free(dev);
    }

    /* a peer that never completes: flush gives up after GSHMEM_PEER_TIMEOUT, naming the wait */
    ctx.peer_timeout = 0.2;
    hold(1);
    assert_int_equal(ops->put(be, 1, 0, c1 + 4096, 8), GSHMEMI_OK);
    capture_begin();
    assert_int_equal(ops->flush(be), GSHMEMI_ERR_TIMEOUT);
    log = capture_end();
    assert_non_null(strstr(log, "ERROR verbs: flush: 1 work request(s) still in flight after 0.2 s (GSHMEM_PEER_TIMEOUT)"));
    hold(0);
    assert_int_equal(ops->flush(be), GSHMEMI_OK);
    ctx.peer_timeout = 2.0;

    /* refusals, each naming what is wrong */
    capture_begin();
    assert_int_equal(ops->amo(be, 1, GSHMEMI_AMO_ADD, 516, 1, 0, 8, NULL), GSHMEMI_ERR_INVALID);
    assert_int_equal(ops->put(be, 1, 3 * MiB, c1, 8), GSHMEMI_ERR_INVALID);
    assert_int_equal(ops->put(be, 0, 0, c1, 8), GSHMEMI_ERR_INVALID);
    assert_int_equal(ops->put_value(be, 1, 0, 1, 3), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "amo: offset 516 of PE 1 is not 8-byte aligned"));
    assert_non_null(strstr(log, "put: offset 3145728 of PE 1's heap is in none of its registered chunks"));
    assert_non_null(strstr(log, "put: PE 0 is not reached by the verbs backend"));
    assert_non_null(strstr(log, "put_value: width 3 is not 1, 2, 4 or 8"));

    /* an error completion: reported with the peer and the opcode, sticky for the peer */
    fail_next(IBV_WC_REM_ACCESS_ERR, 0x88);
    assert_int_equal(ops->put(be, 1, 0, c1 + 4096, 8), GSHMEMI_OK);
    capture_begin();
    assert_int_equal(ops->flush(be), GSHMEMI_ERR_REMOTE);
    log = capture_end();
    assert_non_null(strstr(log, "ERROR verbs: RDMA WRITE to PE 1 failed: remote access error (status 10, vendor error 0x88)"));
    assert_int_equal(ops->put(be, 1, 0, c1 + 4096, 8), GSHMEMI_ERR_REMOTE);
    assert_int_equal(ops->progress(be, &idle), GSHMEMI_ERR_REMOTE);

    ops->close(be);
    assert_int_equal(live(), 0);
    free(host);
    free(chunk2);
    gshmemi_cu.cuMemGetHandleForAddressRange = NULL;
    free(c0);
    free(c1);
    gshmemi_verbs_set_library_for_test(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_no_device, setup),
        cmocka_unit_test_setup(test_named_device_missing, setup),
        cmocka_unit_test_setup(test_bad_port_text, setup),
        cmocka_unit_test_setup(test_parse_device, setup),
        cmocka_unit_test_setup(test_library_missing, setup),
        cmocka_unit_test_setup(test_cqe_message, setup),
        cmocka_unit_test_setup(test_blob, setup),
        cmocka_unit_test_setup(test_rkey_lookup, setup),
        cmocka_unit_test_setup(test_region_find, setup),
        cmocka_unit_test_setup(test_amo_apply, setup),
        cmocka_unit_test_setup(test_fake_refusals, setup),
        cmocka_unit_test_setup(test_fake_ops, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
