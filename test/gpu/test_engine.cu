/* The preemptive collective engine (gshmem/engine.h) on the GPU, every result checked on the device:
 *   1. order reversal: even PEs submit an allreduce on the world then one on a second team over
 *      the same PEs, odd PEs the other way round; both complete (as plain on-stream collectives
 *      they deadlock: GSHMEM_TEST_ENGINE_PLAIN=1 runs that, test_engine_plain.sh checks it);
 *   2. shuffled: every PE submits the same 8 collectives (allreduce sum/max/prod in float and sum
 *      in bfloat16, fcollect, broadcast, alltoall, barrier; 4 B .. 8 MiB, every other round at
 *      the small sizes LL takes; the float sum two-shot on teams of 3 or more) in an order
 *      shuffled on its own, for R rounds (GSHMEM_TEST_ENGINE_ROUNDS, default 4), first all on the
 *      world team, then spread over two overlapping teams; preemptions and exits printed;
 *   3. a cudaDeviceSynchronize on PE 0 while its daemon holds a request its peers have not
 *      submitted (they wait in the engine for one PE 0 submits only after the synchronize): it
 *      returns, and everything completes;
 *   4. callbacks, stream waits (the daemon comes and goes between them, so a wait enqueued while it
 *      was away must not keep it from coming back), and the refusals (overlap, bad id, count
 *      over max, full queue).
 * Where a peer is not reachable by load/store (a remote transport, GSHMEM_DISABLE_P2P=1, PEs
 * grouped as hosts), registration must refuse with SHMEMX_ENGINE_EUNSUPPORTED: the test checks
 * that and skips the engine phases, saying why. Every wait on the other PEs is bounded and says
 * what it waited for. */
#include <cuda_bf16.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_test.cuh"

static int me, npes;

#define E_OK(call)                                                                                 \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        GT_CHECK(rc_ == 0, "%s returned %d", #call, rc_);                                          \
    } while (0)

/* A watchdog for the waits that cannot poll (cudaDeviceSynchronize, the host barriers): after
 * `seconds`, it says what was being waited for and ends the PE. */
static const char *watched;
static void on_alarm(int sig)
{
    (void)sig;
    char msg[512];
    int n = snprintf(msg, sizeof(msg), "PE %d: check failed: still waiting after the watchdog's limit: %s\n", me, watched ? watched : "?");
    if (write(2, msg, n > 0 && n < (int)sizeof(msg) ? (size_t)n : 0) < 0) _exit(4);
    _exit(4);
}
static void watch(const char *what, unsigned seconds)
{
    watched = what;
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}
static void unwatch(void) { alarm(0); }

/* A cudaDeviceSynchronize, bounded: it waits for the daemon too, which must leave when idle or stuck. */
static void device_synchronize(const char *what)
{
    watch(what, 60);
    GT_CUDA(cudaDeviceSynchronize());
    unwatch();
}

/* shmem_barrier_all, bounded the same way. */
static void barrier(const char *what)
{
    watch(what, 120);
    shmem_barrier_all();
    unwatch();
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The value world PE `pe` puts at element i of a source, round `tag`; small: 1..3 (products). */
static __host__ __device__ float val(int pe, size_t i, unsigned tag, int small)
{
    return small ? (float)((i * 7 + pe * 3 + tag) % 3 + 1) : (float)((i * 7 + pe * 131 + tag * 17) % 1000 + 1);
}

static __global__ void fill_f(float *p, size_t n, int pe, unsigned tag, int small)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = val(pe, i, tag, small);
}
static __global__ void fill_bf(__nv_bfloat16 *p, size_t n, int pe, unsigned tag)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = __float2bfloat16(val(pe, i, tag, 1));
}
static __global__ void poison(float *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = -12345.0f;
}

/* What one collective call is, for its check. */
struct spec {
    int kind, op, bf16, small;
    int size, start, stride, my_idx, root;
    size_t count;
    unsigned tag;
};

