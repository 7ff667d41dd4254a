/* The proxy FIFO: a multi-producer, single-consumer ring of fixed-size requests in pinned host
 * memory mapped for the GPU. Producers are GPU threads (any thread, warp or block of any kernel)
 * or host threads; the consumer is the one proxy thread on the host. Valid C11 (gcc) and CUDA C++
 * (nvcc): producer calls are __host__ __device__, consumer calls host only.
 *
 * A request is a ticket and a 64-byte slot of eight words. The protocol:
 *   producer  reserve: ticket = fetch_add(tail, n), then wait until ticket + n <= head + size
 *             publish: the request's seven 64-bit args packed into the low 56 bits of the eight
 *             words, each word's top byte the ticket's lap tag; eight independent stores
 *   consumer  take(pos): every word of slot[pos % size] carries pos's tag, unpack the request
 *             release(upto): head = upto (slots of tickets < upto may be reused)
 *             complete(upto): done = upto; return(ticket, value); fail(ticket)
 *   producer  wait_done(ticket): done > ticket; wait_ret(ticket): the ret slot's seq == ticket + 1
 *
 * Ordering. Each word is stored whole (an aligned 8-byte store is single-copy atomic) and says by
 * its tag which lap wrote it, so the consumer needs no order among the eight stores: a slot whose
 * words do not all carry pos's tag is not (wholly) written yet. The producer thus publishes with
 * plain system-scope stores and no system-scope fence, which on a GPU costs a round trip over the
 * bus per request (NVSHMEM's proxy channel tags its words the same way). The tag is
 * 0x80 | (lap & 0x7f), lap = ticket / size: a slot holds words of its current lap or the one before
 * (a producer rewrites it only after the consumer took the previous lap), and those tags differ
 * and are never 0, the state of a fresh slot. Data a put's source holds must be in GPU memory
 * before the consumer hands the copy to a copy engine or NIC: the device producer of such a
 * request fences at GPU scope first (gshmemi_fifo_publish_data), which orders the earlier stores
 * before the slot's without a wait on the bus.
 * The consumer's reads of a slot come before its release store of head; a producer reuses the
 * slot only after an acquire load of head (or of head_cache, raised after such a load) allows it.
 *
 * Back-pressure. tail is the producers' ticket counter (device memory when they are GPU threads);
 * head_cache is their copy of head, so the common case reads no host memory: *head is read over
 * the bus only when the cache says full, and the cache is then raised with an atomic max.
 *
 * Completion waits of GPU threads read the pinned words (done, error) through one gate:
 * done_cache in device memory is what they poll, and a thread reads the pinned words only when it
 * holds poll_stamp, which one waiter of the GPU holds at a time, then raises the cache. Many
 * threads polling pinned memory slow the GPU's copy engines and the proxy's own driver calls
 * (docs/transports.md); with the gate a GPU's waiters have one bus read in flight at a time. (A
 * producer waiting for a free slot reads head itself: the FIFO is rarely full, and that cold path
 * stays small.)
 *
 * Failure. Every producer wait is bounded by timeout_ns (0: unbounded) and stops at once with
 * GSHMEMI_FIFO_FAILED when the consumer has written *error. reserve reads *error only when it
 * finds the FIFO full (a read of host memory per request would cost a bus round trip): a request
 * posted after a failure is reported by the wait that follows it, or by the next reserve that
 * finds no room. On TIMEOUT or FAILED out of
 * reserve the tickets are taken but unpublished, so the consumer will stop at the first of them:
 * the caller either retries gshmemi_fifo_wait_free() on the same tickets or treats the FIFO as
 * dead (a device caller reports and traps). */
#ifndef GSHMEMI_PROXY_FIFO_H
#define GSHMEMI_PROXY_FIFO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "gshmem/types.h" /* GSHMEMI_HD_INLINE; gshmemi_proxy_fifo_t (device/layout.h) */

