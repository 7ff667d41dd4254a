/* Host-initiated RMA and atomics to a verbs peer (transports/proxy/hostreq.c), end to end on the
 * CPU: application threads call the transport's forms, a thread standing in for the proxy thread
 * serves the queue, and the verbs backend runs each request against a fake libibverbs
 * (fake_ibverbs.c) whose QPs act on this process's memory (PE 1's heap is PE 0's own). Checked:
 * the work requests posted (opcode, remote address, rkey, length), the bytes moved, the fetched
 * values, and each failure's report (an error completion, a peer that never answers, a proxy
 * thread that never takes the request or stalls in it, a stopped proxy, bad PEs and addresses).
 * The queue's own cases (its 64 records, a withdrawn or abandoned request, progress extending
 * the wait) run against a small in-memory backend. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <cmocka.h>

#include "fake_ibverbs_helpers.h"

#include "fake_ibverbs.h"
#include "stderr_capture.h"

#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "transports/common/backend.h"
#include "transports/proxy/hostreq.h"
#include "transports/proxy/verbs.h"
#include "transports/route.h"

/* The backend reaches the driver only through these (stubbed below for a device buffer). */
gshmemi_driver_t gshmemi_cu;
const char *gshmemi_cu_errstr(CUresult res)
{
    (void)res;
    return "no driver in this test";
}

static const char *fake_get(const char *name)
{
    (void)name;
    return NULL;
}

#define MiB (1u << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the fixture: a verbs backend on the fake, a heap of two 1 MiB chunks registered (the heap's
 * reservation is 4 MiB: offsets from 2 MiB are in the heap but in no chunk), and a consumer
 * thread serving the queue as the proxy thread does */
typedef struct {
    gshmemi_transport_ctx_t ctx;
    gshmemi_bootstrap_t bs;
    gshmemi_heap_t heap;
    int route[2];
    const gshmemi_proxy_backend_ops_t *ops;
    gshmemi_proxy_backend_t *be;
    gshmemi_hostq_t *q;
    char *base;          /* the heap: base[0, 2 MiB) backed */
    pthread_t thread;
    int stop, paused, served;
    int pause_seen; /* the consumer saw paused at the top of its loop: it serves nothing until resumed */
    /* the fake */
    int (*live)(void), (*posted)(void);
    void (*fail_next)(int, int), (*hold)(int);
    fake_ibv_wr_fn wr;
    fake_ibv_rkey_at_fn rkey_at;
} fx_t;

static void *consumer(void *arg)
{
    fx_t *f = arg;
    while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&f->paused, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&f->pause_seen, 1, __ATOMIC_RELEASE);
            sched_yield();
        } else if (gshmemi_hostq_serve(f->q, f->ops, f->be)) {
            __atomic_fetch_add(&f->served, 1, __ATOMIC_RELEASE);
        } else {
            sched_yield();
        }
    }
    return NULL;
}

/* Pauses a consumer and returns once it is between requests and serves none until resumed (a
 * flag alone could meet a consumer already past its test of it). */
static void pause_consumer(int *paused, int *seen)
{
    __atomic_store_n(seen, 0, __ATOMIC_RELEASE);
    __atomic_store_n(paused, 1, __ATOMIC_RELEASE);
    for (int k = 0; k < 20000 && !__atomic_load_n(seen, __ATOMIC_ACQUIRE); k++) usleep(1000);
    assert_int_equal(__atomic_load_n(seen, __ATOMIC_ACQUIRE), 1);
}

