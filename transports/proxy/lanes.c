/* The choice among a destination's data streams (lanes.h). */
#include "lanes.h"

static void start_round(gshmemi_lanes_t *l)
{
    l->first = l->cur;
    l->trying = 0;
    l->count = 0;
    for (int i = 0; i < GSHMEMI_LANES_MAX; i++) l->median[i] = -1.0;
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

static double median_of(const double *v, unsigned n)
{
    double s[GSHMEMI_LANES_SAMPLES];
    for (unsigned i = 0; i < n; i++) { /* insertion sort: n is 5 */
        unsigned j = i;
        for (; j > 0 && s[j - 1] > v[i]; j--) s[j] = s[j - 1];
        s[j] = v[i];
    }
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static int exceeds(double v, double than, int pct) { return v > than * (1.0 + pct / 100.0); }

/* The settled lane's window is full: slower than the round found it, a new round at the next
 * lane (the window stands for the settled one); else the window starts again. */
static int settled_window(gshmemi_lanes_t *l)
{
    const double m = median_of(l->window, l->count);
    l->count = 0;
    if (!exceeds(m, l->settled, GSHMEMI_LANES_SLOWER_PCT)) return l->cur;
    start_round(l);
    l->median[l->cur] = m;
    l->trying = 1;
    return l->cur = under_test(l);
}

int gshmemi_lanes_note(gshmemi_lanes_t *l, int lane, double ns, size_t bytes)
{
    if (l->n == 1 || lane != l->cur || bytes == 0 || !(ns > 0)) return l->cur;
    l->window[l->count++] = ns / (double)bytes;
    if (l->count < GSHMEMI_LANES_SAMPLES) return l->cur;
    if (!gshmemi_lanes_measuring(l)) return settled_window(l);
    l->median[lane] = median_of(l->window, l->count);
    l->count = 0;
    if (++l->trying < l->n) return l->cur = under_test(l);
    /* every lane timed: the fastest, unless the one the round started on is within the margin */
    const double *m = l->median;
    int win = l->first;
    for (int i = 0; i < l->n; i++)
        if (m[i] >= 0 && m[i] < m[win]) win = i;
    if (!exceeds(m[l->first], m[win], GSHMEMI_LANES_MARGIN_PCT)) win = l->first;
    l->cur = win;
    l->settled = m[win];
    l->settled_left = GSHMEMI_LANES_SETTLED;
    l->since_sample = 0;
    return l->cur;
}
