/* Which protocol and algorithm a collective takes: the one rule, in plain C, shared by the host
 * launcher (collectives/coll.cu), the device forms (device/coll.cuh) and test/unit/test_coll_rules.c.
 *
 * Protocols: LL up to ll_max bytes per block, then LL128 up to ll128_max and SIMPLE up to
 * simple_max where they are available, DIRECT above (and always for collect and alltoalls, whose
 * blocks are not one shape). A forced LL128 falls back to LL, a forced SIMPLE to DIRECT, where
 * they are not available. Availability is a property of how the team's members are reached
 * (gshmemi_proto_rule_of): LL, LL128 and DIRECT need all members reachable by loads and stores
 * (P2P), SIMPLE also reaches members through the proxy, and LL128 and SIMPLE need their buffers,
 * which only the world team has. A team with a remote member runs SIMPLE at every size. */
#ifndef GSHMEM_DEVICE_COLL_POLICY_H
#define GSHMEM_DEVICE_COLL_POLICY_H

#include <stddef.h>

#include "gshmem/types.h"

/* How a team's members are reached, as the protocols need to know it. */
enum {
    GSHMEMI_REACH_P2P = 1 << 0,   /* every member's heap is mapped: loads and stores reach it */
    GSHMEMI_REACH_LL128 = 1 << 1, /* the team has LL128 buffers */
    GSHMEMI_REACH_SIMPLE = 1 << 2 /* the team has SIMPLE buffers */
};

typedef struct gshmemi_proto_rule {
    int forced;               /* GSHMEMI_PROTO_*; AUTO: by size */
    size_t ll_max, ll128_max, simple_max;
    int has_ll128, has_simple;
    int p2p;                  /* every member by loads and stores; else only SIMPLE, whose steps go
                               * through the proxy to the members that are not */
} gshmemi_proto_rule_t;

/* What a team offers the protocols: P2P unless a member is reached through the proxy. */
GSHMEMI_HD_INLINE int gshmemi_team_reach(const gshmemi_team_dev_t *t)
{
    return (t->has_remote ? 0 : GSHMEMI_REACH_P2P) | (t->ll128_slices > 0 ? GSHMEMI_REACH_LL128 : 0) |
           (t->simple_slices > 0 ? GSHMEMI_REACH_SIMPLE : 0);
}

/* The rule of a team under the runtime's settings. */
GSHMEMI_HD_INLINE gshmemi_proto_rule_t gshmemi_proto_rule_of(const gshmemi_device_state_t *ds, const gshmemi_team_dev_t *t)
{
    const int reach = gshmemi_team_reach(t), p2p = (reach & GSHMEMI_REACH_P2P) != 0;
    gshmemi_proto_rule_t r;
    r.forced = ds->coll_proto;
    r.ll_max = ds->coll_ll_max;
    r.ll128_max = ds->coll_ll128_max;
    r.simple_max = ds->coll_simple_max;
    r.has_ll128 = p2p && (reach & GSHMEMI_REACH_LL128) != 0;
    r.has_simple = (reach & GSHMEMI_REACH_SIMPLE) != 0;
    r.p2p = p2p;
    return r;
}

/* The protocol of a collective of `kind` with `blk` bytes per block. */
GSHMEMI_HD_INLINE int gshmemi_pick_proto(int kind, size_t blk, gshmemi_proto_rule_t r)
{
    if (!r.p2p) return GSHMEMI_PROTO_SIMPLE; /* a team with remote members (gshmemi_coll_remote_ok) */
    if (kind == GSHMEMI_COLL_COLLECT || kind == GSHMEMI_COLL_ALLTOALLS) return GSHMEMI_PROTO_DIRECT;
    if (r.forced == GSHMEMI_PROTO_SIMPLE) return r.has_simple ? GSHMEMI_PROTO_SIMPLE : GSHMEMI_PROTO_DIRECT;
    if (r.forced == GSHMEMI_PROTO_LL128) return r.has_ll128 ? GSHMEMI_PROTO_LL128 : GSHMEMI_PROTO_LL;
    if (r.forced != GSHMEMI_PROTO_AUTO) return r.forced;
    if (blk <= r.ll_max) return GSHMEMI_PROTO_LL;
    if (r.has_ll128 && blk <= r.ll128_max) return GSHMEMI_PROTO_LL128;
    if (r.has_simple && blk <= r.simple_max) return GSHMEMI_PROTO_SIMPLE;
    return GSHMEMI_PROTO_DIRECT;
}

