/* The symmetric-heap offset allocator: best fit, alignment, coalescing, bad frees, overflow, and
 * a randomized run checked against a simple reference model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap/alloc.h"
#include "runtime/base/log.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* splitmix64: fixed seed, so every run does the same operations. */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(size_t n) { return (size_t)(rng() % n); }

static gshmemi_alloc_t *make(size_t region)
{
    gshmemi_alloc_t *a = NULL;
    assert_int_equal(gshmemi_alloc_create(region, 16, &a), GSHMEMI_OK);
    assert_non_null(a);
    return a;
}

static size_t must_alloc(gshmemi_alloc_t *a, size_t size, size_t align)
{
    size_t off = (size_t)-1;
    assert_int_equal(gshmemi_alloc_alloc(a, size, align, &off), GSHMEMI_OK);
    return off;
}

static void assert_empty(const gshmemi_alloc_t *a, size_t region)
{
    assert_int_equal(gshmemi_alloc_bytes_free(a), region);
    assert_int_equal(gshmemi_alloc_largest_free(a), region);
}

static void test_create_invalid(void **state)
{
    gshmemi_alloc_t *a = (gshmemi_alloc_t *)1;
    (void)state;
    assert_int_equal(gshmemi_alloc_create(MiB, 0, &a), GSHMEMI_ERR_INVALID);
    assert_null(a);
    assert_int_equal(gshmemi_alloc_create(MiB, 24, &a), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_create(0, 16, &a), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_create(1000, 16, &a), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_create(MiB, 16, NULL), GSHMEMI_ERR_INVALID);
    gshmemi_alloc_destroy(NULL);
}

static void test_basic(void **state)
{
    gshmemi_alloc_t *a = make(MiB);
    size_t o1, o2, o3;
    (void)state;
    assert_empty(a, MiB);
    assert_int_equal(gshmemi_alloc_high_water(a), 0);
    o1 = must_alloc(a, 1, 0);
    o2 = must_alloc(a, 100, 0);
    o3 = must_alloc(a, 16, 0);
    assert_int_equal(o1, 0);
    assert_int_equal(o2, 16);
    assert_int_equal(o3, 128);
    assert_int_equal(gshmemi_alloc_size_of(a, o1), 16);
    assert_int_equal(gshmemi_alloc_size_of(a, o2), 112);
    assert_int_equal(gshmemi_alloc_size_of(a, o3), 16);
    assert_int_equal(gshmemi_alloc_size_of(a, o2 + 16), 0);
    assert_int_equal(gshmemi_alloc_size_of(a, 144), 0);
    assert_int_equal(gshmemi_alloc_bytes_free(a), MiB - 144);
    assert_int_equal(gshmemi_alloc_largest_free(a), MiB - 144);
    assert_int_equal(gshmemi_alloc_free(a, o2), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_size_of(a, o2), 0);
    assert_int_equal(gshmemi_alloc_free(a, o1), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, o3), GSHMEMI_OK);
    assert_empty(a, MiB);
    assert_int_equal(must_alloc(a, 5, 0), 0);
    gshmemi_alloc_destroy(a);
}

static void test_invalid_args(void **state)
{
    gshmemi_alloc_t *a = make(MiB);
    size_t off = 12345;
    (void)state;
    must_alloc(a, 64, 0);
    assert_int_equal(gshmemi_alloc_alloc(a, 0, 0, &off), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_alloc(a, 16, 3, &off), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_alloc(a, 16, 48, &off), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_alloc(a, 16, ((size_t)1 << 63) + 1, &off), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_alloc(a, 16, 0, NULL), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_alloc(NULL, 16, 0, &off), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_free(NULL, 0), GSHMEMI_ERR_INVALID);
    assert_int_equal(off, 12345);
    assert_int_equal(gshmemi_alloc_bytes_free(a), MiB - 64);
    /* Alignments below min_align act as min_align. */
    assert_int_equal(must_alloc(a, 1, 1), 64);
    assert_int_equal(must_alloc(a, 1, 8), 80);
    gshmemi_alloc_destroy(a);
}

