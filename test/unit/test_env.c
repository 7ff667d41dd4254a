/* The environment table: defaults, sizes, choices and malformed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/env.h"
#include "gshmem/types.h"
#include "runtime/log.h"

static const char *fake_names[8], *fake_values[8];
static int fake_n;

static const char *fake_get(const char *name)
{
    for (int i = 0; i < fake_n; i++)
        if (strcmp(fake_names[i], name) == 0) return fake_values[i];
    return NULL;
}

static void fake_set(const char *name, const char *value)
{
    fake_names[fake_n] = name;
    fake_values[fake_n++] = value;
}

static int setup(void **state)
{
    (void)state;
    fake_n = 0;
    return 0;
}

static void test_defaults(void **state)
{
    gshmemi_env_t env;
    (void)state;
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.SYMMETRIC_SIZE, 1ull << 30);
    assert_int_equal(env.BOOTSTRAP, GSHMEMI_BOOTSTRAP_AUTO);
    assert_int_equal(env.DEBUG, GSHMEMI_LOG_WARN);
    assert_int_equal(env.RANK, -1);
    assert_string_equal(env.BOOTSTRAP_UID, "");
    assert_true(env.BOOTSTRAP_TIMEOUT == 120.0);
    assert_int_equal(env.COLL_PROTO, GSHMEMI_PROTO_AUTO);
    assert_int_equal(env.COLL_LL_MAX, 64 << 10);
    assert_int_equal(env.COLL_SIMPLE_MAX, 0);
    assert_int_equal(env.MAX_TEAMS, 32);
    assert_int_equal(env.BARRIER_RADIX, 32);
    assert_int_equal(env.COLL_LL128_MAX, 512 << 10);
    assert_int_equal(env.COLL_PDL, 1);
}

static void test_sizes(void **state)
{
    size_t v;
    (void)state;
    assert_int_equal(gshmemi_parse_size("1G", &v), GSHMEMI_OK);
    assert_int_equal(v, 1ull << 30);
    assert_int_equal(gshmemi_parse_size("512M", &v), GSHMEMI_OK);
    assert_int_equal(v, 512ull << 20);
    assert_int_equal(gshmemi_parse_size("64k", &v), GSHMEMI_OK);
    assert_int_equal(v, 64ull << 10);
    assert_int_equal(gshmemi_parse_size("2GB", &v), GSHMEMI_OK);
    assert_int_equal(v, 2ull << 30);
    assert_int_equal(gshmemi_parse_size("4096", &v), GSHMEMI_OK);
    assert_int_equal(v, 4096);
    assert_int_equal(gshmemi_parse_size("1T", &v), GSHMEMI_OK);
    assert_int_equal(v, 1ull << 40);
    assert_int_equal(gshmemi_parse_size("", &v), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_parse_size("G", &v), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_parse_size("-1G", &v), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_parse_size("12Q", &v), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_parse_size("1G5", &v), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_parse_size("99999999999999999999", &v), GSHMEMI_ERR_INVALID);
    assert_int_equal(gshmemi_parse_size("17179869184T", &v), GSHMEMI_ERR_INVALID);
}

static void test_values(void **state)
{
    gshmemi_env_t env;
    (void)state;
    fake_set("GSHMEM_SYMMETRIC_SIZE", "512M");
    fake_set("GSHMEM_BOOTSTRAP", "PMIX");
    fake_set("GSHMEM_DEBUG", "trace");
    fake_set("GSHMEM_RANK", "3");
    fake_set("GSHMEM_BOOTSTRAP_TIMEOUT", "2.5");
    fake_set("GSHMEM_BOOTSTRAP_UID", "abcd");
    fake_set("GSHMEM_COLL_PROTO", "Simple");
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.COLL_PROTO, GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(env.SYMMETRIC_SIZE, 512ull << 20);
    assert_int_equal(env.BOOTSTRAP, GSHMEMI_BOOTSTRAP_PMIX);
    assert_int_equal(env.DEBUG, GSHMEMI_LOG_TRACE);
    assert_int_equal(env.RANK, 3);
    assert_true(env.BOOTSTRAP_TIMEOUT == 2.5);
    assert_string_equal(env.BOOTSTRAP_UID, "abcd");
    fake_n = 0;
    fake_set("GSHMEM_COLL_PROTO", "LL128");
    fake_set("GSHMEM_DEVICE_WAIT_TIMEOUT", "1e9"); /* the longest wait there is */
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.COLL_PROTO, GSHMEMI_PROTO_LL128);
    assert_true(env.DEVICE_WAIT_TIMEOUT == 1e9);
}

