/* The daemon of the preemptive collective engine (docs/engine.md; the layouts, the step sequence
 * and the stickiness rule are in engine.h). One CTA of the daemon runs its own share of every
 * collective with its own flags, so CTAs never wait on each other, only on the same CTA of the
 * other members: a CTA that is not resident, or has exited, delays its peers but cannot deadlock
 * them.
 *
 * A CTA's loop (thread 0 schedules, every thread moves data):
 *   1. look at the queue (at every turn when idle, every few microseconds when busy) and copy new
 *      entries into its task queue (shared memory while it runs, device memory across exits):
 *      CTA 0 from the ring in pinned memory (a round trip over the bus), which it copies into
 *      device memory for the other CTAs; its head in pinned memory frees their slots;
 *   2. order the runnable tasks (the oldest request of each collective) by priority, then queue
 *      order, and run the one at the current position from its saved step: arrive (signal the
 *      members), wait for their arrival, work (chunk by chunk: loads of the members' sources
 *      over P2P, the reduction or copy into this PE's dest), signal done, wait for their done;
 *      a two-shot allreduce works only its part of each chunk, then signals and waits for the
 *      middle and gathers the other parts from the members' dests before its done;
 *   3. a wait that polls past its threshold (gshmemi_engine_spins) preempts the collective: its
 *      step is saved and the next position runs. A finished request counts its CTA; the last
 *      CTA writes the collective's completion word;
 *   4. exit when idle, or every task stuck, for the set time, or when the host asks; but not
 *      while a stream wait holds the launch (engine.h, gshmemi_engine_host_t's hold). */
#ifndef GSHMEM_DEVICE_COLL_ENGINE_CUH
#define GSHMEM_DEVICE_COLL_ENGINE_CUH

#include "engine.h"
#include "proto_direct.cuh"

enum { GSHMEMI_ENGINE_CMD_RUN = 0, GSHMEMI_ENGINE_CMD_IDLE = 1, GSHMEMI_ENGINE_CMD_EXIT = 2 };
enum { GSHMEMI_ENGINE_RAN_PREEMPTED = 0, GSHMEMI_ENGINE_RAN_FINISHED = 1 };

/* What thread 0 hands the CTA for one run. */
struct gshmemi_engine_run {
    gshmemi_engine_sqe_t task;
    gshmemi_engine_coll_t coll;
    gshmemi_engine_ctx_t ctx;
    uint64_t lo, hi;  /* this CTA's share, in 16-byte units of a block (or of the result) */
    uint32_t nchunks; /* of the share */
    uint32_t spins;
    int cmd, active, ok, result, progressed, slot, ll, two;
};

GSHMEMI_DEV int gshmemi_engine_pe(const gshmemi_engine_coll_t &c, int m) { return c.start + m * c.stride; }

/* Thread 0: value v into this PE's row of CTA b's flags on every member. */
GSHMEMI_DEV void gshmemi_engine_signal(const gshmemi_engine_coll_t &c, int b, uint64_t v)
{
    uint64_t *f = c.flags + (size_t)b * c.size + c.my_idx;
    gshmemi_fence_release_sys();
    for (int m = 0; m < c.size; m++) {
        uint64_t *p = m == c.my_idx ? f : (uint64_t *)gshmemi_peer_ptr_raw(f, gshmemi_engine_pe(c, m));
        gshmemi_st_relaxed_u64(p, v);
    }
}

/* Thread 0: polls CTA b's flags until every member's is at least v (true) or `spins` polls
 * went by (false: the caller preempts). */
GSHMEMI_DEV bool gshmemi_engine_poll(const gshmemi_engine_coll_t &c, int b, uint64_t v, uint32_t spins)
{
    const uint64_t *row = c.flags + (size_t)b * c.size;
    int m = 0;
    for (uint32_t i = 0; i < spins; i++) {
        while (m < c.size && gshmemi_ld_acquire_u64(row + m) >= v) m++;
        if (m == c.size) return true;
    }
    return false;
}

/* One WORK step: chunk `chunk` of this CTA's share [lo, hi) (16-byte units), by every thread. */
template <typename T>
GSHMEMI_DEV void gshmemi_engine_reduce(const gshmemi_engine_coll_t &c, char *dest, const char *src, size_t off, size_t bytes,
                                       unsigned tid, unsigned nt)
{
    const int op = c.op;
    gshmemi_reduce_vec<T>([op](int4 x, int4 y) { return gshmemi_redop_word_dyn<T>(op, x, y); },
                          [op](T x, T y) { return gshmemi_redop_dyn<T>(op, x, y); }, c.size,
                          [&](int m) { return (const char *)gshmemi_peer_ptr_raw(src + off, gshmemi_engine_pe(c, m)); }, 1,
                          [&](int) { return dest + off; }, bytes, tid, nt);
}

