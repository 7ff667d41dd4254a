/* The preemptive collective engine's host-side rules, without a GPU:
 *   - the submission queue (collectives/engine_queue.c): refusals, 8 producer threads and 3
 *     consumers (the daemon's CTAs) through a ring of 16 slots, every entry read once by each
 *     consumer in order, the full ring and the outstanding bound refused with GSHMEMI_ERR_AGAIN;
 *   - the stickiness rule (device/coll/engine.h): bounds and monotony, the streak, task order;
 *   - the primitive sequence with preemption: a model of PEs running the daemon's step function
 *     (gshmemi_engine_next, gshmemi_engine_flag) on flags, each PE issuing the same collectives
 *     in its own shuffled order, runs interrupted at random steps and resumed from the saved
 *     context. Every chunk of every request must be worked exactly once, while every member's
 *     source still holds that request's data, and every request must complete; requests going
 *     by LL (their data in the members' rows, two parities, no done round) must find their rows
 *     intact and never overwrite one not yet taken; two-shot requests must gather every other
 *     member's part of a chunk only once its owner reduced it for that request. The same model
 *     without the wait for the members' done, with one LL parity, or without the middle wait,
 *     shows the violation it exists to catch;
 *   - a stream wait's hold (gshmemi_engine_hold_stays): a model of launches and the host
 *     interleaved at random; no CTA leaves a launch the host counts on, and the host comes to
 *     count on one; rules that break either are caught. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collectives/engine_queue.h"
#include "device/coll/engine.h"
#include "runtime/base/log.h"

/* ---- the submission queue ---- */
static gshmemi_engine_host_t host;

static void test_queue_refusals(void **state)
{
    (void)state;
    gshmemi_engine_sq_t q;
    gshmemi_engine_sqe_t ring[16];
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 12, &host, 1, 8), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 1, &host, 1, 8), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 16, &host, 0, 8), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 16, &host, GSHMEMI_ENGINE_MAX_CTAS + 1, 8), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 16, &host, 1, 0), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 16, &host, 1, GSHMEMI_ENGINE_TASKS + 1), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 16, &host, 1, 8), GSHMEMI_OK);
    for (int i = 0; i < GSHMEMI_ENGINE_MAX_COLLS; i++) assert_true(gshmemi_engine_sq_add_coll(&q) == i);
    assert_int_equal(gshmemi_engine_sq_add_coll(&q), GSHMEMI_ERR_INVALID);
    gshmemi_engine_sq_fini(&q);
}

/* The ring full: no consumer has read; then the outstanding bound. */
static void test_queue_full(void **state)
{
    (void)state;
    gshmemi_engine_sq_t q;
    gshmemi_engine_sqe_t ring[8], e;
    const char *why = NULL;
    uint64_t seq;
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 8, &host, 2, GSHMEMI_ENGINE_TASKS), GSHMEMI_OK);
    assert_int_equal(gshmemi_engine_sq_add_coll(&q), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, i, 0, &seq, &why), GSHMEMI_OK);
        assert_int_equal(seq, (uint64_t)i + 1);
    }
    assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, 99, 0, &seq, &why), GSHMEMI_ERR_AGAIN);
    assert_non_null(strstr(why, "submission queue is full"));
    /* one consumer reading is not enough: the slot is free once every CTA has read it */
    assert_int_equal(gshmemi_engine_sq_pop(&q, 0, &e), 1);
    assert_int_equal(e.count, 0);
    assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, 99, 0, &seq, &why), GSHMEMI_ERR_AGAIN);
    assert_int_equal(gshmemi_engine_sq_pop(&q, 1, &e), 1);
    assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, 8, 0, &seq, &why), GSHMEMI_OK);
    assert_int_equal(seq, 9);
    assert_int_equal(gshmemi_engine_sq_outstanding(&q), 9);
    gshmemi_engine_sq_fini(&q);

    /* the outstanding bound: entries read but not complete */
    assert_int_equal(gshmemi_engine_sq_init(&q, ring, 8, &host, 1, 4), GSHMEMI_OK);
    assert_int_equal(gshmemi_engine_sq_add_coll(&q), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, i, 0, &seq, &why), GSHMEMI_OK);
        assert_int_equal(gshmemi_engine_sq_pop(&q, 0, &e), 1);
    }
    assert_int_equal(gshmemi_engine_sq_pop(&q, 0, &e), 0);
    assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, 4, 0, &seq, &why), GSHMEMI_ERR_AGAIN);
    assert_non_null(strstr(why, "outstanding"));
    host.done[0] = 1;
    assert_int_equal(gshmemi_engine_sq_push(&q, 0, NULL, NULL, 4, 0, &seq, &why), GSHMEMI_OK);
    assert_int_equal(seq, 5);
    gshmemi_engine_sq_fini(&q);
}

