/* Atomics: every routine x every type of its family from a device thread and from the host, each
 * checked against a host reference; contention from a 132x256 grid on every PE (exact sums, the
 * fetched values a permutation); a compare_swap spin lock; bitwise set/clear of one bit per PE;
 * host AMOs from every PE, including the plain C entry points of libgshmem. */
#include <dlfcn.h>
#include <string.h>

#include <vector>

#include "gpu_test.cuh"

/* ---- one sequence per family, run on a device thread, on the host, and on a reference ---- */
struct fam_std {};
struct fam_ext {};
struct fam_bit {};

/* k-th operand of PE pe: large values so that the high halves of 8-byte words take part. */
template <typename T> __host__ __device__ T tval(int k, int pe)
{
    if ((T)0.5 != (T)0) return (T)(k * 1.25 + pe + 0.5);
    return (T)((unsigned long long)(k + 1) * 0x9E3779B97F4A7C15ull + (unsigned long long)pe * 977ull);
}
/* Integer arithmetic wraps (as the hardware does) instead of overflowing a signed type. */
template <typename T> __host__ __device__ T wrap_add(T a, T b) { return (T)((unsigned long long)a + (unsigned long long)b); }

/* The sequences return how many values they fetched into out[]. */
template <class O, typename T> __host__ __device__ int run_seq(fam_std, O &o, T *out, int pe)
{
    int k = 0;
    T f;
    o.set(tval<T>(0, pe));
    out[k++] = o.fetch();
    out[k++] = o.swap(tval<T>(1, pe));
    out[k++] = o.cswap(wrap_add(tval<T>(1, pe), (T)1), tval<T>(2, pe)); /* fails */
    out[k++] = o.cswap(tval<T>(1, pe), tval<T>(2, pe));                 /* succeeds */
    out[k++] = o.fetch_inc();
    o.inc();
    out[k++] = o.fetch_add(tval<T>(3, pe));
    o.add(tval<T>(4, pe));
    o.fetch_nbi(&f);
    out[k++] = f;
    o.swap_nbi(&f, tval<T>(5, pe));
    out[k++] = f;
    o.cswap_nbi(&f, tval<T>(5, pe), tval<T>(6, pe));
    out[k++] = f;
    o.fetch_inc_nbi(&f);
    out[k++] = f;
    o.fetch_add_nbi(&f, tval<T>(7, pe));
    out[k++] = f;
    out[k++] = o.fetch();
    return k;
}
template <class O, typename T> __host__ __device__ int run_seq(fam_ext, O &o, T *out, int pe)
{
    int k = 0;
    T f;
    o.set(tval<T>(0, pe));
    out[k++] = o.fetch();
    out[k++] = o.swap(tval<T>(1, pe));
    o.fetch_nbi(&f);
    out[k++] = f;
    o.swap_nbi(&f, tval<T>(2, pe));
    out[k++] = f;
    out[k++] = o.fetch();
    return k;
}
template <class O, typename T> __host__ __device__ int run_seq(fam_bit, O &o, T *out, int pe)
{
    int k = 0;
    T f;
    o.set(tval<T>(0, pe));
    out[k++] = o.fetch_and(tval<T>(1, pe));
    o.and_(tval<T>(2, pe));
    out[k++] = o.fetch_or(tval<T>(3, pe));
    o.or_(tval<T>(4, pe));
    out[k++] = o.fetch_xor(tval<T>(5, pe));
    o.xor_(tval<T>(6, pe));
    o.fetch_and_nbi(&f, tval<T>(7, pe));
    out[k++] = f;
    o.fetch_or_nbi(&f, tval<T>(8, pe));
    out[k++] = f;
    o.fetch_xor_nbi(&f, tval<T>(9, pe));
    out[k++] = f;
    out[k++] = o.fetch();
    return k;
}

