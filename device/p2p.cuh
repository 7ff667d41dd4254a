/* The P2P path: a symmetric address plus the peer's mapped heap base is a pointer to store to. */
#ifndef GSHMEM_DEVICE_P2P_CUH
#define GSHMEM_DEVICE_P2P_CUH

#include "memops.cuh"
#include "state.cuh"

GSHMEMI_DEV char *gshmemi_peer_base(int pe)
{
    return pe < GSHMEMI_CONST_PEERS ? gshmemi_dstate.peer_base_c[pe] : gshmemi_dstate.peer_base[pe];
}

/* Address of sym on pe as mapped in this PE (NULL when pe is not P2P-reachable). */
GSHMEMI_DEV void *gshmemi_peer_ptr(const void *sym, int pe)
{
    char *base = gshmemi_peer_base(pe);
    return base ? base + ((const char *)sym - gshmemi_dstate.heap_base) : (void *)0;
}

GSHMEMI_DEV void gshmemi_put_scope(void *dest, const void *src, size_t n, int pe, int scope)
{
    gshmemi_scope_sync(scope);
    gshmemi_copy(gshmemi_peer_ptr(dest, pe), src, n, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
}

GSHMEMI_DEV void gshmemi_get_scope(void *dest, const void *src, size_t n, int pe, int scope)
{
    gshmemi_scope_sync(scope);
    gshmemi_copy(dest, gshmemi_peer_ptr(src, pe), n, gshmemi_scope_tid(scope), gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
}

#endif
