/* Collectives over the mapped heaps: one argument block, two protocols, one body.
 *
 * A collective runs as S slices. A device call from a thread, warp or block is one slice; an
 * on-stream or grid call gives each CTA its own slice, with its own pSync barrier words, LL
 * buffers and sequence counter, so the CTAs never wait on each other, only on the same slice of
 * the other members.
 *
 * LL: a 16-byte line carries 8 data bytes and two copies of a 32-bit flag (the step's sequence
 * number) and is written with one 16-byte store, so a reader that sees both flags sees the data.
 * The sender writes straight into the receiver's pSync; there is no barrier at all. Buffers are
 * double-buffered by the parity of the step: a member cannot start step q+2 in a slice before
 * every member finished reading step q there, since step q+1 needs their data.
 *
 * DIRECT: a sync per slice (everyone entered: sources ready, destinations free), loads and stores
 * straight on the peers' symmetric buffers, a barrier per slice (nobody leaves while another
 * member still reads its source or writes its destination). */
#ifndef GSHMEM_DEVICE_COLL_CUH
#define GSHMEM_DEVICE_COLL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "team.cuh"


/* ---- element operators ---- */
/* half and bfloat16 are combined in float and rounded once. */
template <int OP, typename T> GSHMEMI_DEV T gshmemi_redop(T a, T b)
{
    if constexpr (std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value)
        return T(gshmemi_redop<OP, float>((float)a, (float)b));
    else if constexpr (OP == GSHMEMI_OP_AND) return (T)(a & b);
    else if constexpr (OP == GSHMEMI_OP_OR) return (T)(a | b);
    else if constexpr (OP == GSHMEMI_OP_XOR) return (T)(a ^ b);
    else if constexpr (OP == GSHMEMI_OP_MIN) return b < a ? b : a;
    else if constexpr (OP == GSHMEMI_OP_MAX) return b > a ? b : a;
    else if constexpr (OP == GSHMEMI_OP_SUM) return (T)(a + b);
    else return (T)(a * b);
}

/* Element-wise op on W bytes held in a register-sized word. */
template <int OP, typename T, typename W> GSHMEMI_DEV W gshmemi_redop_word(W a, W b)
{
    union { W w; T e[sizeof(W) / sizeof(T)]; } x, y;
    x.w = a;
    y.w = b;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(W) / sizeof(T)); i++) x.e[i] = gshmemi_redop<OP, T>(x.e[i], y.e[i]);
    return x.w;
}

/* ---- unaligned 8-byte access (payload lines of LL) ---- */
GSHMEMI_DEV uint64_t gshmemi_load8(const char *p, unsigned n)
{
    if (n == 8 && ((uintptr_t)p & 7) == 0) return *(const uint64_t *)p;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)(uint8_t)p[i] << (8 * i);
    return v;
}
GSHMEMI_DEV void gshmemi_store8(char *p, uint64_t v, unsigned n)
{
    if (n == 8 && ((uintptr_t)p & 7) == 0) {
        *(uint64_t *)p = v;
        return;
    }
    for (unsigned i = 0; i < n; i++) p[i] = (char)(v >> (8 * i));
}

/* ---- LL lines ---- */
GSHMEMI_DEV void gshmemi_ll_store(void *line, uint64_t v, uint32_t flag)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line), "r"((uint32_t)v), "r"(flag),
                 "r"((uint32_t)(v >> 32)), "r"(flag)
                 : "memory");
}
GSHMEMI_DEV uint64_t gshmemi_ll_load(const void *line, uint32_t flag, int from_pe)
{
    uint32_t a, f0, b, f1;
    uint64_t start = 0;
    uint32_t spins = 0;
    for (;;) {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a), "=r"(f0), "=r"(b), "=r"(f1)
                     : "l"(line)
                     : "memory");
        if (f0 == flag && f1 == flag) return (uint64_t)a | ((uint64_t)b << 32);
        gshmemi_wait_check(&start, &spins, "LL collective", line, from_pe);
    }
}
/* The LL buffer of (parity, slice, source member) in this PE's pSync. */
GSHMEMI_DEV char *gshmemi_ll_buf(const gshmemi_team_dev_t &t, uint64_t q, int slice, int from)
{
    return t.ll + ((((size_t)(q & 1) * t.ll_slices + slice) * t.size + from) * GSHMEMI_LL_SLICE_BYTES);
}

/* Broadcast by LL or SIMPLE: only the root sends and it waits for nobody's data, so it would run
 * ahead and overwrite buffers still being read. Each step ends with every member acknowledging it
 * to the root (a growing word per member), which the root waits for. */