/* The bytes [*from, *to) of chunk r.ctx.chunk of this CTA's share, within the block; false when
 * there are none. */
GSHMEMI_DEV bool gshmemi_engine_chunk(const gshmemi_engine_run &r, size_t *from, size_t *to)
{
    const size_t blk = r.task.count * r.coll.es;
    *from = (r.lo + (size_t)r.ctx.chunk * (GSHMEMI_ENGINE_CHUNK / 16)) * 16;
    *to = *from + GSHMEMI_ENGINE_CHUNK;
    if (*to > r.hi * 16) *to = r.hi * 16;
    if (*to > blk) *to = blk;
    return *from < *to;
}

GSHMEMI_DEV void gshmemi_engine_work(const gshmemi_engine_run &r, unsigned tid, unsigned nt)
{
    const gshmemi_engine_coll_t &c = r.coll;
    const size_t blk = r.task.count * c.es;
    size_t from, to;
    if (!gshmemi_engine_chunk(r, &from, &to)) return;
    char *dest = (char *)r.task.dest;
    const char *src = (const char *)r.task.src;
    if (r.two) { /* this member's part of the chunk only; the others' come in the gather */
        uint64_t pf, pt;
        gshmemi_engine_part(from, to, c.size, c.my_idx, &pf, &pt);
        from = pf, to = pt;
        if (from >= to) return;
    }
    switch (c.kind) {
    case GSHMEMI_ENGINE_ALLREDUCE:
        switch (c.dtype) {
        case GSHMEMI_DT_FLOAT: gshmemi_engine_reduce<float>(c, dest, src, from, to - from, tid, nt); break;
        case GSHMEMI_DT_DOUBLE: gshmemi_engine_reduce<double>(c, dest, src, from, to - from, tid, nt); break;
        case GSHMEMI_DT_INT32: gshmemi_engine_reduce<int32_t>(c, dest, src, from, to - from, tid, nt); break;
        case GSHMEMI_DT_INT64: gshmemi_engine_reduce<int64_t>(c, dest, src, from, to - from, tid, nt); break;
        default: gshmemi_engine_reduce<__nv_bfloat16>(c, dest, src, from, to - from, tid, nt); break;
        }
        break;
    case GSHMEMI_ENGINE_BROADCAST:
        if (c.my_idx != r.task.root || dest != src)
            gshmemi_copy(dest + from, (const char *)gshmemi_peer_ptr_raw(src + from, gshmemi_engine_pe(c, r.task.root)), to - from,
                         tid, nt);
        break;
    case GSHMEMI_ENGINE_FCOLLECT: /* member m's block into place m */
        for (int k = 0; k < c.size; k++) {
            int m = (c.my_idx + k) % c.size; /* members start on different peers */
            gshmemi_copy(dest + (size_t)m * blk + from, (const char *)gshmemi_peer_ptr_raw(src + from, gshmemi_engine_pe(c, m)),
                         to - from, tid, nt);
        }
        break;
    default: /* alltoall: block my_idx of member m's source into place m */
        for (int k = 0; k < c.size; k++) {
            int m = (c.my_idx + k) % c.size;
            gshmemi_copy(dest + (size_t)m * blk + from,
                         (const char *)gshmemi_peer_ptr_raw(src + (size_t)c.my_idx * blk + from, gshmemi_engine_pe(c, m)),
                         to - from, tid, nt);
        }
        break;
    }
}

/* One GATHER step of a two-shot request: the other members' parts of chunk `chunk` of this CTA's
 * share, reduced in their dests, into this PE's dest (members start on different peers). */
GSHMEMI_DEV void gshmemi_engine_gather(const gshmemi_engine_run &r, unsigned tid, unsigned nt)
{
    const gshmemi_engine_coll_t &c = r.coll;
    size_t from, to;
    if (!gshmemi_engine_chunk(r, &from, &to)) return;
    char *dest = (char *)r.task.dest;
    for (int k = 1; k < c.size; k++) {
        const int m = (c.my_idx + k) % c.size;
        uint64_t pf, pt;
        gshmemi_engine_part(from, to, c.size, m, &pf, &pt);
        if (pf < pt)
            gshmemi_copy(dest + pf, (const char *)gshmemi_peer_ptr_raw(dest + pf, gshmemi_engine_pe(c, m)), pt - pf, tid, nt);
    }
}

