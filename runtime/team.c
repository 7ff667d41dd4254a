/* Teams: strided sets of PEs with a pSync slot each.
 *
 * Every team is a start and stride over the world PEs. Slots of the pSync pool are reserved at
 * init at the same heap offset on every PE, so a team's slot number is enough for its members to
 * find each other's pSync. A new team's members must agree on a slot that is free on all of them:
 * the parent AND-reduces its members' free-slot masks (a collective of our own), then zeroes the
 * slot and syncs before first use, so stale flags of an earlier team can never satisfy a wait. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"
#include "../collectives/launch.h"
#include "../device/coll/policy.h"
#include "state.h"

#define FIRST_USER_TEAM 4

/* Fewest flag words rounds*(k-1) must fit a slice's barrier area (its last word is the broadcast
 * relay's); lower the radix until they do. */
static int team_radix(int size)
{
    int k = gshmemi_env.BARRIER_RADIX; /* 2..32, the env table's limit */
    if (k > size) k = size < 2 ? 2 : size;
    for (;; k--) {
        int words = 0;
        for (int dist = 1; dist < size; dist *= k) words += (size - 1) / dist < k - 1 ? (size - 1) / dist : k - 1;
        if (words < GSHMEMI_BARRIER_WORDS || k == 2) return k;
    }
}

/* Members times LL slices never exceeds 128, which bounds a slot's LL area. */
static int team_ll_slices(int size)
{
    int s = 128 / size;
    return s < 1 ? 1 : s > GSHMEMI_LL_MAX_SLICES ? GSHMEMI_LL_MAX_SLICES : s;
}

/* The LL area follows the acknowledgement words, sized for the largest team (the world). */
static size_t ll_offset(int n_pes)
{
    return GSHMEMI_PSYNC_ACK_OFF + ((size_t)GSHMEMI_COLL_SLICES * n_pes * 8 + 127) / 128 * 128;
}

static size_t slot_bytes(int n_pes)
{
    size_t lines = (size_t)n_pes * GSHMEMI_LL_MAX_SLICES;
    if (lines > 128) lines = 128;
    return ll_offset(n_pes) + 2 * lines * GSHMEMI_LL_SLICE_BYTES;
}

/* SIMPLE buffers: only the world team has them (a bulk buffer per peer is too much to give every
 * slot); their flags first, on a 4 KiB boundary, then the data. */
static size_t simple_flag_bytes(int size)
{
    return ((size_t)GSHMEMI_SIMPLE_SLICES * size * 8 + 4095) / 4096 * 4096;
}

/* In a job with remote members every team runs its collectives by SIMPLE (device/coll/policy.h),
 * so every other team slot gets SIMPLE buffers too, with fewer slices than the world's. */
#define TEAM_SIMPLE_SLICES 4
static size_t team_simple_bytes(int n_pes)
{
    return 2 * simple_flag_bytes(n_pes) + (size_t)GSHMEMI_SIMPLE_SLOTS * TEAM_SIMPLE_SLICES * n_pes * GSHMEMI_SIMPLE_CHUNK;
}

/* Bytes of a routed SIMPLE step of the world team: in a job with remote members, sized from the
 * PEs and the heap (device/coll/policy.h); else its P2P buffers' steps. */
static size_t world_routed_chunk(void)
{
    const gshmemi_state_t *st = &gshmemi_state;
    return st->job_has_remote ? gshmemi_simple_routed_chunk_for(st->n_pes, st->heap.region) : GSHMEMI_SIMPLE_CHUNK;
}

/* LL128 buffers, the world team's only, like SIMPLE's. */
static size_t ll128_bytes(int size)
{
    return (size_t)2 * GSHMEMI_LL128_SLICES * size * GSHMEMI_LL128_SLICE_BYTES;
}

/* Fills slot `slot` as the team (world_start, world_stride, size), or clears it when this PE is
 * not a member; the device copy is updated too. */
