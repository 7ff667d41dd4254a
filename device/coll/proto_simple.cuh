/* SIMPLE: bulk and pipelined. Each step the sender copies a chunk into a slot of the receiver's
 * ring with plain 16-byte stores (NVLink writes, the fastest way across), the group meets, and a
 * release flag says the step is there; the receiver reduces or copies out of its own memory and
 * hands the slot back with a credit. A slice sends step k + 1 before it consumes step k, and a
 * ring of GSHMEMI_SIMPLE_SLOTS slots lets a sender run that many steps ahead of the slowest
 * receiver before it waits for a credit. Steps are counted per slice, SIMPLE only (every member
 * runs the same steps), so flags and credits only grow. Only the world team has the buffers.
 * The primitives are LL's (proto_ll.cuh); a unit is the chunk, and a "word" the address of a
 * chunk (this PE's source, or a slot).
 * A routed slice may be worked by several CTAs, its parts (policy.h, gshmemi_routed_parts): each
 * stores, reduces or copies its share of every chunk (the unit is that share), and the first part
 * posts the chunk to the members reached through the proxy, and flags and credits every member
 * once all parts have said they are done with the step (their words in the team's counters). */
#ifndef GSHMEM_DEVICE_COLL_PROTO_SIMPLE_CUH
#define GSHMEM_DEVICE_COLL_PROTO_SIMPLE_CUH

#include "policy.h"       /* the routed geometry */
#include "proto_direct.cuh" /* gshmemi_reduce_loop */

/* The geometry: slices of the buffer and bytes of a chunk (policy.h: a routed team's are fewer
 * and larger). */
template <bool ROUTED> GSHMEMI_DEV int gshmemi_simple_nslices(const gshmemi_team_dev_t &t)
{
    return ROUTED ? gshmemi_simple_routed_slices(&t) : t.simple_slices;
}
template <bool ROUTED> GSHMEMI_DEV size_t gshmemi_simple_chunk(const gshmemi_team_dev_t &t)
{
    return ROUTED ? gshmemi_simple_routed_chunk(&t) : (size_t)GSHMEMI_SIMPLE_CHUNK;
}
template <bool ROUTED> GSHMEMI_DEV char *gshmemi_simple_slot(const gshmemi_team_dev_t &t, uint64_t step, int slice, int from)
{
    size_t slot = (size_t)((step - 1) % GSHMEMI_SIMPLE_SLOTS);
    return t.simple + (((slot * gshmemi_simple_nslices<ROUTED>(t) + slice) * t.size + from) * gshmemi_simple_chunk<ROUTED>(t));
}

/* Writes `step` into this PE's word of `words` ([slice][member], symmetric) on every other
 * member: a data flag (a release: the chunk's stores come first) or a credit (relaxed). To a
 * member reached through the proxy a flag went with its data (send) and a credit is a p. */
template <bool ROUTED>
GSHMEMI_DEV void gshmemi_simple_tell(const gshmemi_team_dev_t &t, uint64_t *words, int slice, uint64_t step, bool release,
                                     unsigned tid, unsigned nt)
{
    const int n = t.size, me = t.my_idx;
    for (int i = 1 + (int)tid; i < n; i += (int)nt) {
        uint64_t *sym = words + (size_t)slice * n + me;
        const int pe = gshmemi_team_pe(t, (me + i) % n);
        uint64_t *w = (uint64_t *)gshmemi_peer_ptr_raw(sym, pe);
        if (ROUTED && !w) {
            if (!release) gshmemi_remote_p(sym, step, sizeof(uint64_t), pe, "SIMPLE collective (credit)");
        } else if (release) gshmemi_st_release_u64(w, step);
        else gshmemi_st_relaxed_u64(w, step);
    }
}

/* One step of a slice: its chunk at byte `off` of every block, `len` bytes. ROUTED: some member
 * is reached through the proxy (a team with remote members); false compiles the P2P steps only. */
