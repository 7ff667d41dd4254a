/* The collective protocol rule (include/gshmem/coll.h), shared by the host launcher and the
 * device: thresholds, the shapes that must go DIRECT, and what a forced protocol becomes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gshmem.h"

#define LL (64u << 10)
#define LL128 (512u << 10)
#define SIMPLE (1u << 20)

/* The world team's rule (both bulk buffers) or a sub-team's (neither). */
static gshmemi_proto_rule_t rule(int forced, int buffers)
{
    gshmemi_proto_rule_t r = {forced, LL, LL128, SIMPLE, buffers, buffers};
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_auto), cmocka_unit_test(test_shapes_and_forcing)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
