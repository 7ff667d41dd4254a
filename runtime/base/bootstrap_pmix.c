/* PMIx bootstrap: rank and size come from the PMIx server of the launcher (mpirun, srun
 * --mpi=pmix, prterun). Every exchange is put + commit + fence (collecting data) + get, under
 * a fresh key per operation so no value of an earlier operation is ever read.
 * Always compiled; without GSHMEM_HAVE_PMIX only the detection remains. */
#include "bootstrap.h"

#include <string.h>

#include "log.h"

/* Detection must not call getenv() (env.c owns every GSHMEM_ variable read); it only asks whether
 * PMIx variables exist, never reads a value, so a scan of environ is enough. */
extern char **environ;

int gshmemi_bootstrap_pmix_detected(void)
{
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "PMIX_RANK=", 10) == 0 || strncmp(*e, "PMIX_NAMESPACE=", 15) == 0) return 1;
    return 0;
}

#ifndef GSHMEM_HAVE_PMIX

int gshmemi_bootstrap_pmix_init(double timeout_s, gshmemi_bootstrap_t **out)
{
    (void)timeout_s;
    if (out) *out = NULL;
    GSHMEMI_ERROR("bootstrap", "the PMIx bootstrap is unavailable: gshmem was built without PMIx (install the PMIx development "
                  "files, e.g. libpmix-dev, and configure with -Dpmix=enabled), or start the PEs with gshmemrun");
    return GSHMEMI_ERR_UNSUPPORTED;
}

#else

#include <errno.h>
#include <limits.h>
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pmix_proc_t me;
    pmix_proc_t all; /* our namespace, wildcard rank: fences over the whole job */
    int timeout;     /* PMIX_TIMEOUT is whole seconds */
    uint64_t seq;
    int rank, nranks;
    int failed;      /* status of an earlier failure: fences would no longer pair up */
} pmix_state_t;

static int pmix_status(pmix_status_t rc)
{
    if (rc == PMIX_ERR_TIMEOUT) return GSHMEMI_ERR_TIMEOUT;
    return GSHMEMI_ERR_REMOTE;
}

/* Logs the call text, PMIx's words and (for timeouts) which setting bounds the wait. */
#define GSHMEMI_PMIXCHECK(call)                                                                                   \
    do {                                                                                                          \
        pmix_status_t gshmemi_prc_ = (call);                                                                      \
        if (gshmemi_prc_ != PMIX_SUCCESS) {                                                                       \
            GSHMEMI_ERROR("bootstrap", "%s failed: %s (%d)%s", #call, PMIx_Error_string(gshmemi_prc_), (int)gshmemi_prc_, \
                          gshmemi_prc_ == PMIX_ERR_TIMEOUT ? "; GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait" : "");   \
            return pmix_status(gshmemi_prc_);                                                                     \
        }                                                                                                         \
    } while (0)

static void info_timeout(pmix_info_t *info, const pmix_state_t *st)
{
    PMIX_INFO_CONSTRUCT(info);
    PMIX_INFO_LOAD(info, PMIX_TIMEOUT, &st->timeout, PMIX_INT);
}

/* ---- which ranks are gone ----
 * After a failed fence or get, the launcher's proc table (PMIX_QUERY_PROC_TABLE) tells each rank's
 * pid, host and state. A rank is named gone when the launcher says it terminated or failed, or,
 * on this host, when its pid no longer runs (Open MPI 4's server may leave the state at "connected").
 * The query is bounded: a launcher that does not answer in time leaves the ranks unnamed. */

#define DEAD_QUERY_MAX_S 5

typedef struct {
    atomic_int phase; /* 0: waiting; 1: answered; 2: the asker gave up (the callback frees) */
    pmix_query_t query; /* PMIx reads it until the callback: kept here, not on the stack */
    char *keys[2];
    pmix_status_t status;
    int nranks, n_known;
    struct dead_rank { int known, dead; pid_t pid; pmix_proc_state_t state; char host[64]; } *ranks;
} dead_query_t;

static void dead_query_free(dead_query_t *q)
{
    if (q->query.qualifiers) PMIX_INFO_FREE(q->query.qualifiers, q->query.nqual);
    free(q->ranks);
    free(q);
}

