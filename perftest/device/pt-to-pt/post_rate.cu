/* post_rate: how many remote operations a second one GPU issues. PE 0 posts, the last PE is the
 * target and only takes part in the barriers. A kernel of posting units (--scope thread, warp or
 * block) where each unit issues K = --ops-per-unit non-blocking operations to distinct offsets of a
 * symmetric buffer on the target: shmem_putmem_nbi / shmemx_putmem_nbi_warp /
 * shmemx_putmem_nbi_block of `size` bytes (--op put, the default), or shmem_int_p / shmem_long_p
 * (--op p, thread scope, size 4 or 8). Each row times two kernels with CUDA events, one launch per
 * iteration, and reports Mops/s = units x K / time of one launch:
 *   post        the posting loop only: the kernel ends once every operation is issued (the GPU's
 *               posting rate); a one-thread shmem_quiet kernel after each launch, not timed,
 *               drains what it posted;
 *   post+quiet  the same loop, then shmem_quiet by each unit (warp and block: one thread, after the
 *               group synchronised), so completion is included.
 * Rows sweep the number of units 1, 2, 4 ... up to what -c x -t holds (-c x -t threads, -c x -t/32
 * warps, -c blocks), and every size of -b .. -e. Each time includes one kernel launch; the header
 * gives the time of an empty kernel, the floor of every row (JSON: empty_kernel_us).
 *
 * Only the public API: the target is reached by whatever transport the run picks (P2P stores, the
 * host proxy's FIFO, IBGDA WQEs). With IBGDA every put or p is one WQE of one 64-byte basic block on
 * the device path's one RC QP to the peer, whose SQ has GSHMEMI_IBGDA_SQ_BBS = 1024 slots
 * (transports/ibgda/ibgda.h): units x K beyond 1024 to one target waits for completions to reuse
 * slots, so "post" then measures back-pressure (with GSHMEM_IBGDA_NIC=null, the rate at which its
 * host thread completes WQEs), not the posting rate. The defaults stay within one SQ: up to 64 units
 * of each scope (thread: 1 x 64, warp: 8 x 256, block: 64 x 128 threads, unless -c or -t is
 * given) with K = 16, at most 1024 operations a launch.
 *
 * Data: before the timed post+quiet launches of each row the target zeroes its buffer; after them
 * it checks every byte (put) or word (p) written, and a wrong one fails the run (exit 1). The null
 * NIC moves no data, so where GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=null route the target
 * off P2P, the check is skipped and the header says so. */
#include <stdint.h>
#include <strings.h>

#include "../../common/perftest.h"

enum { PR_PUT = 0, PR_P_INT = 1, PR_P_LONG = 2 };

#define PR_SEED 7u

/* The value shmem_TYPE_p stores at word idx: differs per word, so a misplaced store shows. */
template <typename T> static __host__ __device__ __forceinline__ T pr_value(size_t idx)
{
    const uint64_t x = (uint64_t)idx * 0x9e3779b97f4a7c15ull + PR_SEED;
    return (T)(x ^ (x >> 29));
}

/* One launch: `units` units, each issuing k operations; unit u's j-th writes item u * k + j (bytes
 * [item * size, +size) of a put, word `item` of a p). QUIET: then shmem_quiet once per unit. */
template <int SCOPE, int OP, int QUIET>
static __global__ void pr_post_kernel(char *dst, const char *src, size_t size, int units, int k, int target)
{
    const int unit = SCOPE == PT_SCOPE_THREAD ? (int)(blockIdx.x * blockDim.x + threadIdx.x)
                     : SCOPE == PT_SCOPE_WARP ? (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32)
                                              : (int)blockIdx.x;
    if (unit >= units) return; /* warp scope: a whole warp (blockDim is a multiple of 32) */
    for (int j = 0; j < k; j++) {
        const size_t item = (size_t)unit * k + j, off = item * size;
        if (OP == PR_P_INT) shmem_int_p((int *)dst + item, pr_value<int>(item), target);
        else if (OP == PR_P_LONG) shmem_long_p((long *)dst + item, pr_value<long>(item), target);
        else if (SCOPE == PT_SCOPE_THREAD) shmem_putmem_nbi(dst + off, src + off, size, target);
        else if (SCOPE == PT_SCOPE_WARP) shmemx_putmem_nbi_warp(dst + off, src + off, size, target);
        else shmemx_putmem_nbi_block(dst + off, src + off, size, target);
    }
    if (!QUIET) return;
    /* as put_bw: the group's stores are ordered before the one thread's quiet by the sync */
    if (SCOPE == PT_SCOPE_WARP) __syncwarp();
    if (SCOPE == PT_SCOPE_BLOCK) __syncthreads();
    if (SCOPE == PT_SCOPE_THREAD || (SCOPE == PT_SCOPE_WARP ? threadIdx.x % 32 : threadIdx.x) == 0) shmem_quiet();
}

