/* The collectives over DIRECT (proto_direct.cuh), one slice each:
 * - broadcast: every member pulls the root's source, or, large on 3 or more members, the root
 *   stores a piece into each member, which stores it into the others (gshmemi_bcast_relay, policy.h);
 * - fcollect, alltoall: pull every member's block, or from GSHMEM_COLL_PUSH_MIN push this PE's
 *   blocks into the members' dests (gshmemi_direct_push, policy.h);
 * - alltoalls, collect: pulls (strided; counts published in the collect word);
 * - reducescatter: reduce this PE's block over every member's source;
 * - reduce: one-shot (every PE reduces the whole block), two-shot (each PE reduces its part and
 *   stores it into every member's dest), or, on 2 PEs in a kernel of its own, push (store the
 *   peer's half first, then reduce one's own) -- gshmemi_reduce_oneshot, gshmemi_direct_push. */
#ifndef GSHMEM_DEVICE_COLL_ALGO_DIRECT_CUH
#define GSHMEM_DEVICE_COLL_ALGO_DIRECT_CUH

#include "proto_direct.cuh"

/* A 2-PE reduction by stores (gshmemi_direct_push, policy.h): store the half the
 * peer reduces into the peer's dest; once this slice's pair has met, reduce this PE's half from
 * its source and its dest, and store the result here and into the peer's dest. One sync more
 * than one-shot, so it pays only for large blocks. */
template <int OP, typename T>
GSHMEMI_DEV void gshmemi_push_reduce(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                     unsigned tid, unsigned nt, int scope)
{
    const int me = t.my_idx, peer = gshmemi_team_pe(t, 1 - me);
    const size_t blk = a.nelems * a.es;
    size_t plo, phi, lo, hi;
    gshmemi_slice_range(blk, 16, 1 - me, 2, &plo, &phi);
    gshmemi_slice_range(phi - plo, 16, slice, nslices, &lo, &hi);
    gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>((char *)gshmemi_peer_ptr_raw(a.dest, peer) + plo + lo, (const char *)a.src + plo + lo, hi - lo, tid, nt);
    gshmemi_scope_sync(scope);
    gshmemi_team_barrier_slice<false>(t, slice, tid, nt, scope, true);
    gshmemi_slice_range(blk, 16, me, 2, &plo, &phi);
    gshmemi_slice_range(phi - plo, 16, slice, nslices, &lo, &hi);
    const char *mine = (const char *)a.src + plo + lo;
    char *here = (char *)a.dest + plo + lo, *there = (char *)gshmemi_peer_ptr_raw(here, peer);
    gshmemi_reduce_loop<OP, T>(
        2, [=](int m) { return m == me ? mine : (const char *)here; }, 2, [=](int k) { return k ? there : here; }, hi - lo,
        tid, nt);
}

/* A relayed broadcast (gshmemi_bcast_relay): the slice's range is cut into one piece per member
 * other than the root. The root stores each member's piece into that member's dest a chunk at a
 * time, and after each chunk of every piece tells each member how far its piece has come, in the
 * member's relay word (a release; the value carries the slice's sync count, so it only grows from
 * call to call, whichever member is the root). A member stores each chunk of its piece, once its
 * word says it is there, into every other member's dest. Stores only (NVLink carries them faster
 * than loads when both directions are busy); the root's links carry the block once, a member's
 * its piece once for each other member; the exit sync releases the members' stores. */
