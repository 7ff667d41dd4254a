/* gshmemrun: starts N PEs of one program on this host with a unique-id bootstrap.
 *
 * The launcher creates the unique id itself, so it owns rank 0's listening socket before any PE
 * runs and joiners never race rank 0's start; rank 0 inherits that socket (and only rank 0).
 * The PEs share one new process group, so a signal, a failure or the timeout reaches all of
 * them, their own children included. Needs no CUDA.
 *
 * A PE that exits with status 0 is judged by what it, and the others, last told the launcher
 * through a shared state file (shmem_init, shmem_finalize, shmem_global_exit): early_exit_check
 * has the rule. Nothing else tells a PE that finished from one that left its peers waiting.
 *
 * Nothing outlives the job: every PE has PR_SET_PDEATHSIG, a small guardian process (in a group
 * of its own) stops the PEs' group when the launcher itself is killed, and at the end of every
 * job, success included, whatever the PEs left running is stopped: the members of their group,
 * and what left it (setsid, a double fork), which the launcher, a child subreaper, inherits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/bootstrap.h"
#include "base/clock.h"
#include "base/log.h"

#define MAX_PES 4096
#define KILL_GRACE_S 5.0     /* SIGTERM to SIGKILL for the PEs */
#define LEFTOVER_GRACE_S 1.0 /* SIGTERM to SIGKILL for what the PEs left running behind them */
#define TOOL_TIMEOUT_S 30.0  /* nvidia-smi and nvidia-cuda-mps-control */
#define EARLY_EXIT_SETTLE_S 1.0 /* how long a broken early exit must last before the job is stopped */
#define EARLY_EXIT_POLL_S 0.05  /* how often the PEs' states are read while one could be */
#define GSHMEMI_STR_(x) #x
#define GSHMEMI_STR(x) GSHMEMI_STR_(x)

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gshmemrun -n N [--gpus LIST] [--mps] [--timeout SECONDS] prog [args...]\n"
            "Starts N processing elements (PEs) of prog on this host.\n"
            "  -n N               number of PEs (at least 1)\n"
            "  --gpus LIST        comma-separated CUDA device ordinals; PE i gets GSHMEM_DEVICE=LIST[i %% len]\n"
            "                     (CUDA_VISIBLE_DEVICES is left alone: PEs must see every GPU for P2P)\n"
            "  --mps              run the PEs under a private MPS daemon started for this job and stopped\n"
            "                     after it (for PEs that share a GPU; the compute mode is not changed);\n"
            "                     each PE gets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100/(PEs per GPU) unless set\n"
            "  --timeout SECONDS  stop every PE and exit 124 after this long\n"
            "  -h, --help         this text\n"
            "Each PE gets GSHMEM_BOOTSTRAP=uid, GSHMEM_BOOTSTRAP_UID, GSHMEM_RANK, GSHMEM_NRANKS,\n"
            "GSHMEM_LOCAL_RANK and GSHMEM_LAUNCHER_FD. SIGINT, SIGTERM and SIGHUP are forwarded to the PEs.\n"
            "When a PE fails, the others get SIGTERM (SIGKILL %g s later) and gshmemrun exits with the\n"
            "failed PE's status (128+signal when a signal killed it). Once a PE has called shmem_init, a PE\n"
            "that exits with status 0 while others still run must have reached shmem_finalize, as the\n"
            "others would wait for it: else gshmemrun names it and stops the job with status 1.\n"
            "shmem_global_exit(0) ends the job with status 0. The PEs of a program that never calls\n"
            "shmem_init may end when they like. Only PE 0 keeps stdin; the others read /dev/null. Run\n"
            "from a terminal, the PEs get its foreground for the job (PE 0 may read it; Ctrl-C and Ctrl-Z\n"
            "reach them). PEs die with gshmemrun, and what they leave running, in their process group or\n"
            "not (setsid, a double fork), is stopped when the job ends.\n"
            "Warns when PEs share a GPU and no MPS daemon runs.\n",
            KILL_GRACE_S);
}

static int fail_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "gshmemrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'gshmemrun --help'.\n");
    return 2;
}

static int parse_int(const char *text, long min, long max, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max) return -1;
    *out = (int)v;
    return 0;
}

/* "0,1,3" -> {0,1,3}; no empty items, no signs. */
static int parse_gpus(const char *text, int **list, int *n)
{
    int cap = 1, *v;
    const char *p = text;

    for (const char *c = text; *c; c++) cap += *c == ',';
    v = malloc((size_t)cap * sizeof(int));
    if (!v) return -1;
    *n = 0;
    for (;;) {
        char *end;
        long d;
        if (*p < '0' || *p > '9') break;
        errno = 0;
        d = strtol(p, &end, 10);
        if (errno || d > INT_MAX) break;
        v[(*n)++] = (int)d;
        if (*end == '\0') {
            *list = v;
            return 0;
        }
        if (*end != ',') break;
        p = end + 1;
    }
    free(v);
    return -1;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* ---- helper programs (nvidia-smi, nvidia-cuda-mps-control), each bounded in time ---- */

static int in_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[PATH_MAX];

    if (!path || !*path) path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        if (len && len + strlen(prog) + 2 <= sizeof(buf)) {
            snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, prog);
            if (access(buf, X_OK) == 0) return 1;
        }
        path += len + (path[len] == ':');
    }
    return 0;
}

/* Runs argv with input on its stdin (or /dev/null) and collects its stdout into out (when out).
 * Its stdout, where not collected, and its stderr go to log_fd (or /dev/null when log_fd < 0).
 * Returns its wait status, or -1 when it could not run or ran past TOOL_TIMEOUT_S (killed). */
