/* The proxy FIFO (device/proxy_fifo.h) on the CPU: producer threads and one consumer thread.
 *   stress       8 producers x N requests into 64 slots: nothing lost, duplicated or reordered
 *                per producer, every request's args intact, results of fetching requests right
 *                (or reported LOST, never wrong), completion counter honoured
 *   backpressure a full FIFO: reserve times out after about timeout_ns and nothing visible to
 *                the consumer changes; a release lets the same tickets through
 *   ret          wait_ret: the value, LOST once the slot is reused, TIMEOUT while being written;
 *                a writer racing a reader never yields a wrong value
 *   fail         after fail(), every wait on an incomplete request is FAILED at once, and a
 *                producer blocked in a wait is woken with FAILED
 *   layout       sizes 1..1M: 64-byte lines, one line per control word, bad sizes refused
 * Usage: test_proxy_fifo [requests per producer] (default 200000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Between wait_ret's first read of seq and its read of the value, the consumer may rewrite the
 * slot for the ticket size later: the test makes that happen on demand (ret_hook_ticket). */
struct gshmemi_proxy_fifo;
static void ret_hook(const struct gshmemi_proxy_fifo *f, unsigned long long ticket);
#define GSHMEMI_FIFO_TEST_RET_HOOK(f, ticket) ret_hook(f, ticket)
#include "device/proxy_fifo.h"

static uint64_t ret_hook_ticket = UINT64_MAX;
static void ret_hook(const struct gshmemi_proxy_fifo *f, unsigned long long ticket)
{
    if (ticket != ret_hook_ticket) return;
    ret_hook_ticket = UINT64_MAX;
    gshmemi_fifo_return(f, ticket + f->size, 4242);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "test_proxy_fifo:%d: check failed: %s: ", __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MS 1000000ull

static uint64_t now_ns(void) { return gshmemi_fifo_now_ns(); }

/* A FIFO in one 64-aligned heap block. */
static void *fifo_new(gshmemi_proxy_fifo_t *f, uint32_t size, uint64_t timeout_ns)
{
    void *mem = NULL;
    size_t bytes = gshmemi_fifo_host_bytes(size);
    CHECK(bytes > 0, "size %u", size);
    CHECK(posix_memalign(&mem, 64, bytes) == 0, "posix_memalign(%zu)", bytes);
    memset(mem, 0xa5, bytes); /* host_init must clear what matters */
    CHECK(gshmemi_fifo_host_init(f, size, mem) == GSHMEMI_FIFO_OK, "host_init(%u)", size);
    f->timeout_ns = timeout_ns;
    return mem;
}

/* ---- stress ------------------------------------------------------------------------------------ */
#define NPROD 8
#define STRESS_SLOTS 64
#define RELEASE_EVERY 4    /* the consumer releases in batches (and whenever it runs dry) */
#define FETCH_EVERY 7      /* every 7th request of a producer asks for a result */
#define DONE_EVERY 1000    /* and every 1000th waits for completion */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}
/* args of producer p's request i: arg[0] op|pe, [1] p, [2] i, [3..5] derived, [6] checksum */
static void make_args(uint64_t a[GSHMEMI_PROXY_ARGS], int p, uint64_t i)
{
    int fetch = i % FETCH_EVERY == 0;
    a[0] = gshmemi_proxy_op_word(fetch ? GSHMEMI_PROXY_AMO : GSHMEMI_PROXY_PUT, p);
    a[1] = (uint64_t)p;
    a[2] = i;
    a[3] = mix((uint64_t)p << 40 ^ i);
    a[4] = mix(a[3]);
    a[5] = mix(a[4]);
    a[6] = mix(a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5]);
}
static uint64_t ret_value(uint64_t ticket, const uint64_t a[GSHMEMI_PROXY_ARGS]) { return mix(ticket ^ a[3]); }

typedef struct {
    gshmemi_proxy_fifo_t *f;
    int id;
    uint64_t n;
    uint64_t lost, fetched, waited;
} producer_t;

