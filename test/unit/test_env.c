/* The environment table: defaults, sizes, choices, malformed values, every row's limits and the
 * shapes of the text rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stderr_capture.h"

#include "runtime/base/env.h"
#include "gshmem/types.h"
#include "runtime/base/log.h"

static const char *fake_names[48], *fake_values[48];
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
    assert_int_equal(env.SYMMETRIC_SIZE, 0); /* the GPU's memory, chosen at init */
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
    assert_int_equal(env.IBGDA_DOORBELL, GSHMEMI_DOORBELL_AUTO);
    assert_int_equal(env.IBGDA_NUM_RC_PER_PE, 2);
    assert_int_equal(env.IBGDA_NIC, GSHMEMI_NIC_HW);
}

static char *load_error(const char *name, const char *value);
/* name=value alone is refused with a log that holds message. */
static void expect_refused(const char *name, const char *value, const char *message)
{
    char *m = load_error(name, value);
    assert_non_null(strstr(m, message));
    free(m);
}

/* IBGDA's two choices read every name, and a wrong one is refused naming them all. */
static void test_ibgda_choices(void **state)
{
    gshmemi_env_t env;
    char *m;
    (void)state;
    fake_set("GSHMEM_IBGDA_DOORBELL", "cpu");
    fake_set("GSHMEM_IBGDA_NIC", "emulated");
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.IBGDA_DOORBELL, GSHMEMI_DOORBELL_CPU);
    assert_int_equal(env.IBGDA_NIC, GSHMEMI_NIC_EMULATED);
    fake_n = 0;
    fake_set("GSHMEM_IBGDA_DOORBELL", "gpu");
    fake_set("GSHMEM_IBGDA_NIC", "null");
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.IBGDA_DOORBELL, GSHMEMI_DOORBELL_GPU);
    assert_int_equal(env.IBGDA_NIC, GSHMEMI_NIC_NULL);
    m = load_error("GSHMEM_IBGDA_DOORBELL", "nic");
    assert_non_null(strstr(m, "GSHMEM_IBGDA_DOORBELL=\"nic\""));
    assert_non_null(strstr(m, "(auto, gpu, cpu)"));
    free(m);
    expect_refused("GSHMEM_IBGDA_NIC", "soft", "(hw, emulated, null)");
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

/* 256 hex digits (a unique id's text), the last one c. */
static const char *uid_hex(char c)
{
    static char buf[8][257];
    static int next;
    char *b = buf[next++ % 8];
    for (int i = 0; i < 256; i++) b[i] = "0123456789abcdef"[i % 16];
    b[255] = c;
    b[256] = '\0';
    return b;
}

/* n copies of c */
static const char *repeat(char c, int n)
{
    static char buf[8][512];
    static int next;
    char *b = buf[next++ % 8];
    memset(b, c, (size_t)n);
    b[n] = '\0';
    return b;
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
    fake_set("GSHMEM_BOOTSTRAP_UID", uid_hex('a'));
    fake_set("GSHMEM_COLL_PROTO", "Simple");
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.COLL_PROTO, GSHMEMI_PROTO_SIMPLE);
    assert_int_equal(env.SYMMETRIC_SIZE, 512ull << 20);
    assert_int_equal(env.BOOTSTRAP, GSHMEMI_BOOTSTRAP_PMIX);
    assert_int_equal(env.DEBUG, GSHMEMI_LOG_TRACE);
    assert_int_equal(env.RANK, 3);
    assert_true(env.BOOTSTRAP_TIMEOUT == 2.5);
    assert_string_equal(env.BOOTSTRAP_UID, uid_hex('a'));
    fake_n = 0;
    fake_set("GSHMEM_COLL_PROTO", "LL128");
    fake_set("GSHMEM_DEVICE_WAIT_TIMEOUT", "1e9"); /* the longest wait there is */
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.COLL_PROTO, GSHMEMI_PROTO_LL128);
    assert_true(env.DEVICE_WAIT_TIMEOUT == 1e9);
}

/* What loading the fake environment logs (stderr captured in a file); the load must fail. */
static char *load_errors(void)
{
    gshmemi_env_t env;
    char *text;
    capture_begin();
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_ERR_INVALID);
    text = strdup(capture_end());
    assert_non_null(text);
    return text;
}

