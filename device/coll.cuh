/* Collectives over the mapped heaps: the entry every form goes through (device calls of a thread
 * group, the _grid forms, the on-stream kernels of collectives/coll_kernels.cuh). It picks the protocol
 * (coll/policy.h) and runs one slice of the collective by it:
 *   coll/proto_ll.cuh, proto_ll128.cuh, proto_simple.cuh  buffered protocols, one set of primitives
 *   coll/algo_exchange.cuh                                 the collectives over any of them
 *   coll/proto_direct.cuh, algo_direct.cuh                 DIRECT and its algorithms
 *   coll/algo_remote.cuh                                   collect, alltoalls of a team with remote members
 *   coll/ops.cuh                                           element operators, word access
 *
 * A collective runs as S slices. A device call from a thread, warp or block is one slice; an
 * on-stream or grid call gives each CTA its own slice, with its own pSync barrier words, buffers
 * and sequence counter, so the CTAs never wait on each other, only on the same slice of the
 * other members. OP is a GSHMEMI_OP_* for reduce and reducescatter, GSHMEMI_OP_NONE for the
 * collectives that move data; T is the element type of a reduction. */
#ifndef GSHMEM_DEVICE_COLL_CUH
#define GSHMEM_DEVICE_COLL_CUH


#include "coll/algo_direct.cuh"
#include "coll/algo_exchange.cuh"
#include "coll/algo_remote.cuh"
#include "coll/proto_ll128.cuh"
#include "coll/proto_simple.cuh"

/* A collective a team with remote members cannot run (coll/policy.h) reports and traps. */
static __device__ __noinline__ void gshmemi_coll_remote_check(const gshmemi_team_dev_t &t, int kind)
{
    const char *why = gshmemi_coll_remote_unsupported(&t, kind);
    if (!why) return;
    printf("gshmem: PE %d: collective on a team of %d: %s\n", gshmemi_dstate.my_pe, t.size, why);
    __trap();
}

/* Which members a compiled collective can reach. A kernel's register count is the most any
 * function it may call needs, so the P2P forms whose registers are bounded (the grid forms, the
 * on-stream kernels of P2P teams) carry no remote code at all; a team with remote members gets
 * kernels of its own on a stream (collectives/coll_kernels.cuh: gshmemi_coll_remote_slice), and the
 * thread/warp/block forms carry both. */
enum { GSHMEMI_COLL_P2P_ONLY = 0, GSHMEMI_COLL_ANY_MEMBERS = 1 };

/* A grid form called on a team with remote members. */
GSHMEMI_DEV_REPORT void gshmemi_coll_remote_refused(const gshmemi_team_dev_t &t)
{
    printf("gshmem: PE %d: a _grid collective on a team of %d with members reached through the proxy: not supported "
           "(use the _on_stream form, or a thread/warp/block form)\n",
           gshmemi_dstate.my_pe, t.size);
    __trap();
}

/* A slice of a team with members reached through the proxy: SIMPLE with routed steps, or the
 * routed pushes of collect and alltoalls. The operator `op` (GSHMEMI_OP_NONE: the collective moves
 * data) is read at run time, so a module holds this path once per element type of its reductions
 * (and once for every data-moving collective, as T = char), not once per operator: the proxy sets
 * the pace here, and each copy is as large as a protocol. */
template <typename T>
GSHMEMI_DEV void gshmemi_coll_remote_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int op, int slice,
                                           int nslices, unsigned tid, unsigned nt, int scope, int part = 0, int nparts = 1)
{
    gshmemi_coll_remote_check(t, a.kind);
    /* only the data-moving instantiation (char) holds collect and alltoalls: a reduction's kernel
     * never runs them, and each kernel carries its own copy of this path */
    if constexpr (std::is_same<T, char>::value)
        if (a.kind == GSHMEMI_COLL_COLLECT || a.kind == GSHMEMI_COLL_ALLTOALLS) {
            if (slice == 0 && part == 0) gshmemi_remote_slice(t, a, tid, nt, scope);
            return;
        }
    /* the slice returns once its requests are complete (gshmemi_simple_slice's last credits) */
    gshmemi_simple_slice<true>(t, a.nelems * a.es, slice, nslices, tid, nt, scope,
                               gshmemi_exchange<GSHMEMI_OP_NONE, T, true>{t, a, op}, part, nparts);
}

