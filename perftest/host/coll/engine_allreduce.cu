/* The preemptive collective engine (gshmem/engine.h) against the on-stream collective: a float sum
 * allreduce over the world, each size (-b 8 .. -e 128M, x -f 16: 8 B, 128 B, 2 KiB, 32 KiB, 512 KiB,
 * 8 MiB, 128 MiB) timed four ways, wall clock on the host, -n calls after -w warm-up calls:
 *   stream, latency:   shmemx_float_sum_reduce_on_stream, then cudaStreamSynchronize, per call;
 *   stream, pipelined: -n calls enqueued back to back, one synchronize;
 *   engine, latency:   shmemx_engine_submit, then shmemx_engine_wait, per call;
 *   engine, pipelined: -n submissions, then a wait for the last.
 * Rows: time(us) is the pipelined time a call, lat(us) the latency, algbw the size over the
 * pipelined time. -c CTAs and -t threads shape the engine's daemon (default 32 x 512: the engine's
 * own default on a GPU of its own). Every
 * result of both is checked. */
#include <time.h>
#include <unistd.h>

#include "../../common/perftest.h"

static double wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* Small integers: every sum over up to 8 PEs is exact. */
static __global__ void fill(float *p, size_t n, int pe)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)((pe + 1) * 2 + (int)(i % 3));
}
static __global__ void check(const float *p, size_t n, int npes, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float want = 0;
        for (int m = 0; m < npes; m++) want += (float)((m + 1) * 2 + (int)(i % 3));
        if (p[i] != want) atomicAdd(bad, 1ull);
    }
}

static void submit(const pt_opts_t *o, shmemx_engine_t *e, int id, float *d, const float *s, size_t n, shmemx_engine_ticket_t *t)
{
    int rc;
    while ((rc = shmemx_engine_submit(e, id, d, s, n, 0, t)) == SHMEMX_ENGINE_EAGAIN) usleep(1);
    if (rc) PT_FAIL(o, "shmemx_engine_submit of %zu floats returned %d", n, rc);
}