static __device__ float expect(const spec &s, size_t j)
{
    if (s.kind == SHMEMX_ENGINE_ALLREDUCE) {
        float acc = 0;
        for (int m = 0; m < s.size; m++) {
            float v = val(s.start + m * s.stride, j, s.tag, s.small);
            if (m == 0) acc = v;
            else if (s.op == SHMEMX_ENGINE_SUM) acc += v;
            else if (s.op == SHMEMX_ENGINE_PROD) acc *= v;
            else if (s.op == SHMEMX_ENGINE_MAX) acc = fmaxf(acc, v);
            else acc = fminf(acc, v);
        }
        return acc;
    }
    if (s.kind == SHMEMX_ENGINE_BROADCAST) return val(s.start + s.root * s.stride, j, s.tag, s.small);
    size_t m = j / s.count, i = j % s.count; /* block m of dest */
    if (s.kind == SHMEMX_ENGINE_FCOLLECT) return val(s.start + (int)m * s.stride, i, s.tag, s.small);
    return val(s.start + (int)m * s.stride, (size_t)s.my_idx * s.count + i, s.tag, s.small); /* alltoall */
}

static __global__ void verify(const void *dest, size_t n, spec s, unsigned long long *bad, unsigned long long *first)
{
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n; j += (size_t)gridDim.x * blockDim.x) {
        float got = s.bf16 ? __bfloat162float(((const __nv_bfloat16 *)dest)[j]) : ((const float *)dest)[j];
        if (got != expect(s, j) && atomicAdd(bad, 1ull) == 0) *first = j;
    }
}

static unsigned long long *counters;

static void check_result(const char *what, const void *dest, size_t n, const spec &s)
{
    unsigned long long h[2];
    if (!counters) GT_CUDA(cudaMalloc((void **)&counters, sizeof(h)));
    GT_CUDA(cudaMemset(counters, 0, sizeof(h)));
    verify<<<132, 512>>>(dest, n, s, counters, counters + 1);
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaMemcpy(h, counters, sizeof(h), cudaMemcpyDeviceToHost));
    GT_CHECK(h[0] == 0, "%s (count %zu, tag %u): %llu of %zu elements wrong, the first at %llu", what, s.count, s.tag, h[0], n, h[1]);
}

/* One registered collective with its buffers. */
struct coll {
    const char *name;
    int id, kind, op, bf16, small, root;
    shmem_team_t team;
    size_t count, max_count;
    void *src, *dest;
    size_t src_n, dest_n;
};

static void team_shape(shmem_team_t t, spec *s)
{
    s->size = shmem_team_n_pes(t);
    s->my_idx = shmem_team_my_pe(t);
    s->start = shmem_team_translate_pe(t, 0, SHMEM_TEAM_WORLD);
    s->stride = s->size > 1 ? shmem_team_translate_pe(t, 1, SHMEM_TEAM_WORLD) - s->start : 1;
}

static shmem_team_t tail_team = SHMEM_TEAM_INVALID; /* PEs 1 .. npes-1 */

static void make(shmemx_engine_t *e, coll *c, const char *name, shmem_team_t team, int kind, int op, int bf16, int small,
                 size_t count, int priority)
{
    shmemx_engine_coll_t d = {};
    /* the size every PE knows, members or not: the allocations must be the same everywhere */
    const int n = team == tail_team ? npes - 1 : npes;
    c->name = name, c->team = team, c->kind = kind, c->op = op, c->bf16 = bf16, c->small = small, c->count = count;
    c->root = n > 1 ? 1 : 0;
    c->src_n = kind == SHMEMX_ENGINE_ALLTOALL ? count * n : count;
    c->dest_n = kind == SHMEMX_ENGINE_FCOLLECT || kind == SHMEMX_ENGINE_ALLTOALL ? count * n : count;
    /* every PE allocates every buffer (shmem_malloc is collective over the world) */
    c->src = shmem_malloc((c->src_n ? c->src_n : 1) * 4);
    c->dest = shmem_malloc((c->dest_n ? c->dest_n : 1) * 4);
    GT_CHECK(c->src && c->dest, "shmem_malloc of %s", name);
    c->id = -1;
    if (team == SHMEM_TEAM_INVALID || shmem_team_my_pe(team) < 0) return; /* not a member */
    d.kind = kind, d.team = team, d.dtype = bf16 ? SHMEMX_ENGINE_BFLOAT16 : SHMEMX_ENGINE_FLOAT, d.op = op;
    d.max_count = count, d.priority = priority;
    E_OK(shmemx_engine_register(e, &d, &c->id));
}