static int team_fill(int slot, int world_start, int world_stride, int size)
{
    gshmemi_state_t *st = &gshmemi_state;
    gshmemi_team_host_t *h = &st->teams[slot];
    int d = st->my_pe - world_start;

    memset(h, 0, sizeof(*h));
    if (d >= 0 && d % world_stride == 0 && d / world_stride < size) {
        h->in_use = 1;
        h->dev.size = size;
        h->dev.my_idx = d / world_stride;
        h->dev.start = world_start;
        h->dev.stride = world_stride;
        h->dev.radix = team_radix(size);
        for (int i = 0; i < size; i++)
            if (!st->peer_base[world_start + i * world_stride]) h->dev.has_remote = 1;
        h->dev.ll_slices = team_ll_slices(size);
        h->dev.barrier = (uint64_t *)(st->psync_pool + (size_t)slot * st->psync_slot);
        h->dev.ll = st->psync_pool + (size_t)slot * st->psync_slot + ll_offset(st->n_pes);
        h->dev.ack = (uint64_t *)(st->psync_pool + (size_t)slot * st->psync_slot + GSHMEMI_PSYNC_ACK_OFF);
        h->dev.seq = st->d_seq + (size_t)slot * GSHMEMI_SEQ_WORDS;
        if (slot == SHMEM_TEAM_WORLD && st->simple_pool) {
            h->dev.simple_slices = GSHMEMI_SIMPLE_SLICES;
            h->dev.simple_flags = (uint64_t *)st->simple_pool;
            h->dev.simple_credit = (uint64_t *)(st->simple_pool + simple_flag_bytes(size));
            h->dev.simple = st->simple_pool + 2 * simple_flag_bytes(size);
            h->dev.simple_steps = st->d_simple_steps;
            h->dev.routed_slices = GSHMEMI_SIMPLE_ROUTED_SLICES;
            h->dev.routed_chunk = (int)world_routed_chunk(); /* at most GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX */
            GSHMEMI_CUDACHECK(cudaMemsetAsync(h->dev.simple_flags, 0, 2 * simple_flag_bytes(size), st->stream));
            GSHMEMI_CUDACHECK(cudaMemsetAsync(st->d_simple_steps, 0, GSHMEMI_SIMPLE_SLICES * sizeof(uint64_t), st->stream));
        }
        if (slot != SHMEM_TEAM_WORLD && st->team_simple_pool) {
            char *region = st->team_simple_pool + (size_t)slot * team_simple_bytes(st->n_pes);
            h->dev.simple_slices = TEAM_SIMPLE_SLICES;
            h->dev.simple_flags = (uint64_t *)region;
            h->dev.simple_credit = (uint64_t *)(region + simple_flag_bytes(st->n_pes));
            h->dev.simple = region + 2 * simple_flag_bytes(st->n_pes);
            h->dev.simple_steps = st->d_team_simple_steps + (size_t)slot * TEAM_SIMPLE_SLICES;
            h->dev.routed_slices = TEAM_SIMPLE_SLICES; /* the buffers as the P2P steps cut them */
            h->dev.routed_chunk = GSHMEMI_SIMPLE_CHUNK;
            GSHMEMI_CUDACHECK(cudaMemsetAsync(region, 0, 2 * simple_flag_bytes(st->n_pes), st->stream));
            GSHMEMI_CUDACHECK(cudaMemsetAsync(h->dev.simple_steps, 0, TEAM_SIMPLE_SLICES * sizeof(uint64_t), st->stream));
        }
        if (slot == SHMEM_TEAM_WORLD && st->ll128_pool) {
            /* zeroed: a line's flag is a sequence number, never 0 */
            h->dev.ll128_slices = GSHMEMI_LL128_SLICES;
            h->dev.ll128 = st->ll128_pool;
            GSHMEMI_CUDACHECK(cudaMemsetAsync(st->ll128_pool, 0, ll128_bytes(size), st->stream));
        }
        GSHMEMI_CUDACHECK(cudaMemsetAsync(h->dev.barrier, 0, st->psync_slot, st->stream));
        GSHMEMI_CUDACHECK(cudaMemsetAsync(h->dev.seq, 0, GSHMEMI_SEQ_WORDS * sizeof(uint64_t), st->stream));
    }
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(&st->d_teams[slot], &h->dev, sizeof(h->dev), cudaMemcpyHostToDevice, st->stream));
    GSHMEMI_CUDACHECK(cudaStreamSynchronize(st->stream));
    if (slot == SHMEM_TEAM_WORLD) st->dstate.world = h->dev;
    return GSHMEMI_OK;
}

