/* The copy backend's choice among the data streams ("lanes") of one destination PE: large copies
 * that queue behind other work on their stream are timed, and the lane whose copies run fastest
 * carries the data. copy.c says why there is more than one and does the timing; this is the
 * decision alone, with no CUDA in it, so that the unit tests drive it with made-up timings.
 *
 * Copy times spread by 10-15 % from copy to copy, about as much as the lanes differ, so every
 * comparison is between medians of GSHMEMI_LANES_SAMPLES copies, with a margin. A round times
 * that many copies on each lane in turn, starting with the current one, then settles on the lane
 * with the least median time per byte, keeping the current one unless another is faster by more
 * than GSHMEMI_LANES_MARGIN_PCT percent. What slows a lane (another client's queued work, under
 * MPS) comes and goes with the application, so a settled lane is still timed, one large copy in
 * GSHMEMI_LANES_EVERY: when the median of its last GSHMEMI_LANES_SAMPLES samples exceeds what the
 * round found by more than GSHMEMI_LANES_SLOWER_PCT percent, a new round tries the next lane at
 * once (those samples stand for the settled one). GSHMEMI_LANES_SETTLED large copies also start
 * a round, from the settled lane (another lane may have become faster). */
#ifndef GSHMEMI_PROXY_LANES_H
#define GSHMEMI_PROXY_LANES_H

#include <stddef.h>

#define GSHMEMI_LANES_MAX 4
#define GSHMEMI_LANES_SAMPLES 5
#define GSHMEMI_LANES_MARGIN_PCT 6
#define GSHMEMI_LANES_SLOWER_PCT 8
#define GSHMEMI_LANES_EVERY 4
#define GSHMEMI_LANES_SETTLED 1024

typedef struct gshmemi_lanes {
    int n;                                    /* lanes, 1..GSHMEMI_LANES_MAX */
    int cur;                                  /* the lane data goes to now */
    int trying;                               /* lanes timed so far this round; n: settled */
    int first;                                /* the lane the round started on */
    unsigned settled_left;                    /* large copies before the next round */
    unsigned since_sample;                    /* large copies since the last one timed, settled */
    double settled;                           /* the settled lane's median time per byte */
    double median[GSHMEMI_LANES_MAX];         /* this round's median time per byte of each lane */
    unsigned count;                           /* samples in `window` */
    double window[GSHMEMI_LANES_SAMPLES];     /* the lane under test's samples, or the settled one's last */
} gshmemi_lanes_t;

void gshmemi_lanes_init(gshmemi_lanes_t *l, int n);

/* A large copy is about to be posted: whether to time it (always while a round measures, else
 * one in GSHMEMI_LANES_EVERY). Also counts the copies to the next round. */
int gshmemi_lanes_next_copy(gshmemi_lanes_t *l);

/* Whether a round is measuring. */
int gshmemi_lanes_measuring(const gshmemi_lanes_t *l);

/* A timed copy on `lane` moved `bytes` in `ns` of GPU time. Returns the lane data goes to from
 * now on, which the caller switches to (in order) when it differs from the one before. Samples
 * of a lane other than the current one are ignored (one still in flight at a switch). */
int gshmemi_lanes_note(gshmemi_lanes_t *l, int lane, double ns, size_t bytes);

#endif
