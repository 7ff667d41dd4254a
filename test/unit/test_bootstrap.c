/* Bootstrap tests (plain C: exit 0 pass, 77 skip, anything else fail).
 *   test_bootstrap          forks jobs of the uid bootstrap on this host: collectives, rejected
 *                           joiners, timeouts, a vanished peer, mismatched arguments
 *   test_bootstrap --env    one PE started by gshmemrun (reads GSHMEM_* through env.c)
 *   test_bootstrap --pmix   one PE started by a PMIx launcher (mpirun); 77 without PMIx
 *   test_bootstrap --uid-addr  creates a unique id and prints where rank 0 listens (for the
 *                           GSHMEM_BOOTSTRAP_IFNAME / _ADDR checks of test_bootstrap_addr.sh)
 *   test_bootstrap --note I|F|X|-  records this PE's state for gshmemrun as shmem_init (I),
 *                           shmem_finalize (F), shmem_global_exit (X) or a failed init (-) do,
 *                           and exits 0 (for test_launcher.sh) */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/bootstrap.h"
#include "runtime/base/bootstrap_uid_msg.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"

#define SKIP 77
#define JOB_TIMEOUT 20.0 /* bootstrap timeout of the jobs that should succeed */

static const char *g_mode = "fork";

#define FAIL(...)                                                                \
    do {                                                                         \
        fprintf(stderr, "test_bootstrap: FAIL (%s:%d): ", __FILE__, __LINE__);   \
        fprintf(stderr, __VA_ARGS__);                                            \
        fprintf(stderr, "\n");                                                   \
        return 1;                                                                \
    } while (0)

#define EXPECT_RC(call, want)                                                                         \
    do {                                                                                              \
        int rc_ = (call);                                                                             \
        if (rc_ != (want)) FAIL("%s returned %d (%s), expected %d (%s)", #call, rc_, gshmemi_strerror(rc_), \
                                (int)(want), gshmemi_strerror(want));                                 \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Byte i of the data rank `src` contributes to test `salt` (and, for alltoall, sends to `dst`). */
static uint8_t pattern(int src, int dst, size_t i, size_t len, int salt)
{
    uint32_t h = (uint32_t)(src + 1) * 2654435761u ^ (uint32_t)(dst + 7) * 40503u ^ (uint32_t)salt * 977u;
    h ^= (uint32_t)i * 2246822519u + (uint32_t)(i >> 12) + (uint32_t)len;
    return (uint8_t)(h ^ h >> 13 ^ h >> 24);
}

static int check_bytes(const uint8_t *buf, int src, int dst, size_t len, int salt, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(src, dst, i, len, salt))
            FAIL("%s, len %zu: byte %zu of rank %d's block is 0x%02x, expected 0x%02x", what, len, i, src, buf[i],
                 pattern(src, dst, i, len, salt));
    return 0;
}

/* The same checks for every bootstrap; any failure returns 1 (the message says which). */
static int run_checks(gshmemi_bootstrap_t *bs)
{
    static const size_t lens[] = {1, 8, 65536, 0};
    const int me = bs->rank, n = bs->nranks;
    int salt = 0;

    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        size_t len = lens[l];
        uint8_t *buf = malloc(len * (size_t)n + 1), *sbuf = malloc(len * (size_t)n + 1), *rbuf = malloc(len * (size_t)n + 1);
        if (!buf || !sbuf || !rbuf) FAIL("out of memory");

        /* allgather */
        salt++;
        memset(buf, 0xEE, len * (size_t)n);
        for (size_t i = 0; i < len; i++) buf[(size_t)me * len + i] = pattern(me, -1, i, len, salt);
        EXPECT_RC(bs->allgather(bs, buf, len), GSHMEMI_OK);
        for (int r = 0; r < n; r++)
            if (check_bytes(buf + (size_t)r * len, r, -1, len, salt, "allgather")) return 1;
        EXPECT_RC(bs->barrier(bs), GSHMEMI_OK);

        /* alltoall: block (i->j) = f(i, j) */
        salt++;
        for (int j = 0; j < n; j++)
            for (size_t i = 0; i < len; i++) sbuf[(size_t)j * len + i] = pattern(me, j, i, len, salt);
        memset(rbuf, 0xEE, len * (size_t)n);
        EXPECT_RC(bs->alltoall(bs, sbuf, rbuf, len), GSHMEMI_OK);
        for (int i = 0; i < n; i++)
            if (check_bytes(rbuf + (size_t)i * len, i, me, len, salt, "alltoall")) return 1;
        EXPECT_RC(bs->barrier(bs), GSHMEMI_OK);

        /* bcast from every root */
        for (int root = 0; root < n; root++) {
            salt++;
            for (size_t i = 0; i < len; i++) buf[i] = me == root ? pattern(root, -2, i, len, salt) : 0xEE;
            EXPECT_RC(bs->bcast(bs, buf, len, root), GSHMEMI_OK);
            if (check_bytes(buf, root, -2, len, salt, "bcast")) return 1;
            EXPECT_RC(bs->barrier(bs), GSHMEMI_OK);
        }
        free(buf);
        free(sbuf);
        free(rbuf);
    }

    /* 100 barriers; every tenth is followed by an allgather of the iteration, so a rank that
     * got ahead or behind shows up. */
    for (int it = 0; it < 100; it++) {
        EXPECT_RC(bs->barrier(bs), GSHMEMI_OK);
        if (it % 10 == 9) {
            int *v = malloc(sizeof(int) * (size_t)n);
            if (!v) FAIL("out of memory");
            v[me] = it * 1000 + me;
            EXPECT_RC(bs->allgather(bs, v, sizeof(int)), GSHMEMI_OK);
            for (int r = 0; r < n; r++)
                if (v[r] != it * 1000 + r) FAIL("barrier loop %d: rank %d reported %d", it, r, v[r]);
            free(v);
        }
    }

    /* A bad root fails on every rank alike, and the bootstrap stays usable. */
    {
        char c = 0;
        if (me == 0) fprintf(stderr, "test_bootstrap: every rank now reports two bad bcast roots; those errors are expected\n");
        EXPECT_RC(bs->bcast(bs, &c, 1, n), GSHMEMI_ERR_INVALID);
        EXPECT_RC(bs->bcast(bs, &c, 1, -1), GSHMEMI_ERR_INVALID);
        EXPECT_RC(bs->barrier(bs), GSHMEMI_OK);
    }
    printf("test_bootstrap: rank %d of %d passed (%s)\n", me, n, g_mode);
    fflush(stdout);
    return 0;
}

#define CHECK_CODE(got, want, what)                                                            \
    do {                                                                                       \
        int got_ = (got);                                                                      \
        if (got_ != (want)) FAIL("%s: exit code %d, expected %d", what, got_, (int)(want));    \
    } while (0)