/* What a malformed value logs (stderr captured in a file). */
static char *load_error(const char *name, const char *value)
{
    gshmemi_env_t env;
    char *text = calloc(1, 4096);
    FILE *f = tmpfile();
    int saved = dup(2);
    assert_non_null(text);
    assert_non_null(f);
    fflush(stderr);
    dup2(fileno(f), 2);
    fake_n = 0;
    fake_set(name, value);
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_ERR_INVALID);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    (void)!fread(text, 1, 4095, f);
    fclose(f);
    return text;
}

static void test_messages(void **state)
{
    char *m;
    (void)state;
    m = load_error("GSHMEM_COLL_PROTO", "ll256"); /* every choice is named, the fifth too */
    assert_non_null(strstr(m, "GSHMEM_COLL_PROTO=\"ll256\""));
    assert_non_null(strstr(m, "(auto, ll, ll128, simple, direct)"));
    free(m);
    m = load_error("GSHMEM_DEVICE_WAIT_TIMEOUT", "inf");
    assert_non_null(strstr(m, "GSHMEM_DEVICE_WAIT_TIMEOUT=\"inf\" is not a number of seconds above 0 and at most 1e+09"));
    free(m);
}

static void test_malformed(void **state)
{
    static const char *bad[][2] = {
        {"GSHMEM_SYMMETRIC_SIZE", "lots"}, {"GSHMEM_BOOTSTRAP", "mpi"},   {"GSHMEM_DEBUG", "loud"},
        {"GSHMEM_RANK", "1.5"},           {"GSHMEM_RANK", "99999999999"}, {"GSHMEM_BOOTSTRAP_TIMEOUT", "0"},
        {"GSHMEM_BOOTSTRAP_TIMEOUT", "x"}, {"GSHMEM_DEVICE", ""},
        {"GSHMEM_COLL_PROTO", "ll256"},    {"GSHMEM_COLL_LL_MAX", "big"}, {"GSHMEM_COLL_PDL", "yes"},
        /* waits stay bounded, and the device wait's nanoseconds must fit 64 bits */
        {"GSHMEM_DEVICE_WAIT_TIMEOUT", "inf"}, {"GSHMEM_PEER_TIMEOUT", "nan"}, {"GSHMEM_BOOTSTRAP_TIMEOUT", "2e10"},
        {"GSHMEM_DEVICE_WAIT_TIMEOUT", "-5"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gshmemi_env_t env;
        fake_n = 0;
        fake_set(bad[i][0], bad[i][1]);
        assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_ERR_INVALID);
    }
}

static void test_print(void **state)
{
    gshmemi_env_t env;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    gshmemi_env_print(f, &env);
    fclose(f);
    assert_non_null(strstr(buf, "GSHMEM_SYMMETRIC_SIZE"));
    assert_non_null(strstr(buf, "GSHMEM_BOOTSTRAP_TIMEOUT"));
    assert_non_null(strstr(buf, "1073741824"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, setup), cmocka_unit_test_setup(test_sizes, setup),
        cmocka_unit_test_setup(test_values, setup),   cmocka_unit_test_setup(test_malformed, setup),
        cmocka_unit_test_setup(test_print, setup),    cmocka_unit_test_setup(test_messages, setup),
    };
    gshmemi_log_level = GSHMEMI_LOG_NONE;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