template <typename T>
static __device__ __noinline__ void gshmemi_coll_remote_slice_call(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a,
                                                                  int op, int slice, int nslices, unsigned tid, unsigned nt,
                                                                  int scope)
{
    gshmemi_coll_remote_slice<T>(t, a, op, slice, nslices, tid, nt, scope);
}

/* The element type the routed path of <OP, T> is compiled for: T for a reduction, char for the
 * collectives that move data (whatever their T). */
template <int OP, typename T> using gshmemi_remote_elem_t = typename std::conditional<OP == GSHMEMI_OP_NONE, char, T>::type;

/* One slice of a collective. Every member runs the same slices with the same arguments.
 * OWN_KERNEL: called by the on-stream kernel (collectives/coll_kernels.cuh), not from a user's kernel. */
template <int OP, typename T, bool OWN_KERNEL = false, int REACH = GSHMEMI_COLL_ANY_MEMBERS>
GSHMEMI_DEV void gshmemi_coll_slice(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int slice, int nslices,
                                    unsigned tid, unsigned nt, int scope)
{
    if (t.size == 1) { /* nothing to exchange: the collective is a local copy */
        size_t bytes = a.kind == GSHMEMI_COLL_ALLTOALLS ? 0 : a.nelems * a.es, lo, hi;
        if (a.kind == GSHMEMI_COLL_ALLTOALLS) {
            gshmemi_slice_range(a.nelems, 1, slice, nslices, &lo, &hi);
            gshmemi_strided_copy((char *)a.dest + (ptrdiff_t)lo * a.dst * (ptrdiff_t)a.es,
                                 (const char *)a.src + (ptrdiff_t)lo * a.sst * (ptrdiff_t)a.es, a.dst, a.sst, hi - lo, a.es, tid, nt);
        } else if (a.dest != a.src) {
            gshmemi_slice_range(bytes, 16, slice, nslices, &lo, &hi);
            gshmemi_copy((char *)a.dest + lo, (const char *)a.src + lo, hi - lo, tid, nt);
        }
        gshmemi_scope_sync(scope);
        return;
    }
    const size_t blk = a.nelems * a.es;
    if constexpr (REACH == GSHMEMI_COLL_ANY_MEMBERS) {
        if (t.has_remote) {
            gshmemi_coll_remote_slice_call<gshmemi_remote_elem_t<OP, T>>(t, a, OP, slice, nslices, tid, nt, scope);
            return;
        }
    } else if (t.has_remote) {
        gshmemi_coll_remote_refused(t);
    }
    if (a.proto == GSHMEMI_PROTO_SIMPLE) {
        gshmemi_simple_slice<false>(t, blk, slice, nslices, tid, nt, scope, gshmemi_exchange<OP, T>{t, a});
        return;
    }
    if (a.proto == GSHMEMI_PROTO_LL128) {
        gshmemi_ll128_slice(t, blk, slice, nslices, tid, nt, scope, gshmemi_exchange<OP, T>{t, a});
        return;
    }
    if (a.proto == GSHMEMI_PROTO_LL) {
        gshmemi_ll_slice(t, blk, slice, nslices, tid, nt, scope, gshmemi_exchange<OP, T>{t, a});
        return;
    }
    gshmemi_direct_slice<OP, T, OWN_KERNEL>(t, a, slice, nslices, tid, nt, scope);
}