/* Child exit codes: 0 pass, 1 a check failed, 10 - status for a bootstrap error status. */
static int status_code(int rc) { return rc == GSHMEMI_OK ? 0 : 10 - rc; }

static int join_and_check(const gshmemi_uid_t *uid, int rank, int nranks, double timeout)
{
    gshmemi_bootstrap_t *bs = NULL;
    int rc = gshmemi_bootstrap_uid_init(uid, rank, nranks, timeout, &bs);

    if (rc != GSHMEMI_OK) return status_code(rc);
    if (bs->rank != rank || bs->nranks != nranks) {
        fprintf(stderr, "test_bootstrap: FAIL: init gave rank %d of %d, asked %d of %d\n", bs->rank, bs->nranks, rank, nranks);
        return 1;
    }
    if (run_checks(bs)) return 1;
    EXPECT_RC(bs->finalize(bs), GSHMEMI_OK);
    return 0;
}

/* ---------------------------------------------------------------- fork mode helpers */

typedef int (*child_fn)(void *arg);

static pid_t spawn(child_fn fn, void *arg)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int code = fn(arg);
        fflush(NULL);
        _exit(code);
    }
    if (pid < 0) {
        perror("test_bootstrap: fork");
        exit(1);
    }
    return pid;
}

/* The child's exit code, or -1 if it did not end within timeout_s (it is killed then). */
static int wait_code(pid_t pid, double timeout_s)
{
    double end = now_s() + timeout_s;
    int status;

    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return -1;
        if (now_s() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fprintf(stderr, "test_bootstrap: child %d did not finish within %g s\n", (int)pid, timeout_s);
            return -1;
        }
        usleep(5000);
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "test_bootstrap: child %d killed by signal %d\n", (int)pid, WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}

/* Waits for whichever of a and b ends first; returns its pid and sets *code. */
static pid_t wait_either(pid_t a, pid_t b, double timeout_s, int *code)
{
    double end = now_s() + timeout_s;
    int status;

    while (now_s() < end) {
        pid_t pids[2] = {a, b};
        for (int i = 0; i < 2; i++) {
            if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
                *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return pids[i];
            }
        }
        usleep(5000);
    }
    return -1;
}

typedef struct {
    gshmemi_uid_t uid;
    int rank, nranks;
    double timeout;
    double delay;  /* seconds to sleep before joining */
    int variant;   /* what the job does after init */
    double max_init; /* > 0: init must take at most this many seconds */
    int nofile;    /* > 0: RLIMIT_NOFILE of the process */
} job_arg_t;

enum { JOB_CHECKS, JOB_EXIT_AFTER_INIT, JOB_MISMATCH, JOB_REMOTE_CHECK, JOB_STALL, JOB_STALL_CHECK };

static int job_child(void *p)
{
    job_arg_t *a = p;
    gshmemi_bootstrap_t *bs = NULL;
    int rc;

    if (a->delay > 0) usleep((useconds_t)(a->delay * 1e6));
    if (a->nofile > 0) {
        struct rlimit rl = {(rlim_t)a->nofile, (rlim_t)a->nofile};
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) FAIL("setrlimit(RLIMIT_NOFILE, %d): %s", a->nofile, strerror(errno));
    }
    if (a->max_init > 0) {
        double t0 = now_s();
        rc = gshmemi_bootstrap_uid_init(&a->uid, a->rank, a->nranks, a->timeout, &bs);
        if (rc != GSHMEMI_OK) return status_code(rc);
        if (now_s() - t0 > a->max_init) FAIL("rank %d: init took %.2f s, more than %g s", a->rank, now_s() - t0, a->max_init);
        if (run_checks(bs)) return 1;
        EXPECT_RC(bs->finalize(bs), GSHMEMI_OK);
        return 0;
    }
    if (a->variant == JOB_CHECKS) return join_and_check(&a->uid, a->rank, a->nranks, a->timeout);
    rc = gshmemi_bootstrap_uid_init(&a->uid, a->rank, a->nranks, a->timeout, &bs);
    if (rc != GSHMEMI_OK) return status_code(rc);
    if (a->variant == JOB_EXIT_AFTER_INIT) _exit(0); /* vanish without finalize */
    if (a->variant == JOB_STALL) {
        sleep(3); /* alive but absent from the barrier the others are in */
        bs->finalize(bs);
        return 0;
    }
    if (a->variant == JOB_STALL_CHECK) {
        /* Rank 0 times out on the absent rank; rank 1 learns it from rank 0 before its own, later, deadline. */
        double t0 = now_s(), dt;
        rc = bs->barrier(bs);
        dt = now_s() - t0;
        if (dt < a->timeout * 0.9 || dt > a->timeout + 0.2) {
            fprintf(stderr, "test_bootstrap: FAIL: rank %d's barrier failed after %.2f s with a %g s timeout\n", a->rank, dt, a->timeout);
            return 1;
        }
        bs->finalize(bs);
        return status_code(rc);
    }
    if (a->variant == JOB_MISMATCH) {
        char buf[256] = {0};
        /* rank r passes len 8 + 8 r: rank 0 must report the mismatch and everyone fails. */
        rc = bs->allgather(bs, buf, 8 + 8 * (size_t)a->rank);
        if (rc == GSHMEMI_OK) return 1;
        /* Later calls fail at once instead of hanging. */
        if (bs->barrier(bs) == GSHMEMI_OK) return 1;
        bs->finalize(bs);
        return status_code(rc);
    }
    /* JOB_REMOTE_CHECK: a barrier with a peer that vanished. */
    {
        double t0 = now_s();
        rc = bs->barrier(bs);
        if (now_s() - t0 > a->timeout / 2) {
            fprintf(stderr, "test_bootstrap: FAIL: the vanished peer was noticed only after %g s\n", now_s() - t0);
            return 1;
        }
        bs->finalize(bs);
        return status_code(rc);
    }
}