static void *producer(void *arg)
{
    producer_t *p = arg;
    for (uint64_t i = 0; i < p->n; i++) {
        uint64_t a[GSHMEMI_PROXY_ARGS], t;
        make_args(a, p->id, i);
        int rc = gshmemi_fifo_reserve(p->f, 1, &t);
        CHECK(rc == GSHMEMI_FIFO_OK, "producer %d request %llu: reserve: %d", p->id, (unsigned long long)i, rc);
        gshmemi_fifo_publish(p->f, t, a);
        if (i % FETCH_EVERY == 0) {
            uint64_t v = 0;
            rc = gshmemi_fifo_wait_ret(p->f, t, &v);
            CHECK(rc == GSHMEMI_FIFO_OK || rc == GSHMEMI_FIFO_LOST, "producer %d ticket %llu: wait_ret: %d", p->id,
                  (unsigned long long)t, rc);
            if (rc == GSHMEMI_FIFO_OK) {
                CHECK(v == ret_value(t, a), "producer %d ticket %llu: result %llx, expected %llx", p->id,
                      (unsigned long long)t, (unsigned long long)v, (unsigned long long)ret_value(t, a));
                p->fetched++;
            } else {
                p->lost++;
            }
        }
        if (i % DONE_EVERY == DONE_EVERY - 1) {
            rc = gshmemi_fifo_wait_done(p->f, t);
            CHECK(rc == GSHMEMI_FIFO_OK, "producer %d ticket %llu: wait_done: %d", p->id, (unsigned long long)t, rc);
            p->waited++;
        }
    }
    return NULL;
}

typedef struct {
    gshmemi_proxy_fifo_t *f;
    uint64_t total;
    uint64_t next[NPROD]; /* next sequence number expected of each producer */
    uint64_t dry;         /* times the consumer found nothing */
    uint64_t done_at_release; /* check: *done never ran ahead of what was processed */
} consumer_t;

static void *consumer(void *arg)
{
    consumer_t *c = arg;
    gshmemi_proxy_fifo_t *f = c->f;
    uint64_t released = 0;
    gshmemi_fifo_waiter_t w = {0, 0};
    gshmemi_proxy_fifo_t idle = *f; /* the consumer's own bounded wait for the next ticket */
    idle.timeout_ns = 10000 * MS;
    for (uint64_t pos = 0; pos < c->total;) {
        gshmemi_proxy_req_t r;
        if (!gshmemi_fifo_take(f, pos, &r)) {
            /* dry: hand back what is processed (a producer may be waiting on it) */
            if (released < pos) {
                gshmemi_fifo_release(f, pos);
                gshmemi_fifo_complete(f, pos);
                released = pos;
            }
            c->dry++;
            CHECK(!gshmemi_fifo_waiter_miss(&idle, &w), "consumer: no ticket %llu after 10 s",
                  (unsigned long long)pos);
            continue;
        }
        w.start = 0;
        w.spins = 0;
        CHECK(r.seq == pos + 1, "ticket %llu: seq %llu", (unsigned long long)pos, (unsigned long long)r.seq);
        int p = gshmemi_proxy_req_pe(&r);
        CHECK(p >= 0 && p < NPROD && r.arg[1] == (uint64_t)p, "ticket %llu: producer %d / %llu", (unsigned long long)pos,
              p, (unsigned long long)r.arg[1]);
        CHECK(r.arg[2] == c->next[p], "ticket %llu: producer %d sent request %llu, expected %llu (lost, duplicated "
              "or reordered)", (unsigned long long)pos, p, (unsigned long long)r.arg[2], (unsigned long long)c->next[p]);
        uint64_t want[GSHMEMI_PROXY_ARGS];
        make_args(want, p, r.arg[2]);
        CHECK(memcmp(want, r.arg, sizeof want) == 0, "ticket %llu: producer %d request %llu: args corrupted",
              (unsigned long long)pos, p, (unsigned long long)r.arg[2]);
        CHECK(gshmemi_proxy_req_op(&r) == (r.arg[2] % FETCH_EVERY == 0 ? GSHMEMI_PROXY_AMO : GSHMEMI_PROXY_PUT),
              "ticket %llu: op %d", (unsigned long long)pos, gshmemi_proxy_req_op(&r));
        c->next[p]++;
        if (gshmemi_proxy_req_op(&r) == GSHMEMI_PROXY_AMO) gshmemi_fifo_return(f, pos, ret_value(pos, r.arg));
        pos++;
        if (pos % RELEASE_EVERY == 0) {
            gshmemi_fifo_release(f, pos);
            gshmemi_fifo_complete(f, pos);
            released = pos;
        }
    }
    gshmemi_fifo_release(f, c->total);
    gshmemi_fifo_complete(f, c->total);
    return NULL;
}