static char *load_error(const char *name, const char *value)
{
    fake_n = 0;
    fake_set(name, value);
    return load_errors();
}

/* Lines of text that contain needle. */
static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
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
    assert_non_null(strstr(m, "GSHMEM_DEVICE_WAIT_TIMEOUT=\"inf\" is not a number of seconds"));
    assert_non_null(strstr(m, "1 environment variable with a bad value: GSHMEM_DEVICE_WAIT_TIMEOUT"));
    free(m);
    expect_refused("GSHMEM_MAX_TEAMS", "65", "GSHMEM_MAX_TEAMS=\"65\" is out of range: accepted 4..64");
    expect_refused("GSHMEM_BOOTSTRAP_TIMEOUT", "1e-300", "GSHMEM_BOOTSTRAP_TIMEOUT=\"1e-300\" is out of range: accepted 0.001..1e+09 s");
    expect_refused("GSHMEM_SYMMETRIC_SIZE", "1025T", "GSHMEM_SYMMETRIC_SIZE=\"1025T\" is out of range: accepted 0..1024T bytes");
    expect_refused("GSHMEM_NRANKS", "0", "GSHMEM_NRANKS=\"0\" is out of range: accepted -1 (unset) or >= 1");
}

/* Every row with a limit: the value just outside each end is refused (and named), the ends
 * themselves are taken. */