/* The protocol rule (coll/policy.h) with this module's settings. */
GSHMEMI_DEV int gshmemi_coll_proto(const gshmemi_team_dev_t &t, const gshmemi_coll_args_t &a, int scope)
{
    int p = gshmemi_pick_proto(a.kind, a.nelems * a.es, gshmemi_proto_rule_of(&gshmemi_dstate, &t));
    /* LL128 lines are stored by whole warps */
    if (p == GSHMEMI_PROTO_LL128 && (scope == GSHMEMI_SCOPE_THREAD || gshmemi_scope_size(scope) % 32)) p = GSHMEMI_PROTO_LL;
    return p;
}

/* A device call by one thread group (thread, warp or block scope): slice 0. */
template <int OP, typename T>
GSHMEMI_DEV int gshmemi_coll_group(shmem_team_t team, gshmemi_coll_args_t a, int scope, const char *routine)
{
    gshmemi_team_dev_t t = gshmemi_team_get(team, routine);
    if (t.my_idx < 0) return -1;
    a.proto = gshmemi_group_proto(gshmemi_coll_proto(t, a, scope), gshmemi_proto_rule_of(&gshmemi_dstate, &t),
                                  a.nelems * a.es, gshmemi_scope_size(scope));
    gshmemi_scope_sync(scope);
    gshmemi_coll_slice<OP, T>(t, a, 0, 1, gshmemi_scope_tid(scope), gshmemi_scope_size(scope), scope);
    return 0;
}

/* Every CTA of a grid whose CTAs are all resident (shmemx_collective_launch checks) meets here.
 * The first thread of each CTA adds to the team's grid word (CTA 0 adds 2^31 - (CTAs - 1), every
 * other 1), so the word's top bit flips when the last CTA arrives, and waits for the flip; the
 * additions of one meeting total 2^31, so the word needs no reset between meetings. */
GSHMEMI_DEV void gshmemi_grid_sync(unsigned int *word)
{
    __syncthreads();
    if (threadIdx.x + threadIdx.y + threadIdx.z == 0) {
        const unsigned int ctas = gridDim.x * gridDim.y * gridDim.z;
        const unsigned int add = gshmemi_cta_index() == 0 ? 0x80000000u - (ctas - 1) : 1u;
        unsigned int before, now;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(before) : "l"(word), "r"(add) : "memory");
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
        } while (((before ^ now) & 0x80000000u) == 0);
    }
    __syncthreads();
}

/* The grid form: CTA b (numbered across every grid dimension) is slice b; CTAs past the slice
 * limit only wait at the grid sync. The team's descriptor is read into shared memory: a team
 * passed at run time comes from global memory, and held in registers it took the collective past
 * the 128 registers a 512-thread cooperative CTA may use (WORLD's sits in constant memory;
 * grid_registers checks the bound). The grid sync at the end keeps the next call from
 * overwriting it while it is read. */
template <int OP, typename T> GSHMEMI_DEV int gshmemi_coll_grid(shmem_team_t team, gshmemi_coll_args_t a, const char *routine)
{
    __shared__ gshmemi_team_dev_t t;
    if (threadIdx.x + threadIdx.y + threadIdx.z == 0) t = gshmemi_team_get(team, routine);
    __syncthreads();
    if (t.my_idx < 0) {
        __syncthreads(); /* every thread has read it before a next call may overwrite it */
        return -1;
    }
    a.proto = gshmemi_coll_proto(t, a, GSHMEMI_SCOPE_BLOCK);
    const unsigned ctas = gridDim.x * gridDim.y * gridDim.z;
    const unsigned cta = gshmemi_cta_index();
    const unsigned most = (unsigned)gshmemi_proto_slices(&t, a.proto);
    const int slices = (int)(ctas < most ? ctas : most);
    __syncthreads();
    if ((int)cta < slices)
        gshmemi_coll_slice<OP, T, false, GSHMEMI_COLL_P2P_ONLY>(t, a, (int)cta, slices, gshmemi_scope_tid(GSHMEMI_SCOPE_BLOCK),
                                  gshmemi_scope_size(GSHMEMI_SCOPE_BLOCK), GSHMEMI_SCOPE_BLOCK);
    gshmemi_grid_sync((unsigned int *)(t.seq + GSHMEMI_SEQ_GRID));
    return 0;
}

#endif