static void test_stress(uint64_t per)
{
    gshmemi_proxy_fifo_t f;
    void *mem = fifo_new(&f, STRESS_SLOTS, 10000 * MS); /* a bug shows as TIMEOUT, not a hang */
    producer_t prod[NPROD];
    consumer_t cons;
    memset(&cons, 0, sizeof cons);
    cons.f = &f;
    cons.total = per * NPROD;
    pthread_t tc, tp[NPROD];
    uint64_t t0 = now_ns();
    CHECK(pthread_create(&tc, NULL, consumer, &cons) == 0, "pthread_create");
    for (int i = 0; i < NPROD; i++) {
        prod[i] = (producer_t){.f = &f, .id = i, .n = per};
        CHECK(pthread_create(&tp[i], NULL, producer, &prod[i]) == 0, "pthread_create");
    }
    uint64_t lost = 0, fetched = 0, waited = 0;
    for (int i = 0; i < NPROD; i++) {
        pthread_join(tp[i], NULL);
        lost += prod[i].lost;
        fetched += prod[i].fetched;
        waited += prod[i].waited;
    }
    pthread_join(tc, NULL);
    for (int i = 0; i < NPROD; i++)
        CHECK(cons.next[i] == per, "producer %d: %llu of %llu requests arrived", i, (unsigned long long)cons.next[i],
              (unsigned long long)per);
    CHECK(*f.tail == cons.total && *f.head == cons.total && *f.done == cons.total && *f.error == 0,
          "tail %llu head %llu done %llu error %llu after %llu requests", (unsigned long long)*f.tail,
          (unsigned long long)*f.head, (unsigned long long)*f.done, (unsigned long long)*f.error,
          (unsigned long long)cons.total);
    CHECK(*f.head_cache <= *f.head, "head_cache %llu ahead of head %llu", (unsigned long long)*f.head_cache,
          (unsigned long long)*f.head);
    CHECK(fetched + lost == NPROD * ((per + FETCH_EVERY - 1) / FETCH_EVERY), "fetches %llu + %llu",
          (unsigned long long)fetched, (unsigned long long)lost);
    printf("stress: %d producers x %llu requests through %d slots (%llu laps) in %.2f s; %llu results read, %llu "
           "lost (slot reused first), %llu completion waits, consumer dry %llu times\n",
           NPROD, (unsigned long long)per, STRESS_SLOTS, (unsigned long long)(cons.total / STRESS_SLOTS),
           (now_ns() - t0) / 1e9, (unsigned long long)fetched, (unsigned long long)lost, (unsigned long long)waited,
           (unsigned long long)cons.dry);
    free(mem);
}

/* ---- back-pressure ----------------------------------------------------------------------------- */
typedef struct {
    gshmemi_proxy_fifo_t *f;
    uint64_t ticket;
    int rc;
    uint64_t ns, end; /* time blocked, and when it returned */
} blocked_t;

static void *blocked_reserve(void *arg)
{
    blocked_t *b = arg;
    uint64_t t0 = now_ns();
    b->rc = gshmemi_fifo_reserve(b->f, 2, &b->ticket);
    b->end = now_ns();
    b->ns = b->end - t0;
    return NULL;
}