/* PEs of this host as a strided set, or just this PE (with a warning) when they are not one. */
static void host_pes(int *start, int *stride, int *size)
{
    gshmemi_state_t *st = &gshmemi_state;
    int n = st->local_size, s = n > 1 ? st->local_pe[1] - st->local_pe[0] : 1, ok = s > 0;

    for (int i = 1; i < n && ok; i++) ok = st->local_pe[i] - st->local_pe[i - 1] == s;
    if (!ok) {
        GSHMEMI_WARN("team", "the PEs of this host are not evenly spaced in PE numbering; SHMEM_TEAM_SHARED holds this PE only");
        *start = st->my_pe, *stride = 1, *size = 1;
        return;
    }
    *start = st->local_pe[0], *stride = s, *size = n;
}

/* The world team's two levels (collectives/launch.h, gshmemi_coll_set_levels): two private teams
 * in the two highest slots, where gshmemi_levels_block finds the shape and every
 * PE reaches its host's PEs by loads and stores: this host's PEs, and the PEs of this local index
 * on every host. The second runs its routed steps in the world team's SIMPLE buffers and chunk
 * (large steps through the proxy, the pace the world's own routed steps have): it only runs inside
 * a world collective, which holds those buffers; its flags, credits and step counters are its own. */
static int levels_init(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    const int host_slot = st->max_teams - 2, across_slot = st->max_teams - 1;
    uint64_t *hash;
    int block, p2p = 1, *all = NULL, rc = GSHMEMI_OK;

    gshmemi_coll_set_levels(NULL, NULL);
    if (!st->job_has_remote || !st->simple_pool || !st->team_simple_pool || host_slot < FIRST_USER_TEAM) return GSHMEMI_OK;
    hash = calloc((size_t)st->n_pes, sizeof(*hash));
    all = calloc((size_t)st->n_pes, sizeof(*all));
    if (!hash || !all) rc = GSHMEMI_ERR_NOMEM;
    for (int pe = 0; pe < st->n_pes && rc == GSHMEMI_OK; pe++) hash[pe] = st->peers[pe].host_hash;
    block = rc == GSHMEMI_OK ? gshmemi_levels_block(hash, st->n_pes) : 0; /* device/coll/policy.h */
    if (block) {
        const int first = st->my_pe / block * block;
        for (int pe = first; pe < first + block; pe++) p2p &= st->peer_base[pe] != NULL;
        all[st->my_pe] = p2p;
        rc = st->bs->allgather(st->bs, all, sizeof(*all)); /* every host's PEs by loads and stores */
        for (int pe = 0; pe < st->n_pes && rc == GSHMEMI_OK; pe++) block = all[pe] ? block : 0;
    }
    free(hash);
    free(all);
    if (rc != GSHMEMI_OK || !block) return rc;

    GSHMEMI_CHECK(team_fill(host_slot, st->my_pe / block * block, 1, block));
    GSHMEMI_CHECK(team_fill(across_slot, st->my_pe % block, block, st->n_pes / block));
    gshmemi_team_host_t *host = &st->teams[host_slot], *across = &st->teams[across_slot];
    const gshmemi_team_dev_t *w = &st->teams[SHMEM_TEAM_WORLD].dev;
    host->internal = across->internal = 1;
    /* the world's routed geometry over fewer members: [slot][slice][size][chunk] fits its buffer,
     * and [slice][size] flags fit the slot's flag area (sized for [slices][n_pes]) */
    GSHMEMI_CUDACHECK(cudaMalloc((void **)&st->d_levels_steps, GSHMEMI_SIMPLE_ROUTED_SLICES * sizeof(uint64_t)));
    GSHMEMI_CUDACHECK(cudaMemset(st->d_levels_steps, 0, GSHMEMI_SIMPLE_ROUTED_SLICES * sizeof(uint64_t)));
    across->dev.simple = w->simple;
    across->dev.simple_slices = w->routed_slices;
    across->dev.routed_slices = w->routed_slices;
    across->dev.routed_chunk = w->routed_chunk;
    across->dev.simple_steps = st->d_levels_steps;
    GSHMEMI_CUDACHECK(cudaMemcpy(&st->d_teams[across_slot], &across->dev, sizeof(across->dev), cudaMemcpyHostToDevice));
    gshmemi_coll_set_levels(&host->dev, &across->dev);
    GSHMEMI_INFO("team", "world collectives in two levels: %d hosts of %d PEs", st->n_pes / block, block);
    return GSHMEMI_OK;
}