/* What a team with members reached through the proxy can run: the exchange algorithm over
 * SIMPLE, which needs the team's SIMPLE buffers (every team has them in a job with remote
 * members); collect and alltoalls go by routed puts (coll/algo_remote.cuh). NULL if it can, else
 * why not. */
GSHMEMI_HD_INLINE const char *gshmemi_coll_remote_unsupported(const gshmemi_team_dev_t *t, int kind)
{
    if (!t->has_remote || kind == GSHMEMI_COLL_COLLECT || kind == GSHMEMI_COLL_ALLTOALLS) return (const char *)0;
    if (t->simple_slices == 0) return "the team has no SIMPLE buffers, which collectives through the proxy need";
    return (const char *)0;
}

/* A device call by one thread group runs as one slice: its LL or LL128 steps follow one another,
 * a round trip each, while DIRECT costs two syncs at any size, so past a step or two DIRECT wins;
 * the limits below are where it did on the measured hosts (docs/api.md, "Teams and collectives"). A forced
 * protocol, and SIMPLE where configured, are kept. `picked` is gshmemi_pick_proto's answer;
 * LL128 needs whole warps. */
#define GSHMEMI_GROUP_THREAD_LL_MAX 32
#define GSHMEMI_GROUP_WARP_LL_MAX 1024
#define GSHMEMI_GROUP_LL128_MAX (8u << 10) /* from 256 threads; 1 KiB a warp below */
GSHMEMI_HD_INLINE int gshmemi_group_proto(int picked, gshmemi_proto_rule_t r, size_t blk, unsigned group)
{
    const size_t ll_max = group == 1 ? GSHMEMI_GROUP_THREAD_LL_MAX
                          : group <= 32 ? GSHMEMI_GROUP_WARP_LL_MAX : GSHMEMI_LL_SLICE_DATA;
    const size_t ll128_max = group >= 256 ? GSHMEMI_GROUP_LL128_MAX : (size_t)group / 32 * 1024;
    const int ll128_ok = r.has_ll128 && group > 32 && group % 32 == 0 && blk <= ll128_max;
    if (r.forced != GSHMEMI_PROTO_AUTO) return picked;
    if (picked == GSHMEMI_PROTO_LL) {
        if (blk <= ll_max) return picked;
        return ll128_ok && blk <= r.ll128_max ? GSHMEMI_PROTO_LL128 : GSHMEMI_PROTO_DIRECT;
    }
    if (picked == GSHMEMI_PROTO_LL128) return ll128_ok ? picked : GSHMEMI_PROTO_DIRECT;
    return picked;
}

/* DIRECT's algorithms. Pushes (stores into the peers' memory) rather than pulls: NVLink carries
 * stores faster than loads when both directions are busy. fcollect and alltoall push from
 * push_min bytes per block; a reduction of 2 PEs into a dest apart from its source is two-shot by
 * stores from push_reduce_min, in a kernel of its own only (own_kernel: the on-stream launch), so
 * the grid form keeps within its registers. */
GSHMEMI_HD_INLINE int gshmemi_direct_push(const gshmemi_device_state_t *ds, int team_size, const gshmemi_coll_args_t *a,
                                          int own_kernel)
{
    const size_t blk = a->nelems * a->es;
    const char *d = (const char *)a->dest, *s = (const char *)a->src;
    if (a->kind == GSHMEMI_COLL_FCOLLECT || a->kind == GSHMEMI_COLL_ALLTOALL) return blk >= ds->coll_push_min;
    return a->kind == GSHMEMI_COLL_REDUCE && own_kernel && team_size == 2 && blk >= ds->coll_push_reduce_min &&
           (d + blk <= s || s + blk <= d);
}

