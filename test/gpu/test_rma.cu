/* Every PE puts (and gets) a PE-specific pattern to/from every PE's heap with each RMA routine and
 * scope, for sizes 1 B .. 64 MiB (64 KiB with GSHMEM_TEST_QUICK) at unaligned offsets, and verifies
 * every byte and the guard bytes around each transfer. Where some peer is remote (reached through
 * the proxy), the element-wise p and g variants stop at 4 KiB: each element is one request, and
 * more of them would time the proxy's per-request cost, which the perftests measure. */
#include <string.h>

#include "gpu_test.cuh"

enum {
    V_PUT_THREAD, V_PUT_WARP, V_PUT_BLOCK, V_PUT_NBI_THREAD, V_PUT_NBI_WARP, V_PUT_NBI_BLOCK,
    V_GET_THREAD, V_GET_WARP, V_GET_BLOCK, V_GET_NBI_BLOCK,
    V_P_CHAR, V_P_INT, V_P_LONG, V_P_FLOAT, V_P_DOUBLE, V_G_INT, V_G_LONG, V_G_DOUBLE, V_G_UCHAR,
    V_HOST_PUT, V_HOST_GET, V_HOST_PUT_NBI, V_COUNT
};
static const char *vname[] = {"put", "put_warp", "put_block", "put_nbi", "put_nbi_warp", "put_nbi_block",
                              "get", "get_warp", "get_block", "get_nbi_block",
                              "char_p", "int_p", "long_p", "float_p", "double_p", "int_g", "long_g", "double_g", "uchar_g",
                              "host putmem", "host getmem", "host putmem_nbi"};

static int is_get(int v) { return (v >= V_GET_THREAD && v <= V_GET_NBI_BLOCK) || (v >= V_G_INT && v <= V_G_UCHAR) || v == V_HOST_GET; }
static size_t elem_size(int v)
{
    switch (v) {
    case V_P_INT: case V_P_FLOAT: case V_G_INT: return 4;
    case V_P_LONG: case V_P_DOUBLE: case V_G_LONG: case V_G_DOUBLE: return 8;
    default: return 1;
    }
}

/* Block b serves target PE b. For put: local src -> slot me on PE b. For get: PE b's src -> local slot b. */
#define ELEMENTWISE(T, body)                                                                       \
    do {                                                                                           \
        size_t ne = n / sizeof(T);                                                                 \
        for (size_t i = threadIdx.x; i < ne; i += blockDim.x) { body; }                            \
    } while (0)

