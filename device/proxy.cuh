/* The device side of the host proxy: how a GPU thread hands an operation on a PE that is not
 * reached by P2P to this PE's proxy thread. One request per call (a warp or block call posts once
 * for the group), in the FIFO of device/proxy_fifo.h: a ticket, then the request's eight tagged
 * words. Requests are executed in ticket order and, per destination, completed in that
 * order; a thread that must see a request complete (a blocking put or get, a fetching atomic,
 * quiet) waits on the completion count or its result slot, bounded by GSHMEM_DEVICE_WAIT_TIMEOUT.
 * A failure of the proxy (reported on the host with the request, the peer and the cause) makes the
 * waiting call report and trap.
 *
 * Every routine here runs out of line, inside the entries of device/remote.cuh, which a kernel
 * reaches by one far call (memops.cuh): its P2P fast path holds that call and none of these loops
 * (inlined, ptxas reloaded the PE and the peer's base on every turn of the caller's loop, off the
 * uniform datapath: p and g latency over P2P about 10 % worse), and their registers are not
 * stacked on the kernel's. The entries inline the small ones; RMA and quiet, which the strided
 * entry calls too, are far functions of their own.
 *
 * Where this PE has IBGDA QPs (device/ibgda.cuh), every remote peer is reached through them
 * (GSHMEM_REMOTE_TRANSPORT picks IBGDA or the proxy for all of a PE's remote peers): each routine
 * here sends its call there first, one test of the constant device state, so every caller of the
 * remote branch reaches it; those calls are far calls too. */
#ifndef GSHMEM_DEVICE_PROXY_CUH
#define GSHMEM_DEVICE_PROXY_CUH

#include <stdio.h>

#include "amo.cuh"
#include "ibgda.cuh"
#include "proxy_fifo.h"
#include "state.cuh"

/* Flags of a request's flag word. */
#define GSHMEMI_PROXY_F_WAIT 1u /* a device thread waits for this request: complete it before taking more */

GSHMEMI_DEV uint64_t gshmemi_sym_offset(const void *sym) { return (uint64_t)((const char *)sym - gshmemi_dstate.heap_base); }

/* Some PE is reached remotely: through the proxy, or IBGDA. */
GSHMEMI_DEV int gshmemi_proxy_on(void) { return gshmemi_dstate.proxy.size != 0 || gshmemi_dstate.ibgda != 0; }

GSHMEMI_DEV_REPORT void gshmemi_proxy_fail(int status, const char *routine, int pe, unsigned long long ticket, int say = 1)
{
    const char *what = status == GSHMEMI_FIFO_FAILED    ? "the host proxy failed a request (its log says which, to which PE, and why)"
                       : status == GSHMEMI_FIFO_TIMEOUT ? "the host proxy did not answer within GSHMEM_DEVICE_WAIT_TIMEOUT"
                       : status == GSHMEMI_FIFO_LOST    ? "a result slot of the host proxy was reused before it was read"
                                                        : "the host proxy completed a fetching request without its result";
    printf(say ? "gshmem: PE %d: %s: %s (request %llu, PE %d)\n" : "", gshmemi_dstate.my_pe, routine, what, ticket, pe);
    __trap();
}

/* The tickets of a posting lane: its own, and the last of its group. The lanes of a warp that
 * post together (a thread alone is a group of one) take their tickets with one atomic, and every
 * wait of this path is on a count the whole group shares: the free slots for all of them, the
 * completion of the group's last request. A wait on a lane's own ticket is one that ptxas must
 * keep from starving the warp's other lanes, and it then gives every loop of the calling kernel a
 * convergence barrier and a YIELD, the P2P path's copy loops too (measurably slower
 * puts-with-signal); a value shuffled from one lane it takes as the group's. */
typedef struct gshmemi_proxy_tickets {
    uint64_t mine, last;
    unsigned lanes; /* the group */
} gshmemi_proxy_tickets_t;