static int proc_gone(const char *host, pid_t pid)
{
    char me[64] = "", path[64], buf[256];
    FILE *f;
    int gone = 0;

    if (pid <= 0 || gethostname(me, sizeof(me) - 1) != 0 || strcmp(me, host) != 0) return 0;
    if (kill(pid, 0) == 0 || errno == EPERM) {
        /* a zombie its launcher has not reaped yet is dead too */
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        if (f) {
            const char *p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
            gone = p && (p[2] == 'Z' || p[2] == 'X');
            fclose(f);
        }
        return gone;
    }
    return errno == ESRCH;
}

static void note_proc(dead_query_t *q, const pmix_proc_info_t *pi)
{
    struct dead_rank *r;

    if (pi->proc.rank >= (pmix_rank_t)q->nranks) return;
    r = &q->ranks[pi->proc.rank];
    r->known = 1;
    r->pid = pi->pid;
    r->state = pi->state;
    snprintf(r->host, sizeof(r->host), "%s", pi->hostname ? pi->hostname : "?");
    r->dead = pi->state == PMIX_PROC_STATE_TERMINATED || pi->state >= PMIX_PROC_STATE_ERROR || proc_gone(r->host, r->pid);
    q->n_known++;
}

/* The table comes as an array of pmix_proc_info_t, or (Open MPI 4) of infos each holding one. */
static void dead_query_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata, pmix_release_cbfunc_t release_fn,
                          void *release_cbdata)
{
    dead_query_t *q = cbdata;

    q->status = status;
    for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; i++) {
        pmix_data_array_t *da = info[i].value.data.darray;
        if (strcmp(info[i].key, PMIX_QUERY_PROC_TABLE) != 0 || info[i].value.type != PMIX_DATA_ARRAY || !da) continue;
        for (size_t j = 0; j < da->size; j++) {
            if (da->type == PMIX_PROC_INFO) {
                note_proc(q, &((pmix_proc_info_t *)da->array)[j]);
            } else if (da->type == PMIX_INFO) {
                const pmix_info_t *e = &((pmix_info_t *)da->array)[j];
                if (e->value.type == PMIX_PROC_INFO && e->value.data.pinfo) note_proc(q, e->value.data.pinfo);
            }
        }
    }
    if (release_fn) release_fn(release_cbdata);
    if (atomic_exchange(&q->phase, 1) == 2) dead_query_free(q);
}

/* Writes to out what the launcher knows of the ranks other than this one: "; gone: rank 1 (pid 42
 * on h, PROC ABORTED BY SIGNAL)", or that every rank still runs, or why nothing can be said.
 * Returns the number of ranks named gone, or -1 when the launcher told nothing. */