/* A DIRECT broadcast of at least GSHMEMI_BCAST_RELAY_MIN bytes on 3 or more members, in a kernel
 * of its own, is relayed (algo_direct.cuh): the root's links carry each byte once, where every
 * member pulling the root's block carries it once per member. Chunks of GSHMEMI_BCAST_RELAY_CHUNK
 * bytes keep the members' stores a step behind the root's: smaller chunks start the members'
 * forwarding sooner (docs/performance.md has the figures). */
#define GSHMEMI_BCAST_RELAY_MIN ((size_t)512 << 10)
#define GSHMEMI_BCAST_RELAY_CHUNK ((size_t)16 << 10)
GSHMEMI_HD_INLINE int gshmemi_bcast_relay(int team_size, const gshmemi_coll_args_t *a, int own_kernel)
{
    return own_kernel && a->kind == GSHMEMI_COLL_BROADCAST && team_size >= 3 && a->nelems * a->es >= GSHMEMI_BCAST_RELAY_MIN;
}

/* A DIRECT reduction of 2 PEs up to GSHMEM_COLL_ONESHOT_MAX is one-shot: each PE reads the
 * other's whole source, which over 2 PEs moves the same bytes per link direction as two-shot,
 * all as reads, and stores nothing remotely. Above, on more PEs, or in place (the result would
 * overwrite the source the peer is still reading), two-shot: each PE reads and stores only its
 * own part. */
GSHMEMI_HD_INLINE int gshmemi_reduce_oneshot(const gshmemi_device_state_t *ds, int team_size, const gshmemi_coll_args_t *a)
{
    return team_size == 2 && a->nelems * a->es <= ds->coll_oneshot_max && a->dest != a->src;
}

/* How many CTAs an on-stream DIRECT collective may take: `most`, and `bulk` for a call that moves
 * at least GSHMEMI_DIRECT_BULK_BYTES per PE in blocks of one size on every PE. GSHMEM_COLL_CTAS=N
 * sets both to N; 0 (auto) takes gshmemi_direct_ctas_auto. The job agrees on the least of each
 * over its PEs, since every member must run the same slices. */
typedef struct gshmemi_direct_ctas {
    int most, bulk;
} gshmemi_direct_ctas_t;
#define GSHMEMI_DIRECT_BULK_BYTES ((size_t)32 << 20)

/* n CTAs within 1..GSHMEMI_COLL_SLICES. */
GSHMEMI_HD_INLINE int gshmemi_clamp_ctas(int n) { return n < 1 ? 1 : n < GSHMEMI_COLL_SLICES ? n : GSHMEMI_COLL_SLICES; }

/* The auto rule, from what this PE sees: `sms`, the SMs it may use (under MPS its share,
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), and `pes_on_gpu`, the PEs of the job on its GPU, this one
 * included. A PE alone on its GPU keeps every slice. PEs that share a GPU run each collective's
 * kernels side by side and a DIRECT slice of one PE waits for the same slice of the others; the
 * data-moving kernels hold one 512-thread CTA per SM (121 registers) and MPS shares may overlap,
 * so a CTA beyond what fits waits for a whole wave of the others: each PE takes at most half its
 * share (H100, 2 PEs at 50 %, 2 MiB alltoall: 8.1 us with 32 CTAs, 15.0 with 64, 17.6 with 128).
 * Bulk transfers keep every slice: from 32 MiB moved a PE the SMs' bandwidth wins over the waves
 * (2 PEs, 128 MiB reduce: 304 us with 128 CTAs, 374 with 33). docs/api.md, "Teams and collectives". */