static void test_alignment(void **state)
{
    gshmemi_alloc_t *a = make(64 * MiB);
    size_t off;
    (void)state;
    assert_int_equal(must_alloc(a, 1, 0), 0);
    assert_int_equal(must_alloc(a, 100, 2 * MiB), 2 * MiB);
    /* The leading fragment [16, 2 MiB) went back to the free set and is the best fit now. */
    assert_int_equal(must_alloc(a, 1000, 0), 16);
    assert_int_equal(must_alloc(a, 4096, 4096), 4096);
    /* Best fit for 16 bytes: the 3 KiB leading fragment [1024, 4096) of the last split. */
    assert_int_equal(must_alloc(a, 16, 0), 1024);
    for (size_t al = 16; al <= 16 * MiB; al <<= 1) {
        off = must_alloc(a, 24, al);
        assert_int_equal(off % al, 0);
        assert_int_equal(gshmemi_alloc_size_of(a, off), 32);
    }
    gshmemi_alloc_destroy(a);

    /* An alignment beyond the region only fits at offset 0. */
    a = make(MiB);
    off = must_alloc(a, 16, 0);
    assert_int_equal(gshmemi_alloc_alloc(a, 16, (size_t)1 << 40, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_free(a, 0), GSHMEMI_OK);
    assert_int_equal(must_alloc(a, 16, (size_t)1 << 40), 0);
    /* A request filling the whole region with a 2 MiB alignment (exercises size + slack > region). */
    assert_int_equal(gshmemi_alloc_free(a, 0), GSHMEMI_OK);
    assert_int_equal(must_alloc(a, MiB, 2 * MiB), 0);
    assert_int_equal(gshmemi_alloc_bytes_free(a), 0);
    gshmemi_alloc_destroy(a);
}

static void test_best_fit_reuse(void **state)
{
    gshmemi_alloc_t *a = make(MiB);
    size_t A, B, C, D, E, F, G;
    (void)state;
    A = must_alloc(a, 256, 0);
    must_alloc(a, 16, 0);
    C = must_alloc(a, 512, 0);
    must_alloc(a, 16, 0);
    E = must_alloc(a, 1024, 0);
    must_alloc(a, 16, 0);
    G = must_alloc(a, 512, 0);
    must_alloc(a, 16, 0);
    assert_int_equal(gshmemi_alloc_free(a, E), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, G), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, C), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, A), GSHMEMI_OK);
    /* Same size back: the freed block of that size. Equal sizes: the lower offset first. */
    assert_int_equal(must_alloc(a, 512, 0), C);
    assert_int_equal(must_alloc(a, 512, 0), G);
    assert_int_equal(must_alloc(a, 200, 0), A);
    /* Smallest that fits: E (1024) rather than the tail; the rest of E is the next best fit. */
    B = must_alloc(a, 600, 0);
    assert_int_equal(B, E);
    D = must_alloc(a, 400, 0);
    assert_int_equal(D, E + 608);
    /* A (256) has 56 bytes left after 200: a 48-byte request takes them. */
    F = must_alloc(a, 48, 0);
    assert_int_equal(F, A + 208);
    gshmemi_alloc_destroy(a);
}

static void test_coalescing(void **state)
{
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    (void)state;
    for (int tail = 0; tail < 2; tail++) {
        for (int p = 0; p < 6; p++) {
            /* Without a tail the three blocks tile the whole region. */
            size_t region = tail ? 4 * KiB : 3 * KiB;
            gshmemi_alloc_t *a = make(region);
            size_t off[3];
            for (int i = 0; i < 3; i++) off[i] = must_alloc(a, KiB, 0);
            for (int i = 0; i < 3; i++) {
                assert_int_equal(gshmemi_alloc_free(a, off[perms[p][i]]), GSHMEMI_OK);
                assert_int_equal(gshmemi_alloc_bytes_free(a), region - (size_t)(2 - i) * KiB);
            }
            assert_empty(a, region);
            assert_int_equal(must_alloc(a, region, 0), 0);
            gshmemi_alloc_destroy(a);
        }
    }
}