GSHMEMI_DEV void gshmemi_bcast_ack(const gshmemi_team_dev_t &t, int root, int slice, uint64_t q, unsigned tid, unsigned nt,
                                   int scope)
{
    uint64_t *ack = t.ack + (size_t)slice * t.size;
    if (t.my_idx != root && tid == 0) gshmemi_st_release_u64(gshmemi_peer_ptr_raw(ack + t.my_idx, gshmemi_team_pe(t, root)), q);
    if (t.my_idx == root)
        for (int i = (int)tid; i < t.size; i += (int)nt) {
            uint64_t start = 0;
            uint32_t spins = 0;
            if (i != root)
                while (gshmemi_ld_acquire_u64(ack + i) < q)
                    gshmemi_wait_check(&start, &spins, "broadcast acknowledgement", ack + i, gshmemi_team_pe(t, i));
        }
    gshmemi_scope_sync(scope);
}

/* Sends `len` (<= GSHMEMI_LL_SLICE_DATA) bytes at p to member `to`'s buffer for this PE. */
GSHMEMI_DEV void gshmemi_ll_send(const gshmemi_team_dev_t &t, uint64_t q, int slice, int to, const char *p, size_t len,
                                 unsigned tid, unsigned nt)
{
    char *buf = (char *)gshmemi_peer_ptr_raw(gshmemi_ll_buf(t, q, slice, t.my_idx), gshmemi_team_pe(t, to));
    for (size_t l = tid; l * 8 < len; l += nt) {
        unsigned n = len - l * 8 < 8 ? (unsigned)(len - l * 8) : 8;
        gshmemi_ll_store(buf + l * 16, gshmemi_load8(p + l * 8, n), (uint32_t)q);
    }
}

/* One LL step of a slice: `len` payload bytes per member pair, starting at byte `off` of each
 * block. Lines are handled by the same thread in the send and receive halves, which is what makes
 * an in-place reduce safe (a thread overwrites only what it has already sent). */
template <int OP, typename T>
GSHMEMI_DEV void gshmemi_ll_step(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, size_t off, size_t len,
                                 unsigned tid, unsigned nt, int scope)
{
    const int n = t.size, me = t.my_idx;
    const size_t blk = a.nelems * a.es; /* bytes of one block */
    const char *src = (const char *)a.src;
    char *dst = (char *)a.dest;
    uint64_t q = gshmemi_team_next_seq(t, slice, tid, scope);

    /* send */
    switch (OP >= 0 ? -1 : a.kind) {
    case GSHMEMI_COLL_BROADCAST: /* acknowledged at the end of the step (gshmemi_bcast_ack) */
        if (me == a.root)
            for (int i = 1; i < n; i++) gshmemi_ll_send(t, q, slice, (me + i) % n, src + off, len, tid, nt);
        break;
    case GSHMEMI_COLL_FCOLLECT:
        for (int i = 1; i < n; i++) gshmemi_ll_send(t, q, slice, (me + i) % n, src + off, len, tid, nt);
        break;
    case -1: /* reductions */
        for (int i = 1; i < n; i++) {
            int to = (me + i) % n;
            size_t at = a.kind == GSHMEMI_COLL_REDUCESCATTER ? (size_t)to * blk + off : off;
            gshmemi_ll_send(t, q, slice, to, src + at, len, tid, nt);
        }
        break;
    default: /* alltoall: a block per destination */
        for (int i = 1; i < n; i++) {
            int to = (me + i) % n;
            gshmemi_ll_send(t, q, slice, to, src + (size_t)to * blk + off, len, tid, nt);
        }
        break;
    }

    /* receive */
    for (size_t l = tid; l * 8 < len; l += nt) {
        unsigned nb = len - l * 8 < 8 ? (unsigned)(len - l * 8) : 8;
        size_t at = off + l * 8;
        switch (OP >= 0 ? -1 : a.kind) {
        case GSHMEMI_COLL_BROADCAST:
            gshmemi_store8(dst + at, me == a.root ? gshmemi_load8(src + at, nb)
                                                  : gshmemi_ll_load(gshmemi_ll_buf(t, q, slice, a.root) + l * 16, (uint32_t)q,
                                                                    gshmemi_team_pe(t, a.root)),
                           nb);
            break;
        case GSHMEMI_COLL_FCOLLECT:
        case GSHMEMI_COLL_ALLTOALL: {
            const char *own = src + (a.kind == GSHMEMI_COLL_ALLTOALL ? (size_t)me * blk : 0) + at;
            for (int i = 0; i < n; i++)
                gshmemi_store8(dst + (size_t)i * blk + at,
                               i == me ? gshmemi_load8(own, nb)
                                       : gshmemi_ll_load(gshmemi_ll_buf(t, q, slice, i) + l * 16, (uint32_t)q, gshmemi_team_pe(t, i)),
                               nb);
            break;
        }
        case -1: { /* reduce, reducescatter: combine in member order, the same on every PE */
            const char *own = src + (a.kind == GSHMEMI_COLL_REDUCESCATTER ? (size_t)me * blk : 0) + at;
            uint64_t acc = 0;
            if constexpr (OP >= 0) {
                for (int i = 0; i < n; i++) {
                    uint64_t v = i == me ? gshmemi_load8(own, nb)
                                         : gshmemi_ll_load(gshmemi_ll_buf(t, q, slice, i) + l * 16, (uint32_t)q, gshmemi_team_pe(t, i));
                    acc = i == 0 ? v : gshmemi_redop_word<OP, T>(acc, v);
                }
            }
            gshmemi_store8(dst + at, acc, nb);
            break;
        }
        }
    }
    gshmemi_scope_sync(scope);
    if (a.kind == GSHMEMI_COLL_BROADCAST) gshmemi_bcast_ack(t, a.root, slice, q, tid, nt, scope);
}

