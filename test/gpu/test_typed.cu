/* Every typed and sized RMA routine, generated from the type lists: for each type, every PE moves a
 * PE-specific pattern to/from every PE with put/get (thread, warp, block, nbi), strided iput/iget
 * (thread and block) and p/g, for several element counts; the host checks every byte, including
 * the elements a strided transfer must skip. Host-side typed, sized and strided calls too. */
#include <string.h>

#include "gpu_test.cuh"

enum { T_PUT, T_PUT_WARP, T_PUT_BLOCK, T_PUT_NBI_BLOCK, T_GET, T_GET_WARP, T_GET_BLOCK, T_GET_NBI_WARP,
       T_IPUT, T_IGET, T_IPUT_BLOCK, T_IGET_BLOCK, T_P, T_G, T_HOST_PUT, T_HOST_GET, T_HOST_IPUT, T_HOST_IGET, T_COUNT };
static const char *tname[] = {"put", "put_warp", "put_block", "put_nbi_block", "get", "get_warp", "get_block",
                              "get_nbi_warp", "iput", "iget", "iput_block", "iget_block", "p", "g",
                              "host put", "host get", "host iput", "host iget"};
enum { DST_STRIDE = 2, SRC_STRIDE = 3 };

static int is_get(int v) { return v == T_GET || v == T_GET_WARP || v == T_GET_BLOCK || v == T_GET_NBI_WARP || v == T_IGET || v == T_IGET_BLOCK || v == T_G || v == T_HOST_GET || v == T_HOST_IGET; }
static int is_strided(int v) { return v == T_IPUT || v == T_IGET || v == T_IPUT_BLOCK || v == T_IGET_BLOCK || v == T_HOST_IPUT || v == T_HOST_IGET; }
static int has_elem(int v) { return v == T_P || v == T_G; }

