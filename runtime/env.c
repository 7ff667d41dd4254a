#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    GSHMEMI_ERROR("env", "GSHMEM_%s=\"%s\" is not a size (expected a number with an optional K, M, G or T suffix)", name, text);
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
        GSHMEMI_ERROR("env", "GSHMEM_%s=\"%s\" is not an integer", name, text);
        return GSHMEMI_ERR_INVALID;
    }
    *out = (int)v;
    return GSHMEMI_OK;
}

/* Every wait stays bounded, and the device wait's nanoseconds fit 64 bits: "inf" is refused. */
#define GSHMEMI_ENV_SECONDS_MAX 1e9

static int parse_seconds(const char *name, const char *text, gshmemi_env_seconds_t *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == text || *end != '\0' || !(v > 0 && v <= GSHMEMI_ENV_SECONDS_MAX)) {
        GSHMEMI_ERROR("env", "GSHMEM_%s=\"%s\" is not a number of seconds above 0 and at most %g", name, text,
                      GSHMEMI_ENV_SECONDS_MAX);
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
    GSHMEMI_ERROR("env", "GSHMEM_%s=\"%s\" is not one of the accepted values (%s)", name, text, list);
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
    int i, rc = parse_choice(name, text, proto_names, (int)(sizeof(proto_names) / sizeof(proto_names[0])), &i);
    if (rc == GSHMEMI_OK) *out = proto_values[i];
    return rc;
}

int gshmemi_env_load(const char *(*get)(const char *name), gshmemi_env_t *env)
{
    int rc = GSHMEMI_OK;
    const char *text;

    memset(env, 0, sizeof(*env));
#define GSHMEMI_ENV_LOAD(name, type, def, doc)                                                   \
    text = get("GSHMEM_" #name);                                                                 \
    if (parse_##type(#name, def, &env->name) != GSHMEMI_OK) rc = GSHMEMI_ERR_INVALID;            \
    if (text && parse_##type(#name, text, &env->name) != GSHMEMI_OK) rc = GSHMEMI_ERR_INVALID;
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_LOAD)
#undef GSHMEMI_ENV_LOAD
    return rc;
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

void gshmemi_env_print(FILE *out, const gshmemi_env_t *env)
{
    char value[128];
#define GSHMEMI_ENV_PRINT(name, type, def, doc)                                                       \
    format_##type(value, sizeof(value), env->name);                                                   \
    fprintf(out, "GSHMEM_%-20s %-9s default %-6s value %-10s  %s\n", #name, #type, "\"" def "\"", value, doc);
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_PRINT)
#undef GSHMEMI_ENV_PRINT
}