static void test_limits(void **state)
{
    static const struct {
        const char *name, *low_bad, *low_ok, *high_ok, *high_bad; /* NULL: that end is the type's own */
    } rows[] = {
        {"GSHMEM_SYMMETRIC_SIZE", NULL, "0", "1024T", "1025T"},
        {"GSHMEM_HEAP_GROWTH", "0", "1", "1024T", "1048577G"},
        {"GSHMEM_BOOTSTRAP_TIMEOUT", "1e-300", "0.001", "1e9", "1.000001e9"},
        {"GSHMEM_PEER_TIMEOUT", "0.0009", "0.001", "1e9", "2e9"},
        {"GSHMEM_DEVICE_WAIT_TIMEOUT", "-5", "0.001", "1e9", "1e10"},
        {"GSHMEM_BOOTSTRAP_LISTEN_FD", "-2", "-1", "2147483647", NULL},
        {"GSHMEM_RANK", "-2", "-1", "2147483647", NULL},
        {"GSHMEM_LOCAL_RANK", "-2", "-1", "2147483647", NULL},
        {"GSHMEM_DEVICE", "-2", "-1", "2147483647", NULL},
        {"GSHMEM_DEBUG_CHECKS", "-1", "0", "1", "2"},
        {"GSHMEM_MAX_TEAMS", "3", "4", "64", "65"},
        {"GSHMEM_BARRIER_RADIX", "1", "2", "32", "33"},
        {"GSHMEM_COLL_CTAS", "-1", "0", "128", "129"},
        {"GSHMEM_COLL_PDL", "-1", "0", "1", "2"},
        {"GSHMEM_NRANKS", "-2", "-1", "2147483647", NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const char *bad[2] = {rows[i].low_bad, rows[i].high_bad}, *ok[2] = {rows[i].low_ok, rows[i].high_ok};
        for (int j = 0; j < 2; j++) {
            gshmemi_env_t env;
            fake_n = 0;
            fake_set(rows[i].name, ok[j]);
            if (gshmemi_env_load(fake_get, &env) != GSHMEMI_OK) fail_msg("%s=%s was refused", rows[i].name, ok[j]);
            if (!bad[j]) continue;
            char *m = load_error(rows[i].name, bad[j]), want[128];
            snprintf(want, sizeof(want), "%s=\"%s\" is out of range: accepted ", rows[i].name, bad[j]);
            if (!strstr(m, want)) fail_msg("%s=%s: no line \"%s\" in: %s", rows[i].name, bad[j], want, m);
            free(m);
        }
    }
    /* QPs per peer: powers of two only (the device path picks one by a mask) */
    static const char *qps_ok[] = {"1", "2", "4", "64"}, *qps_bad[] = {"0", "3", "48", "128"};
    for (int j = 0; j < 4; j++) {
        gshmemi_env_t env;
        fake_n = 0;
        fake_set("GSHMEM_IBGDA_NUM_RC_PER_PE", qps_ok[j]);
        assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
        assert_int_equal(env.IBGDA_NUM_RC_PER_PE, atoi(qps_ok[j]));
        char *q = load_error("GSHMEM_IBGDA_NUM_RC_PER_PE", qps_bad[j]);
        if (!strstr(q, "GSHMEM_IBGDA_NUM_RC_PER_PE=") || !strstr(q, "a power of two, 1..64"))
            fail_msg("GSHMEM_IBGDA_NUM_RC_PER_PE=%s: the message does not name the variable and the rule: %s", qps_bad[j], q);
        free(q);
    }
    /* 0 between the two accepted ends of NRANKS; a rank outside the job */
    char *m = load_error("GSHMEM_NRANKS", "0");
    assert_non_null(strstr(m, "GSHMEM_NRANKS=\"0\" is out of range"));
    free(m);
    fake_n = 0;
    fake_set("GSHMEM_RANK", "4");
    fake_set("GSHMEM_NRANKS", "4");
    m = load_errors();
    assert_non_null(strstr(m, "GSHMEM_RANK=4 is not below GSHMEM_NRANKS=4"));
    free(m);
}

/* The text rows: each value of the wrong shape is refused with one line naming the variable,
 * the value (on one line) and what the row accepts; values of the right shape are taken. */
static void test_text_rows(void **state)
{
    static const char *const ib_name_63 = "m23456789012345678901234567890123456789012345678901234567890123";
    const struct {
        const char *name, *rule, *good[8], *bad[12];
    } rows[] = {
        {"GSHMEM_IB_DEVICE", "empty, NAME or NAME:PORT",
         {"mlx5_0", "mlx5_0:1", "mlx5_10:255", "rocep1s0f0", "irdma-0.x", ib_name_63, "", NULL},
         {"x:999", "mlx5_0:", "mlx5_0:0", "mlx5_0:256", ":1", "mlx 0", "a/b", "mlx5_0:1x", "mlx5_0:+1", "mlx5_0:1:2",
          repeat('m', 64), NULL}},
        {"GSHMEM_BOOTSTRAP_ADDR", "empty or a dotted-quad IPv4 address",
         {"10.0.0.5", "127.0.0.1", "255.255.255.255", "0.0.0.0", "", NULL},
         {"nan", "10.0.0.300", "eth0", "10.0.0", "1.2.3.4.5", " 10.0.0.5", "10.0.0.5 ", "::1", "localhost", NULL}},
        {"GSHMEM_BOOTSTRAP_IFNAME", "empty or an interface name",
         {"lo", "eth0", "enp1s0f0np0", "eth0:1", "ib0.8001", repeat('i', 15), "", NULL},
         {"a/b", "eth 0", repeat('i', 16), "eth0\t", "eth0\n", "\x7f", "\xc3\xa9th0", NULL}},
        {"GSHMEM_BOOTSTRAP_UID", "empty or the 256 hex digits of a unique id",
         {uid_hex('f'), uid_hex('F'), "", NULL},
         {"abcd", "nan", uid_hex('g'), uid_hex(' '), repeat('a', 255), repeat('a', 257), NULL}},
        {"GSHMEM_HOST_ID", "up to 255 printable ASCII characters",
         {"node-1", "rack 3 / node 7", repeat('h', 255), "", NULL},
         {"a\nb", "tab\there", repeat('h', 256), "\x01", "h\xc3\xb4te", NULL}},
    };
    (void)state;
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        for (int j = 0; rows[r].good[j]; j++) {
            gshmemi_env_t env;
            fake_n = 0;
            fake_set(rows[r].name, rows[r].good[j]);
            if (gshmemi_env_load(fake_get, &env) != GSHMEMI_OK) fail_msg("%s=\"%s\" was refused", rows[r].name, rows[r].good[j]);
        }
        for (int j = 0; rows[r].bad[j]; j++) {
            char *m = load_error(rows[r].name, rows[r].bad[j]), head[64], summary[96];
            snprintf(head, sizeof(head), "%s=\"", rows[r].name);
            snprintf(summary, sizeof(summary), "1 environment variable with a bad value: %s ", rows[r].name);
            /* one error line, then the summary; nothing of the value breaks the line */
            if (count_lines(m, head) != 1 || count_lines(m, "is malformed: accepted ") != 1 || !strstr(m, rows[r].rule) ||
                !strstr(m, summary) || count_lines(m, "\n") != 2)
                fail_msg("%s=\"%s\": not one line naming it and '%s', then the summary: %s", rows[r].name, rows[r].bad[j],
                         rows[r].rule, m);
            free(m);
        }
    }
    /* the value shown: as given where it is plain text, escaped where not, cut where long */
    char *m = load_error("GSHMEM_BOOTSTRAP_ADDR", "nan");
    assert_non_null(strstr(m, "GSHMEM_BOOTSTRAP_ADDR=\"nan\" is malformed: accepted empty or a dotted-quad IPv4 address"));
    free(m);
    expect_refused("GSHMEM_IB_DEVICE", "x:999", "GSHMEM_IB_DEVICE=\"x:999\" is malformed: accepted empty, NAME or NAME:PORT (NAME: 1..63 of ");
    expect_refused("GSHMEM_HOST_ID", "a\nb\\c", "GSHMEM_HOST_ID=\"a\\x0ab\\x5cc\" is malformed");
    m = load_error("GSHMEM_HOST_ID", repeat('h', 300));
    assert_non_null(strstr(m, "GSHMEM_HOST_ID=\"hhhhhhhhhh"));
    assert_non_null(strstr(m, "hhh...\" is malformed"));
    free(m);
    /* the numbers keep their wording */
    expect_refused("GSHMEM_MAX_TEAMS", "65", "GSHMEM_MAX_TEAMS=\"65\" is out of range: accepted 4..64");
}