static int expect_timeout_child(void *p)
{
    job_arg_t *a = p;
    gshmemi_bootstrap_t *bs = NULL;
    gshmemi_uid_t uid;
    double t0;
    int rc;

    if (gshmemi_uid_create(&uid) != GSHMEMI_OK) return 1;
    /* variant 0: rank 0 alone; 1: rank 1 with a listener nobody accepts on;
     * 2: rank 1 with no listener at all (connection refused until the deadline);
     * 3: ranks 0 and 1 of 3: rank 1 hears of the timeout from rank 0. */
    if (a->variant == 2) gshmemi_uid_close_listener();
    t0 = now_s();
    if (a->variant == 3) {
        job_arg_t j = {uid, 1, 3, 1.0, 0, JOB_CHECKS, 0, 0};
        pid_t pid = spawn(job_child, &j);
        rc = gshmemi_bootstrap_uid_init(&uid, 0, 3, 1.0, &bs);
        if (rc != GSHMEMI_ERR_TIMEOUT) FAIL("timeout case 3: rank 0 returned %d", rc);
        CHECK_CODE(wait_code(pid, 10), status_code(GSHMEMI_ERR_TIMEOUT), "timeout case 3, rank 1");
        if (now_s() - t0 > 1.2) FAIL("timeout case 3: rank 1 ended %.2f s after the start", now_s() - t0);
        printf("test_bootstrap: timeout case 3 failed as expected after %.2f s\n", now_s() - t0);
        return 0;
    }
    rc = gshmemi_bootstrap_uid_init(&uid, a->variant == 0 ? 0 : 1, 2, 1.0, &bs);
    if (rc != GSHMEMI_ERR_TIMEOUT) FAIL("timeout case %d: init returned %d (%s), expected a timeout", a->variant, rc, gshmemi_strerror(rc));
    if (now_s() - t0 < 0.9 || now_s() - t0 > 2.0) FAIL("timeout case %d: took %.2f s with a 1 s timeout", a->variant, now_s() - t0);
    printf("test_bootstrap: timeout case %d failed as expected after %.2f s\n", a->variant, now_s() - t0);
    return 0;
}

/* ---------------------------------------------------------------- fork mode */

static int test_local(void)
{
    gshmemi_bootstrap_t *bs = NULL;
    gshmemi_uid_t uid, bad;
    char text[2 * sizeof(gshmemi_uid_t) + 1], mangled[sizeof(text)];
    gshmemi_uid_t back;

    /* single */
    g_mode = "single";
    EXPECT_RC(gshmemi_bootstrap_single_init(&bs), GSHMEMI_OK);
    if (run_checks(bs)) return 1;
    EXPECT_RC(bs->finalize(bs), GSHMEMI_OK);

    /* uid with one rank: no sockets */
    g_mode = "uid, one rank";
    EXPECT_RC(gshmemi_uid_create(&uid), GSHMEMI_OK);
    if (join_and_check(&uid, 0, 1, 5.0)) return 1;

    /* text form */
    gshmemi_uid_to_string(&uid, text);
    if (strlen(text) != 2 * sizeof(uid)) FAIL("uid text has %zu characters", strlen(text));
    EXPECT_RC(gshmemi_uid_from_string(text, &back), GSHMEMI_OK);
    if (memcmp(&back, &uid, sizeof(uid))) FAIL("uid text does not round-trip");
    fprintf(stderr, "test_bootstrap: argument checks; the errors below are expected\n");
    EXPECT_RC(gshmemi_uid_from_string(text + 1, &back), GSHMEMI_ERR_INVALID);
    memcpy(mangled, text, sizeof(text));
    mangled[17] = 'g';
    EXPECT_RC(gshmemi_uid_from_string(mangled, &back), GSHMEMI_ERR_INVALID);
    memcpy(mangled, text, sizeof(text));
    mangled[0] = mangled[0] == '0' ? '1' : '0'; /* magic */
    EXPECT_RC(gshmemi_uid_from_string(mangled, &back), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_uid_from_string(NULL, &back), GSHMEMI_ERR_INVALID);

    /* init arguments */
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, 4, 4, 1.0, &bs), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, -1, 4, 1.0, &bs), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, 0, 0, 1.0, &bs), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, 1, 2, 0.0, &bs), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_bootstrap_uid_init(NULL, 1, 2, 1.0, &bs), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, 1, 2, 1.0, NULL), GSHMEMI_ERR_INVALID);
    bad = uid;
    bad.magic ^= 1;
    EXPECT_RC(gshmemi_bootstrap_uid_init(&bad, 1, 2, 1.0, &bs), GSHMEMI_ERR_INVALID);
    /* The listener of uid was used up by the one-rank job above: this process cannot be rank 0 again. */
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, 0, 2, 1.0, &bs), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_uid_adopt_listener(0, &uid), GSHMEMI_ERR_INVALID);
    EXPECT_RC(gshmemi_uid_adopt_listener(-1, &uid), GSHMEMI_ERR_INVALID);
    {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) FAIL("socket: %s", strerror(errno));
        EXPECT_RC(gshmemi_uid_adopt_listener(s, &uid), GSHMEMI_ERR_INVALID);
        close(s);
    }
    {
        int rc = gshmemi_bootstrap_pmix_init(1.0, NULL);
        if (rc != GSHMEMI_ERR_INVALID && rc != GSHMEMI_ERR_UNSUPPORTED) FAIL("gshmemi_bootstrap_pmix_init with out NULL returned %d", rc);
    }
    printf("test_bootstrap: local checks passed\n");
    return 0;
}

/* A 4-rank job with three intruders: a wrong key, a wrong nranks and a second rank 1. */
static int test_job_with_intruders(void)
{
    job_arg_t a[4], fake_key, fake_n, dup;
    pid_t pid[4], pk, pn, p1a, p1b, loser;
    int code, winner_code;

    g_mode = "fork";
    memset(a, 0, sizeof(a));
    EXPECT_RC(gshmemi_uid_create(&a[0].uid), GSHMEMI_OK);
    for (int r = 0; r < 4; r++) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 4;
        a[r].timeout = JOB_TIMEOUT;
        a[r].delay = 0;
        a[r].variant = JOB_CHECKS;
    }
    pid[0] = spawn(job_child, &a[0]);
    /* Rank 0's child holds the listener now. */
    gshmemi_uid_close_listener();

    fprintf(stderr, "test_bootstrap: intruders; rank 0's warnings about rejected joins are expected\n");
    fake_key = a[1];
    fake_key.uid.key[0] ^= 0x5a5a;
    fake_key.timeout = 5;
    fake_n = a[1];
    fake_n.nranks = 5;
    fake_n.timeout = 5;
    pk = spawn(job_child, &fake_key);
    pn = spawn(job_child, &fake_n);
    CHECK_CODE(wait_code(pk, 10), status_code(GSHMEMI_ERR_INVALID), "joiner with a wrong key");
    CHECK_CODE(wait_code(pn, 10), status_code(GSHMEMI_ERR_INVALID), "joiner with a wrong nranks");

    /* Two rank 1s: whichever rank 0 sees second is rejected, and it ends before rank 2 joins. */
    dup = a[1];
    p1a = spawn(job_child, &a[1]);
    p1b = spawn(job_child, &dup);
    loser = wait_either(p1a, p1b, 10, &code);
    if (loser < 0) FAIL("neither of two processes joining as rank 1 was rejected");
    CHECK_CODE(code, status_code(GSHMEMI_ERR_INVALID), "second process joining as rank 1");
    pid[1] = loser == p1a ? p1b : p1a;

    pid[2] = spawn(job_child, &a[2]);
    pid[3] = spawn(job_child, &a[3]);
    for (int r = 0; r < 4; r++) {
        winner_code = wait_code(pid[r], 60);
        if (winner_code != 0) FAIL("rank %d of the 4-rank job exited with %d", r, winner_code);
    }
    return 0;
}

