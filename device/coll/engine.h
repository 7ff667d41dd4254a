/* The preemptive collective engine (docs/engine.md): what its host side (collectives/engine*.c)
 * and its daemon kernel (device/coll/engine.cuh) share. Plain C, compiled for the host and, under
 * nvcc, for the device too, so the CPU tests run the very rules the daemon runs:
 *   - the layouts of the submission queue, a collective's static context, its dynamic context
 *     (saved when it is preempted) and the pinned words the host reads;
 *   - the primitive sequence of a collective (arrive, wait for the peers' arrival, work chunk by
 *     chunk, signal done, wait for the peers' done; a two-shot allreduce reduces its part of each
 *     chunk, signals and waits for the middle, then gathers the others' parts) and the flag value
 *     each step signals or waits for: a pure step function, so a preempted collective resumes
 *     where it stopped;
 *   - the stickiness rule: how long a wait spins before its collective is preempted. */
#ifndef GSHMEM_DEVICE_COLL_ENGINE_H
#define GSHMEM_DEVICE_COLL_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "gshmem/types.h"

#define GSHMEMI_ENGINE_MAX_COLLS 64  /* collectives registered in one engine */
#define GSHMEMI_ENGINE_PER_TEAM 32   /* of them on one team handle (their flags: a team's rows of the pool) */
#define GSHMEMI_ENGINE_MAX_CTAS 128  /* CTAs of the daemon */
#define GSHMEMI_ENGINE_TASKS 64      /* requests submitted and not complete, at most (a CTA's task queue) */
#define GSHMEMI_ENGINE_CHUNK (1u << 20) /* bytes a CTA moves per WORK step (one step per chunk) */
#define GSHMEMI_ENGINE_CTA_MIN_BYTES (64u << 10) /* bytes moved that justify one more active CTA */
/* An allreduce of at least this many bytes on 3 members or more goes two-shot: each member reduces
 * its part (1 / members) of every chunk from every source into its dest, then gathers the other
 * parts from the members' dests, so a member reads 2 (n - 1) / n of the buffer over P2P where the
 * one-shot reads n - 1 times it, for one more round of signals. Below, that round costs more than
 * the reads it saves. The same choice on every PE: it depends on the call only. */
#define GSHMEMI_ENGINE_TWO_SHOT_MIN (2u << 20)
#define GSHMEMI_ENGINE_LL_MAX 256u   /* LL: most bytes a member sends one member */
#define GSHMEMI_ENGINE_LL_WORDS (GSHMEMI_ENGINE_LL_MAX / 4) /* 8-byte words of 4 data bytes and a 4-byte flag */

/* Kinds of collective the engine runs (the public SHMEMX_ENGINE_* of gshmem/engine.h). */
enum { GSHMEMI_ENGINE_BARRIER = 0, GSHMEMI_ENGINE_ALLREDUCE = 1, GSHMEMI_ENGINE_FCOLLECT = 2, GSHMEMI_ENGINE_BROADCAST = 3,
       GSHMEMI_ENGINE_ALLTOALL = 4, GSHMEMI_ENGINE_KINDS = 5 };

/* One submission queue entry (pinned host memory, written by the host, read by every CTA). */
typedef struct gshmemi_engine_sqe {
    uint64_t seq;      /* the collective's request number on this PE, from 1: the k-th requests of a
                        * collective on its PEs are one collective call */
    void *dest;
    const void *src;
    uint64_t count;    /* elements (per block for fcollect and alltoall) */
    int32_t coll;      /* registered id */
    int32_t root;      /* broadcast: the root's index in the team */
    uint64_t index;    /* position in the queue (FIFO order among equal priorities) */
    uint64_t pad_[2];
} gshmemi_engine_sqe_t;
/* 64 bytes: the daemon reads an entry as four 16-byte loads over the bus. */
typedef char gshmemi_engine_sqe_fits[sizeof(gshmemi_engine_sqe_t) == 64 ? 1 : -1];

