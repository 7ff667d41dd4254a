/* Without a GPU (or a driver), shmem initialization must fail with a clear error, not crash, and
 * release what it made before it failed: a failed init twice in a row leaves no fd or thread behind,
 * also when the bootstrap had connected two processes (unique id, rank 0 here, rank 1 in a child). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gshmem.h"

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return strcmp(dir, "/proc/self/fd") == 0 ? n - 1 : n; /* minus the DIR's own fd */
}

/* shmemx_init_attr must fail; then the fds and threads are those of before. */
static int fails_and_releases(const char *what, unsigned flags, shmemx_init_attr_t *attr, int fds, int tasks)
{
    int rc = shmemx_init_attr(flags, attr), fds_after = count_entries("/proc/self/fd"),
        tasks_after = count_entries("/proc/self/task");
    if (rc == 0) {
        fprintf(stderr, "%s: shmemx_init_attr succeeded without a GPU\n", what);
        return 1;
    }
    if (fds_after != fds || tasks_after != tasks) {
        fprintf(stderr, "%s: a failed shmemx_init_attr left %d fds (before: %d) and %d threads (before: %d)\n", what,
                fds_after, fds, tasks_after, tasks);
        return 1;
    }
    return 0;
}

/* Rank 0 here, rank 1 in a child: the bootstrap connects both before the GPU part fails. */
static int uid_pair(void)
{
    int fds = count_entries("/proc/self/fd"), tasks = count_entries("/proc/self/task"), status = 0, bad;
    shmemx_uniqueid_t uid;
    shmemx_init_attr_t attr;
    pid_t child;

    if (shmemx_get_uniqueid(&uid) != 0) {
        fprintf(stderr, "shmemx_get_uniqueid failed\n");
        return 1;
    }
    child = fork();
    if (child == 0) {
        /* The child inherited the listener: it counts in its baseline. */
        int cfds = count_entries("/proc/self/fd"), ctasks = count_entries("/proc/self/task");
        shmemx_set_attr_uniqueid_args(1, 2, &uid, &attr);
        _exit(fails_and_releases("uid rank 1 of 2", SHMEMX_INIT_WITH_UNIQUEID, &attr, cfds, ctasks));
    }
    if (child < 0) {
        perror("fork");
        return 1;
    }
    shmemx_set_attr_uniqueid_args(0, 2, &uid, &attr);
    /* The listener is used up by the job: fds return to those of before shmemx_get_uniqueid. */
    bad = fails_and_releases("uid rank 0 of 2", SHMEMX_INIT_WITH_UNIQUEID, &attr, fds, tasks);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "the child (uid rank 1 of 2) failed (status 0x%x)\n", status);
        bad = 1;
    }
    return bad;
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        fprintf(stderr, "a GPU is present: this test is for hosts without one; skipped\n");
        return 77;
    }
    int fds = count_entries("/proc/self/fd"), tasks = count_entries("/proc/self/task");
    if (fds < 3 || tasks < 1) {
        fprintf(stderr, "cannot count /proc/self/fd (%d) or /proc/self/task (%d)\n", fds, tasks);
        return 1;
    }
    /* The single-PE bootstrap opens, then the driver check fails: twice, both clean. */
    if (fails_and_releases("first init", SHMEMX_INIT_DEFAULT, NULL, fds, tasks) ||
        fails_and_releases("second init", SHMEMX_INIT_DEFAULT, NULL, fds, tasks))
        return 1;
    if (uid_pair()) return 1;
    int rc = shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL);
    if (rc == 0) {
        fprintf(stderr, "shmemx_init_attr succeeded without a GPU\n");
        return 1;
    }
    if (shmem_malloc(64) != NULL || shmem_my_pe() != -1) {
        fprintf(stderr, "the library acts initialized after a failed init\n");
        return 1;
    }
    int level = -7;
    if (shmem_init_thread(9, &level) != -1 || shmem_init_thread(SHMEM_THREAD_MULTIPLE, &level) != -1 || level != -7) {
        fprintf(stderr, "shmem_init_thread took a bad level, or succeeded without a GPU\n");
        return 1;
    }
    shmem_query_thread(&level);
    if (level != -7 || shmem_pe_accessible(0) != 0 || shmem_addr_accessible(&level, 0) != 0) {
        fprintf(stderr, "thread or accessibility queries answer after a failed init\n");
        return 1;
    }
    /* Teams, barriers and collectives after the failed init: errors, no crash. */
    shmem_team_t team = 7;
    int buf[4] = {0};
    if (shmem_team_n_pes(SHMEM_TEAM_WORLD) != -1 || shmem_team_my_pe(SHMEM_TEAM_WORLD) != -1 ||
        shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_WORLD) != -1) {
        fprintf(stderr, "team queries answer after a failed init\n");
        return 1;
    }
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &team) != -1 || team != SHMEM_TEAM_INVALID) {
        fprintf(stderr, "shmem_team_split_strided did not fail with SHMEM_TEAM_INVALID after a failed init\n");
        return 1;
    }
    if (shmem_int_sum_reduce(SHMEM_TEAM_WORLD, buf, buf + 2, 2) != -1 ||
        shmemx_float_max_reduce_on_stream(SHMEM_TEAM_WORLD, (float *)buf, (const float *)buf + 2, 2, NULL) != -1 ||
        shmem_int_broadcast(SHMEM_TEAM_WORLD, buf, buf + 2, 2, 0) != -1) {
        fprintf(stderr, "a collective did not fail after a failed init\n");
        return 1;
    }
    /* the collective engine refuses too, and starts no thread */
    shmemx_engine_t *engine = (shmemx_engine_t *)&team;
    if (shmemx_engine_create(NULL, &engine) != SHMEMX_ENGINE_ESTATE || engine != (shmemx_engine_t *)&team) {
        fprintf(stderr, "shmemx_engine_create did not refuse after a failed init\n");
        return 1;
    }
    shmem_barrier(SHMEM_TEAM_WORLD);
    shmem_sync_all();
    if (count_entries("/proc/self/fd") != fds || count_entries("/proc/self/task") != tasks) {
        fprintf(stderr, "fds or threads leaked by the failed inits\n");
        return 1;
    }
    printf("shmemx_init_attr failed cleanly without a GPU (%d), each time releasing what it opened; teams, collectives and the engine refuse to run\n", rc);
    return 0;
}