/* Ranks 1..3 start first; rank 0 half a second later (they wait in its listen queue). */
static int test_late_root(void)
{
    job_arg_t a[4];
    pid_t pid[4];

    g_mode = "fork, late rank 0";
    memset(a, 0, sizeof(a));
    EXPECT_RC(gshmemi_uid_create(&a[0].uid), GSHMEMI_OK);
    for (int r = 3; r >= 0; r--) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 4;
        a[r].timeout = JOB_TIMEOUT;
        a[r].delay = r == 0 ? 0.5 : 0;
        a[r].variant = JOB_CHECKS;
        pid[r] = spawn(job_child, &a[r]);
    }
    gshmemi_uid_close_listener();
    for (int r = 0; r < 4; r++) CHECK_CODE(wait_code(pid[r], 60), 0, "job with a late rank 0");
    return 0;
}

/* A 3-rank job whose rank 2 exits after init: the others fail fast with a remote error. */
static int test_vanished_peer(void)
{
    job_arg_t a[3];
    pid_t pid[3];

    g_mode = "fork, vanished peer";
    fprintf(stderr, "test_bootstrap: rank 2 vanishes; the errors below are expected\n");
    memset(a, 0, sizeof(a));
    EXPECT_RC(gshmemi_uid_create(&a[0].uid), GSHMEMI_OK);
    for (int r = 0; r < 3; r++) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 3;
        a[r].timeout = JOB_TIMEOUT;
        a[r].delay = 0;
        a[r].variant = r == 2 ? JOB_EXIT_AFTER_INIT : JOB_REMOTE_CHECK;
        pid[r] = spawn(job_child, &a[r]);
    }
    gshmemi_uid_close_listener();
    CHECK_CODE(wait_code(pid[2], 30), 0, "vanishing rank 2");
    CHECK_CODE(wait_code(pid[0], 30), status_code(GSHMEMI_ERR_REMOTE), "rank 0 after rank 2 vanished");
    CHECK_CODE(wait_code(pid[1], 30), status_code(GSHMEMI_ERR_REMOTE), "rank 1 after rank 2 vanished");
    printf("test_bootstrap: a vanished peer is reported\n");
    return 0;
}

/* Rank 2 joins but never enters the barrier: ranks 0 and 1 time out naming it, at rank 0's deadline. */
static int test_stalled_peer(void)
{
    job_arg_t a[3];
    pid_t pid[3];

    fprintf(stderr, "test_bootstrap: rank 2 stalls; the errors below are expected\n");
    memset(a, 0, sizeof(a));
    EXPECT_RC(gshmemi_uid_create(&a[0].uid), GSHMEMI_OK);
    for (int r = 0; r < 3; r++) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 3;
        a[r].timeout = 1.0;
        a[r].delay = 0;
        a[r].variant = r == 2 ? JOB_STALL : JOB_STALL_CHECK;
        pid[r] = spawn(job_child, &a[r]);
    }
    gshmemi_uid_close_listener();
    CHECK_CODE(wait_code(pid[0], 30), status_code(GSHMEMI_ERR_TIMEOUT), "rank 0 waiting for a stalled rank 2");
    CHECK_CODE(wait_code(pid[1], 30), status_code(GSHMEMI_ERR_TIMEOUT), "rank 1 waiting for a stalled rank 2");
    CHECK_CODE(wait_code(pid[2], 30), 0, "stalled rank 2");
    printf("test_bootstrap: a stalled peer is reported\n");
    return 0;
}

/* Ranks pass different lengths to one allgather: every rank fails with INVALID. */
static int test_mismatch(void)
{
    job_arg_t a[3];
    pid_t pid[3];

    fprintf(stderr, "test_bootstrap: mismatched lengths; the errors below are expected\n");
    memset(a, 0, sizeof(a));
    EXPECT_RC(gshmemi_uid_create(&a[0].uid), GSHMEMI_OK);
    for (int r = 0; r < 3; r++) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 3;
        a[r].timeout = JOB_TIMEOUT;
        a[r].delay = 0;
        a[r].variant = JOB_MISMATCH;
        pid[r] = spawn(job_child, &a[r]);
    }
    gshmemi_uid_close_listener();
    for (int r = 0; r < 3; r++) CHECK_CODE(wait_code(pid[r], 30), status_code(GSHMEMI_ERR_INVALID), "rank of a mismatched allgather");
    printf("test_bootstrap: mismatched lengths are reported\n");
    return 0;
}

static int test_timeouts(void)
{
    fprintf(stderr, "test_bootstrap: timeouts; the errors below are expected\n");
    for (int v = 0; v < 4; v++) {
        job_arg_t a;
        memset(&a, 0, sizeof(a));
        a.variant = v;
        CHECK_CODE(wait_code(spawn(expect_timeout_child, &a), 10), 0, "timeout case");
    }
    return 0;
}

/* ---------------------------------------------------------------- admission, key proof, address */

/* Runs fn in a child whose stderr goes to path, so the parent can read its messages back. */
static pid_t spawn_logged(child_fn fn, void *arg, const char *path)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int code;
        if (fd < 0 || dup2(fd, 2) < 0) _exit(3);
        close(fd);
        code = fn(arg);
        fflush(NULL);
        _exit(code);
    }
    if (pid < 0) {
        perror("test_bootstrap: fork");
        exit(1);
    }
    return pid;
}

/* Whether the file at path contains needle (and prints the file when it does not). */
static int log_has(const char *path, const char *needle)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    if (strstr(buf, needle)) return 1;
    fprintf(stderr, "test_bootstrap: %s lacks \"%s\"; it holds:\n%s\n", path, needle, buf);
    return 0;
}

/* Whether the file at path is free of needle (and prints the file when it is not). */
static int log_lacks(const char *path, const char *needle)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    if (!strstr(buf, needle)) return 1;
    fprintf(stderr, "test_bootstrap: %s holds \"%s\":\n%s\n", path, needle, buf);
    return 0;
}

static void log_path(char *out, size_t n, const char *what)
{
    snprintf(out, n, "%s/test_bootstrap.%d.%s.log", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), what);
}

static int connect_to(const gshmemi_uid_t *uid, int nonblock)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_addr, uid->addr, 4);
    sa.sin_port = uid->port;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static void fake_hello(uint8_t *out, int rank, int nranks)
{
    gshmemi_uid_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.magic = GSHMEMI_UID_MSG_MAGIC;
    h.version = GSHMEMI_UID_PROTO_VERSION;
    h.op = GSHMEMI_UID_OP_HELLO;
    h.src = rank;
    h.arg = nranks;
    h.len = GSHMEMI_UID_NONCE_BYTES;
    memcpy(out, &h, sizeof(h));
    for (int i = 0; i < GSHMEMI_UID_NONCE_BYTES; i++) out[sizeof(h) + i] = (uint8_t)rand();
}