/* A registered collective's static context (device memory; set at registration). */
typedef struct gshmemi_engine_coll {
    int32_t kind, dtype, op, priority;
    int32_t size, my_idx, start, stride; /* the team: member i is world PE start + i * stride */
    uint64_t es;                         /* element size */
    uint64_t *flags;                     /* symmetric: [CTA][member] words; member m signals into row m */
    uint64_t *ll;                        /* symmetric: [2][member][GSHMEMI_ENGINE_LL_WORDS]; member m writes row m */
} gshmemi_engine_coll_t;

/* Bytes of one collective's own symmetric area: its flags (a 128-byte multiple), then its LL rows. */
GSHMEMI_HD_INLINE size_t gshmemi_engine_flags_bytes(int ctas, int n_pes)
{
    return ((size_t)ctas * (size_t)n_pes * 8 + 127) / 128 * 128;
}
GSHMEMI_HD_INLINE size_t gshmemi_engine_slot_bytes(int ctas, int n_pes)
{
    return gshmemi_engine_flags_bytes(ctas, n_pes) + 2 * (size_t)n_pes * GSHMEMI_ENGINE_LL_WORDS * 8;
}

/* The steps of a collective's primitive sequence. */
enum { GSHMEMI_ENGINE_PC_ARRIVE = 0, GSHMEMI_ENGINE_PC_WAIT_ARRIVE = 1, GSHMEMI_ENGINE_PC_WORK = 2,
       GSHMEMI_ENGINE_PC_DONE = 3, GSHMEMI_ENGINE_PC_WAIT_DONE = 4, GSHMEMI_ENGINE_PC_END = 5,
       GSHMEMI_ENGINE_PC_MID = 6, GSHMEMI_ENGINE_PC_WAIT_MID = 7, GSHMEMI_ENGINE_PC_GATHER = 8 };

/* A collective's dynamic context on one CTA (device memory): what is saved when it is preempted. */
typedef struct gshmemi_engine_ctx {
    uint64_t seq;    /* the request in progress, or the last one finished (pc == PC_ARRIVE) */
    uint32_t pc;     /* GSHMEMI_ENGINE_PC_* */
    uint32_t chunk;  /* PC_WORK: the next chunk */
    uint32_t streak; /* successful waits in a row (stickiness) */
    uint32_t pad_;
} gshmemi_engine_ctx_t;

/* A CTA's own state (device memory), kept across the daemon's exits and relaunches. */
typedef struct gshmemi_engine_cta {
    uint64_t sq_head;                 /* next queue entry this CTA reads */
    int32_t ntasks;
    int32_t pad_;
    gshmemi_engine_sqe_t tasks[GSHMEMI_ENGINE_TASKS]; /* requests taken and not finished, in queue order */
} gshmemi_engine_cta_t;

/* The pinned words host and daemon share (mapped host memory). Each CTA writes only its own
 * entries; the host writes tail, hold and stop. tail and hold share 16 bytes: a CTA reads both in
 * one load.
 *
 * hold (a stream wait's guard): generation << 1 | active. A stream wait on a request not yet
 * complete makes the daemon stay resident until the request completes: work the wait holds back
 * on a user's stream can share a hardware queue with the daemon's stream, so a relaunch enqueued
 * after the wait would queue behind it, and the wait would never end. The host publishes a new
 * generation with the active bit; a CTA that sees it while no CTA of its launch has left
 * acknowledges it (ack) and from then on does not leave while the bit is set; the host enqueues
 * the wait once every CTA has acknowledged, relaunching the daemon if it ended first. */
typedef struct gshmemi_engine_host {
    volatile uint64_t tail;                                /* entries published */
    volatile uint64_t hold;                                /* stream waits: generation << 1 | active */
    volatile uint64_t stop;                                /* 1: every CTA exits at its next look */
    volatile uint64_t pad_;
    volatile uint64_t head[GSHMEMI_ENGINE_MAX_CTAS];       /* per CTA: entries it has taken */
    volatile uint64_t ack[GSHMEMI_ENGINE_MAX_CTAS];        /* per CTA: the hold generation it keeps */
    volatile uint64_t done[GSHMEMI_ENGINE_MAX_COLLS];      /* per collective: requests complete, in order */
    volatile uint64_t preempted[GSHMEMI_ENGINE_MAX_CTAS];  /* per CTA: preemptions so far */
    volatile uint64_t stuck_exits[GSHMEMI_ENGINE_MAX_CTAS]; /* per CTA: exits with every task stuck */
} gshmemi_engine_host_t;