static int fx_setup(void **state)
{
    unsigned char blobs[2][GSHMEMI_VERBS_BLOB_SIZE];
    int serve[2] = {0, 1};
    fx_t *f = calloc(1, sizeof(*f));
    gshmemi_heap_chunk_t ch0, ch1;

    assert_non_null(f);
    gshmemi_log_level = GSHMEMI_LOG_WARN;
    gshmemi_verbs_set_library_for_test(FAKE_IBVERBS);
    assert_int_equal(gshmemi_env_load(fake_get, &gshmemi_env), GSHMEMI_OK);
    f->bs.nranks = 2;
    f->bs.allgather = mirror_allgather;
    f->base = aligned_alloc(4096, 2 * MiB);
    assert_non_null(f->base);
    memset(f->base, 0, 2 * MiB);
    f->heap.my_base = f->base;
    f->heap.region = 4 * MiB;
    f->route[0] = GSHMEMI_ROUTE_P2P;
    f->route[1] = GSHMEMI_ROUTE_PROXY_VERBS;
    f->ctx.n_pes = 2;
    f->ctx.peer_timeout = 2.0;
    f->ctx.bs = &f->bs;
    f->ctx.heap = &f->heap;
    f->ctx.route = f->route;
    f->ops = &gshmemi_proxy_backend_verbs;
    assert_int_equal(f->ops->open(&f->ctx, &f->be, blobs[0]), GSHMEMI_OK);
    memcpy(blobs[1], blobs[0], sizeof(blobs[0]));
    assert_int_equal(f->ops->connect(f->be, blobs, serve), GSHMEMI_OK);
    ch0 = (gshmemi_heap_chunk_t){.offset = 0, .size = MiB, .addr = f->base};
    ch1 = (gshmemi_heap_chunk_t){.offset = MiB, .size = MiB, .addr = f->base + MiB};
    assert_int_equal(f->ops->register_chunk(f->be, &ch0), GSHMEMI_OK);
    assert_int_equal(f->ops->register_chunk(f->be, &ch1), GSHMEMI_OK);
    f->live = (int (*)(void))fake_sym("fake_ibv_live");
    f->posted = (int (*)(void))fake_sym("fake_ibv_posted");
    f->fail_next = (void (*)(int, int))fake_sym("fake_ibv_fail_next");
    f->hold = (void (*)(int))fake_sym("fake_ibv_hold");
    f->wr = (fake_ibv_wr_fn)fake_sym("fake_ibv_wr");
    f->rkey_at = (fake_ibv_rkey_at_fn)fake_sym("fake_ibv_rkey_at");
    assert_int_equal(gshmemi_hostq_create(&f->q), GSHMEMI_OK);
    assert_int_equal(pthread_create(&f->thread, NULL, consumer, f), 0);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx_t *f = *state;
    __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
    pthread_join(f->thread, NULL);
    gshmemi_hostq_stop(f->q, "the test is over");
    gshmemi_hostq_destroy(f->q);
    f->hold(0);
    f->ops->close(f->be);
    assert_int_equal(f->live(), 0); /* every registration, QP and CQ released */
    gshmemi_cu.cuMemGetAddressRange = NULL;
    gshmemi_cu.cuPointerGetAttribute = NULL;
    free(f->base);
    free(f);
    gshmemi_verbs_set_library_for_test(NULL);
    return 0;
}

static int put(fx_t *f, void *dest, const void *src, size_t n, int pe)
{
    return gshmemi_hostreq_rma(f->q, &f->ctx, "put", 1, dest, n, src, n, n, 1, pe);
}
static int get(fx_t *f, void *dest, const void *src, size_t n, int pe)
{
    return gshmemi_hostreq_rma(f->q, &f->ctx, "get", 0, dest, n, src, n, n, 1, pe);
}

/* the ith work request posted */
static fake_ibv_wr_t wr_at(fx_t *f, int i)
{
    fake_ibv_wr_t w;
    assert_true(f->wr(i, &w));
    return w;
}

static void check_wr(fx_t *f, int i, int opcode, const void *remote, const void *local, uint32_t length)
{
    fake_ibv_wr_t w = wr_at(f, i);
    assert_int_equal(w.opcode, opcode);
    assert_int_equal(w.remote, (uint64_t)(uintptr_t)remote);
    assert_int_equal(w.rkey, f->rkey_at((uint64_t)(uintptr_t)remote));
    assert_int_not_equal(w.rkey, 0);
    assert_int_equal(w.local, (uint64_t)(uintptr_t)local);
    assert_int_equal(w.length, length);
}

/* ---- RMA */

static void test_put_get(void **state)
{
    fx_t *f = *state;
    unsigned char *src = aligned_alloc(4096, 4096), *dst = aligned_alloc(4096, 4096);
    char *sym = f->base + MiB - 100; /* 100 bytes in chunk 0, the rest in chunk 1 */
    int p0, live0 = f->live();

    for (int i = 0; i < 4096; i++) src[i] = (unsigned char)(i * 13 + 7);
    memset(dst, 0, 4096);

    /* a put from host memory across the chunk boundary: two RDMA WRITEs, each with its
     * chunk's rkey; complete (the bytes are there) at return */
    p0 = f->posted();
    assert_int_equal(put(f, sym, src, 300, 1), GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 2);
    check_wr(f, p0, IBV_WR_RDMA_WRITE, sym, src, 100);
    check_wr(f, p0 + 1, IBV_WR_RDMA_WRITE, f->base + MiB, src + 100, 200);
    assert_int_not_equal(wr_at(f, p0).rkey, wr_at(f, p0 + 1).rkey);
    assert_memory_equal(sym, src, 300);
    assert_int_equal(sym[300], 0);
    assert_int_equal(sym[-1], 0);
    /* the host page was registered for it and dropped by its flush */
    assert_int_equal(f->live(), live0);

    /* a get into host memory: two RDMA READs */
    p0 = f->posted();
    assert_int_equal(get(f, dst + 8, sym, 300, 1), GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 2);
    check_wr(f, p0, IBV_WR_RDMA_READ, sym, dst + 8, 100);
    check_wr(f, p0 + 1, IBV_WR_RDMA_READ, f->base + MiB, dst + 108, 200);
    assert_memory_equal(dst + 8, src, 300);
    assert_int_equal(dst[7], 0);
    assert_int_equal(dst[308], 0);

    /* a host buffer over a page boundary: split where its page registration ends */
    memset(dst, 0, 4096);
    p0 = f->posted();
    assert_int_equal(put(f, f->base + 4096, src + 4000, 96, 1), GSHMEMI_OK);
    assert_int_equal(put(f, f->base + 8192, src, 64, 1), GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 2);
    {
        unsigned char *two = aligned_alloc(4096, 2 * 4096);
        p0 = f->posted();
        assert_int_equal(get(f, two + 4096 - 40, f->base + 4096, 96, 1), GSHMEMI_OK);
        assert_int_equal(f->posted() - p0, 2);
        check_wr(f, p0, IBV_WR_RDMA_READ, f->base + 4096, two + 4096 - 40, 40);
        check_wr(f, p0 + 1, IBV_WR_RDMA_READ, f->base + 4096 + 40, two + 4096, 56);
        assert_memory_equal(two + 4096 - 40, src + 4000, 96);
        free(two);
    }

    /* the local side in the heap itself: the chunk's own registration */
    p0 = f->posted();
    assert_int_equal(get(f, f->base + 65536, sym, 300, 1), GSHMEMI_OK);
    assert_memory_equal(f->base + 65536, src, 300);
    assert_int_equal(wr_at(f, p0).lkey, wr_at(f, p0 + 1).lkey);
    assert_int_equal(f->live(), live0);

    /* 1 MiB + 1 from host memory (many pages, more than the registration cache's 64) */
    {
        const size_t n = MiB + 1;
        unsigned char *big = aligned_alloc(4096, 2 * MiB), *back = aligned_alloc(4096, 2 * MiB);
        for (size_t i = 0; i < n; i++) big[i] = (unsigned char)(i * 31 + (i >> 12));
        memset(back, 0, n);
        assert_int_equal(put(f, f->base + 12345, big, n, 1), GSHMEMI_OK);
        assert_memory_equal(f->base + 12345, big, n);
        assert_int_equal(get(f, back, f->base + 12345, n, 1), GSHMEMI_OK);
        assert_memory_equal(back, big, n);
        assert_int_equal(f->live(), live0);
        free(big);
        free(back);
    }
    free(src);
    free(dst);
}