static __global__ void rma_kernel(int v, unsigned char *recv, const unsigned char *src, size_t slot, size_t n)
{
    const int t = blockIdx.x, me = shmem_my_pe();
    unsigned char *put_dst = recv + (size_t)me * slot;
    unsigned char *get_dst = recv + (size_t)t * slot;

    switch (v) {
    case V_PUT_THREAD: if (threadIdx.x == 0) shmem_putmem(put_dst, src, n, t); break;
    case V_PUT_WARP: if (threadIdx.x < 32) shmemx_putmem_warp(put_dst, src, n, t); break;
    case V_PUT_BLOCK: shmemx_putmem_block(put_dst, src, n, t); break;
    case V_PUT_NBI_THREAD: if (threadIdx.x == 0) { shmem_putmem_nbi(put_dst, src, n, t); shmem_quiet(); } break;
    case V_PUT_NBI_WARP: if (threadIdx.x < 32) { shmemx_putmem_nbi_warp(put_dst, src, n, t); shmem_quiet(); } break;
    case V_PUT_NBI_BLOCK: shmemx_putmem_nbi_block(put_dst, src, n, t); shmem_quiet(); break;
    case V_GET_THREAD: if (threadIdx.x == 0) shmem_getmem(get_dst, src, n, t); break;
    case V_GET_WARP: if (threadIdx.x < 32) shmemx_getmem_warp(get_dst, src, n, t); break;
    case V_GET_BLOCK: shmemx_getmem_block(get_dst, src, n, t); break;
    case V_GET_NBI_BLOCK: shmemx_getmem_nbi_block(get_dst, src, n, t); shmem_quiet(); break;
    case V_P_CHAR: ELEMENTWISE(char, shmem_char_p((char *)put_dst + i, ((const char *)src)[i], t)); break;
    case V_P_INT: ELEMENTWISE(int, shmem_int_p((int *)put_dst + i, ((const int *)src)[i], t)); break;
    case V_P_LONG: ELEMENTWISE(long, shmem_long_p((long *)put_dst + i, ((const long *)src)[i], t)); break;
    case V_P_FLOAT: ELEMENTWISE(float, shmem_float_p((float *)put_dst + i, ((const float *)src)[i], t)); break;
    case V_P_DOUBLE: ELEMENTWISE(double, shmem_double_p((double *)put_dst + i, ((const double *)src)[i], t)); break;
    case V_G_INT: ELEMENTWISE(int, ((int *)get_dst)[i] = shmem_int_g((const int *)src + i, t)); break;
    case V_G_LONG: ELEMENTWISE(long, ((long *)get_dst)[i] = shmem_long_g((const long *)src + i, t)); break;
    case V_G_DOUBLE: ELEMENTWISE(double, ((double *)get_dst)[i] = shmem_double_g((const double *)src + i, t)); break;
    case V_G_UCHAR: ELEMENTWISE(unsigned char, get_dst[i] = shmem_uchar_g(src + i, t)); break;
    }
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1, 2, 3, 7, 16, 100, 4093, 65536, (1 << 20) + 7, (16 << 20) + 1, 64 << 20};
    static const size_t offsets[] = {0, 1, 3, 8};
    /* quick mode: up to 64 KiB, offsets 0, 3 and 8 */
    const int quick = gt_quick();
    const size_t max_size = argc > 1 ? strtoull(argv[1], NULL, 0) : quick ? 65536 : (64 << 20);
    const size_t slot = max_size + 64, head = 16;
    const unsigned char guard = 0xEE;
    unsigned tag = 0;
    long checks = 0;

    gt_skip_without_gpu();
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    unsigned char *recv = (unsigned char *)shmem_malloc(slot * npes);
    unsigned char *src = (unsigned char *)shmem_malloc(slot);
    GT_CHECK(recv && src, "shmem_malloc of %zu bytes failed", slot * npes);
    GT_CHECK(shmem_ptr(recv, me) == recv, "shmem_ptr to self must be the address itself");
    const int remote_peers = gt_remote_peers(recv);

    for (int v = 0; v < V_COUNT; v++) {
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]) && sizes[si] <= max_size; si++) {
            for (size_t oi = 0; oi < sizeof(offsets) / sizeof(offsets[0]); oi++) {
                size_t off = offsets[oi], n = sizes[si];
                const size_t es = elem_size(v);
                if (off % es || (quick && oi == 1)) continue;
                /* One thread moving 64 MiB per peer proves nothing more than 16 MiB does. */
                if ((v == V_PUT_THREAD || v == V_GET_THREAD || v == V_PUT_NBI_THREAD) && n > (16u << 20) + 1) continue;
                if (n > (1u << 20) + 7 && oi > 1) continue;
                if (remote_peers && v >= V_P_CHAR && v <= V_G_UCHAR && n > 4096) continue;
                n = n / es * es;
                if (n == 0) continue;
                tag++;
                gt_fill<<<264, 512>>>(src + head + off, n, me, tag);
                GT_CUDA(cudaGetLastError());
                GT_CUDA(cudaMemset(recv, guard, slot * npes));
                GT_CUDA(cudaDeviceSynchronize());
                shmem_barrier_all();
                if (v == V_HOST_PUT || v == V_HOST_PUT_NBI || v == V_HOST_GET) {
                    for (int t = 0; t < npes; t++) {
                        if (v == V_HOST_PUT) shmem_putmem(recv + (size_t)me * slot + head + off, src + head + off, n, t);
                        else if (v == V_HOST_PUT_NBI) shmem_putmem_nbi(recv + (size_t)me * slot + head + off, src + head + off, n, t);
                        else shmem_getmem(recv + (size_t)t * slot + head + off, src + head + off, n, t);
                    }
                    shmem_quiet();
                } else {
                    rma_kernel<<<npes, 256>>>(v, recv + head + off, src + head + off, slot, n);
                    GT_CUDA(cudaGetLastError());
                    GT_CUDA(cudaDeviceSynchronize());
                }
                shmem_barrier_all();
                for (int s = 0; s < npes; s++) {
                    unsigned long long first = 0;
                    unsigned long long bad = gt_check(recv + (size_t)s * slot + head + off, n, s, tag, guard, &first);
                    GT_CHECK(bad == 0, "%s size %zu offset %zu: %llu wrong bytes (guard errors %llu) in the slot of PE %d, first at %llu",
                             vname[v], n, off, bad & ((1ull << 40) - 1), bad >> 40, s, first);
                    checks++;
                }
                (void)is_get;
            }
        }
        shmem_barrier_all();
        if (me == 0)
            printf("ok %-16s %s sizes/offsets, %d PEs%s\n", vname[v], quick ? "quick" : "all", npes,
                   remote_peers && v >= V_P_CHAR && v <= V_G_UCHAR ? " (up to 4 KiB: remote peers)" : "");
    }
    shmem_free(src);
    shmem_free(recv);
    if (me == 0) printf("test_rma: %ld slot checks passed on %d PEs\n", checks, npes);
    shmem_finalize();
    return 0;
}