/* A smaller count for the next calls (the buffers stay those of the registered maximum). */
static void set_count(coll *c, size_t count)
{
    const size_t n = c->team == tail_team ? npes - 1 : npes;
    c->count = count;
    c->src_n = c->kind == SHMEMX_ENGINE_ALLTOALL ? count * n : count;
    c->dest_n = c->kind == SHMEMX_ENGINE_FCOLLECT || c->kind == SHMEMX_ENGINE_ALLTOALL ? count * n : count;
}

static void prepare(coll *c, unsigned tag)
{
    if (c->id < 0 || c->kind == SHMEMX_ENGINE_BARRIER) return;
    if (c->bf16) fill_bf<<<64, 256>>>((__nv_bfloat16 *)c->src, c->src_n, me, tag);
    else fill_f<<<64, 256>>>((float *)c->src, c->src_n, me, tag, c->small);
    GT_CUDA(cudaGetLastError());
    if (!c->bf16) poison<<<64, 256>>>((float *)c->dest, c->dest_n);
    else GT_CUDA(cudaMemset(c->dest, 0xff, c->dest_n * 2));
    GT_CUDA(cudaGetLastError());
}

/* Submits, retrying while the queue is full, for at most 60 s. */
static shmemx_engine_ticket_t submit_bounded(shmemx_engine_t *e, coll *c, shmemx_engine_callback_t cb, void *arg)
{
    shmemx_engine_ticket_t t;
    int rc;
    const double t0 = now_s();
    while ((rc = cb ? shmemx_engine_submit_cb(e, c->id, c->dest, c->src, c->count, c->root, cb, arg, &t)
                    : shmemx_engine_submit(e, c->id, c->dest, c->src, c->count, c->root, &t)) == SHMEMX_ENGINE_EAGAIN &&
           now_s() - t0 < 60)
        usleep(50);
    GT_CHECK(rc != SHMEMX_ENGINE_EAGAIN, "submit %s: the queue stayed full for %.0f s (requests of the peers not submitted?)", c->name,
             now_s() - t0);
    GT_CHECK(rc == 0, "submit %s returned %d", c->name, rc);
    return t;
}
static shmemx_engine_ticket_t submit(shmemx_engine_t *e, coll *c) { return submit_bounded(e, c, NULL, NULL); }

static void verify_coll(coll *c, unsigned tag)
{
    if (c->id < 0 || c->kind == SHMEMX_ENGINE_BARRIER) return;
    spec s = {};
    team_shape(c->team, &s);
    s.kind = c->kind, s.op = c->op, s.bf16 = c->bf16, s.small = c->small, s.root = c->root, s.count = c->count, s.tag = tag;
    check_result(c->name, c->dest, c->dest_n, s);
}

static void print_stats(shmemx_engine_t *e, const char *what)
{
    shmemx_engine_stats_t st;
    E_OK(shmemx_engine_stats(e, &st));
    printf("PE %d: %s: %llu preemptions, %llu stuck exits, %llu launches, %llu daemon exits\n", me, what,
           (unsigned long long)st.preemptions, (unsigned long long)st.stuck_exits, (unsigned long long)st.launches,
           (unsigned long long)st.exits);
}

/* ---- 1. order reversal ---- */
static void reversal(shmemx_engine_t *e, shmem_team_t dup)
{
    coll a, b;
    const size_t n = gt_quick() ? 4096 : (1u << 20);
    make(e, &a, "allreduce on the world", SHMEM_TEAM_WORLD, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_SUM, 0, 0, n, 0);
    make(e, &b, "allreduce on a copy of the world", dup, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_SUM, 0, 0, n, 0);
    for (unsigned r = 0; r < 4; r++) {
        /* rounds 1 and 2: 2 floats, by LL (rows of data and flags, no done round) */
        set_count(&a, r == 1 || r == 2 ? 2 : n), set_count(&b, r == 1 || r == 2 ? 2 : n);
        prepare(&a, 100 + r), prepare(&b, 200 + r);
        device_synchronize("cudaDeviceSynchronize before an order reversal round (the daemon must leave when idle)");
        shmemx_engine_ticket_t ta, tb;
        if (me % 2 == 0) ta = submit(e, &a), tb = submit(e, &b);
        else tb = submit(e, &b), ta = submit(e, &a);
        E_OK(shmemx_engine_wait(e, me % 2 ? ta : tb, 60));
        E_OK(shmemx_engine_wait(e, me % 2 ? tb : ta, 60));
        verify_coll(&a, 100 + r), verify_coll(&b, 200 + r);
    }
    print_stats(e, "order reversal done");
}

