/* Where device code turns (symmetric address, PE) into an access: the P2P path (the symmetric
 * address plus the peer's mapped heap base is a pointer to load or store) when the peer's base is
 * set, else the remote path (device/proxy.cuh, reached through device/remote.cuh). Every RMA, AMO
 * and signal routine branches here, once, on its PE's base. */
#ifndef GSHMEM_DEVICE_P2P_CUH
#define GSHMEM_DEVICE_P2P_CUH

#include <stddef.h>
#include <stdio.h>

#include "amo.cuh"
#include "memops.cuh"
#include "remote.cuh"
#include "state.cuh"

/* Address of sym on pe as mapped in this PE, unchecked (NULL when pe is not P2P-reachable). */
GSHMEMI_DEV void *gshmemi_peer_ptr_raw(const void *sym, int pe)
{
    char *base = gshmemi_peer_base(pe);
    return base ? base + ((const char *)sym - gshmemi_dstate.heap_base) : (void *)0;
}

/* The routing step of every RMA, AMO and signal routine: pe's heap base as mapped here, NULL when
 * pe is reached remotely, after the debug check of n bytes at sym. Callers branch on this base,
 * not on the address formed from it: the base depends on the PE alone (and its load leaves the
 * caller's loop with the test), where the address may change on every turn and differ between
 * threads. */
GSHMEMI_DEV char *gshmemi_route(const void *sym, size_t n, int pe, const char *routine)
{
    gshmemi_check_sym(sym, n, pe, routine);
    return gshmemi_peer_base(pe);
}
/* sym's address in the heap mapped at base. */
GSHMEMI_DEV void *gshmemi_at(char *base, const void *sym) { return base + ((const char *)sym - gshmemi_dstate.heap_base); }

/* A group's put or get: over P2P every thread copies its share; to a remote PE one thread posts
 * the whole range (and, blocking, waits for it) between the group's syncs. The whole group
 * leaves for the remote path in one call, before the P2P path's first sync, so that path is the
 * copy between two syncs as before the remote layer: a call under a test of the thread's index
 * cost every caller a convergence barrier (sm_90, put_bw's kernel: 31 BSSY and 1631
 * instructions, 27 and 1581 now, 26 and 1560 without a remote path). */
GSHMEMI_DEV void gshmemi_put_scope(void *dest, const void *src, size_t n, int pe, int scope, const char *routine,
                                   int blocking = 1)
{
    char *base = gshmemi_route(dest, n, pe, routine);
    if (!base) {
        gshmemi_remote_rma_scope(GSHMEMI_PROXY_PUT, dest, src, n, pe, blocking, scope, routine);
        return;
    }
    gshmemi_scope_sync(scope);
    gshmemi_copy(gshmemi_at(base, dest), src, n, gshmemi_scope_tid_fresh(scope), gshmemi_scope_size_fresh(scope));
    gshmemi_scope_sync(scope);
}

GSHMEMI_DEV void gshmemi_get_scope(void *dest, const void *src, size_t n, int pe, int scope, const char *routine,
                                   int blocking = 1)
{
    char *base = gshmemi_route(src, n, pe, routine);
    if (!base) {
        gshmemi_remote_rma_scope(GSHMEMI_PROXY_GET, dest, src, n, pe, blocking, scope, routine);
        return;
    }
    gshmemi_scope_sync(scope);
    gshmemi_copy(dest, gshmemi_at(base, src), n, gshmemi_scope_tid_fresh(scope), gshmemi_scope_size_fresh(scope));
    gshmemi_scope_sync(scope);
}

/* shmem_TYPE_p and shmem_TYPE_g: a plain store, a volatile load; remote: the value travels in the
 * request, or comes back in a result slot. */
template <typename T> GSHMEMI_DEV void gshmemi_p(T *dest, T value, int pe, const char *routine)
{
    char *base = gshmemi_route(dest, sizeof(T), pe, routine);
    if (base) {
        *(T *)gshmemi_at(base, dest) = value;
        return;
    }
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    gshmemi_remote_p(dest, bits, sizeof(T), pe, routine);
}
template <typename T> GSHMEMI_DEV T gshmemi_g(const T *source, int pe, const char *routine)
{
    char *base = gshmemi_route(source, sizeof(T), pe, routine);
    if (base) return *(const volatile T *)gshmemi_at(base, source);
    uint64_t bits = gshmemi_remote_g(source, sizeof(T), pe, routine);
    T value;
    memcpy(&value, &bits, sizeof(T));
    return value;
}

