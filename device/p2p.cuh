/* Where device code turns (symmetric address, PE) into an access: the P2P path (the symmetric
 * address plus the peer's mapped heap base is a pointer to load or store) when the peer's base is
 * set, else the remote path (device/proxy.cuh). Every RMA, AMO and signal routine branches here,
 * once, on its PE's base. */
#ifndef GSHMEM_DEVICE_P2P_CUH
#define GSHMEM_DEVICE_P2P_CUH

#include <stddef.h>
#include <stdio.h>

#include "amo.cuh"
#include "memops.cuh"
#include "proxy.cuh"
#include "state.cuh"

GSHMEMI_DEV char *gshmemi_peer_base(int pe)
{
    return pe < GSHMEMI_CONST_PEERS ? gshmemi_dstate.peer_base_c[pe] : gshmemi_dstate.peer_base[pe];
}

/* Address of sym on pe as mapped in this PE, unchecked (NULL when pe is not P2P-reachable). */
GSHMEMI_DEV void *gshmemi_peer_ptr_raw(const void *sym, int pe)
{
    char *base = gshmemi_peer_base(pe);
    return base ? base + ((const char *)sym - gshmemi_dstate.heap_base) : (void *)0;
}

/* GSHMEM_DEBUG_CHECKS=1: every device call validates its PE and symmetric range, and a violation
 * is reported with the routine, PE, address and heap bounds, then traps (an error at the call,
 * not a corrupted peer heap). The test is one uniform branch on constant memory when off. */
GSHMEMI_DEV int gshmemi_sym_range_ok(const void *sym, size_t n)
{
    const char *p = (const char *)sym, *base = gshmemi_dstate.heap_base;
    return p >= base && p <= base + gshmemi_dstate.heap_size && n <= (size_t)(base + gshmemi_dstate.heap_size - p);
}
GSHMEMI_DEV void gshmemi_check_sym(const void *sym, size_t n, int pe, const char *routine)
{
    if (!gshmemi_dstate.debug_checks) return;
    const char *why = NULL;
    if (pe < 0 || pe >= gshmemi_dstate.n_pes) why = "PE out of range";
    else if (!gshmemi_sym_range_ok(sym, n)) why = "address range outside the symmetric heap";
    else if (!gshmemi_peer_base(pe) && !gshmemi_proxy_on()) why = "PE not reachable (no P2P mapping, no proxy)";
    if (!why) return;
    printf("gshmem: PE %d: %s: %s: pe %d (of %d), address %p, %llu bytes, heap [%p, %p)\n", gshmemi_dstate.my_pe,
           routine, why, pe, gshmemi_dstate.n_pes, sym, (unsigned long long)n, gshmemi_dstate.heap_base,
           gshmemi_dstate.heap_base + gshmemi_dstate.heap_size);
    __trap();
}

GSHMEMI_DEV void *gshmemi_peer_ptr_at(const void *sym, size_t n, int pe, const char *routine)
{
    gshmemi_check_sym(sym, n, pe, routine);
    return gshmemi_peer_ptr_raw(sym, pe);
}
/* Used inside the public inline routines, so __func__ names the routine the user called. */
#define gshmemi_peer_ptr(sym, pe) gshmemi_peer_ptr_at((sym), 1, (pe), __func__)

/* A group's put or get: over P2P every thread copies its share; to a remote PE one thread posts
 * the whole range (and, blocking, waits for it) between the group's syncs. */
