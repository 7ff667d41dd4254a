/* Teams and collectives, checked against a host reference: team creation and bad arguments,
 * every reduction (operator, type) on stream, on the host and from a block, every data-moving
 * collective over several sizes and teams, device barrier/sync forms, the grid form, 1000
 * back-to-back calls, and two disjoint teams at once from two streams. GSHMEM_COLL_PROTO (set by
 * the caller) forces LL, LL128, SIMPLE or DIRECT for the whole run. */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "gpu_test.cuh"

static int me, npes;
static cudaStream_t s1, s2;
static int failures;
/* GSHMEM_TEST_QUICK: fewer rounds and calls, smaller large cases; each protocol (LL, LL128,
 * DIRECT, push) is still reached */
static int quick;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "PE %d: FAILED %s: ", me, #cond);                                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                     \
            if (++failures > 20) shmem_global_exit(1);                                             \
        }                                                                                          \
    } while (0)

/* ---- the value member `pe` holds at element i: small, so sums and products of up to 8 PEs stay
 * exact in every type, and never all equal, so min/max/and/or/xor are all tested ---- */
template <typename T> static __host__ __device__ T value_of(int pe, size_t i, int op)
{
    unsigned v = (unsigned)(pe * 7 + i * 3 + (i >> 7)) % 11 + 1;
    if (op == GSHMEMI_OP_PROD) v = (unsigned)((pe + i) % 3 == 0) + 1;
    return (T)(float)v;
}
template <> __host__ __device__ unsigned char value_of<unsigned char>(int pe, size_t i, int op)
{
    return op == GSHMEMI_OP_PROD ? (unsigned char)(((pe + i) % 3 == 0) + 1) : (unsigned char)((pe * 37 + i * 11) & 0x7f);
}

template <typename T> static __global__ void fill_kernel(T *p, size_t n, int pe, int op)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = value_of<T>(pe, i, op);
}

/* The reduction the test expects, worked out apart from the device code: every value is a small
 * integer (value_of), so the exact result, folded in a wide type, is what any correct combining
 * gives, wrapped to T's width for the integer kinds (as the device's T-wide arithmetic wraps).
 * half and bfloat16 take it through float, as the device converts: round to nearest even. */
template <typename T> static T expect_reduce(int op, const std::vector<T> &v)
{
    if constexpr (std::is_integral<T>::value) {
        long long r = (long long)v[0];
        for (size_t m = 1; m < v.size(); m++) {
            const long long x = (long long)v[m];
            switch (op) {
            case GSHMEMI_OP_AND: r &= x; break;
            case GSHMEMI_OP_OR: r |= x; break;
            case GSHMEMI_OP_XOR: r ^= x; break;
            case GSHMEMI_OP_MIN: r = std::min(r, x); break;
            case GSHMEMI_OP_MAX: r = std::max(r, x); break;
            case GSHMEMI_OP_SUM: r += x; break;
            default: r *= x; break;
            }
        }
        return (T)(unsigned long long)r;
    } else {
        double r = (double)(float)v[0];
        for (size_t m = 1; m < v.size(); m++) {
            const double x = (double)(float)v[m];
            switch (op) {
            case GSHMEMI_OP_MIN: r = std::min(r, x); break;
            case GSHMEMI_OP_MAX: r = std::max(r, x); break;
            case GSHMEMI_OP_SUM: r += x; break;
            default: r *= x; break;
            }
        }
        return T((float)r);
    }
}

/* Team membership as the test computes it: world PEs of members, in team order. */
struct team_info {
    shmem_team_t team;
    std::vector<int> pes;
    const char *name;
};

static int index_in(const team_info &t, int pe)
{
    for (size_t i = 0; i < t.pes.size(); i++)
        if (t.pes[i] == pe) return (int)i;
    return -1;
}