template <bool ROUTED> struct gshmemi_simple {
    typedef const char *word;
    struct unit {
        size_t sub, len; /* this part's share of the chunk: bytes [sub, sub + len) */
    };
    const gshmemi_team_dev_t &t;
    int slice, scope;
    uint64_t step;
    size_t off, len;
    unsigned tid, nt;
    int part, nparts; /* ROUTED: this CTA among those of the slice; 0 of 1 otherwise */
    bool stage;       /* ROUTED: the proxy reads the chunk from a copy (an in-place reduction) */

    GSHMEMI_DEVM unit share() const
    {
        if constexpr (!ROUTED) return unit{0, len};
        size_t lo, hi;
        gshmemi_slice_range(len, 16, part, nparts, &lo, &hi);
        return unit{lo, hi - lo};
    }
    /* Parts say they are done with the step (kind 0: stored their share to the P2P members, 1:
     * read the slots); the first part waits until all of them have. True in the first part. */
    GSHMEMI_DEVM bool gather(int kind) const
    {
        if constexpr (ROUTED) {
            if (nparts > 1) {
                uint64_t *w = t.seq + GSHMEMI_SEQ_ROUTED_PARTS +
                              ((size_t)kind * GSHMEMI_SIMPLE_ROUTED_SLICES + slice) * GSHMEMI_ROUTED_PARTS_MAX;
                if (part != 0) {
                    if (tid == 0) gshmemi_st_release_u64(w + part, step); /* the group met before it */
                    return false;
                }
                for (int p = 1 + (int)tid; p < nparts; p += (int)nt) {
                    uint64_t start = 0;
                    uint32_t spins = 0;
                    while (gshmemi_ld_acquire_u64(w + p) < step)
                        if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("SIMPLE collective (a part of this PE)", w + p, -1);
                }
                gshmemi_scope_sync(scope);
            }
        }
        return true;
    }

    /* Wait until every receiver has freed the slot, put the chunk, flag it. */
    template <typename Src> GSHMEMI_DEVM void send(Src chunk_for) const
    {
        const int n = t.size, me = t.my_idx;
        if (step > GSHMEMI_SIMPLE_SLOTS)
            for (int i = 1 + (int)tid; i < n; i += (int)nt) {
                int to = (me + i) % n;
                uint64_t *f = t.simple_credit + (size_t)slice * n + to, start = 0;
                uint32_t spins = 0;
                while (gshmemi_ld_acquire_u64(f) < step - GSHMEMI_SIMPLE_SLOTS)
                    if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("SIMPLE collective (credit)", f, gshmemi_team_pe(t, to));
            }
        gshmemi_scope_sync(scope);
        const unit u = share();
        char *const slot = gshmemi_simple_slot<ROUTED>(t, step, slice, me);
        /* In place, the proxy would read the chunk after this PE has stored the step's result over
         * it: it reads a copy in this PE's own slot of the step (nobody sends there), free again
         * once every member has credited the step, as every slot is. */
        if (ROUTED && stage) gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(slot + u.sub, chunk_for(me) + u.sub, u.len, tid, nt);
        auto post = [&](int i) { /* one request carries the chunk and, after it, the flag */
            gshmemi_remote_put_signal(slot, ROUTED && stage ? slot : chunk_for((me + i) % n), len,
                                      t.simple_flags + (size_t)slice * n + me, step, SHMEM_SIGNAL_SET,
                                      gshmemi_team_pe(t, (me + i) % n), 0, "SIMPLE collective");
        };
        for (int i = 1; i < n; i++) {
            char *d = (char *)gshmemi_peer_ptr_raw(slot, gshmemi_team_pe(t, (me + i) % n));
            if (!ROUTED || d) gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(d + u.sub, chunk_for((me + i) % n) + u.sub, u.len, tid, nt);
            else if (!stage && part == 0 && tid == (unsigned)i % nt) post(i);
        }
        gshmemi_scope_sync(scope);
        if (gather(0)) { /* every part's stores are done, the copy's too */
            if (ROUTED && stage)
                for (int i = 1; i < n; i++)
                    if (tid == (unsigned)i % nt && !gshmemi_peer_ptr_raw(slot, gshmemi_team_pe(t, (me + i) % n))) post(i);
            gshmemi_simple_tell<ROUTED>(t, t.simple_flags, slice, step, true, tid, nt);
        }
    }
    /* Wait for the senders' flags (only the root's for a broadcast), reduce or copy out of the
     * slots, credit every member (all of them, so credits advance alike whoever sent: a
     * broadcast's root waits on them too). */
    template <typename Body> GSHMEMI_DEVM void recv(int root, Body body) const
    {
        const int n = t.size, me = t.my_idx;
        for (int i = (int)tid; i < n; i += (int)nt) {
            if (i == me || (root >= 0 && i != root)) continue;
            uint64_t *f = t.simple_flags + (size_t)slice * n + i, start = 0;
            uint32_t spins = 0;
            while (gshmemi_ld_acquire_u64(f) < step)
                if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("SIMPLE collective", f, gshmemi_team_pe(t, i));
        }
        gshmemi_scope_sync(scope);
        body(share());
        /* the slots' loads have returned (their values are stored) once the group has met: a
         * relaxed credit is enough */
        gshmemi_scope_sync(scope);
        if (gather(1)) gshmemi_simple_tell<ROUTED>(t, t.simple_credit, slice, step, false, tid, nt);
    }
    GSHMEMI_DEVM word own(const unit &u, const char *p) const { return p + u.sub; }
    GSHMEMI_DEVM word from(const unit &u, int i) const { return gshmemi_simple_slot<ROUTED>(t, step, slice, i) + u.sub; }
    GSHMEMI_DEVM void out(const unit &u, char *p, word w) const { gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(p + u.sub, w, u.len, tid, nt); }
    template <int OP, typename T, typename Get> GSHMEMI_DEVM void reduce(const unit &u, int n, Get get, char *p) const
    {
        gshmemi_reduce_loop<OP, T>(n, get, 1, [=](int) { return p + u.sub; }, u.len, tid, nt);
    }
    /* the routed path's: the operator read at run time, the loads as the P2P path's (a routed
     * chunk is large: this loop, not the proxy, would otherwise set the pace) */
    template <typename T, typename Get> GSHMEMI_DEVM void reduce_dyn(const unit &u, int op, int n, Get get, char *p) const
    {
        gshmemi_reduce_vec<T>([op](int4 x, int4 y) { return gshmemi_redop_word_dyn<T>(op, x, y); },
                              [op](T x, T y) { return gshmemi_redop_dyn<T>(op, x, y); }, n, get, 1,
                              [=](int) { return p + u.sub; }, u.len, tid, nt);
    }
};