/* a stubbed driver that calls [dev_base, +dev_size) one device allocation (a cudaMalloc buffer) */
static uintptr_t dev_base;
static size_t dev_size;
static CUresult stub_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    if (!dev_base || p < dev_base || p - dev_base >= dev_size) return CUDA_ERROR_NOT_FOUND;
    *base = dev_base;
    *size = dev_size;
    return CUDA_SUCCESS;
}
static CUresult stub_attr(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    if (attr != CU_POINTER_ATTRIBUTE_BUFFER_ID || !dev_base || p < dev_base || p - dev_base >= dev_size)
        return CUDA_ERROR_INVALID_VALUE;
    *(unsigned long long *)data = 7;
    return CUDA_SUCCESS;
}

static void test_device_buffer(void **state)
{
    fx_t *f = *state;
    unsigned char *dev = aligned_alloc(4096, 65536);
    int p0, live0 = f->live();

    for (int i = 0; i < 65536; i++) dev[i] = (unsigned char)(i ^ 0x5a);
    dev_base = (uintptr_t)dev;
    dev_size = 65536;
    gshmemi_cu.cuMemGetAddressRange = stub_range;
    gshmemi_cu.cuPointerGetAttribute = stub_attr;
    p0 = f->posted();
    capture_begin();
    assert_int_equal(put(f, f->base + 256, dev + 1000, 5000, 1), GSHMEMI_OK); /* one write: the whole buffer is registered */
    capture_end();
    assert_int_equal(f->posted() - p0, 1);
    check_wr(f, p0, IBV_WR_RDMA_WRITE, f->base + 256, dev + 1000, 5000);
    assert_memory_equal(f->base + 256, dev + 1000, 5000);
    assert_int_equal(get(f, dev + 60000, f->base + 256, 5000, 1), GSHMEMI_OK);
    assert_memory_equal(dev + 60000, dev + 1000, 5000);
    assert_int_equal(f->live() - live0, 1); /* kept registered across flushes */
    dev_base = 0;
    free(dev);
}

static void test_strided(void **state)
{
    fx_t *f = *state;
    int32_t src[48], dst[64];
    int32_t *sym = (int32_t *)(f->base + 4096);
    int p0;

    for (int i = 0; i < 48; i++) src[i] = 1000 + i;
    /* iput: 16 elements, every 3rd of src to every 2nd of dest: 16 writes of 4 bytes */
    p0 = f->posted();
    assert_int_equal(gshmemi_hostreq_rma(f->q, &f->ctx, "iput", 1, sym, 2 * sizeof(int32_t), src, 3 * sizeof(int32_t),
                                         sizeof(int32_t), 16, 1),
                     GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 16);
    for (int i = 0; i < 16; i++) {
        check_wr(f, p0 + i, IBV_WR_RDMA_WRITE, sym + 2 * i, src + 3 * i, 4);
        assert_int_equal(sym[2 * i], 1000 + 3 * i);
        assert_int_equal(sym[2 * i + 1], 0); /* the gaps untouched */
    }
    /* iget: every 2nd of the heap back to every 4th of dst */
    memset(dst, 0, sizeof(dst));
    p0 = f->posted();
    assert_int_equal(gshmemi_hostreq_rma(f->q, &f->ctx, "iget", 0, dst, 4 * sizeof(int32_t), sym, 2 * sizeof(int32_t),
                                         sizeof(int32_t), 16, 1),
                     GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 16);
    for (int i = 0; i < 16; i++) {
        check_wr(f, p0 + i, IBV_WR_RDMA_READ, sym + 2 * i, dst + 4 * i, 4);
        assert_int_equal(dst[4 * i], 1000 + 3 * i);
        assert_int_equal(dst[4 * i + 1], 0);
    }
    /* strides equal to the element: one contiguous write */
    p0 = f->posted();
    assert_int_equal(gshmemi_hostreq_rma(f->q, &f->ctx, "iput", 1, sym + 100, 8, src, 8, 8, 6, 1), GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 1);
    check_wr(f, p0, IBV_WR_RDMA_WRITE, sym + 100, src, 48);
    assert_memory_equal(sym + 100, src, 48);
}

