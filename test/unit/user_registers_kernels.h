/* The kernels of the register test, written once for both spellings of the API: the includer
 * defines SH(name) (shmem_name or nvshmem_name), SHX(name) (shmemx_ or nvshmemx_) and SHC(name)
 * (the SHMEM_ or NVSHMEM_ constant). Each kernel loops over one device RMA, AMO, signal or wait
 * form (thread, warp and block scope) and most end in a quiet. Compiled (never run) by
 * test_user_registers.sh, which counts the USER_KERNEL rows of this file and its includer. */
#ifndef USER_REGISTERS_KERNELS_H
#define USER_REGISTERS_KERNELS_H

#define USER_KERNEL(name, params, body) \
    __global__ void name params { body; }
#define LOOP for (int i = 0; i < iters; i++)
#define RMA_PARAMS (char *d, const char *s, size_t n, int pe, int iters)

/* ---- contiguous RMA, thread, warp and block, blocking and _nbi ---- */
USER_KERNEL(putmem, RMA_PARAMS, LOOP SH(putmem)(d + i * n, s + i * n, n, pe))
USER_KERNEL(getmem, RMA_PARAMS, LOOP SH(getmem)(d + i * n, s + i * n, n, pe))
USER_KERNEL(putmem_nbi, RMA_PARAMS, LOOP SH(putmem_nbi)(d + i * n, s + i * n, n, pe); SH(quiet)())
USER_KERNEL(getmem_nbi, RMA_PARAMS, LOOP SH(getmem_nbi)(d + i * n, s + i * n, n, pe); SH(quiet)())
USER_KERNEL(putmem_warp, RMA_PARAMS, LOOP SHX(putmem_warp)(d + i * n, s + i * n, n, pe))
USER_KERNEL(getmem_warp, RMA_PARAMS, LOOP SHX(getmem_warp)(d + i * n, s + i * n, n, pe))
USER_KERNEL(putmem_nbi_warp, RMA_PARAMS, LOOP SHX(putmem_nbi_warp)(d + i * n, s + i * n, n, pe); SH(quiet)())
USER_KERNEL(getmem_nbi_warp, RMA_PARAMS, LOOP SHX(getmem_nbi_warp)(d + i * n, s + i * n, n, pe); SH(quiet)())
USER_KERNEL(putmem_block, RMA_PARAMS, LOOP SHX(putmem_block)(d + i * n, s + i * n, n, pe))
USER_KERNEL(getmem_block, RMA_PARAMS, LOOP SHX(getmem_block)(d + i * n, s + i * n, n, pe))
USER_KERNEL(putmem_nbi_block, RMA_PARAMS, LOOP SHX(putmem_nbi_block)(d + i * n, s + i * n, n, pe); SH(quiet)())
USER_KERNEL(getmem_nbi_block, RMA_PARAMS, LOOP SHX(getmem_nbi_block)(d + i * n, s + i * n, n, pe); SH(quiet)())
USER_KERNEL(float_put_block, (float *d, const float *s, size_t n, int pe, int iters),
            LOOP SHX(float_put_block)(d + i * n, s + i * n, n, pe))
USER_KERNEL(int_iput, (int *d, const int *s, size_t n, int pe, int iters), LOOP SH(int_iput)(d, s, 2, 2, n, pe))
USER_KERNEL(int_iget_block, (int *d, const int *s, size_t n, int pe, int iters),
            LOOP SHX(int_iget_block)(d, s, 2, 2, n, pe))

/* ---- single elements ---- */
USER_KERNEL(int_p, (int *d, int pe, int iters), LOOP SH(int_p)(d + i, i, pe))
USER_KERNEL(int_g, (int *r, const int *s, int pe, int iters), int sum = 0; LOOP sum += SH(int_g)(s + i, pe); *r = sum)
USER_KERNEL(double_p, (double *d, int pe, int iters), LOOP SH(double_p)(d + i, (double)i, pe))

/* ---- atomics: non-fetching, fetching ---- */
USER_KERNEL(int_atomic_add, (int *d, int pe, int iters), LOOP SH(int_atomic_add)(d, 1, pe))
USER_KERNEL(uint64_atomic_inc, (uint64_t *d, int pe, int iters), LOOP SH(uint64_atomic_inc)(d, pe))
USER_KERNEL(int_atomic_set, (int *d, int pe, int iters), LOOP SH(int_atomic_set)(d, i, pe))
USER_KERNEL(uint64_atomic_or, (uint64_t *d, int pe, int iters), LOOP SH(uint64_atomic_or)(d, 1ull << i, pe))
USER_KERNEL(int_atomic_fetch_add, (int *r, int *d, int pe, int iters),
            int sum = 0; LOOP sum += SH(int_atomic_fetch_add)(d, 1, pe); *r = sum)
USER_KERNEL(uint64_atomic_fetch_add, (uint64_t *r, uint64_t *d, int pe, int iters),
            uint64_t sum = 0; LOOP sum += SH(uint64_atomic_fetch_add)(d, 1, pe); *r = sum)
