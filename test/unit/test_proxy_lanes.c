/* The copy backend's choice among a destination's data streams (transports/proxy/lanes.c), driven
 * with made-up copy times: which lane it tries, when it settles and on which, the margin that
 * keeps the lane in use, stray samples, the settled lane's sampling and the round its slowing
 * starts, and the next round after GSHMEMI_LANES_SETTLED copies. */
#include <stdio.h>

#include "transports/proxy/lanes.h"

static int failures;
#define EXPECT(cond, ...)                                                                                          \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            fprintf(stderr, "test_proxy_lanes: %s:%d: ", __FILE__, __LINE__);                                      \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

#define MIB (1u << 20)

/* One round: every lane in turn from the current one, GSHMEMI_LANES_SAMPLES copies of 16 MiB
 * each, lane i taking us[i] microseconds a copy. Checks the lane under test before each sample
 * and returns the lane settled on. */
static int round_with(gshmemi_lanes_t *l, const double *us)
{
    const int first = l->cur;
    int lane = l->cur;
    for (int k = 0; k < l->n; k++) {
        EXPECT(lane == (first + k) % l->n, "lane %d under test, expected %d", lane, (first + k) % l->n);
        for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) {
            EXPECT(gshmemi_lanes_next_copy(l), "lane %d, sample %d: the round stopped early", lane, s);
            const int next = gshmemi_lanes_note(l, lane, us[lane] * 1e3, 16 * MIB);
            if (s < GSHMEMI_LANES_SAMPLES - 1) EXPECT(next == lane, "lane %d moved to %d after %d samples", lane, next, s + 1);
            else if (k < l->n - 1) EXPECT(next == (first + k + 1) % l->n, "after lane %d: %d, expected the next lane", lane, next);
            lane = next;
        }
    }
    EXPECT(!gshmemi_lanes_measuring(l), "still measuring after every lane was timed");
    return lane;
}

static void test_one_lane(void)
{
    gshmemi_lanes_t l;
    gshmemi_lanes_init(&l, 1);
    EXPECT(!gshmemi_lanes_measuring(&l), "one lane: measuring");
    EXPECT(gshmemi_lanes_note(&l, 0, 1e4, 16 * MIB) == 0, "one lane: a sample moved it");
    for (int i = 0; i < 3 * GSHMEMI_LANES_SETTLED; i++) EXPECT(!gshmemi_lanes_next_copy(&l), "one lane: copy %d to be timed", i);
    EXPECT(!gshmemi_lanes_measuring(&l) && l.cur == 0, "one lane: a round started");
}

static void test_two_lanes(void)
{
    gshmemi_lanes_t l;
    const double second_faster[2] = {11.0, 9.7}, first_faster[2] = {9.7, 11.0}, equal[2] = {9.8, 10.1};

    gshmemi_lanes_init(&l, 2);
    EXPECT(l.cur == 0 && gshmemi_lanes_measuring(&l), "a round starts on lane 0");
    EXPECT(round_with(&l, second_faster) == 1, "lane 1 is 12 %% faster: not chosen");

    gshmemi_lanes_init(&l, 2);
    EXPECT(round_with(&l, first_faster) == 0, "lane 0 is faster: not kept");

    gshmemi_lanes_init(&l, 2);
    EXPECT(round_with(&l, equal) == 0, "within the margin the lane the round started on stays");

    /* medians decide: two fast outliers on the slow lane and two slow ones on the fast lane */
    const double slow[GSHMEMI_LANES_SAMPLES] = {11.0, 8.0, 11.1, 8.1, 11.2}, fast[GSHMEMI_LANES_SAMPLES] = {30.0, 9.7, 25.0, 9.8, 9.9};
    gshmemi_lanes_init(&l, 2);
    for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) gshmemi_lanes_note(&l, 0, slow[s] * 1e3, 16 * MIB);
    EXPECT(l.cur == 1, "lane 1 not tried after lane 0's samples");
    for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) gshmemi_lanes_note(&l, 1, fast[s] * 1e3, 16 * MIB);
    EXPECT(!gshmemi_lanes_measuring(&l) && l.cur == 1, "lane 1 (median 9.9 us) lost to lane 0 (median 11.0)");

    /* time per byte: a 64 MiB copy in 40 us beats a 16 MiB one in 11 us */
    gshmemi_lanes_init(&l, 2);
    for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) gshmemi_lanes_note(&l, 0, 11.0e3, 16 * MIB);
    for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) gshmemi_lanes_note(&l, 1, 40.0e3, 64 * MIB);
    EXPECT(l.cur == 1, "compared per copy, not per byte");
}

static void test_stray_samples(void)
{
    gshmemi_lanes_t l;
    gshmemi_lanes_init(&l, 2);
    /* a sample of the lane not under test (in flight at a switch), empty or zero-time ones */
    EXPECT(gshmemi_lanes_note(&l, 1, 1.0, 16 * MIB) == 0, "a sample of lane 1 counted while lane 0 is under test");
    EXPECT(gshmemi_lanes_note(&l, 0, 1e4, 0) == 0 && gshmemi_lanes_note(&l, 0, 0.0, 16 * MIB) == 0, "an empty sample counted");
    EXPECT(gshmemi_lanes_note(&l, 7, 1e4, 16 * MIB) == 0 && gshmemi_lanes_note(&l, -1, 1e4, 16 * MIB) == 0, "a lane out of range counted");
    EXPECT(l.count == 0, "%u samples counted, none valid", l.count);
}