/* ---- atomics */

static uint64_t word(fx_t *f, size_t off)
{
    uint64_t w;
    memcpy(&w, f->base + off, 8);
    return w;
}
static void set_word(fx_t *f, size_t off, uint64_t w) { memcpy(f->base + off, &w, 8); }

static int amo(fx_t *f, int op, size_t off, uint64_t value, uint64_t cond, size_t width, uint64_t *fetched)
{
    return gshmemi_hostreq_amo(f->q, &f->ctx, op, f->base + off, value, cond, width, 1, fetched);
}

static void test_amo(void **state)
{
    fx_t *f = *state;
    uint64_t old = 0xa5a5;
    int p0;
    fake_ibv_wr_t w;

    /* 8-byte fetch-add: one FETCH_ADD at the word, the old value returned */
    set_word(f, 512, 40);
    p0 = f->posted();
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH_ADD, 512, 2, 0, 8, &old), GSHMEMI_OK);
    assert_int_equal(f->posted() - p0, 1);
    w = wr_at(f, p0);
    assert_int_equal(w.opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
    assert_int_equal(w.remote, (uint64_t)(uintptr_t)(f->base + 512));
    assert_int_equal(w.rkey, f->rkey_at((uint64_t)(uintptr_t)(f->base + 512)));
    assert_int_equal(w.compare_add, 2);
    assert_int_equal(w.length, 8);
    assert_int_equal(old, 40);
    assert_int_equal(word(f, 512), 42);

    /* compare-swap, both outcomes */
    assert_int_equal(amo(f, GSHMEMI_AMO_CSWAP, 512, 77, 42, 8, &old), GSHMEMI_OK);
    w = wr_at(f, f->posted() - 1);
    assert_int_equal(w.opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
    assert_int_equal(w.compare_add, 42);
    assert_int_equal(w.swap, 77);
    assert_int_equal(old, 42);
    assert_int_equal(word(f, 512), 77);
    assert_int_equal(amo(f, GSHMEMI_AMO_CSWAP, 512, 5, 42, 8, &old), GSHMEMI_OK);
    assert_int_equal(old, 77);
    assert_int_equal(word(f, 512), 77);

    /* fetch: a FETCH_ADD of 0 */
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH, 512, 0, 0, 8, &old), GSHMEMI_OK);
    w = wr_at(f, f->posted() - 1);
    assert_int_equal(w.opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
    assert_int_equal(w.compare_add, 0);
    assert_int_equal(old, 77);

    /* swap and xor (8 bytes): compare-swap loops; the old value returned */
    set_word(f, 520, 0x1234);
    assert_int_equal(amo(f, GSHMEMI_AMO_SWAP, 520, 0xfeedull << 32, 0, 8, &old), GSHMEMI_OK);
    assert_int_equal(old, 0x1234);
    assert_int_equal(word(f, 520), 0xfeedull << 32);
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH_XOR, 520, 0xff, 0, 8, &old), GSHMEMI_OK);
    assert_int_equal(old, 0xfeedull << 32);
    assert_int_equal(word(f, 520), (0xfeedull << 32) | 0xff);

    /* 4-byte words, both halves of an 8-byte word: the other half untouched, the old value
     * zero-extended */
    set_word(f, 528, 0x11111111ffffffffull);
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH_ADD, 528, 2, 0, 4, &old), GSHMEMI_OK);
    assert_int_equal(old, 0xffffffffull);
    assert_int_equal(word(f, 528), 0x1111111100000001ull);
    assert_int_equal(amo(f, GSHMEMI_AMO_SET, 532, 0xabcdef01u, 0, 4, &old), GSHMEMI_OK);
    assert_int_equal(old, 0x11111111ull);
    assert_int_equal(word(f, 528), 0xabcdef0100000001ull);
    assert_int_equal(amo(f, GSHMEMI_AMO_CSWAP, 532, 7, 0xabcdef01u, 4, &old), GSHMEMI_OK);
    assert_int_equal(old, 0xabcdef01ull);
    assert_int_equal(word(f, 528), 0x0000000700000001ull);
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH_OR, 532, 0x80000000u, 0, 4, &old), GSHMEMI_OK);
    assert_int_equal(old, 7);
    assert_int_equal(word(f, 528), 0x8000000700000001ull);

    /* without fetched (the signal of a put-with-signal): complete at return */
    assert_int_equal(amo(f, GSHMEMI_AMO_ADD, 512, 3, 0, 8, NULL), GSHMEMI_OK);
    assert_int_equal(word(f, 512), 80);
    assert_int_equal(amo(f, GSHMEMI_AMO_SET, 512, 9, 0, 8, NULL), GSHMEMI_OK);
    assert_int_equal(word(f, 512), 9);

    /* a put then its signal: the data is there when the signal's call returns */
    {
        char data[64];
        memset(data, 0x3c, sizeof(data));
        assert_int_equal(put(f, f->base + 1024, data, sizeof(data), 1), GSHMEMI_OK);
        assert_int_equal(amo(f, GSHMEMI_AMO_SET, 1088, 1, 0, 8, NULL), GSHMEMI_OK);
        assert_memory_equal(f->base + 1024, data, sizeof(data));
        assert_int_equal(word(f, 1088), 1);
    }
}