/* The published SipHash-2-4 vectors (key 00..0f, message 00..len-1) and decoder edge cases. */
static int test_wire(void)
{
    static const struct { size_t len; uint64_t want; } vec[] = {
        {0, 0x726fdb47dd0e0e31ull}, {1, 0x74f839c593dc67fdull}, {7, 0xab0200f58b01d137ull},
        {8, 0x93f5f5799a932462ull}, {15, 0xa129ca6149be45e5ull},
    };
    uint8_t key[16], msg[16], buf[GSHMEMI_UID_HDR_BYTES + 64];
    gshmemi_uid_msg_t m;
    gshmemi_uid_hdr_t h;
    const char *why;
    uint64_t k2[2] = {1, 2};
    uint8_t na[GSHMEMI_UID_NONCE_BYTES] = {1}, nb[GSHMEMI_UID_NONCE_BYTES] = {2};

    for (int i = 0; i < 16; i++) key[i] = (uint8_t)i, msg[i] = (uint8_t)i;
    for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        /* the vectors are the little-endian bytes of the result */
        uint64_t got = gshmemi_siphash24(key, msg, vec[i].len);
        if (got != vec[i].want) FAIL("SipHash-2-4 of %zu bytes: 0x%016llx, expected 0x%016llx", vec[i].len,
                                     (unsigned long long)got, (unsigned long long)vec[i].want);
    }
    /* the two sides' proofs differ, and each depends on every input */
    if (gshmemi_uid_proof(k2, 'R', na, nb, 1, 4) == gshmemi_uid_proof(k2, 'J', na, nb, 1, 4)) FAIL("rank 0's and a joiner's proofs agree");
    if (gshmemi_uid_proof(k2, 'R', na, nb, 1, 4) == gshmemi_uid_proof(k2, 'R', nb, na, 1, 4)) FAIL("a proof ignores the nonce order");
    if (gshmemi_uid_proof(k2, 'R', na, nb, 1, 4) == gshmemi_uid_proof(k2, 'R', na, nb, 2, 4)) FAIL("a proof ignores the rank");

    fake_hello(buf, 1, 4);
    if (gshmemi_uid_msg_decode(buf, GSHMEMI_UID_HDR_BYTES - 1, &m, &why) != 0) FAIL("a partial header is not 'need more'");
    if (gshmemi_uid_msg_decode(buf, GSHMEMI_UID_HDR_BYTES + 3, &m, &why) != 0 || m.hdr.len != GSHMEMI_UID_NONCE_BYTES)
        FAIL("a partial hello is not 'need more' with its header");
    if (gshmemi_uid_msg_decode(buf, GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES, &m, &why) !=
        (long)(GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES))
        FAIL("a whole hello does not decode");
    memcpy(&h, buf, sizeof(h));
    h.len = UINT64_MAX; /* a 2^64 length prefix */
    memcpy(buf, &h, sizeof(h));
    if (gshmemi_uid_msg_decode(buf, sizeof(buf), &m, &why) != GSHMEMI_ERR_INVALID || !why) FAIL("a hello with length 2^64-1 is accepted");
    fake_hello(buf, 4, 4);
    if (gshmemi_uid_msg_decode(buf, sizeof(buf), &m, &why) != GSHMEMI_ERR_INVALID) FAIL("a hello from rank 4 of 4 is accepted");
    fake_hello(buf, 1, 4);
    memcpy(&h, buf, sizeof(h));
    h.version = 1;
    memcpy(buf, &h, sizeof(h));
    if (gshmemi_uid_msg_decode(buf, sizeof(buf), &m, &why) != GSHMEMI_ERR_UNSUPPORTED) FAIL("a version 1 hello is not 'unsupported'");
    printf("test_bootstrap: SipHash-2-4 vectors and the message decoder pass\n");
    return 0;
}

typedef struct {
    gshmemi_uid_t uid;
    int count;     /* connections held open */
    int idle;      /* the first `idle` send nothing; the others a hello they never complete */
    int ready_fd;  /* a byte is written here once all are open */
} flood_arg_t;

/* Holds `count` connections to rank 0; whenever rank 0 drops one, another takes its place.
 * Runs until killed. */
static int flood_child(void *p)
{
    flood_arg_t *a = p;
    struct pollfd *pfd = calloc((size_t)a->count, sizeof(*pfd));
    int told = 0;

    if (!pfd) return 1;
    srand((unsigned)getpid());
    for (int i = 0; i < a->count; i++) pfd[i].fd = -1;
    for (;;) {
        int open_now = 0;
        for (int i = 0; i < a->count; i++) {
            if (pfd[i].fd < 0) {
                pfd[i].fd = connect_to(&a->uid, 0);
                pfd[i].events = POLLIN;
                if (pfd[i].fd >= 0 && i >= a->idle) {
                    uint8_t hello[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES];
                    fake_hello(hello, 1 + i % 3, 4);
                    (void)!send(pfd[i].fd, hello, sizeof(hello), MSG_NOSIGNAL | MSG_DONTWAIT);
                }
            }
            open_now += pfd[i].fd >= 0;
        }
        if (!told && open_now == a->count) {
            (void)!write(a->ready_fd, "r", 1);
            told = 1;
        }
        if (poll(pfd, (nfds_t)a->count, 20) <= 0) continue;
        for (int i = 0; i < a->count; i++) {
            char junk[256];
            if (!pfd[i].revents) continue;
            if (recv(pfd[i].fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0) {
                close(pfd[i].fd);
                pfd[i].fd = -1;
            }
        }
        usleep(10000); /* a steady flood, not a CPU hog on a shared test host */
    }
}

/* Starts rank 0 (stderr to log0, fd limit nofile when > 0), a flood of `count` connections, then
 * ranks 1..3; every rank must pass its checks, each joining within max_init seconds. */
static int run_flooded_job(int idle, int hellos, int nofile, const char *log0, double max_init)
{
    job_arg_t a[4];
    flood_arg_t f;
    pid_t pid[4], fpid;
    int pipefd[2], failed = 0;
    char c;

    memset(a, 0, sizeof(a));
    /* loopback only: the flood stays on this host */
    EXPECT_RC(gshmemi_uid_create_flags(&a[0].uid, GSHMEMI_UID_THIS_HOST), GSHMEMI_OK);
    for (int r = 0; r < 4; r++) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 4;
        a[r].timeout = 15;
        a[r].delay = 0;
        a[r].variant = JOB_CHECKS;
        a[r].max_init = max_init;
        a[r].nofile = r == 0 ? nofile : 0;
    }
    pid[0] = spawn_logged(job_child, &a[0], log0);
    gshmemi_uid_close_listener();
    if (pipe(pipefd) != 0) FAIL("pipe: %s", strerror(errno));
    f.uid = a[0].uid;
    f.count = idle + hellos;
    f.idle = idle;
    f.ready_fd = pipefd[1];
    fpid = spawn(flood_child, &f);
    close(pipefd[1]);
    {
        struct pollfd p = {pipefd[0], POLLIN, 0};
        if (poll(&p, 1, 10000) != 1 || read(pipefd[0], &c, 1) != 1) {
            kill(fpid, SIGKILL);
            waitpid(fpid, NULL, 0);
            FAIL("the flood of %d connections did not open within 10 s", f.count);
        }
        close(pipefd[0]);
    }
    for (int r = 1; r < 4; r++) pid[r] = spawn(job_child, &a[r]);
    for (int r = 0; r < 4; r++) {
        int code = wait_code(pid[r], 60);
        if (code != 0) {
            fprintf(stderr, "test_bootstrap: FAIL: rank %d of the job under a flood of %d connections exited with %d\n", r, f.count, code);
            failed = 1;
        }
    }
    kill(fpid, SIGKILL);
    waitpid(fpid, NULL, 0);
    if (failed) {
        log_has(log0, "(showing rank 0's log)");
        return 1;
    }
    return 0;
}

