/* The collective policy (device/coll/policy.h), shared by the host launcher and the device:
 * thresholds, the shapes that must go DIRECT, what a forced protocol becomes, which protocols a
 * team's reach allows, and DIRECT's choice of algorithm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gshmem.h"
#include "device/coll/policy.h"

#define LL (64u << 10)
#define LL128 (512u << 10)
#define SIMPLE (1u << 20)

/* The world team's rule (both bulk buffers) or a sub-team's (neither). */
static gshmemi_proto_rule_t rule(int forced, int buffers)
{
    gshmemi_proto_rule_t r = {forced, LL, LL128, SIMPLE, buffers, buffers, 1};
    return r;
}

static void test_auto(void **state)
{
    const int A = GSHMEMI_PROTO_AUTO;
    (void)state;
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, rule(A, 1)), GSHMEMI_PROTO_LL);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL, rule(A, 1)), GSHMEMI_PROTO_LL);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL + 1, rule(A, 1)), GSHMEMI_PROTO_LL128);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_FCOLLECT, LL128, rule(A, 1)), GSHMEMI_PROTO_LL128);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL128 + 1, rule(A, 1)), GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_FCOLLECT, SIMPLE, rule(A, 1)), GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, SIMPLE + 1, rule(A, 1)), GSHMEMI_PROTO_DIRECT);
    /* a team without bulk buffers goes from LL straight to DIRECT */
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_ALLTOALL, LL + 1, rule(A, 0)), GSHMEMI_PROTO_DIRECT);
    /* GSHMEM_COLL_LL128_MAX=0 and GSHMEM_COLL_SIMPLE_MAX=0 */
    gshmemi_proto_rule_t r = rule(A, 1);
    r.ll128_max = 0;
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL + 1, r), GSHMEMI_PROTO_SIMPLE);
    r.simple_max = 0;
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL + 1, r), GSHMEMI_PROTO_DIRECT);
}

static void test_shapes_and_forcing(void **state)
{
    (void)state;
    /* collect and alltoalls blocks differ per PE or are strided: always DIRECT, even when forced */
    for (int p = GSHMEMI_PROTO_AUTO; p <= GSHMEMI_PROTO_SIMPLE; p++) {
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_COLLECT, 8, rule(p, 1)), GSHMEMI_PROTO_DIRECT);
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_ALLTOALLS, 8, rule(p, 1)), GSHMEMI_PROTO_DIRECT);
    }
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 1u << 30, rule(GSHMEMI_PROTO_LL, 1)), GSHMEMI_PROTO_LL);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, rule(GSHMEMI_PROTO_LL128, 1)), GSHMEMI_PROTO_LL128);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_BROADCAST, 8, rule(GSHMEMI_PROTO_DIRECT, 1)), GSHMEMI_PROTO_DIRECT);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_BROADCAST, 8, rule(GSHMEMI_PROTO_SIMPLE, 1)), GSHMEMI_PROTO_SIMPLE);
    /* forced on a team without the buffers: the nearest protocol that needs none, never a
     * missing buffer */
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, rule(GSHMEMI_PROTO_SIMPLE, 0)), GSHMEMI_PROTO_DIRECT);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, rule(GSHMEMI_PROTO_LL128, 0)), GSHMEMI_PROTO_LL);
}

/* DIRECT pushes fcollect/alltoall from push_min; 2-PE reductions from push_reduce_min, on-stream
 * only, and never in place or overlapping (the peer's dest holds the half it reduces). */
