/* The choice among a destination's data streams (lanes.h). */
#include "lanes.h"

static void start_round(gshmemi_lanes_t *l)
{
    l->first = l->cur;
    l->trying = 0;
    l->samples = 0;
    l->worse = 0;
    for (int i = 0; i < GSHMEMI_LANES_MAX; i++) l->best_ns_per_byte[i] = -1.0;
}

void gshmemi_lanes_init(gshmemi_lanes_t *l, int n)
{
    l->n = n < 1 ? 1 : n > GSHMEMI_LANES_MAX ? GSHMEMI_LANES_MAX : n;
    l->cur = 0;
    l->settled_left = 0;
    l->since_sample = 0;
    l->settled = -1.0;
    start_round(l);
    if (l->n == 1) l->trying = 1; /* nothing to choose: settled for good */
}

int gshmemi_lanes_measuring(const gshmemi_lanes_t *l) { return l->trying < l->n; }

int gshmemi_lanes_next_copy(gshmemi_lanes_t *l)
{
    if (l->n == 1) return 0;
    if (gshmemi_lanes_measuring(l)) return 1;
    if (l->settled_left > 0 && --l->settled_left == 0) {
        start_round(l);
        return 1;
    }
    if (++l->since_sample < GSHMEMI_LANES_EVERY) return 0;
    l->since_sample = 0;
    return 1;
}

static int under_test(const gshmemi_lanes_t *l) { return (l->first + l->trying) % l->n; }

static int slower(double v, double than) { return v > than * (1.0 + GSHMEMI_LANES_MARGIN_PCT / 100.0); }

/* A sample of the settled lane. Slower than it was, GSHMEMI_LANES_WORSE times in a row: a new
 * round, in which the settled lane counts as timed (at the least of those samples) and the next
 * lane is tried at once. */
static int note_settled(gshmemi_lanes_t *l, double v)
{
    if (!slower(v, l->settled)) {
        l->worse = 0;
        if (v < l->settled) l->settled = v;
        return l->cur;
    }
    if (l->worse == 0 || v < l->worse_best) l->worse_best = v;
    if (++l->worse < GSHMEMI_LANES_WORSE) return l->cur;
    const double seen = l->worse_best;
    start_round(l);
    l->best_ns_per_byte[l->cur] = seen;
    l->trying = 1;
    return l->cur = under_test(l);
}

int gshmemi_lanes_note(gshmemi_lanes_t *l, int lane, double ns, size_t bytes)
{
    if (l->n == 1 || lane != l->cur || bytes == 0 || !(ns > 0)) return l->cur;
    const double v = ns / (double)bytes;
    if (!gshmemi_lanes_measuring(l)) return note_settled(l, v);
    double *best = l->best_ns_per_byte;
    if (best[lane] < 0 || v < best[lane]) best[lane] = v;
    if (++l->samples < GSHMEMI_LANES_SAMPLES) return l->cur;
    l->samples = 0;
    if (++l->trying < l->n) return l->cur = under_test(l);
    /* every lane timed: the fastest, unless the one the round started on is within the margin */
    int win = l->first;
    for (int i = 0; i < l->n; i++)
        if (best[i] >= 0 && best[i] < best[win]) win = i;
    if (!slower(best[l->first], best[win])) win = l->first;
    l->cur = win;
    l->settled = best[win];
    l->settled_left = GSHMEMI_LANES_SETTLED;
    l->since_sample = 0;
    return l->cur;
}