/* The same reversal as plain on-stream collectives: deadlocks (run alone; the device wait
 * timeout ends it). */
static int plain_reversal(shmem_team_t dup)
{
    const size_t n = 1u << 20;
    float *s = (float *)shmem_malloc(n * 4), *d = (float *)shmem_malloc(n * 4);
    cudaStream_t st;
    GT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    GT_CUDA(cudaMemset(s, 0, n * 4));
    GT_CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();
    printf("PE %d: plain on-stream allreduces in %s order\n", me, me % 2 ? "reversed" : "plain");
    if (me % 2 == 0) shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, d, s, n, st), shmemx_float_sum_reduce_on_stream(dup, d, s, n, st);
    else shmemx_float_sum_reduce_on_stream(dup, d, s, n, st), shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, d, s, n, st);
    double t0 = now_s();
    cudaError_t q;
    while ((q = cudaStreamQuery(st)) == cudaErrorNotReady && now_s() - t0 < 600) usleep(1000);
    if (q == cudaSuccess) {
        printf("PE %d: plain collectives in reversed order completed: NO deadlock\n", me);
        return 1;
    }
    printf("PE %d: plain collectives in reversed order: deadlock, ended by the device wait timeout after %.1f s (%s)\n", me, now_s() - t0,
           cudaGetErrorString(q));
    fflush(stdout);
    _exit(3); /* the context is gone: no shmem_finalize */
}

/* ---- 2. shuffled ---- */
static unsigned rng_next(unsigned *x)
{
    *x = *x * 1103515245u + 12345u;
    return *x >> 8;
}

static void shuffled(shmemx_engine_t *e, shmem_team_t t1, shmem_team_t t2, const char *what, int rounds)
{
    const int q = gt_quick();
    coll c[8];
    /* every other round, the data collectives at sizes LL takes (up to 256 bytes a member, odd counts) */
    static const size_t small[8] = {50, 1, 64, 100, 33, 61, 17, 0};
    /* two-shot where the team has 3 members or more (2 MiB and up): quick, a part of the last
     * chunk ends inside a 16-byte unit */
    make(e, &c[0], q ? "allreduce sum 2 MiB + 12 B" : "allreduce sum 8 MiB", t1, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_SUM, 0, 0,
         q ? (1u << 19) + 3 : (2u << 20), 0);
    make(e, &c[1], "allreduce max 4 B", t2, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_MAX, 0, 0, 1, 0);
    make(e, &c[2], "allreduce prod 64 KiB", t1, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_PROD, 0, 1, 16384, 2);
    make(e, &c[3], "allreduce bf16 sum 1 MiB", t2, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_SUM, 1, 1, q ? 4096 : (1u << 19), 0);
    make(e, &c[4], "fcollect 256 KiB a PE", t1, SHMEMX_ENGINE_FCOLLECT, 0, 0, 0, q ? 1000 : 65536, 0);
    make(e, &c[5], "broadcast 2 MiB + 12 B", t2, SHMEMX_ENGINE_BROADCAST, 0, 0, 0, q ? 1003 : (1u << 19) + 3, 1);
    make(e, &c[6], "alltoall 64 KiB a PE", t1, SHMEMX_ENGINE_ALLTOALL, 0, 0, 0, 16384, 0);
    make(e, &c[7], "barrier", t2, SHMEMX_ENGINE_BARRIER, 0, 0, 0, 0, 0);
    unsigned seed = 977u * (me + 1);
    for (int r = 0; r < rounds; r++) {
        int order[8];
        shmemx_engine_ticket_t tk[8];
        if (r == 0) for (int i = 0; i < 8; i++) c[i].max_count = c[i].count;
        for (int i = 0; i < 8; i++) set_count(&c[i], r % 2 ? small[i] : c[i].max_count);
        for (int i = 0; i < 8; i++) order[i] = i, prepare(&c[i], 1000 * r + i);
        for (int i = 7; i > 0; i--) {
            int j = rng_next(&seed) % (i + 1), x = order[i];
            order[i] = order[j], order[j] = x;
        }
        device_synchronize("cudaDeviceSynchronize before a shuffled round (the daemon must leave when idle)");
        for (int i = 0; i < 8; i++)
            if (c[order[i]].id >= 0) tk[order[i]] = submit(e, &c[order[i]]);
        for (int i = 0; i < 8; i++)
            if (c[i].id >= 0) E_OK(shmemx_engine_wait(e, tk[i], 120));
        for (int i = 0; i < 8; i++) verify_coll(&c[i], 1000 * r + i);
        if (me == 0 && (r <= 1 || r == rounds - 1))
            printf("PE 0: %s: round %d of %d (%s sizes), order %d %d %d %d %d %d %d %d: checked\n", what, r + 1, rounds,
                   r % 2 ? "LL" : "large", order[0], order[1], order[2], order[3], order[4], order[5], order[6], order[7]);
    }
    print_stats(e, what);
}