static void test_backpressure(void)
{
    const uint32_t size = 8;
    const uint64_t timeout = 200 * MS;
    gshmemi_proxy_fifo_t f;
    void *mem = fifo_new(&f, size, timeout);
    size_t bytes = gshmemi_fifo_host_bytes(size);
    uint64_t a[GSHMEMI_PROXY_ARGS] = {0};
    uint64_t t;

    CHECK(gshmemi_fifo_reserve(&f, 0, &t) == GSHMEMI_FIFO_INVALID, "n = 0");
    CHECK(gshmemi_fifo_reserve(&f, size + 1, &t) == GSHMEMI_FIFO_INVALID, "n > size");
    CHECK(*f.tail == 0, "an invalid reserve took tickets: tail %llu", (unsigned long long)*f.tail);

    /* fill it: one reserve of 3, then singles */
    CHECK(gshmemi_fifo_reserve(&f, 3, &t) == GSHMEMI_FIFO_OK && t == 0, "reserve 3: ticket %llu", (unsigned long long)t);
    for (uint64_t k = 0; k < 3; k++) {
        a[1] = k;
        gshmemi_fifo_publish(&f, t + k, a);
    }
    for (uint64_t k = 3; k < size; k++) {
        a[1] = k;
        CHECK(gshmemi_fifo_post(&f, a, &t) == GSHMEMI_FIFO_OK && t == k, "post %llu", (unsigned long long)k);
    }
    /* the consumer takes everything but releases nothing */
    gshmemi_proxy_req_t r;
    for (uint64_t k = 0; k < size; k++)
        CHECK(gshmemi_fifo_take(&f, k, &r) == 1 && r.arg[1] == k, "take %llu", (unsigned long long)k);
    CHECK(gshmemi_fifo_take(&f, size, &r) == 0, "took a ticket never published");

    char *before = malloc(bytes);
    CHECK(before, "malloc");
    memcpy(before, mem, bytes);
    uint64_t t0 = now_ns();
    int rc = gshmemi_fifo_reserve(&f, 1, &t);
    uint64_t ns = now_ns() - t0;
    CHECK(rc == GSHMEMI_FIFO_TIMEOUT, "reserve on a full FIFO: %d", rc);
    CHECK(ns >= timeout && ns < timeout + 2000 * MS, "timed out after %.1f ms, timeout %.1f ms", ns / 1e6,
          timeout / 1e6);
    CHECK(t == size, "ticket %llu", (unsigned long long)t);
    /* the ticket is taken (tail moved); nothing the consumer reads changed */
    gshmemi_proxy_fifo_layout_t l;
    gshmemi_fifo_layout(size, &l);
    CHECK(*f.tail == size + 1, "tail %llu", (unsigned long long)*f.tail);
    CHECK(memcmp(before, mem, l.tail) == 0, "slots, results or head/done/error changed by a reserve that timed out");
    CHECK(gshmemi_fifo_take(&f, size, &r) == 0, "the consumer sees the timed-out ticket");
    printf("backpressure: reserve on a full FIFO: TIMEOUT after %.1f ms (timeout %.0f ms), nothing published\n",
           ns / 1e6, timeout / 1e6);

    /* release one slot: the owner of the timed-out ticket goes through */
    gshmemi_fifo_release(&f, 1);
    CHECK(gshmemi_fifo_wait_free(&f, t, 1) == GSHMEMI_FIFO_OK, "wait_free after release");
    a[1] = 100;
    gshmemi_fifo_publish(&f, t, a);
    CHECK(gshmemi_fifo_take(&f, size, &r) == 1 && r.arg[1] == 100 && r.seq == size + 1, "take after release");

    /* a blocked producer (2 tickets, so it needs 2 free slots) proceeds once the consumer frees them,
     * not after one */
    f.timeout_ns = 10000 * MS;
    blocked_t b = {.f = &f};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, blocked_reserve, &b) == 0, "pthread_create");
    usleep(50000);
    gshmemi_fifo_release(&f, 2); /* one more free slot: not enough */
    usleep(50000);
    uint64_t t1 = now_ns();
    gshmemi_fifo_release(&f, 3);
    pthread_join(th, NULL);
    uint64_t after = now_ns() - t1;
    CHECK(b.rc == GSHMEMI_FIFO_OK && b.ticket == size + 1, "blocked reserve: rc %d ticket %llu", b.rc,
          (unsigned long long)b.ticket);
    CHECK(b.end >= t1, "the blocked reserve returned %.1f ms before its second slot was freed", (t1 - b.end) / 1e6);
    CHECK(*f.head_cache == 3, "head_cache %llu after a reserve saw head 3", (unsigned long long)*f.head_cache);
    printf("backpressure: a producer blocked %.1f ms went through %.2f ms after the release\n", b.ns / 1e6,
           after / 1e6);
    free(before);
    free(mem);
}

/* ---- results ----------------------------------------------------------------------------------- */
/* The reader asks for lap k (want = k + 1); the writer returns ticket 3 + k * size and, for odd
 * mix(k), at once ticket 3 + (k + 1) * size into the same slot, racing the reader. */