/* Posts one request per calling lane: its words arg (arg[0] = gshmemi_proxy_op_word(op, pe)). */
static __device__ __forceinline__ gshmemi_proxy_tickets_t gshmemi_proxy_post_words(const uint64_t arg[GSHMEMI_PROXY_ARGS],
                                                                               const char *routine)
{
    const gshmemi_proxy_fifo_t *f = &gshmemi_dstate.proxy;
    const int op = (int)(uint32_t)arg[0], pe = (int)(uint32_t)(arg[0] >> 32);
    const gshmemi_lanes_t g = gshmemi_lanes_of(__activemask());
    /* read before the tickets are taken: after the shuffle it would wait for the atomic first
     * (proxy p_latency 6.64-6.80 us against 6.39-6.63, H100) */
    const uint64_t hc = gshmemi_fifo_cache(f->head_cache);
    unsigned long long base = 0;
    /* relaxed is enough: the ticket orders nothing, the slot's tagged words publish */
    if (g.rank == 0) base = atomicAdd((unsigned long long *)f->tail, (unsigned long long)g.n);
    base = __shfl_sync(g.mask, base, __ffs(g.mask) - 1);
    const int st = gshmemi_fifo_wait_free_from(f, base, g.n, hc); /* n <= 32 <= size (GSHMEM_PROXY_FIFO_SLOTS >= 64) */
    if (st != GSHMEMI_FIFO_OK) gshmemi_proxy_fail(st, routine, pe, base + g.rank);
    /* a put's source is read by the proxy's copy engine or NIC: this GPU's stores to it first */
    if (op == GSHMEMI_PROXY_PUT || op == GSHMEMI_PROXY_PUT_SIGNAL) gshmemi_fifo_publish_data(f, base + g.rank, arg);
    else gshmemi_fifo_publish(f, base + g.rank, arg);
    return {base + g.rank, base + g.n - 1, g.mask};
}
static __device__ __forceinline__ gshmemi_proxy_tickets_t gshmemi_proxy_post(int op, int pe, uint64_t a1, uint64_t a2, uint64_t a3,
                                                                         uint64_t a4, uint64_t a5, uint64_t a6,
                                                                         const char *routine)
{
    const uint64_t arg[GSHMEMI_PROXY_ARGS] = {gshmemi_proxy_op_word(op, pe), a1, a2, a3, a4, a5, a6};
    return gshmemi_proxy_post_words(arg, routine);
}

/* The same out of line (a far call, memops.cuh), the words in memory, for the routines that hold
 * more values of their own across the post: arguments past a few take registers of the caller. */
