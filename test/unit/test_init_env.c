/* shmem_init refuses a bad environment value before any bootstrap wait or GPU work. As rank 1 of a
 * unique-id job whose root has gone (nobody listens on its port: a join would retry until
 * GSHMEM_BOOTSTRAP_TIMEOUT=30 s), with GSHMEM_MAX_TEAMS and GSHMEM_BARRIER_RADIX out of range, init
 * must fail within a few seconds, naming both, with no bootstrap or CUDA message. Runs with or
 * without a GPU: on a GPU host the time bound is what fails if the check comes late. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gshmem.h"
#include "stderr_capture.h"

#define FAIL(...) do { fprintf(stderr, "test_init_env: " __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    shmemx_uniqueid_t uid;
    shmemx_init_attr_t attr;
    int fds[2], status, rc;
    const char *log;
    pid_t child;
    double t0, took;

    /* The uid's root is a child that exits at once, so its port is closed when we join. */
    if (pipe(fds) != 0) FAIL("pipe failed");
    child = fork();
    if (child < 0) FAIL("fork failed");
    if (child == 0) {
        close(fds[0]);
        if (shmemx_get_uniqueid(&uid) != 0 || write(fds[1], &uid, sizeof(uid)) != (ssize_t)sizeof(uid)) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], &uid, sizeof(uid)) != (ssize_t)sizeof(uid)) FAIL("the child made no unique id");
    close(fds[0]);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) FAIL("the child failed");

    setenv("GSHMEM_MAX_TEAMS", "100", 1);
    setenv("GSHMEM_BARRIER_RADIX", "1", 1);
    setenv("GSHMEM_BOOTSTRAP_TIMEOUT", "30", 1);
    if (shmemx_set_attr_uniqueid_args(1, 2, &uid, &attr) != 0) FAIL("shmemx_set_attr_uniqueid_args failed");

    capture_begin();
    t0 = now();
    rc = shmemx_init_attr(SHMEMX_INIT_WITH_UNIQUEID, &attr);
    took = now() - t0;
    log = capture_end();

    if (rc == 0) FAIL("shmemx_init_attr succeeded with GSHMEM_MAX_TEAMS=100");
    if (took > 5) FAIL("shmemx_init_attr took %.1f s to refuse: the environment was checked after a bootstrap wait", took);
    if (!strstr(log, "GSHMEM_MAX_TEAMS=\"100\" is out of range") || !strstr(log, "GSHMEM_BARRIER_RADIX=\"1\" is out of range"))
        FAIL("the bad values are not both named");
    if (!strstr(log, "2 environment variables with a bad value: GSHMEM_MAX_TEAMS, GSHMEM_BARRIER_RADIX"))
        FAIL("no summary naming both");
    if (strstr(log, "ERROR bootstrap") || strstr(log, "ERROR cuda"))
        FAIL("the bootstrap or CUDA started before the environment was refused");
    printf("shmem_init refused GSHMEM_MAX_TEAMS and GSHMEM_BARRIER_RADIX in %.3f s, before any bootstrap wait or GPU work\n", took);
    return 0;
}