/* ---- reductions: one (op, type) on stream and on the host ---- */
enum { REDUCE = 0, REDUCESCATTER = 1, REDUCE_IN_PLACE = 2 }; /* check_reduce's `scatter` */
template <int OP, typename T>
static void check_reduce(const team_info &t, const char *name, int (*on_stream)(shmem_team_t, T *, const T *, size_t, cudaStream_t),
                         int (*host)(shmem_team_t, T *, const T *, size_t), size_t n, int scatter)
{
    /* every PE allocates (a world collective); only members call and check */
    const int idx = index_in(t, me), tn = (int)t.pes.size();
    const size_t ns = scatter == REDUCESCATTER ? n * tn : n;
    T *src = (T *)shmem_malloc(ns * sizeof(T));
    T *dest = scatter == REDUCE_IN_PLACE ? src : (T *)shmem_malloc(n * sizeof(T) + 16);
    std::vector<T> got(n), want(n);

    fill_kernel<T><<<64, 256>>>(src, ns, me, OP);
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaDeviceSynchronize());
    std::vector<T> vals(tn);
    for (size_t i = 0; i < n && idx >= 0; i++) {
        size_t at = scatter == REDUCESCATTER ? (size_t)idx * n + i : i;
        for (int m = 0; m < tn; m++) vals[m] = value_of<T>(t.pes[m], at, OP);
        want[i] = expect_reduce<T>(OP, vals);
    }
    for (int form = 0; form < 2; form++) {
        if (scatter == REDUCE_IN_PLACE) fill_kernel<T><<<64, 256>>>(src, ns, me, OP); /* the last form's result */
        else GT_CUDA(cudaMemset(dest, 0, n * sizeof(T)));
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        if (idx < 0) continue;
        int rc = form == 0 ? on_stream(t.team, dest, src, n, s1) : host(t.team, dest, src, n);
        EXPECT(rc == 0, "%s (%s form) on %s returned %d", name, form ? "host" : "on_stream", t.name, rc);
        GT_CUDA(cudaStreamSynchronize(s1));
        GT_CUDA(cudaMemcpy(got.data(), dest, n * sizeof(T), cudaMemcpyDeviceToHost));
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (memcmp(&got[i], &want[i], sizeof(T)) != 0 && bad++ == 0) first = i;
        EXPECT(bad == 0, "%s (%s form) on %s, %zu elements: %zu wrong, first at %zu", name, form ? "host" : "on_stream", t.name,
               n, bad, first);
    }
    shmem_barrier_all();
    shmem_free(src);
    if (dest != src) shmem_free(dest);
}

