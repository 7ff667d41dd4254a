/* The copy backend's choice among the data streams ("lanes") of one destination PE: large copies
 * that queue behind other work on their stream are timed, and the lane whose copies run fastest
 * carries the data. copy.c says why there is more than one and does the timing; this is the
 * decision alone, with no CUDA in it, so that the unit tests drive it with made-up timings.
 *
 * A round times GSHMEMI_LANES_SAMPLES copies on each lane in turn, starting with the current one,
 * then settles on the lane with the least time per byte, keeping the current one unless another
 * is more than GSHMEMI_LANES_MARGIN_PCT percent faster. What slows a lane (another client's
 * queued work, under MPS) comes and goes with the application, so a settled lane is still timed,
 * one large copy in GSHMEMI_LANES_EVERY: GSHMEMI_LANES_WORSE of them in a row slower than the
 * round found it by more than the margin start a new round at the next lane (those samples stand
 * for the settled one), as do GSHMEMI_LANES_SETTLED large copies (another lane may have become
 * faster), from the settled lane. */
#ifndef GSHMEMI_PROXY_LANES_H
#define GSHMEMI_PROXY_LANES_H

#include <stddef.h>

#define GSHMEMI_LANES_MAX 4
#define GSHMEMI_LANES_SAMPLES 3
#define GSHMEMI_LANES_MARGIN_PCT 4
#define GSHMEMI_LANES_SETTLED 1024
#define GSHMEMI_LANES_EVERY 4
#define GSHMEMI_LANES_WORSE 2

typedef struct gshmemi_lanes {
    int n;                                    /* lanes, 1..GSHMEMI_LANES_MAX */
    int cur;                                  /* the lane data goes to now */
    int trying;                               /* lanes timed so far this round; n: settled */
    int first;                                /* the lane the round started on */
    unsigned samples;                         /* samples of the lane under test */
    unsigned settled_left;                    /* large copies before the next round */
    unsigned since_sample;                    /* large copies since the last one timed, settled */
    unsigned worse;                           /* settled samples in a row slower than `settled` */
    double settled;                           /* the settled lane's time per byte as last measured */
    double worse_best;                        /* the least of those slower samples in a row */
    double best_ns_per_byte[GSHMEMI_LANES_MAX]; /* this round's least time per byte of each lane */
} gshmemi_lanes_t;

void gshmemi_lanes_init(gshmemi_lanes_t *l, int n);

/* A large copy is about to be posted: whether to time it (always while a round measures, else
 * one in GSHMEMI_LANES_EVERY). Also counts the copies to the next round. */
int gshmemi_lanes_next_copy(gshmemi_lanes_t *l);

/* Whether a round is measuring. */
int gshmemi_lanes_measuring(const gshmemi_lanes_t *l);

/* A timed copy on `lane` moved `bytes` in `ns` of GPU time. Returns the lane data goes to from
 * now on, which the caller switches to (in order) when it differs from the one before. Samples
 * of a lane other than the one under test are ignored (a sample still in flight at a switch). */
int gshmemi_lanes_note(gshmemi_lanes_t *l, int lane, double ns, size_t bytes);

#endif