static void test_direct_push(void **state)
{
    (void)state;
    gshmemi_device_state_t ds;
    memset(&ds, 0, sizeof(ds));
    ds.coll_push_min = 1u << 20;
    ds.coll_push_reduce_min = 16u << 20;
    static float buf[3][8];
    const size_t M = (1u << 20) / 4, R = (16u << 20) / 4; /* floats */

    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, buf[0], buf[1], M, 4);
    assert_true(gshmemi_direct_push(&ds, 4, &a, 0));
    a.nelems = M - 1;
    assert_false(gshmemi_direct_push(&ds, 4, &a, 0));
    a = gshmemi_coll_args(GSHMEMI_COLL_ALLTOALL, buf[0], buf[1], M, 4);
    assert_true(gshmemi_direct_push(&ds, 3, &a, 0));
    a = gshmemi_coll_args(GSHMEMI_COLL_BROADCAST, buf[0], buf[1], R, 4);
    assert_false(gshmemi_direct_push(&ds, 2, &a, 1));

    /* dest and source far apart, as symmetric arrays of R floats would be */
    float *d = (float *)0x100000000ull, *s = d + R;
    a = gshmemi_coll_args(GSHMEMI_COLL_REDUCE, d, s, R, 4);
    assert_true(gshmemi_direct_push(&ds, 2, &a, 1));
    assert_false(gshmemi_direct_push(&ds, 3, &a, 1)); /* 2 PEs only */
    assert_false(gshmemi_direct_push(&ds, 2, &a, 0)); /* device forms pull */
    a.nelems = R - 1;
    assert_false(gshmemi_direct_push(&ds, 2, &a, 1)); /* below push_reduce_min */
    a = gshmemi_coll_args(GSHMEMI_COLL_REDUCE, d, d, R, 4);
    assert_false(gshmemi_direct_push(&ds, 2, &a, 1)); /* in place */
    a = gshmemi_coll_args(GSHMEMI_COLL_REDUCE, d, d + R - 1, R, 4);
    assert_false(gshmemi_direct_push(&ds, 2, &a, 1)); /* overlapping by one element */
    a = gshmemi_coll_args(GSHMEMI_COLL_REDUCESCATTER, d, s, R, 4);
    assert_false(gshmemi_direct_push(&ds, 2, &a, 1));
}

/* A device state with the protocol limits LL, LL128 and SIMPLE, and an empty team. */
static void zero_with_limits(gshmemi_device_state_t *ds, gshmemi_team_dev_t *t)
{
    memset(ds, 0, sizeof(*ds));
    memset(t, 0, sizeof(*t));
    ds->coll_ll_max = LL;
    ds->coll_ll128_max = LL128;
    ds->coll_simple_max = SIMPLE;
}

/* A team's protocols follow from how its members are reached: LL128 and SIMPLE where the team
 * has their buffers (the world team), every protocol only while all members are P2P peers. */
static void test_reach(void **state)
{
    (void)state;
    gshmemi_device_state_t ds;
    gshmemi_team_dev_t t;
    zero_with_limits(&ds, &t);
    assert_int_equal(gshmemi_team_reach(&t), GSHMEMI_REACH_P2P);
    gshmemi_proto_rule_t r = gshmemi_proto_rule_of(&ds, &t);
    assert_false(r.has_ll128);
    assert_false(r.has_simple);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL + 1, r), GSHMEMI_PROTO_DIRECT);
    t.ll128_slices = 4;
    r = gshmemi_proto_rule_of(&ds, &t);
    assert_true(r.has_ll128);
    assert_false(r.has_simple);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL128, r), GSHMEMI_PROTO_LL128);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL128 + 1, r), GSHMEMI_PROTO_DIRECT);
    t.simple_slices = 4;
    assert_int_equal(gshmemi_team_reach(&t), GSHMEMI_REACH_P2P | GSHMEMI_REACH_LL128 | GSHMEMI_REACH_SIMPLE);
    r = gshmemi_proto_rule_of(&ds, &t);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL128 + 1, r), GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(gshmemi_proto_slices(&t, GSHMEMI_PROTO_SIMPLE), 4);
    assert_int_equal(gshmemi_proto_slices(&t, GSHMEMI_PROTO_DIRECT), GSHMEMI_COLL_SLICES);
}

/* A team with a member reached through the proxy runs SIMPLE at every size and whatever is
 * forced; it needs the SIMPLE buffers (collect and alltoalls go by routed puts), and says so. */
