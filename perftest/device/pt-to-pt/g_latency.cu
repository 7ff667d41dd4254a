/* g_latency: PE 0 chases a chain of indices through PE 1's memory with shmem_TYPE_g; each fetched
 * value is the next index, so every load waits for the previous one (latency, not throughput).
 * --type int (default), long, double or all. */
#include "../../common/perftest.h"

#define G_CHAIN 4096 /* elements of the chain; stride G_STRIDE (coprime) visits all of them */
#define G_STRIDE 1031

template <typename T> static __device__ __forceinline__ T g_fetch(const T *p, int pe);
template <> __device__ __forceinline__ int g_fetch<int>(const int *p, int pe) { return shmem_int_g(p, pe); }
template <> __device__ __forceinline__ long g_fetch<long>(const long *p, int pe) { return shmem_long_g(p, pe); }
template <> __device__ __forceinline__ double g_fetch<double>(const double *p, int pe) { return shmem_double_g(p, pe); }

template <typename T>
static __global__ void g_latency_kernel(const T *chain, int peer, int iters, int *last)
{
    int j = 0;
    for (int i = 0; i < iters; i++) j = (int)g_fetch<T>(chain + j, peer);
    *last = j;
}

template <typename T> static __global__ void g_chain_init(T *chain)
{
    for (int i = threadIdx.x; i < G_CHAIN; i += blockDim.x) chain[i] = (T)((i + G_STRIDE) % G_CHAIN);
}

template <typename T> static void g_latency_run(const pt_opts_t *o, const char *type, void *sym, int *last_d)
{
    const char *names[] = {"latency_us"};
    int me = shmem_my_pe();
    float ms = 0;

    if (me == 1) {
        g_chain_init<T><<<1, 256>>>((T *)sym);
        PT_CUDA(cudaGetLastError());
        PT_CUDA(cudaDeviceSynchronize());
    }
    shmem_barrier_all();
    if (me == 0) {
        g_latency_kernel<T><<<1, 1>>>((const T *)sym, 1, o->warmup, last_d);
        PT_CUDA(cudaGetLastError());
        PT_CUDA(cudaDeviceSynchronize());
        PT_TIME_MS(ms, 0, (g_latency_kernel<T><<<1, 1>>>((const T *)sym, 1, o->iters, last_d)));
        int last = -1;
        PT_CUDA(cudaMemcpy(&last, last_d, sizeof(int), cudaMemcpyDeviceToHost));
        /* the chain's -n-th element: proves every load returned the peer's value */
        if (last != (int)(((long long)o->iters * G_STRIDE) % G_CHAIN))
            PT_FAIL(o, "shmem_%s_g chain ended at %d after %d loads, expected %lld", type, last, o->iters,
                    ((long long)o->iters * G_STRIDE) % G_CHAIN);
        double us = ms * 1000.0 / o->iters;
        pt_row_ex(o, NULL, NULL, type, sizeof(T), ms * 1000.0, 1, names, &us);
    }
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    pt_opts_t o = {4, 4, 2, 10000, 1000, 1, 1, 0, 0, NULL};
    const char *names[] = {"latency_us"};
    const char *type;
    int all, *last_d;
    void *sym;

    o.accepts = PT_ACCEPT_TYPE;
    o.type = "int";
    pt_parse(argc, argv, &o);
    type = o.type;
    all = !strcmp(type, "all");
    if (!all && strcmp(type, "int") && strcmp(type, "long") && strcmp(type, "double")) {
        fprintf(stderr, "%s: --type int, long, double or all\n", o.name);
        return 2;
    }
    o.ctas = o.threads = 1;
    pt_init(&o);
    sym = shmem_malloc(G_CHAIN * sizeof(double));
    PT_CUDA(cudaMalloc((void **)&last_d, sizeof(int)));
    if (shmem_my_pe() == 0) pt_header_ex(&o, "dependent shmem_TYPE_g loads (pointer chase), one thread", NULL, 0, 1, names);
    if (all || !strcmp(type, "int")) g_latency_run<int>(&o, "int", sym, last_d);
    if (all || !strcmp(type, "long")) g_latency_run<long>(&o, "long", sym, last_d);
    if (all || !strcmp(type, "double")) g_latency_run<double>(&o, "double", sym, last_d);
    shmem_free(sym);
    PT_CUDA(cudaFree(last_d));
    shmem_finalize();
    return 0;
}