/* 300 idle connections and 50 stuck after a hello, refilled as rank 0 drops them, while a
 * 4-rank job forms: each rank must join within 8 s (before: every slot full, the job timed out). */
static int test_flood(void)
{
    char log0[256];

    g_mode = "fork, flood";
    log_path(log0, sizeof(log0), "flood");
    if (run_flooded_job(300, 50, 0, log0, 8.0)) return 1;
    if (!log_has(log0, "connections in all were dropped before finishing a handshake")) FAIL("rank 0 did not report the flood it dropped");
    if (!log_lacks(log0, ", 0 evicted from the")) FAIL("rank 0 never had to evict: the flood did not fill its slots");
    if (!log_lacks(log0, " ERROR bootstrap: rank 0:")) FAIL("rank 0 logged an error while the job formed");
    unlink(log0);
    printf("test_bootstrap: a 4-rank job forms while 300 strangers hold connections to rank 0\n");
    return 0;
}

/* The same under a fd limit of 40 on rank 0: accept fails with EMFILE; rank 0 warns, drops one
 * connection and goes on (before: the job aborted). */
static int test_fd_limit(void)
{
    char log0[256];

    g_mode = "fork, fd limit";
    log_path(log0, sizeof(log0), "fdlimit");
    if (run_flooded_job(300, 50, 40, log0, 8.0)) return 1;
    if (!log_has(log0, "the open-file limit, ulimit -n, is reached")) FAIL("rank 0 did not warn about the open-file limit");
    if (!log_lacks(log0, " ERROR bootstrap: rank 0:")) FAIL("rank 0 logged an error while the job formed");
    unlink(log0);
    printf("test_bootstrap: a 4-rank job forms under a flood with rank 0 at its open-file limit\n");
    return 0;
}

/* A process that took rank 0's port without the key: a joiner must refuse it and send nothing
 * that reveals the key. variant 0 answers with a made-up proof, 1 welcomes at once. */
static int test_forged_root(void)
{
    for (int variant = 0; variant < 2; variant++) {
        job_arg_t j;
        struct sockaddr_in sa;
        uint8_t seen[4096];
        size_t nseen = 0;
        char logj[256];
        int lfd, cfd, one = 1;
        pid_t pid;

        log_path(logj, sizeof(logj), "forged");
        memset(&j, 0, sizeof(j));
        EXPECT_RC(gshmemi_uid_create(&j.uid), GSHMEMI_OK);
        gshmemi_uid_close_listener(); /* rank 0 is gone; its port is free */
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        memcpy(&sa.sin_addr, j.uid.addr, 4);
        sa.sin_port = j.uid.port;
        if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
            bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 8) != 0)
            FAIL("the forged root cannot listen on rank 0's port: %s", strerror(errno));
        j.rank = 1;
        j.nranks = 2;
        j.timeout = 5;
        j.variant = JOB_CHECKS;
        pid = spawn_logged(job_child, &j, logj);
        {
            struct pollfd p = {lfd, POLLIN, 0};
            struct timeval tv = {1, 0};
            ssize_t n;
            if (poll(&p, 1, 5000) != 1 || (cfd = accept(lfd, NULL, NULL)) < 0) FAIL("the joiner never connected to the forged root");
            setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            while (nseen < GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES &&
                   (n = recv(cfd, seen + nseen, sizeof(seen) - nseen, 0)) > 0)
                nseen += (size_t)n;
            if (nseen < GSHMEMI_UID_HDR_BYTES) FAIL("the joiner sent the forged root %zu bytes, not a hello", nseen);
            {
                uint8_t out[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES + 8];
                gshmemi_uid_hdr_t h;
                memset(&h, 0, sizeof(h));
                h.magic = GSHMEMI_UID_MSG_MAGIC;
                h.version = GSHMEMI_UID_PROTO_VERSION;
                h.op = variant == 0 ? GSHMEMI_UID_OP_CHALLENGE : GSHMEMI_UID_OP_WELCOME;
                h.arg = variant == 0 ? 0 : 2;
                h.len = variant == 0 ? GSHMEMI_UID_NONCE_BYTES + 8 : 0;
                memcpy(out, &h, sizeof(h));
                for (size_t i = sizeof(h); i < sizeof(out); i++) out[i] = (uint8_t)rand();
                (void)!send(cfd, out, sizeof(h) + (size_t)h.len, MSG_NOSIGNAL);
            }
            /* everything the joiner sends until it gives up */
            while ((n = recv(cfd, seen + nseen, sizeof(seen) - nseen, 0)) > 0) nseen += (size_t)n;
            close(cfd);
        }
        close(lfd);
        CHECK_CODE(wait_code(pid, 10), status_code(GSHMEMI_ERR_INVALID), "a joiner facing a forged rank 0");
        if (!log_has(logj, variant == 0 ? "did not prove this job's key: it is not this job's rank 0" : "where rank 0's challenge belongs"))
            FAIL("the joiner's message does not say the forged rank 0 is not this job's");
        for (size_t i = 0; i + 8 <= nseen; i++)
            if (!memcmp(seen + i, &j.uid.key[0], 8) || !memcmp(seen + i, &j.uid.key[1], 8))
                FAIL("the forged rank 0 received a half of the job key at byte %zu", i);
        unlink(logj);
    }
    printf("test_bootstrap: a joiner refuses a rank 0 that cannot prove the key, and sends it nothing of the key\n");
    return 0;
}

/* Rank 3 of 4 proves itself, then is killed while waiting for the welcome (rank 2 has not come
 * yet): ranks 0 and 1 must fail init at once naming rank 3 (before: init succeeded, or timed
 * out on rank 2). */
typedef struct {
    gshmemi_uid_t uid;
    int ready_fd;
} raw_join_arg_t;