static void test_remote(void **state)
{
    (void)state;
    gshmemi_device_state_t ds;
    gshmemi_team_dev_t t;
    zero_with_limits(&ds, &t);
    t.ll128_slices = 4;
    t.simple_slices = 4;
    assert_null(gshmemi_coll_remote_unsupported(&t, GSHMEMI_COLL_COLLECT));
    t.has_remote = 1;
    assert_int_equal(gshmemi_team_reach(&t), GSHMEMI_REACH_LL128 | GSHMEMI_REACH_SIMPLE);
    for (int forced = GSHMEMI_PROTO_AUTO; forced <= GSHMEMI_PROTO_SIMPLE; forced++) {
        ds.coll_proto = forced;
        gshmemi_proto_rule_t r = gshmemi_proto_rule_of(&ds, &t);
        assert_false(r.p2p);
        assert_false(r.has_ll128);
        assert_true(r.has_simple);
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, r), GSHMEMI_PROTO_SIMPLE);
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_BROADCAST, 1u << 30, r), GSHMEMI_PROTO_SIMPLE);
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_ALLTOALL, LL, r), GSHMEMI_PROTO_SIMPLE);
    }
    assert_null(gshmemi_coll_remote_unsupported(&t, GSHMEMI_COLL_REDUCE));
    assert_null(gshmemi_coll_remote_unsupported(&t, GSHMEMI_COLL_ALLTOALLS));
    t.simple_slices = 0;
    assert_non_null(strstr(gshmemi_coll_remote_unsupported(&t, GSHMEMI_COLL_FCOLLECT), "SIMPLE buffers"));
    assert_null(gshmemi_coll_remote_unsupported(&t, GSHMEMI_COLL_COLLECT));
}

/* The world team's routed chunk: a power of two from the P2P chunk to the most, the largest whose
 * buffers fit the pool's bound and an eighth of the heap (the P2P chunk where none does). */
static void test_routed_geometry(void **state)
{
    (void)state;
    const int pes[] = {2, 3, 4, 8, 16, 64, 1024};
    const size_t heaps[] = {(size_t)64 << 20, (size_t)1 << 30, (size_t)80 << 30, 1};
    for (size_t i = 0; i < sizeof(pes) / sizeof(pes[0]); i++)
        for (size_t k = 0; k < sizeof(heaps) / sizeof(heaps[0]); k++) {
            const size_t chunk = gshmemi_simple_routed_chunk_for(pes[i], heaps[k]);
            const size_t per_chunk = (size_t)GSHMEMI_SIMPLE_SLOTS * GSHMEMI_SIMPLE_ROUTED_SLICES * (size_t)pes[i];
            const size_t most = heaps[k] / 8 < GSHMEMI_SIMPLE_ROUTED_POOL_MAX ? heaps[k] / 8 : GSHMEMI_SIMPLE_ROUTED_POOL_MAX;
            assert_true(chunk >= GSHMEMI_SIMPLE_CHUNK && chunk <= GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX);
            assert_int_equal(chunk & (chunk - 1), 0);
            if (chunk > GSHMEMI_SIMPLE_CHUNK) assert_true(per_chunk * chunk <= most);
            if (chunk < GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX) assert_true(per_chunk * chunk * 2 > most);
        }
    /* the shapes measured: a GPU-sized heap takes the most at 2 PEs and half of it at 4; IBGDA's
     * bounded 1 GiB heap at 8 PEs an eighth of it */
    assert_int_equal(gshmemi_simple_routed_chunk_for(2, (size_t)80 << 30), GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX);
    assert_int_equal(gshmemi_simple_routed_chunk_for(4, (size_t)80 << 30), GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX / 2);
    assert_int_equal(gshmemi_simple_routed_chunk_for(8, (size_t)1 << 30), GSHMEMI_SIMPLE_ROUTED_CHUNK_MAX / 8);
    assert_int_equal(gshmemi_simple_routed_chunk_for(2, 1), GSHMEMI_SIMPLE_CHUNK);
}

/* A routed slice's parts: up to the most, within half the CTAs a call may take, each with at least
 * GSHMEMI_ROUTED_PART_MIN bytes of a step; always one at least. */
static void test_routed_parts(void **state)
{
    (void)state;
    const int most[] = {1, 2, 16, 33, 64, 128};
    const size_t bytes[] = {8, GSHMEMI_ROUTED_PART_MIN - 1, 2 * GSHMEMI_ROUTED_PART_MIN, (size_t)2 << 20};
    for (int slices = 1; slices <= GSHMEMI_SIMPLE_ROUTED_SLICES; slices++)
        for (size_t i = 0; i < sizeof(most) / sizeof(most[0]); i++)
            for (size_t k = 0; k < sizeof(bytes) / sizeof(bytes[0]); k++) {
                const int p = gshmemi_routed_parts(slices, most[i], bytes[k]);
                assert_true(p >= 1 && p <= GSHMEMI_ROUTED_PARTS_MAX);
                if (p > 1) {
                    assert_true(slices * p <= most[i] / 2);
                    assert_true(bytes[k] / (size_t)p >= GSHMEMI_ROUTED_PART_MIN);
                }
            }
    /* one PE on its GPU (128 CTAs), the world's 16 slices of 2 MiB: 4 parts each */
    assert_int_equal(gshmemi_routed_parts(16, 128, (size_t)2 << 20), GSHMEMI_ROUTED_PARTS_MAX);
    assert_int_equal(gshmemi_routed_parts(16, 33, (size_t)2 << 20), 1);
    assert_int_equal(gshmemi_routed_parts(1, 128, 8), 1);
    assert_int_equal(gshmemi_routed_parts(1, 128, 2 * GSHMEMI_ROUTED_PART_MIN), 2);
}