/* ---- 3. cudaDeviceSynchronize while the daemon holds a stuck request ---- */
static void device_sync(shmemx_engine_t *e)
{
    coll w, y;
    shmemx_engine_ticket_t tw, ty;
    shmemx_engine_stats_t before, after;
    make(e, &w, "barrier W", SHMEM_TEAM_WORLD, SHMEMX_ENGINE_BARRIER, 0, 0, 0, 0, 0);
    make(e, &y, "allreduce Y", SHMEM_TEAM_WORLD, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_SUM, 0, 0, 65536, 0);
    prepare(&y, 7);
    device_synchronize("cudaDeviceSynchronize before the device synchronize phase");
    barrier("the barrier before the device synchronize phase (a peer has not reached it)");
    E_OK(shmemx_engine_stats(e, &before));
    if (me == 0) {
        cudaStream_t other;
        GT_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        tw = submit(e, &w); /* the peers submit W only once Y, which PE 0 has not submitted, is done */
        usleep(20000);      /* the daemon is running W by now, and stuck on it */
        poison<<<8, 256, 0, other>>>((float *)y.dest, 16);
        GT_CUDA(cudaGetLastError());
        double t0 = now_s();
        device_synchronize("cudaDeviceSynchronize while the daemon held W, which the peers had not submitted (it must leave stuck)");
        int done = 1;
        E_OK(shmemx_engine_test(e, tw, &done));
        GT_CHECK(!done || npes == 1, "W completed before its peers submitted it");
        printf("PE 0: cudaDeviceSynchronize returned after %.3f s while the engine held W, which the peers had not submitted\n",
               now_s() - t0);
        GT_CUDA(cudaStreamDestroy(other));
        prepare(&y, 7);
        device_synchronize("cudaDeviceSynchronize before submitting Y (W is still pending: the daemon must leave stuck)");
        ty = submit(e, &y);
        E_OK(shmemx_engine_wait(e, ty, 60));
        E_OK(shmemx_engine_wait(e, tw, 60));
    } else {
        ty = submit(e, &y);
        E_OK(shmemx_engine_wait(e, ty, 60));
        tw = submit(e, &w);
        E_OK(shmemx_engine_wait(e, tw, 60));
    }
    verify_coll(&y, 7);
    E_OK(shmemx_engine_stats(e, &after));
    if (me == 0 && npes > 1) GT_CHECK(after.stuck_exits > before.stuck_exits, "the daemon never left with W stuck");
    print_stats(e, "device synchronize");
}

/* ---- 4. callbacks, stream waits, refusals ---- */
static void on_done(void *arg, shmemx_engine_ticket_t t)
{
    (void)t;
    __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST);
}

static __global__ void copy_first(const float *src, float *out) { *out = src[0]; }