/* ---- LL128 ---- */
/* A 128-byte line is stored by 8 lanes of one warp, 16 bytes each, in one instruction; over
 * NVLink the line travels as one write, so a reader whose (equally warp-wide) load sees the flag
 * in the last 8 bytes sees the 120 data bytes with it. Lane g of a line's group holds data bytes
 * [16g, 16g + 16), the last lane 8 data bytes and the flag (the step's sequence number). Needs
 * whole warps (a thread alone cannot store a line at once): thread-scope calls use LL. */
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

/* One LL128 step of a slice, shaped like gshmemi_ll_step: every lane sends its part of every
 * line to every receiver first, then receives, so the whole step is one flight. The lane that
 * sends a line's bytes is the one that receives and writes them (in-place reduce is safe). */
template <int OP, typename T>
GSHMEMI_DEV void gshmemi_ll128_step(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, size_t off,
                                    size_t len, unsigned tid, unsigned nt, int scope)
{
    const int n = t.size, me = t.my_idx;
    const size_t blk = a.nelems * a.es, nlines = (len + 119) / 120;
    const int per_dest = a.kind == GSHMEMI_COLL_ALLTOALL || a.kind == GSHMEMI_COLL_REDUCESCATTER;
    const int bcast = a.kind == GSHMEMI_COLL_BROADCAST;
    const char *src = (const char *)a.src;
    char *dst = (char *)a.dest;
    const unsigned g = tid & 7, first = (tid >> 5) * 4 + ((tid & 31) >> 3), step = (nt >> 5) * 4;
    uint64_t q = gshmemi_team_next_seq(t, slice, tid, scope);

    /* the loop bounds are warp-uniform: every lane of a warp takes the same trips */
    if (!bcast || me == a.root)
        for (size_t base = first & ~3u; base < nlines; base += step) {
            gshmemi_ll128_lane l = gshmemi_ll128_lane_of(base + (first & 3), g, len);
            for (int i = 1; i < n; i++) {
                int to = (me + i) % n;
                uint64_t lo, hi;
                gshmemi_ll128_gather(l, src + (per_dest ? (size_t)to * blk : 0) + off, lo, hi);
                gshmemi_ll128_put(l, (char *)gshmemi_peer_ptr_raw(gshmemi_ll128_buf(t, q, slice, me), gshmemi_team_pe(t, to)), lo,
                                  hi, q);
            }
        }
    for (size_t base = first & ~3u; base < nlines; base += step) {
        gshmemi_ll128_lane l = gshmemi_ll128_lane_of(base + (first & 3), g, len);
        const char *own = src + (per_dest ? (size_t)me * blk : 0) + off;
        uint64_t lo, hi;
        if constexpr (OP >= 0) { /* reduce, reducescatter: member order, the same on every PE */
            uint64_t alo = 0, ahi = 0;
            for (int i = 0; i < n; i++) {
                if (i == me) gshmemi_ll128_gather(l, own, lo, hi);
                else gshmemi_ll128_get(l, gshmemi_ll128_buf(t, q, slice, i), q, gshmemi_team_pe(t, i), lo, hi);
                alo = i == 0 ? lo : gshmemi_redop_word<OP, T>(alo, lo);
                ahi = i == 0 ? hi : gshmemi_redop_word<OP, T>(ahi, hi);
            }
            if (l.active) gshmemi_ll128_scatter(l, dst + off, alo, ahi);
        } else if (bcast) {
            if (me == a.root) gshmemi_ll128_gather(l, own, lo, hi);
            else gshmemi_ll128_get(l, gshmemi_ll128_buf(t, q, slice, a.root), q, gshmemi_team_pe(t, a.root), lo, hi);
            if (l.active) gshmemi_ll128_scatter(l, dst + off, lo, hi);
        } else { /* fcollect, alltoall */
            for (int i = 0; i < n; i++) {
                if (i == me) gshmemi_ll128_gather(l, own, lo, hi);
                else gshmemi_ll128_get(l, gshmemi_ll128_buf(t, q, slice, i), q, gshmemi_team_pe(t, i), lo, hi);
                if (l.active) gshmemi_ll128_scatter(l, dst + (size_t)i * blk + off, lo, hi);
            }
        }
    }
    gshmemi_scope_sync(scope);
    if (bcast) gshmemi_bcast_ack(t, a.root, slice, q, tid, nt, scope);
}

