/* The RMA family (OpenSHMEM 1.5, 9.5) and the routines every side has (PE queries, quiet, fence,
 * barrier_all), each routine written once, as a row, for host and device.
 *
 * How the family lists work (here, in gshmem/amo.h and wherever a list is expanded): a row is
 *   GSHMEMI_HOSTDEV(return type, name, (parameters), device body, host body)  on both sides, or
 *   GSHMEMI_DEVONLY(return type, name, (parameters), device body)             in CUDA device code only.
 * A body is statements without the last ';' and with no comma outside parentheses. Whoever expands
 * a list first points GSHMEMI_HOSTDEV and GSHMEMI_DEVONLY at one of the emitters below:
 *   gshmem.h            C prototypes            (GSHMEMI_EMIT_DECL, GSHMEMI_EMIT_NONE)
 *   gshmem/device.cuh   the inline definitions  (GSHMEMI_EMIT_INLINE, GSHMEMI_EMIT_DEVICE)
 *   runtime/host_api.c, runtime/host_amo.c: libgshmem's C entry points (GSHMEMI_EMIT_HOST, GSHMEMI_EMIT_NONE)
 * so a routine's device and host code sit side by side in its row and nowhere else. */
#ifndef GSHMEM_RMA_H
#define GSHMEM_RMA_H

#include "types.h"

#define GSHMEMI_EMIT_DECL(ret, name, params, device_body, host_body) ret name params;
#define GSHMEMI_EMIT_HOST(ret, name, params, device_body, host_body) \
    ret name params { host_body; }
#define GSHMEMI_EMIT_INLINE(ret, name, params, device_body, host_body) \
    GSHMEMI_HD ret name params { GSHMEMI_HOSTDEV_BRANCH(device_body, host_body); }
#define GSHMEMI_EMIT_DEVICE(ret, name, params, device_body) \
    GSHMEMI_DEV ret name params { device_body; }
#define GSHMEMI_EMIT_NONE(...)

/* Makes shmem_my_pe, shmem_n_pes, shmem_ptr, shmem_quiet, shmem_fence, shmem_barrier_all. */
#define GSHMEMI_CORE_FAMILY                                                                                   \
    GSHMEMI_HOSTDEV(int, shmem_my_pe, (void), return gshmemi_dstate.my_pe, return gshmemi_host_my_pe())       \
    GSHMEMI_HOSTDEV(int, shmem_n_pes, (void), return gshmemi_dstate.n_pes, return gshmemi_host_n_pes())       \
    /* NULL where pe cannot be reached by load/store or the address is not symmetric (never traps) */         \
    GSHMEMI_HOSTDEV(void *, shmem_ptr, (const void *dest, int pe), return gshmemi_shmem_ptr(dest, pe),        \
                    return gshmemi_host_ptr(dest, pe))                                                        \
    GSHMEMI_HOSTDEV(void, shmem_quiet, (void), gshmemi_quiet(), gshmemi_host_quiet())                         \
    GSHMEMI_HOSTDEV(void, shmem_fence, (void), gshmemi_fence(), gshmemi_host_quiet())                         \
    /* on the device: called by one thread per PE; barrier = quiet + sync */                                  \
    GSHMEMI_HOSTDEV(void, shmem_barrier_all, (void),                                                          \
                    gshmemi_team_barrier_scope(SHMEM_TEAM_WORLD, GSHMEMI_SCOPE_THREAD, "shmem_barrier_all"),  \
                    gshmemi_host_barrier_all())

/* Contiguous RMA of bytes; each typed and sized form calls one of these. Blocking and _nbi: over
 * P2P both complete the loads before returning; _nbi stores become visible at the next
 * shmem_quiet (to a PE reached through the proxy, a blocking call waits for completion, an _nbi one
 * only posts). The device side is gshmemi_put_scope / gshmemi_get_scope (device/p2p.cuh).
 * Makes shmem_putmem, shmem_getmem, shmem_putmem_nbi, shmem_getmem_nbi, and on the device
 * shmemx_putmem_warp, shmemx_putmem_block, shmemx_getmem_warp, shmemx_getmem_block,
 * shmemx_putmem_nbi_warp, shmemx_putmem_nbi_block, shmemx_getmem_nbi_warp, shmemx_getmem_nbi_block. */