static __global__ void pr_quiet_kernel(void) { shmem_quiet(); }

static __global__ void pr_empty_kernel(void) {}

/* On the target: how many of the n words of a p run differ from pr_value. */
template <typename T> static __global__ void pr_check_p(const T *words, size_t n, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (words[i] != pr_value<T>(i)) atomicAdd(bad, 1ull);
}

typedef struct {
    int op, scope, k, target;
    char *dst;
    const char *src;
} pr_run_t;

typedef struct {
    int blocks, threads;
} pr_shape_t;

/* Units fill CTAs of -t threads (warp scope: -t / 32 warps) before the next CTA; block scope: one
 * CTA of -t threads per unit. */
static pr_shape_t pr_shape(const pt_opts_t *o, int units)
{
    pr_shape_t s;
    if (o->scope == PT_SCOPE_THREAD) {
        s.threads = units < o->threads ? units : o->threads;
        s.blocks = (units + s.threads - 1) / s.threads;
    } else if (o->scope == PT_SCOPE_WARP) {
        const int per = units < o->threads / 32 ? units : o->threads / 32;
        s.threads = per * 32;
        s.blocks = (units + per - 1) / per;
    } else {
        s.threads = o->threads;
        s.blocks = units;
    }
    return s;
}

typedef void (*pr_kernel_t)(char *, const char *, size_t, int, int, int);

/* The kernel of this run's op and scope (one choice for the launches and the attribute query). */
template <int QUIET> static pr_kernel_t pr_kernel(const pr_run_t *r)
{
    if (r->op == PR_P_INT) return pr_post_kernel<PT_SCOPE_THREAD, PR_P_INT, QUIET>;
    if (r->op == PR_P_LONG) return pr_post_kernel<PT_SCOPE_THREAD, PR_P_LONG, QUIET>;
    if (r->scope == PT_SCOPE_THREAD) return pr_post_kernel<PT_SCOPE_THREAD, PR_PUT, QUIET>;
    if (r->scope == PT_SCOPE_WARP) return pr_post_kernel<PT_SCOPE_WARP, PR_PUT, QUIET>;
    return pr_post_kernel<PT_SCOPE_BLOCK, PR_PUT, QUIET>;
}

template <int QUIET> static void pr_launch(const pr_run_t *r, pr_shape_t s, size_t size, int units)
{
    pr_kernel<QUIET>(r)<<<s.blocks, s.threads>>>(r->dst, r->src, size, units, r->k, r->target);
}

/* The most threads a CTA of this run's kernels can have (their registers bound it). */
static int pr_max_threads(const pr_run_t *r)
{
    cudaFuncAttributes a[2];
    PT_CUDA(cudaFuncGetAttributes(&a[0], pr_kernel<0>(r)));
    PT_CUDA(cudaFuncGetAttributes(&a[1], pr_kernel<1>(r)));
    return a[0].maxThreadsPerBlock < a[1].maxThreadsPerBlock ? a[0].maxThreadsPerBlock : a[1].maxThreadsPerBlock;
}

static const char *pr_routine(int op, int scope)
{
    if (op == PR_P_INT) return "shmem_int_p";
    if (op == PR_P_LONG) return "shmem_long_p";
    return scope == PT_SCOPE_THREAD ? "shmem_putmem_nbi" : scope == PT_SCOPE_WARP ? "shmemx_putmem_nbi_warp" : "shmemx_putmem_nbi_block";
}

static void pr_header(const pt_opts_t *o, const char *what, int max_units, double empty_us)
{
    if (o->json) return;
    printf("# %s: %s, %s scope, K = %d ops a unit, PE 0 -> PE %d of %d, up to %d units (-c %d -t %d), %d iterations (%d "
           "warm-up); an empty kernel takes %.3f us (in every time)\n",
           o->name, what, pt_scope_names[o->scope], o->per_unit, shmem_n_pes() - 1, shmem_n_pes(), max_units, o->ctas,
           o->threads, o->iters, o->warmup, empty_us);
    printf("%-8s %8s %10s %8s %12s %12s %14s %12s %14s\n", "op", "units", "grid", "ops", "size(B)", "post(us)",
           "post(Mops/s)", "+quiet(us)", "+quiet(Mops/s)");
    fflush(stdout);
}