/* several application threads at once: every fetch-add's old value seen exactly once */
enum { AMO_THREADS = 4, AMO_EACH = 200 };
typedef struct {
    fx_t *f;
    int id;
    uint64_t olds[AMO_EACH];
    int rc;
} amo_thread_t;

static void *amo_thread(void *arg)
{
    amo_thread_t *t = arg;
    char buf[128];
    t->rc = GSHMEMI_OK;
    memset(buf, t->id + 1, sizeof(buf));
    for (int i = 0; i < AMO_EACH && t->rc == GSHMEMI_OK; i++) {
        t->rc = amo(t->f, GSHMEMI_AMO_FETCH_ADD, 2048, 1, 0, 8, &t->olds[i]);
        if (t->rc == GSHMEMI_OK) t->rc = put(t->f, t->f->base + 4096 + 128 * t->id, buf, sizeof(buf), 1);
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    fx_t *f = *state;
    amo_thread_t t[AMO_THREADS];
    pthread_t th[AMO_THREADS];
    static unsigned char seen[AMO_THREADS * AMO_EACH];

    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < AMO_THREADS; i++) {
        t[i].f = f;
        t[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, amo_thread, &t[i]), 0);
    }
    for (int i = 0; i < AMO_THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < AMO_THREADS; i++) {
        assert_int_equal(t[i].rc, GSHMEMI_OK);
        for (int k = 0; k < AMO_EACH; k++) {
            assert_true(t[i].olds[k] < AMO_THREADS * AMO_EACH);
            assert_int_equal(seen[t[i].olds[k]], 0);
            seen[t[i].olds[k]] = 1;
            if (k) assert_true(t[i].olds[k] > t[i].olds[k - 1]); /* one thread's calls in order */
        }
        for (int b = 0; b < 128; b++) assert_int_equal((unsigned char)f->base[4096 + 128 * i + b], i + 1);
    }
    assert_int_equal(word(f, 2048), AMO_THREADS * AMO_EACH);
}

/* ---- failures, each reported naming the operation, the PE and the cause */

static void test_refusals(void **state)
{
    fx_t *f = *state;
    uint64_t v = 1, old = 0x77;
    const char *log;
    int p0 = f->posted();

    capture_begin();
    /* a PE out of range; a PE the verbs backend does not reach */
    assert_int_equal(put(f, f->base, &v, 8, 7), GSHMEMI_ERR_INVALID);
    assert_int_equal(put(f, f->base, &v, 8, 0), GSHMEMI_ERR_INVALID);
    /* not in the heap at all; in the heap but in no registered chunk; crossing its end */
    assert_int_equal(get(f, &v, f->base - 64, 8, 1), GSHMEMI_ERR_INVALID);
    assert_int_equal(put(f, f->base + 3 * MiB, &v, 8, 1), GSHMEMI_ERR_INVALID);
    assert_int_equal(put(f, f->base + 4 * MiB - 4, &v, 8, 1), GSHMEMI_ERR_INVALID);
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH_ADD, 3 * MiB, 1, 0, 8, &old), GSHMEMI_ERR_INVALID);
    /* misaligned, and a width the NIC has no atomic for */
    assert_int_equal(amo(f, GSHMEMI_AMO_ADD, 516, 1, 0, 8, NULL), GSHMEMI_ERR_INVALID);
    assert_int_equal(amo(f, GSHMEMI_AMO_ADD, 512, 1, 0, 2, NULL), GSHMEMI_ERR_INVALID);
    log = capture_end();
    assert_non_null(strstr(log, "host-initiated put: PE 7 is out of range [0, 2)"));
    assert_non_null(strstr(log, "put: PE 0 is not reached by the verbs backend"));
    assert_non_null(strstr(log, "host-initiated put of 8 bytes to PE 0 (heap offset 0) failed in the verbs backend"));
    assert_non_null(strstr(log, "host-initiated get with PE 1: ["));
    assert_non_null(strstr(log, "+8) is not inside this PE's symmetric heap"));
    assert_non_null(strstr(log, "put: offset 3145728 of PE 1's heap is in none of its registered chunks"));
    assert_non_null(strstr(log, "host-initiated put of 8 bytes to PE 1 (heap offset 3145728) failed in the verbs backend"));
    assert_non_null(strstr(log, "host-initiated put with PE 1: ["));
    assert_non_null(strstr(log, "amo: offset 3145728 of PE 1's heap is in none of its registered chunks"));
    assert_non_null(strstr(log, "host-initiated atomic fetch-add (8 bytes) on PE 1 (heap offset 3145728) failed in the verbs backend"));
    assert_non_null(strstr(log, "amo: offset 516 of PE 1 is not 8-byte aligned"));
    assert_non_null(strstr(log, "amo: width 2 is not 4 or 8"));
    assert_int_equal(old, 0x77); /* a failed fetch stores nothing */
    assert_int_equal(f->posted(), p0);
    /* none of it broke the path */
    v = 0x0102030405060708ull;
    assert_int_equal(put(f, f->base + 64, &v, 8, 1), GSHMEMI_OK);
    assert_int_equal(word(f, 64), v);
}