/* Everything the daemon kernel takes (its one argument). */
typedef struct gshmemi_engine_dev {
    gshmemi_engine_host_t *host;       /* device-mapped pointer */
    gshmemi_engine_sqe_t *sq;          /* [sq_slots] device-mapped pinned ring */
    const gshmemi_engine_coll_t *colls; /* [GSHMEMI_ENGINE_MAX_COLLS] */
    gshmemi_engine_ctx_t *ctx;         /* [GSHMEMI_ENGINE_MAX_COLLS][ctas] */
    gshmemi_engine_cta_t *cta;         /* [ctas] */
    uint32_t *finished;                /* [GSHMEMI_ENGINE_MAX_COLLS][GSHMEMI_ENGINE_TASKS]: CTAs done with a request */
    uint32_t *left;                    /* CTAs of the current launch that have exited (zeroed before each launch) */
    gshmemi_engine_sqe_t *dsq;         /* [sq_slots] device memory: CTA 0's copy of the ring, which the other CTAs read */
    uint64_t *mirror;                  /* device memory: CTA 0's copy of {tail (entries in dsq), hold, stop} */
    uint32_t sq_slots;
    int32_t ctas;
    uint64_t idle_ns;                  /* a CTA with nothing to do exits after this long */
    uint64_t stuck_ns;                 /* ... and one whose every task is stuck */
    uint32_t spin_base;                /* the stickiness rule's base (spins) */
    uint32_t pad_;
} gshmemi_engine_dev_t;

/* ---- the primitive sequence ---- */
/* Bytes one request moves per member (the size the active CTAs are chosen by). */
GSHMEMI_HD_INLINE uint64_t gshmemi_engine_bytes(int kind, uint64_t count, uint64_t es, int size)
{
    uint64_t blk = count * es;
    return kind == GSHMEMI_ENGINE_BARRIER ? 0 : kind == GSHMEMI_ENGINE_FCOLLECT || kind == GSHMEMI_ENGINE_ALLTOALL ? blk * (uint64_t)size : blk;
}

/* CTAs that work a request, the same on every PE (it depends on the call only): small ones take
 * one, so they pay one CTA's signals. The others finish it at once. */
GSHMEMI_HD_INLINE int gshmemi_engine_active_ctas(uint64_t bytes, int ctas)
{
    uint64_t want = (bytes + GSHMEMI_ENGINE_CTA_MIN_BYTES - 1) / GSHMEMI_ENGINE_CTA_MIN_BYTES;
    if (want < 1) want = 1;
    return want < (uint64_t)ctas ? (int)want : ctas;
}

/* This CTA's share [lo, hi) of `units` units, and its chunks of `chunk_units`. */
GSHMEMI_HD_INLINE void gshmemi_engine_share(uint64_t units, int cta, int active, uint64_t *lo, uint64_t *hi)
{
    uint64_t per = (units + (uint64_t)active - 1) / (uint64_t)active;
    *lo = per * (uint64_t)cta < units ? per * (uint64_t)cta : units;
    *hi = *lo + per < units ? *lo + per : units;
}
GSHMEMI_HD_INLINE uint32_t gshmemi_engine_nchunks(uint64_t units, uint64_t chunk_units)
{
    return (uint32_t)((units + chunk_units - 1) / chunk_units);
}

/* LL (small requests): each member stores its data, 4 bytes with the request's number beside them
 * in one 8-byte word, into a row of every member's LL area (parity seq % 2), and waits until its
 * own rows hold this request's words; no done round: a member overwrites a parity only two
 * requests later, after the reader has sent (so finished) the request between. The same choice
 * on every PE: it depends on the call only. Allreduce of elements of at most 4 bytes. */
GSHMEMI_HD_INLINE int gshmemi_engine_uses_ll(int kind, uint64_t count, uint64_t es)
{
    return kind != GSHMEMI_ENGINE_BARRIER && count > 0 && count * es <= GSHMEMI_ENGINE_LL_MAX &&
           (kind != GSHMEMI_ENGINE_ALLREDUCE || es <= 4);
}