static void test_exhaustion(void **state)
{
    const size_t region = 64 * KiB;
    gshmemi_alloc_t *a = make(region);
    size_t off[64], o;
    (void)state;
    for (int i = 0; i < 64; i++) {
        off[i] = must_alloc(a, KiB, 0);
        assert_int_equal(off[i], (size_t)i * KiB);
    }
    o = 777;
    assert_int_equal(gshmemi_alloc_alloc(a, 1, 0, &o), GSHMEMI_ERR_NOMEM);
    assert_int_equal(o, 777);
    assert_int_equal(gshmemi_alloc_bytes_free(a), 0);
    assert_int_equal(gshmemi_alloc_largest_free(a), 0);
    assert_int_equal(gshmemi_alloc_free(a, off[10]), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_alloc(a, 2 * KiB, 0, &o), GSHMEMI_ERR_NOMEM);
    assert_int_equal(must_alloc(a, KiB, 0), off[10]);
    assert_int_equal(gshmemi_alloc_free(a, off[10]), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, off[12]), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_alloc(a, 2 * KiB, 0, &o), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_free(a, off[11]), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_largest_free(a), 3 * KiB);
    assert_int_equal(must_alloc(a, 3 * KiB, 0), off[10]);
    assert_int_equal(gshmemi_alloc_free(a, off[10]), GSHMEMI_OK);
    for (int i = 0; i < 64; i++)
        if (i < 10 || i > 12) assert_int_equal(gshmemi_alloc_free(a, off[i]), GSHMEMI_OK);
    assert_empty(a, region);
    gshmemi_alloc_destroy(a);
}

static void test_invalid_free(void **state)
{
    const size_t region = MiB;
    gshmemi_alloc_t *a = make(region);
    size_t x, y, z, bf, lf;
    (void)state;
    x = must_alloc(a, 256, 0);
    y = must_alloc(a, 256, 0);
    z = must_alloc(a, 256, 0);
    assert_int_equal(gshmemi_alloc_free(a, y), GSHMEMI_OK);
    bf = gshmemi_alloc_bytes_free(a);
    lf = gshmemi_alloc_largest_free(a);
    assert_int_equal(gshmemi_alloc_free(a, x + 16), GSHMEMI_ERR_INVALID);  /* interior */
    assert_int_equal(gshmemi_alloc_free(a, x + 1), GSHMEMI_ERR_INVALID);   /* unaligned interior */
    assert_int_equal(gshmemi_alloc_free(a, y), GSHMEMI_ERR_INVALID);       /* double free */
    assert_int_equal(gshmemi_alloc_free(a, y + 16), GSHMEMI_ERR_INVALID);  /* inside a free block */
    assert_int_equal(gshmemi_alloc_free(a, z + 256), GSHMEMI_ERR_INVALID); /* start of the free tail */
    assert_int_equal(gshmemi_alloc_free(a, 4096), GSHMEMI_ERR_INVALID);    /* never allocated */
    assert_int_equal(gshmemi_alloc_free(a, region), GSHMEMI_ERR_INVALID);  /* out of range */
    assert_int_equal(gshmemi_alloc_free(a, SIZE_MAX), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_bytes_free(a), bf);
    assert_int_equal(gshmemi_alloc_largest_free(a), lf);
    assert_int_equal(gshmemi_alloc_size_of(a, x), 256);
    assert_int_equal(gshmemi_alloc_size_of(a, z), 256);
    /* Still consistent: the hole is reused, and everything coalesces back. */
    assert_int_equal(must_alloc(a, 256, 0), y);
    assert_int_equal(gshmemi_alloc_free(a, x), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, x), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_alloc_free(a, z), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_free(a, y), GSHMEMI_OK);
    assert_empty(a, region);
    gshmemi_alloc_destroy(a);
}