/* an error completion: the verbs report (opcode, PE, status) and the host call's; the QP then
 * stays in error, and later calls fail too */
static void test_error_completion(void **state)
{
    fx_t *f = *state;
    uint64_t old = 0x77, v = 5;
    const char *log;

    set_word(f, 512, 10);
    f->fail_next(IBV_WC_REM_ACCESS_ERR, 0x88);
    capture_begin();
    assert_int_equal(amo(f, GSHMEMI_AMO_FETCH_ADD, 512, 1, 0, 8, &old), GSHMEMI_ERR_REMOTE);
    log = capture_end();
    assert_non_null(strstr(log, "ERROR verbs: ATOMIC FETCH_ADD on PE 1 failed: remote access error (status 10, vendor error 0x88)"));
    assert_non_null(strstr(log, "host-initiated atomic fetch-add (8 bytes) on PE 1 (heap offset 512) failed in the verbs backend"));
    assert_int_equal(old, 0x77);
    assert_int_equal(word(f, 512), 10);
    capture_begin();
    assert_int_equal(put(f, f->base, &v, 8, 1), GSHMEMI_ERR_REMOTE);
    log = capture_end();
    assert_non_null(strstr(log, "host-initiated put of 8 bytes to PE 1 (heap offset 0) failed in the verbs backend"));
    assert_int_equal(word(f, 0), 0);
}

static void test_error_completion_get(void **state)
{
    fx_t *f = *state;
    unsigned char dst[32];
    const char *log;

    memset(dst, 0xee, sizeof(dst));
    f->fail_next(IBV_WC_RETRY_EXC_ERR, 0x81);
    capture_begin();
    assert_int_equal(gshmemi_hostreq_rma(f->q, &f->ctx, "iget", 0, dst, 8, f->base + 128, 16, 8, 4, 1), GSHMEMI_ERR_REMOTE);
    log = capture_end();
    assert_non_null(strstr(log, "ERROR verbs: RDMA READ from PE 1 failed: transport retry counter exceeded (status 12, vendor error 0x81)"));
    assert_non_null(strstr(log, "host-initiated iget of 4 elements of 8 bytes from PE 1 (heap offset 128, stride 16 bytes) failed in the verbs backend"));
    /* the QP's other reads completed (the fake does not flush them): nothing left in flight */
    assert_int_equal(gshmemi_hostq_busy(f->q), 0);
}

/* a peer that never answers: the backend's flush gives up after GSHMEM_PEER_TIMEOUT, and the host
 * call returns that, before its own bound (twice as long) */
static void test_peer_timeout(void **state)
{
    fx_t *f = *state;
    uint64_t v = 99;
    const char *log;
    double t0;

    f->ctx.peer_timeout = 0.5;
    f->hold(1);
    capture_begin();
    t0 = now_s();
    assert_int_equal(put(f, f->base + 8, &v, 8, 1), GSHMEMI_ERR_TIMEOUT);
    log = capture_end();
    assert_true(now_s() - t0 < 0.95);
    assert_non_null(strstr(log, "ERROR verbs: flush: 1 work request(s) still in flight after 0.5 s (GSHMEM_PEER_TIMEOUT)"));
    assert_non_null(strstr(log, "host-initiated put of 8 bytes to PE 1 (heap offset 8) failed in the verbs backend"));
    assert_null(strstr(log, "2 x GSHMEM_PEER_TIMEOUT"));
    /* the peer answers again: the next call completes (the late completion drained with it) */
    f->hold(0);
    v = 100;
    assert_int_equal(put(f, f->base + 16, &v, 8, 1), GSHMEMI_OK);
    assert_int_equal(word(f, 16), 100);
}

/* a proxy thread that never takes the request: withdrawn after twice GSHMEM_PEER_TIMEOUT, none
 * of it run; the record is reusable */
