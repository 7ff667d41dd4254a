/* The kernels of user_registers.cu as an NVSHMEM program spells them, through the compatibility
 * headers (include/nvshmem-compat): each loops over one device RMA, AMO, signal or wait form
 * (thread, warp and block scope) and most end in nvshmem_quiet. Compiled (never run) by
 * test_user_registers.sh, which holds them to the same 48 registers. */
#include <nvshmem.h>
#include <nvshmemx.h>

#define USER_KERNEL(name, params, body) \
    __global__ void name params { body; }
#define LOOP for (int i = 0; i < iters; i++)
#define RMA_PARAMS (char *d, const char *s, size_t n, int pe, int iters)

/* ---- contiguous RMA, thread, warp and block, blocking and _nbi ---- */
USER_KERNEL(putmem, RMA_PARAMS, LOOP nvshmem_putmem(d + i * n, s + i * n, n, pe))
USER_KERNEL(getmem, RMA_PARAMS, LOOP nvshmem_getmem(d + i * n, s + i * n, n, pe))
USER_KERNEL(putmem_nbi, RMA_PARAMS, LOOP nvshmem_putmem_nbi(d + i * n, s + i * n, n, pe); nvshmem_quiet())
USER_KERNEL(getmem_nbi, RMA_PARAMS, LOOP nvshmem_getmem_nbi(d + i * n, s + i * n, n, pe); nvshmem_quiet())
USER_KERNEL(putmem_warp, RMA_PARAMS, LOOP nvshmemx_putmem_warp(d + i * n, s + i * n, n, pe))
USER_KERNEL(getmem_warp, RMA_PARAMS, LOOP nvshmemx_getmem_warp(d + i * n, s + i * n, n, pe))
USER_KERNEL(putmem_nbi_warp, RMA_PARAMS, LOOP nvshmemx_putmem_nbi_warp(d + i * n, s + i * n, n, pe); nvshmem_quiet())
USER_KERNEL(getmem_nbi_warp, RMA_PARAMS, LOOP nvshmemx_getmem_nbi_warp(d + i * n, s + i * n, n, pe); nvshmem_quiet())
USER_KERNEL(putmem_block, RMA_PARAMS, LOOP nvshmemx_putmem_block(d + i * n, s + i * n, n, pe))
USER_KERNEL(getmem_block, RMA_PARAMS, LOOP nvshmemx_getmem_block(d + i * n, s + i * n, n, pe))
USER_KERNEL(putmem_nbi_block, RMA_PARAMS, LOOP nvshmemx_putmem_nbi_block(d + i * n, s + i * n, n, pe); nvshmem_quiet())
USER_KERNEL(getmem_nbi_block, RMA_PARAMS, LOOP nvshmemx_getmem_nbi_block(d + i * n, s + i * n, n, pe); nvshmem_quiet())
USER_KERNEL(float_put_block, (float *d, const float *s, size_t n, int pe, int iters),
            LOOP nvshmemx_float_put_block(d + i * n, s + i * n, n, pe))
USER_KERNEL(int_iput, (int *d, const int *s, size_t n, int pe, int iters), LOOP nvshmem_int_iput(d, s, 2, 2, n, pe))
USER_KERNEL(int_iget_block, (int *d, const int *s, size_t n, int pe, int iters),
            LOOP nvshmemx_int_iget_block(d, s, 2, 2, n, pe))

/* ---- single elements ---- */
USER_KERNEL(int_p, (int *d, int pe, int iters), LOOP nvshmem_int_p(d + i, i, pe))
USER_KERNEL(int_g, (int *r, const int *s, int pe, int iters), int sum = 0; LOOP sum += nvshmem_int_g(s + i, pe); *r = sum)
USER_KERNEL(double_p, (double *d, int pe, int iters), LOOP nvshmem_double_p(d + i, (double)i, pe))

/* ---- atomics: non-fetching, fetching ---- */
USER_KERNEL(int_atomic_add, (int *d, int pe, int iters), LOOP nvshmem_int_atomic_add(d, 1, pe))
USER_KERNEL(uint64_atomic_inc, (uint64_t *d, int pe, int iters), LOOP nvshmem_uint64_atomic_inc(d, pe))
USER_KERNEL(int_atomic_set, (int *d, int pe, int iters), LOOP nvshmem_int_atomic_set(d, i, pe))
USER_KERNEL(uint64_atomic_or, (uint64_t *d, int pe, int iters), LOOP nvshmem_uint64_atomic_or(d, 1ull << i, pe))
USER_KERNEL(int_atomic_fetch_add, (int *r, int *d, int pe, int iters),
            int sum = 0; LOOP sum += nvshmem_int_atomic_fetch_add(d, 1, pe); *r = sum)
USER_KERNEL(uint64_atomic_fetch_add, (uint64_t *r, uint64_t *d, int pe, int iters),
            uint64_t sum = 0; LOOP sum += nvshmem_uint64_atomic_fetch_add(d, 1, pe); *r = sum)