static __device__ __noinline__ void gshmemi_proxy_post_far(gshmemi_proxy_tickets_t *t, const uint64_t *arg, const char *routine)
{
    *t = gshmemi_proxy_post_words(arg, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_proxy_post_far);

/* Waits until the group's requests (and every earlier one) are complete. */
static __device__ __forceinline__ void gshmemi_proxy_wait(gshmemi_proxy_tickets_t t, int pe, const char *routine)
{
    int st = gshmemi_fifo_wait_done(&gshmemi_dstate.proxy, t.last);
    if (st != GSHMEMI_FIFO_OK) gshmemi_proxy_fail(st, routine, pe, t.mine);
}

/* The result of this lane's request (a fetching atomic, a g), once the group's are complete. */
static __device__ __forceinline__ uint64_t gshmemi_proxy_result(gshmemi_proxy_tickets_t t, int pe, const char *routine)
{
    uint64_t v = 0;
    gshmemi_proxy_wait(t, pe, routine);
    const int st = gshmemi_fifo_read_ret(&gshmemi_dstate.proxy, t.mine, &v);
    /* one lane's failure, reported by the group and printed once: no call under a test of one
     * lane's value (see gshmemi_proxy_tickets_t) */
    const unsigned bad = __ballot_sync(t.lanes, st != GSHMEMI_FIFO_OK);
    if (bad) {
        const int src = __ffs(bad) - 1;
        gshmemi_proxy_fail(__shfl_sync(t.lanes, st, src), routine, pe, __shfl_sync(t.lanes, t.mine, src),
                           gshmemi_lanemask_lt() == (1u << src) - 1u);
    }
    return v;
}

/* quiet: every request posted so far is complete at its target. Nothing to do when the proxy has
 * completed all it was given. */
static __device__ __noinline__ void gshmemi_proxy_quiet(const char *routine)
{
    const gshmemi_proxy_fifo_t *f = &gshmemi_dstate.proxy;
    if (gshmemi_dstate.ibgda) GSHMEMI_FAR(gshmemi_ibgda_quiet)(routine);
    if (f->size == 0) return;
    const uint64_t posted = *(volatile uint64_t *)f->tail; /* tickets handed out so far */
    /* the cache first (device memory), then one read of done itself */
    if (posted == 0 || gshmemi_fifo_cache(f->done_cache) >= posted || gshmemi_ld_acquire_u64((const void *)f->done) >= posted) return;
    const gshmemi_proxy_tickets_t t =
        gshmemi_proxy_post(GSHMEMI_PROXY_QUIET, gshmemi_dstate.my_pe, 0, 0, 0, GSHMEMI_PROXY_F_WAIT, 0, 0, routine);
    gshmemi_proxy_wait(t, gshmemi_dstate.my_pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_proxy_quiet);

/* Contiguous put or get of n bytes by one thread; blocking: returns when the source may be reused
 * (put) or the data is here (get). */
static __device__ __noinline__ void gshmemi_proxy_rma(int op, void *dest, const void *src, size_t n, int pe, int blocking,
                                                     const char *routine)
{
    if (gshmemi_dstate.ibgda) {
        GSHMEMI_FAR(gshmemi_ibgda_rma)(op == GSHMEMI_PROXY_PUT, dest, src, n, pe, blocking, routine);
        return;
    }
    const unsigned flags = blocking ? GSHMEMI_PROXY_F_WAIT : 0;
    const uint64_t sym = gshmemi_sym_offset(op == GSHMEMI_PROXY_PUT ? dest : src);
    const uint64_t loc = (uint64_t)(uintptr_t)(op == GSHMEMI_PROXY_PUT ? src : (const void *)dest);
    const gshmemi_proxy_tickets_t t = gshmemi_proxy_post(op, pe, sym, loc, n, flags, 0, 0, routine);
    if (blocking) gshmemi_proxy_wait(t, pe, routine);
}
GSHMEMI_FAR_DEFINE(gshmemi_proxy_rma);

/* A value of width bytes stored at sym on pe (shmem_TYPE_p). */
static __device__ __forceinline__ void gshmemi_proxy_p(void *sym, uint64_t bits, size_t width, int pe, const char *routine)
{
    if (gshmemi_dstate.ibgda) {
        GSHMEMI_FAR(gshmemi_ibgda_p)(sym, bits, width, pe, routine);
        return;
    }
    (void)gshmemi_proxy_post(GSHMEMI_PROXY_PUT_VALUE, pe, gshmemi_sym_offset(sym), bits, width, 0, 0, 0, routine);
}

/* The width-byte value at sym on pe (shmem_TYPE_g), read through the proxy into a result slot. */
static __device__ __forceinline__ uint64_t gshmemi_proxy_g(const void *sym, size_t width, int pe, const char *routine)
{
    if (gshmemi_dstate.ibgda) return GSHMEMI_FAR(gshmemi_ibgda_g)(sym, width, pe, routine);
    const gshmemi_proxy_tickets_t t =
        gshmemi_proxy_post(GSHMEMI_PROXY_GET, pe, gshmemi_sym_offset(sym), 0, width, GSHMEMI_PROXY_F_WAIT, 0, 0, routine);
    return gshmemi_proxy_result(t, pe, routine);
}

GSHMEMI_DEV int gshmemi_amo_fetches(int op)
{
    return op == GSHMEMI_AMO_FETCH || op == GSHMEMI_AMO_SWAP || op == GSHMEMI_AMO_CSWAP ||
           (op >= GSHMEMI_AMO_FETCH_ADD && (op - GSHMEMI_AMO_FETCH_ADD) % 2 == 0);
}

/* An atomic op on the width-byte word at sym on pe; the old value for a fetching op. */
static __device__ __forceinline__ uint64_t gshmemi_proxy_amo(int op, void *sym, uint64_t value, uint64_t cond, size_t width, int pe,
                                                          const char *routine)
{
    const int fetch = gshmemi_amo_fetches(op);
    if (gshmemi_dstate.ibgda) return GSHMEMI_FAR(gshmemi_ibgda_amo)(op, sym, value, cond, width, pe, fetch, routine);
    const uint64_t arg[GSHMEMI_PROXY_ARGS] = {gshmemi_proxy_op_word(GSHMEMI_PROXY_AMO, pe), gshmemi_sym_offset(sym), value, cond,
                                              (uint64_t)op | (uint64_t)width << 8, fetch ? GSHMEMI_PROXY_F_WAIT : 0u, 0};
    gshmemi_proxy_tickets_t t;
    GSHMEMI_FAR(gshmemi_proxy_post_far)(&t, arg, routine);
    return fetch ? gshmemi_proxy_result(t, pe, routine) : 0;
}

/* n bytes to dest on pe, then the signal update (SHMEM_SIGNAL_SET/ADD) of sig on pe, after the
 * data. n may be 0 (a signal alone). */
static __device__ __forceinline__ void gshmemi_proxy_put_signal(void *dest, const void *src, size_t n, uint64_t *sig, uint64_t signal,
                                                            int sig_op, int pe, int blocking, const char *routine)
{
    if (gshmemi_dstate.ibgda) {
        GSHMEMI_FAR(gshmemi_ibgda_put_signal)(dest, src, n, sig, signal, sig_op, pe, blocking, routine);
        return;
    }
    const uint64_t arg[GSHMEMI_PROXY_ARGS] = {gshmemi_proxy_op_word(GSHMEMI_PROXY_PUT_SIGNAL, pe), n ? gshmemi_sym_offset(dest) : 0,
                                              (uint64_t)(uintptr_t)src, n, gshmemi_sym_offset(sig), signal,
                                              (uint64_t)sig_op | (uint64_t)(blocking ? GSHMEMI_PROXY_F_WAIT : 0) << 8};
    gshmemi_proxy_tickets_t t;
    GSHMEMI_FAR(gshmemi_proxy_post_far)(&t, arg, routine);
    if (blocking) gshmemi_proxy_wait(t, pe, routine);
}

/* fence, for the remote transports: IBGDA's is a quiet; the proxy is told (its backends may run
 * atomics apart from copies). Its caller, gshmemi_fence, is inlined everywhere. */
static __device__ __forceinline__ void gshmemi_proxy_fence(const char *routine)
{
    if (gshmemi_dstate.ibgda) gshmemi_ibgda_fence(routine);
    if (gshmemi_dstate.proxy.size) (void)gshmemi_proxy_post(GSHMEMI_PROXY_FENCE, gshmemi_dstate.my_pe, 0, 0, 0, 0, 0, 0, routine);
}

#endif