typedef struct {
    gshmemi_proxy_fifo_t *f;
    uint64_t laps;
    uint64_t want; /* atomic: lap + 1 the reader waits for, 0 none */
} racer_t;

static int races(uint64_t k) { return (int)(mix(k) & 1); }
static uint64_t lap_ticket(const racer_t *r, uint64_t k) { return 3 + k * r->f->size; }

static void *ret_writer(void *arg)
{
    racer_t *r = arg;
    for (uint64_t k = 0; k < r->laps; k += 2) {
        while (__atomic_load_n(&r->want, __ATOMIC_ACQUIRE) != k + 1) sched_yield();
        gshmemi_fifo_return(r->f, lap_ticket(r, k), mix(lap_ticket(r, k)));
        if (races(k)) gshmemi_fifo_return(r->f, lap_ticket(r, k + 1), mix(lap_ticket(r, k + 1)));
    }
    return NULL;
}

static void test_ret(void)
{
    const uint32_t size = 8;
    gshmemi_proxy_fifo_t f;
    void *mem = fifo_new(&f, size, 50 * MS);
    uint64_t v = 0;

    gshmemi_fifo_return(&f, 2, 1234);
    CHECK(gshmemi_fifo_wait_ret(&f, 2, &v) == GSHMEMI_FIFO_OK && v == 1234, "wait_ret(2): %llu", (unsigned long long)v);
    gshmemi_fifo_return(&f, 2 + size, 5678);
    v = 0;
    CHECK(gshmemi_fifo_wait_ret(&f, 2, &v) == GSHMEMI_FIFO_LOST && v == 0, "wait_ret(2) after reuse: value %llu",
          (unsigned long long)v);
    CHECK(gshmemi_fifo_wait_ret(&f, 2 + size, &v) == GSHMEMI_FIFO_OK && v == 5678, "wait_ret(10)");
    /* rewritten between the reads of seq and value: LOST, not the later request's value */
    gshmemi_fifo_return(&f, 4, 1111);
    ret_hook_ticket = 4;
    CHECK(gshmemi_fifo_wait_ret(&f, 4, &v) == GSHMEMI_FIFO_LOST, "a result rewritten while read: value %llu",
          (unsigned long long)v);
    CHECK(gshmemi_fifo_wait_ret(&f, 4 + size, &v) == GSHMEMI_FIFO_OK && v == 4242, "wait_ret(12)");
    /* not yet written: TIMEOUT, and an older lap's value is not taken for ours */
    CHECK(gshmemi_fifo_wait_ret(&f, 2 + 2 * size, &v) == GSHMEMI_FIFO_TIMEOUT, "wait_ret of an unwritten result");
    /* one read (the device's, after the completion count): PENDING at once, not a wait */
    CHECK(gshmemi_fifo_read_ret(&f, 2 + 2 * size, &v) == GSHMEMI_FIFO_PENDING, "read_ret of an unwritten result");
    CHECK(gshmemi_fifo_read_ret(&f, 2 + size, &v) == GSHMEMI_FIFO_OK && v == 5678, "read_ret(10): %llu", (unsigned long long)v);
    CHECK(gshmemi_fifo_read_ret(&f, 2, &v) == GSHMEMI_FIFO_LOST, "read_ret(2) after reuse");
    /* being written for our ticket: wait; being written for a later one: LOST */
    f.ret[5].seq = (5 + 1) | GSHMEMI_PROXY_RET_BUSY;
    f.ret[5].value = 99;
    CHECK(gshmemi_fifo_wait_ret(&f, 5, &v) == GSHMEMI_FIFO_TIMEOUT, "a result still being written was read");
    CHECK(gshmemi_fifo_read_ret(&f, 5, &v) == GSHMEMI_FIFO_PENDING, "read_ret of a result being written");
    f.ret[5].seq = (5 + size + 1) | GSHMEMI_PROXY_RET_BUSY;
    CHECK(gshmemi_fifo_wait_ret(&f, 5, &v) == GSHMEMI_FIFO_LOST, "slot being rewritten by a later ticket");

    /* a writer lapping the slot while a reader waits on each lap: OK values are always right */
    f.timeout_ns = 10000 * MS;
    racer_t rc = {.f = &f, .laps = 100000};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, ret_writer, &rc) == 0, "pthread_create");
    uint64_t ok = 0, lost = 0;
    for (uint64_t k = 0; k < rc.laps; k += 2) {
        uint64_t t = lap_ticket(&rc, k);
        __atomic_store_n(&rc.want, k + 1, __ATOMIC_RELEASE);
        int r = gshmemi_fifo_wait_ret(&f, t, &v);
        CHECK(r == GSHMEMI_FIFO_OK || (r == GSHMEMI_FIFO_LOST && races(k)), "racing wait_ret(%llu): %d",
              (unsigned long long)t, r);
        if (r == GSHMEMI_FIFO_OK) {
            CHECK(v == mix(t), "racing wait_ret(%llu): wrong value", (unsigned long long)t);
            ok++;
        } else {
            lost++;
        }
        /* the racing write, if any, is over before the next lap is asked for */
        if (races(k)) CHECK(gshmemi_fifo_wait_ret(&f, t + size, &v) == GSHMEMI_FIFO_OK && v == mix(t + size), "lap %llu",
                            (unsigned long long)k + 1);
    }
    pthread_join(th, NULL);
    CHECK(ok > 0, "no racing read got its value");
    printf("ret: LOST after reuse, TIMEOUT while unwritten or busy; racing writer: %llu read, %llu lost, 0 wrong\n",
           (unsigned long long)ok, (unsigned long long)lost);
    free(mem);
}