/* Whether a request goes two-shot (GSHMEMI_ENGINE_TWO_SHOT_MIN): an allreduce, not LL, of 3
 * members or more and at least that many bytes. */
GSHMEMI_HD_INLINE int gshmemi_engine_two_shot(int kind, int ll, int size, uint64_t bytes)
{
    return kind == GSHMEMI_ENGINE_ALLREDUCE && !ll && size >= 3 && bytes >= GSHMEMI_ENGINE_TWO_SHOT_MIN;
}

/* Two-shot: member m's part [*from, *to) of the chunk [lo, hi) (bytes; lo a multiple of 16, hi
 * the chunk's end or the block's): 16-byte units split as evenly as they go, the last part ending
 * at hi. Every byte of the chunk in exactly one part (a part before the last ends at most at
 * lo + 16 (units - 1), below hi). */
GSHMEMI_HD_INLINE void gshmemi_engine_part(uint64_t lo, uint64_t hi, int size, int m, uint64_t *from, uint64_t *to)
{
    const uint64_t units = (hi - lo + 15) / 16;
    *from = lo + 16 * (units * (uint64_t)m / (uint64_t)size);
    *to = m == size - 1 ? hi : lo + 16 * (units * (uint64_t)(m + 1) / (uint64_t)size);
}

/* The flag value the step `pc` of request `seq` signals or waits for. Counters only grow, and a
 * member's next request of a collective starts only after the last finished on every member, so
 * "at least this value" is the whole test. A barrier has one round; the others three values a
 * request (arrival, middle, done: a two-shot request signals all three, the others skip the
 * middle), so one-shot, two-shot and LL requests of one collective follow each other freely. */
GSHMEMI_HD_INLINE uint64_t gshmemi_engine_flag(int kind, uint32_t pc, uint64_t seq)
{
    if (kind == GSHMEMI_ENGINE_BARRIER) return seq;
    if (pc <= GSHMEMI_ENGINE_PC_WAIT_ARRIVE) return 3 * seq - 2;
    return pc == GSHMEMI_ENGINE_PC_MID || pc == GSHMEMI_ENGINE_PC_WAIT_MID ? 3 * seq - 1 : 3 * seq;
}

/* The step after `c->pc` has succeeded (ll: the request goes by LL: its data travels with the
 * arrival, and it has no done round; two: it goes two-shot: after the work, the middle round and
 * the gather, chunk by chunk as the work). */
GSHMEMI_HD_INLINE void gshmemi_engine_next(int kind, int ll, int two, uint32_t nchunks, gshmemi_engine_ctx_t *c)
{
    const uint32_t after_work = ll ? GSHMEMI_ENGINE_PC_END : two ? GSHMEMI_ENGINE_PC_MID : GSHMEMI_ENGINE_PC_DONE;
    switch (c->pc) {
    case GSHMEMI_ENGINE_PC_ARRIVE: c->pc = GSHMEMI_ENGINE_PC_WAIT_ARRIVE; break;
    case GSHMEMI_ENGINE_PC_WAIT_ARRIVE:
        c->chunk = 0;
        c->pc = kind == GSHMEMI_ENGINE_BARRIER ? (uint32_t)GSHMEMI_ENGINE_PC_END
              : nchunks                         ? (uint32_t)GSHMEMI_ENGINE_PC_WORK
              : ll                              ? (uint32_t)GSHMEMI_ENGINE_PC_END
                                                : (uint32_t)GSHMEMI_ENGINE_PC_DONE;
        break;
    case GSHMEMI_ENGINE_PC_WORK:
        if (++c->chunk >= nchunks) c->pc = after_work;
        break;
    case GSHMEMI_ENGINE_PC_MID: c->pc = GSHMEMI_ENGINE_PC_WAIT_MID; break;
    case GSHMEMI_ENGINE_PC_WAIT_MID: c->chunk = 0, c->pc = GSHMEMI_ENGINE_PC_GATHER; break;
    case GSHMEMI_ENGINE_PC_GATHER:
        if (++c->chunk >= nchunks) c->pc = GSHMEMI_ENGINE_PC_DONE;
        break;
    case GSHMEMI_ENGINE_PC_DONE: c->pc = GSHMEMI_ENGINE_PC_WAIT_DONE; break;
    default: c->pc = GSHMEMI_ENGINE_PC_END; break;
    }
}