USER_KERNEL(int_atomic_compare_swap, (int *r, int *d, int pe, int iters),
            int v = 0; LOOP v = SH(int_atomic_compare_swap)(d, v, v + 1, pe); *r = v)
USER_KERNEL(uint64_atomic_swap, (uint64_t *r, uint64_t *d, int pe, int iters),
            uint64_t v = 0; LOOP v = SH(uint64_atomic_swap)(d, v + 1, pe); *r = v)
USER_KERNEL(int_atomic_fetch, (int *r, const int *d, int pe, int iters),
            int sum = 0; LOOP sum += SH(int_atomic_fetch)(d, pe); *r = sum)
USER_KERNEL(uint64_atomic_fetch_xor, (uint64_t *r, uint64_t *d, int pe, int iters),
            uint64_t v = 0; LOOP v ^= SH(uint64_atomic_fetch_xor)(d, 1ull << i, pe); *r = v)

/* ---- signals ---- */
#define SIG_PARAMS (char *d, const char *s, size_t n, uint64_t *sig, int pe, int iters)
USER_KERNEL(putmem_signal, SIG_PARAMS, LOOP SH(putmem_signal)(d + i * n, s + i * n, n, sig, 1, SHC(SIGNAL_ADD), pe))
USER_KERNEL(putmem_signal_nbi, SIG_PARAMS,
            LOOP SH(putmem_signal_nbi)(d + i * n, s + i * n, n, sig, i, SHC(SIGNAL_SET), pe); SH(quiet)())
USER_KERNEL(putmem_signal_warp, SIG_PARAMS,
            LOOP SHX(putmem_signal_warp)(d + i * n, s + i * n, n, sig, 1, SHC(SIGNAL_ADD), pe))
USER_KERNEL(putmem_signal_nbi_warp, SIG_PARAMS,
            LOOP SHX(putmem_signal_nbi_warp)(d + i * n, s + i * n, n, sig, 1, SHC(SIGNAL_ADD), pe); SH(quiet)())
USER_KERNEL(putmem_signal_block, SIG_PARAMS,
            LOOP SHX(putmem_signal_block)(d + i * n, s + i * n, n, sig, 1, SHC(SIGNAL_ADD), pe))
USER_KERNEL(putmem_signal_nbi_block, SIG_PARAMS,
            LOOP SHX(putmem_signal_nbi_block)(d + i * n, s + i * n, n, sig, 1, SHC(SIGNAL_ADD), pe); SH(quiet)())
USER_KERNEL(signal_op, (uint64_t *sig, int pe, int iters), LOOP SHX(signal_op)(sig, 1, SHC(SIGNAL_ADD), pe))
USER_KERNEL(signal_wait_until, (uint64_t *sig, uint64_t *r, int iters),
            uint64_t v = 0; LOOP v += SH(signal_wait_until)(sig, SHC(CMP_GE), (uint64_t)i); *r = v)
USER_KERNEL(signal_fetch, (uint64_t *sig, uint64_t *r, int iters), uint64_t v = 0; LOOP v += SH(signal_fetch)(sig); *r = v)
/* a ping-pong, as the latency tests write it: put with signal, wait for the answer */
USER_KERNEL(ping_pong, (char *d, const char *s, size_t n, uint64_t *sig, int pe, int iters),
            LOOP { SH(putmem_signal_nbi)(d, s, n, sig, i + 1, SHC(SIGNAL_SET), pe);
                   SH(signal_wait_until)(sig, SHC(CMP_GE), (uint64_t)i + 1); })

/* ---- ordering and point-to-point synchronization ---- */
USER_KERNEL(quiet, (int iters), LOOP SH(quiet)())
USER_KERNEL(fence, (int *d, int pe, int iters), LOOP { SH(int_p)(d, i, pe); SH(fence)(); })
USER_KERNEL(int_wait_until, (int *ivar, int iters), LOOP SH(int_wait_until)(ivar, SHC(CMP_GE), i))
USER_KERNEL(uint64_wait_until_all, (uint64_t *ivars, size_t n, int iters),
            LOOP SH(uint64_wait_until_all)(ivars, n, NULL, SHC(CMP_GE), (uint64_t)i))
USER_KERNEL(int_wait_until_any, (int *ivars, size_t n, size_t *r, int iters),
            size_t v = 0; LOOP v += SH(int_wait_until_any)(ivars, n, NULL, SHC(CMP_GE), i); *r = v)
USER_KERNEL(int_wait_until_some_vector, (int *ivars, size_t n, size_t *idx, int *vals, int iters),
            LOOP SH(int_wait_until_some_vector)(ivars, n, idx, NULL, SHC(CMP_GE), vals))
USER_KERNEL(int_test, (int *ivar, int *r, int iters), int v = 0; LOOP v += SH(int_test)(ivar, SHC(CMP_GE), i); *r = v)
USER_KERNEL(barrier_all, (int *d, int pe, int iters), LOOP { SH(int_p)(d, i, pe); SH(barrier_all)(); })
USER_KERNEL(barrier_all_block, (int *d, int pe, int iters), LOOP { SHX(putmem_nbi_block)(d, d, 64, pe); SHX(barrier_all_block)(); })

#endif
