#include "env.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bootstrap.h"
#include "log.h"
#include "gshmem/types.h"

gshmemi_env_t gshmemi_env;

int gshmemi_parse_size(const char *text, size_t *out)
{
    char *end;
    unsigned long long v, mult = 1;

    while (isspace((unsigned char)*text)) text++;
    if (!isdigit((unsigned char)*text)) return GSHMEMI_ERR_INVALID;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno) return GSHMEMI_ERR_INVALID;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1ull << 10; end++; break;
    case 'M': mult = 1ull << 20; end++; break;
    case 'G': mult = 1ull << 30; end++; break;
    case 'T': mult = 1ull << 40; end++; break;
    default: break;
    }
    if (mult > 1 && (*end == 'B' || *end == 'b')) end++;
    if (mult == 1 && (*end == 'B' || *end == 'b')) end++;
    while (isspace((unsigned char)*end)) end++;
    if (*end != '\0') return GSHMEMI_ERR_INVALID;
    if (v > SIZE_MAX / mult) return GSHMEMI_ERR_INVALID;
    *out = (size_t)(v * mult);
    return GSHMEMI_OK;
}

static int parse_size(const char *name, const char *text, gshmemi_env_size_t *out)
{
    if (gshmemi_parse_size(text, out) == GSHMEMI_OK) return GSHMEMI_OK;
    GSHMEMI_ERROR("env", "%s=\"%s\" is not a size (expected a number with an optional K, M, G or T suffix)", name, text);
    return GSHMEMI_ERR_INVALID;
}

static int parse_int(const char *name, const char *text, gshmemi_env_int_t *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == text || *end != '\0' || v < INT_MIN || v > INT_MAX) {
        GSHMEMI_ERROR("env", "%s=\"%s\" is not an integer", name, text);
        return GSHMEMI_ERR_INVALID;
    }
    *out = (int)v;
    return GSHMEMI_OK;
}

static int parse_seconds(const char *name, const char *text, gshmemi_env_seconds_t *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    while (isspace((unsigned char)*end)) end++;
    /* inf and nan are refused here; how many seconds a row takes is its limit's business */
    if (errno || end == text || *end != '\0' || !isfinite(v)) {
        GSHMEMI_ERROR("env", "%s=\"%s\" is not a number of seconds", name, text);
        return GSHMEMI_ERR_INVALID;
    }
    *out = v;
    return GSHMEMI_OK;
}

static int parse_string(const char *name, const char *text, gshmemi_env_string_t *out)
{
    (void)name;
    *out = text;
    return GSHMEMI_OK;
}