/* GSHMEM_IB_DEVICE's parser, which the verbs backend and IBGDA call too. */
static void test_ib_device_parse(void **state)
{
    char name[GSHMEMI_ENV_IB_NAME_MAX];
    int port = -1;
    (void)state;
    assert_null(gshmemi_env_ib_device_parse("mlx5_0:1", name, &port));
    assert_string_equal(name, "mlx5_0");
    assert_int_equal(port, 1);
    assert_null(gshmemi_env_ib_device_parse("mlx5_10:255", name, &port));
    assert_string_equal(name, "mlx5_10");
    assert_int_equal(port, 255);
    assert_null(gshmemi_env_ib_device_parse("rocep1s0f0", name, &port));
    assert_string_equal(name, "rocep1s0f0");
    assert_int_equal(port, 0);
    assert_null(gshmemi_env_ib_device_parse(NULL, name, &port));
    assert_string_equal(name, "");
    assert_int_equal(port, 0);
    assert_null(gshmemi_env_ib_device_parse("", name, &port));
    assert_string_equal(name, "");
    assert_non_null(strstr(gshmemi_env_ib_device_parse("x:999", name, &port), "the port after ':' must be a number from 1 to 255"));
    assert_string_equal(name, "");
    assert_int_equal(port, 0);
    assert_non_null(strstr(gshmemi_env_ib_device_parse("mlx 0", name, &port), "only letters, digits"));
    assert_non_null(strstr(gshmemi_env_ib_device_parse(repeat('m', 64), name, &port), "1 to 63 characters"));
    assert_non_null(strstr(gshmemi_env_ib_device_parse(":1", name, &port), "1 to 63 characters"));
}

/* Several bad values at once: one line each, then one summary naming them all; the good ones
 * are taken and the bad ones keep their defaults. */
