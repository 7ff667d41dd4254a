/* The SHMEM_CMP_* rule (include/gshmem/types.h) that the device waits, the P2P AMO path and the
 * host's signal_wait_until share: every operator, signed and unsigned, at the extremes. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gshmem.h"

/* The expected result as a truth table rather than a copy of the rule under test: for each
 * operator (SHMEM_CMP_EQ .. SHMEM_CMP_LE), whether it holds when a < b, a == b, a > b. */
static const int truth[6][3] = {{0, 1, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 1}, {1, 0, 0}, {1, 1, 0}};
static int expect(int cmp, long long a, long long b) { return truth[cmp][a < b ? 0 : a == b ? 1 : 2]; }

static void test_signed(void **state)
{
    static const long long v[] = {LLONG_MIN, LLONG_MIN + 1, -2, -1, 0, 1, 2, LLONG_MAX - 1, LLONG_MAX};
    (void)state;
    for (int cmp = SHMEM_CMP_EQ; cmp <= SHMEM_CMP_LE; cmp++)
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
            for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
                assert_int_equal(gshmemi_cmp(cmp, v[i], v[j]), expect(cmp, v[i], v[j]));
}

static void test_unsigned(void **state)
{
    (void)state;
    /* above LLONG_MAX the unsigned order differs from the signed one */
    assert_true(gshmemi_cmp_u(SHMEM_CMP_GT, ULLONG_MAX, 1));
    assert_true(gshmemi_cmp_u(SHMEM_CMP_LT, 1ull << 62, 1ull << 63));
    assert_true(gshmemi_cmp_u(SHMEM_CMP_GE, 5, 5));
    assert_false(gshmemi_cmp_u(SHMEM_CMP_NE, 7, 7));
    assert_true(gshmemi_cmp_u(SHMEM_CMP_LE, 0, ULLONG_MAX));
    assert_true(gshmemi_cmp_u(SHMEM_CMP_EQ, ULLONG_MAX, ULLONG_MAX));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_signed), cmocka_unit_test(test_unsigned)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