/* ---- the reduction loop of DIRECT and SIMPLE ---- */
/* out[0..bytes) = op over members m of in(m)[0..bytes), combined in member order; `outs(k)` for
 * k < nout names where the result goes (this PE only, or every member for a two-shot push).
 * Vectors of 16 bytes when every pointer allows it. */
template <int OP, typename T, typename In, typename Out>
GSHMEMI_DEV void gshmemi_reduce_loop(int n, In in, int nout, Out outs, size_t bytes, unsigned tid, unsigned nt)
{
    uintptr_t align = (uintptr_t)outs(0);
    for (int m = 0; m < n; m++) align |= (uintptr_t)in(m);
    size_t done = 0;
    if ((align & 15) == 0) {
        const size_t nv = bytes / 16;
        /* U vectors per thread per pass, every load of a pass issued before any is used: a pass
         * costs one round trip, so the slice sizes aim at one or two passes. */
        const int U = 4;
        size_t base = tid;
        for (; base + (U - 1) * (size_t)nt < nv; base += U * (size_t)nt) { /* full passes: no guards */
            int4 acc[U];
            const int4 *p0 = (const int4 *)in(0) + base;
#pragma unroll
            for (int u = 0; u < U; u++) acc[u] = gshmemi_ld_cg_v16(p0 + u * nt);
            for (int m = 1; m < n; m++) {
                const int4 *p = (const int4 *)in(m) + base;
                int4 v[U];
#pragma unroll
                for (int u = 0; u < U; u++) v[u] = gshmemi_ld_cg_v16(p + u * nt);
#pragma unroll
                for (int u = 0; u < U; u++) acc[u] = gshmemi_redop_word<OP, T>(acc[u], v[u]);
            }
            for (int k = 0; k < nout; k++) {
                int4 *o = (int4 *)outs(k) + base;
#pragma unroll
                for (int u = 0; u < U; u++) o[u * nt] = acc[u];
            }
        }
        if (base < nv) { /* the last, partial pass: guarded, still every load before any use */
            int4 acc[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (base + u * (size_t)nt < nv) acc[u] = gshmemi_ld_cg_v16((const int4 *)in(0) + base + u * (size_t)nt);
            for (int m = 1; m < n; m++) {
                const int4 *p = (const int4 *)in(m);
                int4 v[U];
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (base + u * (size_t)nt < nv) v[u] = gshmemi_ld_cg_v16(p + base + u * (size_t)nt);
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (base + u * (size_t)nt < nv) acc[u] = gshmemi_redop_word<OP, T>(acc[u], v[u]);
            }
            for (int k = 0; k < nout; k++) {
                int4 *o = (int4 *)outs(k);
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (base + u * (size_t)nt < nv) o[base + u * (size_t)nt] = acc[u];
            }
        }
        done = nv * 16;
    }
    /* tail, or everything when unaligned: one element per thread */
    for (size_t e = done / sizeof(T) + tid; e < bytes / sizeof(T); e += nt) {
        T acc = ((const volatile T *)in(0))[e];
        for (int m = 1; m < n; m++) acc = gshmemi_redop<OP, T>(acc, ((const volatile T *)in(m))[e]);
        for (int k = 0; k < nout; k++) ((T *)outs(k))[e] = acc;
    }
}

/* ---- DIRECT ---- */
/* out = op over members of their `in` (read through the peer mappings); push: the result also
 * goes to every member's `out` (two-shot reduce), else only to this PE's. */
template <int OP, typename T>
GSHMEMI_DEV void gshmemi_direct_reduce(const gshmemi_team_dev_t &t, char *out, const char *in, size_t bytes, int push,
                                       unsigned tid, unsigned nt)
{
    const int n = t.size, me = t.my_idx;
    gshmemi_reduce_loop<OP, T>(
        n, [&](int m) { return (const char *)gshmemi_peer_ptr_raw(in, gshmemi_team_pe(t, m)); }, push ? n : 1,
        [&](int k) { return (char *)gshmemi_peer_ptr_raw(out, gshmemi_team_pe(t, (me + k) % n)); }, bytes, tid, nt);
}

/* ---- SIMPLE ---- */
/* Bulk and pipelined: each step the sender copies a chunk into a slot of the receiver's ring with
 * plain 16-byte stores (NVLink writes, the fastest way across), the group meets, and a release
 * flag says the step is there; the receiver reduces or copies out of its own memory and hands the
 * slot back with a credit. A slice sends step k + 1 before it consumes step k, and a ring of
 * GSHMEMI_SIMPLE_SLOTS slots lets a sender run that many steps ahead of the slowest receiver
 * before it waits for a credit. Steps are counted per slice, SIMPLE only (every member runs the
 * same steps), so flags and credits only grow. Only the world team has the buffers. */
GSHMEMI_DEV char *gshmemi_simple_slot(const gshmemi_team_dev_t &t, uint64_t step, int slice, int from)
{
    size_t slot = (size_t)((step - 1) % GSHMEMI_SIMPLE_SLOTS);
    return t.simple + (((slot * t.simple_slices + slice) * t.size + from) * GSHMEMI_SIMPLE_CHUNK);
}

/* One step's chunk: its byte offset in every block and its length. */
struct gshmemi_simple_chunk {
    size_t off, len;
};

/* Writes `step` into this PE's word of `words` ([slice][member], symmetric) on every other
 * member: a data flag (a release: the chunk's stores come first) or a credit (relaxed). */
GSHMEMI_DEV void gshmemi_simple_tell(const gshmemi_team_dev_t &t, uint64_t *words, int slice, uint64_t step, bool release,
                                     unsigned tid, unsigned nt)
{
    const int n = t.size, me = t.my_idx;
    for (int i = 1 + (int)tid; i < n; i += (int)nt) {
        uint64_t *w = (uint64_t *)gshmemi_peer_ptr_raw(words + (size_t)slice * n + me, gshmemi_team_pe(t, (me + i) % n));
        if (release) gshmemi_st_release_u64(w, step);
        else gshmemi_st_relaxed_u64(w, step);
    }
}

/* Step `step`: wait until every receiver has freed the slot, put the chunk, flag it. */
GSHMEMI_DEV void gshmemi_simple_send(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, uint64_t step,
                                     gshmemi_simple_chunk c, unsigned tid, unsigned nt, int scope)
{
    const int n = t.size, me = t.my_idx;
    const size_t blk = a.nelems * a.es;
    const int per_dest = a.kind == GSHMEMI_COLL_ALLTOALL || a.kind == GSHMEMI_COLL_REDUCESCATTER;
    if (a.kind == GSHMEMI_COLL_BROADCAST && me != a.root) return;
    if (step > GSHMEMI_SIMPLE_SLOTS)
        for (int i = 1 + (int)tid; i < n; i += (int)nt) {
            int to = (me + i) % n;
            uint64_t *f = t.simple_credit + (size_t)slice * n + to, start = 0;
            uint32_t spins = 0;
            while (gshmemi_ld_acquire_u64(f) < step - GSHMEMI_SIMPLE_SLOTS)
                if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("SIMPLE collective (credit)", f, gshmemi_team_pe(t, to));
        }
    gshmemi_scope_sync(scope);
    for (int i = 1; i < n; i++) {
        int to = (me + i) % n;
        gshmemi_copy(gshmemi_peer_ptr_raw(gshmemi_simple_slot(t, step, slice, me), gshmemi_team_pe(t, to)),
                     (const char *)a.src + (per_dest ? (size_t)to * blk : 0) + c.off, c.len, tid, nt);
    }
    gshmemi_scope_sync(scope);
    gshmemi_simple_tell(t, t.simple_flags, slice, step, true, tid, nt);
}

/* Step `step`: wait for the senders' flags, reduce or copy out of the slots, credit every member
 * (all of them, so credits advance alike whoever sent: a broadcast's root waits on them too). */
template <int OP, typename T>
GSHMEMI_DEV void gshmemi_simple_recv(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, uint64_t step,
                                     gshmemi_simple_chunk c, unsigned tid, unsigned nt, int scope)
{
    const int n = t.size, me = t.my_idx;
    const size_t blk = a.nelems * a.es;
    const int per_dest = a.kind == GSHMEMI_COLL_ALLTOALL || a.kind == GSHMEMI_COLL_REDUCESCATTER;
    const int bcast = a.kind == GSHMEMI_COLL_BROADCAST;
    char *dst = (char *)a.dest;
    for (int i = (int)tid; i < n; i += (int)nt) {
        if (i == me || (bcast && i != a.root)) continue;
        uint64_t *f = t.simple_flags + (size_t)slice * n + i, start = 0;
        uint32_t spins = 0;
        while (gshmemi_ld_acquire_u64(f) < step)
            if (gshmemi_wait_expired(&start, &spins)) gshmemi_wait_report("SIMPLE collective", f, gshmemi_team_pe(t, i));
    }
    gshmemi_scope_sync(scope);
    const char *own = (const char *)a.src + (per_dest ? (size_t)me * blk : 0) + c.off;
    if constexpr (OP >= 0) {
        gshmemi_reduce_loop<OP, T>(
            n, [&](int m) { return m == me ? own : (const char *)gshmemi_simple_slot(t, step, slice, m); }, 1,
            [&](int) { return dst + c.off; }, c.len, tid, nt);
    } else if (bcast) {
        gshmemi_copy(dst + c.off, me == a.root ? own : gshmemi_simple_slot(t, step, slice, a.root), c.len, tid, nt);
    } else { /* fcollect, alltoall */
        for (int i = 0; i < n; i++)
            gshmemi_copy(dst + (size_t)i * blk + c.off, i == me ? own : gshmemi_simple_slot(t, step, slice, i), c.len, tid, nt);
    }
    /* the slots' loads have returned (their values are stored) once the group has met: a relaxed
     * credit is enough */
    gshmemi_scope_sync(scope);
    gshmemi_simple_tell(t, t.simple_credit, slice, step, false, tid, nt);
}

/* Every chunk of this slice ([slice + j * nslices] * CHUNK), sends one step ahead of receives. */
template <int OP, typename T>
GSHMEMI_DEV void gshmemi_simple_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                      unsigned tid, unsigned nt, int scope)
{
    const size_t blk = a.nelems * a.es, stride = (size_t)nslices * GSHMEMI_SIMPLE_CHUNK;
    const size_t first = (size_t)slice * GSHMEMI_SIMPLE_CHUNK;
    const uint64_t steps = first < blk ? (blk - first + stride - 1) / stride : 0;
    const uint64_t base = *(volatile uint64_t *)(t.simple_steps + slice);
    auto chunk = [&](uint64_t j) {
        gshmemi_simple_chunk c;
        c.off = first + j * stride;
        c.len = blk - c.off < GSHMEMI_SIMPLE_CHUNK ? blk - c.off : GSHMEMI_SIMPLE_CHUNK;
        return c;
    };
    for (uint64_t j = 0; j <= steps; j++) {
        if (j < steps) gshmemi_simple_send(t, a, slice, base + j + 1, chunk(j), tid, nt, scope);
        if (j > 0) gshmemi_simple_recv<OP, T>(t, a, slice, base + j, chunk(j - 1), tid, nt, scope);
    }
    gshmemi_scope_sync(scope);
    if (tid == 0) *(volatile uint64_t *)(t.simple_steps + slice) = base + steps;
    gshmemi_scope_sync(scope);
}