static int query_dead(pmix_state_t *st, char *out, size_t n)
{
    dead_query_t *q = calloc(1, sizeof(*q));
    pmix_status_t rc;
    struct timespec start, now, tick = {0, 1000000};
    size_t used = 0;
    int dead = 0, limit = st->timeout < DEAD_QUERY_MAX_S ? st->timeout : DEAD_QUERY_MAX_S;

    out[0] = '\0';
    if (!q || !(q->ranks = calloc((size_t)st->nranks, sizeof(*q->ranks)))) {
        free(q);
        return -1;
    }
    q->nranks = st->nranks;
    PMIX_QUERY_CONSTRUCT(&q->query);
    q->keys[0] = PMIX_QUERY_PROC_TABLE;
    q->query.keys = q->keys;
    PMIX_QUERY_QUALIFIERS_CREATE(&q->query, 1);
    if (!q->query.qualifiers) {
        dead_query_free(q);
        return -1;
    }
    PMIX_INFO_LOAD(&q->query.qualifiers[0], PMIX_NSPACE, st->me.nspace, PMIX_STRING);
    rc = PMIx_Query_info_nb(&q->query, 1, dead_query_cb, q);
    if (rc != PMIX_SUCCESS) {
        snprintf(out, n, "; which rank failed is unknown (PMIx_Query_info(PMIX_QUERY_PROC_TABLE): %s)", PMIx_Error_string(rc));
        dead_query_free(q);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        if (atomic_load(&q->phase) == 1) break;
        nanosleep(&tick, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < limit);
    if (atomic_exchange(&q->phase, 2) != 1) { /* the callback frees q when it comes */
        snprintf(out, n, "; which rank failed is unknown (the launcher did not answer a proc table query within %d s)", limit);
        return -1;
    }
    if (q->status != PMIX_SUCCESS || q->n_known == 0) {
        snprintf(out, n, "; which rank failed is unknown (PMIx proc table query: %s)",
                 q->status != PMIX_SUCCESS ? PMIx_Error_string(q->status) : "no ranks in the answer");
        dead_query_free(q);
        return -1;
    }
    for (int r = 0; r < q->nranks && used < n; r++) {
        if (r == st->rank || !q->ranks[r].dead) continue;
        used += (size_t)snprintf(out + used, n - used, "%s rank %d (pid %d on %s, %s)", dead++ ? "," : "; gone:", r, (int)q->ranks[r].pid,
                                 q->ranks[r].host, q->ranks[r].state >= PMIX_PROC_STATE_ERROR || q->ranks[r].state == PMIX_PROC_STATE_TERMINATED
                                     ? PMIx_Proc_state_string(q->ranks[r].state) : "no longer running");
    }
    if (!dead) snprintf(out, n, "; every rank still runs (PMIx proc table): one of them is late or stuck before this operation");
    dead_query_free(q);
    return dead;
}

/* A fence can fail the moment a rank's connection drops, before its process has finished exiting
 * and before the launcher marks it: ask again for up to a second before saying every rank runs. */
static void describe_dead(pmix_state_t *st, char *out, size_t n)
{
    struct timespec pause = {0, 100000000};

    for (int i = 0; i < 10 && query_dead(st, out, n) == 0; i++) nanosleep(&pause, NULL);
}

/* ---- bounded calls ----
 * PMIX_TIMEOUT is a request to the server, and not every server keeps it: Open MPI 4.1.6's, with
 * recovery on, never answers a PMIx_Get of a key a dead rank did not put. Fences and gets go
 * through the non-blocking calls, and this side stops waiting one second after the timeout. What
 * PMIx reads until the callback (procs, infos, key) lives in the call's record; a record given up
 * on is freed by its callback, if that ever comes. */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int phase; /* 0: waiting; 1: answered; 2: given up (the callback frees) */
    pmix_status_t status;
    pmix_proc_t proc;
    pmix_info_t info[2];
    size_t ninfo;
    char key[PMIX_MAX_KEYLEN + 1];
    char *bytes; /* a get's value, copied in the callback */
    size_t len;
    int type; /* a get's value type */
} pmix_call_t;

static pmix_call_t *call_new(pmix_state_t *st)
{
    pmix_call_t *c = calloc(1, sizeof(*c));
    pthread_condattr_t attr;

    if (!c) return NULL;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &attr);
    pthread_condattr_destroy(&attr);
    c->type = -1;
    info_timeout(&c->info[0], st);
    c->ninfo = 1;
    return c;
}

static void call_free(pmix_call_t *c)
{
    for (size_t i = 0; i < c->ninfo; i++) PMIX_INFO_DESTRUCT(&c->info[i]);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c->bytes);
    free(c);
}

/* The callbacks' last step (PMIx's progress thread). */
static void call_answered(pmix_call_t *c, pmix_status_t status)
{
    pthread_mutex_lock(&c->lock);
    c->status = status;
    if (c->phase == 2) {
        pthread_mutex_unlock(&c->lock);
        call_free(c);
        return;
    }
    c->phase = 1;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void fence_cb(pmix_status_t status, void *cbdata) { call_answered(cbdata, status); }

static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    pmix_call_t *c = cbdata;

    if (status == PMIX_SUCCESS && kv) {
        c->type = kv->type;
        if (kv->type == PMIX_BYTE_OBJECT) {
            c->len = kv->data.bo.size;
            c->bytes = malloc(c->len ? c->len : 1);
            if (!c->bytes) status = PMIX_ERR_NOMEM;
            else if (c->len) memcpy(c->bytes, kv->data.bo.bytes, c->len);
        }
    }
    call_answered(c, status);
}

/* Waits for the callback; returns its status, or PMIX_ERR_TIMEOUT (c then belongs to the callback,
 * and *gave_up says so). */