/* 8 producers (one collective each), 3 consumers reading everything through 16 slots. */
#define PRODUCERS 8
#define CONSUMERS 3
#define PER_PRODUCER 2000
static gshmemi_engine_sq_t mq;
static gshmemi_engine_sqe_t mring[16];
static volatile int consumer_bad;
static uint64_t again_count[PRODUCERS];

static void *producer(void *arg)
{
    const int id = (int)(intptr_t)arg;
    const char *why;
    uint64_t seq;
    for (uint64_t i = 1; i <= PER_PRODUCER; i++) {
        int rc;
        while ((rc = gshmemi_engine_sq_push(&mq, id, (void *)(uintptr_t)((uint64_t)id << 32 | i), NULL, i, id, &seq, &why)) ==
               GSHMEMI_ERR_AGAIN) {
            again_count[id]++;
            sched_yield();
        }
        if (rc != GSHMEMI_OK || seq != i) consumer_bad = 1;
    }
    return NULL;
}

static void *consumer(void *arg)
{
    const int c = (int)(intptr_t)arg;
    uint64_t next[PRODUCERS], got = 0, index = 0;
    gshmemi_engine_sqe_t e;
    for (int p = 0; p < PRODUCERS; p++) next[p] = 1;
    while (got < (uint64_t)PRODUCERS * PER_PRODUCER) {
        if (!gshmemi_engine_sq_pop(&mq, c, &e)) {
            sched_yield();
            continue;
        }
        const int p = e.coll;
        if (p < 0 || p >= PRODUCERS || e.seq != next[p] || e.count != e.seq || e.root != p || e.index != index ||
            (uintptr_t)e.dest != ((uint64_t)p << 32 | e.seq))
            consumer_bad = 1;
        next[p]++, got++, index++;
        /* consumer 0 completes what it reads (the done words), so the outstanding bound moves */
        if (c == 0) __atomic_store_n(&host.done[p], e.seq, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_queue_threads(void **state)
{
    (void)state;
    pthread_t prod[PRODUCERS], cons[CONSUMERS];
    memset(&host, 0, sizeof(host));
    assert_int_equal(gshmemi_engine_sq_init(&mq, mring, 16, &host, CONSUMERS, GSHMEMI_ENGINE_TASKS), GSHMEMI_OK);
    for (int p = 0; p < PRODUCERS; p++) assert_int_equal(gshmemi_engine_sq_add_coll(&mq), p);
    for (int c = 0; c < CONSUMERS; c++) assert_int_equal(pthread_create(&cons[c], NULL, consumer, (void *)(intptr_t)c), 0);
    for (int p = 0; p < PRODUCERS; p++) assert_int_equal(pthread_create(&prod[p], NULL, producer, (void *)(intptr_t)p), 0);
    for (int p = 0; p < PRODUCERS; p++) pthread_join(prod[p], NULL);
    for (int c = 0; c < CONSUMERS; c++) pthread_join(cons[c], NULL);
    assert_int_equal(consumer_bad, 0);
    assert_int_equal(host.tail, (uint64_t)PRODUCERS * PER_PRODUCER);
    for (int c = 0; c < CONSUMERS; c++) assert_int_equal(host.head[c], (uint64_t)PRODUCERS * PER_PRODUCER);
    /* 16 slots for 16000 entries: the ring wrapped 1000 times and producers were held back */
    uint64_t again = 0;
    for (int p = 0; p < PRODUCERS; p++) again += again_count[p];
    assert_true(again > 0);
    assert_int_equal(gshmemi_engine_sq_outstanding(&mq), 0);
    gshmemi_engine_sq_fini(&mq);
}

/* ---- stickiness ---- */
static void test_stickiness(void **state)
{
    (void)state;
    const uint32_t base = 4096;
    /* the front waits longest; progress and priority lengthen; bounds hold */
    for (int prio = 0; prio <= GSHMEMI_ENGINE_PRIORITY_MAX; prio++)
        for (uint32_t streak = 0; streak < 10; streak++)
            for (int pos = 0; pos < 64; pos++) {
                uint32_t t = gshmemi_engine_spins(base, pos, prio, streak);
                assert_true(t >= GSHMEMI_ENGINE_SPIN_MIN && t <= GSHMEMI_ENGINE_SPIN_MAX);
                assert_true(gshmemi_engine_spins(base, pos + 1, prio, streak) <= t);
                assert_true(gshmemi_engine_spins(base, pos, prio, streak + 1) >= t);
                if (prio < GSHMEMI_ENGINE_PRIORITY_MAX) assert_true(gshmemi_engine_spins(base, pos, prio + 1, streak) >= t);
            }
    assert_int_equal(gshmemi_engine_spins(base, 0, 0, 0), base);
    assert_int_equal(gshmemi_engine_spins(base, 1, 0, 0), base / 2);
    assert_int_equal(gshmemi_engine_spins(base, 0, 0, 1), 2 * base);
    assert_int_equal(gshmemi_engine_spins(base, 0, 2, 0), 2 * base);
    /* progress strictly lengthens the wait up to the cap, and the front beats the second */
    assert_true(gshmemi_engine_spins(base, 0, 0, GSHMEMI_ENGINE_STREAK_MAX) > gshmemi_engine_spins(base, 0, 0, 0));
    assert_true(gshmemi_engine_spins(base, 0, 0, 0) > gshmemi_engine_spins(base, 1, 0, 0));
    assert_int_equal(gshmemi_engine_spins(base, 0, 0, 100), gshmemi_engine_spins(base, 0, 0, GSHMEMI_ENGINE_STREAK_MAX));
    assert_int_equal(gshmemi_engine_spins(GSHMEMI_ENGINE_SPIN_MAX, 0, 15, 6), GSHMEMI_ENGINE_SPIN_MAX);
    assert_int_equal(gshmemi_engine_spins(1, 63, 0, 0), GSHMEMI_ENGINE_SPIN_MIN);
    assert_int_equal(gshmemi_engine_spins(base, -3, -1, 0), base); /* clamped */
    /* the streak */
    assert_int_equal(gshmemi_engine_streak(3, 1), 4);
    assert_int_equal(gshmemi_engine_streak(5, 0), 2);
    assert_int_equal(gshmemi_engine_streak(0, 0), 0);
    /* capped: after any run of successes, three preemptions bring it back to 0 */
    uint32_t st = 0;
    for (int i = 0; i < 100; i++) st = gshmemi_engine_streak(st, 1);
    assert_int_equal(st, GSHMEMI_ENGINE_STREAK_MAX);
    for (int i = 0; i < 3; i++) st = gshmemi_engine_streak(st, 0);
    assert_int_equal(st, 0);
    /* task order: priority, then queue order */
    assert_true(gshmemi_engine_before(1, 9, 0, 2));
    assert_false(gshmemi_engine_before(0, 2, 1, 9));
    assert_true(gshmemi_engine_before(0, 2, 0, 9));
    assert_false(gshmemi_engine_before(0, 9, 0, 2));
}

static void test_sequence(void **state)
{
    (void)state;
    gshmemi_engine_ctx_t c = {0};
    /* a barrier: arrive, wait, end; its flag is the request number */
    c.pc = GSHMEMI_ENGINE_PC_ARRIVE;
    gshmemi_engine_next(GSHMEMI_ENGINE_BARRIER, 0, 0, 0, &c);
    assert_int_equal(c.pc, GSHMEMI_ENGINE_PC_WAIT_ARRIVE);
    gshmemi_engine_next(GSHMEMI_ENGINE_BARRIER, 0, 0, 0, &c);
    assert_int_equal(c.pc, GSHMEMI_ENGINE_PC_END);
    assert_int_equal(gshmemi_engine_flag(GSHMEMI_ENGINE_BARRIER, GSHMEMI_ENGINE_PC_ARRIVE, 7), 7);
    /* an allreduce of 3 chunks */
    memset(&c, 0, sizeof(c));
    int steps = 0, work = 0;
    while (c.pc != GSHMEMI_ENGINE_PC_END && steps < 20) {
        work += c.pc == GSHMEMI_ENGINE_PC_WORK;
        gshmemi_engine_next(GSHMEMI_ENGINE_ALLREDUCE, 0, 0, 3, &c);
        steps++;
    }
    assert_int_equal(work, 3);
    assert_int_equal(steps, 7);
    /* no chunk (an empty share, as on every member): arrive, wait, done, wait; a two-shot request
     * too (no middle round) */
    for (int two = 0; two < 2; two++) {
        const int kind = two ? GSHMEMI_ENGINE_ALLREDUCE : GSHMEMI_ENGINE_FCOLLECT;
        memset(&c, 0, sizeof(c));
        gshmemi_engine_next(kind, 0, two, 0, &c);
        gshmemi_engine_next(kind, 0, two, 0, &c);
        assert_int_equal(c.pc, GSHMEMI_ENGINE_PC_DONE);
    }
    /* LL: send, wait, one work step, end: no done round */
    memset(&c, 0, sizeof(c));
    steps = 0, work = 0;
    while (c.pc != GSHMEMI_ENGINE_PC_END && steps < 20) {
        assert_true(c.pc != GSHMEMI_ENGINE_PC_DONE && c.pc != GSHMEMI_ENGINE_PC_WAIT_DONE);
        work += c.pc == GSHMEMI_ENGINE_PC_WORK;
        gshmemi_engine_next(GSHMEMI_ENGINE_ALLREDUCE, 1, 0, 1, &c);
        steps++;
    }
    assert_int_equal(work, 1);
    assert_int_equal(steps, 3);
    /* two-shot, 2 chunks: arrive, wait, work x2, middle, wait, gather x2, done, wait: every gather
     * after every work step, the middle between */
    memset(&c, 0, sizeof(c));
    steps = 0, work = 0;
    int gather = 0, mid = 0;
    while (c.pc != GSHMEMI_ENGINE_PC_END && steps < 20) {
        if (c.pc == GSHMEMI_ENGINE_PC_WORK) assert_int_equal(gather + mid, 0), work++;
        if (c.pc == GSHMEMI_ENGINE_PC_MID || c.pc == GSHMEMI_ENGINE_PC_WAIT_MID) assert_int_equal(work, 2), mid++;
        if (c.pc == GSHMEMI_ENGINE_PC_GATHER) assert_int_equal(mid, 2), assert_int_equal(c.chunk, (uint32_t)gather), gather++;
        if (c.pc == GSHMEMI_ENGINE_PC_DONE) assert_int_equal(gather, 2);
        gshmemi_engine_next(GSHMEMI_ENGINE_ALLREDUCE, 0, 1, 2, &c);
        steps++;
    }
    assert_int_equal(work, 2);
    assert_int_equal(gather, 2);
    assert_int_equal(steps, 10);
    /* which requests go two-shot: allreduce, not LL, 3 members or more, from the threshold */
    assert_true(gshmemi_engine_two_shot(GSHMEMI_ENGINE_ALLREDUCE, 0, 3, GSHMEMI_ENGINE_TWO_SHOT_MIN));
    assert_false(gshmemi_engine_two_shot(GSHMEMI_ENGINE_ALLREDUCE, 0, 3, GSHMEMI_ENGINE_TWO_SHOT_MIN - 1));
    assert_false(gshmemi_engine_two_shot(GSHMEMI_ENGINE_ALLREDUCE, 0, 2, 1ull << 30));
    assert_false(gshmemi_engine_two_shot(GSHMEMI_ENGINE_ALLREDUCE, 1, 4, 1ull << 30));
    assert_false(gshmemi_engine_two_shot(GSHMEMI_ENGINE_FCOLLECT, 0, 4, 1ull << 30));
    /* the parts of a chunk: every byte in one part, in order, each starting on a 16-byte unit */
    static const uint64_t chunks[][2] = {{0, 1u << 20}, {1u << 20, (1u << 20) + 12}, {48, 48 + 16 * 7 + 4}, {0, 16}, {32, 36}};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
        for (int size = 2; size <= 8; size++) {
            uint64_t at = chunks[i][0];
            for (int m = 0; m < size; m++) {
                uint64_t from, to;
                gshmemi_engine_part(chunks[i][0], chunks[i][1], size, m, &from, &to);
                assert_int_equal(from, at);
                assert_true(to >= from && to <= chunks[i][1]);
                assert_int_equal((from - chunks[i][0]) % 16, 0);
                assert_true(to - from <= 16 * ((chunks[i][1] - chunks[i][0] + 15) / 16 / (uint64_t)size + 1));
                at = to;
            }
            assert_int_equal(at, chunks[i][1]);
        }
    /* which requests go by LL: small ones, allreduce of elements up to 4 bytes, never a barrier */
    assert_true(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_ALLREDUCE, 2, 4));
    assert_true(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_ALLREDUCE, GSHMEMI_ENGINE_LL_MAX / 2, 2));
    assert_false(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_ALLREDUCE, GSHMEMI_ENGINE_LL_MAX / 4 + 1, 4));
    assert_false(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_ALLREDUCE, 1, 8));
    assert_true(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_FCOLLECT, 3, 8));
    assert_true(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_ALLTOALL, GSHMEMI_ENGINE_LL_MAX, 1));
    assert_false(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_BROADCAST, 0, 4));
    assert_false(gshmemi_engine_uses_ll(GSHMEMI_ENGINE_BARRIER, 1, 1));
    assert_true(gshmemi_engine_slot_bytes(4, 3) >= gshmemi_engine_flags_bytes(4, 3) + 2 * 3 * GSHMEMI_ENGINE_LL_WORDS * 8);
    assert_int_equal(gshmemi_engine_flags_bytes(4, 3) % 128, 0);
    /* the flags of consecutive requests only grow */
    uint64_t last = 0;
    for (uint64_t s = 1; s < 5; s++)
        for (int i = 0; i < 6; i++) { /* the steps that signal or wait, in sequence order */
            static const uint32_t pcs[] = {GSHMEMI_ENGINE_PC_ARRIVE, GSHMEMI_ENGINE_PC_WAIT_ARRIVE, GSHMEMI_ENGINE_PC_MID,
                                           GSHMEMI_ENGINE_PC_WAIT_MID, GSHMEMI_ENGINE_PC_DONE, GSHMEMI_ENGINE_PC_WAIT_DONE};
            uint64_t v = gshmemi_engine_flag(GSHMEMI_ENGINE_ALLREDUCE, pcs[i], s);
            assert_true(v >= last);
            if (i % 2) assert_int_equal(v, last); /* a wait waits for what its signal sent */
            else assert_true(v > last);
            last = v;
        }
    /* shares and active CTAs: every unit once */
    for (int active = 1; active <= 8; active++) {
        uint64_t total = 0, prev = 0;
        for (int b = 0; b < active; b++) {
            uint64_t lo, hi;
            gshmemi_engine_share(1001, b, active, &lo, &hi);
            assert_int_equal(lo, prev);
            total += hi - lo, prev = hi;
        }
        assert_int_equal(total, 1001);
    }
    assert_int_equal(gshmemi_engine_active_ctas(8, 8), 1);
    assert_int_equal(gshmemi_engine_active_ctas(0, 8), 1);
    assert_int_equal(gshmemi_engine_active_ctas(128u << 20, 8), 8);
    assert_int_equal(gshmemi_engine_nchunks(0, 4), 0);
    assert_int_equal(gshmemi_engine_nchunks(9, 4), 3);
}

