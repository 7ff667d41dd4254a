/* The choice among a destination's data streams (lanes.h). */
#include "lanes.h"

static void start_round(gshmemi_lanes_t *l)
{
    l->first = l->cur;
    l->trying = 0;
    l->samples = 0;
    for (int i = 0; i < GSHMEMI_LANES_MAX; i++) l->best_ns_per_byte[i] = -1.0;
}

void gshmemi_lanes_init(gshmemi_lanes_t *l, int n)
{
    l->n = n < 1 ? 1 : n > GSHMEMI_LANES_MAX ? GSHMEMI_LANES_MAX : n;
    l->cur = 0;
    l->settled_left = 0;
    start_round(l);
    if (l->n == 1) l->trying = 1; /* nothing to choose: settled for good */
}

int gshmemi_lanes_want_sample(const gshmemi_lanes_t *l) { return l->trying < l->n; }

static int under_test(const gshmemi_lanes_t *l) { return (l->first + l->trying) % l->n; }

int gshmemi_lanes_note(gshmemi_lanes_t *l, int lane, double ns, size_t bytes)
{
    if (l->trying >= l->n || lane != under_test(l) || bytes == 0 || !(ns > 0)) return l->cur;
    const double v = ns / (double)bytes;
    double *best = l->best_ns_per_byte;
    if (best[lane] < 0 || v < best[lane]) best[lane] = v;
    if (++l->samples < GSHMEMI_LANES_SAMPLES) return l->cur;
    l->samples = 0;
    if (++l->trying < l->n) return l->cur = under_test(l);
    /* every lane timed: the fastest, unless the one the round started on is within the margin */
    int win = l->first;
    for (int i = 0; i < l->n; i++)
        if (best[i] >= 0 && best[i] < best[win]) win = i;
    if (best[l->first] <= best[win] * (1.0 + GSHMEMI_LANES_MARGIN_PCT / 100.0)) win = l->first;
    l->cur = win;
    l->settled_left = GSHMEMI_LANES_SETTLED;
    return l->cur;
}

void gshmemi_lanes_posted(gshmemi_lanes_t *l)
{
    if (l->n == 1 || l->trying < l->n) return;
    if (l->settled_left > 0 && --l->settled_left == 0) start_round(l);
}