#define HD __host__ __device__
/* The reference: the same operations on a local value. */
template <typename T> struct ref_ops {
    T v;
    HD void set(T x) { v = x; }
    HD T fetch() { return v; }
    HD T swap(T x) { T o = v; v = x; return o; }
    HD T cswap(T c, T x) { T o = v; if (v == c) v = x; return o; }
    HD T fetch_inc() { T o = v; v = wrap_add(v, (T)1); return o; }
    HD void inc() { v = wrap_add(v, (T)1); }
    HD T fetch_add(T x) { T o = v; v = wrap_add(v, x); return o; }
    HD void add(T x) { v = wrap_add(v, x); }
    HD T fetch_and(T x) { T o = v; v = (T)(v & x); return o; }
    HD void and_(T x) { v = (T)(v & x); }
    HD T fetch_or(T x) { T o = v; v = (T)(v | x); return o; }
    HD void or_(T x) { v = (T)(v | x); }
    HD T fetch_xor(T x) { T o = v; v = (T)(v ^ x); return o; }
    HD void xor_(T x) { v = (T)(v ^ x); }
    HD void fetch_nbi(T *f) { *f = v; }
    HD void swap_nbi(T *f, T x) { *f = swap(x); }
    HD void cswap_nbi(T *f, T c, T x) { *f = cswap(c, x); }
    HD void fetch_inc_nbi(T *f) { *f = fetch_inc(); }
    HD void fetch_add_nbi(T *f, T x) { *f = fetch_add(x); }
    HD void fetch_and_nbi(T *f, T x) { *f = fetch_and(x); }
    HD void fetch_or_nbi(T *f, T x) { *f = fetch_or(x); }
    HD void fetch_xor_nbi(T *f, T x) { *f = fetch_xor(x); }
};