static int raw_join_child(void *p)
{
    raw_join_arg_t *a = p;
    uint8_t hello[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES], in[GSHMEMI_UID_HDR_BYTES + 24];
    uint8_t out[GSHMEMI_UID_HDR_BYTES + 8];
    gshmemi_uid_msg_t m;
    gshmemi_uid_hdr_t h;
    const char *why;
    size_t got = 0;
    uint64_t proof;
    int fd = -1;
    double end = now_s() + 10;

    while (fd < 0 && now_s() < end) {
        fd = connect_to(&a->uid, 0);
        if (fd < 0) usleep(10000);
    }
    if (fd < 0) return 2;
    fake_hello(hello, 3, 4);
    if (send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) return 2;
    while (got < sizeof(in)) {
        ssize_t n = recv(fd, in + got, sizeof(in) - got, 0);
        if (n <= 0) return 2;
        got += (size_t)n;
    }
    if (gshmemi_uid_msg_decode(in, got, &m, &why) != (long)sizeof(in) || m.hdr.op != GSHMEMI_UID_OP_CHALLENGE) return 2;
    proof = gshmemi_uid_proof(a->uid.key, 'J', hello + GSHMEMI_UID_HDR_BYTES, m.nonce, 3, 4);
    memcpy(&h, hello, sizeof(h));
    h.op = GSHMEMI_UID_OP_PROOF;
    h.len = 8;
    memcpy(out, &h, sizeof(h));
    memcpy(out + sizeof(h), &proof, 8);
    if (send(fd, out, sizeof(out), MSG_NOSIGNAL) != (ssize_t)sizeof(out)) return 2;
    (void)!write(a->ready_fd, "p", 1);
    pause(); /* waiting for the welcome, until killed */
    return 0;
}

static int test_dead_before_welcome(void)
{
    job_arg_t a[2];
    raw_join_arg_t rj;
    char log0[256], log1[256], c;
    pid_t pid[2], p3;
    int pipefd[2];
    double t0;

    g_mode = "fork, death before the welcome";
    log_path(log0, sizeof(log0), "dead0");
    log_path(log1, sizeof(log1), "dead1");
    memset(a, 0, sizeof(a));
    EXPECT_RC(gshmemi_uid_create(&a[0].uid), GSHMEMI_OK);
    for (int r = 0; r < 2; r++) {
        a[r] = a[0];
        a[r].rank = r;
        a[r].nranks = 4;
        a[r].timeout = 10;
        a[r].delay = 0;
        a[r].variant = JOB_CHECKS;
    }
    pid[0] = spawn_logged(job_child, &a[0], log0);
    gshmemi_uid_close_listener();
    pid[1] = spawn_logged(job_child, &a[1], log1);
    if (pipe(pipefd) != 0) FAIL("pipe: %s", strerror(errno));
    rj.uid = a[0].uid;
    rj.ready_fd = pipefd[1];
    p3 = spawn(raw_join_child, &rj);
    close(pipefd[1]);
    if (read(pipefd[0], &c, 1) != 1) FAIL("the hand-made rank 3 did not get through the handshake (exit %d)", wait_code(p3, 5));
    close(pipefd[0]);
    usleep(1000000); /* rank 0 reads the proof and admits rank 3 (a round trip; ample on a loaded host) */
    t0 = now_s();
    kill(p3, SIGKILL);
    waitpid(p3, NULL, 0);
    CHECK_CODE(wait_code(pid[0], 30), status_code(GSHMEMI_ERR_REMOTE), "rank 0 after rank 3 died before the welcome");
    CHECK_CODE(wait_code(pid[1], 30), status_code(GSHMEMI_ERR_REMOTE), "rank 1 after rank 3 died before the welcome");
    if (now_s() - t0 > 5) FAIL("ranks 0 and 1 needed %.1f s to notice rank 3's death", now_s() - t0);
    if (!log_has(log0, "rank 3 closed its connection") || !log_has(log1, "rank 0 lost its connection to rank 3"))
        FAIL("the messages do not name rank 3");
    unlink(log0);
    unlink(log1);
    printf("test_bootstrap: a rank killed while waiting for the welcome fails init on every rank, naming it\n");
    return 0;
}

/* A stand-in rank 0 that knows the key: it turns the first connection away as busy (as rank 0
 * does when it evicts), then completes the handshake on the second. The joiner must connect
 * again, prove the key, and be welcomed. */
static int test_busy_retry(void)
{
    job_arg_t j;
    struct sockaddr_in sa;
    int lfd, one = 1;
    pid_t pid;

    memset(&j, 0, sizeof(j));
    EXPECT_RC(gshmemi_uid_create_flags(&j.uid, GSHMEMI_UID_THIS_HOST), GSHMEMI_OK);
    gshmemi_uid_close_listener();
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_addr, j.uid.addr, 4);
    sa.sin_port = j.uid.port;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 8) != 0)
        FAIL("the stand-in rank 0 cannot listen: %s", strerror(errno));
    j.rank = 1;
    j.nranks = 2;
    j.timeout = 5;
    j.variant = JOB_EXIT_AFTER_INIT;
    pid = spawn(job_child, &j);
    for (int attempt = 0; attempt < 2; attempt++) {
        uint8_t in[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES], out[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES + 8];
        struct pollfd p = {lfd, POLLIN, 0};
        struct timeval tv = {5, 0};
        gshmemi_uid_msg_t m;
        gshmemi_uid_hdr_t h;
        const char *why;
        size_t got = 0;
        uint64_t proof;
        int cfd;

        if (poll(&p, 1, 5000) != 1 || (cfd = accept(lfd, NULL, NULL)) < 0) FAIL("connection %d of the joiner never came", attempt + 1);
        setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (got < sizeof(in)) {
            ssize_t n = recv(cfd, in + got, sizeof(in) - got, 0);
            if (n <= 0) FAIL("connection %d: no whole hello", attempt + 1);
            got += (size_t)n;
        }
        if (gshmemi_uid_msg_decode(in, got, &m, &why) != (long)got || m.hdr.op != GSHMEMI_UID_OP_HELLO || m.hdr.src != 1 ||
            m.hdr.arg != 2)
            FAIL("connection %d: the hello does not decode as rank 1 of 2", attempt + 1);
        memset(&h, 0, sizeof(h));
        h.magic = GSHMEMI_UID_MSG_MAGIC;
        h.version = GSHMEMI_UID_PROTO_VERSION;
        if (attempt == 0) {
            h.op = GSHMEMI_UID_OP_REJECT;
            h.arg = GSHMEMI_UID_REJECT_BUSY;
            (void)!send(cfd, &h, sizeof(h), MSG_NOSIGNAL);
            close(cfd);
            continue;
        }
        h.op = GSHMEMI_UID_OP_CHALLENGE;
        h.len = GSHMEMI_UID_NONCE_BYTES + 8;
        memcpy(out, &h, sizeof(h));
        for (int i = 0; i < GSHMEMI_UID_NONCE_BYTES; i++) out[sizeof(h) + i] = (uint8_t)rand();
        proof = gshmemi_uid_proof(j.uid.key, 'R', m.nonce, out + sizeof(h), 1, 2);
        memcpy(out + sizeof(h) + GSHMEMI_UID_NONCE_BYTES, &proof, 8);
        (void)!send(cfd, out, sizeof(out), MSG_NOSIGNAL);
        got = 0;
        while (got < GSHMEMI_UID_HDR_BYTES + 8) {
            ssize_t n = recv(cfd, in + got, GSHMEMI_UID_HDR_BYTES + 8 - got, 0);
            if (n <= 0) FAIL("no proof from the joiner");
            got += (size_t)n;
        }
        {
            gshmemi_uid_msg_t pm;
            if (gshmemi_uid_msg_decode(in, got, &pm, &why) != (long)got || pm.hdr.op != GSHMEMI_UID_OP_PROOF)
                FAIL("the joiner's second message is not a proof");
            if (pm.proof != gshmemi_uid_proof(j.uid.key, 'J', m.nonce, out + sizeof(h), 1, 2)) FAIL("the joiner's proof is wrong");
        }
        memset(&h, 0, sizeof(h));
        h.magic = GSHMEMI_UID_MSG_MAGIC;
        h.version = GSHMEMI_UID_PROTO_VERSION;
        h.op = GSHMEMI_UID_OP_WELCOME;
        h.arg = 2;
        (void)!send(cfd, &h, sizeof(h), MSG_NOSIGNAL);
        CHECK_CODE(wait_code(pid, 10), 0, "a joiner turned away once as busy");
        close(cfd);
    }
    close(lfd);
    printf("test_bootstrap: a joiner told 'busy' connects again and is welcomed\n");
    return 0;
}