int gshmemi_teams_init(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    size_t off;
    int start, stride, size;

    st->max_teams = gshmemi_env.MAX_TEAMS;
    /* the env table's limits, checked when it was read */
    assert(st->max_teams >= FIRST_USER_TEAM && st->max_teams <= 64);
    assert(gshmemi_env.BARRIER_RADIX >= 2 && gshmemi_env.BARRIER_RADIX <= 32);
    assert(gshmemi_env.COLL_CTAS >= 0 && gshmemi_env.COLL_CTAS <= GSHMEMI_COLL_SLICES);
    st->psync_slot = slot_bytes(st->n_pes);
    /* Same sizes in the same order on every PE: the same offsets. */
    GSHMEMI_CHECK(gshmemi_alloc_alloc(st->heap.alloc, st->psync_slot * st->max_teams, 4096, &off));
    st->psync_pool = st->heap.my_base + off;
    GSHMEMI_CHECK(gshmemi_alloc_alloc(st->heap.alloc, 256, 256, &off));
    st->team_scratch = (uint64_t *)(st->heap.my_base + off);
    /* a protocol's buffers exist where its size rule can pick it or a test forces it */
    /* (a job with remote members runs its collectives by SIMPLE: coll/policy.h) */
    if (gshmemi_env.COLL_SIMPLE_MAX > 0 || gshmemi_env.COLL_PROTO == GSHMEMI_PROTO_SIMPLE || st->job_has_remote) {
        /* the P2P steps' buffers, or the routed steps' where those are larger */
        size_t data = (size_t)GSHMEMI_SIMPLE_SLOTS * GSHMEMI_SIMPLE_SLICES * st->n_pes * GSHMEMI_SIMPLE_CHUNK;
        const size_t routed = (size_t)GSHMEMI_SIMPLE_SLOTS * GSHMEMI_SIMPLE_ROUTED_SLICES * st->n_pes * world_routed_chunk();
        if (routed > data) data = routed;
        size_t bytes = 2 * simple_flag_bytes(st->n_pes) + data;
        GSHMEMI_CHECK(gshmemi_alloc_alloc(st->heap.alloc, bytes, 4096, &off));
        st->simple_pool = st->heap.my_base + off;
        GSHMEMI_CUDACHECK(cudaMalloc((void **)&st->d_simple_steps, GSHMEMI_SIMPLE_SLICES * sizeof(uint64_t)));
    }
    if (st->job_has_remote) {
        GSHMEMI_CHECK(gshmemi_alloc_alloc(st->heap.alloc, team_simple_bytes(st->n_pes) * st->max_teams, 4096, &off));
        st->team_simple_pool = st->heap.my_base + off;
        GSHMEMI_CUDACHECK(cudaMalloc((void **)&st->d_team_simple_steps, (size_t)st->max_teams * TEAM_SIMPLE_SLICES * sizeof(uint64_t)));
    }
    if (gshmemi_env.COLL_LL128_MAX > 0 || gshmemi_env.COLL_PROTO == GSHMEMI_PROTO_LL128) {
        GSHMEMI_CHECK(gshmemi_alloc_alloc(st->heap.alloc, ll128_bytes(st->n_pes), 4096, &off));
        st->ll128_pool = st->heap.my_base + off;
    }
    GSHMEMI_CHECK(gshmemi_heap_ensure_backed(&st->heap, gshmemi_alloc_high_water(st->heap.alloc)));
    GSHMEMI_CUDACHECK(cudaMemset(st->team_scratch, 0, 256));
    GSHMEMI_CUDACHECK(cudaHostAlloc((void **)&st->team_mask, 2 * sizeof(uint64_t), cudaHostAllocPortable));

    st->teams = calloc((size_t)st->max_teams, sizeof(*st->teams));
    if (!st->teams) return GSHMEMI_ERR_NOMEM;
    GSHMEMI_CUDACHECK(cudaMalloc((void **)&st->d_teams, (size_t)st->max_teams * sizeof(gshmemi_team_dev_t)));
    GSHMEMI_CUDACHECK(cudaMemset(st->d_teams, 0, (size_t)st->max_teams * sizeof(gshmemi_team_dev_t)));
    GSHMEMI_CUDACHECK(cudaMalloc((void **)&st->d_seq, (size_t)st->max_teams * GSHMEMI_SEQ_WORDS * sizeof(uint64_t)));

    GSHMEMI_CHECK(team_fill(SHMEM_TEAM_WORLD, 0, 1, st->n_pes));
    host_pes(&start, &stride, &size);
    GSHMEMI_CHECK(team_fill(SHMEM_TEAM_SHARED, start, stride, size));
    GSHMEMI_CHECK(team_fill(SHMEMX_TEAM_NODE, start, stride, size));
    /* Same local index on every host: strided when hosts hold equal blocks of consecutive PEs. */
    if (st->n_pes % st->local_size == 0 && start == st->my_pe - st->my_local && stride == 1)
        GSHMEMI_CHECK(team_fill(SHMEMX_TEAM_SAME_MYPE_NODE, st->my_local, st->local_size, st->n_pes / st->local_size));
    else {
        GSHMEMI_WARN("team", "hosts do not hold equal blocks of consecutive PEs; SHMEMX_TEAM_SAME_MYPE_NODE holds this PE only");
        GSHMEMI_CHECK(team_fill(SHMEMX_TEAM_SAME_MYPE_NODE, st->my_pe, 1, 1));
    }
    st->dstate.max_teams = st->max_teams;
    st->dstate.teams = st->d_teams;
    return levels_init();
}