/* ---- the model of PEs running the primitive sequence with preemption ---- */
#define MP 4      /* PEs */
#define MC 4      /* collectives, each over every PE */
#define MR 12     /* requests of each */
#define NCH 3     /* chunks of a request */
typedef struct {
    int npes, skip_done_wait, ll_single, skip_mid_wait; /* the broken variants: no done wait; one LL parity; no middle wait */
    uint64_t rng;
    uint64_t flags[MC][MP][MP]; /* flags[X][p][m]: PE p's word that member m signals */
    gshmemi_engine_ctx_t ctx[MP][MC];
    int list[MP][MC * MR];      /* PE p's task queue: collective ids in its submission order */
    uint64_t lseq[MP][MC * MR];
    int ntasks[MP], pos[MP];
    uint64_t src_version[MP][MC];
    int work[MP][MC][MR + 1][NCH];
    int gathered[MP][MC][MR + 1][NCH];
    uint64_t reduced[MP][MC][NCH]; /* reduced[p][X][k]: the request whose part of chunk k p last reduced into its dest */
    uint64_t llval[MC][MP][2][MP]; /* llval[X][q][parity][p]: the request whose data p last put in q's row p */
    uint64_t llread[MC][MP][2];    /* llread[X][q][parity]: the last request q took from that parity */
    int violations, completed, preemptions, ll_requests, two_requests;
} model_t;

