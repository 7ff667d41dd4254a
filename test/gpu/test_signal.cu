/* Signals and point-to-point synchronization: put_signal (SET/ADD, thread/warp/block, typed, _nbi)
 * from 1 B to 4 MiB with the data checked by a concurrently waiting consumer; a producer/consumer
 * ring of 10^6 messages between neighbours (2 x 10^5 through the emulated NIC); the wait_until/test
 * families against several writer PEs setting words in random order; host put_signal/fetch/wait;
 * and the on-stream forms captured in a CUDA graph and replayed. */
#include <string.h>
#include <time.h>

#include <vector>

#include "gpu_test.cuh"

static __device__ uint64_t gt_now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* Counts a failed device check and remembers the line of the first. */
#define DCHECK(err, cond)                                                                            \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            atomicAdd((err), 1);                                                                     \
            atomicCAS((err) + 1, 0, __LINE__);                                                       \
        }                                                                                            \
    } while (0)

static int *d_err;
static void check_errors(const char *what)
{
    int h[2];
    GT_CUDA(cudaMemcpy(h, d_err, sizeof(h), cudaMemcpyDeviceToHost));
    GT_CHECK(h[0] == 0, "%s: %d failed device checks, the first at test_signal.cu:%d", what, h[0], h[1]);
}

/* ---- 1. put_signal: block 0 sends to the next PE, block 1 waits for the previous PE's data ---- */
static const size_t type_size[] = {
#define TSIZE(name, T) sizeof(T),
    GSHMEM_RMA_TYPES(TSIZE)
#undef TSIZE
};
static const char *type_name[] = {
#define TNAME(name, T) #name,
    GSHMEM_RMA_TYPES(TNAME)
#undef TNAME
};
#define NTYPES (sizeof(type_size) / sizeof(type_size[0]))

static __device__ void typed_put_signal(int ti, void *dst, const void *src, size_t nelem, uint64_t *sig, uint64_t v,
                                        int op, int pe, int nbi)
{
    int i = 0;
#define TP(name, T)                                                                                               \
    if (ti == i++) {                                                                                              \
        if (nbi) shmem_##name##_put_signal_nbi((T *)dst, (const T *)src, nelem, sig, v, op, pe);                  \
        else shmem_##name##_put_signal((T *)dst, (const T *)src, nelem, sig, v, op, pe);                          \
    }
    GSHMEM_RMA_TYPES(TP)
#undef TP
}

enum { MODE_THREAD, MODE_WARP, MODE_BLOCK, MODE_TYPED, NMODES };
static const char *mode_name[] = {"thread", "warp", "block", "typed"};
#define GUARD 0xEE

static __global__ void put_signal_kernel(unsigned char *dst, const unsigned char *src, size_t bytes, int ti, size_t nelem,
                                         uint64_t *sig, uint64_t sigval, int op, int mode, int nbi, unsigned tag,
                                         int *err)
{
    const int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n, from = (me + n - 1) % n;
    if (blockIdx.x == 0) {
        if (mode == MODE_THREAD && threadIdx.x == 0) {
            if (nbi) shmem_putmem_signal_nbi(dst, src, bytes, sig, sigval, op, to);
            else shmem_putmem_signal(dst, src, bytes, sig, sigval, op, to);
        } else if (mode == MODE_WARP && threadIdx.x < 32) {
            if (nbi) shmemx_putmem_signal_nbi_warp(dst, src, bytes, sig, sigval, op, to);
            else shmemx_putmem_signal_warp(dst, src, bytes, sig, sigval, op, to);
        } else if (mode == MODE_BLOCK) {
            if (nbi) shmemx_putmem_signal_nbi_block(dst, src, bytes, sig, sigval, op, to);
            else shmemx_putmem_signal_block(dst, src, bytes, sig, sigval, op, to);
        } else if (mode == MODE_TYPED && threadIdx.x == 0) {
            typed_put_signal(ti, dst, src, nelem, sig, sigval, op, to, nbi);
        }
        if (nbi && threadIdx.x == 0) shmem_quiet();
        return;
    }
    __shared__ uint64_t got;
    if (threadIdx.x == 0) got = shmem_signal_wait_until(sig, SHMEM_CMP_GE, sigval);
    __syncthreads();
    if (threadIdx.x == 0) DCHECK(err, got == sigval);
    for (size_t i = threadIdx.x; i < bytes; i += blockDim.x) DCHECK(err, dst[i] == gt_pattern(from, i, tag));
    if (threadIdx.x == 0) DCHECK(err, dst[-1] == GUARD && dst[bytes] == GUARD);
}