static void pr_row(const pt_opts_t *o, const char *op, pr_shape_t s, int units, size_t size, double post_us,
                   double quiet_us, double empty_us)
{
    const double ops = (double)units * o->per_unit;
    if (o->json) {
        printf("{\"test\":\"%s\",\"pes\":%d,\"ctas\":%d,\"threads\":%d,\"iters\":%d,\"size\":%zu,\"op\":\"%s\",\"scope\":\"%s\","
               "\"units\":%d,\"per_unit\":%d,\"ops\":%.0f,\"time_us\":%.3f,\"Mops/s\":%.3f,\"quiet_time_us\":%.3f,"
               "\"quiet_Mops/s\":%.3f,\"empty_kernel_us\":%.3f}\n",
               o->name, shmem_n_pes(), s.blocks, s.threads, o->iters, size, op, pt_scope_names[o->scope], units, o->per_unit,
               ops, post_us, ops / post_us, quiet_us, ops / quiet_us, empty_us);
    } else {
        char grid[32];
        snprintf(grid, sizeof grid, "%dx%d", s.blocks, s.threads);
        printf("%-8s %8d %10s %8.0f %12zu %12.3f %12.3f %14.3f %12.3f\n", op, units, grid, ops, size, post_us,
               ops / post_us, quiet_us, ops / quiet_us);
    }
    fflush(stdout);
}

/* The null IBGDA NIC completes puts without moving their bytes (docs/transports.md, IBGDA); the library has no query
 * of a peer's transport, so the run's settings tell, and shmem_ptr whether P2P reaches the peer. */
static int pr_data_moves(const void *sym, int peer)
{
    const char *remote = getenv("GSHMEM_REMOTE_TRANSPORT"), *nic = getenv("GSHMEM_IBGDA_NIC");
    return shmem_ptr(sym, peer) != NULL || !remote || strcasecmp(remote, "ibgda") || !nic || strcasecmp(nic, "null");
}