#define REDUCE_ONE(op, OPC, name, T, DT)                                                                               \
    if (!only || strcmp(only, #name #op) == 0) {                                                                      \
        check_reduce<OPC, T>(t, "shmem_" #name #op "_reduce", shmemx_##name##op##_reduce_on_stream,                     \
                             shmem_##name##op##_reduce, n, REDUCE);                                                     \
        if (n < 100000)                                                                                               \
            check_reduce<OPC, T>(t, "shmem_" #name #op "_reducescatter", shmemx_##name##op##_reducescatter_on_stream,   \
                                 shmem_##name##op##_reducescatter, n, REDUCESCATTER);                                   \
    }

static void all_reductions(const team_info &t, size_t n, const char *only)
{
    GSHMEM_REDUCE_PAIRS(REDUCE_ONE)
    GSHMEM_REDUCE_EXT_PAIRS(REDUCE_ONE)
}

/* ---- data movement ---- */
static __global__ void pattern_kernel(unsigned char *p, size_t n, int pe, unsigned tag)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = gt_pattern(pe, i, tag);
}

static void pattern(unsigned char *p, size_t n, int pe, unsigned tag)
{
    pattern_kernel<<<264, 256>>>(p, n, pe, tag);
    GT_CUDA(cudaGetLastError());
}

/* Compares [p, p+n) with the pattern of (pe, tag) starting at pattern index off. */
static size_t diff_pattern(const std::vector<unsigned char> &h, size_t at, size_t n, int pe, size_t off, unsigned tag)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += h[at + i] != gt_pattern(pe, off + i, tag);
    return bad;
}

/* kind: 0 broadcast, 1 fcollect, 2 collect, 3 alltoall, 4 alltoalls; es: element size (1, 4, 8). */
static void check_move(const team_info &t, int kind, size_t nelems, size_t es, int stream_form)
{
    static const char *names[] = {"broadcast", "fcollect", "collect", "alltoall", "alltoalls"};
    const int idx = index_in(t, me), tn = (int)t.pes.size();
    const unsigned tag = (unsigned)(kind * 131 + nelems * 7 + es);
    const ptrdiff_t dst = 2, sst = 3;
    size_t blk = nelems * es, sbytes, dbytes;
    /* collect: member m contributes nelems + m elements */
    size_t mine = kind == 2 ? (nelems + (idx < 0 ? 0 : idx)) * es : blk, total_c = 0;
    for (int m = 0; m < tn; m++) total_c += (nelems + m) * es;
    switch (kind) {
    case 0: sbytes = dbytes = blk; break;
    case 1: sbytes = blk, dbytes = tn * blk; break;
    case 2: sbytes = mine, dbytes = total_c; break;
    case 3: sbytes = dbytes = tn * blk; break;
    default: sbytes = ((tn * nelems - 1) * sst + 1) * es, dbytes = ((tn * nelems - 1) * dst + 1) * es; break;
    }
    unsigned char *src = (unsigned char *)shmem_malloc(sbytes + 1), *dest = (unsigned char *)shmem_malloc(dbytes + 1);
    pattern(src, sbytes, me, tag);
    GT_CUDA(cudaMemset(dest, 0xEE, dbytes + 1));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    int root = tn > 1 ? 1 : 0, rc;
    cudaStream_t st = stream_form ? s1 : 0;
    if (idx < 0) { /* not a member: only the world collectives around the call */
        shmem_barrier_all();
        shmem_free(src);
        shmem_free(dest);
        return;
    }
    size_t ne = kind == 2 ? mine / es : nelems;
    /* the element size picks the typed routine, the same bytes either way */
#define MOVE_CALL(T, FN, ...) (stream_form ? shmemx_##T##_##FN##_on_stream(t.team, __VA_ARGS__, st) : shmem_##T##_##FN(t.team, __VA_ARGS__))
#define MOVE_BY_SIZE(FN, ...)                                                                                          \
    (es == 1 ? MOVE_CALL(char, FN, (char *)dest, (const char *)src, __VA_ARGS__)                                       \
             : es == 4 ? MOVE_CALL(int, FN, (int *)dest, (const int *)src, __VA_ARGS__)                                \
                       : MOVE_CALL(double, FN, (double *)dest, (const double *)src, __VA_ARGS__))
    switch (kind) {
    case 0: rc = MOVE_BY_SIZE(broadcast, ne, root); break;
    case 1: rc = MOVE_BY_SIZE(fcollect, ne); break;
    case 2: rc = MOVE_BY_SIZE(collect, ne); break;
    case 3: rc = MOVE_BY_SIZE(alltoall, ne); break;
    default: rc = MOVE_BY_SIZE(alltoalls, dst, sst, ne); break;
    }
    EXPECT(rc == 0, "%s on %s returned %d", names[kind], t.name, rc);
    GT_CUDA(cudaDeviceSynchronize());
    std::vector<unsigned char> h(dbytes + 1);
    GT_CUDA(cudaMemcpy(h.data(), dest, dbytes + 1, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    switch (kind) {
    case 0: bad = diff_pattern(h, 0, blk, t.pes[root], 0, tag); break;
    case 1:
        for (int m = 0; m < tn; m++) bad += diff_pattern(h, m * blk, blk, t.pes[m], 0, tag);
        break;
    case 2: {
        size_t at = 0;
        for (int m = 0; m < tn; m++) {
            bad += diff_pattern(h, at, (nelems + m) * es, t.pes[m], 0, tag);
            at += (nelems + m) * es;
        }
        break;
    }
    case 3:
        for (int m = 0; m < tn; m++) bad += diff_pattern(h, m * blk, blk, t.pes[m], (size_t)idx * blk, tag);
        break;
    default:
        for (int m = 0; m < tn; m++)
            for (size_t k = 0; k < nelems; k++) {
                size_t d = ((m * nelems + k) * dst) * es, s = ((idx * nelems + k) * sst) * es;
                bad += diff_pattern(h, d, es, t.pes[m], s, tag);
                /* the gaps of a strided destination stay untouched */
                if (k + 1 < nelems || m + 1 < tn)
                    for (size_t g = es; g < (size_t)dst * es; g++) bad += h[d + g] != 0xEE;
            }
        break;
    }
    bad += h[dbytes] != 0xEE; /* nothing past the end */
    EXPECT(bad == 0, "%s (%s) on %s, %zu elements of %zu bytes: %zu wrong bytes", names[kind], stream_form ? "on_stream" : "host",
           t.name, nelems, es, bad);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dest);
}

/* ---- device forms ---- */
static __global__ void device_forms_kernel(shmem_team_t team, int *dest, const int *src, size_t n, int scope, int *rc)
{
    int r = 0;
    if (scope == 0) {
        if (threadIdx.x == 0) r = shmem_int_sum_reduce(team, dest, src, n);
    } else if (scope == 1) {
        if (threadIdx.x < 32) r = shmemx_int_sum_reduce_warp(team, dest, src, n);
    } else {
        r = shmemx_int_sum_reduce_block(team, dest, src, n);
    }
    if (r) atomicAdd(rc, 1);
}

static __global__ void grid_kernel(shmem_team_t team, float *dest, const float *src, size_t n, int *rc)
{
    if (shmemx_float_sum_reduce_grid(team, dest, src, n)) atomicAdd(rc, 1);
}

/* rounds reductions in one launch, round r into dest + r * n: the grid meets after each, and the
 * team's grid word is reused by every meeting of this and later launches */
static __global__ void grid_rounds_kernel(shmem_team_t team, float *dest, const float *src, size_t n, int rounds, int *rc)
{
    for (int r = 0; r < rounds; r++)
        if (shmemx_float_sum_reduce_grid(team, dest + (size_t)r * n, src, n)) atomicAdd(rc, 1);
}

/* Ring test of device barrier/sync: each round every PE writes the round number to its right
 * neighbour, syncs, and must see the left neighbour's value. */
static __global__ void barrier_rounds_kernel(shmem_team_t team, int *word, int rounds, int scope, int use_sync, int *errors)
{
    const int n = shmem_team_n_pes(team), i = shmem_team_my_pe(team);
    const int right = shmem_team_translate_pe(team, (i + 1) % n, SHMEM_TEAM_WORLD);
    for (int r = 1; r <= rounds; r++) {
        if (threadIdx.x == 0) {
            shmem_int_p(word, r, right);
            if (use_sync) shmem_quiet(); /* sync orders nothing by itself */
        }
        if (scope == 0) {
            if (threadIdx.x == 0) use_sync ? shmem_sync(team) : shmem_barrier(team);
            __syncthreads();
        } else if (scope == 1) {
            if (threadIdx.x < 32) use_sync ? shmemx_sync_warp(team) : shmemx_barrier_warp(team);
            __syncthreads();
        } else {
            use_sync ? shmemx_sync_block(team) : shmemx_barrier_block(team);
        }
        if (threadIdx.x == 0 && *(volatile int *)word != r) atomicAdd(errors, 1);
        if (threadIdx.x == 0) shmem_barrier(team);
        __syncthreads();
    }
}

static __global__ void accumulate_kernel(long long *acc, const int *v, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) acc[i] += v[i];
}
static __global__ void set_kernel(int *p, size_t n, int v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v + (int)(i % 3);
}

/* 1000 back-to-back reductions on one stream with no host wait in between; the sum of all results
 * must be exact. */
static void back_to_back(const team_info &t, size_t n, cudaStream_t st)
{
    const int tn = (int)t.pes.size(), calls = quick ? 50 : 1000;
    int *src = (int *)shmem_malloc(n * sizeof(int)), *dest = (int *)shmem_malloc(n * sizeof(int));
    long long *acc;
    GT_CUDA(cudaMalloc((void **)&acc, n * sizeof(long long)));
    GT_CUDA(cudaMemset(acc, 0, n * sizeof(long long)));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    for (int k = 1; k <= calls; k++) {
        set_kernel<<<32, 256, 0, st>>>(src, n, k * (me + 1));
        EXPECT(shmemx_int_sum_reduce_on_stream(t.team, dest, src, n, st) == 0, "back-to-back call %d", k);
        accumulate_kernel<<<32, 256, 0, st>>>(acc, dest, n);
    }
    GT_CUDA(cudaStreamSynchronize(st));
    std::vector<long long> h(n);
    GT_CUDA(cudaMemcpy(h.data(), acc, n * sizeof(long long), cudaMemcpyDeviceToHost));
    long long pesum = 0;
    for (int m = 0; m < tn; m++) pesum += t.pes[m] + 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        long long want = pesum * (long long)calls * (calls + 1) / 2 + (long long)(i % 3) * tn * calls;
        bad += h[i] != want;
    }
    EXPECT(bad == 0, "%d back-to-back sum reductions of %zu ints on %s: %zu wrong sums", calls, n, t.name, bad);
    GT_CUDA(cudaFree(acc));
    shmem_free(src);
    shmem_free(dest);
}