/* ---- LL (engine.h, gshmemi_engine_uses_ll) ---- */
/* Member m's row of the LL area that request seq uses. */
GSHMEMI_DEV uint64_t *gshmemi_engine_ll_row(const gshmemi_engine_coll_t &c, uint64_t seq, int m)
{
    return c.ll + ((size_t)(seq & 1) * c.size + m) * GSHMEMI_ENGINE_LL_WORDS;
}

/* Every thread: this PE's data (alltoall: its block for each member) into its row of every
 * member's LL area, 4 bytes and the request's number in each 8-byte store. */
GSHMEMI_DEV void gshmemi_engine_ll_send(const gshmemi_engine_run &r, unsigned tid, unsigned nt)
{
    const gshmemi_engine_coll_t &c = r.coll;
    const size_t blk = r.task.count * c.es;
    const uint32_t nw = (uint32_t)((blk + 3) / 4);
    const uint64_t flag = (uint64_t)(uint32_t)r.ctx.seq << 32;
    uint64_t *mine = gshmemi_engine_ll_row(c, r.ctx.seq, c.my_idx);
    for (uint32_t i = tid; i < (uint32_t)c.size * nw; i += nt) {
        const int q = (int)(i / nw);
        const uint32_t w = i % nw;
        const char *from = (const char *)r.task.src + (c.kind == GSHMEMI_ENGINE_ALLTOALL ? (size_t)q * blk : 0) + 4 * (size_t)w;
        const unsigned n = blk - 4 * (size_t)w < 4 ? (unsigned)(blk - 4 * (size_t)w) : 4;
        uint64_t *to = q == c.my_idx ? mine + w : (uint64_t *)gshmemi_peer_ptr_raw(mine + w, gshmemi_engine_pe(c, q));
        gshmemi_st_relaxed_u64(to, flag | (uint32_t)gshmemi_load8(from, n));
    }
}

/* Every thread: polls this PE's rows until every word holds request r's number (true, the same
 * in every thread), or r.spins passes went by (false). */
GSHMEMI_DEV bool gshmemi_engine_ll_wait(const gshmemi_engine_run &r, unsigned tid, unsigned nt)
{
    const gshmemi_engine_coll_t &c = r.coll;
    const uint32_t nw = (uint32_t)((r.task.count * c.es + 3) / 4), total = (uint32_t)c.size * nw;
    const uint32_t f = (uint32_t)r.ctx.seq;
    const uint64_t *rows = gshmemi_engine_ll_row(c, r.ctx.seq, 0);
    for (uint32_t s = 0; s < r.spins; s++) {
        int ok = 1;
        for (uint32_t i = tid; i < total && ok; i += nt)
            ok = (uint32_t)(gshmemi_ld_relaxed_u64(rows + (size_t)(i / nw) * GSHMEMI_ENGINE_LL_WORDS + i % nw) >> 32) == f;
        if (__syncthreads_and(ok)) return true;
    }
    return false;
}

/* Element e (of at most 4 bytes) of an LL row. */
template <typename T> GSHMEMI_DEV T gshmemi_engine_ll_elem(const uint64_t *row, size_t e)
{
    const uint32_t bits = (uint32_t)gshmemi_ld_relaxed_u64(row + e * sizeof(T) / 4) >> (8 * (e * sizeof(T) % 4));
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
}

template <typename T> GSHMEMI_DEV void gshmemi_engine_ll_reduce(const gshmemi_engine_run &r, const uint64_t *rows, unsigned tid, unsigned nt)
{
    const gshmemi_engine_coll_t &c = r.coll;
    for (size_t e = tid; e < r.task.count; e += nt) {
        T acc = gshmemi_engine_ll_elem<T>(rows, e);
        for (int m = 1; m < c.size; m++) acc = gshmemi_redop_dyn<T>(c.op, acc, gshmemi_engine_ll_elem<T>(rows + (size_t)m * GSHMEMI_ENGINE_LL_WORDS, e));
        ((T *)r.task.dest)[e] = acc;
    }
}

