/* LL128: a 128-byte line is stored by 8 lanes of one warp, 16 bytes each, in one instruction;
 * over NVLink the line travels as one write, so a reader whose (equally warp-wide) load sees the
 * flag in the last 8 bytes sees the 120 data bytes with it. Lane g of a line's group holds data
 * bytes [16g, 16g + 16), the last lane 8 data bytes and the flag (the step's sequence number).
 * Needs whole warps (a thread alone cannot store a line at once): thread-scope calls use LL.
 * The primitives are LL's (proto_ll.cuh); a unit is one lane's part of a line. */
#ifndef GSHMEM_DEVICE_COLL_PROTO_LL128_CUH
#define GSHMEM_DEVICE_COLL_PROTO_LL128_CUH

#include "proto_ll.cuh"

#define GSHMEMI_LL128_LINES (GSHMEMI_LL128_SLICE_BYTES / 128)

GSHMEMI_DEV char *gshmemi_ll128_buf(const gshmemi_team_dev_t &t, uint64_t q, int slice, int from)
{
    return t.ll128 + ((((size_t)(q & 1) * t.ll128_slices + slice) * t.size + from) * GSHMEMI_LL128_SLICE_BYTES);
}

/* This lane's part of a line: its 16 bytes in the buffer, its data bytes in the chunk. */
struct gshmemi_ll128_lane {
    size_t line_off; /* in the buffer */
    size_t data_off; /* in the chunk */
    unsigned nb;     /* data bytes this lane carries (0..16; the flag lane at most 8) */
    bool active;     /* the line holds data: all 8 of its lanes store and load it */
    bool flag_lane;
};
GSHMEMI_DEV gshmemi_ll128_lane gshmemi_ll128_lane_of(size_t line, unsigned g, size_t len)
{
    gshmemi_ll128_lane l;
    l.line_off = line * 128 + 16 * g;
    l.data_off = line * 120 + 16 * g;
    l.active = line * 120 < len;
    l.flag_lane = g == 7;
    size_t room = l.data_off < len ? len - l.data_off : 0;
    unsigned cap = l.flag_lane ? 8 : 16;
    l.nb = room < cap ? (unsigned)room : cap;
    return l;
}
/* The lane's two words from a chunk at p (bytes past the chunk's end read as 0). */
GSHMEMI_DEV void gshmemi_ll128_gather(const gshmemi_ll128_lane &l, const char *p, uint64_t &lo, uint64_t &hi)
{
    lo = gshmemi_load8(p + l.data_off, l.nb < 8 ? l.nb : 8);
    hi = l.nb > 8 ? gshmemi_load8(p + l.data_off + 8, l.nb - 8) : 0;
}
GSHMEMI_DEV void gshmemi_ll128_scatter(const gshmemi_ll128_lane &l, char *p, uint64_t lo, uint64_t hi)
{
    if (l.nb == 16 && ((uintptr_t)(p + l.data_off) & 15) == 0) {
        *(int4 *)(p + l.data_off) = make_int4((int)lo, (int)(lo >> 32), (int)hi, (int)(hi >> 32));
        return;
    }
    gshmemi_store8(p + l.data_off, lo, l.nb < 8 ? l.nb : 8);
    if (l.nb > 8) gshmemi_store8(p + l.data_off + 8, hi, l.nb - 8);
}
GSHMEMI_DEV void gshmemi_ll128_put(const gshmemi_ll128_lane &l, char *buf, uint64_t lo, uint64_t hi, uint64_t flag)
{
    if (l.active)
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(buf + l.line_off), "l"(lo), "l"(l.flag_lane ? flag : hi)
                     : "memory");
}
/* Warp-collective: every lane of the warp calls it; returns when all active lines of the warp's
 * load carry the flag. */
GSHMEMI_DEV void gshmemi_ll128_get(const gshmemi_ll128_lane &l, const char *buf, uint64_t flag, int from_pe, uint64_t &lo,
                                   uint64_t &hi)
{
    uint64_t start = 0;
    uint32_t spins = 0;
    for (;;) {
        if (l.active)
            asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(buf + l.line_off) : "memory");
        if (__all_sync(0xffffffffu, !l.active || !l.flag_lane || hi == flag)) return;
        gshmemi_wait_check(&start, &spins, "LL128 collective", buf + l.line_off, from_pe);
    }
}