void gshmemi_teams_fini(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    cudaFree(st->d_teams);
    cudaFree(st->d_seq);
    cudaFree(st->d_simple_steps);
    if (st->team_mask) cudaFreeHost(st->team_mask);
    cudaFree(st->d_team_simple_steps);
    cudaFree(st->d_levels_steps);
    gshmemi_coll_set_levels(NULL, NULL);
    free(st->teams);
}

const gshmemi_team_dev_t *gshmemi_team_lookup(shmem_team_t team, const char *routine)
{
    gshmemi_state_t *st = &gshmemi_state;
    if (!gshmemi_require_init("team", routine)) return NULL;
    if (team < 0 || team >= st->max_teams || !st->teams[team].in_use || st->teams[team].internal) {
        GSHMEMI_ERROR("team", "%s: team %d is not a valid team handle of this PE", routine, team);
        return NULL;
    }
    return &st->teams[team].dev;
}

const gshmemi_team_dev_t *gshmemi_team_member(shmem_team_t team, const char *routine)
{
    const gshmemi_team_dev_t *t = gshmemi_team_lookup(team, routine);
    if (t && t->my_idx < 0) {
        GSHMEMI_ERROR("team", "%s: this PE is not a member of team %d", routine, team);
        return NULL;
    }
    return t;
}

int gshmemi_host_team_my_pe(shmem_team_t team)
{
    gshmemi_state_t *st = &gshmemi_state;
    if (!st->initialized || team < 0 || team >= st->max_teams || !st->teams[team].in_use || st->teams[team].internal) return -1;
    return st->teams[team].dev.my_idx;
}