static int parse_choice(const char *name, const char *text, const char *const *choices, int n, int *out)
{
    char list[128];
    size_t used = 0;

    for (int i = 0; i < n; i++) {
        if (strcasecmp(text, choices[i]) == 0) {
            *out = i;
            return GSHMEMI_OK;
        }
    }
    list[0] = '\0';
    for (int i = 0; i < n && used < sizeof(list); i++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", choices[i]);
    GSHMEMI_ERROR("env", "%s=\"%s\" is not one of the accepted values (%s)", name, text, list);
    return GSHMEMI_ERR_INVALID;
}

static int parse_loglevel(const char *name, const char *text, gshmemi_env_loglevel_t *out)
{
    static const char *const names[] = {"none", "warn", "info", "trace"};
    return parse_choice(name, text, names, 4, out);
}

static int parse_bootstrap(const char *name, const char *text, gshmemi_env_bootstrap_t *out)
{
    static const char *const names[] = {"auto", "pmix", "uid"};
    return parse_choice(name, text, names, 3, out);
}

static const char *const proto_names[] = {"auto", "ll", "ll128", "simple", "direct"};
static const int proto_values[] = {GSHMEMI_PROTO_AUTO, GSHMEMI_PROTO_LL, GSHMEMI_PROTO_LL128, GSHMEMI_PROTO_SIMPLE,
                                   GSHMEMI_PROTO_DIRECT};
static int parse_proto(const char *name, const char *text, gshmemi_env_proto_t *out)
{
    int i = 0, rc = parse_choice(name, text, proto_names, (int)(sizeof(proto_names) / sizeof(proto_names[0])), &i);
    if (rc == GSHMEMI_OK) *out = proto_values[i];
    return rc;
}

static const char *const remote_names[] = {"auto", "proxy", "ibgda", "none"};
static int parse_remote(const char *name, const char *text, gshmemi_env_remote_t *out)
{
    return parse_choice(name, text, remote_names, 4, out);
}

static const char *const backend_names[] = {"auto", "copy", "verbs"};
static int parse_backend(const char *name, const char *text, gshmemi_env_backend_t *out)
{
    return parse_choice(name, text, backend_names, 3, out);
}

static const char *const doorbell_names[] = {"auto", "gpu", "cpu"};
static int parse_doorbell(const char *name, const char *text, gshmemi_env_doorbell_t *out)
{
    return parse_choice(name, text, doorbell_names, 3, out);
}

static const char *const nic_names[] = {"hw", "emulated", "null"};
static int parse_nic(const char *name, const char *text, gshmemi_env_nic_t *out)
{
    return parse_choice(name, text, nic_names, 3, out);
}

/* ---- limits (the LIMIT column) ---- */

static int unset_or_positive(gshmemi_env_int_t v) { return v == -1 || v >= 1; }
static int power_of_two(gshmemi_env_int_t v) { return v >= 64 && v <= (1 << 20) && (v & (v - 1)) == 0; }
static int qps_per_peer(gshmemi_env_int_t v) { return v >= 1 && v <= 64 && (v & (v - 1)) == 0; }

/* The text rows: the shape a value must have to mean anything where it is used, so a typo fails
 * shmem_init (and gshmem-info) at once instead of where, or whether, the value is read. Plain
 * ASCII tests, not <ctype.h>'s, which follow the locale. */
static int ascii_graph(char c) { return c > ' ' && c < 0x7f; }
static int ascii_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

const char *gshmemi_env_ib_device_parse(const char *text, char *name, int *port)
{
    const char *colon, *q;
    size_t len;
    long v = 0;

    name[0] = '\0';
    *port = 0;
    if (!text || !*text) return NULL;
    colon = strchr(text, ':');
    len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= GSHMEMI_ENV_IB_NAME_MAX) return "expected a device name of 1 to 63 characters, optionally followed by :PORT";
    for (q = text; q < text + len; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' || *q == '.' ||
              *q == '-'))
            return "a device name has only letters, digits, '_', '.' and '-'";
    if (colon) {
        for (q = colon + 1; *q >= '0' && *q <= '9' && v <= 255; q++) v = v * 10 + (*q - '0');
        if (q == colon + 1 || *q || v < 1 || v > 255) return "the port after ':' must be a number from 1 to 255";
        *port = (int)v;
    }
    memcpy(name, text, len);
    name[len] = '\0';
    return NULL;
}

static int ib_device_text(gshmemi_env_string_t v)
{
    char name[GSHMEMI_ENV_IB_NAME_MAX];
    int port;
    return gshmemi_env_ib_device_parse(v, name, &port) == NULL;
}

/* What bootstrap_uid.c hands to inet_pton: nothing, or a dotted quad (which is all AF_INET takes). */
static int ipv4_text(gshmemi_env_string_t v)
{
    struct in_addr a;
    return !*v || inet_pton(AF_INET, v, &a) == 1;
}

/* A Linux interface name (IFNAMSIZ - 1 characters at most), or an address label such as eth0:1,
 * which getifaddrs reports in the same place. */
static int ifname_text(gshmemi_env_string_t v)
{
    size_t n = strlen(v);
    if (n > 15) return 0;
    for (size_t i = 0; i < n; i++)
        if (!ascii_graph(v[i]) || v[i] == '/') return 0;
    return 1;
}

/* gshmemi_uid_from_string reads the whole struct back; its magic and version it checks itself. */
_Static_assert(2 * sizeof(gshmemi_uid_t) == 256, "GSHMEM_BOOTSTRAP_UID's rule says 256 hex digits");
static int uid_text(gshmemi_env_string_t v)
{
    size_t n = strlen(v);
    if (n != 0 && n != 2 * sizeof(gshmemi_uid_t)) return 0;
    for (size_t i = 0; i < n; i++)
        if (!ascii_hex(v[i])) return 0;
    return 1;
}