GSHMEMI_DEV void gshmemi_bcast_relay_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                           unsigned tid, unsigned nt, int scope)
{
    const int n = t.size, me = t.my_idx, root = a.root;
    size_t lo, hi;
    gshmemi_slice_range(a.nelems * a.es, 16, slice, nslices, &lo, &hi);
    char *dst = (char *)a.dest + lo;
    uint64_t *word = t.barrier + (size_t)slice * GSHMEMI_BARRIER_WORDS + GSHMEMI_BARRIER_RELAY_WORD;
    /* the entry sync's count, the same on every member */
    const uint64_t epoch = *(volatile uint64_t *)(t.seq + GSHMEMI_COLL_SLICES + slice) << 24;
    const int pieces = n - 1;
    const size_t len = hi - lo, chunk = GSHMEMI_BCAST_RELAY_CHUNK;
    auto part = [&](int piece, size_t k, size_t *b, size_t *e) { /* chunk k of a piece: [*b, *e) */
        size_t plo, phi;
        gshmemi_slice_range(len, 16, piece, pieces, &plo, &phi);
        *b = plo + k * chunk < phi ? plo + k * chunk : phi;
        *e = *b + chunk < phi ? *b + chunk : phi;
    };
    auto member_pe = [&](int piece) { return gshmemi_team_pe(t, (root + 1 + piece) % n); }; /* piece i is member root + 1 + i's */
    size_t b0, e0;
    gshmemi_slice_range(len, 16, 0, pieces, &b0, &e0); /* the first piece is the largest: its chunks are the steps */
    const size_t steps = (e0 - b0 + chunk - 1) / chunk;
    if (me == root) {
        const char *src = (const char *)a.src + lo;
        for (size_t k = 0; k < steps; k++) {
            for (int piece = 0; piece < pieces; piece++) {
                size_t b, e;
                part(piece, k, &b, &e);
                gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>((char *)gshmemi_peer_ptr_raw(a.dest, member_pe(piece)) + lo + b, src + b, e - b, tid, nt);
            }
            gshmemi_scope_sync(scope);
            if (tid < (unsigned)pieces) { /* one thread a member: the group's stores, then the word */
                gshmemi_fence_release_sys();
                gshmemi_st_relaxed_u64(gshmemi_peer_ptr_raw(word, member_pe((int)tid)), epoch | (k + 1));
            }
        }
        if (a.src != a.dest) gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(dst, src, len, tid, nt);
        return;
    }
    const int mine = (me - root - 1 + n) % n;
    for (size_t k = 0; k < steps; k++) {
        size_t b, e;
        part(mine, k, &b, &e);
        if (b == e) break; /* this piece has fewer chunks than the first */
        if (tid == 0) {
            uint64_t start = 0;
            uint32_t spins = 0;
            while (gshmemi_ld_acquire_u64(word) < (epoch | (k + 1)))
                if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("broadcast relay", word, gshmemi_team_pe(t, root));
        }
        gshmemi_scope_sync(scope);
        for (int i = 1; i < pieces; i++)
            gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>((char *)gshmemi_peer_ptr_raw(a.dest, member_pe((mine + i) % pieces)) + lo + b, dst + b,
                                                   e - b, tid, nt);
    }
}

