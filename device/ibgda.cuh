/* The IBGDA device path: a GPU thread drives the RC QP to a peer itself, with no CPU on the path
 * (the NIC reads what the thread writes). Per operation: reserve an SQ slot by an atomic on the
 * QP's counter (waiting while the SQ is full; the lanes of a warp posting to one QP together take
 * their slots with one atomic), write the WQE with the builders of mlx5_wqe.h (big-endian, as the
 * NIC reads it), fence, then in WQE order advance the send doorbell record and write the doorbell
 * (once for such a group of lanes). Completion: every WQE asks for a CQE in a collapsed CQ (one
 * entry, the newest completion); any waiting thread reads it, widens its 16-bit WQE counter and
 * raises the count of completed BBs, which quiet, blocking calls and back-pressure wait on. An
 * error CQE is decoded into a message naming the syndrome, the opcode and the peer, and the
 * thread traps. Each peer has GSHMEM_IBGDA_NUM_RC_PER_PE QPs; a thread posts to the one its CTA and
 * warp pick (gshmemi_ibgda_qp_pick), so posters on different QPs ring in parallel.
 *
 * WQEs are one 64-byte basic block (BB; put, get, inline p, most atomics) or two (8-byte masked
 * compare-swap: swap, set, and, or); counters count BBs, and the BBs of the WQE at each slot are
 * kept for the poller. The QP records are in gshmemi_dstate.ibgda (device/layout.h), filled by
 * transports/ibgda/ibgda.c.
 *
 * Called only from the remote branches of device/proxy.cuh, so the P2P path's instructions do not
 * change. The operations and their steps (reserve, the WQE, post, wait) are far functions
 * (memops.cuh), each under the module's one register count for them, which they keep at 46 on
 * sm_90: a step's operands are in memory (a record) where they are more than a few, so that no
 * caller holds many values across a call. Every wait is bounded by GSHMEM_DEVICE_WAIT_TIMEOUT. */
#ifndef GSHMEM_DEVICE_IBGDA_CUH
#define GSHMEM_DEVICE_IBGDA_CUH

#include <stdio.h>

#include "gshmem/amo.h" /* GSHMEMI_AMO_* */
#include "ibgda_ring.h"
#include "memops.cuh" /* the thread-group scopes, gshmemi_cta_index */
#include "mlx5_wqe.h"
#include "proxy_fifo.h" /* gshmemi_fifo_now_ns */
#include "state.cuh"

/* Largest message of one WQE (byte_count is 31 bits); longer RMA is split. */
#define GSHMEMI_IBGDA_MAX_MSG (1u << 30)

/* The QP to pe that this thread posts on (one of ibgda_nqp: gshmemi_ibgda_qp_pick), or NULL when
 * pe is not routed through IBGDA. */
GSHMEMI_DEV const gshmemi_ibgda_qp_t *gshmemi_ibgda_qp(int pe)
{
    const gshmemi_ibgda_qp_t *q = gshmemi_dstate.ibgda;
    if (!q) return q;
    const unsigned nqp = gshmemi_dstate.ibgda_nqp;
    const unsigned warp = gshmemi_scope_tid(GSHMEMI_SCOPE_BLOCK) / 32;
    const unsigned warps = (gshmemi_scope_size(GSHMEMI_SCOPE_BLOCK) + 31) / 32;
    q += (size_t)pe * nqp + gshmemi_ibgda_qp_pick(gshmemi_cta_index(), warp, warps, nqp);
    return q->sq ? q : (const gshmemi_ibgda_qp_t *)0;
}

GSHMEMI_DEV_REPORT void gshmemi_ibgda_no_qp(int pe, const char *routine)
{
    printf("gshmem: PE %d: %s: PE %d has no IBGDA QP (not a remote peer of this PE)\n", gshmemi_dstate.my_pe, routine, pe);
    __trap();
}

/* The QP to pe for an operation on it; a PE with none (never routed here) is reported. The test
 * is on pe's first record, the same for every lane that names pe: a report under a test of one
 * lane's own value would cost every caller's loops a YIELD (see gshmemi_ibgda_grp_t). */
GSHMEMI_DEV const gshmemi_ibgda_qp_t *gshmemi_ibgda_qp_of(int pe, const char *routine)
{
    if (!gshmemi_dstate.ibgda[(size_t)pe * gshmemi_dstate.ibgda_nqp].sq) gshmemi_ibgda_no_qp(pe, routine);
    return gshmemi_ibgda_qp(pe);
}