/* Hashed, and printed in logs: one line of plain text. */
static int host_id_text(gshmemi_env_string_t v)
{
    size_t n = strlen(v);
    if (n > 255) return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] != ' ' && !ascii_graph(v[i])) return 0;
    return 1;
}

/* What a row's LIMIT becomes: a test of the local `value`, and a text into the local `rule`
 * (the locals limit_kind and any_text, set from the row's TYPE, pick the wording). */
#define LIMIT_OK_ANY 1
#define LIMIT_OK_RANGE(lo, hi) ((double)value >= (double)(lo) && (double)value <= (double)(hi))
#define LIMIT_OK_CHECK(fn, text) (fn(value) != 0)
#define LIMIT_RULE_ANY snprintf(rule, sizeof(rule), "%s", any_text)
#define LIMIT_RULE_RANGE(lo, hi) describe_range(rule, sizeof(rule), limit_kind, (double)(lo), (double)(hi))
#define LIMIT_RULE_CHECK(fn, text) snprintf(rule, sizeof(rule), "%s", text)

enum { KIND_SIZE, KIND_INT, KIND_SECONDS, KIND_OTHER };
#define LIMIT_KIND_size KIND_SIZE
#define LIMIT_KIND_int KIND_INT
#define LIMIT_KIND_seconds KIND_SECONDS
#define LIMIT_KIND_string KIND_OTHER
#define LIMIT_KIND_loglevel KIND_OTHER
#define LIMIT_KIND_bootstrap KIND_OTHER
#define LIMIT_KIND_proto KIND_OTHER
#define LIMIT_KIND_remote KIND_OTHER
#define LIMIT_KIND_backend KIND_OTHER
#define LIMIT_KIND_doorbell KIND_OTHER
#define LIMIT_KIND_nic KIND_OTHER

/* A size as the parser reads it back: the largest of K, M, G, T that divides it. */
static void format_size_text(char *buf, size_t n, double v)
{
    static const char suffix[] = "KMGT";
    unsigned long long b = (unsigned long long)v;
    int s = -1;

    while (s < 3 && b && b % 1024 == 0) b /= 1024, s++;
    if (s < 0) snprintf(buf, n, "%llu", b);
    else snprintf(buf, n, "%llu%c", b, suffix[s]);
}

static void describe_range(char *buf, size_t n, int kind, double lo, double hi)
{
    char a[32], b[32];

    if (kind == KIND_SIZE) {
        format_size_text(a, sizeof(a), lo);
        format_size_text(b, sizeof(b), hi);
        snprintf(buf, n, "%s..%s bytes", a, b);
    } else if (kind == KIND_INT && hi >= INT_MAX) {
        snprintf(buf, n, ">= %.0f", lo);
    } else if (kind == KIND_INT) {
        snprintf(buf, n, "%.0f..%.0f", lo, hi);
    } else {
        snprintf(buf, n, "%g..%g s", lo, hi);
    }
}

static const char any_text_size[] = "any size", any_text_int[] = "any integer", any_text_seconds[] = "any seconds",
                  any_text_string[] = "any text", any_text_loglevel[] = "none|warn|info|trace",
                  any_text_bootstrap[] = "auto|pmix|uid", any_text_proto[] = "auto|ll|ll128|simple|direct",
                  any_text_remote[] = "auto|proxy|ibgda|none", any_text_backend[] = "auto|copy|verbs",
                  any_text_doorbell[] = "auto|gpu|cpu", any_text_nic[] = "hw|emulated|null";

/* Pastes a row's LIMIT (e.g. RANGE(4, 64)) after a prefix: LIMIT_OK_RANGE(4, 64). ANY, RANGE and
 * CHECK are never macros themselves, so the pasted form is the one that expands. */
#define LIMIT_OK(limit) LIMIT_OK_##limit
#define LIMIT_RULE(limit) LIMIT_RULE_##limit

/* text as a message shows it: on one line (other bytes as \xNN), at most about 100 characters. */
static const char *shown(const char *text, char *buf, size_t cap)
{
    size_t o = 0;
    for (const char *p = text; *p && o + 8 < cap; p++) {
        if (o >= 100) {
            o += (size_t)snprintf(buf + o, cap - o, "...");
            break;
        }
        if (*p >= ' ' && *p < 0x7f && *p != '\\') buf[o++] = *p;
        else o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", (unsigned char)*p);
    }
    buf[o] = '\0';
    return buf;
}