int main(int argc, char **argv)
{
    pt_opts_t o = {8, 128 << 20, 16, 20, 5, 32, 512, 0, 0, NULL};
    pt_parse(argc, argv, &o);
    if (o.threads > 512 || o.threads % 32) PT_BAD_OPTION(&o, "-t %d: the engine's daemon runs 32..512 threads a CTA, a multiple of 32", o.threads);
    if (o.ctas > 128) PT_BAD_OPTION(&o, "-c %d: the engine's daemon runs 1..128 CTAs", o.ctas);
    pt_init(&o);
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const size_t maxn = o.max_size / 4 + 1;
    float *src = (float *)shmem_malloc(maxn * 4), *d_stream = (float *)shmem_malloc(maxn * 4), *d_engine = (float *)shmem_malloc(maxn * 4);
    unsigned long long *bad_d, bad;
    cudaStream_t s;
    shmemx_engine_t *e;
    shmemx_engine_attr_t attr = {};
    shmemx_engine_coll_t desc = {};
    int id;

    if (!src || !d_stream || !d_engine) PT_FAIL(&o, "shmem_malloc of 3 x %zu bytes failed", maxn * 4);
    PT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    PT_CUDA(cudaMalloc((void **)&bad_d, sizeof(bad)));
    fill<<<264, 256>>>(src, maxn, me);
    PT_CUDA(cudaGetLastError());
    PT_CUDA(cudaDeviceSynchronize());
    attr.ctas = o.ctas, attr.threads = o.threads;
    if (shmemx_engine_create(&attr, &e)) PT_REFUSE(&o, "shmemx_engine_create with -c %d -t %d failed (logged above)", o.ctas, o.threads);
    desc.kind = SHMEMX_ENGINE_ALLREDUCE, desc.team = SHMEM_TEAM_WORLD, desc.dtype = SHMEMX_ENGINE_FLOAT, desc.op = SHMEMX_ENGINE_SUM;
    desc.max_count = maxn;
    if (shmemx_engine_register(e, &desc, &id)) PT_FAIL(&o, "shmemx_engine_register failed (logged above)");

    const char *names[] = {"lat(us)", "algbw(GB/s)"};
    if (me == 0 && !o.json) {
        printf("# %s: allreduce, float sum over the world, %d PEs; the engine (%d CTAs x %d threads) against the on-stream "
               "collective; %d calls (%d warm-up); time(us): a call when pipelined\n",
               o.name, npes, o.ctas, o.threads, o.iters, o.warmup);
        printf("%-8s %12s %12s %12s %12s\n", "form", "size(B)", "time(us)", "lat(us)", "algbw(GB/s)");
    }

    for (size_t size = o.min_size; size <= o.max_size; size *= o.step_factor) {
        const size_t n = size / 4;
        shmemx_engine_ticket_t t = 0;
        if (n == 0) continue;
        double lat[2], pipe[2];
        for (int form = 0; form < 2; form++) {
            float *dest = form ? d_engine : d_stream;
            /* warm-up */
            for (int i = 0; i < o.warmup; i++) {
                if (form) {
                    submit(&o, e, id, dest, src, n, &t);
                    if (shmemx_engine_wait(e, t, 0)) PT_FAIL(&o, "shmemx_engine_wait failed (logged above)");
                }
                else if (shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s)) PT_FAIL(&o, "reduce_on_stream failed");
            }
            PT_CUDA(cudaStreamSynchronize(s));
            shmem_barrier_all();
            double t0 = wall_us();
            for (int i = 0; i < o.iters; i++) {
                if (form) {
                    submit(&o, e, id, dest, src, n, &t);
                    if (shmemx_engine_wait(e, t, 0)) PT_FAIL(&o, "shmemx_engine_wait failed (logged above)");
                } else {
                    shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);
                    PT_CUDA(cudaStreamSynchronize(s));
                }
            }
            lat[form] = (wall_us() - t0) / o.iters;
            shmem_barrier_all();
            t0 = wall_us();
            for (int i = 0; i < o.iters; i++) {
                if (form) submit(&o, e, id, dest, src, n, &t);
                else shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);
            }
            if (form) {
                if (shmemx_engine_wait(e, t, 0)) PT_FAIL(&o, "shmemx_engine_wait failed (logged above)");
            } else {
                PT_CUDA(cudaStreamSynchronize(s));
            }
            pipe[form] = (wall_us() - t0) / o.iters;
            shmem_barrier_all();
            PT_CUDA(cudaMemset(bad_d, 0, sizeof(bad)));
            check<<<264, 256>>>(dest, n, npes, bad_d);
            PT_CUDA(cudaGetLastError());
            PT_CUDA(cudaMemcpy(&bad, bad_d, sizeof(bad), cudaMemcpyDeviceToHost));
            if (bad) PT_FAIL(&o, "%s allreduce of %zu bytes: %llu of %zu elements wrong", form ? "engine" : "stream", size, bad, n);
        }
        if (me == 0)
            for (int form = 0; form < 2; form++) {
                double v[2] = {lat[form], (double)size / (pipe[form] * 1e3)};
                if (o.json) pt_row_ex(&o, NULL, form ? "engine" : "stream", "float", size, pipe[form], 2, names, v);
                else printf("%-8s %12zu %12.3f %12.3f %12.3f\n", form ? "engine" : "stream", size, pipe[form], v[0], v[1]);
                fflush(stdout);
            }
        shmem_barrier_all();
    }
    shmemx_engine_stats_t st;
    if (shmemx_engine_stats(e, &st)) PT_FAIL(&o, "shmemx_engine_stats failed (logged above)");
    if (me == 0 && !o.json)
        printf("# engine: %llu preemptions, %llu daemon launches, %llu exits\n", (unsigned long long)st.preemptions,
               (unsigned long long)st.launches, (unsigned long long)st.exits);
    if (shmemx_engine_destroy(e)) PT_FAIL(&o, "shmemx_engine_destroy failed (logged above)");
    shmem_free(src);
    shmem_free(d_stream);
    shmem_free(d_engine);
    PT_CUDA(cudaFree(bad_d));
    PT_CUDA(cudaStreamDestroy(s));
    shmem_finalize();
    return 0;
}