USER_KERNEL(int_atomic_compare_swap, (int *r, int *d, int pe, int iters),
            int v = 0; LOOP v = nvshmem_int_atomic_compare_swap(d, v, v + 1, pe); *r = v)
USER_KERNEL(uint64_atomic_swap, (uint64_t *r, uint64_t *d, int pe, int iters),
            uint64_t v = 0; LOOP v = nvshmem_uint64_atomic_swap(d, v + 1, pe); *r = v)
USER_KERNEL(int_atomic_fetch, (int *r, const int *d, int pe, int iters),
            int sum = 0; LOOP sum += nvshmem_int_atomic_fetch(d, pe); *r = sum)
USER_KERNEL(uint64_atomic_fetch_xor, (uint64_t *r, uint64_t *d, int pe, int iters),
            uint64_t v = 0; LOOP v ^= nvshmem_uint64_atomic_fetch_xor(d, 1ull << i, pe); *r = v)

/* ---- signals ---- */
#define SIG_PARAMS (char *d, const char *s, size_t n, uint64_t *sig, int pe, int iters)
USER_KERNEL(putmem_signal, SIG_PARAMS, LOOP nvshmem_putmem_signal(d + i * n, s + i * n, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe))
USER_KERNEL(putmem_signal_nbi, SIG_PARAMS,
            LOOP nvshmem_putmem_signal_nbi(d + i * n, s + i * n, n, sig, i, NVSHMEM_SIGNAL_SET, pe); nvshmem_quiet())
USER_KERNEL(putmem_signal_warp, SIG_PARAMS,
            LOOP nvshmemx_putmem_signal_warp(d + i * n, s + i * n, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe))
USER_KERNEL(putmem_signal_nbi_warp, SIG_PARAMS,
            LOOP nvshmemx_putmem_signal_nbi_warp(d + i * n, s + i * n, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe); nvshmem_quiet())
USER_KERNEL(putmem_signal_block, SIG_PARAMS,
            LOOP nvshmemx_putmem_signal_block(d + i * n, s + i * n, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe))
USER_KERNEL(putmem_signal_nbi_block, SIG_PARAMS,
            LOOP nvshmemx_putmem_signal_nbi_block(d + i * n, s + i * n, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe); nvshmem_quiet())
USER_KERNEL(signal_op, (uint64_t *sig, int pe, int iters), LOOP nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, pe))
USER_KERNEL(signal_wait_until, (uint64_t *sig, uint64_t *r, int iters),
            uint64_t v = 0; LOOP v += nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)i); *r = v)
USER_KERNEL(signal_fetch, (uint64_t *sig, uint64_t *r, int iters), uint64_t v = 0; LOOP v += nvshmem_signal_fetch(sig); *r = v)
/* a ping-pong, as the latency tests write it: put with signal, wait for the answer */
USER_KERNEL(ping_pong, (char *d, const char *s, size_t n, uint64_t *sig, int pe, int iters),
            LOOP { nvshmem_putmem_signal_nbi(d, s, n, sig, i + 1, NVSHMEM_SIGNAL_SET, pe);
                   nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)i + 1); })

/* ---- ordering and point-to-point synchronization ---- */
USER_KERNEL(quiet, (int iters), LOOP nvshmem_quiet())
USER_KERNEL(fence, (int *d, int pe, int iters), LOOP { nvshmem_int_p(d, i, pe); nvshmem_fence(); })
USER_KERNEL(int_wait_until, (int *ivar, int iters), LOOP nvshmem_int_wait_until(ivar, NVSHMEM_CMP_GE, i))
USER_KERNEL(uint64_wait_until_all, (uint64_t *ivars, size_t n, int iters),
            LOOP nvshmem_uint64_wait_until_all(ivars, n, NULL, NVSHMEM_CMP_GE, (uint64_t)i))
USER_KERNEL(int_wait_until_any, (int *ivars, size_t n, size_t *r, int iters),
            size_t v = 0; LOOP v += nvshmem_int_wait_until_any(ivars, n, NULL, NVSHMEM_CMP_GE, i); *r = v)
USER_KERNEL(int_wait_until_some_vector, (int *ivars, size_t n, size_t *idx, int *vals, int iters),
            LOOP nvshmem_int_wait_until_some_vector(ivars, n, idx, NULL, NVSHMEM_CMP_GE, vals))
USER_KERNEL(int_test, (int *ivar, int *r, int iters), int v = 0; LOOP v += nvshmem_int_test(ivar, NVSHMEM_CMP_GE, i); *r = v)
USER_KERNEL(barrier_all, (int *d, int pe, int iters), LOOP { nvshmem_int_p(d, i, pe); nvshmem_barrier_all(); })
USER_KERNEL(barrier_all_block, (int *d, int pe, int iters), LOOP { nvshmemx_putmem_nbi_block(d, d, 64, pe); nvshmemx_barrier_all_block(); })