/* The NVSHMEM variable a row also answers to, read where its GSHMEM_ variable is unset (what an
 * NVSHMEM program's users set keeps its meaning here); NULL for the other rows. */
static const char *nvshmem_alias(const char *name)
{
    return strcmp(name, "SYMMETRIC_SIZE") == 0 ? "NVSHMEM_SYMMETRIC_SIZE" : NULL;
}

int gshmemi_env_load(const char *(*get)(const char *name), gshmemi_env_t *env)
{
    char bad_names[512], rule[128], seen[128];
    size_t used = 0;
    int n_bad = 0, limit_kind;
    const char *text, *any_text;

    bad_names[0] = '\0';
    memset(env, 0, sizeof(*env));
    /* A bad value is reported and the default kept, so no later code sees it even if the
     * status is ignored; every row is read, so all bad values show in one run. */
#define GSHMEMI_ENV_LOAD(name, type, def, limit, doc)                                                            \
    {                                                                                                            \
        int ok = 1;                                                                                              \
        const char *var = "GSHMEM_" #name, *alias = nvshmem_alias(#name);                                        \
        text = get(var);                                                                                         \
        if (!text && alias && (text = get(alias))) var = alias;                                                  \
        limit_kind = LIMIT_KIND_##type;                                                                          \
        any_text = any_text_##type;                                                                              \
        (void)limit_kind, (void)any_text;                                                                        \
        if (text) {                                                                                              \
            __typeof__(env->name) value;                                                                         \
            ok = parse_##type(var, text, &value) == GSHMEMI_OK;                                                  \
            if (ok && !(LIMIT_OK(limit))) {                                                                      \
                LIMIT_RULE(limit);                                                                               \
                GSHMEMI_ERROR("env", "%s=\"%s\" is %s: accepted %s", var, shown(text, seen, sizeof(seen)),       \
                              limit_kind == KIND_OTHER ? "malformed" : "out of range", rule);                    \
                ok = 0;                                                                                          \
            }                                                                                                    \
            if (ok) env->name = value;                                                                           \
        }                                                                                                        \
        if (!ok) {                                                                                               \
            n_bad++;                                                                                             \
            if (used < sizeof(bad_names))                                                                        \
                used += (size_t)snprintf(bad_names + used, sizeof(bad_names) - used, "%s%s", n_bad > 1 ? ", " : "", \
                                         var);                                                                   \
        }                                                                                                        \
        if (!text || !ok) {                                                                                      \
            int def_ok = parse_##type("GSHMEM_" #name, def, &env->name) == GSHMEMI_OK;                           \
            __typeof__(env->name) value = env->name;                                                             \
            (void)value;                                                                                         \
            if (!def_ok || !(LIMIT_OK(limit))) {                                                                 \
                GSHMEMI_ERROR("env", "the default of GSHMEM_%s (\"%s\") is not accepted: a bug", #name, def);   \
                n_bad++;                                                                                         \
            }                                                                                                    \
        }                                                                                                        \
    }
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_LOAD)
#undef GSHMEMI_ENV_LOAD
    /* limits across rows */
    if (env->RANK >= 0 && env->NRANKS >= 1 && env->RANK >= env->NRANKS) {
        GSHMEMI_ERROR("env", "GSHMEM_RANK=%d is not below GSHMEM_NRANKS=%d", env->RANK, env->NRANKS);
        n_bad++;
        if (used < sizeof(bad_names))
            used += (size_t)snprintf(bad_names + used, sizeof(bad_names) - used, "%sGSHMEM_RANK", n_bad > 1 ? ", " : "");
    }
    if (n_bad) {
        GSHMEMI_ERROR("env", "%d environment variable%s with a bad value: %s%s (gshmem-info lists what each accepts)", n_bad,
                      n_bad > 1 ? "s" : "", bad_names, used >= sizeof(bad_names) ? "..." : "");
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static const char *get_process_env(const char *name) { return getenv(name); }

int gshmemi_env_init(void)
{
    static int loaded, status;

    if (!loaded) {
        status = gshmemi_env_load(get_process_env, &gshmemi_env);
        if (status == GSHMEMI_OK) gshmemi_log_level = gshmemi_env.DEBUG;
        loaded = 1;
    }
    return status;
}

static void format_size(char *buf, size_t n, gshmemi_env_size_t v) { snprintf(buf, n, "%zu", v); }
static void format_int(char *buf, size_t n, gshmemi_env_int_t v) { snprintf(buf, n, "%d", v); }
static void format_seconds(char *buf, size_t n, gshmemi_env_seconds_t v) { snprintf(buf, n, "%g", v); }
static void format_string(char *buf, size_t n, gshmemi_env_string_t v) { snprintf(buf, n, "%s", v ? v : ""); }
static void format_loglevel(char *buf, size_t n, gshmemi_env_loglevel_t v)
{
    static const char *const names[] = {"none", "warn", "info", "trace"};
    snprintf(buf, n, "%s", names[v & 3]);
}
static void format_bootstrap(char *buf, size_t n, gshmemi_env_bootstrap_t v)
{
    static const char *const names[] = {"auto", "pmix", "uid"};
    snprintf(buf, n, "%s", v >= 0 && v < 3 ? names[v] : "?");
}

static void format_proto(char *buf, size_t n, gshmemi_env_proto_t v)
{
    for (int i = 0; i < (int)(sizeof(proto_values) / sizeof(proto_values[0])); i++)
        if (proto_values[i] == v) snprintf(buf, n, "%s", proto_names[i]);
}

static void format_remote(char *buf, size_t n, gshmemi_env_remote_t v)
{
    snprintf(buf, n, "%s", v >= 0 && v < 4 ? remote_names[v] : "?");
}
static void format_backend(char *buf, size_t n, gshmemi_env_backend_t v)
{
    snprintf(buf, n, "%s", v >= 0 && v < 3 ? backend_names[v] : "?");
}
static void format_doorbell(char *buf, size_t n, gshmemi_env_doorbell_t v)
{
    snprintf(buf, n, "%s", v >= 0 && v < 3 ? doorbell_names[v] : "?");
}
static void format_nic(char *buf, size_t n, gshmemi_env_nic_t v)
{
    snprintf(buf, n, "%s", v >= 0 && v < 3 ? nic_names[v] : "?");
}

void gshmemi_env_print(FILE *out, const gshmemi_env_t *env)
{
    char value[128], rule[128];
    const char *any_text;
    int limit_kind;
#define GSHMEMI_ENV_PRINT(name, type, def, limit, doc)                                                     \
    format_##type(value, sizeof(value), env->name);                                                        \
    limit_kind = LIMIT_KIND_##type;                                                                        \
    any_text = any_text_##type;                                                                            \
    (void)limit_kind, (void)any_text;                                                                      \
    LIMIT_RULE(limit);                                                                                     \
    fprintf(out, "GSHMEM_%-20s %-9s default %-6s value %-10s accepts %-16s  %s\n", #name, #type, "\"" def "\"", value, \
            rule, doc);
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_PRINT)
#undef GSHMEMI_ENV_PRINT
}

/* text into a markdown table cell: '|' escaped */
static void print_cell(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        if (*c == '|') fputc('\\', out);
        fputc(*c, out);
    }
}

void gshmemi_env_print_markdown(FILE *out)
{
    char rule[128];
    const char *any_text;
    int limit_kind;

    fprintf(out, "| variable | type | default | accepts | meaning |\n|---|---|---|---|---|\n");
#define GSHMEMI_ENV_MARKDOWN(name, type, def, limit, doc)                                                  \
    limit_kind = LIMIT_KIND_##type;                                                                        \
    any_text = any_text_##type;                                                                            \
    (void)limit_kind, (void)any_text;                                                                      \
    LIMIT_RULE(limit);                                                                                     \
    fprintf(out, "| `GSHMEM_%s` | %s | `%s` | ", #name, #type, def);                                         \
    print_cell(out, rule);                                                                                 \
    fputs(" | ", out);                                                                                     \
    print_cell(out, doc);                                                                                  \
    fputs(" |\n", out);
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_MARKDOWN)
#undef GSHMEMI_ENV_MARKDOWN
}