/* One LL128 step of a slice, shaped like LL's: every lane sends its part of every line to every
 * receiver first, then receives, so the whole step is one flight. The lane that sends a line's
 * bytes is the one that receives and writes them (in-place reduce is safe). The loop bounds are
 * warp-uniform: every lane of a warp takes the same trips. */
struct gshmemi_ll128 {
    struct word {
        uint64_t lo, hi;
    };
    typedef gshmemi_ll128_lane unit;
    const gshmemi_team_dev_t &t;
    int slice, scope;
    size_t off, len, nlines;
    unsigned tid, nt, g, first, step;
    uint64_t q;

    GSHMEMI_DEVM gshmemi_ll128(const gshmemi_team_dev_t &t_, int slice_, size_t off_, size_t len_, unsigned tid_,
                               unsigned nt_, int scope_)
        : t(t_), slice(slice_), scope(scope_), off(off_), len(len_), nlines((len_ + 119) / 120), tid(tid_), nt(nt_),
          g(tid_ & 7), first((tid_ >> 5) * 4 + ((tid_ & 31) >> 3)), step((nt_ >> 5) * 4),
          q(gshmemi_team_next_seq(t_, slice_, tid_, scope_))
    {
    }
    template <typename Src> GSHMEMI_DEVM void send(Src chunk_for) const
    {
        for (size_t base = first & ~3u; base < nlines; base += step) {
            gshmemi_ll128_lane l = gshmemi_ll128_lane_of(base + (first & 3), g, len);
            for (int i = 1; i < t.size; i++) {
                int to = (t.my_idx + i) % t.size;
                uint64_t lo, hi;
                gshmemi_ll128_gather(l, chunk_for(to), lo, hi);
                gshmemi_ll128_put(l, (char *)gshmemi_peer_ptr_raw(gshmemi_ll128_buf(t, q, slice, t.my_idx), gshmemi_team_pe(t, to)),
                                  lo, hi, q);
            }
        }
    }
    template <typename Body> GSHMEMI_DEVM void recv(int root, Body body) const
    {
        for (size_t base = first & ~3u; base < nlines; base += step) body(gshmemi_ll128_lane_of(base + (first & 3), g, len));
        gshmemi_scope_sync(scope);
        if (root >= 0) gshmemi_bcast_ack(t, root, slice, q, tid, nt, scope);
    }
    GSHMEMI_DEVM word own(const unit &l, const char *p) const
    {
        word w;
        gshmemi_ll128_gather(l, p, w.lo, w.hi);
        return w;
    }
    GSHMEMI_DEVM word from(const unit &l, int i) const
    {
        word w;
        gshmemi_ll128_get(l, gshmemi_ll128_buf(t, q, slice, i), q, gshmemi_team_pe(t, i), w.lo, w.hi);
        return w;
    }
    GSHMEMI_DEVM void out(const unit &l, char *p, word w) const
    {
        if (l.active) gshmemi_ll128_scatter(l, p, w.lo, w.hi);
    }
    template <int OP, typename T, typename Get> GSHMEMI_DEVM void reduce(const unit &l, int n, Get get, char *p) const
    {
        uint64_t alo = 0, ahi = 0;
        for (int i = 0; i < n; i++) {
            word v = get(i);
            alo = i == 0 ? v.lo : gshmemi_redop_word<OP, T>(alo, v.lo);
            ahi = i == 0 ? v.hi : gshmemi_redop_word<OP, T>(ahi, v.hi);
        }
        out(l, p, word{alo, ahi});
    }
};

/* The steps of a slice: chunks of one LL128 buffer, dealt round-robin to the slices. */
template <typename Algo>
GSHMEMI_DEV void gshmemi_ll128_slice(const gshmemi_team_dev_t &t, size_t blk, int slice, int nslices, unsigned tid,
                                     unsigned nt, int scope, const Algo &algo)
{
    for (size_t off = (size_t)slice * GSHMEMI_LL128_SLICE_DATA; off < blk; off += (size_t)nslices * GSHMEMI_LL128_SLICE_DATA) {
        size_t len = blk - off < GSHMEMI_LL128_SLICE_DATA ? blk - off : GSHMEMI_LL128_SLICE_DATA;
        algo.step(gshmemi_ll128(t, slice, off, len, tid, nt, scope));
    }
}

#endif