GSHMEMI_DEV void gshmemi_put_scope(void *dest, const void *src, size_t n, int pe, int scope, const char *routine,
                                   int blocking = 1)
{
    void *d = gshmemi_peer_ptr_at(dest, n, pe, routine);
    gshmemi_scope_sync(scope);
    if (d) gshmemi_copy(d, src, n, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    else if (gshmemi_scope_tid(scope) == 0) gshmemi_proxy_rma(GSHMEMI_PROXY_PUT, dest, src, n, pe, blocking, routine);
    gshmemi_scope_sync(scope);
}

GSHMEMI_DEV void gshmemi_get_scope(void *dest, const void *src, size_t n, int pe, int scope, const char *routine,
                                   int blocking = 1)
{
    const void *s = gshmemi_peer_ptr_at(src, n, pe, routine);
    gshmemi_scope_sync(scope);
    if (s) gshmemi_copy(dest, s, n, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    else if (gshmemi_scope_tid(scope) == 0) gshmemi_proxy_rma(GSHMEMI_PROXY_GET, dest, src, n, pe, blocking, routine);
    gshmemi_scope_sync(scope);
}

/* shmem_TYPE_p and shmem_TYPE_g: a plain store, a volatile load; remote: the value travels in the
 * request, or comes back in a result slot. */
template <typename T> GSHMEMI_DEV void gshmemi_p(T *dest, T value, int pe, const char *routine)
{
    T *d = (T *)gshmemi_peer_ptr_at(dest, sizeof(T), pe, routine);
    if (d) {
        *d = value;
        return;
    }
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    gshmemi_proxy_p(dest, bits, sizeof(T), pe, routine);
}
template <typename T> GSHMEMI_DEV T gshmemi_g(const T *source, int pe, const char *routine)
{
    const T *s = (const T *)gshmemi_peer_ptr_at(source, sizeof(T), pe, routine);
    if (s) return *(const volatile T *)s;
    uint64_t bits = gshmemi_proxy_g(source, sizeof(T), pe, routine);
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
    void *w = gshmemi_peer_ptr_at(sym, 1, pe, routine);
    if (w) return gshmemi_amo_dev<T>(op, w, value, cond);
    uint64_t v = 0, c = 0, old;
    memcpy(&v, &value, sizeof(T));
    memcpy(&c, &cond, sizeof(T));
    old = gshmemi_proxy_amo(op, (void *)sym, v, c, sizeof(T), pe, routine);
    T r;
    memcpy(&r, &old, sizeof(T));
    return r;
}

/* Strided put/get of nelems elements of es bytes by the calling group; the symmetric side spans
 * (nelems - 1) * stride + 1 elements, which is what the debug check validates. */
GSHMEMI_DEV void gshmemi_strided_copy(char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                      size_t es, unsigned tid, unsigned nt);
/* Remote strided: one request per element, posted by the group's threads in turn, then one
 * thread waits for them all. */
static __device__ __noinline__ void gshmemi_proxy_strided(int op, char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst,
                                                         size_t n, size_t es, int pe, int scope, const char *routine)
{
    for (size_t i = gshmemi_scope_tid(scope); i < n; i += gshmemi_scope_size(scope))
        gshmemi_proxy_rma(op, dest + (ptrdiff_t)i * dst * (ptrdiff_t)es, src + (ptrdiff_t)i * sst * (ptrdiff_t)es, es, pe, 0,
                          routine);
    gshmemi_scope_sync(scope);
    if (gshmemi_scope_tid(scope) == 0) gshmemi_proxy_quiet(routine);
}
GSHMEMI_DEV void gshmemi_iput_scope(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                    int pe, int scope, const char *routine)
{
    char *d = (char *)gshmemi_peer_ptr_at(dest, ((n ? n - 1 : 0) * dst + 1) * es, pe, routine);
    gshmemi_scope_sync(scope);
    if (d) gshmemi_strided_copy(d, (const char *)src, dst, sst, n, es, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    else gshmemi_proxy_strided(GSHMEMI_PROXY_PUT, (char *)dest, (const char *)src, dst, sst, n, es, pe, scope, routine);
    gshmemi_scope_sync(scope);
}
GSHMEMI_DEV void gshmemi_iget_scope(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                    int pe, int scope, const char *routine)
{
    const char *s = (const char *)gshmemi_peer_ptr_at(src, ((n ? n - 1 : 0) * sst + 1) * es, pe, routine);
    gshmemi_scope_sync(scope);
    if (s) gshmemi_strided_copy((char *)dest, s, dst, sst, n, es, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    else gshmemi_proxy_strided(GSHMEMI_PROXY_GET, (char *)dest, (const char *)src, dst, sst, n, es, pe, scope, routine);
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
