/* gshmemrun: starts N PEs of one program on this host with a unique-id bootstrap.
 *
 * The launcher creates the unique id itself, so it owns rank 0's listening socket before any PE
 * runs and joiners never race rank 0's start; rank 0 inherits that socket (and only rank 0).
 * The PEs share one new process group, so a signal, a failure or the timeout reaches all of
 * them, their own children included. Needs no CUDA. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "log.h"

#define MAX_PES 4096
#define KILL_GRACE_S 5.0
#define GSHMEMI_STR_(x) #x
#define GSHMEMI_STR(x) GSHMEMI_STR_(x)

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gshmemrun -n N [--gpus LIST] [--timeout SECONDS] prog [args...]\n"
            "Starts N processing elements (PEs) of prog on this host.\n"
            "  -n N               number of PEs (at least 1)\n"
            "  --gpus LIST        comma-separated CUDA device ordinals; PE i gets GSHMEM_DEVICE=LIST[i %% len]\n"
            "                     (CUDA_VISIBLE_DEVICES is left alone: PEs must see every GPU for P2P)\n"
            "  --timeout SECONDS  stop every PE and exit 124 after this long\n"
            "  -h, --help         this text\n"
            "Each PE gets GSHMEM_BOOTSTRAP=uid, GSHMEM_BOOTSTRAP_UID, GSHMEM_RANK, GSHMEM_NRANKS and\n"
            "GSHMEM_LOCAL_RANK. SIGINT, SIGTERM and SIGHUP are forwarded to the PEs. When a PE fails, the\n"
            "others get SIGTERM (SIGKILL %g s later) and gshmemrun exits with the failed PE's status\n"
            "(128+signal when a signal killed it). Only PE 0 keeps stdin; the others read /dev/null.\n",
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    int n;
    pid_t *pid;    /* 0 once reaped */
    pid_t pgid;
    int alive;
} job_t;

static void signal_all(job_t *job, int sig)
{
    if (job->pgid > 0) kill(-job->pgid, sig);
    /* A PE that could not join the group still gets it. */
    for (int i = 0; i < job->n; i++)
        if (job->pid[i] > 0) kill(job->pid[i], sig);
}

/* Runs in the child between fork and exec. */
static void start_pe(int rank, int n, pid_t pgid, const char *uid_text, int listen_fd, const int *gpus, int ngpus,
                     const sigset_t *mask, char **argv)
{
    char num[32];

    setpgid(0, pgid);
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

int main(int argc, char **argv)
{
    int n = -1, ngpus = 0, *gpus = NULL, argi = 1, listen_fd, exit_code = 0, stopping = 0, killed = 0, stop_sig = SIGTERM;
    double run_timeout = 0, run_deadline = 0, kill_at = 0;
    char uid_text[2 * sizeof(gshmemi_uid_t) + 1];
    gshmemi_uid_t uid;
    sigset_t set, old;
    job_t job = {0};

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

    if (gshmemi_uid_create_flags(&uid, GSHMEMI_UID_THIS_HOST) != GSHMEMI_OK) {
        fprintf(stderr, "gshmemrun: cannot create the bootstrap unique id (see the error above)\n");
        return 1;
    }
    gshmemi_uid_to_string(&uid, uid_text);
    listen_fd = gshmemi_uid_listener_fd(&uid);

    /* Signals are taken synchronously with sigtimedwait; SIGCHLD must not be ignored or the
     * PEs would be reaped behind our back. */
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);

    job.n = n;
    job.pid = calloc((size_t)n, sizeof(pid_t));
    if (!job.pid) {
        fprintf(stderr, "gshmemrun: out of memory\n");
        return 1;
    }
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "gshmemrun: cannot start PE %d: fork failed: %s\n", i, strerror(errno));
            signal_all(&job, SIGKILL);
            while (job.alive > 0 && wait(NULL) > 0) job.alive--;
            return 1;
        }
        if (pid == 0) start_pe(i, n, job.pgid, uid_text, listen_fd, gpus, ngpus, &old, argv + argi);
        /* Also from this side, so the group exists before the next fork whatever the order. */
        if (setpgid(pid, job.pgid) != 0 && errno != EACCES && errno != ESRCH)
            fprintf(stderr, "gshmemrun: PE %d: setpgid failed: %s\n", i, strerror(errno));
        if (i == 0) job.pgid = pid;
        job.pid[i] = pid;
        job.alive++;
    }
    /* Rank 0 holds the listener now; ours would keep late joiners waiting instead of refused. */
    gshmemi_uid_close_listener();
    if (run_timeout > 0) run_deadline = now_s() + run_timeout;

    while (job.alive > 0) {
        struct timespec ts, *tsp = NULL;
        double wake = 0;
        siginfo_t si;
        int sig, status;
        pid_t pid;

        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            int rank = -1;
            for (int i = 0; i < n; i++)
                if (job.pid[i] == pid) rank = i;
            if (rank < 0) continue;
            job.pid[rank] = 0;
            job.alive--;
            if (stopping) continue; /* we are stopping them: their ends are ours, not news */
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
            if (WIFEXITED(status)) {
                fprintf(stderr, "gshmemrun: PE %d exited with status %d\n", rank, WEXITSTATUS(status));
                exit_code = WEXITSTATUS(status);
            } else {
                fprintf(stderr, "gshmemrun: PE %d killed by signal %d (%s)\n", rank, WTERMSIG(status), strsignal(WTERMSIG(status)));
                exit_code = 128 + WTERMSIG(status);
            }
            if (job.alive > 0) fprintf(stderr, "gshmemrun: stopping the other %d PE%s\n", job.alive, job.alive > 1 ? "s" : "");
            stopping = 1;
            kill_at = now_s() + KILL_GRACE_S;
            signal_all(&job, SIGTERM);
        }
        if (job.alive == 0) break;

        if (run_deadline > 0 && !stopping) wake = run_deadline;
        if (stopping && !killed) wake = kill_at;
        if (wake > 0) {
            double left = wake - now_s();
            if (left < 0) left = 0;
            ts.tv_sec = (time_t)left;
            ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
            tsp = &ts;
        }
        sig = tsp ? sigtimedwait(&set, &si, tsp) : sigwaitinfo(&set, &si);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            signal_all(&job, sig);
            if (!stopping) {
                fprintf(stderr, "gshmemrun: received signal %d (%s); forwarded it to the PEs\n", sig, strsignal(sig));
                exit_code = 128 + sig;
                stop_sig = sig;
                stopping = 1;
                kill_at = now_s() + KILL_GRACE_S;
            }
            continue;
        }
        if (sig >= 0 || (errno != EAGAIN && errno != EINTR)) continue; /* SIGCHLD: reap at the top */
        if (run_deadline > 0 && !stopping && now_s() >= run_deadline) {
            fprintf(stderr, "gshmemrun: timed out after %g s (--timeout); stopping the PEs\n", run_timeout);
            exit_code = 124;
            stopping = 1;
            kill_at = now_s() + KILL_GRACE_S;
            signal_all(&job, SIGTERM);
        } else if (stopping && !killed && now_s() >= kill_at) {
            fprintf(stderr, "gshmemrun: %d PE%s still running %g s after signal %d (%s); sending SIGKILL\n", job.alive,
                    job.alive > 1 ? "s" : "", KILL_GRACE_S, stop_sig, strsignal(stop_sig));
            signal_all(&job, SIGKILL);
            killed = 1;
        }
    }
    /* After a failure, whatever the PEs started in their group goes too. */
    if (stopping && job.pgid > 0) kill(-job.pgid, SIGKILL);
    free(job.pid);
    free(gpus);
    return exit_code;
}