/* ---- 2. producer/consumer ring: PE i -> PE i+1, a slot ring and a credit signal back ---- */
#define RING 64
static __global__ void ring_kernel(uint64_t *slots, uint64_t *slot_sig, uint64_t *credit, uint64_t *src, long rounds,
                                   int *err)
{
    const int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        for (long r = 0; r < rounds; r++) {
            const int s = (int)(r % RING);
            /* slot s last carried round r - RING: free once the consumer has taken that many */
            if (r >= RING) shmem_signal_wait_until(credit, SHMEM_CMP_GE, (uint64_t)(r - RING + 1));
            src[s] = (uint64_t)r;
            shmem_uint64_put_signal(slots + s, src + s, 1, slot_sig + s, (uint64_t)r + 1, SHMEM_SIGNAL_SET, next);
        }
    } else {
        for (long r = 0; r < rounds; r++) {
            const int s = (int)(r % RING);
            uint64_t v = shmem_signal_wait_until(slot_sig + s, SHMEM_CMP_GE, (uint64_t)r + 1);
            DCHECK(err, v == (uint64_t)r + 1); /* a skipped or repeated round */
            DCHECK(err, slots[s] == (uint64_t)r);
            shmemx_signal_op(credit, 1, SHMEM_SIGNAL_ADD, prev);
        }
    }
}

/* ---- 3. wait_until / test families: every PE writes its share of every PE's words ---- */
#define ROUNDS 9
template <typename T> __host__ __device__ T sval(int r, int j) { return (T)(r * 16 + j % 5); }