int main(int argc, char **argv)
{
    pt_opts_t o = {8, 8, 2, 50, 10, 1, 64, 0, 0, NULL};
    pr_run_t r;
    unsigned long long *bad_d, bad = 0;
    double empty_us = 0;
    size_t bytes;
    int me, max_units, check;

    o.accepts = PT_ACCEPT_OP | PT_ACCEPT_SCOPE | PT_ACCEPT_PER_UNIT;
    pt_parse(argc, argv, &o);
    if (o.per_unit == 0) o.per_unit = 16;
    if (o.bidir) PT_BAD_OPTION(&o, "--bidir: only PE 0 posts in post_rate");
    if (o.op == NULL || !strcmp(o.op, "put")) r.op = PR_PUT;
    else if (!strcmp(o.op, "p")) r.op = PR_P_INT; /* PR_P_LONG for the 8-byte rows */
    else PT_BAD_OPTION(&o, "--op %s: not one of put, p", o.op);
    if (r.op != PR_PUT) {
        if (o.scope != PT_SCOPE_THREAD)
            PT_BAD_OPTION(&o, "--op p: thread scope only (shmem_TYPE_p has no _warp or _block form), not --scope %s",
                          pt_scope_names[o.scope]);
        for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor)
            if (size != 4 && size != 8)
                PT_BAD_OPTION(&o, "--op p: size %zu: 4 (shmem_int_p) or 8 (shmem_long_p) only (-b, -e)", size);
    }
    if (!o.shape_set) { /* 64 units of each scope */
        o.ctas = o.scope == PT_SCOPE_THREAD ? 1 : o.scope == PT_SCOPE_WARP ? 8 : 64;
        o.threads = o.scope == PT_SCOPE_THREAD ? 64 : o.scope == PT_SCOPE_WARP ? 256 : 128;
    }
    if (o.scope == PT_SCOPE_WARP && o.threads % 32)
        PT_BAD_OPTION(&o, "-t %d: warp scope needs a multiple of 32 threads a CTA", o.threads);
    {
        const long long units = o.scope == PT_SCOPE_THREAD ? (long long)o.ctas * o.threads
                                : o.scope == PT_SCOPE_WARP ? (long long)o.ctas * (o.threads / 32)
                                                           : o.ctas;
        if (units > 0x7fffffff) PT_BAD_OPTION(&o, "-c %d -t %d: more than 2^31 posting units", o.ctas, o.threads);
        max_units = (int)units;
        if (__builtin_mul_overflow((size_t)max_units * (size_t)o.per_unit, o.max_size, &bytes))
            PT_BAD_OPTION(&o, "--ops-per-unit %d with %d units of %zu bytes: too many bytes", o.per_unit, max_units, o.max_size);
    }

    pt_init(&o);
    me = shmem_my_pe();
    r.scope = o.scope;
    r.k = o.per_unit;
    r.target = shmem_n_pes() - 1;
    for (int op = r.op; op <= (r.op == PR_PUT ? PR_PUT : PR_P_LONG); op++) {
        const pr_run_t t = {op, r.scope, 0, 0, NULL, NULL};
        const int most = pr_max_threads(&t);
        if (o.threads > most)
            PT_REFUSE(&o, "-t %d: %s at %s scope runs at most %d threads a CTA on this GPU (its registers)", o.threads,
                      pr_routine(op, r.scope), pt_scope_names[r.scope], most);
    }
    r.dst = (char *)shmem_malloc(bytes);
    r.src = r.op == PR_PUT ? (const char *)shmem_malloc(bytes) : NULL;
    if (!r.dst || (r.op == PR_PUT && !r.src))
        PT_EXIT(&o, 1, "error", "cannot allocate %s%zu bytes (%d units x %d ops x %zu bytes; GSHMEM_SYMMETRIC_SIZE)",
                r.op == PR_PUT ? "2 x " : "", bytes, max_units, o.per_unit, o.max_size);
    PT_CUDA(cudaMemset(r.dst, 0, bytes));
    if (r.op == PR_PUT) pt_fill((void *)r.src, bytes, PR_SEED);
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(bad)));
    PT_CUDA(cudaDeviceSynchronize());
    check = pr_data_moves(r.dst, me == 0 ? r.target : 0);

    if (me == 0) {
        const int iters = 100;
        for (int i = 0; i < iters; i++) {
            float ms = 0;
            PT_TIME_MS(ms, 0, (pr_empty_kernel<<<1, 1>>>()));
            empty_us += ms * 1000.0 / iters;
        }
        pr_header(&o, r.op == PR_PUT ? pr_routine(r.op, r.scope) : "shmem_int_p (4 B), shmem_long_p (8 B)", max_units,
                  empty_us);
        if (!check)
            fprintf(o.json ? stderr : stdout, "# data not checked: GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=null moves none\n");
        r.op = r.op == PR_PUT ? PR_PUT : o.min_size == 8 ? PR_P_LONG : PR_P_INT;
        PT_SPINUP(0, pr_launch<1>(&r, pr_shape(&o, max_units), o.min_size, max_units));
    }
    shmem_barrier_all();

    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        if (r.op != PR_PUT) r.op = size == 8 ? PR_P_LONG : PR_P_INT;
        const char *op = r.op == PR_PUT ? "put" : size == 8 ? "long_p" : "int_p";
        for (int units = 1;; units = (long long)units * 2 < max_units ? units * 2 : max_units) {
            const pr_shape_t s = pr_shape(&o, units);
            const size_t n = (size_t)units * o.per_unit * size;
            double post_us = 0, quiet_us = 0;
            if (me == 0) {
                for (int i = 0; i < o.warmup; i++) pr_launch<1>(&r, s, size, units);
                PT_CUDA(cudaGetLastError());
                PT_CUDA(cudaDeviceSynchronize());
                for (int i = 0; i < o.iters; i++) {
                    float ms = 0;
                    PT_TIME_MS(ms, 0, pr_launch<0>(&r, s, size, units));
                    post_us += ms * 1000.0 / o.iters;
                    pr_quiet_kernel<<<1, 1>>>();
                    PT_CUDA(cudaGetLastError());
                    PT_CUDA(cudaDeviceSynchronize());
                }
            }
            shmem_barrier_all(); /* PE 0's runs so far completed: the target's zeroes come after */
            if (me == r.target) {
                PT_CUDA(cudaMemset(r.dst, 0, n));
                PT_CUDA(cudaDeviceSynchronize());
            }
            shmem_barrier_all();
            if (me == 0)
                for (int i = 0; i < o.iters; i++) {
                    float ms = 0;
                    PT_TIME_MS(ms, 0, pr_launch<1>(&r, s, size, units));
                    quiet_us += ms * 1000.0 / o.iters;
                }
            shmem_barrier_all();
            if (me == r.target && check) {
                if (r.op == PR_PUT) {
                    pt_verify(&o, pr_routine(r.op, r.scope), r.dst, n, PR_SEED);
                } else {
                    PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
                    if (r.op == PR_P_INT) pr_check_p<int><<<264, 512>>>((const int *)r.dst, n / size, bad_d);
                    else pr_check_p<long><<<264, 512>>>((const long *)r.dst, n / size, bad_d);
                    PT_CUDA(cudaGetLastError());
                    PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
                    if (bad)
                        PT_FAIL(&o, "%s: %llu of %zu words on PE %d wrong (%d units)", pr_routine(r.op, r.scope), bad,
                                n / size, r.target, units);
                }
            }
            shmem_barrier_all(); /* the row only after the target's check passed */
            if (me == 0) pr_row(&o, op, s, units, size, post_us, quiet_us, empty_us);
            if (units == max_units) break;
        }
    }
    shmem_barrier_all();
    shmem_free(r.dst);
    if (r.src) shmem_free((void *)r.src);
    PT_CUDA(cudaFree(bad_d));
    shmem_finalize();
    return 0;
}