static void extras(shmemx_engine_t *e)
{
    coll a;
    shmemx_engine_ticket_t t;
    make(e, &a, "allreduce with callback", SHMEM_TEAM_WORLD, SHMEMX_ENGINE_ALLREDUCE, SHMEMX_ENGINE_SUM, 0, 0, 1000, 0);
    static int count;
    /* the stream and the result word outside the loop: a cudaFree waits for the whole device */
    float *out, *h;
    GT_CUDA(cudaMalloc((void **)&out, 4));
    GT_CUDA(cudaMallocHost((void **)&h, 4));
    const int rounds = 8;
    for (unsigned r = 0; r < (unsigned)rounds; r++) {
        /* each round a new stream (streams are spread over the GPU's hardware queues: some share
         * the daemon's); odd rounds: PE 0 comes 20 ms late, so the peers' requests stay stuck
         * after their stream waits are enqueued (a daemon that left stuck then and came back
         * behind the wait would never run); rounds 2, 6: the daemons have left idle before the
         * submission */
        cudaStream_t s;
        GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        prepare(&a, 50 + r);
        device_synchronize("cudaDeviceSynchronize before a stream wait round (the daemon must leave once the last stream wait's request completed)");
        if (r % 2 == 1 && me == 0) usleep(20000);
        if (r % 4 == 2) usleep(10000);
        t = submit_bounded(e, &a, on_done, &count);
        /* a stream waits for it, then reads the result */
        *h = 0;
        E_OK(shmemx_engine_stream_wait(e, t, s));
        copy_first<<<1, 1, 0, s>>>((const float *)a.dest, out);
        GT_CUDA(cudaGetLastError());
        GT_CUDA(cudaMemcpyAsync(h, out, 4, cudaMemcpyDeviceToHost, s));
        cudaError_t q;
        const double t0 = now_s();
        while ((q = cudaStreamQuery(s)) == cudaErrorNotReady && now_s() - t0 < 60) usleep(100);
        if (q == cudaErrorNotReady) {
            int done = -1;
            shmemx_engine_test(e, t, &done);
            shmemx_engine_stats_t st = {};
            shmemx_engine_stats(e, &st);
            GT_CHECK(q != cudaErrorNotReady,
                     "round %u: the stream waiting for request %#llx still waits after %.0f s (the request is %s; %llu launches, "
                     "%llu exits)", r, (unsigned long long)t, now_s() - t0, done ? "complete: the stream is stuck behind something else"
                     : "not complete", (unsigned long long)st.launches, (unsigned long long)st.exits);
        }
        GT_CUDA(q);
        float want = 0;
        for (int p = 0; p < npes; p++) want += val(p, 0, 50 + r, 0);
        GT_CHECK(*h == want, "the stream read %g after its wait, not %g", *h, want);
        verify_coll(&a, 50 + r);
        GT_CUDA(cudaStreamDestroy(s));
    }
    GT_CUDA(cudaFree(out));
    GT_CUDA(cudaFreeHost(h));
    for (double t0 = now_s(); __atomic_load_n(&count, __ATOMIC_SEQ_CST) < rounds && now_s() - t0 < 10;) usleep(100);
    GT_CHECK(count == rounds, "%d callbacks ran, not %d", count, rounds);
    /* refusals, each with its logged reason */
    GT_CHECK(shmemx_engine_submit(e, 999, a.dest, a.src, 1, 0, &t) == SHMEMX_ENGINE_EINVAL, "a bad id accepted");
    GT_CHECK(shmemx_engine_submit(e, a.id, a.dest, a.src, a.count + 1, 0, &t) == SHMEMX_ENGINE_EINVAL, "count over max_count accepted");
    GT_CHECK(shmemx_engine_submit(e, a.id, a.dest, a.dest, a.count, 0, &t) == SHMEMX_ENGINE_EINVAL, "dest == source accepted");
    float local;
    GT_CHECK(shmemx_engine_submit(e, a.id, &local, a.src, 1, 0, &t) == SHMEMX_ENGINE_EINVAL, "a dest outside the heap accepted");
    shmemx_engine_coll_t bad = {SHMEMX_ENGINE_ALLREDUCE, SHMEM_TEAM_WORLD, SHMEMX_ENGINE_FLOAT, GSHMEMI_OP_XOR, 1, 0};
    int id;
    GT_CHECK(shmemx_engine_register(e, &bad, &id) == SHMEMX_ENGINE_EINVAL, "xor on float accepted");
    print_stats(e, "callbacks and stream waits");
}