GSHMEMI_DEV volatile unsigned long long *gshmemi_ibgda_ctr(const gshmemi_ibgda_qp_t *q, int which)
{
    return (volatile unsigned long long *)&q->ctr[which];
}

typedef struct gshmemi_ibgda_waiter {
    uint64_t start; /* ns, 0 until the first miss */
    uint32_t spins;
} gshmemi_ibgda_waiter_t;

/* One miss of a wait on GPU memory: 1 once GSHMEM_DEVICE_WAIT_TIMEOUT has passed since the first
 * timed miss, else 0 after 16 plain spins, then a back-off (32 ns doubling to 1 us). */
GSHMEMI_DEV int gshmemi_ibgda_miss(gshmemi_ibgda_waiter_t *w)
{
    if (w->spins < 16) { /* first spin: most waits are for another poster's ring, a few hundred ns */
        w->spins++;
        return 0;
    }
    const uint64_t now = gshmemi_fifo_now_ns(), limit = gshmemi_dstate.wait_timeout_ns;
    if (w->start == 0) w->start = now ? now : 1;
    else if (limit && now - w->start >= limit) return 1;
    __nanosleep(w->spins < 21 ? 32u << (w->spins - 16) : 1024u);
    w->spins++;
    return 0;
}

/* How a wait of this path ended. */
enum { GSHMEMI_IBGDA_OK = 0, GSHMEMI_IBGDA_CQE_ERROR, GSHMEMI_IBGDA_NOT_DONE, GSHMEMI_IBGDA_NOT_POSTED };

/* A failed wait, reported by every lane that waited (so that the report is no call under a test
 * of one lane's value) and printed by one, say: for an error CQE the syndrome, the opcode and the
 * WQE in words; for a timeout the counter and its target. Then the trap. */
GSHMEMI_DEV_REPORT void gshmemi_ibgda_fail(int why, const gshmemi_ibgda_qp_t *q, int pe, unsigned long long have,
                                           unsigned long long want, int say, const char *routine)
{
    if (why == GSHMEMI_IBGDA_CQE_ERROR) {
        gshmemi_mlx5_cqe_t c;
        for (int i = 0; i < 16; i++) ((uint32_t *)c.bytes)[i] = ((const volatile uint32_t *)q->cq)[i];
        const gshmemi_mlx5_err_info_t e = gshmemi_mlx5_err_decode(&c.err);
        char buf[GSHMEMI_MLX5_SYNDROME_BUF];
        const char *op = gshmemi_mlx5_opcode_name(e.wqe_opcode);
        printf(say ? "gshmem: PE %d: %s: IBGDA work request to PE %d failed: %s (syndrome 0x%02x, vendor syndrome 0x%02x), "
                     "opcode %s (0x%02x), WQE %u, QP 0x%x\n"
                   : "",
               gshmemi_dstate.my_pe, routine, pe, gshmemi_mlx5_syndrome_str(e.syndrome, buf), e.syndrome, e.vendor_err_synd,
               op ? op : "unknown", e.wqe_opcode, e.wqe_counter, e.qpn);
    } else {
        printf(say ? "gshmem: PE %d: %s: IBGDA QP to PE %d: %s after GSHMEM_DEVICE_WAIT_TIMEOUT (%llu of %llu; is the NIC's "
                     "host thread alive? GSHMEM_DEBUG=info)\n"
                   : "",
               gshmemi_dstate.my_pe, routine, pe,
               why == GSHMEMI_IBGDA_NOT_POSTED ? "an earlier work request was never posted" : "work requests not completed", have,
               want);
    }
    __trap();
}

/* After a wait by the lanes of active: if any failed, all of them report the first failure. */
GSHMEMI_DEV void gshmemi_ibgda_check(unsigned active, int why, const gshmemi_ibgda_qp_t *q, int pe, unsigned long long have,
                                     unsigned long long want, const char *routine)
{
    const unsigned bad = __ballot_sync(active, why != GSHMEMI_IBGDA_OK);
    if (!bad) return;
    const int src = __ffs(bad) - 1;
    gshmemi_ibgda_fail(__shfl_sync(active, why, src), (const gshmemi_ibgda_qp_t *)__shfl_sync(active, (unsigned long long)q, src),
                       __shfl_sync(active, pe, src), __shfl_sync(active, have, src), __shfl_sync(active, want, src),
                       gshmemi_lanemask_lt() == ((1u << src) - 1u), routine);
}