static void test_next_round(void)
{
    gshmemi_lanes_t l;
    const double second_faster[2] = {11.0, 9.7}, first_faster[2] = {9.7, 11.0};
    int timed = 0;

    gshmemi_lanes_init(&l, 2);
    EXPECT(round_with(&l, second_faster) == 1, "first round");
    /* settled: one copy in GSHMEMI_LANES_EVERY is timed, and the round comes after SETTLED */
    for (int i = 0; i < GSHMEMI_LANES_SETTLED - 1; i++) timed += gshmemi_lanes_next_copy(&l);
    EXPECT(timed == (GSHMEMI_LANES_SETTLED - 1) / GSHMEMI_LANES_EVERY, "%d of %d settled copies timed", timed, GSHMEMI_LANES_SETTLED - 1);
    EXPECT(!gshmemi_lanes_measuring(&l), "a round started before %d copies", GSHMEMI_LANES_SETTLED);
    EXPECT(gshmemi_lanes_next_copy(&l) && gshmemi_lanes_measuring(&l) && l.cur == 1, "no round after %d copies, or it left lane 1",
           GSHMEMI_LANES_SETTLED);
    /* the slow class moved: the second round starts on lane 1 and goes back to 0 */
    EXPECT(round_with(&l, first_faster) == 0, "second round did not follow the change");
}

/* Settled samples of lane 0, us each; returns the lane after them. */
static int settled_samples(gshmemi_lanes_t *l, const double *us, int n)
{
    for (int i = 0; i < n; i++) gshmemi_lanes_note(l, l->cur, us[i] * 1e3, 16 * MIB);
    return l->cur;
}

/* The settled lane slows down (another client queued work behind its waiting kernel): a window
 * whose median is slower by more than GSHMEMI_LANES_SLOWER_PCT tries the next lane at once, kept
 * if faster; copy-to-copy spread alone starts no round. */
static void test_settled_lane_slows(void)
{
    gshmemi_lanes_t l;
    const double equal[2] = {9.7, 9.8};
    const double spread[GSHMEMI_LANES_SAMPLES] = {9.7, 11.5, 10.0, 12.0, 10.3}; /* median 10.3: +6 % */
    const double slowed[GSHMEMI_LANES_SAMPLES] = {11.0, 10.0, 11.2, 11.3, 10.9}; /* median 11.0: +13 % */

    gshmemi_lanes_init(&l, 2);
    EXPECT(round_with(&l, equal) == 0, "settles on lane 0");
    for (int k = 0; k < 4; k++) EXPECT(settled_samples(&l, spread, GSHMEMI_LANES_SAMPLES) == 0, "spread alone moved it (window %d)", k);
    EXPECT(!gshmemi_lanes_measuring(&l), "spread alone started a round");
    EXPECT(settled_samples(&l, slowed, GSHMEMI_LANES_SAMPLES - 1) == 0, "moved before the window was full");
    EXPECT(settled_samples(&l, slowed + GSHMEMI_LANES_SAMPLES - 1, 1) == 1 && gshmemi_lanes_measuring(&l), "slowed by 13 %%: lane 1 not tried");
    for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) gshmemi_lanes_note(&l, 1, 9.8e3, 16 * MIB);
    EXPECT(!gshmemi_lanes_measuring(&l) && l.cur == 1, "lane 1 (9.8 us) not kept against lane 0 (11.0)");

    /* both slowed alike: tried, and back on the lane it was on */
    gshmemi_lanes_init(&l, 2);
    round_with(&l, equal);
    settled_samples(&l, slowed, GSHMEMI_LANES_SAMPLES);
    EXPECT(l.cur == 1 && gshmemi_lanes_measuring(&l), "slowed: lane 1 not tried");
    for (int s = 0; s < GSHMEMI_LANES_SAMPLES; s++) gshmemi_lanes_note(&l, 1, 11.1e3, 16 * MIB);
    EXPECT(!gshmemi_lanes_measuring(&l) && l.cur == 0, "both lanes slow alike: moved to lane %d", l.cur);
}

static void test_four_lanes(void)
{
    gshmemi_lanes_t l;
    const double third_fastest[4] = {11.0, 11.1, 9.6, 11.0};
    gshmemi_lanes_init(&l, 4);
    EXPECT(round_with(&l, third_fastest) == 2, "four lanes: the fastest (2) not chosen");
    gshmemi_lanes_init(&l, 9);
    EXPECT(l.n == GSHMEMI_LANES_MAX, "9 lanes not clamped to %d", GSHMEMI_LANES_MAX);
}

int main(void)
{
    test_one_lane();
    test_two_lanes();
    test_stray_samples();
    test_next_round();
    test_settled_lane_slows();
    test_four_lanes();
    if (failures) fprintf(stderr, "test_proxy_lanes: %d failures\n", failures);
    else printf("test_proxy_lanes: all passed\n");
    return failures ? 1 : 0;
}
