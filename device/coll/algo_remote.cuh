/* collect and alltoalls on a team with members reached through the proxy. Their blocks differ in
 * shape (a count per PE, strides), so they do not run over SIMPLE like the other collectives of
 * such a team: each PE pushes its data into the members' dest with routed puts (loads and stores
 * to P2P members, one proxy request per block, or per element for alltoalls' strides), between
 * two team barriers (barrier = quiet + sync, which completes the proxy's requests too). One slice
 * does it all; the others have nothing to do. */
#ifndef GSHMEM_DEVICE_COLL_ALGO_REMOTE_CUH
#define GSHMEM_DEVICE_COLL_ALGO_REMOTE_CUH

#include "proto_direct.cuh"

static __device__ __noinline__ void gshmemi_remote_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a,
                                                        unsigned tid, unsigned nt, int scope)
{
    const int n = t.size, me = t.my_idx;
    const ptrdiff_t es = (ptrdiff_t)a.es;

    gshmemi_team_barrier_slice(t, 0, tid, nt, scope); /* every member's dest is free, and sources are written */
    if (a.kind == GSHMEMI_COLL_ALLTOALLS) {
        for (int i = 0; i < n; i++) {
            const int m = (me + i) % n;
            gshmemi_iput_scope((char *)a.dest + (ptrdiff_t)me * (ptrdiff_t)a.nelems * a.dst * es,
                               (const char *)a.src + (ptrdiff_t)m * (ptrdiff_t)a.nelems * a.sst * es, a.dst, a.sst, a.nelems,
                               a.es, gshmemi_team_pe(t, m), scope, "shmem_alltoalls");
        }
    } else { /* collect: the counts first, in slice 0's acknowledgement words ([member]) */
        uint64_t *cnt = t.ack;
        for (int m = (int)tid; m < n; m += (int)nt) {
            const int pe = gshmemi_team_pe(t, m);
            uint64_t *w = (uint64_t *)gshmemi_peer_ptr_raw(cnt + me, pe);
            if (w) gshmemi_st_release_u64(w, a.nelems);
            else gshmemi_remote_p(cnt + me, a.nelems, sizeof(uint64_t), pe, "shmem_collect");
        }
        gshmemi_team_barrier_slice(t, 0, tid, nt, scope);
        size_t at = 0;
        for (int m = 0; m < me; m++) at += (size_t)gshmemi_ld_acquire_u64(cnt + m);
        for (int i = 0; i < n; i++) {
            const int m = (me + i) % n;
            gshmemi_put_scope((char *)a.dest + at * a.es, a.src, a.nelems * a.es, gshmemi_team_pe(t, m), scope, "shmem_collect", 0);
        }
    }
    gshmemi_scope_sync(scope);
    gshmemi_team_barrier_slice(t, 0, tid, nt, scope); /* the pushes are complete everywhere */
}

#endif