static int kind_of(int x) { return x == 0 ? GSHMEMI_ENGINE_BARRIER : GSHMEMI_ENGINE_ALLREDUCE; }
/* Which requests go by LL: a function of the call, the same on every PE (as its size is); runs of
 * three in a row, so a parity is reused by LL requests only. */
static int ll_of(int x, uint64_t seq) { return x != 0 && (seq + (uint64_t)x) % 5 < 3; }
/* Which go two-shot: of the others, one in two (also a function of the call). */
static int two_of(int x, uint64_t seq) { return x != 0 && (seq + (uint64_t)x) % 5 == 3; }

static uint64_t rnd(model_t *m)
{
    m->rng ^= m->rng << 13, m->rng ^= m->rng >> 7, m->rng ^= m->rng << 17;
    return m->rng;
}

/* One run on PE p, as a CTA of the daemon does: the task at the current position, from its saved
 * step, until a wait fails or (at random) the run stops after a step as a daemon exit would. */
static void model_run(model_t *m, int p)
{
    int cand[MC], n = 0;
    for (int i = 0; i < m->ntasks[p]; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++) first = m->list[p][j] != m->list[p][i];
        if (first) cand[n++] = i; /* queue order; equal priorities */
    }
    if (m->pos[p] >= n) m->pos[p] = 0;
    const int slot = cand[m->pos[p]], x = m->list[p][slot], kind = kind_of(x);
    gshmemi_engine_ctx_t *c = &m->ctx[p][x];
    if (c->pc == GSHMEMI_ENGINE_PC_ARRIVE) c->seq = m->lseq[p][slot], c->chunk = 0, c->streak = 0;
    const int ll = ll_of(x, c->seq), two = two_of(x, c->seq), par = m->ll_single ? 0 : (int)(c->seq & 1);
    const uint32_t nch = ll ? 1 : NCH;
    for (;;) {
        const uint32_t pc = c->pc;
        if (ll && pc == GSHMEMI_ENGINE_PC_ARRIVE) { /* the data into every member's row p */
            m->src_version[p][x] = c->seq;
            for (int q = 0; q < m->npes; q++) {
                uint64_t prev = m->llval[x][q][par][p];
                if (prev && m->llread[x][q][par] < prev) m->violations++; /* q has not taken it yet */
                m->llval[x][q][par][p] = c->seq;
            }
            m->ll_requests++;
            gshmemi_engine_next(kind, ll, two, nch, c);
            if (rnd(m) % 4 == 0) return;
            continue;
        }
        if (ll && pc == GSHMEMI_ENGINE_PC_WAIT_ARRIVE) {
            for (int q = 0; q < m->npes; q++)
                if (m->llval[x][p][par][q] != c->seq) {
                    c->streak = gshmemi_engine_streak(c->streak, 0);
                    m->pos[p]++;
                    m->preemptions++;
                    return;
                }
            gshmemi_engine_next(kind, ll, two, nch, c);
            if (rnd(m) % 4 == 0) return;
            continue;
        }
        if (ll && pc == GSHMEMI_ENGINE_PC_WORK) { /* reads this PE's rows: each must still hold this request */
            for (int q = 0; q < m->npes; q++)
                if (m->llval[x][p][par][q] != c->seq) m->violations++;
            m->llread[x][p][par] = c->seq;
            m->work[p][x][c->seq][0]++;
            for (int k = 1; k < NCH; k++) m->work[p][x][c->seq][k]++; /* one step covers the request */
            gshmemi_engine_next(kind, ll, two, nch, c);
            if (rnd(m) % 4 == 0) return;
            continue;
        }
        if (pc == GSHMEMI_ENGINE_PC_END) {
            for (int i = slot; i + 1 < m->ntasks[p]; i++) m->list[p][i] = m->list[p][i + 1], m->lseq[p][i] = m->lseq[p][i + 1];
            m->ntasks[p]--;
            m->two_requests += two;
            c->pc = GSHMEMI_ENGINE_PC_ARRIVE;
            m->pos[p] = 0;
            m->completed++;
            return;
        }
        if (pc == GSHMEMI_ENGINE_PC_ARRIVE || pc == GSHMEMI_ENGINE_PC_MID || pc == GSHMEMI_ENGINE_PC_DONE) {
            if (pc == GSHMEMI_ENGINE_PC_ARRIVE) m->src_version[p][x] = c->seq; /* this request's source is in place */
            for (int q = 0; q < m->npes; q++) m->flags[x][q][p] = gshmemi_engine_flag(kind, pc, c->seq);
        } else if (pc == GSHMEMI_ENGINE_PC_WORK) {
            for (int q = 0; q < m->npes; q++) /* reads every member's source: it must hold this request's data */
                if (m->src_version[q][x] != c->seq) m->violations++;
            m->work[p][x][c->seq][c->chunk]++;
            if (two) m->reduced[p][x][c->chunk] = c->seq; /* its part of the chunk, into its dest */
        } else if (pc == GSHMEMI_ENGINE_PC_GATHER) {
            for (int q = 0; q < m->npes; q++) /* reads every other member's part: reduced for this request */
                if (q != p && m->reduced[q][x][c->chunk] != c->seq) m->violations++;
            m->gathered[p][x][c->seq][c->chunk]++;
        } else if (!(m->skip_done_wait && pc == GSHMEMI_ENGINE_PC_WAIT_DONE) && !(m->skip_mid_wait && pc == GSHMEMI_ENGINE_PC_WAIT_MID)) {
            for (int q = 0; q < m->npes; q++)
                if (m->flags[x][p][q] < gshmemi_engine_flag(kind, pc, c->seq)) { /* preempted: the context stays */
                    c->streak = gshmemi_engine_streak(c->streak, 0);
                    m->pos[p]++;
                    m->preemptions++;
                    return;
                }
            c->streak = gshmemi_engine_streak(c->streak, 1);
        }
        gshmemi_engine_next(kind, ll, two, nch, c);
        if (rnd(m) % 4 == 0) return; /* stopped between steps: resumes here */
    }
}