/* This slice's share [lo, hi) of `total` units, in whole 16-byte vectors where possible. */
GSHMEMI_DEV void gshmemi_slice_range(size_t total, size_t unit, int slice, int nslices, size_t *lo, size_t *hi)
{
    size_t per = (total + nslices - 1) / nslices;
    per = (per + unit - 1) / unit * unit;
    *lo = per * slice < total ? per * slice : total;
    *hi = *lo + per < total ? *lo + per : total;
}

/* A DIRECT reduction of 2 PEs up to GSHMEM_COLL_ONESHOT_MAX is one-shot: each PE reads the
 * other's whole source, which over 2 PEs moves the same bytes per link direction as two-shot,
 * all as reads, and stores nothing remotely. */
GSHMEMI_DEV bool gshmemi_reduce_oneshot(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a)
{
    return t.size == 2 && a.nelems * a.es <= gshmemi_dstate.coll_oneshot_max;
}

/* A 2-PE reduction by stores (gshmemi_direct_push, include/gshmem/coll.h): store the half the
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
    gshmemi_copy((char *)gshmemi_peer_ptr_raw(a.dest, peer) + plo + lo, (const char *)a.src + plo + lo, hi - lo, tid, nt);
    gshmemi_scope_sync(scope);
    gshmemi_team_barrier_slice(t, slice, tid, nt, scope, true);
    gshmemi_slice_range(blk, 16, me, 2, &plo, &phi);
    gshmemi_slice_range(phi - plo, 16, slice, nslices, &lo, &hi);
    const char *mine = (const char *)a.src + plo + lo;
    char *here = (char *)a.dest + plo + lo, *there = (char *)gshmemi_peer_ptr_raw(here, peer);
    gshmemi_reduce_loop<OP, T>(
        2, [=](int m) { return m == me ? mine : (const char *)here; }, 2, [=](int k) { return k ? there : here; }, hi - lo,
        tid, nt);
}

template <int OP, typename T, bool OWN_KERNEL>
GSHMEMI_DEV void gshmemi_direct_body(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                     unsigned tid, unsigned nt, int scope, bool push)
{
    const int n = t.size, me = t.my_idx;
    const size_t blk = a.nelems * a.es;
    const char *src = (const char *)a.src;
    char *dst = (char *)a.dest;
    size_t lo, hi;

    switch (OP >= 0 ? (a.kind == GSHMEMI_COLL_REDUCESCATTER ? -2 : -1) : a.kind) {
    case GSHMEMI_COLL_BROADCAST:
        gshmemi_slice_range(blk, 16, slice, nslices, &lo, &hi);
        gshmemi_copy(dst + lo, (const char *)gshmemi_peer_ptr_raw(src, gshmemi_team_pe(t, a.root)) + lo, hi - lo, tid, nt);
        break;
    case GSHMEMI_COLL_FCOLLECT:
    case GSHMEMI_COLL_ALLTOALL:
        /* Every slice takes its share of every block, the peers' first and its own last: all
         * CTAs pull over NVLink (split by block, the CTAs of the local copy would idle early). */
        gshmemi_slice_range(blk, blk % 16 ? 1 : 16, slice, nslices, &lo, &hi);
        for (int i = 1; i <= n; i++) {
            int m = (me + i) % n, pe = gshmemi_team_pe(t, m);
            size_t at = a.kind == GSHMEMI_COLL_ALLTOALL ? (size_t)(push ? m : me) * blk : 0;
            if (push) gshmemi_copy((char *)gshmemi_peer_ptr_raw(dst, pe) + (size_t)me * blk + lo, src + at + lo, hi - lo, tid, nt);
            else gshmemi_copy(dst + (size_t)m * blk + lo, (const char *)gshmemi_peer_ptr_raw(src, pe) + at + lo, hi - lo, tid, nt);
        }
        break;
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
            const uint64_t *cw = t.barrier + (size_t)GSHMEMI_COLL_SLICES * GSHMEMI_BARRIER_WORDS;
            size_t cnt = (size_t)gshmemi_ld_acquire_u64(gshmemi_peer_ptr_raw(cw, gshmemi_team_pe(t, m))) * a.es;
            gshmemi_slice_range(cnt, 16, slice, nslices, &lo, &hi);
            gshmemi_copy(dst + at + lo, (const char *)gshmemi_peer_ptr_raw(src, gshmemi_team_pe(t, m)) + lo, hi - lo, tid, nt);
            at += cnt;
        }
        break;
    }
    case -2: /* reducescatter */
        if constexpr (OP >= 0) {
            gshmemi_slice_range(blk, 16, slice, nslices, &lo, &hi);
            gshmemi_direct_reduce<OP, T>(t, dst + lo, src + (size_t)me * blk + lo, hi - lo, 0, tid, nt);
        }
        break;
    case -1: /* reduce */
        if constexpr (OP >= 0 && OWN_KERNEL) {
            if (push) {
                gshmemi_push_reduce<OP, T>(t, a, slice, nslices, tid, nt, scope);
                break;
            }
        }
        if constexpr (OP >= 0) {
            if (gshmemi_reduce_oneshot(t, a)) {
                gshmemi_slice_range(blk, 16, slice, nslices, &lo, &hi);
                gshmemi_direct_reduce<OP, T>(t, dst + lo, src + lo, hi - lo, 0, tid, nt);
                break;
            }
            /* two-shot: this PE reduces its part and pushes it to every member */
            size_t plo, phi;
            gshmemi_slice_range(blk, 16, me, n, &plo, &phi);
            gshmemi_slice_range(phi - plo, 16, slice, nslices, &lo, &hi);
            gshmemi_direct_reduce<OP, T>(t, dst + plo + lo, src + plo + lo, hi - lo, 1, tid, nt);
        }
        break;
    }
}

