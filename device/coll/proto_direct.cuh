/* DIRECT: no buffers. The members meet (everyone entered: sources ready, destinations free),
 * then load and store straight on each other's symmetric buffers through the peer mappings, and
 * meet again (nobody leaves while another member still reads its source or writes its
 * destination). The primitives: a slice's share of a range, copies from or to a peer
 * (gshmemi_copy on gshmemi_peer_ptr_raw), and the reduction over the members' buffers (also
 * SIMPLE's, over its slots). The algorithms on them are in algo_direct.cuh. */
#ifndef GSHMEM_DEVICE_COLL_PROTO_DIRECT_CUH
#define GSHMEM_DEVICE_COLL_PROTO_DIRECT_CUH

#include "ops.cuh"

/* This PE's collect word in the team's pSync: collect publishes its count there. */
GSHMEMI_DEV uint64_t *gshmemi_collect_word(const gshmemi_team_dev_t &t)
{
    return t.barrier + (size_t)GSHMEMI_COLL_SLICES * GSHMEMI_BARRIER_WORDS;
}

/* This slice's share [lo, hi) of `total` units, in whole 16-byte vectors where possible. */
GSHMEMI_DEV void gshmemi_slice_range(size_t total, size_t unit, int slice, int nslices, size_t *lo, size_t *hi)
{
    size_t per = (total + nslices - 1) / nslices;
    per = (per + unit - 1) / unit * unit;
    *lo = per * slice < total ? per * slice : total;
    *hi = *lo + per < total ? *lo + per : total;
}

/* ---- the reduction loop of DIRECT and SIMPLE ---- */
/* Bytes [from, bytes) of gshmemi_reduce_vec below, one element per thread: its tail. */
template <typename T, typename Combine, typename In, typename Out>
GSHMEMI_DEV void gshmemi_reduce_elems(Combine combine, int n, In in, int nout, Out outs, size_t from, size_t bytes,
                                      unsigned tid, unsigned nt)
{
    for (size_t e = from / sizeof(T) + tid; e < bytes / sizeof(T); e += nt) {
        T acc = ((const volatile T *)in(0))[e];
        for (int m = 1; m < n; m++) acc = combine(acc, ((const volatile T *)in(m))[e]);
        for (int k = 0; k < nout; k++) ((T *)outs(k))[e] = acc;
    }
}

/* out[0..bytes) = op over members m of in(m)[0..bytes), combined in member order; `outs(k)` for
 * k < nout names where the result goes (this PE only, or every member for a two-shot push).
 * Vectors of 16 bytes when every pointer allows it: `word` combines two of them, `elem` two
 * elements (the tail). gshmemi_reduce_loop below takes the operator at compile time, the routed
 * path at run time. */
template <typename T, typename Word, typename Elem, typename In, typename Out>
GSHMEMI_DEV void gshmemi_reduce_vec(Word word, Elem elem, int n, In in, int nout, Out outs, size_t bytes, unsigned tid,
                                    unsigned nt)
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
                for (int u = 0; u < U; u++) acc[u] = word(acc[u], v[u]);
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
                    if (base + u * (size_t)nt < nv) acc[u] = word(acc[u], v[u]);
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
    /* tail, or everything when unaligned */
    gshmemi_reduce_elems<T>(elem, n, in, nout, outs, done, bytes, tid, nt);
}

template <int OP, typename T, typename In, typename Out>
GSHMEMI_DEV void gshmemi_reduce_loop(int n, In in, int nout, Out outs, size_t bytes, unsigned tid, unsigned nt)
{
    gshmemi_reduce_vec<T>([](int4 x, int4 y) { return gshmemi_redop_word<OP, T>(x, y); },
                          [](T x, T y) { return gshmemi_redop<OP, T>(x, y); }, n, in, nout, outs, bytes, tid, nt);
}

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

#endif