static void model_init(model_t *m, int npes, uint64_t seed, int skip_done_wait, int ll_single, int skip_mid_wait)
{
    memset(m, 0, sizeof(*m));
    m->npes = npes, m->rng = seed | 1, m->skip_done_wait = skip_done_wait, m->ll_single = ll_single, m->skip_mid_wait = skip_mid_wait;
    for (int p = 0; p < npes; p++) {
        /* the requests of every collective in a shuffled order, each collective's in sequence */
        int left[MC];
        for (int x = 0; x < MC; x++) left[x] = MR;
        for (int k = 0; k < MC * MR; k++) {
            int x;
            do x = (int)(rnd(m) % MC);
            while (!left[x]);
            m->list[p][k] = x;
            m->lseq[p][k] = (uint64_t)(MR - left[x] + 1);
            left[x]--;
        }
        m->ntasks[p] = MC * MR;
    }
}

static int model_go(model_t *m)
{
    /* until done, or the first violation (a broken variant may never finish after one) */
    for (long it = 0; it < 2000000 && m->completed < m->npes * MC * MR && !m->violations; it++) {
        int p = (int)(rnd(m) % m->npes);
        if (m->ntasks[p]) model_run(m, p);
    }
    return m->completed == m->npes * MC * MR;
}

static void test_model(void **state)
{
    (void)state;
    static model_t m;
    for (int npes = 2; npes <= MP; npes++)
        for (uint64_t seed = 1; seed <= 40; seed++) {
            model_init(&m, npes, seed * 7919, 0, 0, 0);
            assert_true(model_go(&m));
            assert_int_equal(m.violations, 0);
            for (int p = 0; p < npes; p++)
                for (int x = 1; x < MC; x++)
                    for (int s = 1; s <= MR; s++)
                        for (int k = 0; k < NCH; k++) {
                            assert_int_equal(m.work[p][x][s][k], 1);
                            assert_int_equal(m.gathered[p][x][s][k], two_of(x, (uint64_t)s));
                        }
            assert_true(m.preemptions > 0);
            assert_true(m.ll_requests > 0);
            assert_true(m.two_requests > 0);
        }
}