GSHMEMI_HD_INLINE gshmemi_direct_ctas_t gshmemi_direct_ctas_auto(int sms, int pes_on_gpu)
{
    gshmemi_direct_ctas_t c = {GSHMEMI_COLL_SLICES, GSHMEMI_COLL_SLICES};
    if (pes_on_gpu > 1) c.most = gshmemi_clamp_ctas(sms / 2);
    return c;
}

/* The CTAs of an on-stream DIRECT call that moves `moved` bytes per PE; `same_size`: every PE's
 * blocks are one size (not collect or alltoalls), so every PE reads the same `moved`. */
GSHMEMI_HD_INLINE int gshmemi_direct_most(gshmemi_direct_ctas_t c, size_t moved, int same_size)
{
    return same_size && moved >= GSHMEMI_DIRECT_BULK_BYTES ? c.bulk : c.most;
}

/* Algorithms that do better with fewer CTAs than the call's limit gives them, under the auto rule
 * (GSHMEM_COLL_CTAS=0):
 * - a two-shot reduction of GSHMEMI_TWOSHOT_CTAS_FROM bytes or more on 3 or more members (each PE
 *   reads its part of every member's source, reduces it and stores the result into every member)
 *   keeps both directions of every link busy at once, and more CTAs only queue more loads on the
 *   same links: at most GSHMEMI_TWOSHOT_CTAS (below the threshold every CTA helps);
 * - a relayed broadcast (gshmemi_bcast_relay) of GSHMEMI_BCAST_RELAY_MID_FROM bytes up to
 *   GSHMEMI_DIRECT_BULK_BYTES: fewer slices of more chunks each, so that the members forward one
 *   chunk while the root stores the next: at most GSHMEMI_BCAST_RELAY_MID_CTAS (smaller and
 *   larger broadcasts are faster with every CTA). */
#define GSHMEMI_TWOSHOT_CTAS 32
#define GSHMEMI_TWOSHOT_CTAS_FROM ((size_t)4 << 20)
#define GSHMEMI_BCAST_RELAY_MID_CTAS 64
#define GSHMEMI_BCAST_RELAY_MID_FROM ((size_t)4 << 20)
GSHMEMI_HD_INLINE int gshmemi_direct_algo_most(int most, int team_size, const gshmemi_coll_args_t *a)
{
    const size_t blk = a->nelems * a->es;
    int cap = most;
    if (a->kind == GSHMEMI_COLL_REDUCE && team_size >= 3 && blk >= GSHMEMI_TWOSHOT_CTAS_FROM) cap = GSHMEMI_TWOSHOT_CTAS;
    if (gshmemi_bcast_relay(team_size, a, 1) && blk >= GSHMEMI_BCAST_RELAY_MID_FROM && blk < GSHMEMI_DIRECT_BULK_BYTES)
        cap = GSHMEMI_BCAST_RELAY_MID_CTAS;
    return most < cap ? most : cap;
}

/* The SIMPLE geometry of a team with remote members: fewer slices of larger chunks than a P2P
 * team's. Every routed step is a request the proxy serves one by one, a few driver calls each, so
 * the chunk sets the rate; the slices are the CTAs that reduce or copy what arrives. The world
 * team takes GSHMEMI_SIMPLE_ROUTED_SLICES slices of up to GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX bytes;
 * its buffers grow to hold them, up to GSHMEMI_SIMPLE_ROUTED_POOL_MAX and an eighth of the heap
 * (gshmemi_simple_routed_chunk_for), so the chunk shrinks as the PEs grow. The other teams cut
 * their P2P-sized buffers into fewer slices (runtime/team.c). A P2P team keeps
 * GSHMEMI_SIMPLE_CHUNK. docs/performance.md gives the measured rates. */
#define GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX ((size_t)4 << 20) /* GSHMEMI_SIMPLE_ROUTED_SLICES: layout.h */
#define GSHMEMI_SIMPLE_ROUTED_POOL_MAX ((size_t)256 << 20)
GSHMEMI_HD_INLINE int gshmemi_simple_routed_slices(const gshmemi_team_dev_t *t) { return t->routed_slices; }
GSHMEMI_HD_INLINE size_t gshmemi_simple_routed_chunk(const gshmemi_team_dev_t *t) { return (size_t)t->routed_chunk; }

