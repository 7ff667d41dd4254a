/* Stream-ordered collectives: the on-stream entry (gshmemi_coll_stream, called by the typed
 * wrappers of include/gshmem/coll.h), argument checks, protocol (device/coll/policy.h) and slice
 * choice, and the kernels: one CTA per slice, each running device/coll.cuh's gshmemi_coll_slice.
 * The blocking host forms and the barriers' entry points are in coll_api.c. */
#include "coll_kernels.cuh"
#include "../runtime/base/cudawrap.h"
#include "../runtime/base/env.h"
#include "launch.h"

static bool reduces(int kind) { return kind == GSHMEMI_COLL_REDUCE || kind == GSHMEMI_COLL_REDUCESCATTER; }

static coll_kernel_t kernel_of(int kind, int dtype, int op)
{
    /* one kernel moves data of every type (the element type of a reduction only) */
    if (!reduces(kind)) return gshmemi_coll_kernel_data();
    /* Two's complement: bitwise ops, sums and products give the same bits signed or unsigned, so
     * the signed kinds share the unsigned kernels (fewer instantiations, a faster build). */
    if (op != GSHMEMI_OP_MIN && op != GSHMEMI_OP_MAX) {
        switch (dtype) {
        case GSHMEMI_DT_INT8: dtype = GSHMEMI_DT_UINT8; break;
        case GSHMEMI_DT_INT16: dtype = GSHMEMI_DT_UINT16; break;
        case GSHMEMI_DT_INT32: dtype = GSHMEMI_DT_UINT32; break;
        case GSHMEMI_DT_INT64: dtype = GSHMEMI_DT_UINT64; break;
        default: break;
        }
    }
    switch (dtype) {
    case GSHMEMI_DT_INT8:
    case GSHMEMI_DT_UINT8:
    case GSHMEMI_DT_INT16:
    case GSHMEMI_DT_UINT16: return gshmemi_coll_kernel_int_narrow(dtype, op);
    case GSHMEMI_DT_INT32:
    case GSHMEMI_DT_UINT32:
    case GSHMEMI_DT_INT64:
    case GSHMEMI_DT_UINT64: return gshmemi_coll_kernel_int_wide(dtype, op);
    default: return gshmemi_coll_kernel_float(dtype, op);
    }
}

static int check_sym(const char *routine, const char *what, const void *p, size_t n)
{
    if (gshmemi_coll_rt->in_heap(p, n)) return GSHMEMI_OK;
    GSHMEMI_ERROR("coll", "%s: %s %p (%zu bytes) is not inside the symmetric heap", routine, what, p, n);
    return GSHMEMI_ERR_INVALID;
}

/* Bytes of dest and source each collective touches on this PE. */
static void coll_extents(const gshmemi_coll_args_t *a, int n, size_t *dbytes, size_t *sbytes)
{
    size_t blk = a->nelems * a->es;
    switch (a->kind) {
    case GSHMEMI_COLL_FCOLLECT: *dbytes = n * blk, *sbytes = blk; break;
    case GSHMEMI_COLL_COLLECT: *dbytes = blk, *sbytes = blk; break; /* dest: at least this PE's part */
    case GSHMEMI_COLL_ALLTOALL: *dbytes = *sbytes = n * blk; break;
    case GSHMEMI_COLL_ALLTOALLS: {
        size_t last = (size_t)n * a->nelems - 1;
        *dbytes = (last * (size_t)a->dst + 1) * a->es;
        *sbytes = (last * (size_t)a->sst + 1) * a->es;
        break;
    }
    case GSHMEMI_COLL_REDUCESCATTER: *dbytes = blk, *sbytes = n * blk; break;
    default: *dbytes = *sbytes = blk; break; /* broadcast, reduce */
    }
}

/* How many CTAs a DIRECT collective may take: set at init, the same on every PE (launch.h). */
static gshmemi_direct_ctas_t direct_ctas = {GSHMEMI_COLL_SLICES, GSHMEMI_COLL_SLICES};