/* How many of 40 seeded runs of 2 PEs the model flags, with one rule broken. */
static int model_broken_runs(uint64_t seed_step, int skip_done_wait, int ll_single, int skip_mid_wait)
{
    static model_t m;
    int caught = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        model_init(&m, 2, seed * seed_step, skip_done_wait, ll_single, skip_mid_wait);
        model_go(&m);
        caught += m.violations > 0;
    }
    return caught;
}

/* Without the wait for the members' done, a member moves to its next request while another still
 * reads its source: the model must see it. */
static void test_model_catches(void **state)
{
    (void)state;
    assert_true(model_broken_runs(104729, 1, 0, 0) > 0);
}

/* LL with one parity instead of two: a member overwrites a row its reader has not taken yet. */
static void test_model_catches_ll(void **state)
{
    (void)state;
    assert_true(model_broken_runs(15485863, 0, 1, 0) > 0);
}

/* Two-shot without the wait for the middle: a member gathers a part its owner has not reduced yet. */
static void test_model_catches_mid(void **state)
{
    (void)state;
    assert_true(model_broken_runs(7919, 0, 0, 1) > 0);
}

/* ---- a stream wait's hold (gshmemi_engine_hold_stays) ----
 * A model of one engine's launches (4 CTAs) and the host, their steps interleaved at random: the
 * host publishes hold generations, counts on the launch once every ack word holds the newest,
 * and clears the hold (the held requests complete) only while the launch it counted on is whole.
 * A CTA looks (acknowledging by the rule), decides to leave by the rule on a fresh reading, and
 * leaves later (left + 1); a launch whose CTAs have all left is relaunched (its ack words kept).
 * Safety: no CTA leaves while the host counts on its launch with the hold active. Liveness: with
 * the hold active and nothing completing, the host comes to count on some launch. */