/* Every thread: the result from this PE's rows into dest. */
GSHMEMI_DEV void gshmemi_engine_ll_work(const gshmemi_engine_run &r, unsigned tid, unsigned nt)
{
    const gshmemi_engine_coll_t &c = r.coll;
    const uint64_t *rows = gshmemi_engine_ll_row(c, r.ctx.seq, 0);
    const size_t blk = r.task.count * c.es;
    const uint32_t nw = (uint32_t)((blk + 3) / 4);
    if (c.kind == GSHMEMI_ENGINE_ALLREDUCE) {
        if (c.dtype == GSHMEMI_DT_FLOAT) gshmemi_engine_ll_reduce<float>(r, rows, tid, nt);
        else if (c.dtype == GSHMEMI_DT_INT32) gshmemi_engine_ll_reduce<int32_t>(r, rows, tid, nt);
        else gshmemi_engine_ll_reduce<__nv_bfloat16>(r, rows, tid, nt);
        return;
    }
    for (uint32_t i = tid; i < (uint32_t)c.size * nw; i += nt) {
        const int m = (int)(i / nw);
        const uint32_t w = i % nw;
        if (c.kind == GSHMEMI_ENGINE_BROADCAST && m != r.task.root) continue;
        const unsigned n = blk - 4 * (size_t)w < 4 ? (unsigned)(blk - 4 * (size_t)w) : 4;
        char *to = (char *)r.task.dest + (c.kind == GSHMEMI_ENGINE_BROADCAST ? 0 : (size_t)m * blk) + 4 * (size_t)w;
        gshmemi_store8(to, (uint32_t)gshmemi_ld_relaxed_u64(rows + (size_t)m * GSHMEMI_ENGINE_LL_WORDS + w), n);
    }
}

/* Runs r's collective from its saved step until it finishes or a wait gives up (every thread). */
GSHMEMI_DEV void gshmemi_engine_exec(gshmemi_engine_run &r, int b, unsigned tid, unsigned nt)
{
    const int kind = r.coll.kind;
    if (b >= r.active) { /* not one of the request's CTAs: nothing to move, no flags */
        if (tid == 0) r.result = GSHMEMI_ENGINE_RAN_FINISHED;
        __syncthreads();
        return;
    }
    for (;;) {
        const uint32_t pc = r.ctx.pc;
        if (pc == GSHMEMI_ENGINE_PC_END) {
            if (tid == 0) r.result = GSHMEMI_ENGINE_RAN_FINISHED;
            break;
        }
        const bool moves = pc == GSHMEMI_ENGINE_PC_WORK || pc == GSHMEMI_ENGINE_PC_GATHER;
        if (pc == GSHMEMI_ENGINE_PC_WORK) {
            if (r.ll) gshmemi_engine_ll_work(r, tid, nt);
            else gshmemi_engine_work(r, tid, nt);
        } else if (pc == GSHMEMI_ENGINE_PC_GATHER) {
            gshmemi_engine_gather(r, tid, nt);
        } else if (r.ll && pc == GSHMEMI_ENGINE_PC_ARRIVE) {
            gshmemi_engine_ll_send(r, tid, nt);
            if (tid == 0) r.ok = 1;
        } else if (r.ll) { /* PC_WAIT_ARRIVE: the only wait of an LL request */
            const bool ok = gshmemi_engine_ll_wait(r, tid, nt);
            if (tid == 0) r.ok = ok, r.ctx.streak = gshmemi_engine_streak(r.ctx.streak, ok);
        } else if (tid == 0) {
            const uint64_t v = gshmemi_engine_flag(kind, pc, r.ctx.seq);
            if (pc == GSHMEMI_ENGINE_PC_ARRIVE || pc == GSHMEMI_ENGINE_PC_MID || pc == GSHMEMI_ENGINE_PC_DONE) {
                r.ok = 1;
                gshmemi_engine_signal(r.coll, b, v);
            } else {
                r.ok = gshmemi_engine_poll(r.coll, b, v, r.spins);
                r.ctx.streak = gshmemi_engine_streak(r.ctx.streak, r.ok);
            }
        }
        __syncthreads(); /* the work's stores before the next signal (MID or DONE); r.ok */
        if (!moves && !r.ok) {
            if (tid == 0) r.result = GSHMEMI_ENGINE_RAN_PREEMPTED;
            break;
        }
        if (tid == 0) {
            gshmemi_engine_next(kind, r.ll, r.two, r.nchunks, &r.ctx);
            r.progressed = 1;
        }
        __syncthreads();
    }
    __syncthreads();
}