extern "C" void gshmemi_coll_set_ctas(const gshmemi_direct_ctas_t *c)
{
    direct_ctas = {gshmemi_clamp_ctas(c->most), gshmemi_clamp_ctas(c->bulk)};
}

extern "C" int gshmemi_coll_most_ctas(void) { return direct_ctas.most; }

/* Every on-stream kernel goes through here. With GSHMEM_COLL_PDL=1 it may launch while the
 * previous kernel of the stream finishes (programmatic dependent launch); the kernel's first act
 * is to wait for that kernel's completion and memory (gshmemi_pdl_enter). */
template <typename... Args>
static int launch(void (*k)(Args...), int blocks, int threads, cudaStream_t stream, Args... args)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = gshmemi_env.COLL_PDL ? 1 : 0;
    GSHMEMI_CUDACHECK(cudaLaunchKernelEx(&cfg, k, args...));
    return GSHMEMI_OK;
}

extern "C" int gshmemi_coll_stream(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op,
                                   struct CUstream_st *stream)
{
    if (!gshmemi_coll_require_init(routine)) return -1;
    return gshmemi_coll_launch(routine, team, a, dtype, op, (cudaStream_t)stream) == GSHMEMI_OK ? 0 : -1;
}

/* Picks the protocol and slices of a checked collective on team `t` and enqueues its kernel. */
static int enqueue(const gshmemi_team_dev_t *t, gshmemi_coll_args_t *a, int dtype, int op, cudaStream_t stream)
{
    const size_t blk = a->nelems * a->es;
    int slices, threads, parts = 1;

    /* the protocol: the device rule, decided here once for all slices */
    a->proto = gshmemi_pick_proto(a->kind, blk, gshmemi_proto_rule_of(gshmemi_coll_rt->dstate(), t));

    if (a->proto == GSHMEMI_PROTO_DIRECT) {
        size_t moved = a->kind == GSHMEMI_COLL_FCOLLECT || a->kind == GSHMEMI_COLL_ALLTOALL ? t->size * blk : blk;
        size_t want = (moved + DIRECT_SLICE_BYTES - 1) / DIRECT_SLICE_BYTES;
        const int same_size = a->kind != GSHMEMI_COLL_COLLECT && a->kind != GSHMEMI_COLL_ALLTOALLS;
        int most = gshmemi_direct_most(direct_ctas, moved, same_size);
        if (gshmemi_env.COLL_CTAS == 0) most = gshmemi_direct_algo_most(most, t->size, a);
        slices = want < 1 ? 1 : want > (size_t)most ? most : (int)want;
        if (!same_size) slices = most; /* sizes differ per PE */
        threads = DIRECT_THREADS;
    } else { /* a buffer's worth per slice and step */
        /* A team with remote members runs routed SIMPLE steps, in its own geometry (policy.h):
         * few slices of large chunks, each worked by a few CTAs (gshmemi_routed_parts). The copy
         * backend's device-to-device copies may run on SMs (they waited while a kernel held every
         * SM slot), so this kernel leaves most of them free. */
        size_t per = t->has_remote                     ? gshmemi_simple_routed_chunk(t)
                     : a->proto == GSHMEMI_PROTO_LL    ? GSHMEMI_LL_SLICE_DATA
                     : a->proto == GSHMEMI_PROTO_LL128 ? GSHMEMI_LL128_SLICE_DATA
                                                       : GSHMEMI_SIMPLE_CHUNK;
        size_t chunks = (blk + per - 1) / per;
        int most = t->has_remote ? gshmemi_simple_routed_slices(t) : gshmemi_proto_slices(t, a->proto);
        slices = chunks < (size_t)most ? (int)chunks : most;
        if (slices < 1) slices = 1;
        if (t->has_remote) parts = gshmemi_routed_parts(slices, direct_ctas.most, blk < per ? blk : per);
        threads = a->proto == GSHMEMI_PROTO_LL ? LL_THREADS : DIRECT_THREADS;
    }
    if (t->has_remote)
        return launch(gshmemi_coll_remote_kernel(reduces(a->kind), dtype), slices * parts, threads, stream, *t, *a,
                      reduces(a->kind) ? op : (int)GSHMEMI_OP_NONE, slices);
    return launch(kernel_of(a->kind, dtype, op), slices, threads, stream, *t, *a);
}