static team_info make_strided(shmem_team_t parent_team, const team_info &parent, int start, int stride, int size, const char *name)
{
    team_info t;
    t.name = name;
    int rc = shmem_team_split_strided(parent_team, start, stride, size, NULL, 0, &t.team);
    EXPECT(rc == 0, "split_strided(%d, %d, %d) of %s returned %d", start, stride, size, parent.name, rc);
    for (int i = 0; i < size; i++) t.pes.push_back(parent.pes[start + i * stride]);
    int idx = index_in(t, me);
    EXPECT((idx < 0) == (t.team == SHMEM_TEAM_INVALID), "%s: membership", name);
    if (idx >= 0) {
        EXPECT(shmem_team_my_pe(t.team) == idx && shmem_team_n_pes(t.team) == size, "%s: my_pe %d n_pes %d, want %d %d", name,
               shmem_team_my_pe(t.team), shmem_team_n_pes(t.team), idx, size);
        for (int i = 0; i < size; i++)
            EXPECT(shmem_team_translate_pe(t.team, i, SHMEM_TEAM_WORLD) == t.pes[i], "%s: translate %d", name, i);
    }
    return t;
}

int main(int argc, char **argv)
{
    gt_skip_without_gpu();
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    quick = gt_quick();
    const char *only = argc > 1 ? argv[1] : NULL; /* one reduction, e.g. "int_sum", for debugging */
    GT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    GT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    team_info world;
    world.team = SHMEM_TEAM_WORLD;
    world.name = "WORLD";
    for (int i = 0; i < npes; i++) world.pes.push_back(i);
    EXPECT(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes && shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "WORLD queries");
    /* hosts of k PEs by rank (GSHMEM_TEST_HOSTS, as-hosts.sh), else one host */
    const char *hosts_env = getenv("GSHMEM_TEST_HOSTS");
    int k = hosts_env ? atoi(hosts_env) : npes;
    if (k < 1 || k > npes) k = npes;
    const int host_n = npes - me / k * k < k ? npes - me / k * k : k, n_hosts = (npes + k - 1) / k;
    int same_mype = 0;
    for (int h = 0; h < n_hosts; h++) same_mype += h * k + me % k < npes;
    EXPECT(shmem_team_n_pes(SHMEM_TEAM_SHARED) == host_n && shmem_team_my_pe(SHMEM_TEAM_SHARED) == me % k,
           "SHARED is this PE's host (%d PEs), got %d", host_n, shmem_team_n_pes(SHMEM_TEAM_SHARED));
    EXPECT(shmem_team_n_pes(SHMEMX_TEAM_NODE) == host_n, "NODE is this PE's host (%d PEs)", host_n);
    EXPECT(shmem_team_n_pes(SHMEMX_TEAM_SAME_MYPE_NODE) == same_mype, "SAME_MYPE_NODE has a PE per host (%d)", same_mype);

    /* bad arguments: -1, SHMEM_TEAM_INVALID, no hang */
    shmem_team_t bad_team = 123;
    EXPECT(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 0, 2, NULL, 0, &bad_team) == -1 && bad_team == SHMEM_TEAM_INVALID,
           "stride 0 with size 2 must fail");
    EXPECT(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes, 1, 1, NULL, 0, &bad_team) == -1, "start past the end must fail");
    EXPECT(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &bad_team) == -1, "size past the end must fail");
    EXPECT(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes, NULL, 0, &bad_team) == -1, "a stride reaching outside must fail");
    EXPECT(shmem_team_split_strided(77, 0, 1, 1, NULL, 0, &bad_team) == -1, "a bad parent must fail");
    EXPECT(shmem_team_n_pes(77) == -1 && shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, 77) == -1, "queries of a bad team");

    /* teams: size 1, the even PEs, size 3 out of 4 (strided when there are 8), split_2d */
    std::vector<team_info> teams;
    teams.push_back(world);
    teams.push_back(make_strided(SHMEM_TEAM_WORLD, world, 0, 1, 1, "size-1"));
    if (npes >= 3) teams.push_back(make_strided(SHMEM_TEAM_WORLD, world, 0, 2, (npes + 1) / 2, "even PEs"));
    if (npes >= 4) teams.push_back(make_strided(SHMEM_TEAM_WORLD, world, 1, npes >= 7 ? 2 : 1, 3, "size-3"));
    team_info xt, yt;
    {
        int xrange = npes >= 4 ? 2 : 1;
        EXPECT(shmem_team_split_2d(SHMEM_TEAM_WORLD, xrange, NULL, 0, &xt.team, NULL, 0, &yt.team) == 0, "split_2d");
        xt.name = "2d x-axis";
        yt.name = "2d y-axis";
        for (int i = me / xrange * xrange; i < npes && i < me / xrange * xrange + xrange; i++) xt.pes.push_back(i);
        for (int i = me % xrange; i < npes; i += xrange) yt.pes.push_back(i);
        EXPECT(shmem_team_n_pes(xt.team) == (int)xt.pes.size() && shmem_team_my_pe(xt.team) == index_in(xt, me), "x-team shape");
        EXPECT(shmem_team_n_pes(yt.team) == (int)yt.pes.size() && shmem_team_my_pe(yt.team) == index_in(yt, me), "y-team shape");
    }

    /* barrier/sync on device in every scope, on WORLD and the y team */
    {
        int *word = (int *)shmem_calloc(1, sizeof(int)), *errors, h = 0;
        GT_CUDA(cudaMalloc((void **)&errors, sizeof(int)));
        GT_CUDA(cudaMemset(errors, 0, sizeof(int)));
        for (int scope = 0; scope < 3; scope++)
            for (int use_sync = 0; use_sync < 2; use_sync++) {
                GT_CUDA(cudaMemset(word, 0, sizeof(int)));
                GT_CUDA(cudaDeviceSynchronize());
                shmem_barrier_all();
                barrier_rounds_kernel<<<1, 128>>>(SHMEM_TEAM_WORLD, word, quick ? 30 : 300, scope, use_sync, errors);
                GT_CUDA(cudaGetLastError());
                GT_CUDA(cudaDeviceSynchronize());
            }
        GT_CUDA(cudaMemcpy(&h, errors, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT(h == 0, "%d stale values after device barriers/syncs", h);
        shmem_barrier_all();
        shmem_free(word);
        GT_CUDA(cudaFree(errors));
    }

    /* every reduction, every team, odd and larger counts */
    for (const team_info &t : teams) {
        if (!quick) all_reductions(t, 1, only);
        all_reductions(t, 37, only);
    }
    /* the 2d teams differ between PEs but have the same shapes where it matters: run both */
    all_reductions(xt, 5, only);
    all_reductions(yt, 5, only);
    all_reductions(world, 20011, only); /* several LL chunks and slices; DIRECT with unaligned tails */
    /* large: 64 MiB float sum (16 MiB, still a two-shot push, in quick mode), and a medium double max */
    check_reduce<GSHMEMI_OP_SUM, float>(world, quick ? "float_sum 16 MiB" : "float_sum 64 MiB", shmemx_float_sum_reduce_on_stream,
                                        shmem_float_sum_reduce, ((quick ? 16u : 64u) << 20) / 4, REDUCE);
    check_reduce<GSHMEMI_OP_MAX, double>(world, "double_max 1 MiB", shmemx_double_max_reduce_on_stream, shmem_double_max_reduce,
                                         (1u << 20) / 8, REDUCE);
    check_reduce<GSHMEMI_OP_SUM, float>(world, "float_sum reducescatter 4 MiB", shmemx_float_sum_reducescatter_on_stream,
                                        shmem_float_sum_reducescatter, (4u << 20) / 4, REDUCESCATTER);
    /* in place, and counts that do not divide into the PEs (a job spanning hosts reduces these in
     * two levels, the tail the one-level way) */
    check_reduce<GSHMEMI_OP_SUM, float>(world, "float_sum 8 MiB + 5 in place", shmemx_float_sum_reduce_on_stream,
                                        shmem_float_sum_reduce, (8u << 20) / 4 + 5, REDUCE_IN_PLACE);
    check_reduce<GSHMEMI_OP_MAX, int>(world, "int_max 1 MiB + 3", shmemx_int_max_reduce_on_stream, shmem_int_max_reduce,
                                      (1u << 20) / 4 + 3, REDUCE);
    check_reduce<GSHMEMI_OP_SUM, double>(world, "double_sum 37 in place", shmemx_double_sum_reduce_on_stream,
                                         shmem_double_sum_reduce, 37, REDUCE_IN_PLACE);

    /* data movement: kinds x element sizes x sizes x forms */
    const size_t counts[] = {1, 7, 1000, 100003};
    for (const team_info &t : teams) {
        for (int kind = 0; kind < 5; kind++)
            for (size_t es : {1, 4, 8})
                for (size_t c : counts)
                    if (!quick || c != 1) check_move(t, kind, c, es, (int)(c & 1));
    }
    for (team_info *t : {&xt, &yt})
        for (int kind = 0; kind < 5; kind++) check_move(*t, kind, 333, 4, 1);
    /* 16 MiB blocks and a 64 MiB fcollect; 2 MiB and 4 MiB in quick mode, still pushed (GSHMEM_COLL_PUSH_MIN 1M) */
    for (int kind = 0; kind < 4; kind++) check_move(world, kind, ((quick ? 2u : 16u) << 20) / 8, 8, 1);
    check_move(world, 1, ((quick ? 4u : 64u) << 20) / 4 / npes, 4, 1);

    /* device forms: thread, warp, block; grid with a cooperative launch */
    {
        const size_t n = 5000;
        int *src = (int *)shmem_malloc(n * sizeof(int)), *dest = (int *)shmem_malloc(n * sizeof(int)), *rc, h = 0;
        GT_CUDA(cudaMalloc((void **)&rc, sizeof(int)));
        GT_CUDA(cudaMemset(rc, 0, sizeof(int)));
        for (int scope = 0; scope < 3; scope++) {
            set_kernel<<<8, 256>>>(src, n, me * 10 + scope);
            GT_CUDA(cudaMemset(dest, 0, n * sizeof(int)));
            GT_CUDA(cudaDeviceSynchronize());
            shmem_barrier_all();
            device_forms_kernel<<<1, 256>>>(SHMEM_TEAM_WORLD, dest, src, n, scope, rc);
            GT_CUDA(cudaGetLastError());
            GT_CUDA(cudaDeviceSynchronize());
            std::vector<int> hd(n);
            GT_CUDA(cudaMemcpy(hd.data(), dest, n * sizeof(int), cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                int want = 0;
                for (int m = 0; m < npes; m++) want += m * 10 + scope + (int)(i % 3);
                bad += hd[i] != want;
            }
            EXPECT(bad == 0, "device int_sum_reduce, scope %d: %zu wrong", scope, bad);
        }
        GT_CUDA(cudaMemcpy(&h, rc, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT(h == 0, "device reduce forms returned errors %d times", h);
        shmem_barrier_all();
        shmem_free(src);
        shmem_free(dest);
        GT_CUDA(cudaFree(rc));
    }
    /* The _grid forms refuse a team with members reached through the proxy (a trap with a message,
     * docs/transports.md, "Collectives with remote members"): run them where every peer is P2P. */
    char *probe = (char *)shmem_malloc(8);
    const int remote_peers = gt_remote_peers(probe);
    shmem_free(probe);
    if (remote_peers && me == 0) printf("test_coll: _grid forms skipped (%d peers reached through the proxy)\n", remote_peers);
    if (!remote_peers) {
        int *rc;
        GT_CUDA(cudaMalloc((void **)&rc, sizeof(int)));
        GT_CUDA(cudaMemset(rc, 0, sizeof(int)));
        int h = 0;
        const size_t gn = ((quick ? 1u : 32u) << 20) / 4;
        float *gsrc = (float *)shmem_malloc(gn * 4), *gdest = (float *)shmem_malloc(gn * 4);
        fill_kernel<float><<<264, 256>>>(gsrc, gn, me, GSHMEMI_OP_SUM);
        GT_CUDA(cudaDeviceSynchronize());
        shmem_barrier_all();
        /* 16 CTAs, or half of what fits where PEs share a GPU: MPS caps each PE's SMs but reserves
         * none, so grids that together fill the GPU need not all be resident at once; every member
         * must launch the same grid, so the PEs agree on the smallest */
        int *fit = (int *)shmem_malloc(2 * sizeof(int)), most = 0, ctas;
        void *args[] = {(void *)&world.team, (void *)&gdest, (void *)&gsrc, (void *)&gn, (void *)&rc};
        EXPECT(shmemx_collective_launch_query_gridsize((const void *)grid_kernel, 512, args, 0, &most) == 0 && most >= 1,
               "shmemx_collective_launch_query_gridsize: %d", most);
        /* a grid larger than fits is refused, not launched (it would hang at the grid sync) */
        EXPECT(shmemx_collective_launch((const void *)grid_kernel, most + 1, 512, args, 0, 0) == -1,
               "a grid of %d CTAs, one more than fit, was launched", most + 1);
        ctas = std::min(16, std::max(1, most / 2));
        GT_CUDA(cudaMemcpy(fit, &ctas, sizeof(int), cudaMemcpyHostToDevice));
        EXPECT(shmem_int_min_reduce(SHMEM_TEAM_WORLD, fit + 1, fit, 1) == 0, "int_min_reduce of the grid size failed");
        GT_CUDA(cudaMemcpy(&ctas, fit + 1, sizeof(int), cudaMemcpyDeviceToHost));
        shmem_free(fit);
        /* a 2-D grid: the CTAs are numbered across both dimensions */
        dim3 grid2 = ctas % 2 == 0 ? dim3(ctas / 2, 2) : dim3(ctas);
        EXPECT(shmemx_collective_launch((const void *)grid_kernel, grid2, 512, args, 0, 0) == 0, "grid launch of %d CTAs", ctas);
        GT_CUDA(cudaDeviceSynchronize());
        std::vector<float> hg(gn);
        GT_CUDA(cudaMemcpy(hg.data(), gdest, gn * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < gn; i++) {
            float want = value_of<float>(0, i, GSHMEMI_OP_SUM);
            for (int m = 1; m < npes; m++) want += value_of<float>(m, i, GSHMEMI_OP_SUM);
            bad += hg[i] != want;
        }
        EXPECT(bad == 0, "grid float_sum_reduce of %zu floats: %zu wrong", gn, bad);
        /* back-to-back grid reductions, in one launch and in the next: 5 rounds of 4096 floats,
         * twice, dest cleared between the launches */
        {
            const size_t rn = 4096;
            int rounds = 5;
            float *rdest = (float *)shmem_malloc(rounds * rn * 4);
            void *rargs[] = {(void *)&world.team, (void *)&rdest, (void *)&gsrc, (void *)&rn, (void *)&rounds, (void *)&rc};
            for (int launch = 0; launch < 2; launch++) {
                GT_CUDA(cudaMemset(rdest, 0, rounds * rn * 4));
                GT_CUDA(cudaDeviceSynchronize());
                shmem_barrier_all();
                EXPECT(shmemx_collective_launch((const void *)grid_rounds_kernel, ctas, 512, rargs, 0, 0) == 0,
                       "grid launch of %d CTAs, %d rounds", ctas, rounds);
                GT_CUDA(cudaDeviceSynchronize());
                std::vector<float> hr(rounds * rn);
                GT_CUDA(cudaMemcpy(hr.data(), rdest, rounds * rn * 4, cudaMemcpyDeviceToHost));
                size_t rbad = 0;
                for (size_t i = 0; i < rounds * rn; i++) {
                    float want = value_of<float>(0, i % rn, GSHMEMI_OP_SUM);
                    for (int m = 1; m < npes; m++) want += value_of<float>(m, i % rn, GSHMEMI_OP_SUM);
                    rbad += hr[i] != want;
                }
                EXPECT(rbad == 0, "grid float_sum_reduce, %d rounds in a launch (launch %d): %zu of %zu wrong", rounds, launch,
                       rbad, rounds * rn);
            }
            shmem_barrier_all();
            shmem_free(rdest);
        }
        GT_CUDA(cudaMemcpy(&h, rc, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT(h == 0, "grid reduce returned an error");
        shmem_barrier_all();
        shmem_free(gsrc);
        shmem_free(gdest);
        GT_CUDA(cudaFree(rc));
    }

    /* 1000 (quick: 50) back-to-back calls, small (LL) and medium (DIRECT unless forced) */
    back_to_back(world, 3, s1);
    back_to_back(world, 100000, s1);

    /* two disjoint teams at once, each on its own stream: even and odd PEs (or the halves of the
     * 2d split); then WORLD and a sub-team interleaved on two streams of the same PE */
    {
        team_info odd = npes >= 2 ? make_strided(SHMEM_TEAM_WORLD, world, 1, 2, npes / 2, "odd PEs") : world;
        team_info even = npes >= 2 ? make_strided(SHMEM_TEAM_WORLD, world, 0, 2, (npes + 1) / 2, "even PEs (2)") : world;
        const team_info &mine = index_in(even, me) >= 0 ? even : odd;
        back_to_back(mine, 4099, me & 1 ? s2 : s1);
        if (even.team != SHMEM_TEAM_INVALID && even.team != SHMEM_TEAM_WORLD) shmem_team_destroy(even.team);
        if (odd.team != SHMEM_TEAM_INVALID && odd.team != SHMEM_TEAM_WORLD) shmem_team_destroy(odd.team);
    }

    /* bad collective arguments: an error, never a hang or a write */
    {
        int *a = (int *)shmem_malloc(64 * sizeof(int)), local[4];
        EXPECT(shmem_int_broadcast(SHMEM_TEAM_WORLD, a, a + 32, 4, npes) == -1, "root out of range must fail");
        EXPECT(shmem_int_sum_reduce(SHMEM_TEAM_WORLD, local, a, 4) == -1, "a non-symmetric dest must fail");
        EXPECT(shmem_int_sum_reduce(55, a + 8, a, 4) == -1, "a bad team must fail");
        EXPECT(shmem_int_fcollect(SHMEM_TEAM_WORLD, a, a, 4) == -1, "fcollect in place must fail");
        shmem_barrier_all();
        shmem_free(a);
    }

    for (size_t i = 1; i < teams.size(); i++)
        if (teams[i].team != SHMEM_TEAM_INVALID) shmem_team_destroy(teams[i].team);
    shmem_team_destroy(xt.team);
    shmem_team_destroy(yt.team);
    shmem_barrier_all();
    if (me == 0) printf("test_coll: %s with %d PEs: %d failures\n", failures ? "FAIL" : "ok", npes, failures);
    shmem_finalize();
    return failures ? 1 : 0;
}