/* One slice of a collective. Every member runs the same slices with the same arguments.
 * OWN_KERNEL: called by the on-stream kernel (collectives/coll.cu), not from a user's kernel. */
template <int OP, typename T, bool OWN_KERNEL = false>
GSHMEMI_DEV void gshmemi_coll_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                    unsigned tid, unsigned nt, int scope)
{
    if (t.size == 1) { /* nothing to exchange: the collective is a local copy */
        size_t bytes = a.kind == GSHMEMI_COLL_ALLTOALLS ? 0 : a.nelems * a.es, lo, hi;
        if (a.kind == GSHMEMI_COLL_ALLTOALLS) {
            gshmemi_slice_range(a.nelems, 1, slice, nslices, &lo, &hi);
            gshmemi_strided_copy((char *)a.dest + (ptrdiff_t)lo * a.dst * (ptrdiff_t)a.es,
                                 (const char *)a.src + (ptrdiff_t)lo * a.sst * (ptrdiff_t)a.es, a.dst, a.sst, hi - lo, a.es, tid, nt);
        } else if (a.dest != a.src) {
            gshmemi_slice_range(bytes, 16, slice, nslices, &lo, &hi);
            gshmemi_copy((char *)a.dest + lo, (const char *)a.src + lo, hi - lo, tid, nt);
        }
        gshmemi_scope_sync(scope);
        return;
    }
    /* a reduction kernel (OP >= 0) carries only the reduction paths, a data-moving one (OP < 0)
     * only the others: each instantiation compiles what it can run */
    if (a.proto == GSHMEMI_PROTO_SIMPLE) {
        gshmemi_simple_slice<OP, T>(t, a, slice, nslices, tid, nt, scope);
        return;
    }
    if (a.proto == GSHMEMI_PROTO_LL128) {
        const size_t blk = a.nelems * a.es;
        for (size_t off = (size_t)slice * GSHMEMI_LL128_SLICE_DATA; off < blk; off += (size_t)nslices * GSHMEMI_LL128_SLICE_DATA) {
            size_t len = blk - off < GSHMEMI_LL128_SLICE_DATA ? blk - off : GSHMEMI_LL128_SLICE_DATA;
            gshmemi_ll128_step<OP, T>(t, a, slice, off, len, tid, nt, scope);
        }
        return;
    }
    if (a.proto == GSHMEMI_PROTO_LL) {
        /* chunks of one LL buffer, dealt round-robin to the slices */
        const size_t blk = a.nelems * a.es;
        for (size_t off = (size_t)slice * GSHMEMI_LL_SLICE_DATA; off < blk; off += (size_t)nslices * GSHMEMI_LL_SLICE_DATA) {
            size_t len = blk - off < GSHMEMI_LL_SLICE_DATA ? blk - off : GSHMEMI_LL_SLICE_DATA;
            gshmemi_ll_step<OP, T>(t, a, slice, off, len, tid, nt, scope);
        }
        return;
    }
    if (a.kind == GSHMEMI_COLL_COLLECT && tid == 0) {
        uint64_t *cw = t.barrier + (size_t)GSHMEMI_COLL_SLICES * GSHMEMI_BARRIER_WORDS;
        *(volatile uint64_t *)cw = a.nelems;
    }
    /* Entry: in a kernel of its own the sources were written by earlier kernels, complete and
     * visible already, so the sync need not order; called from a user's kernel it must. Exit:
     * ordered only where this PE stored to the others (pushes, two-shot); pulls store locally, and a
     * pull's loads have returned (their values are stored) before the group meets to signal. */
    const bool push = gshmemi_direct_push(&gshmemi_dstate, t.size, &a, OWN_KERNEL) != 0;
    const bool pushes = push || (OP >= 0 && a.kind == GSHMEMI_COLL_REDUCE && !gshmemi_reduce_oneshot(t, a));
    /* collect's count word is written just above: its signal must carry it */
    gshmemi_team_barrier_slice(t, slice, tid, nt, scope, !OWN_KERNEL || a.kind == GSHMEMI_COLL_COLLECT);
    gshmemi_direct_body<OP, T, OWN_KERNEL>(t, a, slice, nslices, tid, nt, scope, push);
    gshmemi_scope_sync(scope);
    gshmemi_team_barrier_slice(t, slice, tid, nt, scope, pushes);
}