/* The API under test on word d of PE pe: __host__ __device__, so one struct serves both sides. */
#define EXT_MEMBERS(name, T)                                                                         \
    T *d;                                                                                            \
    int pe;                                                                                          \
    HD void set(T x) { shmem_##name##_atomic_set(d, x, pe); }                                        \
    HD T fetch() { return shmem_##name##_atomic_fetch(d, pe); }                                      \
    HD T swap(T x) { return shmem_##name##_atomic_swap(d, x, pe); }                                  \
    HD void fetch_nbi(T *f) { shmem_##name##_atomic_fetch_nbi(f, d, pe); shmem_quiet(); }            \
    HD void swap_nbi(T *f, T x) { shmem_##name##_atomic_swap_nbi(f, d, x, pe); shmem_quiet(); }
#define STD_OPS(name, T)                                                                             \
    struct std_##name {                                                                              \
        typedef T type;                                                                              \
        typedef fam_std family;                                                                      \
        EXT_MEMBERS(name, T)                                                                         \
        HD T cswap(T c, T x) { return shmem_##name##_atomic_compare_swap(d, c, x, pe); }             \
        HD T fetch_inc() { return shmem_##name##_atomic_fetch_inc(d, pe); }                          \
        HD void inc() { shmem_##name##_atomic_inc(d, pe); }                                          \
        HD T fetch_add(T x) { return shmem_##name##_atomic_fetch_add(d, x, pe); }                    \
        HD void add(T x) { shmem_##name##_atomic_add(d, x, pe); }                                    \
        HD void cswap_nbi(T *f, T c, T x) { shmem_##name##_atomic_compare_swap_nbi(f, d, c, x, pe); shmem_quiet(); } \
        HD void fetch_inc_nbi(T *f) { shmem_##name##_atomic_fetch_inc_nbi(f, d, pe); shmem_quiet(); } \
        HD void fetch_add_nbi(T *f, T x) { shmem_##name##_atomic_fetch_add_nbi(f, d, x, pe); shmem_quiet(); } \
    };
#define EXT_OPS(name, T)                                                                             \
    struct ext_##name {                                                                              \
        typedef T type;                                                                              \
        typedef fam_ext family;                                                                      \
        EXT_MEMBERS(name, T)                                                                         \
    };
#define BIT_OPS(name, T)                                                                             \
    struct bit_##name {                                                                              \
        typedef T type;                                                                              \
        typedef fam_bit family;                                                                      \
        EXT_MEMBERS(name, T)                                                                         \
        HD T fetch_and(T x) { return shmem_##name##_atomic_fetch_and(d, x, pe); }                    \
        HD void and_(T x) { shmem_##name##_atomic_and(d, x, pe); }                                   \
        HD T fetch_or(T x) { return shmem_##name##_atomic_fetch_or(d, x, pe); }                      \
        HD void or_(T x) { shmem_##name##_atomic_or(d, x, pe); }                                     \
        HD T fetch_xor(T x) { return shmem_##name##_atomic_fetch_xor(d, x, pe); }                    \
        HD void xor_(T x) { shmem_##name##_atomic_xor(d, x, pe); }                                   \
        HD void fetch_and_nbi(T *f, T x) { shmem_##name##_atomic_fetch_and_nbi(f, d, x, pe); shmem_quiet(); } \
        HD void fetch_or_nbi(T *f, T x) { shmem_##name##_atomic_fetch_or_nbi(f, d, x, pe); shmem_quiet(); } \
        HD void fetch_xor_nbi(T *f, T x) { shmem_##name##_atomic_fetch_xor_nbi(f, d, x, pe); shmem_quiet(); } \
    };
GSHMEM_AMO_TYPES(STD_OPS)
EXT_OPS(float, float)
EXT_OPS(double, double)
GSHMEM_AMO_BITWISE_TYPES(BIT_OPS)

#define MAX_SEQ 32
#define SLOTS 8 /* 8-byte slots per PE in the word array: [0] device, [1] host */

template <class O> __global__ void seq_kernel(uint64_t *words, typename O::type *out, int target, int *count)
{
    O o;
    o.d = (typename O::type *)(words + (size_t)shmem_my_pe() * SLOTS);
    o.pe = target;
    *count = run_seq(typename O::family(), o, out, shmem_my_pe());
}

static int *d_count;
static void *d_out;
static uint64_t *g_words;
static int g_ops;

/* Runs family sequence O from a device thread and from the host; checks every fetched value and
 * the final word (read by the target PE) against the reference. */
template <class O> static void check_seq(const char *tname)
{
    typedef typename O::type T;
    const int me = shmem_my_pe(), n = shmem_n_pes(), target = (me + 1) % n, src = (me + n - 1) % n;
    T got[MAX_SEQ], want[MAX_SEQ];
    int k = 0;

    for (int side = 0; side < 2; side++) {
        GT_CUDA(cudaMemset(g_words, 0, (size_t)n * SLOTS * 8));
        shmem_barrier_all();
        if (side == 0) {
            seq_kernel<O><<<1, 1>>>(g_words, (T *)d_out, target, d_count);
            GT_CUDA(cudaGetLastError());
            GT_CUDA(cudaDeviceSynchronize());
            GT_CUDA(cudaMemcpy(&k, d_count, sizeof(int), cudaMemcpyDeviceToHost));
            GT_CUDA(cudaMemcpy(got, d_out, k * sizeof(T), cudaMemcpyDeviceToHost));
        } else {
            O o;
            o.d = (T *)(g_words + (size_t)me * SLOTS + 1);
            o.pe = target;
            k = run_seq(typename O::family(), o, got, me);
        }
        ref_ops<T> r;
        memset(&r, 0, sizeof(r));
        int kr = run_seq(typename O::family(), r, want, me);
        GT_CHECK(k == kr, "%s: %d fetched values, reference %d", tname, k, kr);
        for (int i = 0; i < k; i++)
            GT_CHECK(memcmp(&got[i], &want[i], sizeof(T)) == 0, "%s (%s): fetched value %d differs from the reference",
                     tname, side ? "host" : "device", i);
        g_ops += k;
        shmem_barrier_all();
        /* The word PE src operated on here ends as src's reference ends. */
        ref_ops<T> rs;
        memset(&rs, 0, sizeof(rs));
        run_seq(typename O::family(), rs, want, src);
        T fin;
        GT_CUDA(cudaMemcpy(&fin, g_words + (size_t)src * SLOTS + side, sizeof(T), cudaMemcpyDeviceToHost));
        GT_CHECK(memcmp(&fin, &rs.v, sizeof(T)) == 0, "%s (%s): final word from PE %d differs from the reference", tname,
                 side ? "host" : "device", src);
        shmem_barrier_all();
    }
}

/* ---- contention ---- */
static __device__ uint64_t gt_now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __global__ void contention_kernel(int *sum, unsigned long long *ticket, unsigned *bitmap, unsigned long long total,
                                         int target, int *errors)
{
    shmem_int_atomic_add(sum, 1, target);
    unsigned long long f = shmem_ulonglong_atomic_fetch_add(ticket, 1ull, target);
    if (f >= total) {
        atomicAdd(errors, 1);
        return;
    }
    unsigned bit = 1u << (f % 32);
    if (shmem_uint_atomic_fetch_or(bitmap + f / 32, bit, target) & bit) atomicAdd(errors, 1); /* a duplicate */
}

/* One thread of every CTA takes the lock, does a non-atomic read-modify-write, and releases. */
static __global__ void lock_kernel(int *lock, int *counter, int iters, int target, int *errors)
{
    if (threadIdx.x != 0) return;
    for (int i = 0; i < iters; i++) {
        uint64_t t0 = gt_now();
        while (shmem_int_atomic_compare_swap(lock, 0, 1, target) != 0) {
            if (gt_now() - t0 > 60ull * 1000000000ull) {
                atomicAdd(errors, 1000000);
                return;
            }
        }
        __threadfence_system(); /* acquire: the critical section reads after the lock is ours */
        int c = shmem_int_g(counter, target);
        shmem_int_p(counter, c + 1, target);
        __threadfence_system(); /* release: the store is out before the lock is free */
        if (shmem_int_atomic_swap(lock, 0, target) != 1) atomicAdd(errors, 1);
    }
}

/* Each PE owns bit me of a bit array on the target. */
static __global__ void bits_kernel(uint64_t *bits, int phase, int target, int *errors)
{
    const int me = shmem_my_pe();
    uint64_t *w = bits + me / 64, b = 1ull << (me % 64), f;
    switch (phase) {
    case 0: shmem_uint64_atomic_or(w, b, target); break;
    case 1: if (!(shmem_uint64_atomic_fetch_xor(w, b, target) & b)) atomicAdd(errors, 1); break;
    case 2:
        shmem_uint64_atomic_fetch_or_nbi(&f, w, b, target);
        shmem_quiet();
        if (f & b) atomicAdd(errors, 1);
        break;
    case 3: if (!(shmem_uint64_atomic_fetch_and(w, ~b, target) & b)) atomicAdd(errors, 1); break;
    case 4: shmem_uint64_atomic_xor(w, b, target); break;
    default: shmem_uint64_atomic_and(w, ~b, target); break;
    }
}

static int read_errors(int *d_err)
{
    int h = 0;
    GT_CUDA(cudaMemcpy(&h, d_err, sizeof(int), cudaMemcpyDeviceToHost));
    GT_CUDA(cudaMemset(d_err, 0, sizeof(int)));
    return h;
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    int *d_err;

    GT_CUDA(cudaMalloc((void **)&d_count, sizeof(int)));
    GT_CUDA(cudaMalloc(&d_out, MAX_SEQ * 8));
    GT_CUDA(cudaMalloc((void **)&d_err, sizeof(int)));
    GT_CUDA(cudaMemset(d_err, 0, sizeof(int)));
    g_words = (uint64_t *)shmem_calloc((size_t)n * SLOTS, 8);
    GT_CHECK(g_words, "shmem_calloc failed");

    /* 1. every routine x every type, device thread and host, against the reference */
#define RUN_STD(name, T) check_seq<std_##name>(#name);
#define RUN_BIT(name, T) check_seq<bit_##name>(#name);
    g_ops = 0;
    GSHMEM_AMO_TYPES(RUN_STD)
    if (me == 0) printf("ok standard AMOs (compare_swap, fetch_inc, inc, fetch_add, add, _nbi) x 12 types, device and host: %d values checked\n", g_ops);
    g_ops = 0;
    check_seq<ext_float>("float");
    check_seq<ext_double>("double");
    if (me == 0) printf("ok extended AMOs (fetch, set, swap, _nbi) incl. float and double, device and host: %d values checked\n", g_ops);
    g_ops = 0;
    GSHMEM_AMO_BITWISE_TYPES(RUN_BIT)
    if (me == 0) printf("ok bitwise AMOs (fetch_and/and/fetch_or/or/fetch_xor/xor, _nbi) x 7 types, device and host: %d values checked\n", g_ops);

    /* 2. contention: 132x256 threads (16x256 in quick mode, or where a peer is remote: each of its
     * atomics is a request the proxy completes in turn) on every PE against one word of one PE */
    const int quick = gt_quick() || gt_remote_peers(g_words) > 0, ctas = quick ? 16 : 132;
    const unsigned long long total = (unsigned long long)ctas * 256ull * (unsigned long long)n;
    const size_t nmap = (size_t)(total / 32);
    int *sum = (int *)shmem_calloc(1, sizeof(int));
    unsigned long long *ticket = (unsigned long long *)shmem_calloc(1, sizeof(unsigned long long));
    unsigned *bitmap = (unsigned *)shmem_calloc(nmap, sizeof(unsigned));
    GT_CHECK(sum && ticket && bitmap, "shmem_calloc failed");
    int targets[2] = {0, n - 1};
    for (int ti = 0; ti < (n > 1 ? 2 : 1); ti++) {
        const int target = targets[ti];
        GT_CUDA(cudaMemset(sum, 0, sizeof(int)));
        GT_CUDA(cudaMemset(ticket, 0, 8));
        GT_CUDA(cudaMemset(bitmap, 0, nmap * sizeof(unsigned)));
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        contention_kernel<<<ctas, 256>>>(sum, ticket, bitmap, total, target, d_err);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        GT_CHECK(read_errors(d_err) == 0, "contention: fetched values out of range or duplicated (target PE %d)", target);
        shmem_barrier_all();
        if (me == target) {
            int hs = 0;
            unsigned long long ht = 0;
            std::vector<unsigned> map(nmap);
            GT_CUDA(cudaMemcpy(&hs, sum, sizeof(int), cudaMemcpyDeviceToHost));
            GT_CUDA(cudaMemcpy(&ht, ticket, 8, cudaMemcpyDeviceToHost));
            GT_CUDA(cudaMemcpy(map.data(), bitmap, nmap * sizeof(unsigned), cudaMemcpyDeviceToHost));
            GT_CHECK(hs == (int)total, "contention: sum %d, expected %llu", hs, total);
            GT_CHECK(ht == total, "contention: ticket %llu, expected %llu", ht, total);
            for (size_t i = 0; i < nmap; i++)
                GT_CHECK(map[i] == 0xffffffffu, "contention: fetched values are not a permutation (bitmap word %zu = %08x)", i, map[i]);
        }
        shmem_barrier_all();
    }
    if (me == 0) printf("ok contention: %llu threads x (add + fetch_add) on one word, exact sums, fetched values a permutation\n", total);

    /* 3. compare_swap spin lock around a non-atomic counter */
    int *lock = (int *)shmem_calloc(2, sizeof(int));
    GT_CHECK(lock, "shmem_calloc failed");
    /* a lock handed between time-sliced PEs waits for a context switch: few sections in quick mode */
    const int iters = quick ? 2 : 20;
    lock_kernel<<<ctas, 32>>>(lock, lock + 1, iters, 0, d_err);
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaDeviceSynchronize());
    GT_CHECK(read_errors(d_err) == 0, "spin lock: lock not held at release, or a lock wait passed 60 s");
    shmem_barrier_all();
    if (me == 0) {
        int h[2];
        GT_CUDA(cudaMemcpy(h, lock, sizeof(h), cudaMemcpyDeviceToHost));
        GT_CHECK(h[1] == ctas * iters * n && h[0] == 0, "spin lock: counter %d (expected %d), lock %d", h[1], ctas * iters * n, h[0]);
        printf("ok compare_swap spin lock: %d critical sections from %d PEs, no lost update\n", h[1], n);
    }
    shmem_barrier_all();

    /* 4. bitwise: each PE sets and clears its own bit */
    const int nwords = (n + 63) / 64;
    uint64_t *bits = (uint64_t *)shmem_calloc((size_t)nwords, 8);
    GT_CHECK(bits, "shmem_calloc failed");
    for (int phase = 0; phase < 6; phase++) {
        const int target = phase % n;
        bits_kernel<<<1, 1>>>(bits, phase, target, d_err);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        GT_CHECK(read_errors(d_err) == 0, "bitwise phase %d: a fetched word missed this PE's bit state", phase);
        shmem_barrier_all();
        if (me == target) {
            std::vector<uint64_t> h(nwords);
            GT_CUDA(cudaMemcpy(h.data(), bits, nwords * 8, cudaMemcpyDeviceToHost));
            const int set = phase % 2 == 0;
            for (int p = 0; p < n; p++)
                GT_CHECK(((h[p / 64] >> (p % 64)) & 1) == (uint64_t)set, "bitwise phase %d: bit of PE %d is %d", phase, p, !set);
            for (int p = n; p < nwords * 64; p++) GT_CHECK(((h[p / 64] >> (p % 64)) & 1) == 0, "bitwise: stray bit %d", p);
            /* the next phase works on the next target: move the state there */
            if (phase + 1 < 6 && (phase + 1) % n != me) {
                GT_CUDA(cudaMemset(bits, 0, nwords * 8));
                shmem_uint64_put(bits, h.data(), nwords, (phase + 1) % n);
            }
        }
        shmem_barrier_all();
    }
    if (me == 0) printf("ok bitwise: %d PEs set/clear their own bit with or/xor/and (fetching, non-fetching, _nbi)\n", n);

    /* 5. host AMOs from every PE, some through the plain C entry points */
    typedef long (*c_fetch_add_t)(long *, long, int);
    typedef int (*c_cswap_t)(int *, int, int, int);
    c_fetch_add_t c_fetch_add = (c_fetch_add_t)dlsym(RTLD_DEFAULT, "shmem_long_atomic_fetch_add");
    c_cswap_t c_cswap = (c_cswap_t)dlsym(RTLD_DEFAULT, "shmem_int_atomic_compare_swap");
    GT_CHECK(c_fetch_add && c_cswap, "libgshmem does not export the C atomics");
    const int K = 64;
    long *hctr = (long *)shmem_calloc(1, sizeof(long));
    long *hall = (long *)shmem_calloc((size_t)n * K, sizeof(long));
    int *hres = (int *)shmem_calloc((size_t)n * 3 + 2, sizeof(int)); /* cswap results, swap results, cswap word, swap word */
    double *dw = (double *)shmem_calloc((size_t)n, sizeof(double));
    GT_CHECK(hctr && hall && hres && dw, "shmem_calloc failed");
    std::vector<long> mine(K);
    for (int i = 0; i < K; i++) mine[i] = (i % 2) ? c_fetch_add(hctr, 1, 0) : shmem_long_atomic_fetch_add(hctr, 1, 0);
    shmem_long_put(hall + (size_t)me * K, mine.data(), K, 0);
    int *cword = hres + 2 * n, *sword = hres + 2 * n + 1;
    int cr = c_cswap(cword, 0, me + 1, 0);
    int sr = shmem_int_atomic_swap(sword, me + 1, 0);
    shmem_int_p(hres + me, cr, 0);
    shmem_int_p(hres + n + me, sr, 0);
    shmem_double_atomic_set(dw + me, me + 0.25, (me + 1) % n);
    shmem_barrier_all();
    GT_CHECK(shmem_double_atomic_fetch(dw + me, (me + 1) % n) == me + 0.25, "host double set/fetch");
    GT_CHECK(shmem_double_atomic_swap(dw + me, -1.5, (me + 1) % n) == me + 0.25, "host double swap");
    int nb = -1;
    shmem_int_atomic_fetch_nbi(&nb, sword, 0);
    GT_CHECK(nb >= 1 && nb <= n, "host fetch_nbi into host memory: %d", nb);
    if (me == 0) {
        std::vector<long> all((size_t)n * K);
        std::vector<int> res((size_t)n * 3 + 2);
        long ctr = 0;
        GT_CUDA(cudaMemcpy(all.data(), hall, all.size() * sizeof(long), cudaMemcpyDeviceToHost));
        GT_CUDA(cudaMemcpy(res.data(), hres, res.size() * sizeof(int), cudaMemcpyDeviceToHost));
        GT_CUDA(cudaMemcpy(&ctr, hctr, sizeof(long), cudaMemcpyDeviceToHost));
        GT_CHECK(ctr == (long)n * K, "host fetch_add: counter %ld, expected %d", ctr, n * K);
        std::vector<char> seen((size_t)n * K, 0);
        for (long v : all) {
            GT_CHECK(v >= 0 && v < (long)n * K && !seen[v], "host fetch_add: fetched %ld twice or out of range", v);
            seen[v] = 1;
        }
        int winners = 0, winner = -1;
        for (int p = 0; p < n; p++)
            if (res[p] == 0) winners++, winner = p;
        GT_CHECK(winners == 1, "host compare_swap: %d winners", winners);
        for (int p = 0; p < n; p++) GT_CHECK(p == winner || res[p] == winner + 1, "host compare_swap: PE %d saw %d", p, res[p]);
        GT_CHECK(res[2 * n] == winner + 1, "host compare_swap: final %d", res[2 * n]);
        std::vector<int> chain(n + 1, 0);
        for (int p = 0; p < n; p++) chain[res[n + p]]++;
        chain[res[2 * n + 1]]++;
        for (int v = 0; v <= n; v++) GT_CHECK(chain[v] == 1, "host swap: value %d seen %d times", v, chain[v]);
        printf("ok host AMOs from %d PEs: fetch_add (C and inline) permutation, compare_swap one winner, swap chain, double set/fetch/swap\n", n);
    }
    shmem_barrier_all();

    shmem_free(dw);
    shmem_free(hres);
    shmem_free(hall);
    shmem_free(hctr);
    shmem_free(bits);
    shmem_free(lock);
    shmem_free(bitmap);
    shmem_free(ticket);
    shmem_free(sum);
    shmem_free(g_words);
    shmem_finalize();
    return 0;
}
