/* libFuzzer target: the environment table's parser. The input is a list of assignments, one per
 * line: the first byte picks the variable (modulo the number of rows), the rest is its value.
 * Whatever the values, gshmemi_env_load must not crash, leak or hit undefined behaviour, and every
 * field must end within its row's limit (a bad value keeps its default). Every value is also fed to
 * gshmemi_parse_size, and the table printed. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem/types.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"

#define NAME_OF(name, ...) "GSHMEM_" #name,
static const char *const names[] = {GSHMEMI_ENV_TABLE(NAME_OF)};
#define N_VARS (sizeof(names) / sizeof(names[0]))

static char *values[N_VARS];

static const char *fuzz_get(const char *name)
{
    for (size_t i = 0; i < N_VARS; i++)
        if (strcmp(names[i], name) == 0) return values[i];
    return NULL;
}

#define EXPECT(cond)                                                                             \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "fuzz_env: %s does not hold after gshmemi_env_load\n", #cond);      \
            abort();                                                                             \
        }                                                                                        \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    gshmemi_env_t env;
    size_t at = 0;

    if (!devnull) devnull = fopen("/dev/null", "w");
    while (at < size) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size, len;
        size_t v = data[at] % N_VARS;
        char *text;

        len = end > at ? end - at - 1 : 0; /* the bytes after the selector */
        text = malloc(len + 1);
        if (!text) abort();
        if (len) memcpy(text, data + at + 1, len);
        text[len] = '\0';
        {
            size_t sz;
            (void)gshmemi_parse_size(text, &sz);
        }
        free(values[v]);
        values[v] = text;
        at = end + 1;
    }

    (void)gshmemi_env_load(fuzz_get, &env);
    /* the limits hold whether or not the load succeeded */
    EXPECT(env.SYMMETRIC_SIZE <= GSHMEMI_ENV_SIZE_MAX); /* 0: the GPU's memory, chosen at init */
    EXPECT(env.HEAP_GROWTH >= 1 && env.HEAP_GROWTH <= GSHMEMI_ENV_SIZE_MAX);
    EXPECT(env.BOOTSTRAP_TIMEOUT >= GSHMEMI_ENV_SECONDS_MIN && env.BOOTSTRAP_TIMEOUT <= GSHMEMI_ENV_SECONDS_MAX);
    EXPECT(env.PEER_TIMEOUT >= GSHMEMI_ENV_SECONDS_MIN && env.PEER_TIMEOUT <= GSHMEMI_ENV_SECONDS_MAX);
    EXPECT(env.DEVICE_WAIT_TIMEOUT >= GSHMEMI_ENV_SECONDS_MIN && env.DEVICE_WAIT_TIMEOUT <= GSHMEMI_ENV_SECONDS_MAX);
    EXPECT(env.MAX_TEAMS >= 4 && env.MAX_TEAMS <= 64);
    EXPECT(env.BARRIER_RADIX >= 2 && env.BARRIER_RADIX <= 32);
    EXPECT(env.COLL_CTAS >= 0 && env.COLL_CTAS <= GSHMEMI_COLL_SLICES);
    EXPECT(env.DEBUG_CHECKS == 0 || env.DEBUG_CHECKS == 1);
    EXPECT(env.COLL_PDL == 0 || env.COLL_PDL == 1);
    EXPECT(env.DEVICE >= -1 && env.RANK >= -1 && env.LOCAL_RANK >= -1 && env.BOOTSTRAP_LISTEN_FD >= -1 && env.LAUNCHER_FD >= -1);
    EXPECT(env.NRANKS == -1 || env.NRANKS >= 1);
    EXPECT(env.DEBUG >= GSHMEMI_LOG_NONE && env.DEBUG <= GSHMEMI_LOG_TRACE);
    EXPECT(env.BOOTSTRAP >= GSHMEMI_BOOTSTRAP_AUTO && env.BOOTSTRAP <= GSHMEMI_BOOTSTRAP_UID);
    EXPECT(env.BOOTSTRAP_UID != NULL);
    /* the text rows keep their shape: what the transports and the bootstrap read is well formed */
    {
        char ib_name[GSHMEMI_ENV_IB_NAME_MAX];
        int ib_port;
        size_t uid_len = strlen(env.BOOTSTRAP_UID);
        EXPECT(gshmemi_env_ib_device_parse(env.IB_DEVICE, ib_name, &ib_port) == NULL);
        EXPECT(strlen(env.BOOTSTRAP_IFNAME) <= 15 && !strchr(env.BOOTSTRAP_IFNAME, '/') && !strchr(env.BOOTSTRAP_IFNAME, ' '));
        EXPECT(strlen(env.HOST_ID) <= 255 && !strchr(env.HOST_ID, '\n'));
        EXPECT(uid_len == 0 || uid_len == 256);
    }
    if (devnull) gshmemi_env_print(devnull, &env);

    for (size_t i = 0; i < N_VARS; i++) {
        free(values[i]);
        values[i] = NULL;
    }
    return 0;
}