/* ---- failure ----------------------------------------------------------------------------------- */
typedef struct {
    gshmemi_proxy_fifo_t *f;
    int which; /* 0 wait_done, 1 wait_ret, 2 reserve */
    int rc;
    uint64_t done_ns; /* when it returned */
} waiter_t;

static void *blocked_wait(void *arg)
{
    waiter_t *w = arg;
    uint64_t v, t;
    w->rc = w->which == 0 ? gshmemi_fifo_wait_done(w->f, 6) : w->which == 1 ? gshmemi_fifo_wait_ret(w->f, 6, &v)
                                                                           : gshmemi_fifo_reserve(w->f, 1, &t);
    w->done_ns = now_ns();
    return NULL;
}

static void test_fail(void)
{
    const uint32_t size = 8;
    gshmemi_proxy_fifo_t f;
    void *mem = fifo_new(&f, size, 10000 * MS); /* long: FAILED must not wait for it */
    uint64_t a[GSHMEMI_PROXY_ARGS] = {0}, t, v;
    for (int k = 0; k < (int)size; k++) CHECK(gshmemi_fifo_post(&f, a, &t) == GSHMEMI_FIFO_OK, "post %d", k);

    /* three threads block: on completion, on a result, on a full FIFO */
    waiter_t w[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (waiter_t){.f = &f, .which = i, .rc = -1};
        CHECK(pthread_create(&th[i], NULL, blocked_wait, &w[i]) == 0, "pthread_create");
    }
    usleep(50000);
    uint64_t t0 = now_ns();
    gshmemi_fifo_complete(&f, 3);
    gshmemi_fifo_fail(&f, 3);
    gshmemi_fifo_fail(&f, 5); /* a second failure does not rename the first */
    CHECK(*f.error == 4, "error %llu, expected ticket 3 + 1", (unsigned long long)*f.error);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK(w[i].rc == GSHMEMI_FIFO_FAILED, "blocked waiter %d: %d", i, w[i].rc);
        CHECK(w[i].done_ns - t0 < 1000 * MS, "blocked waiter %d took %.1f ms to see the failure", i,
              (w[i].done_ns - t0) / 1e6);
    }
    /* later waits: a request completed before the failure stays OK, everything else FAILED */
    t0 = now_ns();
    CHECK(gshmemi_fifo_wait_done(&f, 2) == GSHMEMI_FIFO_OK, "wait_done on a completed request");
    CHECK(gshmemi_fifo_wait_done(&f, 3) == GSHMEMI_FIFO_FAILED, "wait_done on the failed request");
    CHECK(gshmemi_fifo_wait_done(&f, 100) == GSHMEMI_FIFO_FAILED, "wait_done on a later request");
    CHECK(gshmemi_fifo_wait_ret(&f, 4, &v) == GSHMEMI_FIFO_FAILED, "wait_ret after failure");
    CHECK(gshmemi_fifo_reserve(&f, 1, &t) == GSHMEMI_FIFO_FAILED, "reserve on a full FIFO after failure");
    CHECK(now_ns() - t0 < 1000 * MS, "waits after the failure took %.1f ms", (now_ns() - t0) / 1e6);
    printf("fail: 3 blocked waiters woken with FAILED; later waits FAILED at once, a completed request stays OK\n");
    free(mem);
}