/* The protocol rule of include/gshmem/coll.h with this module's settings. */
GSHMEMI_DEV int gshmemi_coll_proto(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int scope)
{
    int p = gshmemi_pick_proto(a.kind, a.nelems * a.es, gshmemi_proto_rule_of(&gshmemi_dstate, &t));
    /* LL128 lines are stored by whole warps */
    if (p == GSHMEMI_PROTO_LL128 && (scope == GSHMEMI_SCOPE_THREAD || gshmemi_scope_size(scope) % 32)) p = GSHMEMI_PROTO_LL;
    return p;
}

/* A device call by one thread group (thread, warp or block scope): slice 0. */
template <int OP, typename T>
GSHMEMI_DEV int gshmemi_coll_group(shmem_team_t team, gshmemi_coll_args_t a, int scope, const char *routine)
{
    gshmemi_team_dev_t t = gshmemi_team_get(team, routine);
    if (t.my_idx < 0) return -1;
    a.proto = gshmemi_group_proto(gshmemi_coll_proto(t, a, scope), gshmemi_proto_rule_of(&gshmemi_dstate, &t),
                                  a.nelems * a.es, gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
    gshmemi_coll_slice<OP, T>(t, a, 0, 1, gshmemi_scope_tid(scope), gshmemi_scope_size(scope), scope);
    return 0;
}

#endif