int gshmemi_host_team_n_pes(shmem_team_t team)
{
    gshmemi_state_t *st = &gshmemi_state;
    if (!st->initialized || team < 0 || team >= st->max_teams || !st->teams[team].in_use) return -1;
    return st->teams[team].dev.size;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    if (!gshmemi_team_lookup(team, "shmem_team_get_config")) return -1;
    if (config_mask && !config) {
        GSHMEMI_ERROR("team", "shmem_team_get_config: config is NULL but config_mask is %ld", config_mask);
        return -1;
    }
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS) config->num_contexts = 0;
    return 0;
}

int gshmemi_host_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    const gshmemi_team_dev_t *s = gshmemi_team_lookup(src_team, "shmem_team_translate_pe (src_team)");
    const gshmemi_team_dev_t *d = gshmemi_team_lookup(dest_team, "shmem_team_translate_pe (dest_team)");
    if (!s || !d || src_pe < 0 || src_pe >= s->size) return -1;
    int w = s->start + src_pe * s->stride - d->start;
    return w >= 0 && w % d->stride == 0 && w / d->stride < d->size ? w / d->stride : -1;
}

/* The lowest slot free on every member of the parent: an AND of free masks over the parent. */
static int agree_slot(shmem_team_t parent, int *slot)
{
    gshmemi_state_t *st = &gshmemi_state;
    uint64_t mask = 0;
    gshmemi_coll_args_t a = {0};

    for (int i = FIRST_USER_TEAM; i < st->max_teams; i++)
        if (!st->teams[i].in_use) mask |= 1ull << i;
    st->team_mask[0] = mask;
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(st->team_scratch, st->team_mask, sizeof(mask), cudaMemcpyHostToDevice, st->stream));
    a.kind = GSHMEMI_COLL_REDUCE;
    a.dest = st->team_scratch + 8;
    a.src = st->team_scratch;
    a.nelems = 1;
    a.es = 8;
    GSHMEMI_CHECK(gshmemi_coll_launch("shmem_team_split", parent, &a, GSHMEMI_DT_UINT64, GSHMEMI_OP_AND, st->stream));
    GSHMEMI_CUDACHECK(cudaMemcpyAsync(st->team_mask + 1, st->team_scratch + 8, sizeof(mask), cudaMemcpyDeviceToHost, st->stream));
    GSHMEMI_CUDACHECK(cudaStreamSynchronize(st->stream));
    mask = st->team_mask[1];
    *slot = mask ? __builtin_ctzll(mask) : -1;
    return GSHMEMI_OK;
}

/* Collective over the parent; each PE passes the world start/stride/size of the team it joins
 * (split_2d gives different PEs different teams). *new_team is SHMEM_TEAM_INVALID on PEs outside
 * it. The caller has validated the arguments, identically on every PE. */