/* ---- stickiness ---- */
#define GSHMEMI_ENGINE_SPIN_MIN 64u
#define GSHMEMI_ENGINE_SPIN_MAX (1u << 24)
#define GSHMEMI_ENGINE_STREAK_MAX 6   /* progress doubles the threshold up to 64 times */
#define GSHMEMI_ENGINE_PRIORITY_MAX 15

/* How many polls a wait of a collective makes before it is preempted. Every PE applies the same
 * rule to the same collectives, so they converge on one collective without a coordinator:
 *   - a collective that made progress (its last waits succeeded: `streak`) waits longer: its
 *     peers are likely there, so the PEs gang up on it;
 *   - the front of the task queue (`position` 0) waits longest, later ones less (1 / (1 + p));
 *   - a higher user priority (0..15) waits longer (+50% a level).
 * Monotone in each argument, within [GSHMEMI_ENGINE_SPIN_MIN, GSHMEMI_ENGINE_SPIN_MAX]. */
GSHMEMI_HD_INLINE uint32_t gshmemi_engine_spins(uint32_t base, int position, int priority, uint32_t streak)
{
    uint64_t t = base ? base : 1;
    if (priority < 0) priority = 0;
    if (priority > GSHMEMI_ENGINE_PRIORITY_MAX) priority = GSHMEMI_ENGINE_PRIORITY_MAX;
    if (position < 0) position = 0;
    t = t * (uint64_t)(2 + priority) / 2;
    t <<= streak < GSHMEMI_ENGINE_STREAK_MAX ? streak : GSHMEMI_ENGINE_STREAK_MAX;
    t /= (uint64_t)(1 + position);
    if (t < GSHMEMI_ENGINE_SPIN_MIN) t = GSHMEMI_ENGINE_SPIN_MIN;
    if (t > GSHMEMI_ENGINE_SPIN_MAX) t = GSHMEMI_ENGINE_SPIN_MAX;
    return (uint32_t)t;
}

/* The streak after a wait: one more (up to GSHMEMI_ENGINE_STREAK_MAX) when it succeeded, halved
 * when it was preempted. Each request starts at 0: stickiness is earned within a call, so a
 * collective that ran well before cannot hold a CTA long once its members are elsewhere. */
GSHMEMI_HD_INLINE uint32_t gshmemi_engine_streak(uint32_t streak, int succeeded)
{
    return succeeded ? (streak < GSHMEMI_ENGINE_STREAK_MAX ? streak + 1 : GSHMEMI_ENGINE_STREAK_MAX) : streak / 2;
}

/* ---- a stream wait's hold (gshmemi_engine_host_t) ---- */
/* A CTA's reading of the hold word `hold` with `left` CTAs of its launch gone: whether it must
 * stay (the hold is active and its launch whole), and, into *acked, the generation it
 * acknowledges (1 returned in *ack when that changed: the CTA then stores it into its ack word).
 * A CTA that acknowledged a generation stays while the hold is active and no CTA has left; the
 * host counts on the launch once every CTA acknowledged, so no CTA of it can leave after that:
 * the first to leave would have had to see the hold inactive or a CTA gone. */
GSHMEMI_HD_INLINE int gshmemi_engine_hold_stays(uint64_t hold, uint32_t left, uint64_t *acked, int *ack)
{
    *ack = 0;
    if (left != 0) return 0;
    if (hold >> 1 != *acked) *acked = hold >> 1, *ack = 1;
    return (hold & 1) != 0;
}

/* Task order: higher priority first, then queue order. 1 when a goes before b. */
GSHMEMI_HD_INLINE int gshmemi_engine_before(int prio_a, uint64_t index_a, int prio_b, uint64_t index_b)
{
    return prio_a != prio_b ? prio_a > prio_b : index_a < index_b;
}

#endif
