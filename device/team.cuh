/* Teams on the device: lookup, member numbering, sequence counters and the dissemination sync
 * every collective is built on. */
#ifndef GSHMEM_DEVICE_TEAM_CUH
#define GSHMEM_DEVICE_TEAM_CUH

#include <stdio.h>

#include "sync.cuh"

/* The team's descriptor, by value (WORLD comes from constant memory). A bad handle is reported
 * and traps: a collective on a garbage team would hang or corrupt pSync. */
GSHMEMI_DEV gshmemi_team_dev_t gshmemi_team_get(shmem_team_t team, const char *routine)
{
    if (team == SHMEM_TEAM_WORLD) return gshmemi_dstate.world;
    if (team < 0 || team >= gshmemi_dstate.max_teams || gshmemi_dstate.teams[team].size == 0) {
        printf("gshmem: PE %d: %s: invalid team handle %d\n", gshmemi_dstate.my_pe, routine, team);
        __trap();
    }
    return gshmemi_dstate.teams[team];
}

GSHMEMI_DEV int gshmemi_team_pe(const gshmemi_team_dev_t &t, int idx) { return t.start + idx * t.stride; }

/* The next sequence number of a slice: every collective step takes a fresh one, so flags only
 * grow and never need resetting. The low 32 bits (the LL flag) are never 0, which is what an
 * untouched LL line holds. All threads of the group call this; one writes the counter back. */
GSHMEMI_DEV uint64_t gshmemi_team_next_seq(const gshmemi_team_dev_t &t, int slice, unsigned tid, int scope)
{
    uint64_t q = *(volatile uint64_t *)(t.seq + slice) + 1;
    if ((uint32_t)q == 0) q++;
    gshmemi_scope_sync(scope);
    if (tid == 0) *(volatile uint64_t *)(t.seq + slice) = q;
    return q;
}

/* Dissemination sync of one slice with radix k: in the round of distance d, member r signals
 * r + j*d and waits for r - j*d, j = 1..k-1. Each (round, j) has its own flag word, written by
 * exactly one member, which adds 1 to it per sync: a flag reaching q means that member passed
 * that round of this slice's q-th sync. The signal carries no count, so the count (t.seq, sync
 * half) is read while the signal flies, not before its release. Over NVLink a
 * release waits for the previous signal's acknowledgement, so a barrier takes about one round
 * trip.
 * The group's threads share the j's of a round. `ordered`: the signals are releases and the
 * waits acquires at system scope (a barrier); without, both are relaxed (about 0.6 us less on
 * NVLink), for syncs that only need to know the others arrived.
 *
 * barrier = quiet + sync, and over P2P the sync already is the quiet: the release orders every
 * store that happens before it ahead of the flag, the group's other threads' stores included
 * since the group met at the scope sync first (causality is transitive: bar.sync, then the
 * release). Only the signalling lanes pay for the fence; a fence in every thread of a
 * 512-thread CTA costs far more.
 * ROUTED = false: every member is a P2P peer (the collectives of such a team): the code of the
 * remote members (a quiet of the proxy first, flags through it) is not compiled in, so the P2P
 * collectives keep their registers. */
template <bool ROUTED = true>
GSHMEMI_DEV void gshmemi_team_barrier_slice(const gshmemi_team_dev_t &t, int slice, unsigned tid, unsigned nt, int scope,
                                            bool ordered = true)
{
    const int n = t.size, r = t.my_idx, k = t.radix;
    uint64_t *flags = t.barrier + (size_t)slice * GSHMEMI_BARRIER_WORDS;
    uint64_t *count = t.seq + GSHMEMI_COLL_SLICES + slice, q = 0;
    int word = 0;

    gshmemi_scope_sync(scope);
    /* what went through the proxy is not covered by the release below: complete it first */
    if (ROUTED && ordered && gshmemi_proxy_on()) {
        if (tid == 0) gshmemi_remote_quiet("team barrier");
        gshmemi_scope_sync(scope);
    }
    for (int dist = 1; dist < n; dist *= k) {
        int nj = dist == 1 ? n - 1 : (n - 1) / dist;
        if (nj > k - 1) nj = k - 1;
        /* an ordered signal to a P2P member is a release: one fence before the first, then
         * relaxed increments, so a thread that signals several members (a thread-scope barrier of
         * more than 2) does not wait for each signal's acknowledgement before the next */
        bool fenced = !ordered;
        for (int j = 1 + (int)tid; j <= nj; j += (int)nt) {
            /* (r + j * dist) % n without a division on the one-round path */
            int to = r + j * dist < n ? r + j * dist : (r + j * dist) % n;
            uint64_t *f = (uint64_t *)gshmemi_peer_ptr_raw(flags + word + j - 1, gshmemi_team_pe(t, to));
            /* remote: this PE is the word's only writer and the count is the same on every
             * member, so the increment is a store of the new count (no atomic at the target) */
            if (ROUTED && !f) {
                gshmemi_remote_p(flags + word + j - 1, *(volatile uint64_t *)count + 1, sizeof(uint64_t), gshmemi_team_pe(t, to), "team sync");
                continue;
            }
            if (!fenced) gshmemi_fence_release_sys(), fenced = true;
            gshmemi_red_relaxed_inc_u64(f);
        }
        /* read after the first signal, whose release would otherwise wait for the load */
        if (dist == 1) q = *(volatile uint64_t *)count + 1;
        for (int j = 1 + (int)tid; j <= nj; j += (int)nt) {
            uint64_t *f = flags + word + j - 1, start = 0;
            uint32_t spins = 0;
            while ((ordered ? gshmemi_ld_acquire_u64(f) : gshmemi_ld_relaxed_u64(f)) < q)
                if (gshmemi_wait_expired(&start, &spins))
                    gshmemi_wait_report("team sync", f, gshmemi_team_pe(t, (r - j * dist % n + n) % n));
        }
        word += nj;
        gshmemi_scope_sync(scope);
    }
    /* every thread read the count before the group met above (a team of one: q stays 0, as the
     * count does) */
    if (tid == 0) *(volatile uint64_t *)count = q;
    gshmemi_scope_sync(scope); /* the next sync's read must see it */
}

GSHMEMI_DEV void gshmemi_team_barrier_scope(shmem_team_t team, int scope, const char *routine)
{
    gshmemi_team_dev_t t = gshmemi_team_get(team, routine);
    if (t.my_idx < 0) {
        printf("gshmem: PE %d: %s: this PE is not a member of team %d\n", gshmemi_dstate.my_pe, routine, team);
        __trap();
    }
    gshmemi_scope_sync(scope);
    gshmemi_team_barrier_slice(t, 0, gshmemi_scope_tid(scope), gshmemi_scope_size(scope), scope);
}

#endif