int main(void)
{
    gt_skip_without_gpu();
    shmem_init();
    me = shmem_my_pe(), npes = shmem_n_pes();
    /* a second team over the world's PEs, and (3 PEs or more) one over all but PE 0 */
    shmem_team_t dup, tail = SHMEM_TEAM_INVALID;
    GT_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &dup) == 0, "split (dup)");
    if (npes >= 3) GT_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &tail) == 0, "split (tail)");
    tail_team = tail;

    const char *plain = getenv("GSHMEM_TEST_ENGINE_PLAIN");
    if (plain && plain[0] == '1') return plain_reversal(dup);

    const char *rv = getenv("GSHMEM_TEST_ENGINE_ROUNDS");
    int rounds = rv ? atoi(rv) : gt_quick() ? 2 : 4;
    if (rounds < 1) rounds = 1;

    shmemx_engine_t *e;
    shmemx_engine_attr_t attr = {};
    /* the daemon's CTAs: the default (every PE passes 0) is agreed over the PEs; 0 on one PE and a
     * number on the others is refused on every PE, naming why */
    E_OK(shmemx_engine_create(&attr, &e));
    E_OK(shmemx_engine_destroy(e));
    if (npes > 1) {
        attr.ctas = me == 0 ? 0 : 4;
        GT_CHECK(shmemx_engine_create(&attr, &e) == SHMEMX_ENGINE_EINVAL, "ctas 0 on PE 0 and 4 elsewhere accepted");
    }
    attr.ctas = 4, attr.threads = 256;
    E_OK(shmemx_engine_create(&attr, &e));

    /* the engine serves teams whose members are all reachable by load/store: elsewhere its
     * registration refuses, as documented, and the engine phases have nothing to run */
    {
        int unreachable = -1;
        void *probe = shmem_malloc(64);
        GT_CHECK(probe, "shmem_malloc of a probe");
        for (int p = 0; p < npes && unreachable < 0; p++)
            if (p != me && !shmem_ptr(probe, p)) unreachable = p;
        shmemx_engine_coll_t d = {SHMEMX_ENGINE_BARRIER, SHMEM_TEAM_WORLD, SHMEMX_ENGINE_FLOAT, SHMEMX_ENGINE_SUM, 0, 0};
        int id = -1, rc = shmemx_engine_register(e, &d, &id);
        if (unreachable >= 0) {
            GT_CHECK(rc == SHMEMX_ENGINE_EUNSUPPORTED, "registering on a world whose PE %d is not reachable by load/store returned %d, "
                     "not SHMEMX_ENGINE_EUNSUPPORTED (%d)", unreachable, rc, SHMEMX_ENGINE_EUNSUPPORTED);
            printf("PE %d: engine phases skipped: world PE %d is not reachable by load/store from here (a remote transport, "
                   "GSHMEM_DISABLE_P2P or PEs grouped as hosts); registration refused it with SHMEMX_ENGINE_EUNSUPPORTED, as documented\n",
                   me, unreachable);
            E_OK(shmemx_engine_destroy(e));
            shmem_free(probe);
            barrier("the closing barrier (a peer has not reached it)");
            if (me == 0) printf("test_engine: passed with %d PEs (engine phases skipped: peers not reachable by load/store)\n", npes);
            shmem_finalize();
            return 0;
        }
        GT_CHECK(rc == 0, "registering a barrier on the world, every PE reachable by load/store, returned %d", rc);
        shmem_free(probe);
    }
    if (me == 0) printf("PE 0: engine of 4 CTAs x 256 threads, %d PEs, %d rounds\n", npes, rounds);

    reversal(e, dup);
    shuffled(e, SHMEM_TEAM_WORLD, SHMEM_TEAM_WORLD, "8 collectives on one team, shuffled", rounds);
    shuffled(e, SHMEM_TEAM_WORLD, npes >= 3 ? tail : dup, npes >= 3 ? "8 collectives on the world and PEs 1.., shuffled"
                                                                   : "8 collectives on the world and its copy, shuffled",
             rounds);
    device_sync(e);
    extras(e);
    E_OK(shmemx_engine_destroy(e));
    barrier("the closing barrier (a peer has not reached it)");
    if (me == 0) printf("test_engine: passed with %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
