/* The P2P path: a symmetric address plus the peer's mapped heap base is a pointer to store to. */
#ifndef GSHMEM_DEVICE_P2P_CUH
#define GSHMEM_DEVICE_P2P_CUH

#include <stddef.h>
#include <stdio.h>

#include "amo.cuh"
#include "memops.cuh"
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
    else if (!gshmemi_peer_base(pe)) why = "PE not reachable over P2P";
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

GSHMEMI_DEV void gshmemi_put_scope(void *dest, const void *src, size_t n, int pe, int scope, const char *routine)
{
    gshmemi_scope_sync(scope);
    gshmemi_copy(gshmemi_peer_ptr_at(dest, n, pe, routine), src, n, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
}

GSHMEMI_DEV void gshmemi_get_scope(void *dest, const void *src, size_t n, int pe, int scope, const char *routine)
{
    gshmemi_scope_sync(scope);
    gshmemi_copy(dest, gshmemi_peer_ptr_at(src, n, pe, routine), n, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
}

/* shmem_ptr on the device: NULL where pe cannot be reached by load/store or the address is not
 * symmetric (never traps). */
GSHMEMI_DEV void *gshmemi_shmem_ptr(const void *dest, int pe)
{
    if (pe < 0 || pe >= gshmemi_dstate.n_pes || !gshmemi_sym_range_ok(dest, 0)) return (void *)0;
    return gshmemi_peer_ptr_raw(dest, pe);
}

/* An atomic on sym at pe: the peer's word as mapped here, then the operation (device/amo.cuh). */
template <typename T> GSHMEMI_DEV T gshmemi_amo_at(int op, const T *sym, T value, T cond, int pe, const char *routine)
{
    return gshmemi_amo_dev<T>(op, gshmemi_peer_ptr_at(sym, 1, pe, routine), value, cond);
}

/* Strided put/get of nelems elements of es bytes by the calling group; the symmetric side spans
 * (nelems - 1) * stride + 1 elements, which is what the debug check validates. */
GSHMEMI_DEV void gshmemi_strided_copy(char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                      size_t es, unsigned tid, unsigned nt);
GSHMEMI_DEV void gshmemi_iput_scope(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                    int pe, int scope, const char *routine)
{
    char *d = (char *)gshmemi_peer_ptr_at(dest, ((n ? n - 1 : 0) * dst + 1) * es, pe, routine);
    gshmemi_scope_sync(scope);
    gshmemi_strided_copy(d, (const char *)src, dst, sst, n, es, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
}
GSHMEMI_DEV void gshmemi_iget_scope(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                    int pe, int scope, const char *routine)
{
    const char *s = (const char *)gshmemi_peer_ptr_at(src, ((n ? n - 1 : 0) * sst + 1) * es, pe, routine);
    gshmemi_scope_sync(scope);
    gshmemi_strided_copy((char *)dest, s, dst, sst, n, es, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
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