static void test_overflow_sizes(void **state)
{
    const size_t huge = SIZE_MAX & ~(size_t)15;
    const size_t top = (size_t)1 << (sizeof(size_t) * 8 - 1);
    gshmemi_alloc_t *a = make(MiB);
    size_t off = 99;
    (void)state;
    assert_int_equal(gshmemi_alloc_alloc(a, SIZE_MAX, 0, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_alloc(a, SIZE_MAX - 7, 0, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_alloc(a, SIZE_MAX - 15, 2 * MiB, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_alloc(a, MiB + 1, 0, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_alloc(a, 16, top, &off), GSHMEMI_OK);
    assert_int_equal(off, 0);
    assert_int_equal(gshmemi_alloc_alloc(a, MiB - 16, top, &off), GSHMEMI_ERR_NOMEM);
    gshmemi_alloc_destroy(a);

    /* A region spanning nearly the whole address space: sizes and alignments at the top. */
    a = make(huge);
    assert_int_equal(gshmemi_alloc_alloc(a, SIZE_MAX, 0, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_alloc(a, huge + 1, 0, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(must_alloc(a, huge - 1, 0), 0);
    assert_int_equal(gshmemi_alloc_size_of(a, 0), huge);
    assert_int_equal(gshmemi_alloc_bytes_free(a), 0);
    assert_int_equal(gshmemi_alloc_high_water(a), huge);
    assert_int_equal(gshmemi_alloc_free(a, 0), GSHMEMI_OK);
    assert_empty(a, huge);
    assert_int_equal(must_alloc(a, 1, top), 0);
    assert_int_equal(must_alloc(a, 1, top), top);
    assert_int_equal(gshmemi_alloc_alloc(a, 1, top, &off), GSHMEMI_ERR_NOMEM);
    /* size + alignment slack overflows: must not wrap into a false fit. */
    assert_int_equal(gshmemi_alloc_alloc(a, huge - 32, top, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(must_alloc(a, top - 16, 0), 16);
    assert_int_equal(must_alloc(a, top - 32, 0), top + 16);
    assert_int_equal(gshmemi_alloc_bytes_free(a), 0);
    gshmemi_alloc_destroy(a);
}

static void test_high_water(void **state)
{
    gshmemi_alloc_t *a = make(16 * MiB);
    size_t x, y, off;
    (void)state;
    x = must_alloc(a, 100, 0);
    assert_int_equal(gshmemi_alloc_high_water(a), 112);
    y = must_alloc(a, 1000, 0);
    assert_int_equal(gshmemi_alloc_high_water(a), 1120);
    /* Monotonic: freeing the top block does not lower it. */
    assert_int_equal(gshmemi_alloc_free(a, y), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_high_water(a), 1120);
    assert_int_equal(must_alloc(a, 16, 0), 112);
    assert_int_equal(gshmemi_alloc_high_water(a), 1120);
    assert_int_equal(must_alloc(a, 16, MiB), MiB);
    assert_int_equal(gshmemi_alloc_high_water(a), MiB + 16);
    assert_int_equal(gshmemi_alloc_alloc(a, 32 * MiB, 0, &off), GSHMEMI_ERR_NOMEM);
    assert_int_equal(gshmemi_alloc_high_water(a), MiB + 16);
    (void)x;
    gshmemi_alloc_destroy(a);
}

/* More than GSHMEMI_ALLOC_SCAN_LIMIT free blocks that are big enough but misaligned for the
 * request: with a block that surely fits it is taken; without one the scan goes on to the
 * misaligned blocks that do fit, so NOMEM only means nothing fits. */
static void test_scan_limit(void **state)
{
    enum { N = 300 };
    const size_t al = 4096, xsize = 4096 + 16;
    size_t xs[N], first_fit = 0, off;
    int first_idx = -1;
    (void)state;
    for (int with_tail = 1; with_tail >= 0; with_tail--) {
        gshmemi_alloc_t *a = make(4 * MiB);
        must_alloc(a, 32, 0);
        for (int i = 0; i < N; i++) {
            xs[i] = must_alloc(a, xsize, 0);
            must_alloc(a, 16, 0);
        }
        first_idx = -1;
        for (int i = 0; i < N && first_idx < 0; i++)
            if (xs[i] % al == 0 || al - xs[i] % al <= xsize - 4096) first_idx = i, first_fit = xs[i] + (al - xs[i] % al) % al;
        assert_true(first_idx > GSHMEMI_ALLOC_SCAN_LIMIT);
        if (!with_tail) must_alloc(a, gshmemi_alloc_largest_free(a), 0);
        for (int i = 0; i < N; i++) assert_int_equal(gshmemi_alloc_free(a, xs[i]), GSHMEMI_OK);
        off = must_alloc(a, 4096, al);
        assert_int_equal(off % al, 0);
        if (with_tail) {
            assert_true(off > xs[N - 1]);
        } else {
            assert_int_equal(off, first_fit);
            /* Use up every fitting block; then nothing fits. */
            while (gshmemi_alloc_alloc(a, 4096, al, &off) == GSHMEMI_OK) assert_int_equal(off % al, 0);
            assert_int_equal(gshmemi_alloc_alloc(a, 4096, al, &off), GSHMEMI_ERR_NOMEM);
            assert_int_equal(must_alloc(a, 4096, 0) % 16, 0);
        }
        gshmemi_alloc_destroy(a);
    }
}

/* Many blocks: each call must stay logarithmic, or this takes minutes. */
static void test_many_blocks(void **state)
{
    enum { N = 100000 };
    const size_t region = 4 * MiB;
    gshmemi_alloc_t *a = make(region);
    size_t *off = malloc(N * sizeof(*off)), o;
    (void)state;
    assert_non_null(off);
    rng_state = 7;
    for (int i = 0; i < N; i++) off[i] = must_alloc(a, 16, 0);
    for (int i = 0; i < N; i += 2) assert_int_equal(gshmemi_alloc_free(a, off[i]), GSHMEMI_OK);
    assert_int_equal(gshmemi_alloc_largest_free(a), region - (size_t)N * 16);
    for (int i = 0; i < N; i += 2) {
        /* Only the tail holds 32 bytes; the 16-byte holes are then refilled lowest first. */
        o = must_alloc(a, 32, 0);
        assert_int_equal(o, (size_t)N * 16);
        assert_int_equal(gshmemi_alloc_free(a, o), GSHMEMI_OK);
        off[i] = must_alloc(a, 16, 0);
        assert_int_equal(off[i], (size_t)i * 16);
    }
    for (int i = N - 1; i > 0; i--) {
        size_t j = rng_below((size_t)i + 1), t = off[i];
        off[i] = off[j];
        off[j] = t;
    }
    for (int i = 0; i < N; i++) assert_int_equal(gshmemi_alloc_free(a, off[i]), GSHMEMI_OK);
    assert_empty(a, region);
    free(off);
    gshmemi_alloc_destroy(a);
}

/* Every PE runs the same calls: the offsets may depend on nothing else (not on where the
 * allocator's own metadata happens to live). */
static void test_determinism(void **state)
{
    enum { OPS = 20000, MAXLIVE = 512 };
    gshmemi_alloc_t *a = make(8 * MiB), *b;
    size_t live[MAXLIVE];
    int n = 0;
    void *noise[64];
    (void)state;
    for (int i = 0; i < 64; i++) noise[i] = malloc(16 + (size_t)i * 40);
    b = make(8 * MiB);
    rng_state = 42;
    for (int op = 0; op < OPS; op++) {
        if (n < MAXLIVE && (n == 0 || rng_below(100) < 55)) {
            size_t size = 1 + rng_below(rng_below(8) == 0 ? 256 * KiB : 4 * KiB);
            size_t align = rng_below(4) == 0 ? (size_t)16 << rng_below(14) : 0;
            size_t oa = 1, ob = 2;
            int ra = gshmemi_alloc_alloc(a, size, align, &oa);
            int rb = gshmemi_alloc_alloc(b, size, align, &ob);
            assert_int_equal(ra, rb);
            if (ra == GSHMEMI_OK) {
                assert_int_equal(oa, ob);
                live[n++] = oa;
            }
        } else {
            size_t k = rng_below((size_t)n);
            assert_int_equal(gshmemi_alloc_free(a, live[k]), GSHMEMI_OK);
            assert_int_equal(gshmemi_alloc_free(b, live[k]), GSHMEMI_OK);
            live[k] = live[--n];
        }
        if (op % 1000 == 0) {
            free(noise[op / 1000 % 64]);
            noise[op / 1000 % 64] = malloc(24 + (size_t)op % 777);
        }
        assert_int_equal(gshmemi_alloc_bytes_free(a), gshmemi_alloc_bytes_free(b));
        assert_int_equal(gshmemi_alloc_largest_free(a), gshmemi_alloc_largest_free(b));
    }
    assert_int_equal(gshmemi_alloc_high_water(a), gshmemi_alloc_high_water(b));
    for (int i = 0; i < 64; i++) free(noise[i]);
    gshmemi_alloc_destroy(a);
    gshmemi_alloc_destroy(b);
}

/* ---- randomized run against a reference model ---- */

typedef struct {
    size_t off, size;
} ref_blk_t;

typedef struct {
    size_t region;
    ref_blk_t *live; /* sorted by offset */
    size_t n, cap, used, high_water;
} ref_t;

static size_t ref_capped; /* placements past the scan limit */

static size_t ref_pad(size_t off, size_t align) { return (align - (off & (align - 1))) & (align - 1); }

static int key_less(size_t s1, size_t o1, size_t s2, size_t o2) { return s1 < s2 || (s1 == s2 && o1 < o2); }

/* What the allocator must return, from the free gaps between live blocks (which are maximal
 * exactly when the allocator coalesces): best fit by (size, offset), except that after
 * GSHMEMI_ALLOC_SCAN_LIMIT misaligned candidates the smallest block that fits at any offset wins. */
static int ref_place(const ref_t *r, size_t size, size_t align, size_t *off, size_t *largest)
{
    size_t sure = size + align - 16;
    size_t best_s = 0, best_o = 0, sure_s = 0, sure_o = 0, misfits = 0, prev = 0, big = 0;
    int have_best = 0, have_sure = 0;

    /* Pass 1: best fit and the smallest surely fitting block. */
    for (size_t i = 0; i <= r->n; i++) {
        size_t end = i < r->n ? r->live[i].off : r->region, gs = end - prev, go = prev;
        if (i < r->n) prev = r->live[i].off + r->live[i].size;
        if (gs == 0) continue;
        if (gs > big) big = gs;
        if (gs < size) continue;
        if (gs - size >= ref_pad(go, align) && (!have_best || key_less(gs, go, best_s, best_o))) {
            have_best = 1;
            best_s = gs;
            best_o = go;
        }
        if (gs >= sure && (!have_sure || key_less(gs, go, sure_s, sure_o))) {
            have_sure = 1;
            sure_s = gs;
            sure_o = go;
        }
    }
    *largest = big;
    if (!have_best) return 0;
    /* Pass 2: misaligned candidates the allocator looks at before the best fit. */
    prev = 0;
    for (size_t i = 0; i <= r->n; i++) {
        size_t end = i < r->n ? r->live[i].off : r->region, gs = end - prev, go = prev;
        if (i < r->n) prev = r->live[i].off + r->live[i].size;
        if (gs >= size && gs < sure && gs - size < ref_pad(go, align) && key_less(gs, go, best_s, best_o)) misfits++;
    }
    if (best_s < sure && misfits >= GSHMEMI_ALLOC_SCAN_LIMIT) ref_capped++;
    if (best_s < sure && misfits >= GSHMEMI_ALLOC_SCAN_LIMIT && have_sure) {
        best_s = sure_s;
        best_o = sure_o;
    }
    *off = best_o + ref_pad(best_o, align);
    return 1;
}

static size_t ref_index(const ref_t *r, size_t off)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->live[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void ref_insert(ref_t *r, size_t off, size_t size)
{
    size_t i = ref_index(r, off);
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->live = realloc(r->live, r->cap * sizeof(*r->live));
        assert_non_null(r->live);
    }
    /* No overlap with either neighbour, inside the region. */
    assert_true(off + size <= r->region);
    if (i > 0) assert_true(r->live[i - 1].off + r->live[i - 1].size <= off);
    if (i < r->n) assert_true(off + size <= r->live[i].off);
    memmove(&r->live[i + 1], &r->live[i], (r->n - i) * sizeof(*r->live));
    r->live[i].off = off;
    r->live[i].size = size;
    r->n++;
    r->used += size;
    if (off + size > r->high_water) r->high_water = off + size;
}

static void ref_remove_at(ref_t *r, size_t i)
{
    r->used -= r->live[i].size;
    memmove(&r->live[i], &r->live[i + 1], (r->n - i - 1) * sizeof(*r->live));
    r->n--;
}

static size_t stress_ops(void)
{
    const char *s = getenv("TEST_ALLOC_OPS");
    return s && *s ? (size_t)strtoull(s, NULL, 10) : 200000;
}

static void test_stress(void **state)
{
    const size_t region = 4 * MiB, ops = stress_ops();
    gshmemi_alloc_t *a = make(region);
    ref_t r = {.region = region};
    size_t last_freed = SIZE_MAX, nomem = 0, aligned = 0, peak = 0, emptied = 0;
    (void)state;
    rng_state = 12345;
    for (size_t op = 0; op < ops; op++) {
        /* Fill, churn and drain phases, so exhaustion, steady fragmentation and an empty heap occur. */
        static const unsigned phase_p[3] = {75, 50, 25};
        unsigned p_alloc = phase_p[(op / 20000) % 3];
        size_t largest, expect = 0;
        if (r.n == 0 || rng_below(100) < p_alloc) {
            unsigned k = (unsigned)rng_below(100);
            size_t size = k < 60 ? 1 + rng_below(256) : k < 90 ? 257 + rng_below(8 * KiB) : k < 99 ? 8 * KiB + rng_below(56 * KiB) : 64 * KiB + rng_below(MiB);
            size_t align = 0, eff, rsize = (size + 15) & ~(size_t)15, off = SIZE_MAX;
            k = (unsigned)rng_below(100);
            if (k >= 60) align = k < 98 ? (size_t)1 << rng_below(17) : MiB;
            eff = align < 16 ? 16 : align;
            int found = ref_place(&r, rsize, eff, &expect, &largest);
            int rc = gshmemi_alloc_alloc(a, size, align, &off);
            if (!found) {
                assert_int_equal(rc, GSHMEMI_ERR_NOMEM);
                nomem++;
            } else {
                if (eff > 16) aligned++;
                assert_int_equal(rc, GSHMEMI_OK);
                assert_int_equal(off, expect);
                assert_int_equal(off % eff, 0);
                assert_int_equal(gshmemi_alloc_size_of(a, off), rsize);
                ref_insert(&r, off, rsize);
            }
        } else {
            size_t i = rng_below(r.n);
            last_freed = r.live[i].off;
            assert_int_equal(gshmemi_alloc_free(a, last_freed), GSHMEMI_OK);
            ref_remove_at(&r, i);
        }
        assert_int_equal(gshmemi_alloc_bytes_free(a), region - r.used);
        assert_int_equal(gshmemi_alloc_high_water(a), r.high_water);
        if (r.n > peak) peak = r.n;
        if (r.n == 0) emptied++;
        if (op % 16 == 0) {
            ref_place(&r, region + 16, 16, &expect, &largest);
            assert_int_equal(gshmemi_alloc_largest_free(a), largest);
        }
        if (op % 10000 == 5000 && r.n > 0) {
            /* A few bad frees (each logs a line) must change nothing. */
            size_t i = rng_below(r.n), bf = gshmemi_alloc_bytes_free(a);
            if (r.live[i].size > 16) assert_int_equal(gshmemi_alloc_free(a, r.live[i].off + 16), GSHMEMI_ERR_INVALID);
            if (last_freed != SIZE_MAX && ref_index(&r, last_freed) < r.n && r.live[ref_index(&r, last_freed)].off == last_freed)
                last_freed = SIZE_MAX; /* reallocated since */
            if (last_freed != SIZE_MAX) assert_int_equal(gshmemi_alloc_free(a, last_freed), GSHMEMI_ERR_INVALID);
            assert_int_equal(gshmemi_alloc_bytes_free(a), bf);
            assert_int_equal(gshmemi_alloc_size_of(a, r.live[i].off), r.live[i].size);
        }
    }
    /* The run went through exhaustion, many aligned splits and an empty heap. */
    if (ops >= 100000) {
        assert_true(nomem > 100);
        assert_true(aligned > 1000);
        assert_true(emptied > 0);
    }
    print_message("stress: %zu ops, %zu NOMEM, %zu aligned allocations (%zu past the scan limit), peak %zu live blocks, "
                  "empty %zu times\n", ops, nomem, aligned, ref_capped, peak, emptied);
    while (r.n > 0) {
        size_t i = rng_below(r.n);
        assert_int_equal(gshmemi_alloc_free(a, r.live[i].off), GSHMEMI_OK);
        ref_remove_at(&r, i);
    }
    assert_empty(a, region);
    free(r.live);
    gshmemi_alloc_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_invalid), cmocka_unit_test(test_basic), cmocka_unit_test(test_invalid_args),
        cmocka_unit_test(test_alignment), cmocka_unit_test(test_best_fit_reuse), cmocka_unit_test(test_coalescing),
        cmocka_unit_test(test_exhaustion), cmocka_unit_test(test_invalid_free), cmocka_unit_test(test_overflow_sizes),
        cmocka_unit_test(test_high_water), cmocka_unit_test(test_scan_limit), cmocka_unit_test(test_many_blocks),
        cmocka_unit_test(test_determinism), cmocka_unit_test(test_stress),
    };
    /* Expected errors are still printed (GSHMEMI_ERROR always is); nothing else should be. */
    gshmemi_log_level = GSHMEMI_LOG_NONE;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