/* A broadcast is relayed on 3 or more members from GSHMEMI_BCAST_RELAY_MIN bytes, in the
 * on-stream kernel only; the relay's word is past every barrier flag the radix rule allows. */
static void test_bcast_relay(void **state)
{
    (void)state;
    static char buf[2][16];
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_BROADCAST, buf[0], buf[1], GSHMEMI_BCAST_RELAY_MIN, 1);
    assert_true(gshmemi_bcast_relay(3, &a, 1));
    assert_true(gshmemi_bcast_relay(64, &a, 1));
    assert_false(gshmemi_bcast_relay(2, &a, 1));
    assert_false(gshmemi_bcast_relay(4, &a, 0));
    a.nelems--;
    assert_false(gshmemi_bcast_relay(4, &a, 1));
    a = gshmemi_coll_args(GSHMEMI_COLL_FCOLLECT, buf[0], buf[1], GSHMEMI_BCAST_RELAY_MIN, 1);
    assert_false(gshmemi_bcast_relay(4, &a, 1));
    assert_int_equal(GSHMEMI_BARRIER_RELAY_WORD, GSHMEMI_BARRIER_WORDS - 1);
}

/* A DIRECT reduction is one-shot on 2 PEs up to GSHMEM_COLL_ONESHOT_MAX, two-shot otherwise. */
static void test_oneshot(void **state)
{
    (void)state;
    gshmemi_device_state_t ds;
    static float buf[2][8];
    memset(&ds, 0, sizeof(ds));
    ds.coll_oneshot_max = 1024;
    gshmemi_coll_args_t a = gshmemi_coll_args(GSHMEMI_COLL_REDUCE, buf[0], buf[1], 256, 4);
    assert_true(gshmemi_reduce_oneshot(&ds, 2, &a));
    assert_false(gshmemi_reduce_oneshot(&ds, 3, &a));
    a.nelems = 257;
    assert_false(gshmemi_reduce_oneshot(&ds, 2, &a));
    a = gshmemi_coll_args(GSHMEMI_COLL_REDUCE, buf[0], buf[0], 256, 4); /* in place */
    assert_false(gshmemi_reduce_oneshot(&ds, 2, &a));
}

/* GSHMEM_COLL_CTAS=0: every slice for a PE alone on its GPU (whatever its SMs); where PEs share
 * the GPU, half the SMs it may use (H100 under MPS: 2 PEs at 50 %, 3 at 33 %, 4 at 25 %), at
 * least one, but every slice for a bulk call of blocks of one size. */