static pmix_status_t call_wait(pmix_state_t *st, pmix_call_t *c, int *gave_up)
{
    struct timespec deadline;
    pmix_status_t status;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += st->timeout >= INT_MAX - 1 ? INT_MAX / 2 : st->timeout + 1;
    pthread_mutex_lock(&c->lock);
    while (c->phase == 0)
        if (pthread_cond_timedwait(&c->cond, &c->lock, &deadline) == ETIMEDOUT) break;
    *gave_up = c->phase == 0;
    if (*gave_up) c->phase = 2;
    status = *gave_up ? PMIX_ERR_TIMEOUT : c->status;
    pthread_mutex_unlock(&c->lock);
    return status;
}

static int fence(pmix_state_t *st, int collect, const char *what)
{
    pmix_call_t *c = call_new(st);
    bool yes = true;
    int gave_up = 0;
    pmix_status_t rc;

    if (!c) return GSHMEMI_ERR_NOMEM;
    c->proc = st->all;
    if (collect) {
        PMIX_INFO_CONSTRUCT(&c->info[1]);
        PMIX_INFO_LOAD(&c->info[1], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        c->ninfo = 2;
    }
    rc = PMIx_Fence_nb(&c->proc, 1, c->info, c->ninfo, fence_cb, c);
    if (rc == PMIX_SUCCESS) rc = call_wait(st, c, &gave_up);
    if (!gave_up) call_free(c);
    if (rc != PMIX_SUCCESS) {
        char dead[512];
        describe_dead(st, dead, sizeof(dead));
        GSHMEMI_ERROR("bootstrap", "rank %d: %s #%llu: PMIx_Fence failed: %s (%d)%s%s", st->rank, what, (unsigned long long)st->seq,
                      PMIx_Error_string(rc), (int)rc,
                      rc == PMIX_ERR_TIMEOUT ? "; some rank did not reach it in time (GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait)" : "", dead);
        return pmix_status(rc);
    }
    return GSHMEMI_OK;
}

static void make_key(char *key, size_t n, uint64_t seq, int dest)
{
    if (dest < 0) snprintf(key, n, "gshmem.%llu", (unsigned long long)seq);
    else snprintf(key, n, "gshmem.%llu.%d", (unsigned long long)seq, dest);
}

static int put(const char *key, const void *buf, size_t len)
{
    pmix_value_t val;

    /* PMIx_Put copies the value; the byte object only points at our buffer. */
    memset(&val, 0, sizeof(val));
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)buf;
    val.data.bo.size = len;
    GSHMEMI_PMIXCHECK(PMIx_Put(PMIX_GLOBAL, key, &val));
    return GSHMEMI_OK;
}

static int get(pmix_state_t *st, const char *what, int rank, const char *key, void *buf, size_t len)
{
    pmix_call_t *c = call_new(st);
    pmix_status_t rc;
    int gave_up = 0, ret = GSHMEMI_OK;

    if (!c) return GSHMEMI_ERR_NOMEM;
    PMIX_LOAD_PROCID(&c->proc, st->me.nspace, (pmix_rank_t)rank);
    snprintf(c->key, sizeof(c->key), "%s", key);
    rc = PMIx_Get_nb(&c->proc, c->key, c->info, c->ninfo, get_cb, c);
    if (rc == PMIX_SUCCESS) rc = call_wait(st, c, &gave_up);
    if (rc != PMIX_SUCCESS) {
        char dead[512];
        if (!gave_up) call_free(c);
        describe_dead(st, dead, sizeof(dead));
        GSHMEMI_ERROR("bootstrap", "rank %d: %s #%llu: PMIx_Get(rank %d, \"%s\") failed: %s (%d)%s%s", st->rank, what,
                      (unsigned long long)st->seq, rank, key, PMIx_Error_string(rc), (int)rc,
                      rc == PMIX_ERR_TIMEOUT ? "; GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait" : "", dead);
        return pmix_status(rc);
    }
    if (c->type != PMIX_BYTE_OBJECT || c->len != len) {
        GSHMEMI_ERROR("bootstrap", "PMIx_Get(rank %d, \"%s\"): expected %zu bytes, got %zu (type %d): the ranks passed different lengths",
                      rank, key, len, c->type == PMIX_BYTE_OBJECT ? c->len : 0, c->type);
        ret = GSHMEMI_ERR_INVALID;
    } else if (len) {
        memcpy(buf, c->bytes, len);
    }
    call_free(c);
    return ret;
}