/* Every chunk of this slice ([slice + j * nslices] * chunk), sends one step ahead of receives.
 * nslices is at most gshmemi_simple_nslices<ROUTED>; part of nparts: this CTA among the slice's
 * (ROUTED only). The first part moves the slice's step count on, after every part has read it
 * (they have all received the last step).
 * ROUTED: the proxy copies a step's chunk after the step is posted, and once the call returns
 * its source may be overwritten (the next on-stream call's input, say). A member credits a step
 * only after reading the chunk, which its flag says is all there, so the first part returns once
 * every member has credited the last step: the requests are complete without a proxy quiet (a
 * round trip more), and the credits that pace the next call have arrived. */
template <bool ROUTED, typename Algo>
GSHMEMI_DEV void gshmemi_simple_slice(const gshmemi_team_dev_t &t, size_t blk, int slice, int nslices, unsigned tid,
                                      unsigned nt, int scope, const Algo &algo, int part = 0, int nparts = 1)
{
    const size_t chunk = gshmemi_simple_chunk<ROUTED>(t);
    const size_t stride = (size_t)nslices * chunk;
    const size_t first = (size_t)slice * chunk;
    const uint64_t steps = first < blk ? (blk - first + stride - 1) / stride : 0;
    const uint64_t base = *(volatile uint64_t *)(t.simple_steps + slice);
    auto step = [&](uint64_t s, uint64_t j) { /* step number s carries chunk j */
        const size_t off = first + j * stride;
        return gshmemi_simple<ROUTED>{t, slice, scope, s, off, blk - off < chunk ? blk - off : chunk, tid, nt, part, nparts,
                                      ROUTED && algo.in_place()};
    };
    for (uint64_t j = 0; j <= steps; j++) {
        if (j < steps) algo.send(step(base + j + 1, j));
        if (j > 0) algo.recv(step(base + j, j - 1));
    }
    gshmemi_scope_sync(scope);
    if (tid == 0 && part == 0) *(volatile uint64_t *)(t.simple_steps + slice) = base + steps;
    if (ROUTED && part == 0 && steps > 0) {
        const int n = t.size, me = t.my_idx;
        for (int i = 1 + (int)tid; i < n; i += (int)nt) {
            const int to = (me + i) % n;
            uint64_t *f = t.simple_credit + (size_t)slice * n + to, start = 0;
            uint32_t spins = 0;
            while (gshmemi_ld_acquire_u64(f) < base + steps)
                if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("SIMPLE collective (last credit)", f, gshmemi_team_pe(t, to));
        }
    }
    gshmemi_scope_sync(scope);
}

#endif
