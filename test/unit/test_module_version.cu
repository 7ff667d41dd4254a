/* A CUDA module built against another device state layout is refused, with a message naming both
 * layouts. This file is compiled with GSHMEMI_DEVICE_STATE_VERSION_OVERRIDE=9999, so its static
 * constructor registers version 9999; shmem_init must then fail before it opens anything (no GPU
 * needed: the check is its first step), and the check itself must accept exactly this library's
 * (version, size). Messages are read back from this process's stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gshmem.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stdout, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stdout, __VA_ARGS__);                                                          \
            fprintf(stdout, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Runs fn with stderr going to a temporary file and returns what it wrote (static buffer). */
static const char *stderr_of(int (*fn)(void), int *rc)
{
    static char buf[8192];
    char path[] = "/tmp/gshmem_modver_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    if (fd < 0 || saved < 0) {
        perror("test_module_version: temporary file");
        exit(1);
    }
    unlink(path);
    fflush(stderr);
    dup2(fd, 2);
    *rc = fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    fputs(buf, stderr); /* keep it in the test log */
    return buf;
}

static int check_own(void) { return gshmemi_module_check("module own", GSHMEMI_DEVICE_STATE_VERSION, sizeof(gshmemi_device_state_t)); }
static int check_version(void)
{
    return gshmemi_module_check("module newer", GSHMEMI_DEVICE_STATE_VERSION + 1, sizeof(gshmemi_device_state_t));
}
static int check_size(void)
{
    return gshmemi_module_check("module bigger", GSHMEMI_DEVICE_STATE_VERSION, sizeof(gshmemi_device_state_t) + 8);
}
static int init(void) { return shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL); }

int main(void)
{
    char own[64], want[256];
    int rc;
    const char *err;

    snprintf(own, sizeof(own), "version %u (%zu bytes)", (unsigned)GSHMEMI_DEVICE_STATE_VERSION,
             sizeof(gshmemi_device_state_t));

    err = stderr_of(check_own, &rc);
    CHECK(rc == 0 && err[0] == '\0', "this library's own layout refused (rc %d): %s", rc, err);

    err = stderr_of(check_version, &rc);
    snprintf(want, sizeof(want), "module newer was compiled against device state layout version %u (%zu bytes)",
             (unsigned)GSHMEMI_DEVICE_STATE_VERSION + 1, sizeof(gshmemi_device_state_t));
    CHECK(rc != 0 && strstr(err, want) && strstr(err, own), "another version: rc %d, message '%s'", rc, err);

    err = stderr_of(check_size, &rc);
    snprintf(want, sizeof(want), "module bigger was compiled against device state layout version %u (%zu bytes)",
             (unsigned)GSHMEMI_DEVICE_STATE_VERSION, sizeof(gshmemi_device_state_t) + 8);
    CHECK(rc != 0 && strstr(err, want) && strstr(err, own), "another size: rc %d, message '%s'", rc, err);

    /* This file's own module registered version 9999 at load: init refuses it, naming both. */
    err = stderr_of(init, &rc);
    /* (libgshmem's own collective kernels are a module too, so this one's number is not fixed) */
    snprintf(want, sizeof(want), "that include gshmem.h) was compiled against device state layout version 9999 (%zu bytes)",
             sizeof(gshmemi_device_state_t));
    CHECK(rc != 0 && strstr(err, want) && strstr(err, own), "shmem_init with a version-9999 module: rc %d, message '%s'",
          rc, err);
    CHECK(strstr(err, "driver") == NULL && strstr(err, "bootstrap") == NULL,
          "shmem_init went on past the refusal: '%s'", err);

    if (failures) return 1;
    printf("test_module_version: own layout accepted; other version, other size and a version-9999 module refused, "
           "naming both\n");
    return 0;
}