/* Block t serves PE t. Puts land in slot `me` of PE t; gets fill local slot t. */
#define KERNEL(name, T)                                                                                          \
    static __global__ void k_##name(int v, T *recv, const T *src, size_t n, size_t slot)                        \
    {                                                                                                            \
        const int t = blockIdx.x, me = shmem_my_pe();                                                            \
        T *pd = recv + (size_t)me * slot, *gd = recv + (size_t)t * slot;                                         \
        switch (v) {                                                                                             \
        case T_PUT: if (threadIdx.x == 0) shmem_##name##_put(pd, src, n, t); break;                             \
        case T_PUT_WARP: if (threadIdx.x < 32) shmemx_##name##_put_warp(pd, src, n, t); break;                  \
        case T_PUT_BLOCK: shmemx_##name##_put_block(pd, src, n, t); break;                                      \
        case T_PUT_NBI_BLOCK: shmemx_##name##_put_nbi_block(pd, src, n, t); shmem_quiet(); break;               \
        case T_GET: if (threadIdx.x == 0) shmem_##name##_get(gd, src, n, t); break;                             \
        case T_GET_WARP: if (threadIdx.x < 32) shmemx_##name##_get_warp(gd, src, n, t); break;                  \
        case T_GET_BLOCK: shmemx_##name##_get_block(gd, src, n, t); break;                                      \
        case T_GET_NBI_WARP: if (threadIdx.x < 32) { shmemx_##name##_get_nbi_warp(gd, src, n, t); shmem_quiet(); } break; \
        case T_IPUT: if (threadIdx.x == 0) shmem_##name##_iput(pd, src, DST_STRIDE, SRC_STRIDE, n, t); break;   \
        case T_IGET: if (threadIdx.x == 0) shmem_##name##_iget(gd, src, DST_STRIDE, SRC_STRIDE, n, t); break;   \
        case T_IPUT_BLOCK: shmemx_##name##_iput_block(pd, src, DST_STRIDE, SRC_STRIDE, n, t); break;            \
        case T_IGET_BLOCK: shmemx_##name##_iget_block(gd, src, DST_STRIDE, SRC_STRIDE, n, t); break;            \
        case T_P: for (size_t i = threadIdx.x; i < n; i += blockDim.x) shmem_##name##_p(pd + i, src[i], t); break; \
        case T_G: for (size_t i = threadIdx.x; i < n; i += blockDim.x) gd[i] = shmem_##name##_g(src + i, t); break; \
        }                                                                                                        \
    }
GSHMEM_RMA_TYPES(KERNEL)
GSHMEM_RMA_EXT_TYPES(KERNEL)
#undef KERNEL

/* The sized routines move elements of their width; drive them through a byte-typed kernel. */
#define SIZED_KERNEL(bits, bytes)                                                                               \
    static __global__ void k_size##bits(int v, char *recv, const char *src, size_t n, size_t slot)             \
    {                                                                                                            \
        const int t = blockIdx.x, me = shmem_my_pe();                                                            \
        char *pd = recv + (size_t)me * slot * bytes, *gd = recv + (size_t)t * slot * bytes;                      \
        if (threadIdx.x != 0) return;                                                                            \
        switch (v) {                                                                                             \
        case T_PUT: shmem_put##bits(pd, src, n, t); break;                                                       \
        case T_GET: shmem_get##bits(gd, src, n, t); break;                                                       \
        case T_IPUT: shmem_iput##bits(pd, src, DST_STRIDE, SRC_STRIDE, n, t); break;                             \
        case T_IGET: shmem_iget##bits(gd, src, DST_STRIDE, SRC_STRIDE, n, t); break;                             \
        }                                                                                                        \
    }
GSHMEM_RMA_SIZES(SIZED_KERNEL)
#undef SIZED_KERNEL

static unsigned char host_pattern(int pe, size_t i, unsigned tag) { return gt_pattern(pe, i, tag); }

/* Checks slot s (from PE s) of the host copy of recv for variant v, n elements of es bytes. */
static long check_slot(const unsigned char *slot, size_t slot_bytes, int v, int s, size_t n, size_t es, unsigned tag)
{
    long bad = 0;
    for (size_t e = 0; e * es < slot_bytes; e++) {
        size_t src_elem;
        int written;
        if (is_strided(v)) {
            written = e % DST_STRIDE == 0 && e / DST_STRIDE < n;
            src_elem = e / DST_STRIDE * SRC_STRIDE;
        } else {
            written = e < n;
            src_elem = e;
        }
        for (size_t b = 0; b < es; b++) {
            unsigned char want = written ? host_pattern(s, src_elem * es + b, tag) : 0xEE;
            if (slot[e * es + b] != want) bad++;
        }
    }
    return bad;
}

typedef void (*launch_fn)(int v, void *recv, const void *src, size_t n, size_t slot, int npes);

#define LAUNCHER(name, T)                                                                                       \
    static void l_##name(int v, void *recv, const void *src, size_t n, size_t slot, int npes)                   \
    {                                                                                                            \
        k_##name<<<npes, 128>>>(v, (T *)recv, (const T *)src, n, slot);                                          \
    }
GSHMEM_RMA_TYPES(LAUNCHER)
GSHMEM_RMA_EXT_TYPES(LAUNCHER)
#undef LAUNCHER
#define SIZED_LAUNCHER(bits, bytes)                                                                              \
    static void l_size##bits(int v, void *recv, const void *src, size_t n, size_t slot, int npes)               \
    {                                                                                                            \
        k_size##bits<<<npes, 32>>>(v, (char *)recv, (const char *)src, n, slot);                                 \
    }
GSHMEM_RMA_SIZES(SIZED_LAUNCHER)
#undef SIZED_LAUNCHER

typedef struct {
    const char *name;
    size_t es;
    launch_fn launch;
    int sized;
} type_case_t;

static const type_case_t cases[] = {
#define CASE(name, T) {#name, sizeof(T), l_##name, 0},
    GSHMEM_RMA_TYPES(CASE) GSHMEM_RMA_EXT_TYPES(CASE)
#undef CASE
#define SIZED_CASE(bits, bytes) {"size" #bits, bytes, l_size##bits, 1},
    GSHMEM_RMA_SIZES(SIZED_CASE)
#undef SIZED_CASE
};

/* Host-side typed calls go through the same library entry points for every type; exercise a few
 * representative ones (element sizes 1, 2, 4, 8) plus the sized and strided ones. */
static void host_rma(int v, const type_case_t *c, unsigned char *recv, const unsigned char *src, size_t n, size_t slot_bytes,
                     int me, int npes)
{
    for (int t = 0; t < npes; t++) {
        unsigned char *pd = recv + (size_t)me * slot_bytes, *gd = recv + (size_t)t * slot_bytes;
        switch (v) {
        case T_HOST_PUT: shmem_putmem(pd, src, n * c->es, t); break;
        case T_HOST_GET: shmem_getmem(gd, src, n * c->es, t); break;
        case T_HOST_IPUT:
            if (c->es == 8) shmem_long_iput((long *)pd, (const long *)src, DST_STRIDE, SRC_STRIDE, n, t);
            else if (c->es == 4) shmem_iput32(pd, src, DST_STRIDE, SRC_STRIDE, n, t);
            else if (c->es == 2) shmem_short_iput((short *)pd, (const short *)src, DST_STRIDE, SRC_STRIDE, n, t);
            else if (c->es == 16) shmem_iput128(pd, src, DST_STRIDE, SRC_STRIDE, n, t);
            else shmem_char_iput((char *)pd, (const char *)src, DST_STRIDE, SRC_STRIDE, n, t);
            break;
        case T_HOST_IGET:
            if (c->es == 8) shmem_double_iget((double *)gd, (const double *)src, DST_STRIDE, SRC_STRIDE, n, t);
            else if (c->es == 4) shmem_uint32_iget((uint32_t *)gd, (const uint32_t *)src, DST_STRIDE, SRC_STRIDE, n, t);
            else if (c->es == 2) shmem_iget16(gd, src, DST_STRIDE, SRC_STRIDE, n, t);
            else if (c->es == 16) shmem_iget128(gd, src, DST_STRIDE, SRC_STRIDE, n, t);
            else shmem_iget8(gd, src, DST_STRIDE, SRC_STRIDE, n, t);
            break;
        }
    }
    shmem_quiet();
}

int main(void)
{
    static const size_t counts[] = {1, 7, 1000, 4099};
    const int quick = gt_quick(); /* counts 7 and 1000 only */
    const size_t max_n = 4099, max_es = 16;
    /* Room for strided destinations (DST_STRIDE * n) and a guard element past the end. */
    const size_t slot_elems = DST_STRIDE * max_n + 8;
    unsigned tag = 0;
    long checks = 0;

    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const size_t slot_bytes_max = slot_elems * max_es;
    unsigned char *recv = (unsigned char *)shmem_malloc(slot_bytes_max * npes);
    unsigned char *src = (unsigned char *)shmem_malloc(SRC_STRIDE * max_n * max_es);
    unsigned char *h = (unsigned char *)malloc(slot_bytes_max * npes);
    GT_CHECK(recv && src && h, "allocation failed");

    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const type_case_t *c = &cases[ci];
        const size_t slot_bytes = slot_elems * c->es;
        for (int v = 0; v < T_COUNT; v++) {
            const int host = v >= T_HOST_PUT;
            if (c->sized && !host && v != T_PUT && v != T_GET && v != T_IPUT && v != T_IGET) continue;
            if (host && strcmp(c->name, "int") != 0 && strcmp(c->name, "half") != 0 && strcmp(c->name, "double") != 0 &&
                strcmp(c->name, "char") != 0 && strcmp(c->name, "size128") != 0)
                continue;
            if (has_elem(v) && c->sized) continue;
            for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
                const size_t n = counts[k];
                if (quick && n != 7 && n != 1000) continue;
                tag++;
                gt_fill<<<64, 256>>>(src, SRC_STRIDE * n * c->es, me, tag);
                GT_CUDA(cudaGetLastError());
                GT_CUDA(cudaMemset(recv, 0xEE, slot_bytes * npes));
                GT_CUDA(cudaDeviceSynchronize());
                shmem_barrier_all();
                if (host) {
                    host_rma(v, c, recv, src, n, slot_bytes, me, npes);
                } else {
                    c->launch(v, recv, src, n, slot_elems, npes);
                    GT_CUDA(cudaGetLastError());
                    GT_CUDA(cudaDeviceSynchronize());
                }
                shmem_barrier_all();
                GT_CUDA(cudaMemcpy(h, recv, slot_bytes * npes, cudaMemcpyDeviceToHost));
                for (int s = 0; s < npes; s++) {
                    long bad = check_slot(h + (size_t)s * slot_bytes, slot_bytes, v, s, n, c->es, tag);
                    GT_CHECK(bad == 0, "%s %s, %zu elements: %ld wrong bytes in the slot of PE %d", c->name, tname[v], n, bad, s);
                    checks++;
                }
            }
        }
        (void)is_get;
    }
    shmem_barrier_all();
    if (me == 0) printf("test_typed: %zu types x every routine, %ld slot checks passed on %d PEs\n",
                        sizeof(cases) / sizeof(cases[0]), checks, npes);
    free(h);
    shmem_free(src);
    shmem_free(recv);
    shmem_finalize();
    return 0;
}