/* One slice's data movement. OWN_KERNEL: the on-stream kernel; push: gshmemi_direct_push. */
template <int OP, typename T, bool OWN_KERNEL>
GSHMEMI_DEV void gshmemi_direct_body(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                     unsigned tid, unsigned nt, int scope, bool push)
{
    const int n = t.size, me = t.my_idx;
    const size_t blk = a.nelems * a.es;
    const char *src = (const char *)a.src;
    char *dst = (char *)a.dest;
    size_t lo, hi;

    if constexpr (OP != GSHMEMI_OP_NONE) {
        if (a.kind == GSHMEMI_COLL_REDUCESCATTER) {
            gshmemi_slice_range(blk, 16, slice, nslices, &lo, &hi);
            gshmemi_direct_reduce<OP, T>(t, dst + lo, src + (size_t)me * blk + lo, hi - lo, 0, tid, nt);
            return;
        }
        if constexpr (OWN_KERNEL) {
            if (push) {
                gshmemi_push_reduce<OP, T>(t, a, slice, nslices, tid, nt, scope);
                return;
            }
        }
        if (gshmemi_reduce_oneshot(&gshmemi_dstate, t.size, &a)) {
            gshmemi_slice_range(blk, 16, slice, nslices, &lo, &hi);
            gshmemi_direct_reduce<OP, T>(t, dst + lo, src + lo, hi - lo, 0, tid, nt);
            return;
        }
        /* two-shot: this PE reduces its part and pushes it to every member */
        size_t plo, phi;
        gshmemi_slice_range(blk, 16, me, n, &plo, &phi);
        gshmemi_slice_range(phi - plo, 16, slice, nslices, &lo, &hi);
        gshmemi_direct_reduce<OP, T>(t, dst + plo + lo, src + plo + lo, hi - lo, 1, tid, nt);
        return;
    }
    switch (a.kind) {
    case GSHMEMI_COLL_BROADCAST:
        if constexpr (OWN_KERNEL)
            if (gshmemi_bcast_relay(n, &a, 1)) {
                gshmemi_bcast_relay_slice(t, a, slice, nslices, tid, nt, scope);
                break;
            }
        gshmemi_slice_range(blk, 16, slice, nslices, &lo, &hi);
        gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(dst + lo, (const char *)gshmemi_peer_ptr_raw(src, gshmemi_team_pe(t, a.root)) + lo, hi - lo, tid, nt);
        break;
    case GSHMEMI_COLL_FCOLLECT:
    case GSHMEMI_COLL_ALLTOALL: {
        /* Every slice takes its share of every block, the peers' first and its own last: all
         * CTAs pull over NVLink (split by block, the CTAs of the local copy would idle early).
         * An fcollect in place (the library's own, collectives/coll.cu: each member's block
         * already at its place in dest, so the source is not at one address on every member)
         * pulls a member's block from its dest. */
        const bool in_place = a.kind == GSHMEMI_COLL_FCOLLECT && src == dst + (size_t)me * blk;
        gshmemi_slice_range(blk, blk % 16 ? 1 : 16, slice, nslices, &lo, &hi);
        for (int i = 1; i <= n; i++) {
            int m = (me + i) % n, pe = gshmemi_team_pe(t, m);
            size_t at = a.kind == GSHMEMI_COLL_ALLTOALL ? (size_t)(push ? m : me) * blk : 0;
            if (in_place && m == me) continue;
            if (push) gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>((char *)gshmemi_peer_ptr_raw(dst, pe) + (size_t)me * blk + lo, src + at + lo, hi - lo, tid, nt);
            else if (in_place) gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(dst + (size_t)m * blk + lo, (const char *)gshmemi_peer_ptr_raw(dst, pe) + (size_t)m * blk + lo, hi - lo, tid, nt);
            else gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(dst + (size_t)m * blk + lo, (const char *)gshmemi_peer_ptr_raw(src, pe) + at + lo, hi - lo, tid, nt);
        }
        break;
    }
    case GSHMEMI_COLL_ALLTOALLS:
        gshmemi_slice_range(a.nelems, 1, slice, nslices, &lo, &hi);
        for (int i = 0; i < n; i++) {
            int m = (me + i) % n;
            const char *s = (const char *)gshmemi_peer_ptr_raw(src, gshmemi_team_pe(t, m)) +
                            (ptrdiff_t)me * (ptrdiff_t)a.nelems * a.sst * (ptrdiff_t)a.es;
            gshmemi_strided_copy(dst + ((ptrdiff_t)m * (ptrdiff_t)a.nelems + (ptrdiff_t)lo) * a.dst * (ptrdiff_t)a.es,
                                 s + (ptrdiff_t)lo * a.sst * (ptrdiff_t)a.es, a.dst, a.sst, hi - lo, a.es, tid, nt);
        }
        break;
    case GSHMEMI_COLL_COLLECT: {
        /* every member published its count in its own collect word before the sync */
        size_t at = 0;
        for (int m = 0; m < n; m++) {
            size_t cnt = (size_t)gshmemi_ld_acquire_u64(gshmemi_peer_ptr_raw(gshmemi_collect_word(t), gshmemi_team_pe(t, m))) * a.es;
            gshmemi_slice_range(cnt, 16, slice, nslices, &lo, &hi);
            gshmemi_copy<GSHMEMI_COPY_UNROLL_COLL>(dst + at + lo, (const char *)gshmemi_peer_ptr_raw(src, gshmemi_team_pe(t, m)) + lo, hi - lo, tid, nt);
            at += cnt;
        }
        break;
    }
    }
}

/* One slice by DIRECT. Entry: in a kernel of its own the sources were written by earlier kernels,
 * complete and visible already, so the sync need not order; called from a user's kernel it must.
 * Exit: ordered only where this PE stored to the others (pushes, two-shot); pulls store locally,
 * and a pull's loads have returned (their values are stored) before the group meets to signal. */
template <int OP, typename T, bool OWN_KERNEL>
GSHMEMI_DEV void gshmemi_direct_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                      unsigned tid, unsigned nt, int scope)
{
    if (a.kind == GSHMEMI_COLL_COLLECT && tid == 0) *(volatile uint64_t *)gshmemi_collect_word(t) = a.nelems;
    const bool push = gshmemi_direct_push(&gshmemi_dstate, t.size, &a, OWN_KERNEL) != 0;
    const bool pushes = push || gshmemi_bcast_relay(t.size, &a, OWN_KERNEL) ||
                        (OP != GSHMEMI_OP_NONE && a.kind == GSHMEMI_COLL_REDUCE && !gshmemi_reduce_oneshot(&gshmemi_dstate, t.size, &a));
    /* collect's count word is written just above: its signal must carry it */
    gshmemi_team_barrier_slice<false>(t, slice, tid, nt, scope, !OWN_KERNEL || a.kind == GSHMEMI_COLL_COLLECT);
    gshmemi_direct_body<OP, T, OWN_KERNEL>(t, a, slice, nslices, tid, nt, scope, push);
    gshmemi_scope_sync(scope);
    gshmemi_team_barrier_slice<false>(t, slice, tid, nt, scope, pushes);
}

#endif