/* Reads q's CQ, which is collapsed (the NIC writes every CQE into its one entry, so the entry
 * holds the newest completion): DONE becomes the count of BBs up to the WQE it completes (RC
 * completes a QP's WQEs in order). No lock, consumer index or CQ doorbell record: the last 8
 * bytes of the CQE (WQE counter and owner byte) are read at once, and DONE only grows. 1 for an
 * error CQE. */
GSHMEMI_DEV int gshmemi_ibgda_poll(const gshmemi_ibgda_qp_t *q)
{
    const uint64_t tail = *(const volatile uint64_t *)((const char *)q->cq + GSHMEMI_MLX5_CQE_BYTES - 8);
    const uint8_t op_own = (uint8_t)(tail >> 56);
    if (gshmemi_mlx5_cqe_opcode(op_own) == GSHMEMI_MLX5_CQE_INVALID) return 0; /* nothing completed yet */
    if (gshmemi_mlx5_cqe_is_error(op_own)) return 1;
    const uint16_t idx = gshmemi_mlx5_be16((uint16_t)(tail >> 32));
    const unsigned long long done = *gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_DONE);
    const unsigned long long now =
        gshmemi_ibgda_collapsed_done(done, idx, *(const volatile uint8_t *)&q->bbs[gshmemi_mlx5_sq_slot(idx, q->sq_bbs)]);
    if (now > done) atomicMax(&q->ctr[GSHMEMI_IBGDA_CTR_DONE], now);
    return 0;
}

/* The lanes of active wait (polling the CQ) until the first target BBs of their QP q have
 * completed (a lane with target 0 has nothing to wait for). Every wait of this path ends on a
 * vote of the lanes that called (__activemask at entry), so that no loop ends on one lane's own
 * value: ptxas keeps such a loop from starving the warp's other lanes with a convergence barrier
 * and a YIELD in every loop of the calling kernel, the P2P path's copy loops too (measurably
 * slower puts-with-signal). A lane whose own wait is over keeps spinning with the others,
 * doing nothing. */
GSHMEMI_DEV int gshmemi_ibgda_wait_done_why(unsigned active, const gshmemi_ibgda_qp_t *q, unsigned long long target)
{
    gshmemi_ibgda_waiter_t w = {0, 0};
    int why = GSHMEMI_IBGDA_OK;
    for (;;) {
        int waiting = why == GSHMEMI_IBGDA_OK && target && *gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_DONE) < target;
        if (waiting && gshmemi_ibgda_poll(q)) why = GSHMEMI_IBGDA_CQE_ERROR;
        waiting = why == GSHMEMI_IBGDA_OK && target && *gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_DONE) < target;
        if (!__any_sync(active, waiting)) break;
        if (gshmemi_ibgda_miss(&w)) {
            if (waiting) why = GSHMEMI_IBGDA_NOT_DONE;
            break;
        }
    }
    return why;
}
/* The same, with the report of a failure. */
GSHMEMI_DEV void gshmemi_ibgda_wait_done(unsigned active, const gshmemi_ibgda_qp_t *q, unsigned long long target, int pe,
                                         const char *routine)
{
    const int why = gshmemi_ibgda_wait_done_why(active, q, target);
    gshmemi_ibgda_check(active, why, q, pe, target ? *gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_DONE) : 0, target, routine);
}

GSHMEMI_DEV void *gshmemi_ibgda_wqe(const gshmemi_ibgda_qp_t *q, unsigned long long t)
{
    return (char *)q->sq + (size_t)gshmemi_mlx5_sq_slot((uint16_t)t, q->sq_bbs) * GSHMEMI_MLX5_SEND_WQE_BB;
}

/* The lanes of a warp that post to the same QP together share one reservation and one ring
 * (NVSHMEM-style warp aggregation): the first of them reserves the group's slots with one atomic
 * and, once every lane has written its WQE, rings once for all. A thread alone is a group of one.
 * Lanes that post nothing this time (q NULL) join the waits only. */
typedef struct gshmemi_ibgda_grp {
    unsigned active;         /* the lanes that called */
    unsigned peers, rank;    /* the lanes of this QP, this lane's rank among them */
    unsigned long long t;    /* this lane's WQE */
    unsigned long long base; /* the group's first BB */
    unsigned long long end;  /* one past its last BB */
    unsigned long long last; /* its last WQE */
} gshmemi_ibgda_grp_t;

/* Reserves nbbs (1 or 2) SQ slots on q for each lane of active that posts (q not NULL). Back-
 * pressure: a slot is reused only after the BB sq_bbs before it has completed. */