static int barrier_impl(gshmemi_bootstrap_t *bs)
{
    pmix_state_t *st = bs->impl;
    st->seq++;
    return fence(st, 0, "barrier");
}

static int allgather_impl(gshmemi_bootstrap_t *bs, void *buf, size_t len)
{
    pmix_state_t *st = bs->impl;
    char key[64];

    if (len == 0) return barrier_impl(bs);
    make_key(key, sizeof(key), ++st->seq, -1);
    GSHMEMI_CHECK(put(key, (char *)buf + (size_t)bs->rank * len, len));
    GSHMEMI_PMIXCHECK(PMIx_Commit());
    GSHMEMI_CHECK(fence(st, 1, "allgather"));
    for (int r = 0; r < bs->nranks; r++)
        if (r != bs->rank) GSHMEMI_CHECK(get(st, "allgather", r, key, (char *)buf + (size_t)r * len, len));
    return GSHMEMI_OK;
}

/* Rank i puts block (i->j) under "gshmem.<seq>.<j>"; rank j gets that key from every rank. */
static int alltoall_impl(gshmemi_bootstrap_t *bs, const void *sendbuf, void *recvbuf, size_t len)
{
    pmix_state_t *st = bs->impl;
    char key[64];

    if (len == 0) return barrier_impl(bs);
    ++st->seq;
    for (int j = 0; j < bs->nranks; j++) {
        if (j == bs->rank) continue;
        make_key(key, sizeof(key), st->seq, j);
        GSHMEMI_CHECK(put(key, (const char *)sendbuf + (size_t)j * len, len));
    }
    GSHMEMI_PMIXCHECK(PMIx_Commit());
    GSHMEMI_CHECK(fence(st, 1, "alltoall"));
    memmove((char *)recvbuf + (size_t)bs->rank * len, (const char *)sendbuf + (size_t)bs->rank * len, len);
    make_key(key, sizeof(key), st->seq, bs->rank);
    for (int i = 0; i < bs->nranks; i++)
        if (i != bs->rank) GSHMEMI_CHECK(get(st, "alltoall", i, key, (char *)recvbuf + (size_t)i * len, len));
    return GSHMEMI_OK;
}

static int bcast_impl(gshmemi_bootstrap_t *bs, void *buf, size_t len, int root)
{
    pmix_state_t *st = bs->impl;
    char key[64];

    if (root < 0 || root >= bs->nranks) {
        GSHMEMI_ERROR("bootstrap", "bcast: root %d is not a rank (nranks %d)", root, bs->nranks);
        return GSHMEMI_ERR_INVALID;
    }
    if (len == 0) return barrier_impl(bs);
    make_key(key, sizeof(key), ++st->seq, -1);
    if (bs->rank == root) {
        GSHMEMI_CHECK(put(key, buf, len));
        GSHMEMI_PMIXCHECK(PMIx_Commit());
    }
    GSHMEMI_CHECK(fence(st, 1, "bcast"));
    if (bs->rank != root) GSHMEMI_CHECK(get(st, "bcast", root, key, buf, len));
    return GSHMEMI_OK;
}

/* After a failure the ranks' fences no longer pair up: refuse instead of mismatching. */
static int usable(gshmemi_bootstrap_t *bs, const char *what)
{
    pmix_state_t *st = bs->impl;
    if (!st->failed) return GSHMEMI_OK;
    GSHMEMI_ERROR("bootstrap", "%s: an earlier bootstrap operation failed (%s); the bootstrap cannot be used any more", what,
                  gshmemi_strerror(st->failed));
    return st->failed;
}

static int remember(gshmemi_bootstrap_t *bs, int rc)
{
    pmix_state_t *st = bs->impl;
    if (rc != GSHMEMI_OK && rc != GSHMEMI_ERR_INVALID) st->failed = rc; /* a bad argument fails alike everywhere */
    return rc;
}

static int pmix_allgather(gshmemi_bootstrap_t *bs, void *buf, size_t len)
{
    GSHMEMI_CHECK(usable(bs, "allgather"));
    return remember(bs, allgather_impl(bs, buf, len));
}

static int pmix_alltoall(gshmemi_bootstrap_t *bs, const void *sendbuf, void *recvbuf, size_t len)
{
    GSHMEMI_CHECK(usable(bs, "alltoall"));
    return remember(bs, alltoall_impl(bs, sendbuf, recvbuf, len));
}

