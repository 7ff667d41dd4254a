/* LL: a 16-byte line carries 8 data bytes and two copies of a 32-bit flag (the step's sequence
 * number) and is written with one 16-byte store, so a reader that sees both flags sees the data.
 * The sender writes straight into the receiver's pSync; there is no barrier at all. Buffers are
 * double-buffered by the parity of the step: a member cannot start step q+2 in a slice before
 * every member finished reading step q there, since step q+1 needs their data.
 *
 * The primitives every buffered protocol offers (LL, LL128, SIMPLE; used by algo_exchange.cuh):
 * send(chunk_for) puts this step's chunk for each other member into that member's buffer;
 * recv(root, body) calls body(u) for each unit of the step (here a line per thread) and then
 * frees the buffers; within a unit own(u, p) and from(u, i) read this PE's chunk or member i's,
 * out(u, p, w) writes, and reduce<OP, T>(u, n, get, p) combines get(0..n-1) in member order. */
#ifndef GSHMEM_DEVICE_COLL_PROTO_LL_CUH
#define GSHMEM_DEVICE_COLL_PROTO_LL_CUH

#include "ops.cuh"

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

/* Broadcast by LL or LL128: only the root sends and it waits for nobody's data, so it would run
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

/* One LL step of a slice: `len` (<= GSHMEMI_LL_SLICE_DATA) payload bytes at byte `off` of each
 * block. A line is handled by the same thread in the send and receive halves, which is what makes
 * an in-place reduce safe (a thread overwrites only what it has already sent). */
struct gshmemi_ll {
    typedef uint64_t word;
    struct unit {
        size_t l;    /* the line */
        unsigned nb; /* its data bytes */
    };
    const gshmemi_team_dev_t &t;
    int slice, scope;
    size_t off, len;
    unsigned tid, nt;
    uint64_t q;

    GSHMEMI_DEVM gshmemi_ll(const gshmemi_team_dev_t &t_, int slice_, size_t off_, size_t len_, unsigned tid_, unsigned nt_,
                           int scope_)
        : t(t_), slice(slice_), scope(scope_), off(off_), len(len_), tid(tid_), nt(nt_),
          q(gshmemi_team_next_seq(t_, slice_, tid_, scope_))
    {
    }
    template <typename Src> GSHMEMI_DEVM void send(Src chunk_for) const
    {
        for (int i = 1; i < t.size; i++) {
            int to = (t.my_idx + i) % t.size;
            gshmemi_ll_send(t, q, slice, to, chunk_for(to), len, tid, nt);
        }
    }
    template <typename Body> GSHMEMI_DEVM void recv(int root, Body body) const
    {
        for (size_t l = tid; l * 8 < len; l += nt) body(unit{l, len - l * 8 < 8 ? (unsigned)(len - l * 8) : 8});
        gshmemi_scope_sync(scope);
        if (root >= 0) gshmemi_bcast_ack(t, root, slice, q, tid, nt, scope);
    }
    GSHMEMI_DEVM word own(const unit &u, const char *p) const { return gshmemi_load8(p + u.l * 8, u.nb); }
    GSHMEMI_DEVM word from(const unit &u, int i) const
    {
        return gshmemi_ll_load(gshmemi_ll_buf(t, q, slice, i) + u.l * 16, (uint32_t)q, gshmemi_team_pe(t, i));
    }
    GSHMEMI_DEVM void out(const unit &u, char *p, word w) const { gshmemi_store8(p + u.l * 8, w, u.nb); }
    template <int OP, typename T, typename Get> GSHMEMI_DEVM void reduce(const unit &u, int n, Get get, char *p) const
    {
        uint64_t acc = 0;
        for (int i = 0; i < n; i++) {
            uint64_t v = get(i);
            acc = i == 0 ? v : gshmemi_redop_word<OP, T>(acc, v);
        }
        out(u, p, acc);
    }
};

/* The steps of a slice: chunks of one LL buffer, dealt round-robin to the slices. */
template <typename Algo>
GSHMEMI_DEV void gshmemi_ll_slice(const gshmemi_team_dev_t &t, size_t blk, int slice, int nslices, unsigned tid, unsigned nt,
                                  int scope, const Algo &algo)
{
    for (size_t off = (size_t)slice * GSHMEMI_LL_SLICE_DATA; off < blk; off += (size_t)nslices * GSHMEMI_LL_SLICE_DATA) {
        size_t len = blk - off < GSHMEMI_LL_SLICE_DATA ? blk - off : GSHMEMI_LL_SLICE_DATA;
        algo.step(gshmemi_ll(t, slice, off, len, tid, nt, scope));
    }
}

#endif