static int run_tool(char *const argv[], const char *input, char *out, size_t cap, int log_fd)
{
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, status = -1;
    size_t got = 0;
    double deadline = gshmemi_now_s() + TOOL_TIMEOUT_S;
    pid_t pid, r;

    if (out) out[0] = '\0';
    if ((input && pipe2(in_pipe, O_CLOEXEC) != 0) || (out && pipe2(out_pipe, O_CLOEXEC) != 0)) {
        fprintf(stderr, "gshmemrun: cannot run %s: pipe: %s\n", argv[0], strerror(errno));
        goto fail;
    }
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gshmemrun: cannot run %s: fork: %s\n", argv[0], strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(input ? in_pipe[0] : null, STDIN_FILENO);
        dup2(out ? out_pipe[1] : log_fd >= 0 ? log_fd : null, STDOUT_FILENO);
        dup2(log_fd >= 0 ? log_fd : null, STDERR_FILENO);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (input) {
        close(in_pipe[0]);
        in_pipe[0] = -1;
        if (write(in_pipe[1], input, strlen(input)) < 0) {} /* a tool that exits early says why itself */
        close(in_pipe[1]);
        in_pipe[1] = -1;
    }
    if (out) {
        close(out_pipe[1]);
        out_pipe[1] = -1;
        for (;;) {
            struct pollfd p = {out_pipe[0], POLLIN, 0};
            int left_ms = (int)((deadline - gshmemi_now_s()) * 1000);
            ssize_t k;
            if (left_ms <= 0 || poll(&p, 1, left_ms) <= 0) break;
            k = read(out_pipe[0], out + got, cap - 1 - got);
            if (k <= 0) break;
            got += (size_t)k;
            out[got] = '\0';
            if (got + 1 >= cap) break;
        }
    }
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && gshmemi_now_s() < deadline) sleep_s(0.01);
    if (r == 0) {
        fprintf(stderr, "gshmemrun: %s still running after %g s; killed it\n", argv[0], TOOL_TIMEOUT_S);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        status = -1;
    } else if (r < 0) {
        status = -1;
    }
fail:
    for (int i = 0; i < 2; i++) {
        if (in_pipe[i] >= 0) close(in_pipe[i]);
        if (out_pipe[i] >= 0) close(out_pipe[i]);
    }
    return status;
}

/* GPUs a PE can use by default: nvidia-smi -L, else /proc/driver/nvidia/gpus, at most as many as
 * CUDA_VISIBLE_DEVICES names. 0: none; -1: cannot tell (no driver tools on this host). */
static int count_gpus(void)
{
    char out[8192], *const argv[] = {"nvidia-smi", "-L", NULL};
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    int n = -1, status;

    status = in_path("nvidia-smi") ? run_tool(argv, NULL, out, sizeof(out), -1) : -1;
    if (status != -1 && !(WIFEXITED(status) && WEXITSTATUS(status) == 127)) {
        const char *line = out;
        n = 0;
        while (line) {
            n += !strncmp(line, "GPU ", 4);
            line = strchr(line, '\n');
            if (line) line++;
        }
    } else {
        DIR *d = opendir("/proc/driver/nvidia/gpus");
        struct dirent *e;
        if (d) {
            n = 0;
            while ((e = readdir(d))) n += e->d_name[0] != '.';
            closedir(d);
        }
    }
    if (n > 0 && visible) {
        int listed = 0;
        for (const char *p = visible; *p;) {
            size_t len = strcspn(p, ",");
            listed += len > 0;
            p += len + (p[len] == ',');
        }
        if (listed < n) n = listed;
    }
    return n;
}

/* ---- a private MPS daemon for the job ---- */

typedef struct {
    int on;
    char pipe_dir[256], log_dir[256];
} mps_t;

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];

    if (!d) return;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

static void print_file(const char *path)
{
    char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(buf, sizeof(buf), f)) fprintf(stderr, "  %s", buf);
    fclose(f);
}

static int mps_log_fd(const mps_t *m)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/gshmemrun.log", m->log_dir);
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

/* Quits the daemon (same CUDA_MPS_* environment as at its start) and removes its folders; the
 * logs stay where the job failed, and their folder is named. */
static void mps_stop(mps_t *m, int keep_logs)
{
    char *const argv[] = {"nvidia-cuda-mps-control", NULL}, path[PATH_MAX];
    int fd, status;

    if (!m->on) return;
    m->on = 0;
    fd = mps_log_fd(m);
    status = run_tool(argv, "quit\n", NULL, 0, fd);
    if (fd >= 0) close(fd);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "gshmemrun: --mps: 'echo quit | nvidia-cuda-mps-control' failed; the daemon of %s may still run\n",
                m->pipe_dir);
        snprintf(path, sizeof(path), "%s/gshmemrun.log", m->log_dir);
        print_file(path);
        keep_logs = 1;
    }
    remove_dir(m->pipe_dir);
    if (keep_logs)
        fprintf(stderr, "gshmemrun: --mps: the MPS logs are in %s\n", m->log_dir);
    else
        remove_dir(m->log_dir);
}

static int make_temp_dir(char *buf, size_t cap, const char *what)
{
    const char *tmp = getenv("TMPDIR");
    /* MPS puts sockets in the pipe folder: keep the path well inside a socket address. */
    if (!tmp || !*tmp || strlen(tmp) > 64) tmp = "/tmp";
    snprintf(buf, cap, "%s/gshmem-mps-%s-XXXXXX", tmp, what);
    if (!mkdtemp(buf)) {
        fprintf(stderr, "gshmemrun: --mps: cannot create a folder for MPS (%s): %s\n", buf, strerror(errno));
        return -1;
    }
    return 0;
}