static int pmix_barrier(gshmemi_bootstrap_t *bs)
{
    GSHMEMI_CHECK(usable(bs, "barrier"));
    return remember(bs, barrier_impl(bs));
}

static int pmix_bcast(gshmemi_bootstrap_t *bs, void *buf, size_t len, int root)
{
    GSHMEMI_CHECK(usable(bs, "bcast"));
    return remember(bs, bcast_impl(bs, buf, len, root));
}

static int pmix_finalize(gshmemi_bootstrap_t *bs)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);

    free(bs->impl);
    free(bs);
    if (rc != PMIX_SUCCESS) {
        GSHMEMI_WARN("bootstrap", "PMIx_Finalize failed: %s (%d)", PMIx_Error_string(rc), (int)rc);
        return GSHMEMI_ERR_REMOTE;
    }
    return GSHMEMI_OK;
}

static const gshmemi_bootstrap_t pmix_ops = {
    .allgather = pmix_allgather, .alltoall = pmix_alltoall, .barrier = pmix_barrier, .bcast = pmix_bcast,
    .finalize = pmix_finalize,
};

static int job_size(pmix_state_t *st, int *size)
{
    pmix_info_t info;
    pmix_value_t *val = NULL;
    pmix_status_t rc;

    info_timeout(&info, st);
    rc = PMIx_Get(&st->all, PMIX_JOB_SIZE, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    GSHMEMI_PMIXCHECK(rc);
    if (!val || val->type != PMIX_UINT32 || val->data.uint32 < 1 || val->data.uint32 > INT_MAX) {
        GSHMEMI_ERROR("bootstrap", "PMIx_Get(PMIX_JOB_SIZE) returned type %d, not a positive uint32", val ? (int)val->type : -1);
        if (val) PMIX_VALUE_RELEASE(val);
        return GSHMEMI_ERR_REMOTE;
    }
    *size = (int)val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    return GSHMEMI_OK;
}

int gshmemi_bootstrap_pmix_init(double timeout_s, gshmemi_bootstrap_t **out)
{
    gshmemi_bootstrap_t *bs;
    pmix_state_t *st;
    pmix_status_t prc;
    int size = 0, rc;

    GSHMEMI_CHECK(gshmemi_bootstrap_check_args("gshmemi_bootstrap_pmix_init", out, timeout_s));
    bs = gshmemi_bootstrap_new(&pmix_ops, 0, 0, sizeof(*st));
    if (!bs) return GSHMEMI_ERR_NOMEM;
    st = bs->impl;
    /* Whole seconds, rounded up (no libm: gshmemrun links this file too). */
    st->timeout = timeout_s >= INT_MAX ? INT_MAX : (int)timeout_s;
    if (st->timeout < timeout_s && st->timeout < INT_MAX) st->timeout++;
    prc = PMIx_Init(&st->me, NULL, 0);
    if (prc != PMIX_SUCCESS) {
        GSHMEMI_ERROR("bootstrap", "PMIx_Init failed: %s (%d)%s", PMIx_Error_string(prc), (int)prc,
                      gshmemi_bootstrap_pmix_detected() ? "" : " (this process was not started by a PMIx launcher such as mpirun or srun --mpi=pmix)");
        free(bs);
        free(st);
        return pmix_status(prc);
    }
    PMIX_LOAD_PROCID(&st->all, st->me.nspace, PMIX_RANK_WILDCARD);
    rc = job_size(st, &size);
    if (rc == GSHMEMI_OK && (st->me.rank >= (pmix_rank_t)size)) {
        GSHMEMI_ERROR("bootstrap", "PMIx says this process is rank %u of a job of %d", (unsigned)st->me.rank, size);
        rc = GSHMEMI_ERR_REMOTE;
    }
    if (rc != GSHMEMI_OK) {
        PMIx_Finalize(NULL, 0);
        free(bs);
        free(st);
        return rc;
    }
    bs->rank = st->rank = (int)st->me.rank;
    bs->nranks = st->nranks = size;
    GSHMEMI_INFO("bootstrap", "PMIx bootstrap: namespace %s, rank %d of %d", st->me.nspace, bs->rank, bs->nranks);
    *out = bs;
    return GSHMEMI_OK;
}

#endif