static void test_all_reported(void **state)
{
    static const char *bad[][2] = {
        {"GSHMEM_MAX_TEAMS", "100"},       {"GSHMEM_BARRIER_RADIX", "1"},       {"GSHMEM_COLL_CTAS", "-1"},
        {"GSHMEM_SYMMETRIC_SIZE", "2000T"}, {"GSHMEM_BOOTSTRAP_TIMEOUT", "1e-300"}, {"GSHMEM_DEBUG_CHECKS", "2"},
        {"GSHMEM_COLL_PDL", "7"},          {"GSHMEM_DEVICE", "-3"},             {"GSHMEM_HEAP_GROWTH", "0"},
        {"GSHMEM_COLL_PROTO", "fast"},     {"GSHMEM_DEBUG", "loud"},           {"GSHMEM_IB_DEVICE", "x:999"},
        {"GSHMEM_BOOTSTRAP_ADDR", "nan"},  {"GSHMEM_BOOTSTRAP_IFNAME", "a/b"},  {"GSHMEM_BOOTSTRAP_UID", "abcd"},
    };
    const size_t n = sizeof(bad) / sizeof(bad[0]);
    gshmemi_env_t env;
    char *m, summary[64];
    (void)state;
    fake_n = 0;
    for (size_t i = 0; i < n; i++) fake_set(bad[i][0], bad[i][1]);
    fake_set("GSHMEM_COLL_LL_MAX", "1M"); /* a good one among them */
    m = load_errors();
    for (size_t i = 0; i < n; i++) {
        char want[96];
        snprintf(want, sizeof(want), "%s=\"%s\" is ", bad[i][0], bad[i][1]);
        if (count_lines(m, want) != 1) fail_msg("not exactly one line \"%s\" in: %s", want, m);
    }
    snprintf(summary, sizeof(summary), "%zu environment variables with a bad value: ", n);
    const char *s = strstr(m, summary);
    if (!s || count_lines(m, "environment variables with a bad value") != 1) fail_msg("no single summary \"%s\" in: %s", summary, m);
    for (size_t i = 0; i < n; i++)
        if (!strstr(s, bad[i][0])) fail_msg("the summary does not name %s: %s", bad[i][0], s);
    assert_null(strstr(s, "GSHMEM_COLL_LL_MAX"));
    /* errors first, the summary last */
    assert_null(strstr(s + 1, "is out of range"));
    assert_null(strstr(s + 1, "is malformed"));
    free(m);
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_ERR_INVALID);
    assert_int_equal(env.COLL_LL_MAX, 1 << 20);
    assert_int_equal(env.MAX_TEAMS, 32);
    assert_int_equal(env.COLL_CTAS, 0);
    assert_int_equal(env.SYMMETRIC_SIZE, 0);
}

/* NVSHMEM_SYMMETRIC_SIZE sets the heap where GSHMEM_SYMMETRIC_SIZE is unset, and a bad value of
 * it is reported under its own name. */
static void test_nvshmem_alias(void **state)
{
    gshmemi_env_t env;
    (void)state;
    fake_n = 0;
    fake_set("NVSHMEM_SYMMETRIC_SIZE", "4G");
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.SYMMETRIC_SIZE, 4ull << 30);
    fake_set("GSHMEM_SYMMETRIC_SIZE", "256M"); /* gshmem's own wins */
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.SYMMETRIC_SIZE, 256ull << 20);
    fake_n = 0;
    char *m = load_error("NVSHMEM_SYMMETRIC_SIZE", "plenty");
    assert_non_null(strstr(m, "NVSHMEM_SYMMETRIC_SIZE=\"plenty\" is not a size"));
    assert_non_null(strstr(m, "environment variable with a bad value: NVSHMEM_SYMMETRIC_SIZE"));
    free(m);
    fake_n = 0;
    fake_set("NVSHMEM_HEAP_GROWTH", "1"); /* only the rows with an alias answer to NVSHMEM_ */
    assert_int_equal(gshmemi_env_load(fake_get, &env), GSHMEMI_OK);
    assert_int_equal(env.HEAP_GROWTH, 32u << 20);
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
    assert_non_null(strstr(buf, "33554432"));             /* GSHMEM_HEAP_GROWTH, 32M */
    assert_non_null(strstr(buf, "accepts 4..64"));          /* GSHMEM_MAX_TEAMS */
    assert_non_null(strstr(buf, "accepts 0.001..1e+09 s")); /* the timeouts */
    assert_non_null(strstr(buf, "accepts auto|pmix|uid"));
    assert_non_null(strstr(buf, "accepts empty or a dotted-quad IPv4 address")); /* GSHMEM_BOOTSTRAP_ADDR */
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, setup),
        cmocka_unit_test_setup(test_ibgda_choices, setup), cmocka_unit_test_setup(test_sizes, setup),
        cmocka_unit_test_setup(test_values, setup),   cmocka_unit_test_setup(test_malformed, setup),
        cmocka_unit_test_setup(test_print, setup),    cmocka_unit_test_setup(test_messages, setup),
        cmocka_unit_test_setup(test_limits, setup),   cmocka_unit_test_setup(test_all_reported, setup),
        cmocka_unit_test_setup(test_nvshmem_alias, setup),
        cmocka_unit_test_setup(test_text_rows, setup), cmocka_unit_test_setup(test_ib_device_parse, setup),
    };
    gshmemi_log_level = GSHMEMI_LOG_NONE;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