GSHMEMI_DEV gshmemi_ibgda_grp_t gshmemi_ibgda_reserve(unsigned active, const gshmemi_ibgda_qp_t *q, unsigned nbbs, int pe,
                                                      const char *routine)
{
    gshmemi_ibgda_grp_t g;
    const unsigned lt = gshmemi_lanemask_lt();
    g.active = active;
    g.peers = __match_any_sync(active, (unsigned long long)(uintptr_t)q);
    const unsigned twos = __ballot_sync(active, nbbs == 2) & g.peers, top = 31 - __clz(g.peers);
    const unsigned total = q ? __popc(g.peers) + __popc(twos) : 0;
    g.rank = __popc(g.peers & lt);
    /* DONE is read before the atomic, so the two round trips overlap; it only grows, so a value
     * read early that suffices still does */
    const unsigned long long done = q ? *gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_DONE) : 0;
    unsigned long long base = 0;
    if (q && g.rank == 0) base = atomicAdd(&q->ctr[GSHMEMI_IBGDA_CTR_RESV], (unsigned long long)total);
    g.base = __shfl_sync(active, base, __ffs(g.peers) - 1);
    g.t = g.base + g.rank + __popc(twos & lt);
    g.end = g.base + total;
    g.last = g.end - ((twos >> top) & 1u) - 1;
    const unsigned long long needs = q ? gshmemi_ibgda_slot_needs(g.end - 1, q->sq_bbs) : 0;
    gshmemi_ibgda_wait_done(active, q, done < needs ? needs : 0, pe, routine);
    return g;
}

/* Hands each group's WQEs (written, this lane's nbbs BBs from g.t) to the NIC: once every earlier
 * WQE of the QP is handed over, the send doorbell record covers them, then the doorbell carries
 * the first 8 bytes of the last one (as mlx5 rings). The two fences keep the NIC from seeing the
 * record before the WQEs, or the doorbell before the record. They are GPU-scope: the SQ and the
 * record are in GPU memory, which the NIC reads through the GPU's L2, where those fences order the
 * writes; a system-scope fence would also wait for the doorbell's PCIe write, and cost 1.5 us of
 * the 4.7 us a WQE took on an H100 (null NIC, one thread). Whether a ConnectX sees that order is
 * listed as unverified (docs/transports.md, IBGDA). No doorbell (GSHMEM_IBGDA_DOORBELL=cpu): the record is in
 * host memory, where a host thread sees it advance and rings. A group rings inside the loop that
 * waits for its turn, so that a group waiting on another group of its warp never holds up that
 * one's ring. */
GSHMEMI_DEV void gshmemi_ibgda_post(const gshmemi_ibgda_qp_t *q, const gshmemi_ibgda_grp_t &g, unsigned nbbs, int pe,
                                    const char *routine)
{
    if (q) *(volatile uint8_t *)&q->bbs[gshmemi_mlx5_sq_slot((uint16_t)g.t, q->sq_bbs)] = (uint8_t)nbbs;
    __syncwarp(g.active); /* every lane's WQE and BB count before the ring */
    volatile unsigned long long *posted = q ? gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_POSTED) : (unsigned long long *)0;
    /* loaded early: overlaps the fence */
    const uint64_t bell = q && g.rank == 0 ? *(const volatile uint64_t *)gshmemi_ibgda_wqe(q, g.last) : 0;
    __threadfence();
    gshmemi_ibgda_waiter_t w = {0, 0};
    int rung = !q, why = GSHMEMI_IBGDA_OK;
    for (;;) {
        const unsigned long long p = rung ? 0 : *posted;
        if (!rung && g.rank == 0 && p == g.base) {
            ((volatile uint32_t *)q->sq_dbrec)[GSHMEMI_MLX5_DBR_SND] = gshmemi_mlx5_sq_dbrec((uint16_t)g.end);
            __threadfence();
            /* no fence after the doorbell: it would wait for the doorbell's PCIe write before the
             * next ringer may go (two warps posting to one QP: 4.8-5.1 -> 6.7-10.4 M WQEs/s, null
             * NIC, H100); doorbells of two ringers may then reach the NIC out of order, each naming
             * a WQE the record already covers */
            if (q->db) *q->db = bell;
            *posted = g.end;
            rung = 1;
        } else if (!rung && p >= g.end) { /* the group's first lane has rung */
            rung = 1;
        }
        if (!__any_sync(g.active, !rung)) break;
        if (gshmemi_ibgda_miss(&w)) {
            if (!rung) why = GSHMEMI_IBGDA_NOT_POSTED;
            break;
        }
    }
    gshmemi_ibgda_check(g.active, why, q, pe, posted ? *posted : 0, g.base, routine);
}