static void test_direct_ctas(void **state)
{
    const int S = GSHMEMI_COLL_SLICES;
    const size_t bulk = GSHMEMI_DIRECT_BULK_BYTES;
    (void)state;
#define CTAS(sms, pes, most_, bulk_)                                                                                       \
    do {                                                                                                                   \
        gshmemi_direct_ctas_t c = gshmemi_direct_ctas_auto(sms, pes);                                                      \
        assert_int_equal(c.most, most_);                                                                                   \
        assert_int_equal(c.bulk, bulk_);                                                                                   \
    } while (0)
    CTAS(132, 1, S, S);
    CTAS(8, 1, S, S);
    CTAS(66, 2, 33, S);
    CTAS(44, 3, 22, S);
    CTAS(33, 4, 16, S);
    CTAS(1, 2, 1, S);
    CTAS(0, 8, 1, S);
    CTAS(1000, 2, S, S);
#undef CTAS
    /* which limit a call takes: bulk only from GSHMEMI_DIRECT_BULK_BYTES, and never where the
     * PEs' blocks differ (collect, alltoalls: each PE would read its own size) */
    const gshmemi_direct_ctas_t c = {33, 120};
    assert_int_equal(gshmemi_direct_most(c, 0, 1), 33);
    assert_int_equal(gshmemi_direct_most(c, bulk - 1, 1), 33);
    assert_int_equal(gshmemi_direct_most(c, bulk, 1), 120);
    assert_int_equal(gshmemi_direct_most(c, bulk * 4, 0), 33);
    /* a two-shot reduction on 3 or more members of GSHMEMI_TWOSHOT_CTAS_FROM bytes or more takes at
     * most GSHMEMI_TWOSHOT_CTAS; 2 members (one-shot, or two-shot by stores) and the other kinds
     * keep what they were given */
    gshmemi_coll_args_t a;
    memset(&a, 0, sizeof(a));
    a.kind = GSHMEMI_COLL_REDUCE;
    a.es = 4;
    a.nelems = GSHMEMI_TWOSHOT_CTAS_FROM / 4 - 1; /* below the threshold: every CTA */
    assert_int_equal(gshmemi_direct_algo_most(S, 4, &a), S);
    a.nelems++;
    assert_int_equal(gshmemi_direct_algo_most(S, 4, &a), GSHMEMI_TWOSHOT_CTAS);
    assert_int_equal(gshmemi_direct_algo_most(S, 3, &a), GSHMEMI_TWOSHOT_CTAS);
    assert_int_equal(gshmemi_direct_algo_most(8, 4, &a), 8);
    assert_int_equal(gshmemi_direct_algo_most(S, 2, &a), S);
    a.kind = GSHMEMI_COLL_FCOLLECT;
    assert_int_equal(gshmemi_direct_algo_most(S, 4, &a), S);
    /* a relayed broadcast (3 or more members) from GSHMEMI_BCAST_RELAY_MID_FROM up to the bulk
     * size takes at most GSHMEMI_BCAST_RELAY_MID_CTAS; 2 members (no relay) keep every CTA */
    a.kind = GSHMEMI_COLL_BROADCAST;
    a.es = 1;
    a.nelems = GSHMEMI_BCAST_RELAY_MID_FROM - 1;
    assert_int_equal(gshmemi_direct_algo_most(S, 4, &a), S);
    a.nelems = GSHMEMI_BCAST_RELAY_MID_FROM;
    assert_int_equal(gshmemi_direct_algo_most(S, 4, &a), GSHMEMI_BCAST_RELAY_MID_CTAS);
    assert_int_equal(gshmemi_direct_algo_most(S, 3, &a), GSHMEMI_BCAST_RELAY_MID_CTAS);
    assert_int_equal(gshmemi_direct_algo_most(S, 2, &a), S);
    assert_int_equal(gshmemi_direct_algo_most(16, 4, &a), 16);
    a.nelems = GSHMEMI_DIRECT_BULK_BYTES;
    assert_int_equal(gshmemi_direct_algo_most(S, 4, &a), S);
}

/* One thread group (device call, one slice): LL while one step carries it (a warp: 1 KiB; one
 * thread: 32 B), then LL128 for blocks of whole warps (to 8 KiB from 256 threads, 1 KiB a warp
 * below), then DIRECT; forced protocols and SIMPLE keep the team rule. */
