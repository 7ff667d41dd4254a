/* The proxy's joining of non-blocking puts (transports/proxy/join.c): the runs it makes from
 * shuffled slices of buffers, against a model that replays every request byte by byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/proxy/join.h"
#include "expect.h"

static gshmemi_proxy_req_t put(int pe, uint64_t dst, uint64_t src, uint64_t n)
{
    gshmemi_proxy_req_t r;
    memset(&r, 0, sizeof(r));
    r.arg[0] = gshmemi_proxy_op_word(GSHMEMI_PROXY_PUT, pe);
    r.arg[1] = dst;
    r.arg[2] = src;
    r.arg[3] = n;
    return r;
}

#define NPE 4
/* A put as the bytes it moves: (PE, destination byte, source byte) for each of its bytes. Joining
 * must move exactly the same bytes, each as many times as the requests do (duplicates too). */
typedef struct {
    uint64_t pe, dst, src;
} moved_t;
static int cmp_moved(const void *x, const void *y)
{
    const moved_t *a = x, *b = y;
    if (a->pe != b->pe) return a->pe < b->pe ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    return a->src < b->src ? -1 : a->src > b->src;
}
static size_t bytes_of(int pe, uint64_t dst, uint64_t src, uint64_t n, moved_t *out, size_t at)
{
    for (uint64_t k = 0; k < n; k++) out[at++] = (moved_t){(uint64_t)pe, dst + k, src + k};
    return at;
}

/* the runs of b[] move what the requests do, in (PE, dst) order, every request counted once and
 * each run named by one of its tickets */
static void check(const char *what, const gshmemi_proxy_req_t *b, int n, int want_runs)
{
    static moved_t want[GSHMEMI_PROXY_JOIN_MAX * 4096], got[GSHMEMI_PROXY_JOIN_MAX * 4096];
    gshmemi_proxy_put_run_t run[GSHMEMI_PROXY_JOIN_MAX];
    const uint64_t t0 = 1000;
    const int nrun = gshmemi_proxy_join_puts(b, n, t0, run);
    size_t nw = 0, ng = 0;
    int count = 0, before = expect_failures;

    for (int i = 0; i < n; i++) nw = bytes_of(gshmemi_proxy_req_pe(&b[i]), b[i].arg[1], b[i].arg[2], b[i].arg[3], want, nw);
    for (int i = 0; i < nrun; i++) ng = bytes_of(run[i].pe, run[i].dst, run[i].src, run[i].n, got, ng);
    qsort(want, nw, sizeof(moved_t), cmp_moved);
    qsort(got, ng, sizeof(moved_t), cmp_moved);
    EXPECT(nw == ng && memcmp(want, got, nw * sizeof(moved_t)) == 0, "%s: the runs move other bytes than the requests (%zu against %zu)", what,
           ng, nw);
    if (want_runs >= 0) EXPECT(nrun == want_runs, "%s: %d runs, expected %d", what, nrun, want_runs);
    for (int i = 0; i < nrun && expect_failures == before; i++) {
        count += run[i].count;
        EXPECT(run[i].first >= t0 && run[i].first < t0 + (uint64_t)n, "%s: run %d names ticket %llu", what, i, (unsigned long long)run[i].first);
        if (i) EXPECT(run[i - 1].pe < run[i].pe || (run[i - 1].pe == run[i].pe && run[i - 1].dst <= run[i].dst), "%s: runs out of order", what);
    }
    if (expect_failures == before) EXPECT(count == n, "%s: the runs hold %d requests of %d", what, count, n);
}

int main(void)
{
    gshmemi_proxy_req_t b[GSHMEMI_PROXY_JOIN_MAX];
    gshmemi_proxy_put_run_t run[GSHMEMI_PROXY_JOIN_MAX];

    /* 32 CTAs each putting its slice of one buffer, in a shuffled order: one run */
    for (int i = 0; i < 32; i++) {
        int c = (i * 13) % 32;
        b[i] = put(1, 64u * c, 100000u + 64u * c, 64);
    }
    check("32 slices of one buffer", b, 32, 1);
    EXPECT(gshmemi_proxy_join_puts(b, 32, 7, run) == 1 && run[0].n == 2048 && run[0].dst == 0 && run[0].src == 100000 &&
               run[0].first == 7 + 0 /* slice 0 is request 0 */,
           "one run of 2048 bytes from offset 0 expected");
    /* two iterations of the same slices (a perftest's loop): duplicates make a run each */
    for (int i = 0; i < 32; i++) b[32 + i] = b[i];
    check("two laps over 32 slices", b, 64, 2);
    /* the same slices to two PEs: a run per PE */
    for (int i = 0; i < 16; i++) b[i] = put(i % 2 ? 3 : 2, 128u * (uint64_t)(i / 2), 5000u + 128u * (uint64_t)(i / 2), 128);
    check("slices to two PEs", b, 16, 2);
    /* contiguous destinations from sources that do not continue: no join */
    b[0] = put(0, 0, 100, 16);
    b[1] = put(0, 16, 300, 16);
    check("destination contiguous, source not", b, 2, 2);
    /* contiguous sources to destinations that do not continue: no join */
    b[0] = put(0, 0, 100, 16);
    b[1] = put(0, 32, 116, 16);
    check("source contiguous, destination not", b, 2, 2);
    /* the same region to another PE is not joined across PEs */
    b[0] = put(1, 0, 100, 16);
    b[1] = put(2, 16, 116, 16);
    check("across PEs", b, 2, 2);
    /* random batches: sizes, PEs, offsets, duplicates and overlaps */
    srand(12345);
    for (int trial = 0; trial < 2000 && expect_failures < 5; trial++) {
        int n = 1 + rand() % GSHMEMI_PROXY_JOIN_MAX;
        for (int i = 0; i < n; i++) {
            uint64_t len = 1 + (uint64_t)(rand() % 64), dst = (uint64_t)(rand() % 32) * 64;
            b[i] = put(rand() % NPE, dst, 100000u + dst + (rand() % 4 ? 0 : 8), len);
        }
        check("random batch", b, n, -1);
    }
    EXPECT(gshmemi_proxy_join_puts(b, 0, 0, run) == 0, "an empty batch makes runs");
    EXPECT(gshmemi_proxy_join_puts(b, GSHMEMI_PROXY_JOIN_MAX + 1, 0, run) == 0, "an oversized batch is accepted");

    if (expect_failures) {
        fprintf(stderr, "test_proxy_join: %d check(s) failed\n", expect_failures);
        return 1;
    }
    printf("test_proxy_join: every batch joined as its requests write\n");
    return 0;
}