/* shmem_ptr on the device: NULL where pe cannot be reached by load/store or the address is not
 * symmetric (never traps). */
GSHMEMI_DEV void *gshmemi_shmem_ptr(const void *dest, int pe)
{
    if (pe < 0 || pe >= gshmemi_dstate.n_pes || !gshmemi_sym_range_ok(dest, 0)) return (void *)0;
    return gshmemi_peer_ptr_raw(dest, pe);
}

/* An atomic on sym at pe: the peer's word as mapped here, then the operation (device/amo.cuh);
 * remote: the operation travels to the proxy as bits of T's width. */
template <typename T> GSHMEMI_DEV T gshmemi_amo_at(int op, const T *sym, T value, T cond, int pe, const char *routine)
{
    char *base = gshmemi_route(sym, 1, pe, routine);
    if (base) return gshmemi_amo_dev<T>(op, gshmemi_at(base, sym), value, cond);
    uint64_t v = 0, c = 0, old;
    memcpy(&v, &value, sizeof(T));
    memcpy(&c, &cond, sizeof(T));
    old = gshmemi_remote_amo(op, (void *)sym, v, c, sizeof(T), pe, routine);
    T r;
    memcpy(&r, &old, sizeof(T));
    return r;
}

/* Strided put/get of nelems elements of es bytes by the calling group; the symmetric side spans
 * (nelems - 1) * stride + 1 elements, which is what the debug check validates. */
GSHMEMI_DEV void gshmemi_strided_copy(char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                      size_t es, unsigned tid, unsigned nt);
GSHMEMI_DEV void gshmemi_iput_scope(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                    int pe, int scope, const char *routine)
{
    char *base = gshmemi_route(dest, ((n ? n - 1 : 0) * dst + 1) * es, pe, routine);
    gshmemi_scope_sync(scope);
    if (base) gshmemi_strided_copy((char *)gshmemi_at(base, dest), (const char *)src, dst, sst, n, es, gshmemi_scope_tid_fresh(scope), gshmemi_scope_size_fresh(scope));
    else gshmemi_remote_strided(GSHMEMI_PROXY_PUT, (char *)dest, (const char *)src, dst, sst, n, es, pe, scope, routine);
    gshmemi_scope_sync(scope);
}
GSHMEMI_DEV void gshmemi_iget_scope(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                    int pe, int scope, const char *routine)
{
    char *base = gshmemi_route(src, ((n ? n - 1 : 0) * sst + 1) * es, pe, routine);
    gshmemi_scope_sync(scope);
    if (base) gshmemi_strided_copy((char *)dest, (const char *)gshmemi_at(base, src), dst, sst, n, es, gshmemi_scope_tid_fresh(scope), gshmemi_scope_size_fresh(scope));
    else gshmemi_remote_strided(GSHMEMI_PROXY_GET, (char *)dest, (const char *)src, dst, sst, n, es, pe, scope, routine);
    gshmemi_scope_sync(scope);
}

/* Strided copy of nelems elements of size es: dest[i*dst] = src[i*sst], split across the group. */
GSHMEMI_DEV void gshmemi_strided_copy(char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                      size_t es, unsigned tid, unsigned nt)
{
    for (size_t i = tid; i < nelems; i += nt) {
        char *d = dest + (ptrdiff_t)i * dst * (ptrdiff_t)es;
        const char *s = src + (ptrdiff_t)i * sst * (ptrdiff_t)es;
        switch (es) {
        case 1: *(uint8_t *)d = __ldcg((const unsigned char *)s); break;
        case 2: *(uint16_t *)d = __ldcg((const unsigned short *)s); break;
        case 4: *(uint32_t *)d = __ldcg((const unsigned int *)s); break;
        case 8: *(uint64_t *)d = __ldcg((const unsigned long long *)s); break;
        default: gshmemi_copy(d, s, es, 0, 1); break;
        }
    }
}

#endif