/* The world team's two levels, when the runtime has set them (gshmemi_coll_set_levels). */
static struct {
    gshmemi_team_dev_t host, across; /* size 0: none */
} levels;

extern "C" void gshmemi_coll_set_levels(const gshmemi_team_dev_t *host, const gshmemi_team_dev_t *across)
{
    if (host && across) levels.host = *host, levels.across = *across;
    else memset(&levels, 0, sizeof(levels));
}

/* A world reduction in two levels, on the stream, four collectives of the private teams: with L
 * PEs a host and H hosts, the result cut into L parts of H pieces (the tail that does not divide
 * goes the one-level way):
 *   1. reduce-scatter within the host (loads and stores): this PE's part of every host-mate's source
 *      reduced into its place in dest;
 *   2. reduce-scatter across hosts (through the proxy): the part's pieces, this PE's piece reduced
 *      in place;
 *   3. all-gather across hosts: the part's reduced pieces from every host;
 *   4. all-gather within the host: the parts.
 * Each step reads and writes only what no other PE's step touches at the same time: a member
 * reduces, or sends, its own piece in place while its peers read and write the others, and the
 * requests the proxy still serves read pieces this PE does not write. */
static int reduce_in_levels(const gshmemi_team_dev_t *world, gshmemi_coll_args_t *a, int dtype, int op, cudaStream_t stream)
{
    const gshmemi_team_dev_t *host = &levels.host, *across = &levels.across;
    const size_t es = a->es, L = (size_t)host->size, H = (size_t)across->size;
    const size_t unit = es >= 16 ? 1 : 16 / es;                /* a piece stays 16-byte aligned */
    const size_t piece = a->nelems / (L * H * unit) * unit;    /* elements of a piece */
    const size_t part = piece * H, main = part * L, tail = a->nelems - main;
    char *dest = (char *)a->dest;
    const char *src = (const char *)a->src;
    char *mine = dest + (size_t)host->my_idx * part * es, *my_piece = mine + (size_t)across->my_idx * piece * es;
    gshmemi_coll_args_t s = *a;

    if (piece == 0) return enqueue(world, a, dtype, op, stream);
    s.kind = GSHMEMI_COLL_REDUCESCATTER, s.dest = mine, s.src = src, s.nelems = part;
    GSHMEMI_CHECK(enqueue(host, &s, dtype, op, stream));
    s.kind = GSHMEMI_COLL_REDUCESCATTER, s.dest = my_piece, s.src = mine, s.nelems = piece;
    GSHMEMI_CHECK(enqueue(across, &s, dtype, op, stream));
    s.kind = GSHMEMI_COLL_FCOLLECT, s.dest = mine, s.src = my_piece, s.nelems = piece;
    GSHMEMI_CHECK(enqueue(across, &s, dtype, op, stream));
    s.kind = GSHMEMI_COLL_FCOLLECT, s.dest = dest, s.src = mine, s.nelems = part;
    GSHMEMI_CHECK(enqueue(host, &s, dtype, op, stream));
    if (!tail) return GSHMEMI_OK;
    s = *a;
    s.dest = dest + main * es, s.src = src + main * es, s.nelems = tail;
    return enqueue(world, &s, dtype, op, stream);
}