#define GSHMEMI_RMA_MEM_PARAMS (void *dest, const void *source, size_t nelems, int pe)
#define GSHMEMI_RMA_MEM(dir, nbi, blocking)                                                                   \
    GSHMEMI_HOSTDEV(void, shmem_##dir##mem##nbi, GSHMEMI_RMA_MEM_PARAMS,                                      \
                    gshmemi_##dir##_scope(dest, source, nelems, pe, GSHMEMI_SCOPE_THREAD, __func__, blocking), \
                    gshmemi_host_##dir##mem(dest, source, nelems, pe, blocking))                              \
    GSHMEMI_DEVONLY(void, shmemx_##dir##mem##nbi##_warp, GSHMEMI_RMA_MEM_PARAMS,                              \
                    gshmemi_##dir##_scope(dest, source, nelems, pe, GSHMEMI_SCOPE_WARP, __func__, blocking))  \
    GSHMEMI_DEVONLY(void, shmemx_##dir##mem##nbi##_block, GSHMEMI_RMA_MEM_PARAMS,                             \
                    gshmemi_##dir##_scope(dest, source, nelems, pe, GSHMEMI_SCOPE_BLOCK, __func__, blocking))

/* Typed RMA for one (name, T) of GSHMEM_RMA_TYPES (and, in CUDA code, GSHMEM_RMA_EXT_TYPES).
 * Makes shmem_TYPE_put, shmem_TYPE_get, shmem_TYPE_put_nbi, shmem_TYPE_get_nbi, shmem_TYPE_p,
 * shmem_TYPE_g, shmem_TYPE_iput, shmem_TYPE_iget, and on the device shmemx_TYPE_put_warp,
 * shmemx_TYPE_put_block, shmemx_TYPE_get_warp, shmemx_TYPE_get_block, shmemx_TYPE_put_nbi_warp,
 * shmemx_TYPE_put_nbi_block, shmemx_TYPE_get_nbi_warp, shmemx_TYPE_get_nbi_block,
 * shmemx_TYPE_iput_block, shmemx_TYPE_iget_block (e.g. shmem_int_put, shmemx_float_get_nbi_warp). */
#define GSHMEMI_RMA_TYPED_BULK(name, T, dir, nbi, blocking)                                                   \
    GSHMEMI_HOSTDEV(void, shmem_##name##_##dir##nbi, (T *dest, const T *source, size_t nelems, int pe),       \
                    shmem_##dir##mem##nbi(dest, source, nelems * sizeof(T), pe),                             \
                    gshmemi_host_##dir##mem(dest, source, nelems * sizeof(T), pe, blocking))                  \
    GSHMEMI_DEVONLY(void, shmemx_##name##_##dir##nbi##_warp, (T *dest, const T *source, size_t nelems, int pe), \
                    shmemx_##dir##mem##nbi##_warp(dest, source, nelems * sizeof(T), pe))                      \
    GSHMEMI_DEVONLY(void, shmemx_##name##_##dir##nbi##_block, (T *dest, const T *source, size_t nelems, int pe), \
                    shmemx_##dir##mem##nbi##_block(dest, source, nelems * sizeof(T), pe))
/* Strided: the symmetric side spans (nelems - 1) * stride + 1 elements of es bytes. */
#define GSHMEMI_RMA_STRIDED(pfx, name, dir, T, es)                                                            \
    GSHMEMI_HOSTDEV(void, pfx##dir##name, (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
                    gshmemi_##dir##_scope(dest, source, dst, sst, nelems, es, pe, GSHMEMI_SCOPE_THREAD, __func__), \
                    gshmemi_host_##dir(dest, source, dst, sst, nelems, es, pe))
#define GSHMEMI_RMA_TYPED(name, T)                                                                            \
    GSHMEMI_RMA_TYPED_BULK(name, T, put, , 1)                                                                 \
    GSHMEMI_RMA_TYPED_BULK(name, T, get, , 1)                                                                 \
    GSHMEMI_RMA_TYPED_BULK(name, T, put, _nbi, 0)                                                             \
    GSHMEMI_RMA_TYPED_BULK(name, T, get, _nbi, 0)                                                             \
    /* p is a plain store (visible at the next fence/quiet, like any put; measured ~0.3% faster than a        \
     * volatile one at full NVLink rate); g is a volatile load, so a loop polling a peer's word re-reads it */ \
    GSHMEMI_HOSTDEV(void, shmem_##name##_p, (T *dest, T value, int pe),                                       \
                    gshmemi_p<T>(dest, value, pe, __func__),                                                  \
                    gshmemi_host_putmem(dest, &value, sizeof(T), pe, 1))                                      \
    GSHMEMI_HOSTDEV(T, shmem_##name##_g, (const T *source, int pe),                                           \
                    return gshmemi_g<T>(source, pe, __func__),                                                \
                    T value; memset(&value, 0, sizeof(T)); gshmemi_host_getmem(&value, source, sizeof(T), pe, 1); \
                    return value)                                                                             \
    GSHMEMI_RMA_STRIDED(shmem_##name##_, , iput, T, sizeof(T))                                                \
    GSHMEMI_RMA_STRIDED(shmem_##name##_, , iget, T, sizeof(T))                                                \
    GSHMEMI_DEVONLY(void, shmemx_##name##_iput_block,                                                         \
                    (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe),          \
                    gshmemi_iput_scope(dest, source, dst, sst, nelems, sizeof(T), pe, GSHMEMI_SCOPE_BLOCK, __func__)) \
    GSHMEMI_DEVONLY(void, shmemx_##name##_iget_block,                                                         \
                    (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe),          \
                    gshmemi_iget_scope(dest, source, dst, sst, nelems, sizeof(T), pe, GSHMEMI_SCOPE_BLOCK, __func__))

/* Sized RMA for one (bits, bytes) of GSHMEM_RMA_SIZES: nelems elements of SIZE bits. Makes
 * shmem_putSIZE, shmem_getSIZE, shmem_putSIZE_nbi, shmem_getSIZE_nbi, shmem_iputSIZE,
 * shmem_igetSIZE (e.g. shmem_put64, shmem_iget32). */
#define GSHMEMI_RMA_SIZED_BULK(bits, bytes, dir, nbi, blocking)                                               \
    GSHMEMI_HOSTDEV(void, shmem_##dir##bits##nbi, (void *dest, const void *source, size_t nelems, int pe),    \
                    shmem_##dir##mem##nbi(dest, source, nelems * bytes, pe),                                  \
                    gshmemi_host_##dir##mem(dest, source, nelems * bytes, pe, blocking))
#define GSHMEMI_RMA_SIZED(bits, bytes)                                                                        \
    GSHMEMI_RMA_SIZED_BULK(bits, bytes, put, , 1)                                                             \
    GSHMEMI_RMA_SIZED_BULK(bits, bytes, get, , 1)                                                             \
    GSHMEMI_RMA_SIZED_BULK(bits, bytes, put, _nbi, 0)                                                         \
    GSHMEMI_RMA_SIZED_BULK(bits, bytes, get, _nbi, 0)                                                         \
    GSHMEMI_RMA_STRIDED(shmem_, bits, iput, void, bytes)                                                      \
    GSHMEMI_RMA_STRIDED(shmem_, bits, iget, void, bytes)

/* The extension types: CUDA code only (plain C has no half or bfloat16). */
#define GSHMEM_RMA_EXT_TYPES(X) X(half, __half) X(bfloat16, __nv_bfloat16)

/* The whole RMA family (the CUDA side adds GSHMEM_RMA_EXT_TYPES(GSHMEMI_RMA_TYPED)). */
#define GSHMEMI_RMA_FAMILY                                                                                    \
    GSHMEMI_RMA_MEM(put, , 1)                                                                                 \
    GSHMEMI_RMA_MEM(get, , 1)                                                                                 \
    GSHMEMI_RMA_MEM(put, _nbi, 0)                                                                             \
    GSHMEMI_RMA_MEM(get, _nbi, 0)                                                                             \
    GSHMEM_RMA_TYPES(GSHMEMI_RMA_TYPED)                                                                       \
    GSHMEM_RMA_SIZES(GSHMEMI_RMA_SIZED)

#endif
