/* The copy backend's choice among the data streams ("lanes") of one destination PE: large copies
 * that queue behind other work on their stream are timed, and the lane whose copies run fastest
 * carries the data. copy.c says why there is more than one and does the timing; this is the
 * decision alone, with no CUDA in it, so that the unit tests drive it with made-up timings.
 *
 * A round times GSHMEMI_LANES_SAMPLES copies on each lane in turn, starting with the current one,
 * then settles on the lane with the least time per byte, keeping the current one unless another
 * is more than GSHMEMI_LANES_MARGIN_PCT percent faster. After GSHMEMI_LANES_SETTLED large copies
 * a new round measures again: what slows a lane (another client's queued work, under MPS) comes
 * and goes with the application. */
#ifndef GSHMEMI_PROXY_LANES_H
#define GSHMEMI_PROXY_LANES_H

#include <stddef.h>

#define GSHMEMI_LANES_MAX 4
#define GSHMEMI_LANES_SAMPLES 3
#define GSHMEMI_LANES_MARGIN_PCT 4
#define GSHMEMI_LANES_SETTLED 1024

typedef struct gshmemi_lanes {
    int n;                                    /* lanes, 1..GSHMEMI_LANES_MAX */
    int cur;                                  /* the lane data goes to now */
    int trying;                               /* lanes timed so far this round; n: settled */
    int first;                                /* the lane the round started on */
    unsigned samples;                         /* samples of the lane under test */
    unsigned settled_left;                    /* large copies before the next round */
    double best_ns_per_byte[GSHMEMI_LANES_MAX]; /* this round's least time per byte of each lane */
} gshmemi_lanes_t;

void gshmemi_lanes_init(gshmemi_lanes_t *l, int n);

/* Whether the next large copy is to be timed (the round is measuring). */
int gshmemi_lanes_want_sample(const gshmemi_lanes_t *l);

/* A timed copy on `lane` moved `bytes` in `ns` of GPU time. Returns the lane data goes to from
 * now on, which the caller switches to (in order) when it differs from the one before. Samples
 * of a lane other than the one under test are ignored (a sample still in flight at a switch). */
int gshmemi_lanes_note(gshmemi_lanes_t *l, int lane, double ns, size_t bytes);

/* A large copy was posted untimed: counts down to the next round. */
void gshmemi_lanes_posted(gshmemi_lanes_t *l);

#endif