extern "C" int gshmemi_coll_launch(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op,
                                   cudaStream_t stream)
{
    const gshmemi_team_dev_t *t = gshmemi_coll_rt->team_member(team, routine);
    size_t dbytes, sbytes, blk = a->nelems * a->es;

    if (!t) return GSHMEMI_ERR_INVALID;
    if (a->kind == GSHMEMI_COLL_BROADCAST && (a->root < 0 || a->root >= t->size)) {
        GSHMEMI_ERROR("coll", "%s: PE_root %d is outside the team (0..%d)", routine, a->root, t->size - 1);
        return GSHMEMI_ERR_INVALID;
    }
    if (a->kind == GSHMEMI_COLL_ALLTOALLS && (a->dst < 1 || a->sst < 1)) {
        GSHMEMI_ERROR("coll", "%s: strides must be positive (dst %td, sst %td)", routine, a->dst, a->sst);
        return GSHMEMI_ERR_INVALID;
    }
    coll_kernel_t k = kernel_of(a->kind, dtype, op);
    if (!k) {
        GSHMEMI_ERROR("coll", "%s: operator %d is not defined for element kind %d", routine, op, dtype);
        return GSHMEMI_ERR_INVALID;
    }
    if (a->nelems == 0 && a->kind != GSHMEMI_COLL_COLLECT) return GSHMEMI_OK; /* the same on every member */
    coll_extents(a, t->size, &dbytes, &sbytes);
    GSHMEMI_CHECK(check_sym(routine, "dest", a->dest, dbytes));
    GSHMEMI_CHECK(check_sym(routine, "source", a->src, sbytes));
    if (a->dest != a->src && (char *)a->dest < (const char *)a->src + sbytes && (const char *)a->src < (char *)a->dest + dbytes) {
        GSHMEMI_ERROR("coll", "%s: dest and source overlap without being the same array", routine);
        return GSHMEMI_ERR_INVALID;
    }
    if (a->dest == a->src && a->kind != GSHMEMI_COLL_REDUCE && a->nelems) {
        GSHMEMI_ERROR("coll", "%s: dest and source must be different arrays", routine);
        return GSHMEMI_ERR_INVALID;
    }

    const char *remote_why = gshmemi_coll_remote_unsupported(t, a->kind);
    if (remote_why) {
        GSHMEMI_ERROR("coll", "%s: %s", routine, remote_why);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    if (team == SHMEM_TEAM_WORLD && a->kind == GSHMEMI_COLL_REDUCE && levels.host.size && blk >= gshmemi_env.COLL_LEVELS_MIN)
        return reduce_in_levels(t, a, dtype, op, stream);
    return enqueue(t, a, dtype, op, stream);
}

/* ROUTED: the team has remote members, or this PE has a remote transport whose requests the
 * barrier completes first; else the P2P kernel, with no remote code (as the collectives'). */
template <bool ROUTED> static __global__ void barrier_kernel(gshmemi_team_dev_t t)
{
    /* One warp: its lanes signal and watch the peers of a round in parallel. Work enqueued before
     * this kernel is complete when it starts, so barrier and sync are the same kernel. */
    gshmemi_pdl_enter();
    gshmemi_team_barrier_slice<ROUTED>(t, 0, threadIdx.x, blockDim.x, GSHMEMI_SCOPE_WARP);
}

extern "C" int gshmemi_launch_barrier(shmem_team_t team, cudaStream_t stream, const char *routine)
{
    const gshmemi_team_dev_t *t = gshmemi_coll_rt->team_member(team, routine);
    const gshmemi_device_state_t *ds = gshmemi_coll_rt->dstate();
    if (!t) return GSHMEMI_ERR_INVALID;
    if (t->has_remote || ds->proxy.size || ds->ibgda) return launch(barrier_kernel<true>, 1, 32, stream, *t);
    return launch(barrier_kernel<false>, 1, 32, stream, *t);
}

static __global__ void quiet_kernel(void) { __threadfence_system(); }

extern "C" int gshmemi_launch_quiet(cudaStream_t stream)
{
    quiet_kernel<<<1, 1, 0, stream>>>();
    GSHMEMI_CUDACHECK(cudaGetLastError());
    return GSHMEMI_OK;
}