/* The three steps of an operation, out of line (far calls, memops.cuh): each holds its own
 * waits and reports, and the operation that calls them keeps few values live across the calls. */
static __device__ __noinline__ void gshmemi_ibgda_reserve_far(gshmemi_ibgda_grp_t *g, unsigned active, const gshmemi_ibgda_qp_t *q,
                                                             unsigned nbbs, int pe, const char *routine)
{
    *g = gshmemi_ibgda_reserve(active, q, nbbs, pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_reserve_far);
static __device__ __noinline__ void gshmemi_ibgda_post_far(const gshmemi_ibgda_qp_t *q, const gshmemi_ibgda_grp_t *g, unsigned nbbs,
                                                          int pe, const char *routine)
{
    gshmemi_ibgda_post(q, *g, nbbs, pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_post_far);
static __device__ __noinline__ void gshmemi_ibgda_wait_done_far(unsigned active, const gshmemi_ibgda_qp_t *q, unsigned long long target,
                                                               int pe, const char *routine)
{
    gshmemi_ibgda_wait_done(active, q, target, pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_wait_done_far);

GSHMEMI_DEV uint64_t gshmemi_ibgda_offset(const void *sym) { return (uint64_t)((const char *)sym - gshmemi_dstate.heap_base); }

/* The key of a local buffer: the heap's, else the one of local buffers outside it. */
GSHMEMI_DEV uint32_t gshmemi_ibgda_lkey(const gshmemi_ibgda_qp_t *q, const void *p)
{
    const char *c = (const char *)p, *base = gshmemi_dstate.heap_base;
    return c >= base && c < base + gshmemi_dstate.heap_size ? q->lkey : q->buf_lkey;
}

/* The RDMA WRITE or READ of len bytes between sym (on the QP's peer) and loc, WQE t of q. */
static __device__ __noinline__ void gshmemi_ibgda_wqe_rdma_far(const gshmemi_ibgda_qp_t *q, unsigned long long t, int is_put,
                                                              const char *sym, char *loc, uint32_t len)
{
    gshmemi_mlx5_wqe_rdma(gshmemi_ibgda_wqe(q, t), (uint16_t)t, is_put ? GSHMEMI_MLX5_OPCODE_RDMA_WRITE : GSHMEMI_MLX5_OPCODE_RDMA_READ,
                          q->qpn, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, q->raddr + gshmemi_ibgda_offset(sym), q->rkey,
                          (uint64_t)(uintptr_t)loc, gshmemi_ibgda_lkey(q, loc), len);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_wqe_rdma_far);

/* Contiguous put (RDMA WRITE) or get (RDMA READ) of n bytes by one thread; blocking: returns once
 * the source may be reused (put) or the data is here (get). A lane posts one WQE a turn, while
 * any calling lane has bytes left (a message over 1 GiB takes several). */
/* An RMA in progress, in memory across the far calls of its turns. */
typedef struct gshmemi_ibgda_rma_req {
    const gshmemi_ibgda_qp_t *q;
    const char *sym;
    char *loc;
    size_t n;               /* bytes left */
    unsigned long long end; /* one past the last BB posted */
    const char *routine;
    unsigned active;
    int is_put, pe;
} gshmemi_ibgda_rma_req_t;

/* One turn: a WQE of up to GSHMEMI_IBGDA_MAX_MSG bytes from each lane with bytes left, every
 * calling lane in the reservation and the ring. */
static __device__ __noinline__ void gshmemi_ibgda_rma_turn_far(gshmemi_ibgda_rma_req_t *r)
{
    const size_t n = r->n;
    const uint32_t len = n > GSHMEMI_IBGDA_MAX_MSG ? GSHMEMI_IBGDA_MAX_MSG : (uint32_t)n;
    const gshmemi_ibgda_qp_t *qn = len ? r->q : (const gshmemi_ibgda_qp_t *)0;
    gshmemi_ibgda_grp_t g;
    GSHMEMI_FAR(gshmemi_ibgda_reserve_far)(&g, r->active, qn, 1, r->pe, r->routine);
    if (len) GSHMEMI_FAR(gshmemi_ibgda_wqe_rdma_far)(r->q, g.t, r->is_put, r->sym, r->loc, len);
    GSHMEMI_FAR(gshmemi_ibgda_post_far)(qn, &g, 1, r->pe, r->routine);
    if (len) r->end = g.end;
    r->sym += len;
    r->loc += len;
    r->n = n - len;
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_rma_turn_far);

static __device__ __noinline__ void gshmemi_ibgda_rma(int is_put, void *dest, const void *src, size_t n, int pe, int blocking,
                                                     const char *routine)
{
    gshmemi_ibgda_rma_req_t r;
    r.q = gshmemi_ibgda_qp_of(pe, routine);
    r.active = __activemask();
    r.sym = (const char *)(is_put ? (const void *)dest : src);
    r.loc = (char *)(is_put ? src : (const void *)dest);
    r.n = n, r.end = 0, r.routine = routine, r.is_put = is_put, r.pe = pe;
    while (__any_sync(r.active, r.n != 0)) GSHMEMI_FAR(gshmemi_ibgda_rma_turn_far)(&r);
    if (blocking) GSHMEMI_FAR(gshmemi_ibgda_wait_done_far)(r.active, r.q, r.end, pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_rma);

/* A value of width (1, 2, 4 or 8) bytes stored at sym on pe: an inline RDMA WRITE. */
static __device__ __noinline__ void gshmemi_ibgda_p(void *sym, uint64_t bits, size_t width, int pe, const char *routine)
{
    const gshmemi_ibgda_qp_t *q = gshmemi_ibgda_qp_of(pe, routine);
    gshmemi_ibgda_grp_t g;
    GSHMEMI_FAR(gshmemi_ibgda_reserve_far)(&g, __activemask(), q, 1, pe, routine);
    gshmemi_mlx5_wqe_put_inline(gshmemi_ibgda_wqe(q, g.t), (uint16_t)g.t, q->qpn, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE,
                                q->raddr + gshmemi_ibgda_offset(sym), q->rkey, &bits, (uint32_t)width);
    GSHMEMI_FAR(gshmemi_ibgda_post_far)(q, &g, 1, pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_p);

/* The width-byte value at sym on pe: an RDMA READ into the result word of its slot. The word is
 * read once the WQE completed; it is reused sq_bbs WQEs later, which cannot be posted before. */
static __device__ __noinline__ uint64_t gshmemi_ibgda_g(const void *sym, size_t width, int pe, const char *routine)
{
    const gshmemi_ibgda_qp_t *q = gshmemi_ibgda_qp_of(pe, routine);
    gshmemi_ibgda_grp_t g;
    GSHMEMI_FAR(gshmemi_ibgda_reserve_far)(&g, __activemask(), q, 1, pe, routine);
    volatile uint64_t *word = q->result + gshmemi_mlx5_sq_slot((uint16_t)g.t, q->sq_bbs);
    *word = 0; /* the READ fills the low width bytes */
    gshmemi_mlx5_wqe_get(gshmemi_ibgda_wqe(q, g.t), (uint16_t)g.t, q->qpn, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE,
                         q->raddr + gshmemi_ibgda_offset(sym), q->rkey, (uint64_t)(uintptr_t)word, q->result_lkey, (uint32_t)width);
    GSHMEMI_FAR(gshmemi_ibgda_post_far)(q, &g, 1, pe, routine);
    GSHMEMI_FAR(gshmemi_ibgda_wait_done_far)(g.active, q, g.t + 1, pe, routine);
    return *word;
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_g);

/* quiet: every WQE reserved so far on every QP of this PE has completed. The counters of 4 QPs
 * at a time are read together (one round trip for 4, not 4: n_pes x GSHMEM_IBGDA_NUM_RC_PER_PE
 * records); a record with no counters is a PE not routed here. */
#define GSHMEMI_IBGDA_QUIET_BATCH 4
static __device__ __noinline__ void gshmemi_ibgda_quiet(const char *routine)
{
    const gshmemi_ibgda_qp_t *recs = gshmemi_dstate.ibgda;
    const unsigned nqp = gshmemi_dstate.ibgda_nqp, n = (unsigned)gshmemi_dstate.n_pes * nqp, active = __activemask();
    unsigned bad = n; /* the record whose wait failed, reported after the loop (no call inside one) */
    int why = GSHMEMI_IBGDA_OK;
    for (unsigned i0 = 0; i0 < n && bad == n; i0 += GSHMEMI_IBGDA_QUIET_BATCH) {
        /* what each record's wait is for (0: nothing), kept instead of both counters */
        unsigned long long need[GSHMEMI_IBGDA_QUIET_BATCH];
#pragma unroll
        for (int k = 0; k < GSHMEMI_IBGDA_QUIET_BATCH; k++) {
            const volatile unsigned long long *c = i0 + k < n ? recs[i0 + k].ctr : (unsigned long long *)0;
            const unsigned long long resv = c ? c[GSHMEMI_IBGDA_CTR_RESV] : 0, done = c ? c[GSHMEMI_IBGDA_CTR_DONE] : 0;
            need[k] = done < resv ? resv : 0;
        }
#pragma unroll
        for (int k = 0; k < GSHMEMI_IBGDA_QUIET_BATCH; k++)
            if (bad == n && __any_sync(active, need[k] != 0)) {
                why = gshmemi_ibgda_wait_done_why(active, &recs[i0 + k], need[k]);
                if (__any_sync(active, why != GSHMEMI_IBGDA_OK)) bad = i0 + k;
            }
    }
    if (bad < n)
        gshmemi_ibgda_check(active, why, &recs[bad], (int)(bad / nqp), *gshmemi_ibgda_ctr(&recs[bad], GSHMEMI_IBGDA_CTR_DONE),
                            *gshmemi_ibgda_ctr(&recs[bad], GSHMEMI_IBGDA_CTR_RESV), routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_quiet);

/* fence: a quiet (RC keeps a QP's writes in order, but not reads and atomics after writes without
 * a fence flag, which this path does not set yet; and a thread's QP may differ per peer). */
static __device__ __forceinline__ void gshmemi_ibgda_fence(const char *routine) { GSHMEMI_FAR(gshmemi_ibgda_quiet)(routine); }

/* What this path does not carry yet: reported, then the trap (never a silent wrong answer). */
GSHMEMI_DEV_REPORT void gshmemi_ibgda_unsupported(const char *what, int pe, const char *routine)
{
    printf("gshmem: PE %d: %s: %s to PE %d over IBGDA is not implemented yet (GSHMEM_REMOTE_TRANSPORT=proxy carries it)\n",
           gshmemi_dstate.my_pe, routine, what, pe);
    __trap();
}

/* An atomic's operands, in memory for the far calls that build its WQE. */
typedef struct gshmemi_ibgda_amo_req {
    const void *sym;
    uint64_t value, cond;
    const char *routine;
    int op, bit, pe;
    unsigned size, nbbs;
} gshmemi_ibgda_amo_req_t;

/* The WQE of an atomic (gshmemi_ibgda_amo) at slot t of q, its result in the slot's result word. */
static __device__ __noinline__ void gshmemi_ibgda_wqe_amo_far(const gshmemi_ibgda_qp_t *q, unsigned long long t,
                                                             const gshmemi_ibgda_amo_req_t *a)
{
    const void *sym = a->sym;
    const uint64_t value = a->value, cond = a->cond;
    const int op = a->op, bit = a->bit, pe = a->pe;
    const unsigned size = a->size, nbbs = a->nbbs;
    const char *routine = a->routine;
    uint64_t *word = q->result + gshmemi_mlx5_sq_slot((uint16_t)t, q->sq_bbs);
    const uint64_t raddr = q->raddr + gshmemi_ibgda_offset(sym), laddr = (uint64_t)(uintptr_t)word;
    const uint8_t ce = GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE;
    /* built here, copied a BB at a time (the ring may wrap); the copy loops are not unrolled, so
     * the WQE stays in local memory rather than taking 32 registers */
    uint4 wqe[2 * GSHMEMI_MLX5_SEND_WQE_BB / sizeof(uint4)];
    unsigned ds;
    if (bit)
        ds = gshmemi_mlx5_wqe_bitwise(wqe, (uint16_t)t, q->qpn, ce, raddr, q->rkey, laddr, q->result_lkey, size, bit, value);
    else if (op == GSHMEMI_AMO_CSWAP)
        ds = gshmemi_mlx5_wqe_compare_swap(wqe, (uint16_t)t, q->qpn, ce, raddr, q->rkey, laddr, q->result_lkey, size, cond, value);
    else /* fetch (add 0), add, fetch-add */
        ds = gshmemi_mlx5_wqe_fetch_add(wqe, (uint16_t)t, q->qpn, ce, raddr, q->rkey, laddr, q->result_lkey, size,
                                        op == GSHMEMI_AMO_FETCH ? 0 : value);
    if (ds == 0 || gshmemi_mlx5_wqe_bbs(ds) != nbbs) gshmemi_ibgda_unsupported("an atomic of this width", pe, routine);
#pragma unroll 1
    for (unsigned b = 0; b < 2; b++) {
        if (b == nbbs) break;
        uint4 *slot = (uint4 *)gshmemi_ibgda_wqe(q, t + b);
#pragma unroll 1
        for (unsigned i = 0; i < GSHMEMI_MLX5_SEND_WQE_BB / sizeof(uint4); i++) slot[i] = wqe[b * 4 + i];
    }
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_wqe_amo_far);

/* An atomic op (GSHMEMI_AMO_*) on the width-byte (4 or 8) word at sym on pe; fetch: waits and
 * returns the old value. The NIC's atomics: fetch-add (8 bytes; 4 by a masked fetch-add), compare-
 * swap, and the masked forms for swap, set, and, or, xor (mlx5_wqe.h's builders); a fetch is a
 * fetch-add of 0. The old value lands in the result word of the WQE's slot. */
static __device__ __noinline__ uint64_t gshmemi_ibgda_amo(int op, void *sym, uint64_t value, uint64_t cond, size_t width, int pe,
                                                          int fetch, const char *routine)
{
    const gshmemi_ibgda_qp_t *q = gshmemi_ibgda_qp_of(pe, routine);
    gshmemi_ibgda_amo_req_t a;
    const unsigned size = (unsigned)width;
    int bit = 0;
    switch (op) {
    case GSHMEMI_AMO_SET:
    case GSHMEMI_AMO_SWAP: bit = GSHMEMI_MLX5_BIT_SWAP; break;
    case GSHMEMI_AMO_FETCH_AND:
    case GSHMEMI_AMO_AND: bit = GSHMEMI_MLX5_BIT_AND; break;
    case GSHMEMI_AMO_FETCH_OR:
    case GSHMEMI_AMO_OR: bit = GSHMEMI_MLX5_BIT_OR; break;
    case GSHMEMI_AMO_FETCH_XOR:
    case GSHMEMI_AMO_XOR: bit = GSHMEMI_MLX5_BIT_XOR; break;
    default: break;
    }
    /* only the 8-byte masked compare-swap takes two BBs */
    const unsigned nbbs = size == 8 && bit && bit != GSHMEMI_MLX5_BIT_XOR ? 2 : 1;
    a.sym = sym, a.value = value, a.cond = cond, a.routine = routine, a.op = op, a.bit = bit, a.pe = pe, a.size = size, a.nbbs = nbbs;
    gshmemi_ibgda_grp_t g;
    GSHMEMI_FAR(gshmemi_ibgda_reserve_far)(&g, __activemask(), q, nbbs, pe, routine);
    const unsigned long long t = g.t;
    GSHMEMI_FAR(gshmemi_ibgda_wqe_amo_far)(q, t, &a);
    const uint64_t *word = q->result + gshmemi_mlx5_sq_slot((uint16_t)t, q->sq_bbs);
    GSHMEMI_FAR(gshmemi_ibgda_post_far)(q, &g, nbbs, pe, routine);
    GSHMEMI_FAR(gshmemi_ibgda_wait_done_far)(g.active, q, fetch ? t + nbbs : 0, pe, routine);
    if (!fetch) return 0;
    const uint64_t old = *(volatile uint64_t *)word;
    return size == 4 ? (uint32_t)old : old;
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_amo);

/* n bytes to dest on pe, then the signal update at sig on pe: SHMEM_SIGNAL_SET an inline RDMA
 * WRITE, SHMEM_SIGNAL_ADD an atomic add, on the same QP, which RC executes in order. */
static __device__ __noinline__ void gshmemi_ibgda_put_signal(void *dest, const void *src, size_t n, uint64_t *sig, uint64_t signal,
                                                            int sig_op, int pe, int blocking, const char *routine)
{
    if (n) GSHMEMI_FAR(gshmemi_ibgda_rma)(1, dest, src, n, pe, 0, routine);
    if (sig_op == 1 /* SHMEM_SIGNAL_ADD */)
        (void)GSHMEMI_FAR(gshmemi_ibgda_amo)(GSHMEMI_AMO_ADD, sig, signal, 0, sizeof(uint64_t), pe, 0, routine);
    else GSHMEMI_FAR(gshmemi_ibgda_p)(sig, signal, sizeof(uint64_t), pe, routine);
    if (blocking) { /* the QP both went to (this thread's), up to what it has rung */
        const gshmemi_ibgda_qp_t *q = gshmemi_ibgda_qp(pe);
        GSHMEMI_FAR(gshmemi_ibgda_wait_done_far)(__activemask(), q, *gshmemi_ibgda_ctr(q, GSHMEMI_IBGDA_CTR_POSTED), pe, routine);
    }
}
GSHMEMI_FAR_DEFINE(gshmemi_ibgda_put_signal);

#endif