static void test_group(void **state)
{
    const int A = GSHMEMI_PROTO_AUTO;
    const size_t step = GSHMEMI_LL_SLICE_DATA, l128 = GSHMEMI_GROUP_LL128_MAX;
    (void)state;
#define GROUP(blk, r, group) gshmemi_group_proto(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, blk, r), r, blk, group)
    assert_int_equal(GROUP(8, rule(A, 1), 512), GSHMEMI_PROTO_LL);
    assert_int_equal(GROUP(step, rule(A, 1), 512), GSHMEMI_PROTO_LL);
    assert_int_equal(GROUP(step + 1, rule(A, 1), 512), GSHMEMI_PROTO_LL128);
    assert_int_equal(GROUP(l128, rule(A, 1), 512), GSHMEMI_PROTO_LL128);
    assert_int_equal(GROUP(l128 + 1, rule(A, 1), 512), GSHMEMI_PROTO_DIRECT);
    assert_int_equal(GROUP(LL + 1, rule(A, 1), 512), GSHMEMI_PROTO_DIRECT); /* the team rule's LL128 */
    /* no LL128 buffers, or a block that is not whole warps: LL, then DIRECT */
    assert_int_equal(GROUP(step + 1, rule(A, 0), 512), GSHMEMI_PROTO_DIRECT);
    assert_int_equal(GROUP(step + 1, rule(A, 1), 100), GSHMEMI_PROTO_DIRECT);
    /* a warp */
    assert_int_equal(GROUP(GSHMEMI_GROUP_WARP_LL_MAX, rule(A, 1), 32), GSHMEMI_PROTO_LL);
    assert_int_equal(GROUP(GSHMEMI_GROUP_WARP_LL_MAX + 1, rule(A, 1), 32), GSHMEMI_PROTO_DIRECT);
    /* GSHMEM_COLL_LL128_MAX below the group's bound */
    gshmemi_proto_rule_t r = rule(A, 1);
    r.ll128_max = step + 8;
    assert_int_equal(GROUP(step + 8, r, 512), GSHMEMI_PROTO_LL128);
    assert_int_equal(GROUP(step + 16, r, 512), GSHMEMI_PROTO_DIRECT);
    /* smaller blocks: LL128 to 1 KiB a warp (128 threads: 4 KiB) */
    assert_int_equal(GROUP(4096, rule(A, 1), 128), GSHMEMI_PROTO_LL128);
    assert_int_equal(GROUP(4097, rule(A, 1), 128), GSHMEMI_PROTO_DIRECT);
    assert_int_equal(GROUP(l128, rule(A, 1), 1024), GSHMEMI_PROTO_LL128);
    /* one thread */
    assert_int_equal(GROUP(GSHMEMI_GROUP_THREAD_LL_MAX, rule(A, 1), 1), GSHMEMI_PROTO_LL);
    assert_int_equal(GROUP(GSHMEMI_GROUP_THREAD_LL_MAX + 1, rule(A, 1), 1), GSHMEMI_PROTO_DIRECT);
    /* a forced protocol and a configured SIMPLE are kept */
    assert_int_equal(GROUP(LL, rule(GSHMEMI_PROTO_LL, 1), 512), GSHMEMI_PROTO_LL);
    assert_int_equal(GROUP(LL + 1, rule(GSHMEMI_PROTO_LL128, 1), 512), GSHMEMI_PROTO_LL128);
    assert_int_equal(GROUP(LL128 + 1, rule(A, 1), 512), GSHMEMI_PROTO_SIMPLE);
#undef GROUP
}

/* The world team's two levels: hosts of equal blocks of consecutive PEs, at least two of each. */
static void test_levels_block(void **state)
{
    (void)state;
    const uint64_t two_by_two[] = {7, 7, 9, 9}, four_by_two[] = {1, 1, 2, 2, 3, 3, 4, 4}, two_by_four[] = {5, 5, 5, 5, 6, 6, 6, 6};
    const uint64_t one_host[] = {3, 3, 3, 3}, singles[] = {1, 2, 3, 4}, uneven[] = {1, 1, 2, 2, 2, 2};
    const uint64_t interleaved[] = {1, 2, 1, 2}, host_twice[] = {1, 1, 2, 2, 1, 1}, split_block[] = {1, 1, 2, 3};
    assert_int_equal(gshmemi_levels_block(two_by_two, 4), 2);
    assert_int_equal(gshmemi_levels_block(four_by_two, 8), 2);
    assert_int_equal(gshmemi_levels_block(two_by_four, 8), 4);
    assert_int_equal(gshmemi_levels_block(one_host, 4), 0);   /* one level only */
    assert_int_equal(gshmemi_levels_block(singles, 4), 0);    /* nothing to do within a host */
    assert_int_equal(gshmemi_levels_block(uneven, 6), 0);     /* hosts of 2 and 4 */
    assert_int_equal(gshmemi_levels_block(interleaved, 4), 0); /* a host's PEs not consecutive */
    assert_int_equal(gshmemi_levels_block(host_twice, 6), 0);  /* a host in two blocks */
    assert_int_equal(gshmemi_levels_block(split_block, 4), 0); /* a block of two hosts */
    assert_int_equal(gshmemi_levels_block(two_by_two, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_auto), cmocka_unit_test(test_shapes_and_forcing),
                                       cmocka_unit_test(test_direct_push), cmocka_unit_test(test_group),
                                       cmocka_unit_test(test_reach),
        cmocka_unit_test(test_remote), cmocka_unit_test(test_routed_geometry), cmocka_unit_test(test_oneshot), cmocka_unit_test(test_bcast_relay), cmocka_unit_test(test_routed_parts), cmocka_unit_test(test_direct_ctas),
        cmocka_unit_test(test_levels_block)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