/* Starts a private daemon; the PEs inherit its CUDA_MPS_* environment. */
static int mps_start(mps_t *m, int host_gpus, int per_gpu)
{
    char *const argv[] = {"nvidia-cuda-mps-control", "-d", NULL}, path[PATH_MAX], num[16];
    int fd, status;
    double deadline;
    struct stat st;

    if (host_gpus <= 0) {
        fprintf(stderr, "gshmemrun: --mps: this host has no NVIDIA GPU (%s); MPS needs one\n",
                host_gpus == 0 ? "nvidia-smi -L lists none" : "no nvidia-smi and no /proc/driver/nvidia/gpus");
        return -1;
    }
    if (!in_path("nvidia-cuda-mps-control")) {
        fprintf(stderr, "gshmemrun: --mps: nvidia-cuda-mps-control is not in PATH (it comes with the NVIDIA driver); "
                        "cannot start an MPS daemon\n");
        return -1;
    }
    if (make_temp_dir(m->pipe_dir, sizeof(m->pipe_dir), "pipe") != 0) return -1;
    if (make_temp_dir(m->log_dir, sizeof(m->log_dir), "log") != 0) {
        rmdir(m->pipe_dir);
        return -1;
    }
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1);
    fd = mps_log_fd(m);
    status = run_tool(argv, NULL, NULL, 0, fd);
    if (fd >= 0) close(fd);
    snprintf(path, sizeof(path), "%s/gshmemrun.log", m->log_dir);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "gshmemrun: --mps: 'nvidia-cuda-mps-control -d' failed (%s %d); its output:\n",
                status != -1 && WIFEXITED(status) ? "status" : "signal or timeout",
                status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : status == -1 ? -1 : WTERMSIG(status));
        print_file(path);
        fprintf(stderr, "gshmemrun: --mps: the MPS logs are in %s\n", m->log_dir);
        remove_dir(m->pipe_dir);
        return -1;
    }
    m->on = 1;
    /* PEs that start before the control pipe exists would run without MPS. */
    snprintf(path, sizeof(path), "%s/control", m->pipe_dir);
    deadline = gshmemi_now_s() + 10;
    while (stat(path, &st) != 0 && gshmemi_now_s() < deadline) sleep_s(0.02);
    if (stat(path, &st) != 0) {
        fprintf(stderr, "gshmemrun: --mps: the MPS daemon made no control pipe (%s) in 10 s\n", path);
        mps_stop(m, 1);
        return -1;
    }
    if (!getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) {
        snprintf(num, sizeof(num), "%d", 100 / (per_gpu > 0 ? per_gpu : 1));
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", num, 1);
    }
    fprintf(stderr, "gshmemrun: --mps: PEs run under a private MPS daemon (CUDA_MPS_PIPE_DIRECTORY=%s, %s%% of the SMs each)\n",
            m->pipe_dir, getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
    return 0;
}