/* ---- tagged words ------------------------------------------------------------------------------
 * Every bit of every arg survives the packing into eight 56-bit payloads; a slot is taken only
 * when all eight words carry its ticket's tag (a word of the lap before, or a torn slot, is not);
 * the tag differs between consecutive laps and is never 0 (a fresh slot), through its wrap. */
static void test_tags(void)
{
    const uint32_t size = 4;
    gshmemi_proxy_fifo_t f;
    void *mem = fifo_new(&f, size, 0);
    gshmemi_proxy_req_t r;
    uint64_t a[GSHMEMI_PROXY_ARGS];

    for (int bit = 0; bit < 64 * GSHMEMI_PROXY_ARGS; bit++) { /* one bit set, then all but one */
        for (int inv = 0; inv < 2; inv++) {
            for (int j = 0; j < GSHMEMI_PROXY_ARGS; j++) a[j] = inv ? ~0ull : 0;
            a[bit / 64] ^= 1ull << (bit % 64);
            uint64_t t = (uint64_t)bit * 2 + (uint64_t)inv; /* a new lap every size tickets */
            gshmemi_fifo_publish(&f, t, a);
            CHECK(gshmemi_fifo_take(&f, t, &r) == 1 && r.seq == t + 1, "bit %d: not taken", bit);
            CHECK(memcmp(r.arg, a, sizeof a) == 0, "bit %d (%s): args changed by the packing", bit, inv ? "cleared" : "set");
        }
    }
    for (uint64_t lap = 0; lap < 600; lap++) {
        const uint64_t t = lap * size + 1, tag = gshmemi_fifo_tag(&f, t);
        CHECK(tag >> 63 && (tag & GSHMEMI_PROXY_PAYLOAD_MASK) == 0 && tag == gshmemi_fifo_tag(&f, lap * size + size - 1) &&
                  (lap == 0 || tag != gshmemi_fifo_tag(&f, t - size)),
              "lap %llu: tag %#llx", (unsigned long long)lap, (unsigned long long)tag);
    }
    /* slot 1 written for ticket 1 + 4k, then torn: each word in turn left from the lap before */
    for (int k = 0; k < GSHMEMI_PROXY_WORDS; k++) {
        const uint64_t t = 1 + size * (uint64_t)(k + 200);
        for (int j = 0; j < GSHMEMI_PROXY_ARGS; j++) a[j] = mix(t * 8 + (uint64_t)j);
        gshmemi_fifo_publish(&f, t - size, a);
        const uint64_t old = f.slots[1].word[k];
        gshmemi_fifo_publish(&f, t, a);
        CHECK(gshmemi_fifo_take(&f, t - size, &r) == 0, "word %d: the lap before taken from a rewritten slot", k);
        f.slots[1].word[k] = old;
        CHECK(gshmemi_fifo_take(&f, t, &r) == 0, "word %d of the lap before: a torn slot taken", k);
        f.slots[1].word[k] = 0;
        CHECK(gshmemi_fifo_take(&f, t, &r) == 0, "word %d zero: a torn slot taken", k);
        gshmemi_fifo_publish(&f, t, a);
        CHECK(gshmemi_fifo_take(&f, t, &r) == 1 && memcmp(r.arg, a, sizeof a) == 0, "word %d: the whole slot not taken", k);
    }
    free(mem);
    printf("tags: every arg bit through the packing; torn slots and the lap before refused; tags through their wrap\n");
}