static int team_create(shmem_team_t parent, int world_start, int world_stride, int size, shmem_team_t *new_team,
                       const char *routine)
{
    gshmemi_state_t *st = &gshmemi_state;
    int slot;

    *new_team = SHMEM_TEAM_INVALID;
    GSHMEMI_CHECK(agree_slot(parent, &slot));
    if (slot < 0) {
        /* Every member of the parent sees the same mask, so all fail together. */
        GSHMEMI_ERROR("team", "%s: no team slot is free on every PE of the parent (GSHMEM_MAX_TEAMS=%d)", routine, st->max_teams);
        return GSHMEMI_ERR_NOMEM;
    }
    GSHMEMI_CHECK(team_fill(slot, world_start, world_stride, size));
    /* Nobody signals into the slot before every member has zeroed it. */
    GSHMEMI_CHECK(gshmemi_launch_barrier(parent, st->stream, routine));
    GSHMEMI_CUDACHECK(cudaStreamSynchronize(st->stream));
    if (st->teams[slot].in_use) *new_team = slot;
    return GSHMEMI_OK;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size, const shmem_team_config_t *config,
                             long config_mask, shmem_team_t *new_team)
{
    const gshmemi_team_dev_t *p = gshmemi_team_member(parent_team, "shmem_team_split_strided (parent_team)");
    (void)config;
    (void)config_mask;
    if (!new_team) {
        GSHMEMI_ERROR("team", "shmem_team_split_strided: new_team is NULL");
        return -1;
    }
    *new_team = SHMEM_TEAM_INVALID;
    if (!p) return -1;
    /* The same checks on every PE of the parent, so a bad call fails everywhere without a hang. */
    if (size < 1 || size > p->size) {
        GSHMEMI_ERROR("team", "shmem_team_split_strided: size %d outside 1..%d (the parent's size)", size, p->size);
        return -1;
    }
    if (start < 0 || start >= p->size) {
        GSHMEMI_ERROR("team", "shmem_team_split_strided: start %d outside 0..%d", start, p->size - 1);
        return -1;
    }
    if (stride == 0 && size > 1) {
        GSHMEMI_ERROR("team", "shmem_team_split_strided: stride 0 with size %d names one PE %d times", size, size);
        return -1;
    }
    if (stride < 0 || start + (long)(size - 1) * stride >= p->size) {
        GSHMEMI_ERROR("team", "shmem_team_split_strided: start %d, stride %d, size %d reach PE %ld, outside the parent (size %d)",
                      start, stride, size, start + (long)(size - 1) * stride, p->size);
        return -1;
    }
    if (size == 1) stride = 1;
    return team_create(parent_team, p->start + start * p->stride, stride * p->stride, size, new_team,
                       "shmem_team_split_strided") == GSHMEMI_OK ? 0 : -1;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask,
                        shmem_team_t *yaxis_team)
{
    const gshmemi_team_dev_t *p = gshmemi_team_member(parent_team, "shmem_team_split_2d (parent_team)");
    (void)xaxis_config, (void)xaxis_mask, (void)yaxis_config, (void)yaxis_mask;
    if (!xaxis_team || !yaxis_team) {
        GSHMEMI_ERROR("team", "shmem_team_split_2d: xaxis_team or yaxis_team is NULL");
        return -1;
    }
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (!p) return -1;
    if (xrange < 1) {
        GSHMEMI_ERROR("team", "shmem_team_split_2d: xrange %d must be positive", xrange);
        return -1;
    }
    if (xrange > p->size) xrange = p->size;
    int me = p->my_idx, xstart = me / xrange * xrange, ystart = me % xrange;
    int xsize = p->size - xstart < xrange ? p->size - xstart : xrange;
    int ysize = (p->size - ystart + xrange - 1) / xrange;
    if (team_create(parent_team, p->start + xstart * p->stride, p->stride, xsize, xaxis_team, "shmem_team_split_2d") != GSHMEMI_OK)
        return -1;
    if (team_create(parent_team, p->start + ystart * p->stride, xrange * p->stride, ysize, yaxis_team, "shmem_team_split_2d") !=
        GSHMEMI_OK)
        return -1;
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    gshmemi_state_t *st = &gshmemi_state;
    if (!gshmemi_team_lookup(team, "shmem_team_destroy")) return;
    if (team < FIRST_USER_TEAM) {
        GSHMEMI_ERROR("team", "shmem_team_destroy: team %d is predefined and cannot be destroyed", team);
        return;
    }
    /* Its collectives may still be queued on streams. */
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) GSHMEMI_ERROR("team", "shmem_team_destroy: %s", cudaGetErrorString(err));
    memset(&st->teams[team], 0, sizeof(st->teams[team]));
    err = cudaMemset(&st->d_teams[team], 0, sizeof(st->d_teams[team]));
    if (err != cudaSuccess) GSHMEMI_ERROR("team", "shmem_team_destroy: %s", cudaGetErrorString(err));
}

int shmem_team_my_pe(shmem_team_t team) { return gshmemi_host_team_my_pe(team); }
int shmem_team_n_pes(shmem_team_t team) { return gshmemi_host_team_n_pes(team); }
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    return gshmemi_host_team_translate_pe(src_team, src_pe, dest_team);
}