#ifdef __cplusplus
#define GSHMEMI_FIFO_ALIGN(n) alignas(n)
#define GSHMEMI_FIFO_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define GSHMEMI_FIFO_ALIGN(n) _Alignas(n)
#define GSHMEMI_FIFO_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#define GSHMEMI_PROXY_ARGS 7
#define GSHMEMI_FIFO_LINE 64

/* One request as the consumer reads it out of a slot: seq = ticket + 1. */
typedef struct gshmemi_proxy_req {
    GSHMEMI_FIFO_ALIGN(64) uint64_t arg[GSHMEMI_PROXY_ARGS]; /* arg[0] = op | pe << 32 */
    uint64_t seq;                                            /* ticket + 1 */
} gshmemi_proxy_req_t;
GSHMEMI_FIFO_STATIC_ASSERT(sizeof(gshmemi_proxy_req_t) == 64, "a proxy request is one 64-byte line");

/* One slot of the FIFO, one cache line: the consumer reads it with one line fill, and no two
 * producers write the same line. word[i] = tag << 56 | bits [56 i, 56 i + 56) of arg[0..6]. */
#define GSHMEMI_PROXY_WORDS 8
typedef struct gshmemi_proxy_slot {
    GSHMEMI_FIFO_ALIGN(64) uint64_t word[GSHMEMI_PROXY_WORDS];
} gshmemi_proxy_slot_t;
GSHMEMI_FIFO_STATIC_ASSERT(sizeof(gshmemi_proxy_slot_t) == 64, "a proxy slot is one 64-byte line");
GSHMEMI_FIFO_STATIC_ASSERT(GSHMEMI_PROXY_ARGS * 64 == GSHMEMI_PROXY_WORDS * 56, "seven args fill eight 56-bit payloads");
#define GSHMEMI_PROXY_PAYLOAD_MASK ((1ull << 56) - 1)

/* The result of a fetching request, in ret[ticket % size]. seq = ticket + 1 stored last
 * (release); while the consumer rewrites the slot, seq is (new ticket + 1) | GSHMEMI_PROXY_RET_BUSY
 * so that a reader can tell a value being replaced from its own (see gshmemi_fifo_wait_ret). */
typedef struct gshmemi_proxy_ret {
    GSHMEMI_FIFO_ALIGN(16) uint64_t value;
    uint64_t seq;
} gshmemi_proxy_ret_t;
GSHMEMI_FIFO_STATIC_ASSERT(sizeof(gshmemi_proxy_ret_t) == 16, "a proxy result is 16 bytes");
#define GSHMEMI_PROXY_RET_BUSY (1ull << 63)

enum {
    GSHMEMI_PROXY_PUT = 1,
    GSHMEMI_PROXY_GET,
    GSHMEMI_PROXY_PUT_VALUE,
    GSHMEMI_PROXY_AMO,
    GSHMEMI_PROXY_PUT_SIGNAL,
    GSHMEMI_PROXY_FENCE,
    GSHMEMI_PROXY_QUIET,
    GSHMEMI_PROXY_NOP
};

/* gshmemi_proxy_fifo_t, the descriptor producers and the consumer share, is in layout.h: the
 * device state holds one, and layout.h is part of every user's include (plain C99 there). */

/* Status codes of the producer calls. */
enum {
    GSHMEMI_FIFO_OK = 0,
    GSHMEMI_FIFO_TIMEOUT = 1, /* timeout_ns passed */
    GSHMEMI_FIFO_FAILED = 2,  /* the consumer wrote *error */
    GSHMEMI_FIFO_LOST = 3,    /* the result was overwritten by a later request before it was read */
    GSHMEMI_FIFO_INVALID = 4, /* bad argument (n = 0 or n > size; a bad size or block at init) */
    GSHMEMI_FIFO_PENDING = 5, /* gshmemi_fifo_read_ret: the result is not written yet */
};