#define SYNC_OPS(name, T)                                                                                          \
    struct sync_##name {                                                                                           \
        typedef T type;                                                                                            \
        static __device__ void p(T *d, T v, int pe) { shmem_##name##_p(d, v, pe); }                                \
        static __device__ void wait_all(T *v, size_t n, const int *st, int c, T x) { shmem_##name##_wait_until_all(v, n, st, c, x); } \
        static __device__ size_t wait_any(T *v, size_t n, const int *st, int c, T x) { return shmem_##name##_wait_until_any(v, n, st, c, x); } \
        static __device__ size_t wait_some(T *v, size_t n, size_t *ix, const int *st, int c, T x) { return shmem_##name##_wait_until_some(v, n, ix, st, c, x); } \
        static __device__ void wait_all_v(T *v, size_t n, const int *st, int c, const T *x) { shmem_##name##_wait_until_all_vector(v, n, st, c, x); } \
        static __device__ size_t wait_any_v(T *v, size_t n, const int *st, int c, const T *x) { return shmem_##name##_wait_until_any_vector(v, n, st, c, x); } \
        static __device__ size_t wait_some_v(T *v, size_t n, size_t *ix, const int *st, int c, const T *x) { return shmem_##name##_wait_until_some_vector(v, n, ix, st, c, x); } \
        static __device__ int test(T *v, int c, T x) { return shmem_##name##_test(v, c, x); }                      \
        static __device__ int test_all(T *v, size_t n, const int *st, int c, T x) { return shmem_##name##_test_all(v, n, st, c, x); } \
        static __device__ size_t test_any(T *v, size_t n, const int *st, int c, T x) { return shmem_##name##_test_any(v, n, st, c, x); } \
        static __device__ size_t test_some(T *v, size_t n, size_t *ix, const int *st, int c, T x) { return shmem_##name##_test_some(v, n, ix, st, c, x); } \
        static __device__ int test_all_v(T *v, size_t n, const int *st, int c, const T *x) { return shmem_##name##_test_all_vector(v, n, st, c, x); } \
        static __device__ size_t test_any_v(T *v, size_t n, const int *st, int c, const T *x) { return shmem_##name##_test_any_vector(v, n, st, c, x); } \
        static __device__ size_t test_some_v(T *v, size_t n, size_t *ix, const int *st, int c, const T *x) { return shmem_##name##_test_some_vector(v, n, ix, st, c, x); } \
    };
GSHMEM_SYNC_TYPES(SYNC_OPS)

static __device__ unsigned hash32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
static __device__ unsigned gcd_u(unsigned a, unsigned b)
{
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Marks index i as collected (status[i] = 1) after checking it was not collected before and that
 * it really satisfies the condition. */
template <typename T>
static __device__ void collect(T *ivars, int K, int *status, size_t i, int r, int *err, int *got)
{
    DCHECK(err, i < (size_t)K);
    if (i >= (size_t)K) return;
    DCHECK(err, status[i] == 0);
    DCHECK(err, ivars[i] == sval<T>(r, (int)i));
    status[i] = 1;
    (*got)++;
}

template <class O>
static __global__ void sync_kernel(typename O::type *ivars, uint64_t *go, int K, int *status, int *mask, size_t *idx,
                                   typename O::type *cmpv, int *err)
{
    typedef typename O::type T;
    const int me = shmem_my_pe(), n = shmem_n_pes();
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        /* writer: round r sets the words j = me (mod n) of every PE to sval(r, j), in a random
         * order with random gaps, once every PE has asked for round r */
        const int M = (K - me + n - 1) / n;
        for (int r = 1; r <= ROUNDS; r++) {
            shmem_uint64_wait_until_all(go, (size_t)n, NULL, SHMEM_CMP_GE, (uint64_t)r);
            for (int tt = 0; tt < n; tt++) {
                const int t = (me + tt) % n;
                unsigned h = hash32((unsigned)(r * 7919 + me * 131 + t));
                unsigned step = 1 + h % (unsigned)M, off = hash32(h) % (unsigned)M;
                while (gcd_u(step, (unsigned)M) != 1) step++;
                for (int m = 0; m < M; m++) {
                    const int j = me + n * (int)((off + (unsigned)m * step) % (unsigned)M);
                    O::p(ivars + j, sval<T>(r, j), t);
                    uint64_t t0 = gt_now(), gap = hash32(h + m) % 3000;
                    while (gt_now() - t0 < gap) {
                    }
                }
            }
        }
        return;
    }
    /* receiver */
    int got;
    const uint64_t limit = 60ull * 1000000000ull;
    for (int i = 0; i < K; i++) mask[i] = 1;
    /* nothing written yet */
    DCHECK(err, O::test_any(ivars, K, NULL, SHMEM_CMP_GE, sval<T>(1, 0)) == SIZE_MAX);
    DCHECK(err, O::test_some(ivars, K, idx, NULL, SHMEM_CMP_GE, sval<T>(1, 0)) == 0);
    DCHECK(err, O::test_all(ivars, K, NULL, SHMEM_CMP_GE, sval<T>(1, 0)) == 0);
    DCHECK(err, O::test(ivars, SHMEM_CMP_GE, sval<T>(1, 0)) == 0);
    DCHECK(err, O::test(ivars, SHMEM_CMP_EQ, (T)0) == 1);
    DCHECK(err, O::test_all(ivars, K, NULL, SHMEM_CMP_EQ, (T)0) == 1);
    DCHECK(err, O::test_all(ivars, K, NULL, SHMEM_CMP_LT, (T)1) == 1);
    DCHECK(err, O::test_any(ivars, K, NULL, SHMEM_CMP_NE, (T)1) == 0);
    /* every element excluded, or none at all */
    DCHECK(err, O::test_all(ivars, K, mask, SHMEM_CMP_GE, sval<T>(1, 0)) == 1);
    DCHECK(err, O::test_any(ivars, K, mask, SHMEM_CMP_EQ, (T)0) == SIZE_MAX);
    DCHECK(err, O::test_some(ivars, K, idx, mask, SHMEM_CMP_EQ, (T)0) == 0);
    DCHECK(err, O::wait_any(ivars, K, mask, SHMEM_CMP_GE, sval<T>(1, 0)) == SIZE_MAX);
    DCHECK(err, O::wait_some(ivars, K, idx, mask, SHMEM_CMP_GE, sval<T>(1, 0)) == 0);
    O::wait_all(ivars, K, mask, SHMEM_CMP_GE, sval<T>(1, 0)); /* returns at once */
    DCHECK(err, O::wait_any(ivars, 0, NULL, SHMEM_CMP_EQ, (T)0) == SIZE_MAX);
    DCHECK(err, O::test_all(ivars, 0, NULL, SHMEM_CMP_GE, sval<T>(1, 0)) == 1);

    for (int r = 1; r <= ROUNDS; r++) {
        const T lo = sval<T>(r, 0); /* every word of round r is >= lo, and < the next round's */
        for (int i = 0; i < K; i++) {
            status[i] = 0;
            cmpv[i] = sval<T>(r, i);
        }
        for (int pe = 0; pe < n; pe++) shmemx_signal_op(go + me, (uint64_t)r, SHMEM_SIGNAL_SET, pe);
        got = 0;
        uint64_t t0 = gt_now();
        switch (r) {
        case 1: /* wait_until_any, excluding what it returned */
            while (got < K) collect(ivars, K, status, O::wait_any(ivars, K, status, SHMEM_CMP_GE, lo), r, err, &got);
            DCHECK(err, O::wait_any(ivars, K, status, SHMEM_CMP_GE, lo) == SIZE_MAX);
            break;
        case 2: /* wait_until_some */
            while (got < K) {
                size_t c = O::wait_some(ivars, K, idx, status, SHMEM_CMP_GE, lo);
                DCHECK(err, c >= 1 && c <= (size_t)(K - got));
                for (size_t q = 0; q < c && q < (size_t)K; q++) collect(ivars, K, status, idx[q], r, err, &got);
                if (c == 0) break;
            }
            break;
        case 3: /* wait_until_all: the even words first (odd ones excluded), then all */
            for (int i = 0; i < K; i++) mask[i] = i % 2;
            O::wait_all(ivars, K, mask, SHMEM_CMP_GE, lo);
            for (int i = 0; i < K; i += 2) DCHECK(err, ivars[i] == sval<T>(r, i));
            O::wait_all(ivars, K, NULL, SHMEM_CMP_GE, lo);
            DCHECK(err, O::test_all(ivars, K, NULL, SHMEM_CMP_GE, lo) == 1);
            DCHECK(err, O::test_any(ivars, K, NULL, SHMEM_CMP_GE, lo) == 0);
            DCHECK(err, O::test_some(ivars, K, idx, NULL, SHMEM_CMP_GE, lo) == (size_t)K);
            for (int i = 0; i < K; i++) DCHECK(err, idx[i] == (size_t)i);
            got = K;
            break;
        case 4: /* wait_until_all_vector, every word its own value */
            O::wait_all_v(ivars, K, NULL, SHMEM_CMP_EQ, cmpv);
            got = K;
            break;
        case 5:
            while (got < K) collect(ivars, K, status, O::wait_any_v(ivars, K, status, SHMEM_CMP_EQ, cmpv), r, err, &got);
            break;
        case 6:
            while (got < K) {
                size_t c = O::wait_some_v(ivars, K, idx, status, SHMEM_CMP_EQ, cmpv);
                DCHECK(err, c >= 1);
                for (size_t q = 0; q < c && q < (size_t)K; q++) collect(ivars, K, status, idx[q], r, err, &got);
                if (c == 0) break;
            }
            break;
        case 7: /* polling with test_all_vector */
            while (!O::test_all_v(ivars, K, NULL, SHMEM_CMP_EQ, cmpv) && gt_now() - t0 < limit) {
            }
            got = K;
            break;
        case 8: /* polling with test_any_vector, then test (single word) */
            while (got < K && gt_now() - t0 < limit) {
                size_t i = O::test_any_v(ivars, K, status, SHMEM_CMP_EQ, cmpv);
                if (i != SIZE_MAX) collect(ivars, K, status, i, r, err, &got);
            }
            for (int i = 0; i < K; i++) DCHECK(err, O::test(ivars + i, SHMEM_CMP_EQ, sval<T>(r, i)) == 1);
            break;
        default: /* polling with test_some_vector */
            while (got < K && gt_now() - t0 < limit) {
                size_t c = O::test_some_v(ivars, K, idx, status, SHMEM_CMP_EQ, cmpv);
                for (size_t q = 0; q < c && q < (size_t)K; q++) collect(ivars, K, status, idx[q], r, err, &got);
            }
            break;
        }
        DCHECK(err, got == K);
        /* writers cannot start round r+1 before this PE asks: every word holds round r's value */
        for (int i = 0; i < K; i++) DCHECK(err, ivars[i] == sval<T>(r, i));
    }
}

/* ---- 5. on-stream forms, captured in a graph ---- */
static __global__ void fill_round_kernel(unsigned char *p, size_t n, const int *round)
{
    const int me = shmem_my_pe();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = gt_pattern(me, i, 5000u + (unsigned)*round);
}
static __global__ void check_round_kernel(const unsigned char *p, size_t n, const int *round, int *err)
{
    const int from = (shmem_my_pe() + shmem_n_pes() - 1) % shmem_n_pes();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        DCHECK(err, p[i] == gt_pattern(from, i, 5000u + (unsigned)*round));
}
/* Consumed: clear our signal, tell the previous PE its data is taken. */
static __global__ void ack_kernel(uint64_t *sig, int *ack)
{
    const int prev = (shmem_my_pe() + shmem_n_pes() - 1) % shmem_n_pes();
    *(volatile uint64_t *)sig = 0;
    __threadfence_system();
    shmem_int_atomic_set(ack, 1, prev);
}
static __global__ void next_round_kernel(int *ack, int *round)
{
    *(volatile int *)ack = 0;
    (*round)++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    /* quick mode: put_signal up to 64 KiB, 2000 ring messages, 4 graph replays */
    const int quick = gt_quick();
    GT_CUDA(cudaMalloc((void **)&d_err, 2 * sizeof(int)));
    GT_CUDA(cudaMemset(d_err, 0, 2 * sizeof(int)));

    /* 1. put_signal: sizes 1 B .. 4 MiB, SET/ADD, thread/warp/block/typed, blocking/_nbi */
    const size_t maxb = 4u << 20, slack = 64;
    unsigned char *dbuf = (unsigned char *)shmem_malloc(maxb + 2 * slack);
    unsigned char *sbuf = (unsigned char *)shmem_malloc(maxb + 2 * slack);
    const int maxcases = 1024;
    uint64_t *sigs = (uint64_t *)shmem_calloc(maxcases, sizeof(uint64_t));
    GT_CHECK(dbuf && sbuf && sigs, "shmem_malloc failed");
    std::vector<size_t> sizes;
    for (size_t s = 1; s <= maxb; s *= 2) sizes.push_back(s);
    sizes.push_back(3);
    sizes.push_back(1000);
    sizes.push_back(65537);
    sizes.push_back(maxb - 1);
    int ncase = 0;
    size_t largest = 0;
    for (size_t size : sizes) {
        if (quick && size > 65537) continue;
        largest = size > largest ? size : largest;
        for (int mode = 0; mode < NMODES; mode++) {
            for (int nbi = 0; nbi < 2; nbi++) {
                for (int op = 0; op < 2; op++, ncase++) {
                    GT_CHECK(ncase < maxcases, "too many cases");
                    const int ti = ncase % (int)NTYPES;
                    size_t bytes = size, nelem = 0, dalign = 16, salign = 16;
                    if (mode == MODE_TYPED) {
                        nelem = size / type_size[ti] ? size / type_size[ti] : 1;
                        bytes = nelem * type_size[ti];
                    } else if (size <= 65537) {
                        dalign += ncase % 7; /* misaligned and mutually misaligned copies */
                        salign += ncase % 5;
                    }
                    unsigned char *dst = dbuf + dalign, *src = sbuf + salign;
                    const unsigned tag = (unsigned)ncase;
                    const uint64_t sigval = op == SHMEM_SIGNAL_SET ? 0x1234567800000000ull + ncase : (uint64_t)ncase + 1;
                    GT_CUDA(cudaMemset(dbuf, GUARD, maxb + 2 * slack));
                    gt_fill<<<264, 512>>>(src, bytes, me, tag);
                    GT_CUDA(cudaGetLastError());
                    GT_CUDA(cudaDeviceSynchronize());
                    shmem_barrier_all();
                    put_signal_kernel<<<2, 256>>>(dst, src, bytes, ti, nelem, sigs + ncase, sigval, op, mode, nbi, tag,
                                                   d_err);
                    GT_CUDA(cudaGetLastError());
                    GT_CUDA(cudaDeviceSynchronize());
                    int h[2];
                    GT_CUDA(cudaMemcpy(h, d_err, sizeof(h), cudaMemcpyDeviceToHost));
                    GT_CHECK(h[0] == 0, "put_signal %s%s %s of %zu bytes%s%s: %d wrong bytes/signal (first check at line %d)",
                             mode_name[mode], nbi ? " _nbi" : "", op ? "ADD" : "SET", bytes,
                             mode == MODE_TYPED ? " as " : "", mode == MODE_TYPED ? type_name[ti] : "", h[0], h[1]);
                    shmem_barrier_all();
                }
            }
        }
    }
    if (me == 0) printf("ok put_signal: %d cases (1 B .. %zu B, SET/ADD, thread/warp/block/typed, blocking/_nbi), data checked after the signal\n", ncase, largest);

    /* host put_signal, signal_fetch, signal_wait_until */
    {
        const size_t hb = 100000;
        std::vector<unsigned char> hsrc(hb), hdst(hb);
        for (size_t i = 0; i < hb; i++) hsrc[i] = gt_pattern(me, i, 777);
        uint64_t *hsig = sigs + maxcases - 1;
        GT_CUDA(cudaMemset(hsig, 0, 8));
        shmem_barrier_all();
        shmem_putmem_signal(dbuf, hsrc.data(), hb, hsig, 7, SHMEM_SIGNAL_SET, next);
        GT_CHECK(shmem_signal_wait_until(hsig, SHMEM_CMP_EQ, 7) == 7, "host signal_wait_until");
        GT_CUDA(cudaMemcpy(hdst.data(), dbuf, hb, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < hb; i++) GT_CHECK(hdst[i] == gt_pattern(prev, i, 777), "host put_signal: byte %zu", i);
        GT_CHECK(shmem_signal_fetch(hsig) == 7, "host signal_fetch");
        shmem_barrier_all();
        shmem_putmem_signal_nbi(dbuf, hsrc.data(), 8, hsig, 5, SHMEM_SIGNAL_ADD, next);
        shmem_quiet();
        shmemx_signal_op(hsig, 30, SHMEM_SIGNAL_ADD, next);
        GT_CHECK(shmem_signal_wait_until(hsig, SHMEM_CMP_GE, 42) == 42, "host ADD signals");
        shmem_barrier_all();
        if (me == 0) printf("ok host put_signal (SET, ADD, _nbi), signal_op, signal_fetch, signal_wait_until\n");
    }

    /* 2. producer/consumer ring */
    {
        /* the emulated NIC (a host thread executing each work request) carries far fewer
         * messages a second than P2P or the proxy: a fifth of the ring's rounds keep it within
         * the same bound */
        const char *nic = getenv("GSHMEM_IBGDA_NIC");
        const bool emulated = nic && !strcmp(nic, "emulated");
        const long rounds = quick ? 2000 : emulated ? 200000 : 1000000;
        const double limit_s = quick ? 300 : 60; /* a sanitizer's slowdown is not a defect */
        uint64_t *slots = (uint64_t *)shmem_calloc(3 * RING + 1, sizeof(uint64_t));
        uint64_t *src;
        GT_CHECK(slots, "shmem_calloc failed");
        GT_CUDA(cudaMalloc((void **)&src, RING * sizeof(uint64_t)));
        shmem_barrier_all();
        double t0 = now_s();
        ring_kernel<<<2, 32>>>(slots, slots + RING, slots + 2 * RING, src, rounds, d_err);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        double dt = now_s() - t0;
        check_errors("producer/consumer ring");
        GT_CHECK(dt < limit_s, "producer/consumer ring took %.1f s", dt);
        /* this PE's credit is raised by the next PE's consumer, which may still be running */
        shmem_barrier_all();
        uint64_t credit = 0;
        GT_CUDA(cudaMemcpy(&credit, slots + 2 * RING, 8, cudaMemcpyDeviceToHost));
        GT_CHECK(credit == (uint64_t)rounds, "credit %llu after %ld rounds", (unsigned long long)credit, rounds);
        shmem_barrier_all();
        if (me == 0) printf("ok producer/consumer: %ld messages PE i -> i+1 through a %d-slot ring, none lost or repeated (%.2f s)\n", rounds, RING, dt);
        GT_CUDA(cudaFree(src));
        shmem_free(slots);
    }

    /* 3. wait_until / test families for every point-to-point sync type */
    {
        const int K = 4 * n + 3;
        void *ivars = shmem_calloc((size_t)K, 8);
        uint64_t *go = (uint64_t *)shmem_calloc((size_t)n, sizeof(uint64_t));
        int *status, *mask;
        size_t *idx;
        void *cmpv;
        GT_CHECK(ivars && go, "shmem_calloc failed");
        GT_CUDA(cudaMalloc((void **)&status, K * sizeof(int)));
        GT_CUDA(cudaMalloc((void **)&mask, K * sizeof(int)));
        GT_CUDA(cudaMalloc((void **)&idx, K * sizeof(size_t)));
        GT_CUDA(cudaMalloc(&cmpv, K * 8));
        int ntypes = 0;
#define RUN_SYNC(name, T)                                                                                          \
    GT_CUDA(cudaMemset(ivars, 0, (size_t)K * 8));                                                                  \
    GT_CUDA(cudaMemset(go, 0, (size_t)n * 8));                                                                     \
    GT_CUDA(cudaDeviceSynchronize());                                                                              \
    shmem_barrier_all();                                                                                           \
    sync_kernel<sync_##name><<<2, 32>>>((T *)ivars, go, K, status, mask, idx, (T *)cmpv, d_err);                   \
    GT_CUDA(cudaGetLastError());                                                                                   \
    GT_CUDA(cudaDeviceSynchronize());                                                                              \
    check_errors("wait_until/test families, type " #name);                                                         \
    {                                                                                                              \
        std::vector<T> hv(K);                                                                                      \
        GT_CUDA(cudaMemcpy(hv.data(), ivars, K * sizeof(T), cudaMemcpyDeviceToHost));                              \
        for (int j = 0; j < K; j++) GT_CHECK(hv[j] == sval<T>(ROUNDS, j), #name ": final word %d", j);            \
    }                                                                                                              \
    shmem_barrier_all();                                                                                           \
    ntypes++;
        GSHMEM_SYNC_TYPES(RUN_SYNC)
#undef RUN_SYNC
        if (me == 0) printf("ok wait_until_all/any/some[_vector], test/test_all/any/some[_vector]: %d types, %d words written by %d PEs in random order, %d rounds\n", ntypes, K, n, ROUNDS);
        gt_cuda_free(status, mask, idx, cmpv);
        gt_shmem_free(go, ivars);
    }

    /* 5. on-stream: put_signal, signal wait and int wait captured in a graph and replayed */
    {
        const size_t gb = 1u << 20;
        const int replays = quick ? 4 : 20;
        cudaStream_t s;
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        uint64_t *gsig = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
        int *ack = (int *)shmem_calloc(1, sizeof(int)), *round;
        GT_CHECK(gsig && ack, "shmem_calloc failed");
        GT_CUDA(cudaMalloc((void **)&round, sizeof(int)));
        GT_CUDA(cudaMemset(round, 0, sizeof(int)));
        GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        GT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        fill_round_kernel<<<132, 256, 0, s>>>(sbuf, gb, round);
        shmemx_putmem_signal_on_stream(dbuf, sbuf, gb, gsig, 1, SHMEM_SIGNAL_ADD, next, s);
        shmemx_signal_wait_until_on_stream(gsig, SHMEM_CMP_EQ, 1, s);
        check_round_kernel<<<132, 256, 0, s>>>(dbuf, gb, round, d_err);
        ack_kernel<<<1, 1, 0, s>>>(gsig, ack);
        shmemx_int_wait_until_on_stream(ack, SHMEM_CMP_EQ, 1, s);
        next_round_kernel<<<1, 1, 0, s>>>(ack, round);
        shmemx_barrier_all_on_stream(s);
        GT_CUDA(cudaStreamEndCapture(s, &graph));
        GT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        for (int i = 0; i < replays; i++) GT_CUDA(cudaGraphLaunch(exec, s));
        GT_CUDA(cudaStreamSynchronize(s));
        check_errors("on-stream graph");
        int hr = 0;
        GT_CUDA(cudaMemcpy(&hr, round, sizeof(int), cudaMemcpyDeviceToHost));
        GT_CHECK(hr == replays, "on-stream graph: %d rounds completed, expected %d", hr, replays);
        shmem_barrier_all();
        if (me == 0) printf("ok on-stream: putmem_signal_on_stream + signal_wait_until_on_stream + int_wait_until_on_stream in a CUDA graph, %d replays of 1 MiB checked\n", replays);
        GT_CUDA(cudaGraphExecDestroy(exec));
        GT_CUDA(cudaGraphDestroy(graph));
        GT_CUDA(cudaStreamDestroy(s));
        GT_CUDA(cudaFree(round));
        gt_shmem_free(ack, gsig);
    }

    gt_shmem_free(sigs, sbuf, dbuf);
    shmem_finalize();
    return 0;
}
