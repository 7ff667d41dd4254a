/* The collective protocol rule (include/gshmem/coll.h), shared by the host launcher and the
 * device: thresholds, the shapes that must go DIRECT, and what a forced protocol becomes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gshmem.h"

#define LL (64u << 10)
#define SIMPLE (1u << 20)

static void test_auto(void **state)
{
    (void)state;
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, GSHMEMI_PROTO_AUTO, LL, SIMPLE, 1), GSHMEMI_PROTO_LL);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL, GSHMEMI_PROTO_AUTO, LL, SIMPLE, 1), GSHMEMI_PROTO_LL);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL + 1, GSHMEMI_PROTO_AUTO, LL, SIMPLE, 1), GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_FCOLLECT, SIMPLE, GSHMEMI_PROTO_AUTO, LL, SIMPLE, 1), GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, SIMPLE + 1, GSHMEMI_PROTO_AUTO, LL, SIMPLE, 1), GSHMEMI_PROTO_DIRECT);
    /* a team without SIMPLE buffers goes from LL straight to DIRECT */
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_ALLTOALL, LL + 1, GSHMEMI_PROTO_AUTO, LL, SIMPLE, 0), GSHMEMI_PROTO_DIRECT);
    /* GSHMEM_COLL_SIMPLE_MAX=0 */
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, LL + 1, GSHMEMI_PROTO_AUTO, LL, 0, 1), GSHMEMI_PROTO_DIRECT);
}

static void test_shapes_and_forcing(void **state)
{
    (void)state;
    /* collect and alltoalls blocks differ per PE or are strided: always DIRECT, even when forced */
    for (int p = GSHMEMI_PROTO_AUTO; p <= GSHMEMI_PROTO_SIMPLE; p++) {
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_COLLECT, 8, p, LL, SIMPLE, 1), GSHMEMI_PROTO_DIRECT);
        assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_ALLTOALLS, 8, p, LL, SIMPLE, 1), GSHMEMI_PROTO_DIRECT);
    }
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 1u << 30, GSHMEMI_PROTO_LL, LL, SIMPLE, 1), GSHMEMI_PROTO_LL);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_BROADCAST, 8, GSHMEMI_PROTO_DIRECT, LL, SIMPLE, 1), GSHMEMI_PROTO_DIRECT);
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_BROADCAST, 8, GSHMEMI_PROTO_SIMPLE, LL, SIMPLE, 1), GSHMEMI_PROTO_SIMPLE);
    /* forced SIMPLE on a team without buffers: DIRECT, never a missing buffer */
    assert_int_equal(gshmemi_pick_proto(GSHMEMI_COLL_REDUCE, 8, GSHMEMI_PROTO_SIMPLE, LL, SIMPLE, 0), GSHMEMI_PROTO_DIRECT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_auto), cmocka_unit_test(test_shapes_and_forcing)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