/* ---- layout ------------------------------------------------------------------------------------ */
static void test_layout(void)
{
    CHECK(sizeof(gshmemi_proxy_slot_t) == 64 && _Alignof(gshmemi_proxy_slot_t) == 64, "slot %zu bytes, align %zu",
          sizeof(gshmemi_proxy_slot_t), _Alignof(gshmemi_proxy_slot_t));
    CHECK(sizeof(gshmemi_proxy_ret_t) == 16, "result %zu bytes", sizeof(gshmemi_proxy_ret_t));
    CHECK(gshmemi_proxy_req_op(&(gshmemi_proxy_req_t){.arg = {gshmemi_proxy_op_word(GSHMEMI_PROXY_GET, 70000)}}) ==
              GSHMEMI_PROXY_GET && gshmemi_proxy_req_pe(&(gshmemi_proxy_req_t){.arg = {gshmemi_proxy_op_word(5, 70000)}}) ==
              70000, "op word packing");
    for (uint32_t size = 1; size <= (1u << 20); size <<= 1) {
        gshmemi_proxy_fifo_layout_t l;
        size_t bytes = gshmemi_fifo_layout(size, &l);
        CHECK(bytes == l.bytes && bytes == gshmemi_fifo_host_bytes(size) && bytes % 64 == 0, "size %u: %zu bytes", size,
              bytes);
        size_t ctl[7] = {l.head, l.done, l.error, l.tail, l.head_cache, l.done_cache, l.poll_stamp};
        size_t slots_end = l.slots + (size_t)size * 64, ret_end = l.ret + (size_t)size * 16;
        CHECK(l.slots % 64 == 0 && l.ret % 64 == 0 && l.ret >= slots_end, "size %u: slots %zu ret %zu", size, l.slots,
              l.ret);
        for (int i = 0; i < 7; i++) {
            CHECK(ctl[i] % 64 == 0 && ctl[i] + 64 <= bytes, "size %u: control word %d at %zu", size, i, ctl[i]);
            CHECK(ctl[i] >= ret_end, "size %u: control word %d at %zu inside the slots or results", size, i, ctl[i]);
            for (int j = 0; j < i; j++)
                CHECK(ctl[i] / 64 != ctl[j] / 64, "size %u: control words %d and %d share a line", size, i, j);
        }
        if (size == 64 || size == (1u << 20)) {
            gshmemi_proxy_fifo_t f;
            void *mem = fifo_new(&f, size, 0);
            CHECK((char *)f.head == (char *)mem + l.head && (char *)f.ret == (char *)mem + l.ret &&
                      (char *)f.head_cache == (char *)mem + l.head_cache && (char *)f.done_cache == (char *)mem + l.done_cache &&
                      (char *)f.poll_stamp == (char *)mem + l.poll_stamp && f.size == size && f.timeout_ns == 0,
                  "host_init pointers, size %u", size);
            CHECK(*f.head == 0 && *f.done == 0 && *f.error == 0 && *f.tail == 0 && *f.head_cache == 0 &&
                      f.slots[size - 1].word[GSHMEMI_PROXY_WORDS - 1] == 0 && f.ret[size - 1].seq == 0,
                  "host_init left a word set, size %u", size);
            free(mem);
        }
    }
    gshmemi_proxy_fifo_layout_t l;
    void *mem = NULL;
    CHECK(posix_memalign(&mem, 64, gshmemi_fifo_host_bytes(8) + 64) == 0, "posix_memalign");
    gshmemi_proxy_fifo_t f;
    uint32_t bad[] = {0, 3, 96, (1u << 31)};
    for (int i = 0; i < 4; i++) {
        CHECK(gshmemi_fifo_layout(bad[i], &l) == 0 && gshmemi_fifo_host_bytes(bad[i]) == 0, "size %u accepted", bad[i]);
        CHECK(gshmemi_fifo_host_init(&f, bad[i], mem) == GSHMEMI_FIFO_INVALID, "host_init size %u", bad[i]);
    }
    CHECK(gshmemi_fifo_host_init(&f, 8, (char *)mem + 8) == GSHMEMI_FIFO_INVALID, "host_init took an unaligned block");
    CHECK(gshmemi_fifo_host_init(&f, 8, NULL) == GSHMEMI_FIFO_INVALID, "host_init took NULL");
    free(mem);
    printf("layout: sizes 1..1M: 64-byte requests, slots and results apart from seven control lines\n");
}

int main(int argc, char **argv)
{
    uint64_t per = 200000;
    if (argc > 1) per = strtoull(argv[1], NULL, 10);
    CHECK(per > 0, "requests per producer: '%s'", argv[1]);
    alarm(120); /* a hang is a failure, not a stuck CI job */
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_layout();
    test_tags();
    test_ret();
    test_fail();
    test_backpressure();
    test_stress(per);
    printf("test_proxy_fifo: passed\n");
    return 0;
}