/* The world team's routed chunk for `n_pes` PEs and a heap of `heap_bytes` a PE: the largest
 * power of two from GSHMEMI_SIMPLE_CHUNK to GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX whose buffers
 * (GSHMEMI_SIMPLE_SLOTS x slices x n_pes chunks) take at most GSHMEMI_SIMPLE_ROUTED_POOL_MAX and
 * an eighth of the heap. */
GSHMEMI_HD_INLINE size_t gshmemi_simple_routed_chunk_for(int n_pes, size_t heap_bytes)
{
    const size_t most = heap_bytes / 8 < GSHMEMI_SIMPLE_ROUTED_POOL_MAX ? heap_bytes / 8 : GSHMEMI_SIMPLE_ROUTED_POOL_MAX;
    size_t chunk = GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX;
    while (chunk > GSHMEMI_SIMPLE_CHUNK && (size_t)GSHMEMI_SIMPLE_SLOTS * GSHMEMI_SIMPLE_ROUTED_SLICES * (size_t)n_pes * chunk > most)
        chunk /= 2;
    return chunk;
}

/* CTAs per slice of a routed on-stream call (its parts): each reduces or copies its share of a
 * step's chunk, and the first also posts the step's requests and flags once every part is done.
 * One CTA takes longer to reduce a large chunk than the proxy takes to move it.
 * A part gets at least GSHMEMI_ROUTED_PART_MIN bytes of a step, and the call takes at most half
 * of `most` CTAs (gshmemi_direct_ctas_t): parts wait for each other, so all of them must be
 * resident at once, beside the kernels of the other PEs that share the GPU. */
#define GSHMEMI_ROUTED_PART_MIN ((size_t)64 << 10)
GSHMEMI_HD_INLINE int gshmemi_routed_parts(int slices, int most, size_t step_bytes)
{
    size_t by_bytes = step_bytes / GSHMEMI_ROUTED_PART_MIN;
    int p = slices > 0 ? most / 2 / slices : 1;
    if (p > GSHMEMI_ROUTED_PARTS_MAX) p = GSHMEMI_ROUTED_PARTS_MAX;
    if ((size_t)p > by_bytes) p = (int)by_bytes;
    return p < 1 ? 1 : p;
}

/* Slices a protocol can use on a team (buffers per slice, or pSync barrier words per slice). */
GSHMEMI_HD_INLINE int gshmemi_proto_slices(const gshmemi_team_dev_t *t, int proto)
{
    switch (proto) {
    case GSHMEMI_PROTO_LL: return t->ll_slices;
    case GSHMEMI_PROTO_LL128: return t->ll128_slices;
    case GSHMEMI_PROTO_SIMPLE: return t->simple_slices;
    default: return GSHMEMI_COLL_SLICES;
    }
}

/* The world team's two levels: where a job spans hosts of the same number of PEs, each host a
 * block of consecutive PEs whose members all reach each other by loads and stores, a large world
 * reduction runs as reduce-scatter and all-gather within hosts and across them, so only a host's
 * share of the data crosses the proxy (collectives/coll.cu). The PEs of a block, from every PE's
 * host identity (the same answer on every PE); 0 where the job is not of that shape. */
GSHMEMI_HD_INLINE int gshmemi_levels_block(const uint64_t *host_hash, int n_pes)
{
    int block = 1;
    while (block < n_pes && host_hash[block] == host_hash[0]) block++;
    if (block < 2 || block >= n_pes || n_pes % block) return 0;
    for (int pe = block; pe < n_pes; pe++) {
        const int first = pe / block * block;
        if (host_hash[pe] != host_hash[first]) return 0; /* a block holds one host */
        if (pe == first)
            for (int b = 0; b < first; b += block)
                if (host_hash[b] == host_hash[pe]) return 0; /* and a host one block */
    }
    return block;
}

#endif