/* Thread 0: the last of the CTAs to finish request `seq` of collective `id` publishes it. */
GSHMEMI_DEV void gshmemi_engine_finish(const gshmemi_engine_dev_t &e, int id, uint64_t seq, bool *published)
{
    uint32_t *cnt = e.finished + (size_t)id * GSHMEMI_ENGINE_TASKS + seq % GSHMEMI_ENGINE_TASKS;
    /* this CTA's stores before the count; and, when it has written a completion word since its
     * last fence at system scope, that word before the count (the next request's completion,
     * written by another CTA, must not overtake it on its way to the host). Only then a fence at
     * system scope: it waits for writes over the bus, and every CTA passes here per request. */
    if (*published) gshmemi_fence_release_sys(), *published = false;
    else __threadfence();
    uint32_t before;
    /* acquire and release at GPU scope: the last CTA acquires every other CTA's stores with their
     * counts, and its release of the word at system scope passes them on to the host (cumulative),
     * with no full fence at system scope of its own */
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(cnt) : "memory");
    if (before == (uint32_t)e.ctas - 1) {
        atomicExch(cnt, 0u);
        gshmemi_st_release_u64((void *)&e.host->done[id], seq);
        *published = true;
    }
}

/* Thread 0: tail and hold (gshmemi_engine_host_t) in one load from pinned memory. */
GSHMEMI_DEV void gshmemi_engine_look(const gshmemi_engine_dev_t &e, uint64_t *tail, uint64_t *hold)
{
    asm volatile("ld.acquire.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(*tail), "=l"(*hold) : "l"(&e.host->tail) : "memory");
}

/* Thread 0: whether a stream wait holds this launch resident (docs: engine.h, gshmemi_engine_host_t):
 * the hold is active and no CTA of this launch has left. Acknowledges the generation it keeps. */
GSHMEMI_DEV bool gshmemi_engine_held(const gshmemi_engine_dev_t &e, int b, uint64_t hold, uint64_t *acked)
{
    if (hold >> 1 == *acked && !(hold & 1)) return false; /* nothing new to acknowledge, nothing held: no need to read left */
    int ack;
    const bool stays = gshmemi_engine_hold_stays(hold, *(volatile uint32_t *)e.left, acked, &ack);
    if (ack) gshmemi_st_relaxed_u64((void *)&e.host->ack[b], *acked);
    return stays;
}

/* Thread 0: the runnable tasks (each collective's oldest) in run order, into order[]; their count. */
GSHMEMI_DEV int gshmemi_engine_order(const gshmemi_engine_dev_t &e, const gshmemi_engine_sqe_t *tasks, int ntasks, int *order)
{
    int n = 0;
    uint64_t seen = 0; /* collectives met so far (ids < 64) */
    static_assert(GSHMEMI_ENGINE_MAX_COLLS <= 64, "one bit per collective");
    for (int i = 0; i < ntasks; i++) {
        const int id = tasks[i].coll;
        if (seen >> id & 1) continue;
        seen |= 1ull << id;
        const int prio = e.colls[id].priority;
        int k = n++;
        while (k > 0) { /* insertion by (priority, queue order) */
            const gshmemi_engine_sqe_t *o = &tasks[order[k - 1]];
            if (!gshmemi_engine_before(prio, tasks[i].index, e.colls[o->coll].priority, o->index)) break;
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    return n;
}

/* How often a CTA with tasks to run looks at the queue (tail, hold) in pinned memory: each look is a
 * round trip over the bus. A CTA with nothing to run looks at every turn. */
#define GSHMEMI_ENGINE_LOOK_NS 4000ull

/* The daemon: gridDim.x == e.ctas CTAs. A CTA's task queue lives in shared memory while it runs
 * (its scheduling is a single thread's, and device memory would make every step a round trip to
 * L2); it is loaded at the start and stored back at the exit. */
GSHMEMI_DEV void gshmemi_engine_daemon(const gshmemi_engine_dev_t &e)
{
    __shared__ gshmemi_engine_run r;
    __shared__ int order[GSHMEMI_ENGINE_TASKS];
    __shared__ __align__(16) gshmemi_engine_sqe_t tasks[GSHMEMI_ENGINE_TASKS]; /* copied as int4 */
    __shared__ int ntasks, fetch_n, fetch_at, stop;
    __shared__ uint64_t fetch_from;
    const int b = blockIdx.x;
    const unsigned tid = threadIdx.x, nt = blockDim.x;
    gshmemi_engine_cta_t *me = e.cta + b;
    uint64_t idle_since = 0, progress_at = gshmemi_globaltimer(), preempted = 0, looked_at = 0, acked = ~0ull, hold = 0, sq_head = 0,
             mirrored_hold = ~0ull;
    bool published = false; /* thread 0 wrote a completion word since its last fence at system scope */
    int pos = 0, pass_progress = 0, n = 0, dirty = 1; /* n: runnable tasks in order[] (recomputed when dirty) */

    if (tid == 0) preempted = e.host->preempted[b], ntasks = me->ntasks, sq_head = me->sq_head;
    __syncthreads();
    for (unsigned i = tid; i < (unsigned)ntasks * 4; i += nt) ((int4 *)tasks)[i] = ((const int4 *)me->tasks)[i];
    __syncthreads();
    for (;;) {
        /* look at the queue: CTA 0 at the ring in pinned memory, which it copies into device
         * memory for the others (reads over the bus from every CTA would queue behind each other:
         * the cost of a request grew with the CTAs); new entries are copied by every thread, a
         * quarter entry each */
        if (tid == 0) {
            fetch_n = 0, stop = 0;
            const uint64_t now = gshmemi_globaltimer();
            if (n == 0 || now - looked_at >= GSHMEMI_ENGINE_LOOK_NS) {
                uint64_t tail;
                looked_at = now;
                if (b == 0) {
                    if (n == 0) stop = (int)e.host->stop; /* asked by destroy, which waits for every request first */
                    gshmemi_engine_look(e, &tail, &hold);
                    if (hold != mirrored_hold) mirrored_hold = hold, ((volatile uint64_t *)e.mirror)[1] = hold;
                    if (stop) ((volatile uint64_t *)e.mirror)[2] = 1;
                } else {
                    tail = gshmemi_ld_acquire_u64(e.mirror);
                    hold = ((volatile uint64_t *)e.mirror)[1];
                    if (n == 0) stop = (int)((volatile uint64_t *)e.mirror)[2];
                }
                gshmemi_engine_held(e, b, hold, &acked);
                const uint64_t room = (uint64_t)(GSHMEMI_ENGINE_TASKS - ntasks);
                if (tail > sq_head) fetch_from = sq_head, fetch_at = ntasks, fetch_n = (int)(tail - sq_head < room ? tail - sq_head : room);
            }
        }
        __syncthreads();
        if (stop) break;
        if (fetch_n) {
            for (unsigned i = tid; i < (unsigned)fetch_n * 4; i += nt) {
                const size_t slot = (fetch_from + i / 4) & (e.sq_slots - 1);
                int4 v;
                if (b == 0) {
                    v = __ldcv((const int4 *)(e.sq + slot) + i % 4); /* from memory, not a cached copy */
                    ((int4 *)(e.dsq + slot))[i % 4] = v;
                } else {
                    v = __ldcg((const int4 *)(e.dsq + slot) + i % 4); /* CTA 0 wrote it: not from L1 */
                }
                ((int4 *)&tasks[fetch_at + i / 4])[i % 4] = v;
            }
            __syncthreads(); /* every copy landed before the slots are released (and, CTA 0, published) */
            if (tid == 0) {
                ntasks += fetch_n, sq_head += fetch_n;
                /* the slots' release: CTA 0 read the ring in pinned memory (a release: those
                 * reads before it); the others read CTA 0's copy, which CTA 0 overwrites only
                 * once the host has reused the slot, after this store (relaxed: no fence at
                 * system scope, which would wait for this CTA's writes over the bus) */
                if (b == 0) gshmemi_st_release_u64((void *)&e.host->head[b], sq_head);
                else gshmemi_st_relaxed_u64((void *)&e.host->head[b], sq_head);
                if (b == 0) {
                    __threadfence(); /* the CTA's copies into dsq before the tail that covers them */
                    gshmemi_st_release_u64(e.mirror, sq_head);
                }
                pos = 0, dirty = 1;
            }
        }
        if (tid == 0) {
            const uint64_t now = gshmemi_globaltimer();
            r.cmd = GSHMEMI_ENGINE_CMD_RUN;
            if (dirty) n = gshmemi_engine_order(e, tasks, ntasks, order), dirty = 0;
            if (n == 0) {
                if (!idle_since) idle_since = now;
                r.cmd = GSHMEMI_ENGINE_CMD_IDLE;
                if (now - idle_since > e.idle_ns) {
                    /* a fresh look at the hold: a stream wait may be about to count on this launch */
                    hold = gshmemi_ld_acquire_u64((const void *)&e.host->hold);
                    if (!gshmemi_engine_held(e, b, hold, &acked)) r.cmd = GSHMEMI_ENGINE_CMD_EXIT;
                }
            } else {
                idle_since = 0;
                if (pos >= n) { /* a pass over every runnable task ended */
                    pos = 0;
                    if (pass_progress) progress_at = now;
                    pass_progress = 0;
                    if (now - progress_at > e.stuck_ns) {
                        hold = gshmemi_ld_acquire_u64((const void *)&e.host->hold);
                        if (!gshmemi_engine_held(e, b, hold, &acked)) {
                            e.host->stuck_exits[b] = e.host->stuck_exits[b] + 1;
                            r.cmd = GSHMEMI_ENGINE_CMD_EXIT;
                        }
                    }
                }
                if (r.cmd == GSHMEMI_ENGINE_CMD_RUN) {
                    r.slot = order[pos];
                    r.task = tasks[r.slot];
                    r.coll = e.colls[r.task.coll];
                    r.ctx = e.ctx[(size_t)r.task.coll * e.ctas + b];
                    if (r.ctx.pc == GSHMEMI_ENGINE_PC_ARRIVE) r.ctx.seq = r.task.seq, r.ctx.chunk = 0, r.ctx.streak = 0;
                    const uint64_t bytes = gshmemi_engine_bytes(r.coll.kind, r.task.count, r.coll.es, r.coll.size);
                    const uint64_t units = (r.task.count * r.coll.es + 15) / 16;
                    r.ll = gshmemi_engine_uses_ll(r.coll.kind, r.task.count, r.coll.es);
                    r.active = r.ll ? 1 : gshmemi_engine_active_ctas(bytes, e.ctas);
                    r.two = gshmemi_engine_two_shot(r.coll.kind, r.ll, r.coll.size, bytes);
                    gshmemi_engine_share(units, b, r.active, &r.lo, &r.hi);
                    r.nchunks = r.ll ? 1 : gshmemi_engine_nchunks(r.hi - r.lo, GSHMEMI_ENGINE_CHUNK / 16);
                    r.spins = gshmemi_engine_spins(e.spin_base, pos, r.coll.priority, r.ctx.streak);
                    r.progressed = 0;
                    r.ok = 0;
                }
            }
            if (r.cmd == GSHMEMI_ENGINE_CMD_EXIT) atomicAdd(e.left, 1u); /* before any CTA of this launch acknowledges again */
        }
        __syncthreads();
        if (r.cmd == GSHMEMI_ENGINE_CMD_EXIT) break;
        if (r.cmd == GSHMEMI_ENGINE_CMD_IDLE) {
            /* a short nap while requests may be coming back to back, a longer one later: each
             * turn is a read over the bus, from every CTA */
            if (tid == 0) __nanosleep(gshmemi_globaltimer() - idle_since < 50000 ? 200 : 2000);
            __syncthreads();
            continue;
        }
        gshmemi_engine_exec(r, b, tid, nt);
        if (tid == 0) {
            gshmemi_engine_ctx_t *saved = e.ctx + (size_t)r.task.coll * e.ctas + b;
            if (r.result == GSHMEMI_ENGINE_RAN_FINISHED) {
                r.ctx.pc = GSHMEMI_ENGINE_PC_ARRIVE, r.ctx.chunk = 0;
                *saved = r.ctx;
                for (int i = r.slot; i + 1 < ntasks; i++) tasks[i] = tasks[i + 1];
                ntasks--;
                gshmemi_engine_finish(e, r.task.coll, r.task.seq, &published);
                pos = 0, pass_progress = 1, dirty = 1;
            } else {
                *saved = r.ctx; /* resumes at this step */
                e.host->preempted[b] = ++preempted;
                pass_progress |= r.progressed;
                pos++;
            }
        }
        __syncthreads();
    }
    /* the task queue back to device memory, for the next launch */
    for (unsigned i = tid; i < (unsigned)ntasks * 4; i += nt) ((int4 *)me->tasks)[i] = ((const int4 *)tasks)[i];
    if (tid == 0) me->ntasks = ntasks, me->sq_head = sq_head;
}

#endif