static int mode_fork(void)
{
    if (test_local() || test_job_with_intruders() || test_late_root() || test_vanished_peer() || test_stalled_peer() || test_mismatch() ||
        test_timeouts() || test_wire() || test_forged_root() || test_busy_retry() || test_dead_before_welcome() || test_flood() || test_fd_limit())
        return 1;
    printf("test_bootstrap: all uid bootstrap checks passed\n");
    return 0;
}

/* ---------------------------------------------------------------- launched modes */

static int mode_env(void)
{
    gshmemi_bootstrap_t *bs = NULL;
    gshmemi_uid_t uid;

    g_mode = "env";
    if (gshmemi_env_init() != GSHMEMI_OK) FAIL("the GSHMEM_ environment is malformed");
    gshmemi_launcher_note(GSHMEMI_PE_IN_JOB); /* as shmem_init does */
    if (!gshmemi_env.BOOTSTRAP_UID[0] || gshmemi_env.RANK < 0 || gshmemi_env.NRANKS < 1)
        FAIL("--env needs GSHMEM_BOOTSTRAP_UID, GSHMEM_RANK and GSHMEM_NRANKS: run it under gshmemrun");
    EXPECT_RC(gshmemi_uid_from_string(gshmemi_env.BOOTSTRAP_UID, &uid), GSHMEMI_OK);
    {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, uid.addr, ip, sizeof(ip));
        printf("test_bootstrap: rank %d: rank 0 listens on %s\n", gshmemi_env.RANK, ip);
    }
    if (gshmemi_env.BOOTSTRAP_LISTEN_FD >= 0) EXPECT_RC(gshmemi_uid_adopt_listener(gshmemi_env.BOOTSTRAP_LISTEN_FD, &uid), GSHMEMI_OK);
    EXPECT_RC(gshmemi_bootstrap_uid_init(&uid, gshmemi_env.RANK, gshmemi_env.NRANKS, gshmemi_env.BOOTSTRAP_TIMEOUT, &bs), GSHMEMI_OK);
    if (run_checks(bs)) return 1;
    /* as shmem_finalize does: the note, then the final barrier */
    gshmemi_launcher_note(GSHMEMI_PE_FINALIZED);
    EXPECT_RC(bs->barrier(bs), GSHMEMI_OK);
    EXPECT_RC(bs->finalize(bs), GSHMEMI_OK);
    return 0;
}

static int mode_note(const char *what)
{
    static const struct {
        const char *name;
        int state;
    } states[] = {{"I", GSHMEMI_PE_IN_JOB}, {"F", GSHMEMI_PE_FINALIZED}, {"X", GSHMEMI_PE_GLOBAL_EXIT}, {"-", GSHMEMI_PE_OUTSIDE}};

    g_mode = "note";
    if (gshmemi_env_init() != GSHMEMI_OK) FAIL("the GSHMEM_ environment is malformed");
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
        if (strcmp(what, states[i].name)) continue;
        gshmemi_launcher_note(states[i].state);
        return 0;
    }
    FAIL("--note wants I, F, X or -, not '%s'", what);
}

static int mode_pmix(void)
{
    gshmemi_bootstrap_t *bs = NULL;
    int rc;

    g_mode = "pmix";
    rc = gshmemi_bootstrap_pmix_init(60.0, &bs);
    if (rc == GSHMEMI_ERR_UNSUPPORTED) {
        printf("test_bootstrap: built without PMIx: skipped\n");
        return SKIP;
    }
    if (rc != GSHMEMI_OK && !gshmemi_bootstrap_pmix_detected()) {
        printf("test_bootstrap: not started by a PMIx launcher (run it under mpirun): skipped\n");
        return SKIP;
    }
    EXPECT_RC(rc, GSHMEMI_OK);
    if (run_checks(bs)) return 1;
    EXPECT_RC(bs->finalize(bs), GSHMEMI_OK);
    return 0;
}

/* Creates a unique id the way shmemx_get_uniqueid does and prints the address rank 0 listens on. */
static int mode_uid_addr(void)
{
    gshmemi_uid_t uid;
    char ip[INET_ADDRSTRLEN] = "?";
    int rc = gshmemi_uid_create(&uid);

    if (rc != GSHMEMI_OK) {
        printf("test_bootstrap: gshmemi_uid_create failed: %s\n", gshmemi_strerror(rc));
        return 1;
    }
    inet_ntop(AF_INET, uid.addr, ip, sizeof(ip));
    printf("test_bootstrap: rank 0 listens on %s\n", ip);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 1) return mode_fork();
    if (argc == 2 && !strcmp(argv[1], "--env")) return mode_env();
    if (argc == 2 && !strcmp(argv[1], "--pmix")) return mode_pmix();
    if (argc == 2 && !strcmp(argv[1], "--uid-addr")) return mode_uid_addr();
    if (argc == 3 && !strcmp(argv[1], "--note")) return mode_note(argv[2]);
    fprintf(stderr, "usage: test_bootstrap [--env | --pmix | --uid-addr | --note I|F|X|-]\n");
    return 2;
}