static void test_proxy_stuck(void **state)
{
    fx_t *f = *state;
    uint64_t v = 5;
    const char *log;
    int p0 = f->posted();
    double t0;

    f->ctx.peer_timeout = 0.1;
    pause_consumer(&f->paused, &f->pause_seen);
    capture_begin();
    t0 = now_s();
    assert_int_equal(put(f, f->base + 8, &v, 8, 1), GSHMEMI_ERR_TIMEOUT);
    log = capture_end();
    assert_true(now_s() - t0 >= 0.2);
    assert_non_null(strstr(log, "host-initiated put to PE 1: the proxy thread did not take the request in 0.2 s (2 x GSHMEM_PEER_TIMEOUT); it is stuck or busy; the request was withdrawn, none of it ran"));
    __atomic_store_n(&f->paused, 0, __ATOMIC_RELEASE);
    usleep(20000);
    assert_int_equal(f->posted(), p0);
    assert_int_equal(word(f, 8), 0);
    assert_int_equal(put(f, f->base + 8, &v, 8, 1), GSHMEMI_OK);
    assert_int_equal(word(f, 8), 5);
}

/* the proxy thread stops: a waiting request and every later call fail at once, saying why */
typedef struct {
    fx_t *f;
    int rc;
    double took;
} call_t;

static void *put_thread(void *arg)
{
    call_t *c = arg;
    uint64_t v = 1;
    double t0 = now_s();
    c->rc = put(c->f, c->f->base + 32, &v, 8, 1);
    c->took = now_s() - t0;
    return NULL;
}

static void test_proxy_stopped(void **state)
{
    fx_t *f = *state;
    call_t c = {f, 1, 0};
    pthread_t th;
    uint64_t v = 1;
    const char *log;

    pause_consumer(&f->paused, &f->pause_seen);
    capture_begin();
    assert_int_equal(pthread_create(&th, NULL, put_thread, &c), 0);
    usleep(50000); /* queued by now */
    gshmemi_hostq_stop(f->q, "a device request failed (logged above)");
    pthread_join(th, NULL);
    assert_int_equal(c.rc, GSHMEMI_ERR_REMOTE);
    assert_true(c.took < 1.0);
    assert_int_equal(put(f, f->base + 32, &v, 8, 1), GSHMEMI_ERR_REMOTE);
    log = capture_end();
    assert_non_null(strstr(log, "host-initiated put to PE 1: not run, the proxy thread has stopped (a device request failed (logged above))"));
    assert_int_equal(word(f, 32), 0);
}

/* ---- the queue itself, against an in-memory backend: a put that can be made slow */

static unsigned char mem_heap[4096];
static int mem_delay_us;   /* each put sleeps this long */
static int mem_block;      /* puts wait while set */
static int mem_puts;

static int mem_put(gshmemi_proxy_backend_t *be, int pe, uint64_t off, const void *src, size_t n)
{
    (void)be, (void)pe;
    while (__atomic_load_n(&mem_block, __ATOMIC_ACQUIRE)) usleep(1000);
    if (mem_delay_us) usleep((useconds_t)mem_delay_us);
    memcpy(mem_heap + off, src, n);
    __atomic_fetch_add(&mem_puts, 1, __ATOMIC_RELAXED);
    return GSHMEMI_OK;
}
static int mem_flush(gshmemi_proxy_backend_t *be)
{
    (void)be;
    return GSHMEMI_OK;
}
static const gshmemi_proxy_backend_ops_t mem_ops = {.name = "memory", .put = mem_put, .flush = mem_flush};

typedef struct mq mq_t;
/* one of the 64 callers of test_abandoned_and_full */
typedef struct {
    mq_t *m;
    int i, rc;
} mq_call_t;

struct mq {
    gshmemi_transport_ctx_t ctx;
    gshmemi_heap_t heap;
    gshmemi_hostq_t *q;
    pthread_t thread;
    int stop, paused, pause_seen;
    /* callers started by a test, joined by the teardown too: a failed check leaves the test
     * early, and they must not outlive the queue or their records */
    mq_call_t call[GSHMEMI_HOSTQ_SLOTS];
    pthread_t caller[GSHMEMI_HOSTQ_SLOTS];
    int n_callers;
};

static void *mem_consumer(void *arg)
{
    mq_t *m = arg;
    while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&m->paused, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&m->pause_seen, 1, __ATOMIC_RELEASE);
            sched_yield();
        } else if (!gshmemi_hostq_serve(m->q, &mem_ops, NULL)) {
            sched_yield();
        }
    }
    return NULL;
}

static int mq_setup(void **state)
{
    mq_t *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    memset(mem_heap, 0, sizeof(mem_heap));
    mem_delay_us = mem_block = mem_puts = 0;
    m->heap.my_base = (char *)mem_heap;
    m->heap.region = sizeof(mem_heap);
    m->ctx.n_pes = 2;
    m->ctx.heap = &m->heap;
    m->ctx.peer_timeout = 0.1;
    assert_int_equal(gshmemi_hostq_create(&m->q), GSHMEMI_OK);
    assert_int_equal(pthread_create(&m->thread, NULL, mem_consumer, m), 0);
    *state = m;
    return 0;
}