#define HOLD_CTAS 4
typedef int (*hold_rule_t)(uint64_t hold, uint32_t left, uint64_t *acked, int *ack);

static int rule_ignores_left(uint64_t hold, uint32_t left, uint64_t *acked, int *ack)
{
    (void)left;
    return gshmemi_engine_hold_stays(hold, 0, acked, ack);
}
static int rule_never_stays(uint64_t hold, uint32_t left, uint64_t *acked, int *ack)
{
    gshmemi_engine_hold_stays(hold, left, acked, ack);
    return 0;
}

/* 0: both hold; 1: a CTA left while counted on; 2: never counted on (liveness) */
static int hold_model(hold_rule_t rule, unsigned seed)
{
    uint64_t hold = 0, gen = 0, ack[HOLD_CTAS] = {0}, acked[HOLD_CTAS];
    int alive[HOLD_CTAS], leaving[HOLD_CTAS], counted = 0;
    uint32_t left = 0;
    for (int b = 0; b < HOLD_CTAS; b++) alive[b] = 1, leaving[b] = 0, acked[b] = ~0ull;
    for (int step = 0; step < 4000; step++) {
        const int drain = step >= 2000; /* the hold stays active, nothing completes */
        int ev = (int)(rand_r(&seed) % 7), b = (int)(rand_r(&seed) % HOLD_CTAS), a;
        if (drain && ev <= 1) ev = 2 + ev; /* no new generation, no clearing */
        if (drain && !(hold & 1)) hold = ++gen << 1 | 1, counted = 0;
        switch (ev) {
        case 0: hold = ++gen << 1 | 1, counted = 0; break; /* a stream wait */
        case 1: /* the held requests complete: only on a launch counted on (a whole one) */
            if (counted) hold = gen << 1, counted = 0;
            break;
        case 2: { /* the host looks at the acks */
            int all = 1;
            for (int c = 0; c < HOLD_CTAS; c++) all &= ack[c] >= gen;
            if ((hold & 1) && all) {
                counted = 1;
                if (drain) return 0;
            }
            break;
        }
        case 3: /* a look */
            if (alive[b] && !leaving[b]) {
                rule(hold, left, &acked[b], &a);
                if (a) ack[b] = acked[b];
            }
            break;
        case 4: /* a decision to leave, on a fresh reading */
            if (alive[b] && !leaving[b]) {
                int stays = rule(hold, left, &acked[b], &a);
                if (a) ack[b] = acked[b];
                if (!stays) leaving[b] = 1;
            }
            break;
        case 5: /* a CTA that decided leaves */
            if (leaving[b]) {
                if (counted && (hold & 1)) return 1;
                leaving[b] = 0, alive[b] = 0, left++;
            }
            break;
        default: { /* the poller relaunches an ended launch */
            int any = 0;
            for (int c = 0; c < HOLD_CTAS; c++) any |= alive[c];
            if (!any) {
                left = 0, counted = 0;
                for (int c = 0; c < HOLD_CTAS; c++) alive[c] = 1, acked[c] = ~0ull;
            }
            break;
        }
        }
    }
    return 2;
}

static void test_hold(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 3000; seed++) {
        int r = hold_model(gshmemi_engine_hold_stays, seed);
        if (r) fail_msg("seed %u: %s", seed, r == 1 ? "a CTA left a launch the host counted on" : "the host never came to count on a launch");
    }
}

/* The model catches a rule that ignores a CTA gone (the others stay: the launch never ends) and one
 * that never stays (a CTA leaves a launch counted on). */
static void test_hold_catches(void **state)
{
    (void)state;
    int stuck = 0, left_counted = 0;
    for (unsigned seed = 1; seed <= 3000; seed++) {
        stuck += hold_model(rule_ignores_left, seed) == 2;
        left_counted += hold_model(rule_never_stays, seed) == 1;
    }
    assert_true(stuck > 0);
    assert_true(left_counted > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_refusals), cmocka_unit_test(test_queue_full),   cmocka_unit_test(test_queue_threads),
        cmocka_unit_test(test_stickiness),     cmocka_unit_test(test_sequence),     cmocka_unit_test(test_model),
        cmocka_unit_test(test_model_catches),  cmocka_unit_test(test_model_catches_ll), cmocka_unit_test(test_model_catches_mid),
        cmocka_unit_test(test_hold),           cmocka_unit_test(test_hold_catches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