static int mps_running(void)
{
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char path[PATH_MAX];
    struct stat st;

    snprintf(path, sizeof(path), "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
    return stat(path, &st) == 0;
}

/* ---- the job ---- */

typedef struct {
    int n;
    pid_t *pid;    /* 0 once reaped */
    pid_t pgid;
    int alive;
    int tty;       /* the terminal whose foreground the PEs hold, or -1 */
    pid_t guardian;
    int guardian_fd;
    int state_fd;                /* the PEs' sealed state file (GSHMEM_LAUNCHER_FD), or -1 */
    const unsigned char *state;  /* its bytes, GSHMEMI_PE_* by rank (mapped), or NULL */
    int *ended_ok;               /* by rank: -1, or the state of a PE that exited with status 0 */
    int n_ended_ok;
    double early_since;          /* when the broken early exit now seen was first seen, or 0 */
} job_t;

static void signal_all(job_t *job, int sig)
{
    if (job->pgid > 0) kill(-job->pgid, sig);
    /* A PE that could not join the group still gets it. */
    for (int i = 0; i < job->n; i++)
        if (job->pid[i] > 0) kill(job->pid[i], sig);
}

/* SIGTERM and friends do nothing to a stopped PE until it runs again. */
static void stop_all(job_t *job, int sig)
{
    signal_all(job, sig);
    signal_all(job, SIGCONT);
}

/* ---- PEs that exit with status 0 while others run ---- */

/* The state file the PEs write (runtime/base/bootstrap.c, gshmemi_launcher_note): a memfd of one byte
 * per rank, sealed at that size so that a PE can tell it from any other descriptor. -1, with a
 * warning, when it cannot be made: then no early exit is judged. */
static int state_file_open(job_t *job)
{
    int fd = memfd_create("gshmemrun-pe-state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    void *map;

    if (fd < 0 || ftruncate(fd, job->n) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
        (map = mmap(NULL, (size_t)job->n, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        fprintf(stderr, "gshmemrun: warning: cannot make the PEs' state file (%s); a PE that exits without shmem_finalize "
                        "while others run is not named\n", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    job->state_fd = fd;
    job->state = map;
    return 0;
}

static int pe_state(const job_t *job, int rank)
{
    int s = job->state ? job->state[rank] : GSHMEMI_PE_OUTSIDE;
    return s == GSHMEMI_PE_OUTSIDE || s == GSHMEMI_PE_FINALIZED || s == GSHMEMI_PE_GLOBAL_EXIT ? s : GSHMEMI_PE_IN_JOB;
}

static void add_rank(char *list, size_t cap, int *count, int rank)
{
    size_t len = strlen(list);
    if (len + 16 < cap) snprintf(list + len, cap - len, "%s%d", *count ? ", " : "", rank);
    else if (len + 4 < cap && strcmp(list + len - 3, "...")) snprintf(list + len, cap - len, "...");
    (*count)++;
}

/* The rule for a PE that exits with status 0 while others still run. Once a PE enters shmem_init
 * the others wait for it in every collective, shmem_finalize included, so a gshmem job ends
 * together: such an exit is fine only from shmem_finalize on (every PE has then entered it, as
 * its barrier comes after the note). It breaks the job when
 *   - the PE never reached shmem_finalize (it never called shmem_init, or left one without
 *     finalizing) and it, or a PE still running, has called shmem_init: the others cannot form the
 *     job, or finish it, without it;
 *   - it finalized, and a PE still running is between shmem_init and shmem_finalize: that PE
 *     called shmem_init again, or never reached the final barrier (which then failed on the
 *     other side); either way it waits for a PE that is gone.
 * Programs that never call shmem_init (scripts, tools) end when they like. A broken exit is
 * reported, naming the ranks, once it has lasted EARLY_EXIT_SETTLE_S (PEs that all fail shmem_init
 * alike and exit 0 are not caught mid-way), and the job stops with status 1. A PE in
 * shmem_global_exit(0) ends the job with status 0. Returns the exit status to stop the job with,
 * or -1 to go on. */
static int early_exit_check(job_t *job)
{
    int live_joined = -1, live_in_init = -1, n_gone = 0, n_after = 0, n_global = 0, global = -1, gone_init = 0;
    char gone[160] = "", after[160] = "";

    if (job->n_ended_ok == 0 || job->alive == 0) return -1;
    for (int i = 0; i < job->n; i++) {
        int st;
        if (job->pid[i] <= 0) continue;
        st = pe_state(job, i);
        if (st != GSHMEMI_PE_OUTSIDE && live_joined < 0) live_joined = i;
        if (st == GSHMEMI_PE_IN_JOB && live_in_init < 0) live_in_init = i;
    }
    for (int i = 0; i < job->n; i++) {
        int st = job->ended_ok[i];
        if (st < 0) continue;
        if (st == GSHMEMI_PE_GLOBAL_EXIT) {
            if (global < 0) global = i;
            n_global++;
        } else if (st != GSHMEMI_PE_FINALIZED && (st == GSHMEMI_PE_IN_JOB || live_joined >= 0)) {
            add_rank(gone, sizeof(gone), &n_gone, i);
            gone_init |= st == GSHMEMI_PE_IN_JOB;
        } else if (st == GSHMEMI_PE_FINALIZED && live_in_init >= 0) {
            add_rank(after, sizeof(after), &n_after, i);
        }
    }
    if (n_global) {
        fprintf(stderr, "gshmemrun: PE %d called shmem_global_exit(0); stopping the other %d PE%s\n", global, job->alive,
                job->alive > 1 ? "s" : "");
        return 0;
    }
    if (!n_gone && !n_after) {
        job->early_since = 0;
        return -1;
    }
    if (job->early_since == 0) job->early_since = gshmemi_now_s();
    if (gshmemi_now_s() - job->early_since < EARLY_EXIT_SETTLE_S) return -1;
    if (n_gone && live_joined >= 0)
        fprintf(stderr, "gshmemrun: PE%s %s exited with status 0 without shmem_finalize (%s) while PE %d takes part in the "
                        "job, which cannot form or end without %s\n",
                n_gone > 1 ? "s" : "", gone, gone_init ? "after shmem_init" : "it never called shmem_init", live_joined,
                n_gone > 1 ? "them" : "it");
    else if (n_gone)
        fprintf(stderr, "gshmemrun: PE%s %s exited with status 0 after shmem_init, without shmem_finalize, while %d PE%s "
                        "still run%s\n",
                n_gone > 1 ? "s" : "", gone, job->alive, job->alive > 1 ? "s" : "", job->alive > 1 ? "" : "s");
    if (n_after)
        fprintf(stderr, "gshmemrun: PE %d is between shmem_init and shmem_finalize, but PE%s %s finalized and exited: it "
                        "cannot finish without %s\n",
                live_in_init, n_after > 1 ? "s" : "", after, n_after > 1 ? "them" : "it");
    fprintf(stderr, "gshmemrun: stopping the other %d PE%s\n", job->alive, job->alive > 1 ? "s" : "");
    return 1;
}

/* The guardian outlives a killed launcher just long enough to stop what the launcher started: it
 * learns the PEs' group through a pipe and acts when the pipe ends without the 'done' byte. It
 * sits in a group of its own, so a signal to the launcher's job or the PEs' group misses it. */
static pid_t guardian_start(int *fd_out, const mps_t *mps)
{
    int fds[2];
    pid_t launcher = getpid(), pid;

    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        mps_t m = *mps;
        pid_t pgid = 0;
        unsigned char buf[sizeof(pid_t) + 1];
        size_t got = 0;
        int null = open("/dev/null", O_RDWR), done = 0;
        sigset_t none;

        close(fds[1]);
        setpgid(0, 0);
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD && s != SIGCONT && s != SIGSEGV && s != SIGBUS &&
                s != SIGFPE && s != SIGILL && s != SIGABRT && s != SIGTRAP)
                signal(s, SIG_IGN);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            close(null);
        }
        for (;;) {
            ssize_t k = read(fds[0], buf + got, sizeof(buf) - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
            if (got >= sizeof(pid_t)) memcpy(&pgid, buf, sizeof(pid_t));
            if (got == sizeof(buf)) {
                done = buf[sizeof(pid_t)] == 'D';
                break;
            }
        }
        if (done) _exit(0);
        if (pgid > 0 && kill(-pgid, SIGTERM) == 0) {
            double deadline = gshmemi_now_s() + KILL_GRACE_S;
            fprintf(stderr, "gshmemrun: the launcher (pid %d) died; stopping its PEs (process group %d)\n", (int)launcher,
                    (int)pgid);
            kill(-pgid, SIGCONT);
            while (kill(-pgid, 0) == 0 && gshmemi_now_s() < deadline) sleep_s(0.02);
            kill(-pgid, SIGKILL);
        }
        mps_stop(&m, 1);
        _exit(0);
    }
    close(fds[0]);
    *fd_out = fds[1];
    return pid;
}

/* Tells the guardian the job ended on purpose and waits (bounded) for it to go. */
static void guardian_stop(job_t *job)
{
    unsigned char buf[sizeof(pid_t) + 1];
    double deadline = gshmemi_now_s() + 2;

    if (job->guardian_fd >= 0) {
        if (job->pgid <= 0) { /* it never learnt the group: tell it "none" then "done" */
            pid_t none = 0;
            memcpy(buf, &none, sizeof(none));
            buf[sizeof(pid_t)] = 'D';
            if (write(job->guardian_fd, buf, sizeof(buf)) < 0) {}
        } else {
            buf[0] = 'D';
            if (write(job->guardian_fd, buf, 1) < 0) {}
        }
        close(job->guardian_fd);
        job->guardian_fd = -1;
    }
    while (job->guardian > 0 && waitpid(job->guardian, NULL, WNOHANG) == 0 && gshmemi_now_s() < deadline) sleep_s(0.005);
    if (job->guardian > 0 && gshmemi_now_s() >= deadline) {
        kill(job->guardian, SIGKILL);
        waitpid(job->guardian, NULL, 0);
    }
    job->guardian = 0;
}

/* Processes the job left behind: members of the PEs' group (in our session: a group id that
 * outlived its group may name a stranger's new one), and our children other than the guardian,
 * which as child subreaper we inherit from every PE and PE child that ends, whatever group or
 * session they moved to (setsid, double fork). Zombies are not counted: the caller reaps those.
 * At most cap pids; returns how many there are (more than cap when they did not fit), or -1 when
 * /proc cannot be read. */
static int find_leftovers(const job_t *job, pid_t *out, int cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t self = getpid(), sid = getsid(0);
    int n = 0;

    if (!d) return -1;
    while ((e = readdir(d))) {
        char path[64], buf[512], *rest;
        long pid, ppid, pgrp, session;
        char state;
        ssize_t k;
        int fd;

        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0 || pid == self || pid == job->guardian) continue;
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k <= 0) continue;
        buf[k] = '\0';
        /* "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses */
        rest = strrchr(buf, ')');
        if (!rest || sscanf(rest + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) != 4 || state == 'Z') continue;
        if (ppid != self && !(job->pgid > 0 && pgrp == job->pgid && session == sid)) continue;
        if (n < cap) out[n] = (pid_t)pid;
        n++;
    }
    closedir(d);
    return n;
}

/* Adds pid to a growing set; 1 when it was not there (also when the set cannot grow). */
static int note_pid(pid_t **set, int *n, int *cap, pid_t pid)
{
    for (int i = 0; i < *n; i++)
        if ((*set)[i] == pid) return 0;
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 64;
        pid_t *more = realloc(*set, (size_t)c * sizeof(pid_t));
        if (!more) return 1;
        *set = more;
        *cap = c;
    }
    (*set)[(*n)++] = pid;
    return 1;
}

/* Stops what the PEs left running once every PE has ended: SIGTERM (and SIGCONT) to each leftover
 * as it is found, then SIGKILL to all after LEFTOVER_GRACE_S, until none is left. Ending one may
 * hand its children to us, so the search runs again until it comes back empty. Returns how many
 * processes were left (1 when only the group could be seen, without /proc); survivors of SIGKILL
 * are named. */
static int reap_leftovers(job_t *job)
{
    enum { CAP = 1024 };
    double deadline = gshmemi_now_s() + LEFTOVER_GRACE_S;
    pid_t found[CAP], *told = NULL, pid;
    int n_told = 0, cap_told = 0, killing = 0, group = 0, n;

    for (;;) {
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
            if (pid == job->guardian) job->guardian = 0;
        n = find_leftovers(job, found, CAP);
        if (n < 0) n = 0; /* no /proc: only the group can be reached */
        if (n > CAP) n = CAP;
        /* the group as a whole too, in case /proc missed one (once: it is found from now on) */
        if (!group && job->pgid > 0 && kill(-job->pgid, SIGTERM) == 0) {
            kill(-job->pgid, SIGCONT);
            group = 1;
        }
        if (n == 0 && (job->pgid <= 0 || kill(-job->pgid, 0) != 0)) break;
        for (int i = 0; i < n; i++) {
            if (killing) {
                kill(found[i], SIGKILL);
            } else if (note_pid(&told, &n_told, &cap_told, found[i])) {
                kill(found[i], SIGTERM);
                kill(found[i], SIGCONT);
            }
        }
        if (gshmemi_now_s() >= deadline) {
            if (killing) {
                fprintf(stderr, "gshmemrun: processes the PEs left survive SIGKILL (stuck in the kernel?):");
                if (n == 0) fprintf(stderr, " members of process group %d", (int)job->pgid);
                for (int i = 0; i < n && i < 16; i++) fprintf(stderr, " %d", (int)found[i]);
                fprintf(stderr, "%s; giving up on them\n", n > 16 ? " ..." : "");
                break;
            }
            killing = 1;
            if (job->pgid > 0) kill(-job->pgid, SIGKILL);
            for (int i = 0; i < n; i++) kill(found[i], SIGKILL);
            deadline = gshmemi_now_s() + KILL_GRACE_S;
        }
        sleep_s(0.01);
    }
    free(told);
    return n_told ? n_told : group;
}

/* Runs in the child between fork and exec. */
static void start_pe(int rank, int n, const job_t *job, pid_t launcher, const char *uid_text, int listen_fd,
                     const int *gpus, int ngpus, const sigset_t *mask, char **argv)
{
    char num[32];

    /* Die with the launcher; if it died before prctl took hold, we were reparented already. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        fprintf(stderr, "gshmemrun: PE %d: PR_SET_PDEATHSIG: %s\n", rank, strerror(errno));
        _exit(127);
    }
    if (getppid() != launcher) _exit(127);
    setpgid(0, job->pgid);
    /* Here as in the parent, so the terminal is ours before exec whichever runs first (SIGTTOU
     * is still blocked, as in the launcher). */
    if (rank == 0 && job->tty >= 0) tcsetpgrp(job->tty, getpgrp());
    sigprocmask(SIG_SETMASK, mask, NULL);
    setenv("GSHMEM_BOOTSTRAP", "uid", 1);
    setenv("GSHMEM_BOOTSTRAP_UID", uid_text, 1);
    snprintf(num, sizeof(num), "%d", rank);
    setenv("GSHMEM_RANK", num, 1);
    setenv("GSHMEM_LOCAL_RANK", num, 1);
    snprintf(num, sizeof(num), "%d", n);
    setenv("GSHMEM_NRANKS", num, 1);
    if (ngpus) {
        snprintf(num, sizeof(num), "%d", gpus[rank % ngpus]);
        setenv("GSHMEM_DEVICE", num, 1);
    }
    /* Every PE shares the state file, close-on-exec everywhere but here; without it, no value
     * inherited from an enclosing job may stand in. */
    if (job->state_fd >= 0 && fcntl(job->state_fd, F_SETFD, 0) == 0) {
        snprintf(num, sizeof(num), "%d", job->state_fd);
        setenv("GSHMEM_LAUNCHER_FD", num, 1);
    } else {
        unsetenv("GSHMEM_LAUNCHER_FD");
    }
    if (rank == 0) {
        /* The listener is close-on-exec everywhere; rank 0 alone keeps it across exec. */
        if (fcntl(listen_fd, F_SETFD, 0) != 0) {
            fprintf(stderr, "gshmemrun: PE 0: cannot pass the bootstrap socket: %s\n", strerror(errno));
            _exit(127);
        }
        snprintf(num, sizeof(num), "%d", listen_fd);
        setenv("GSHMEM_BOOTSTRAP_LISTEN_FD", num, 1);
    } else {
        int devnull = open("/dev/null", O_RDONLY);
        close(listen_fd);
        unsetenv("GSHMEM_BOOTSTRAP_LISTEN_FD");
        if (devnull >= 0 && devnull != STDIN_FILENO) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
    }
    execvp(argv[0], argv);
    fprintf(stderr, "gshmemrun: PE %d: cannot run '%s': %s\n", rank, argv[0], strerror(errno));
    _exit(127);
}

/* The terminal to hand to the PEs: one of our standard streams whose foreground we hold.
 *
 * Why hand over the foreground rather than keep it and forward stdin to PE 0: PE 0 then reads a
 * real terminal (isatty, line editing, raw mode all work), nothing reads input that PE 0 never
 * asks for (a forwarder would swallow what a script meant for the next command), and Ctrl-C and
 * Ctrl-Z reach the PEs as the kernel means them to. We only take it when we are in the
 * foreground, so a job started with '&' never steals the terminal from the shell. */
static int find_tty(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (isatty(fd) && tcgetpgrp(fd) == getpgrp()) return fd;
    return -1;
}

/* After a job-control stop (SIGCONT for us): the PEs get the terminal back if we hold it again
 * (fg), and run on either way (bg). */
static void resume_job(job_t *job)
{
    if (job->tty >= 0 && job->pgid > 0 && tcgetpgrp(job->tty) == getpgrp()) tcsetpgrp(job->tty, job->pgid);
    signal_all(job, SIGCONT);
}

static const char *stop_hint(int sig)
{
    if (sig == SIGTTIN) return ": it read the terminal from the background";
    if (sig == SIGTTOU) return ": it wrote to or set the terminal from the background";
    if (sig == SIGTSTP) return " (Ctrl-Z)";
    return "";
}

/* Stops we saw in one pass, one line per signal: "PEs 0, 1 stopped by signal 20 (...)". */
typedef struct {
    int sig, count;
    char ranks[160];
} stops_t;

static void stops_flush(stops_t *s)
{
    if (!s->count) return;
    fprintf(stderr, "gshmemrun: PE%s %s stopped by signal %d (%s)%s\n", s->count > 1 ? "s" : "", s->ranks, s->sig,
            strsignal(s->sig), stop_hint(s->sig));
    s->count = 0;
    s->ranks[0] = '\0';
}

static void stops_add(stops_t *s, int rank, int sig)
{
    size_t len;
    if (s->count && s->sig != sig) stops_flush(s);
    len = strlen(s->ranks);
    if (len + 16 < sizeof(s->ranks))
        snprintf(s->ranks + len, sizeof(s->ranks) - len, "%s%d", s->count ? ", " : "", rank);
    else if (len + 4 < sizeof(s->ranks) && strcmp(s->ranks + len - 3, "..."))
        snprintf(s->ranks + len, sizeof(s->ranks) - len, "...");
    s->sig = sig;
    s->count++;
}

/* The most PEs one GPU gets: --gpus maps PE i to LIST[i % len], else the runtime's local rank
 * modulo device count. 0 when unknown. */
static int pes_per_gpu(int n, const int *gpus, int ngpus, int host_gpus)
{
    int most = 0;

    if (ngpus) {
        for (int g = 0; g < ngpus; g++) {
            int on = 0, first = 1;
            for (int h = 0; h < g; h++) first &= gpus[h] != gpus[g];
            if (!first) continue;
            for (int i = 0; i < n; i++) on += gpus[i % ngpus] == gpus[g];
            if (on > most) most = on;
        }
        return most;
    }
    return host_gpus > 0 ? (n + host_gpus - 1) / host_gpus : 0;
}

int main(int argc, char **argv)
{
    int n = -1, ngpus = 0, *gpus = NULL, argi = 1, listen_fd, exit_code = 0, stopping = 0, killed = 0, stop_sig = SIGTERM;
    int want_mps = 0, host_gpus = -1, per_gpu = 0, notice = 0, leftovers, early;
    double run_timeout = 0, run_deadline = 0, kill_at = 0;
    char uid_text[2 * sizeof(gshmemi_uid_t) + 1];
    gshmemi_uid_t uid;
    sigset_t set, block, old;
    pid_t launcher = getpid();
    job_t job = {0};
    mps_t mps = {0};

    job.tty = -1;
    job.guardian_fd = -1;
    job.state_fd = -1;
    /* Options come first; the first other word is the program, and the rest is its. */
    while (argi < argc && argv[argi][0] == '-') {
        const char *a = argv[argi], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--")) {
            argi++;
            break;
        }
        if (!strcmp(a, "--mps")) {
            want_mps = 1;
            argi++;
            continue;
        }
        if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--gpus") || !strcmp(a, "--timeout")) {
            if (argi + 1 >= argc) return fail_usage("%s needs a value", a);
            val = argv[++argi];
        } else if (!strncmp(a, "-n", 2) && a[2] >= '0' && a[2] <= '9') {
            val = a + 2, a = "-n";
        } else if (!strncmp(a, "--gpus=", 7)) {
            val = a + 7, a = "--gpus";
        } else if (!strncmp(a, "--timeout=", 10)) {
            val = a + 10, a = "--timeout";
        } else {
            return fail_usage("unknown option '%s'", a);
        }
        if (!strcmp(a, "-n") || !strcmp(a, "-np")) {
            if (parse_int(val, 1, MAX_PES, &n) != 0)
                return fail_usage("-n wants a number of PEs from 1 to " GSHMEMI_STR(MAX_PES) ", not '%s'", val);
        } else if (!strcmp(a, "--gpus")) {
            free(gpus);
            if (parse_gpus(val, &gpus, &ngpus) != 0)
                return fail_usage("--gpus wants comma-separated device ordinals such as 0,1,2,3, not '%s'", val);
        } else {
            char *end;
            errno = 0;
            run_timeout = strtod(val, &end);
            if (errno || end == val || *end != '\0' || !(run_timeout > 0) || run_timeout > 1e9)
                return fail_usage("--timeout wants a positive number of seconds, not '%s'", val);
        }
        argi++;
    }
    if (n < 0) return fail_usage("%s", "missing -n N (the number of PEs)");
    if (argi >= argc || argv[argi][0] == '\0') return fail_usage("%s", "missing the program to run");

    /* Signals are taken synchronously with sigtimedwait; SIGCHLD must not be ignored or the
     * PEs would be reaped behind our back. SIGTTOU is blocked (not waited for): while the PEs
     * hold the terminal, our own messages and tcsetpgrp must not stop us. */
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCONT);
    block = set;
    sigaddset(&block, SIGTTOU);
    sigaddset(&block, SIGPIPE); /* a guardian or MPS tool gone early is an error code, not our death */
    sigprocmask(SIG_BLOCK, &block, &old);

    /* PEs sharing a GPU without MPS take turns on it: say so once, naming the fix. */
    if (want_mps || (n > 1 && ngpus == 0)) host_gpus = count_gpus();
    per_gpu = pes_per_gpu(n, gpus, ngpus, host_gpus);
    if (want_mps) {
        if (mps_start(&mps, host_gpus, per_gpu) != 0) {
            free(gpus);
            return 1;
        }
    } else if (per_gpu > 1 && !mps_running()) {
        const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
        fprintf(stderr,
                "gshmemrun: warning: %d PEs share GPUs (up to %d on one) and no MPS daemon runs (no %s/control): their "
                "kernels take turns on the GPU, so a PE spinning on a flag can starve its peer and latencies read in "
                "milliseconds; add --mps to run the job under a private MPS daemon\n",
                n, per_gpu, dir && *dir ? dir : "/tmp/nvidia-mps");
    }
    job.guardian = guardian_start(&job.guardian_fd, &mps);
    if (job.guardian < 0) {
        job.guardian = 0;
        fprintf(stderr, "gshmemrun: warning: cannot start the guardian process (%s); if gshmemrun is killed, what the "
                        "PEs started may outlive it\n", strerror(errno));
    }

    if (gshmemi_uid_create_flags(&uid, GSHMEMI_UID_THIS_HOST) != GSHMEMI_OK) {
        fprintf(stderr, "gshmemrun: cannot create the bootstrap unique id (see the error above)\n");
        guardian_stop(&job);
        mps_stop(&mps, 1);
        free(gpus);
        return 1;
    }
    gshmemi_uid_to_string(&uid, uid_text);
    listen_fd = gshmemi_uid_listener_fd(&uid);

    job.n = n;
    job.pid = calloc((size_t)n, sizeof(pid_t));
    job.ended_ok = malloc((size_t)n * sizeof(int));
    if (!job.pid || !job.ended_ok) {
        fprintf(stderr, "gshmemrun: out of memory\n");
        gshmemi_uid_close_listener();
        guardian_stop(&job);
        mps_stop(&mps, 1);
        free(job.pid);
        free(job.ended_ok);
        free(gpus);
        return 1;
    }
    for (int i = 0; i < n; i++) job.ended_ok[i] = -1;
    if (n > 1) state_file_open(&job);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        fprintf(stderr, "gshmemrun: warning: PR_SET_CHILD_SUBREAPER: %s; processes the PEs leave are not reaped here\n",
                strerror(errno));
    job.tty = find_tty();
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "gshmemrun: cannot start PE %d: fork failed: %s\n", i, strerror(errno));
            stopping = killed = 1;
            exit_code = 1;
            kill_at = gshmemi_now_s();
            stop_all(&job, SIGKILL);
            break;
        }
        if (pid == 0) start_pe(i, n, &job, launcher, uid_text, listen_fd, gpus, ngpus, &old, argv + argi);
        /* Also from this side, so the group exists before the next fork whatever the order. */
        if (setpgid(pid, job.pgid) != 0 && errno != EACCES && errno != ESRCH)
            fprintf(stderr, "gshmemrun: PE %d: setpgid failed: %s\n", i, strerror(errno));
        if (i == 0) {
            job.pgid = pid;
            if (job.tty >= 0) tcsetpgrp(job.tty, pid);
            if (job.guardian_fd >= 0 && write(job.guardian_fd, &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
                fprintf(stderr, "gshmemrun: warning: cannot reach the guardian process: %s\n", strerror(errno));
        }
        job.pid[i] = pid;
        job.alive++;
    }
    /* Rank 0 holds the listener now; ours would keep late joiners waiting instead of refused. */
    gshmemi_uid_close_listener();
    if (run_timeout > 0) run_deadline = gshmemi_now_s() + run_timeout;

    while (job.alive > 0) {
        struct timespec ts, *tsp = NULL;
        double wake = 0;
        siginfo_t si;
        int sig, status, tty_stop = 0;
        stops_t stops = {0};
        pid_t pid;

        while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
            int rank = -1;
            if (pid == job.guardian) {
                if (!WIFSTOPPED(status) && !WIFCONTINUED(status)) job.guardian = 0;
                continue;
            }
            for (int i = 0; i < n; i++)
                if (job.pid[i] == pid) rank = i;
            if (rank < 0) continue; /* an orphan of a PE, handed to us as subreaper */
            if (WIFCONTINUED(status)) continue;
            if (WIFSTOPPED(status)) {
                /* Never wait silently on a stopped PE: name it, and stop with it where a shell does job control. */
                stops_add(&stops, rank, WSTOPSIG(status));
                if (WSTOPSIG(status) == SIGTSTP || WSTOPSIG(status) == SIGTTIN || WSTOPSIG(status) == SIGTTOU)
                    tty_stop = WSTOPSIG(status);
                continue;
            }
            job.pid[rank] = 0;
            job.alive--;
            if (stopping) continue; /* we are stopping them: their ends are ours, not news */
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                job.ended_ok[rank] = pe_state(&job, rank); /* its last word is in the file before its exit */
                job.n_ended_ok++;
                continue;
            }
            if (WIFEXITED(status)) {
                fprintf(stderr, "gshmemrun: PE %d exited with status %d\n", rank, WEXITSTATUS(status));
                exit_code = WEXITSTATUS(status);
            } else {
                fprintf(stderr, "gshmemrun: PE %d killed by signal %d (%s)\n", rank, WTERMSIG(status), strsignal(WTERMSIG(status)));
                exit_code = 128 + WTERMSIG(status);
            }
            if (job.alive > 0) fprintf(stderr, "gshmemrun: stopping the other %d PE%s\n", job.alive, job.alive > 1 ? "s" : "");
            stopping = 1;
            kill_at = gshmemi_now_s() + KILL_GRACE_S;
            stop_all(&job, SIGTERM);
        }
        stops_flush(&stops);
        if (!stopping && (early = early_exit_check(&job)) >= 0) {
            exit_code = early;
            stopping = 1;
            kill_at = gshmemi_now_s() + KILL_GRACE_S;
            stop_all(&job, SIGTERM);
        }
        if (tty_stop && !stopping) {
            sigset_t pending;
            /* What the terminal would have done to our job had it not handed the PEs the foreground:
             * a job-control shell then sees us stopped and resumes us with SIGCONT. In a group with no
             * job control (orphaned) the kernel drops the signal and we go on. */
            kill(0, tty_stop);
            if (sigpending(&pending) == 0 && !sigismember(&pending, SIGCONT))
                fprintf(stderr, "gshmemrun: no job control here to stop gshmemrun with them; they stay stopped until "
                                "gshmemrun (pid %d) gets SIGCONT%s\n",
                        (int)getpid(), run_timeout > 0 ? " or --timeout ends the job" : "");
        } else if (stops.sig && !stopping && !notice) {
            notice = 1;
            fprintf(stderr, "gshmemrun: the job waits for stopped PEs; SIGCONT to gshmemrun (pid %d) continues them\n",
                    (int)getpid());
        }
        if (job.alive == 0) break;

        if (run_deadline > 0 && !stopping) wake = run_deadline;
        /* The PEs' notes come without a signal: read them again soon while an early exit stands. */
        if (!stopping && job.n_ended_ok && (wake == 0 || wake > gshmemi_now_s() + EARLY_EXIT_POLL_S))
            wake = gshmemi_now_s() + EARLY_EXIT_POLL_S;
        if (stopping) wake = killed ? kill_at + KILL_GRACE_S : kill_at;
        if (wake > 0) {
            double left = wake - gshmemi_now_s();
            if (left < 0) left = 0;
            ts.tv_sec = (time_t)left;
            ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
            tsp = &ts;
        }
        sig = tsp ? sigtimedwait(&set, &si, tsp) : sigwaitinfo(&set, &si);
        if (sig == SIGCONT) {
            resume_job(&job);
            continue;
        }
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            stop_all(&job, sig);
            if (!stopping) {
                fprintf(stderr, "gshmemrun: received signal %d (%s); forwarded it to the PEs\n", sig, strsignal(sig));
                exit_code = 128 + sig;
                stop_sig = sig;
                stopping = 1;
                kill_at = gshmemi_now_s() + KILL_GRACE_S;
            }
            continue;
        }
        if (sig >= 0 || (errno != EAGAIN && errno != EINTR)) continue; /* SIGCHLD: reap at the top */
        if (run_deadline > 0 && !stopping && gshmemi_now_s() >= run_deadline) {
            fprintf(stderr, "gshmemrun: timed out after %g s (--timeout); stopping the PEs\n", run_timeout);
            exit_code = 124;
            stopping = 1;
            kill_at = gshmemi_now_s() + KILL_GRACE_S;
            stop_all(&job, SIGTERM);
        } else if (stopping && !killed && gshmemi_now_s() >= kill_at) {
            fprintf(stderr, "gshmemrun: %d PE%s still running %g s after signal %d (%s); sending SIGKILL\n", job.alive,
                    job.alive > 1 ? "s" : "", KILL_GRACE_S, stop_sig, strsignal(stop_sig));
            signal_all(&job, SIGKILL);
            killed = 1;
        } else if (killed && gshmemi_now_s() >= kill_at + KILL_GRACE_S) {
            for (int i = 0; i < n; i++)
                if (job.pid[i] > 0) fprintf(stderr, "gshmemrun: PE %d (pid %d) survives SIGKILL (stuck in the kernel?); giving up on it\n", i, (int)job.pid[i]);
            break;
        }
    }
    /* The terminal back to our group, unless someone else (a shell after a stop) took it since. */
    if (job.tty >= 0 && job.pgid > 0 && tcgetpgrp(job.tty) == job.pgid) tcsetpgrp(job.tty, getpgrp());
    /* Whatever the PEs started goes too, after success as after failure: in their group, or moved
     * out of it (setsid, a double fork), which comes back to us as child subreaper. */
    leftovers = reap_leftovers(&job);
    if (leftovers && !stopping)
        fprintf(stderr, "gshmemrun: the PEs left processes running (%d, in their group %d or apart from it); stopped them\n",
                leftovers, (int)job.pgid);
    guardian_stop(&job);
    mps_stop(&mps, exit_code != 0);
    if (job.state) munmap((void *)job.state, (size_t)n);
    if (job.state_fd >= 0) close(job.state_fd);
    free(job.pid);
    free(job.ended_ok);
    free(gpus);
    return exit_code;
}