static int mq_teardown(void **state)
{
    mq_t *m = *state;
    __atomic_store_n(&mem_block, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&m->paused, 0, __ATOMIC_RELEASE); /* the consumer serves the callers left */
    for (int i = 0; i < m->n_callers; i++) pthread_join(m->caller[i], NULL);
    __atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
    pthread_join(m->thread, NULL);
    gshmemi_hostq_stop(m->q, "the test is over");
    gshmemi_hostq_destroy(m->q);
    free(m);
    return 0;
}

/* a strided put slower than the bound in all, but making progress within it: completes */
static void test_progress_extends_wait(void **state)
{
    mq_t *m = *state;
    unsigned char src[10];
    for (int i = 0; i < 10; i++) src[i] = (unsigned char)(i + 1);
    mem_delay_us = 60000; /* 10 elements: 0.6 s, each within the 0.2 s bound */
    assert_int_equal(gshmemi_hostreq_rma(m->q, &m->ctx, "iput", 1, mem_heap + 100, 3, src, 1, 1, 10, 1), GSHMEMI_OK);
    for (int i = 0; i < 10; i++) assert_int_equal(mem_heap[100 + 3 * i], i + 1);
    assert_int_equal(mem_puts, 10);
}

/* a request the proxy took and stalls in: the caller gives up, saying so; the record comes back
 * once the proxy finishes. Then 64 callers fill every record and one more gives up waiting for
 * one. */

static void *mq_put_thread(void *arg)
{
    mq_call_t *c = arg;
    unsigned char v = (unsigned char)(c->i + 1);
    c->rc = gshmemi_hostreq_rma(c->m->q, &c->m->ctx, "put", 1, mem_heap + 1000 + c->i, 1, &v, 1, 1, 1, 1);
    return NULL;
}

static void test_abandoned_and_full(void **state)
{
    mq_t *m = *state;
    mq_call_t *c = m->call;
    unsigned char v = 42;
    const char *log;

    __atomic_store_n(&mem_block, 1, __ATOMIC_RELEASE);
    capture_begin();
    assert_int_equal(gshmemi_hostreq_rma(m->q, &m->ctx, "put", 1, mem_heap + 7, 1, &v, 1, 1, 1, 1), GSHMEMI_ERR_TIMEOUT);
    log = capture_end();
    assert_non_null(strstr(log, "host-initiated put to PE 1: the proxy thread took the request but made no progress on it for 0.2 s (2 x GSHMEM_PEER_TIMEOUT); what it did at PE 1 is unknown"));
    assert_int_equal(gshmemi_hostq_busy(m->q), 1);
    __atomic_store_n(&mem_block, 0, __ATOMIC_RELEASE);
    for (int k = 0; k < 20000 && gshmemi_hostq_busy(m->q); k++) usleep(1000);
    assert_int_equal(gshmemi_hostq_busy(m->q), 0); /* the proxy freed the abandoned record */
    assert_int_equal(mem_heap[7], 42);             /* it did run, after its caller left */

    /* the proxy paused: 64 callers fill every record (the abandoned one is free again); one more
     * waits for a record and gives up, naming the queue */
    pause_consumer(&m->paused, &m->pause_seen);
    /* the 64 wait long enough for the checks below, also on a loaded host under ThreadSanitizer */
    m->ctx.peer_timeout = 30.0;
    for (int i = 0; i < GSHMEMI_HOSTQ_SLOTS; i++) {
        c[i] = (mq_call_t){m, i, 1};
        assert_int_equal(pthread_create(&m->caller[i], NULL, mq_put_thread, &c[i]), 0);
        m->n_callers++;
    }
    for (int k = 0; k < 20000 && gshmemi_hostq_busy(m->q) < GSHMEMI_HOSTQ_SLOTS; k++) usleep(1000);
    assert_int_equal(gshmemi_hostq_busy(m->q), GSHMEMI_HOSTQ_SLOTS);
    {
        gshmemi_transport_ctx_t short_ctx = m->ctx;
        short_ctx.peer_timeout = 0.05;
        capture_begin();
        assert_int_equal(gshmemi_hostreq_rma(m->q, &short_ctx, "put", 1, mem_heap + 2000, 1, &v, 1, 1, 1, 1), GSHMEMI_ERR_TIMEOUT);
        log = capture_end();
        assert_non_null(strstr(log, "host-initiated put to PE 1: all 64 records of the host request queue stayed in use for 0.1 s (2 x GSHMEM_PEER_TIMEOUT)"));
    }
    __atomic_store_n(&m->paused, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < m->n_callers; i++) pthread_join(m->caller[i], NULL);
    m->n_callers = 0;
    for (int i = 0; i < GSHMEMI_HOSTQ_SLOTS; i++) {
        assert_int_equal(c[i].rc, GSHMEMI_OK);
        assert_int_equal(mem_heap[1000 + i], i + 1);
    }
    assert_int_equal(mem_heap[2000], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_get, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_device_buffer, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_strided, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_amo, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refusals, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_completion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_completion_get, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_peer_timeout, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_proxy_stuck, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_proxy_stopped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_progress_extends_wait, mq_setup, mq_teardown),
        cmocka_unit_test_setup_teardown(test_abandoned_and_full, mq_setup, mq_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