/* arg[0] = op | (uint64_t)pe << 32 */
GSHMEMI_HD_INLINE uint64_t gshmemi_proxy_op_word(int op, int pe)
{
    return (uint64_t)(uint32_t)op | (uint64_t)(uint32_t)pe << 32;
}
GSHMEMI_HD_INLINE int gshmemi_proxy_req_op(const gshmemi_proxy_req_t *r) { return (int)(uint32_t)r->arg[0]; }
GSHMEMI_HD_INLINE int gshmemi_proxy_req_pe(const gshmemi_proxy_req_t *r) { return (int)(uint32_t)(r->arg[0] >> 32); }

/* ---- memory-model primitives, one device and one host form each ------------------------------ */
#ifdef __CUDA_ARCH__
/* System scope: the other side is the CPU, through pinned memory. */
static __device__ __forceinline__ uint64_t gshmemi_fifo_ld_acquire_sys(const volatile uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"((const void *)p) : "memory");
    return v;
}
static __device__ __forceinline__ uint64_t gshmemi_fifo_ld_relaxed_sys(const volatile uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"((const void *)p) : "memory");
    return v;
}
static __device__ __forceinline__ void gshmemi_fifo_st_release_sys(volatile uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"((void *)p), "l"(v) : "memory");
}
/* GPU scope: head_cache is shared by the producers of one GPU only. */
static __device__ __forceinline__ uint64_t gshmemi_fifo_ld_acquire_gpu(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
#endif

#ifdef __CUDA_ARCH__
/* 1 when this thread may read the pinned words now: no other waiter of this GPU is reading them
 * (it won poll_stamp, 0 -> 1). The winner reads, raises the cache, then gives the stamp back
 * with gshmemi_fifo_poll_done; nothing waits while holding it. */
static __device__ __forceinline__ int gshmemi_fifo_poll_gate(const gshmemi_proxy_fifo_t *f)
{
    return *(volatile uint64_t *)f->poll_stamp == 0 && atomicCAS((unsigned long long *)f->poll_stamp, 0ull, 1ull) == 0ull;
}
static __device__ __forceinline__ void gshmemi_fifo_poll_done(const gshmemi_proxy_fifo_t *f)
{
    atomicExch((unsigned long long *)f->poll_stamp, 0ull);
}
/* Raises a cache (done_cache) to v, a value read from its pinned word with an acquire
 * load: the release fence orders that load before the raise, so a producer that reads the cache
 * with an acquire load is ordered as if it had read the pinned word. */
static __device__ __forceinline__ void gshmemi_fifo_raise(uint64_t *cache, uint64_t v)
{
    __threadfence();
    atomicMax((unsigned long long *)cache, (unsigned long long)v);
}
#endif

/* ---- bounded waits ---------------------------------------------------------------------------- */
typedef struct gshmemi_fifo_waiter {
    uint64_t start; /* ns, 0 until the first miss */
    uint32_t spins;
} gshmemi_fifo_waiter_t;

GSHMEMI_HD_INLINE uint64_t gshmemi_fifo_now_ns(void)
{
#ifdef __CUDA_ARCH__
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/* One miss of a wait: 1 when timeout_ns has passed since the first miss, else backs off and 0.
 * The clock is read only once the condition has failed, so a wait that succeeds at once costs
 * no clock read. Device: __nanosleep doubling 32..1024 ns (yields the SM's issue slots to the
 * other warps), 8 us after 32 misses. Host: a few pause spins, then sched_yield (the producer
 * may share its core with the consumer). */
GSHMEMI_HD_INLINE int gshmemi_fifo_waiter_miss(const gshmemi_proxy_fifo_t *f, gshmemi_fifo_waiter_t *w)
{
    uint64_t now = gshmemi_fifo_now_ns();
    if (w->start == 0) w->start = now ? now : 1;
    else if (f->timeout_ns && now - w->start >= f->timeout_ns) return 1;
#ifdef __CUDA_ARCH__
    /* these loads cross the bus to host memory: thousands of threads waiting at 1 us each would
     * flood it and slow the proxy's own work, so a wait past ~30 us polls every 8 us */
    unsigned ns = w->spins < 32 ? 32u << (w->spins < 5 ? w->spins : 5) : 8192u;
    __nanosleep(ns);
#else
    if (w->spins < 16) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield" ::: "memory");
#endif
    } else {
        sched_yield();
    }
#endif
    w->spins++;
    return 0;
}

GSHMEMI_HD_INLINE uint64_t gshmemi_fifo_load_error(const gshmemi_proxy_fifo_t *f)
{
#ifdef __CUDA_ARCH__
    return gshmemi_fifo_ld_relaxed_sys(f->error);
#else
    return __atomic_load_n(f->error, __ATOMIC_RELAXED);
#endif
}

/* ---- producers (host and device) -------------------------------------------------------------- */

/* Out of line on the GPU: the loop of a full FIFO is cold, and inlined it would sit in the
 * middle of every caller's code (and of the P2P path that branches around it). */
#ifdef __CUDACC__
#define GSHMEMI_FIFO_COLD static __host__ __device__ __noinline__
#else
#define GSHMEMI_FIFO_COLD static inline
#endif

/* The slow half of gshmemi_fifo_wait_free: the FIFO looked full by head_cache = hc. */
GSHMEMI_FIFO_COLD int gshmemi_fifo_wait_free_slow(const gshmemi_proxy_fifo_t *f, uint64_t need, uint64_t hc)
{
    gshmemi_fifo_waiter_t w = {0, 0};
    for (;;) {
#ifdef __CUDA_ARCH__
        uint64_t h = gshmemi_fifo_ld_acquire_sys(f->head);
        if (h > hc) {
            /* release fence + atomic: a producer that later reads the cache (acquire) is ordered
             * after the consumer's reads of the slots this head frees, as if it had read head */
            __threadfence();
            atomicMax((unsigned long long *)f->head_cache, (unsigned long long)h);
            hc = h;
        }
#else
        uint64_t h = __atomic_load_n(f->head, __ATOMIC_ACQUIRE);
        if (h > hc) { /* atomic max, release: see the device form */
            uint64_t cur = __atomic_load_n(f->head_cache, __ATOMIC_RELAXED);
            while (cur < h && !__atomic_compare_exchange_n(f->head_cache, &cur, h, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            }
            hc = h;
        }
#endif
        if (need <= hc + f->size) return GSHMEMI_FIFO_OK;
        /* still full: a dead consumer would never free a slot */
        if (gshmemi_fifo_load_error(f)) return GSHMEMI_FIFO_FAILED;
        if (gshmemi_fifo_waiter_miss(f, &w)) return GSHMEMI_FIFO_TIMEOUT;
    }
}

/* A producers' cache word (head_cache, done_cache) with an acquire load: GPU scope on the GPU,
 * whose producers share it; the completion waits raise done_cache (the gate above). */
GSHMEMI_HD_INLINE uint64_t gshmemi_fifo_cache(const uint64_t *cache)
{
#ifdef __CUDA_ARCH__
    return gshmemi_fifo_ld_acquire_gpu(cache);
#else
    return __atomic_load_n(cache, __ATOMIC_ACQUIRE);
#endif
}
/* The same from hc, a value of head_cache read earlier (it only grows, so one that suffices
 * still does): a producer may read it before it takes its tickets, and the two round trips
 * overlap. */
GSHMEMI_HD_INLINE int gshmemi_fifo_wait_free_from(const gshmemi_proxy_fifo_t *f, uint64_t ticket, uint32_t n, uint64_t hc)
{
    const uint64_t need = ticket + n; /* free when need <= head + size */
    if (need <= hc + f->size) return GSHMEMI_FIFO_OK;
    return gshmemi_fifo_wait_free_slow(f, need, hc);
}
/* Waits until the n slots of tickets [ticket, ticket + n) are free: ticket + n <= head + size.
 * The second half of gshmemi_fifo_reserve, for a caller that owns those tickets (after a TIMEOUT
 * it may call this again). */
GSHMEMI_HD_INLINE int gshmemi_fifo_wait_free(const gshmemi_proxy_fifo_t *f, uint64_t ticket, uint32_t n)
{
    return gshmemi_fifo_wait_free_from(f, ticket, n, gshmemi_fifo_cache(f->head_cache));
}

/* Takes n consecutive tickets (*ticket = the first) and waits until their n slots are free.
 * The tickets are taken first (one atomic add, no retry loop under contention); the wait is
 * then per producer. INVALID, with nothing taken, for n = 0 or n > size. */
GSHMEMI_HD_INLINE int gshmemi_fifo_reserve(const gshmemi_proxy_fifo_t *f, uint32_t n, uint64_t *ticket)
{
    if (n == 0 || n > f->size) return GSHMEMI_FIFO_INVALID;
#ifdef __CUDA_ARCH__
    /* relaxed is enough: the ticket orders nothing, the slot's seq publishes */
    uint64_t t = atomicAdd((unsigned long long *)f->tail, (unsigned long long)n);
#else
    uint64_t t = __atomic_fetch_add(f->tail, (uint64_t)n, __ATOMIC_RELAXED);
#endif
    *ticket = t;
    return gshmemi_fifo_wait_free(f, t, n);
}

/* The tag of a ticket's words (see Ordering): 0x80 | (lap & 0x7f), in the top byte. */
GSHMEMI_HD_INLINE uint64_t gshmemi_fifo_tag(const gshmemi_proxy_fifo_t *f, uint64_t ticket)
{
#ifdef __CUDA_ARCH__
    const unsigned shift = (unsigned)__popc(f->size - 1);
#else
    const unsigned shift = (unsigned)__builtin_popcount(f->size - 1);
#endif
    return (0x80ull | ((ticket >> shift) & 0x7full)) << 56;
}

/* Word i of a slot: the 56 bits of the args' bit string from bit 56 i on, under the tag. */
GSHMEMI_HD_INLINE uint64_t gshmemi_fifo_pack(const uint64_t arg[GSHMEMI_PROXY_ARGS], int i, uint64_t tag)
{
    uint64_t bits;
    if (i == 0) bits = arg[0];
    else if (i == GSHMEMI_PROXY_WORDS - 1) bits = arg[GSHMEMI_PROXY_ARGS - 1] >> 8;
    else bits = arg[i - 1] >> (64 - 8 * i) | arg[i] << (8 * i);
    return (bits & GSHMEMI_PROXY_PAYLOAD_MASK) | tag;
}

/* Writes the request of a reserved ticket: eight tagged words, each its own store (no fence: see
 * Ordering). A device producer whose request makes the consumer read this GPU's memory (a put's
 * source) calls gshmemi_fifo_publish_data instead. */
GSHMEMI_HD_INLINE void gshmemi_fifo_publish(const gshmemi_proxy_fifo_t *f, uint64_t ticket, const uint64_t arg[GSHMEMI_PROXY_ARGS])
{
    gshmemi_proxy_slot_t *s = &f->slots[ticket & (f->size - 1)];
    const uint64_t tag = gshmemi_fifo_tag(f, ticket);
#ifdef __CUDA_ARCH__
    /* two words a store, each pair packed just before it (fewer values live at once) */
#pragma unroll
    for (int i = 0; i < GSHMEMI_PROXY_WORDS; i += 2)
        asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(&s->word[i]), "l"(gshmemi_fifo_pack(arg, i, tag)),
                     "l"(gshmemi_fifo_pack(arg, i + 1, tag))
                     : "memory");
#else
    /* a host producer's earlier writes (a host put's source) come before every word */
    for (int i = 0; i < GSHMEMI_PROXY_WORDS; i++) __atomic_store_n(&s->word[i], gshmemi_fifo_pack(arg, i, tag), __ATOMIC_RELEASE);
#endif
}

/* The same after a GPU-scope fence: this thread's earlier stores (and those of threads it synced
 * with) are in GPU memory before any word of the request leaves the SM. */
GSHMEMI_HD_INLINE void gshmemi_fifo_publish_data(const gshmemi_proxy_fifo_t *f, uint64_t ticket, const uint64_t arg[GSHMEMI_PROXY_ARGS])
{
#ifdef __CUDA_ARCH__
    __threadfence();
#endif
    gshmemi_fifo_publish(f, ticket, arg);
}

/* reserve(1) + publish: one request. */
GSHMEMI_HD_INLINE int gshmemi_fifo_post(const gshmemi_proxy_fifo_t *f, const uint64_t arg[GSHMEMI_PROXY_ARGS], uint64_t *ticket)
{
    int rc = gshmemi_fifo_reserve(f, 1, ticket);
    if (rc == GSHMEMI_FIFO_OK) gshmemi_fifo_publish(f, *ticket, arg);
    return rc;
}

/* Waits until *done > ticket (acquire: what the request wrote, e.g. a get's data, is then
 * visible). A request the consumer completed is OK even after a later failure; once *error is
 * set, every wait on a request not yet complete is FAILED (the consumer stops at the failure). */
GSHMEMI_HD_INLINE int gshmemi_fifo_wait_done(const gshmemi_proxy_fifo_t *f, uint64_t ticket)
{
    gshmemi_fifo_waiter_t w = {0, 0};
    for (;;) {
#ifdef __CUDA_ARCH__
        /* done_cache, or done itself through the gate (the top of this file) */
        uint64_t d = gshmemi_fifo_cache(f->done_cache), e = 0;
        if (d <= ticket && gshmemi_fifo_poll_gate(f)) {
            d = gshmemi_fifo_ld_acquire_sys(f->done);
            gshmemi_fifo_raise(f->done_cache, d);
            if (d <= ticket) e = gshmemi_fifo_load_error(f);
            gshmemi_fifo_poll_done(f);
        }
        if (d > ticket) return GSHMEMI_FIFO_OK;
        if (e) return GSHMEMI_FIFO_FAILED;
#else
        uint64_t d = __atomic_load_n(f->done, __ATOMIC_ACQUIRE);
        if (d > ticket) return GSHMEMI_FIFO_OK;
        if (gshmemi_fifo_load_error(f)) return GSHMEMI_FIFO_FAILED;
#endif
        if (gshmemi_fifo_waiter_miss(f, &w)) return GSHMEMI_FIFO_TIMEOUT;
    }
}

/* One read of the result of a fetching request, like a sequence lock: seq (acquire), value
 * (acquire), seq again; the value is ours only if seq read ticket + 1 both times. A seq above
 * ticket + 1 (or marked busy for a later ticket) means the slot went to a later request before
 * we read it: LOST, never a wrong value. PENDING: not written yet, or being written for us. The
 * consumer writes a result before it completes the request, so after gshmemi_fifo_wait_done
 * one read suffices (the device's way: its waits are then on the completion count alone). */
GSHMEMI_HD_INLINE int gshmemi_fifo_read_ret(const gshmemi_proxy_fifo_t *f, uint64_t ticket, uint64_t *value)
{
    gshmemi_proxy_ret_t *r = &f->ret[ticket & (f->size - 1)];
    const uint64_t mine = ticket + 1;
#ifdef __CUDA_ARCH__
    const uint64_t s = gshmemi_fifo_ld_acquire_sys(&r->seq);
#else
    const uint64_t s = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
#endif
    if (s == mine) {
#ifdef GSHMEMI_FIFO_TEST_RET_HOOK
        GSHMEMI_FIFO_TEST_RET_HOOK(f, ticket); /* a test's way into the window between the reads */
#endif
#ifdef __CUDA_ARCH__
        const uint64_t v = gshmemi_fifo_ld_acquire_sys(&r->value);
        const uint64_t s2 = gshmemi_fifo_ld_relaxed_sys(&r->seq);
#else
        const uint64_t v = __atomic_load_n(&r->value, __ATOMIC_ACQUIRE);
        const uint64_t s2 = __atomic_load_n(&r->seq, __ATOMIC_RELAXED);
#endif
        if (s2 != mine) return GSHMEMI_FIFO_LOST;
        *value = v;
        return GSHMEMI_FIFO_OK;
    }
    /* busy for our own ticket: being written; anything of a later ticket: lost */
    return (s & ~GSHMEMI_PROXY_RET_BUSY) > mine ? GSHMEMI_FIFO_LOST : GSHMEMI_FIFO_PENDING;
}

/* Waits for the result of a fetching request (gshmemi_fifo_read_ret until it is not PENDING).
 * FAILED / TIMEOUT as in wait_done. */
GSHMEMI_HD_INLINE int gshmemi_fifo_wait_ret(const gshmemi_proxy_fifo_t *f, uint64_t ticket, uint64_t *value)
{
    gshmemi_fifo_waiter_t w = {0, 0};
    for (;;) {
        const int st = gshmemi_fifo_read_ret(f, ticket, value);
        if (st != GSHMEMI_FIFO_PENDING) return st;
        if (gshmemi_fifo_load_error(f)) return GSHMEMI_FIFO_FAILED;
        if (gshmemi_fifo_waiter_miss(f, &w)) return GSHMEMI_FIFO_TIMEOUT;
    }
}

/* ---- consumer (host, one thread; plain static inline, so host only under nvcc) ---------------- */

/* 1 and the request if slot pos % size holds ticket pos (all eight words carry its tag), else 0.
 * Word 0 is read first, so a poll of an empty slot reads one word; the words stay put until head
 * passes pos. */
static inline int gshmemi_fifo_take(const gshmemi_proxy_fifo_t *f, uint64_t pos, gshmemi_proxy_req_t *out)
{
    const gshmemi_proxy_slot_t *s = &f->slots[pos & (f->size - 1)];
    const uint64_t tag = gshmemi_fifo_tag(f, pos);
    uint64_t w[GSHMEMI_PROXY_WORDS];
    for (int i = 0; i < GSHMEMI_PROXY_WORDS; i++) {
        w[i] = __atomic_load_n(&s->word[i], __ATOMIC_ACQUIRE);
        if ((w[i] & ~GSHMEMI_PROXY_PAYLOAD_MASK) != tag) return 0;
        w[i] &= GSHMEMI_PROXY_PAYLOAD_MASK;
    }
    for (int j = 0; j < GSHMEMI_PROXY_ARGS; j++) out->arg[j] = w[j] >> (8 * j) | w[j + 1] << (56 - 8 * j);
    out->seq = pos + 1;
    return 1;
}

/* *head = upto (release: this thread's reads of those slots come before any producer's reuse). */
static inline void gshmemi_fifo_release(const gshmemi_proxy_fifo_t *f, uint64_t upto)
{
    __atomic_store_n(f->head, upto, __ATOMIC_RELEASE);
}

/* *done = upto (release: the effects of the completed requests come before it). */
static inline void gshmemi_fifo_complete(const gshmemi_proxy_fifo_t *f, uint64_t upto)
{
    __atomic_store_n(f->done, upto, __ATOMIC_RELEASE);
}

/* The result of a fetching request. seq is first marked busy for this ticket; the value's
 * release store orders that mark before it, so a reader that sees the new value sees the mark
 * (or the final seq) on its second read of seq; then the release store of seq = ticket + 1. */
static inline void gshmemi_fifo_return(const gshmemi_proxy_fifo_t *f, uint64_t ticket, uint64_t value)
{
    gshmemi_proxy_ret_t *r = &f->ret[ticket & (f->size - 1)];
    __atomic_store_n(&r->seq, (ticket + 1) | GSHMEMI_PROXY_RET_BUSY, __ATOMIC_RELAXED);
    __atomic_store_n(&r->value, value, __ATOMIC_RELEASE);
    __atomic_store_n(&r->seq, ticket + 1, __ATOMIC_RELEASE);
}

/* *error = ticket + 1 (release). The first failure stays: it names the request that failed. */
static inline void gshmemi_fifo_fail(const gshmemi_proxy_fifo_t *f, uint64_t ticket)
{
    uint64_t zero = 0;
    __atomic_compare_exchange_n(f->error, &zero, ticket + 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* ---- one block holding a whole FIFO (tests, and the proxy's pinned allocation) ---------------- */

/* Byte offsets inside the block. head, done and error each have a line of their own (the
 * consumer writes them while producers poll), apart from the slots; tail, head_cache, done_cache
 * and poll_stamp too (the proxy puts those four in device memory for a GPU's producers and
 * ignores these offsets). */
typedef struct gshmemi_proxy_fifo_layout {
    size_t slots, ret, head, done, error, tail, head_cache, done_cache, poll_stamp;
    size_t bytes; /* the whole block, a multiple of 64 */
} gshmemi_proxy_fifo_layout_t;

/* 1 when size is a power of two in [1, 2^30]. */
static inline int gshmemi_fifo_size_ok(uint32_t size)
{
    return size != 0 && size <= (1u << 30) && (size & (size - 1)) == 0;
}

/* The layout for size slots (its bytes); 0, and *lay zeroed, when size is not a valid size. */
static inline size_t gshmemi_fifo_layout(uint32_t size, gshmemi_proxy_fifo_layout_t *lay)
{
    memset(lay, 0, sizeof *lay);
    if (!gshmemi_fifo_size_ok(size)) return 0;
    const size_t line = GSHMEMI_FIFO_LINE;
    gshmemi_proxy_fifo_layout_t l;
    l.slots = 0;
    l.ret = (size_t)size * sizeof(gshmemi_proxy_slot_t);
    l.head = l.ret + ((size_t)size * sizeof(gshmemi_proxy_ret_t) + line - 1) / line * line;
    l.done = l.head + line;
    l.error = l.done + line;
    l.tail = l.error + line;
    l.head_cache = l.tail + line;
    l.done_cache = l.head_cache + line;
    l.poll_stamp = l.done_cache + line;
    l.bytes = l.poll_stamp + line;
    *lay = l;
    return l.bytes;
}

/* Bytes of the block gshmemi_fifo_host_init lays out; 0 for a bad size. */
static inline size_t gshmemi_fifo_host_bytes(uint32_t size)
{
    gshmemi_proxy_fifo_layout_t l;
    return gshmemi_fifo_layout(size, &l);
}

/* Zeroes mem (gshmemi_fifo_host_bytes(size) bytes, 64-aligned) and points f's fields into it,
 * every pointer a host pointer (timeout_ns = 0: set it after). INVALID for a bad size or block. */
static inline int gshmemi_fifo_host_init(gshmemi_proxy_fifo_t *f, uint32_t size, void *mem)
{
    gshmemi_proxy_fifo_layout_t l;
    if (!f || !mem || ((uintptr_t)mem & (GSHMEMI_FIFO_LINE - 1)) || !gshmemi_fifo_layout(size, &l))
        return GSHMEMI_FIFO_INVALID;
    char *b = (char *)mem;
    memset(b, 0, l.bytes); /* a zero word carries no tag: every slot starts empty */
    f->slots = (gshmemi_proxy_slot_t *)(void *)(b + l.slots);
    f->ret = (gshmemi_proxy_ret_t *)(void *)(b + l.ret);
    f->tail = (uint64_t *)(void *)(b + l.tail);
    f->head_cache = (uint64_t *)(void *)(b + l.head_cache);
    f->done_cache = (uint64_t *)(void *)(b + l.done_cache);
    f->poll_stamp = (uint64_t *)(void *)(b + l.poll_stamp);
    f->head = (volatile uint64_t *)(void *)(b + l.head);
    f->done = (volatile uint64_t *)(void *)(b + l.done);
    f->error = (volatile uint64_t *)(void *)(b + l.error);
    f->size = size;
    f->pad_ = 0;
    f->timeout_ns = 0;
    return GSHMEMI_FIFO_OK;
}

#endif
