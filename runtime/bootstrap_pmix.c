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

#include <limits.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    pmix_proc_t me;
    pmix_proc_t all; /* our namespace, wildcard rank: fences over the whole job */
    int timeout;     /* PMIX_TIMEOUT is whole seconds */
    uint64_t seq;
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

static int fence(pmix_state_t *st, int collect, const char *what)
{
    pmix_info_t info[2];
    bool yes = true;
    size_t n = 1;
    pmix_status_t rc;

    info_timeout(&info[0], st);
    if (collect) {
        PMIX_INFO_CONSTRUCT(&info[1]);
        PMIX_INFO_LOAD(&info[1], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        n = 2;
    }
    rc = PMIx_Fence(&st->all, 1, info, n);
    for (size_t i = 0; i < n; i++) PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_SUCCESS) {
        GSHMEMI_ERROR("bootstrap", "%s #%llu: PMIx_Fence failed: %s (%d)%s", what, (unsigned long long)st->seq, PMIx_Error_string(rc),
                      (int)rc, rc == PMIX_ERR_TIMEOUT ? "; some rank did not reach it in time (GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait)" : "");
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

static int get(pmix_state_t *st, int rank, const char *key, void *buf, size_t len)
{
    pmix_proc_t proc;
    pmix_info_t info;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    int ret = GSHMEMI_OK;

    PMIX_LOAD_PROCID(&proc, st->me.nspace, (pmix_rank_t)rank);
    info_timeout(&info, st);
    rc = PMIx_Get(&proc, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        GSHMEMI_ERROR("bootstrap", "PMIx_Get(rank %d, \"%s\") failed: %s (%d)%s", rank, key, PMIx_Error_string(rc), (int)rc,
                      rc == PMIX_ERR_TIMEOUT ? "; GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait" : "");
        return pmix_status(rc);
    }
    if (!val || val->type != PMIX_BYTE_OBJECT || val->data.bo.size != len) {
        GSHMEMI_ERROR("bootstrap", "PMIx_Get(rank %d, \"%s\"): expected %zu bytes, got %zu (type %d): the ranks passed different lengths",
                      rank, key, len, val && val->type == PMIX_BYTE_OBJECT ? val->data.bo.size : 0, val ? (int)val->type : -1);
        ret = GSHMEMI_ERR_INVALID;
    } else if (len) {
        memcpy(buf, val->data.bo.bytes, len);
    }
    if (val) PMIX_VALUE_RELEASE(val);
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
        if (r != bs->rank) GSHMEMI_CHECK(get(st, r, key, (char *)buf + (size_t)r * len, len));
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
        if (i != bs->rank) GSHMEMI_CHECK(get(st, i, key, (char *)recvbuf + (size_t)i * len, len));
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
    if (bs->rank != root) GSHMEMI_CHECK(get(st, root, key, buf, len));
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
    bs->rank = (int)st->me.rank;
    bs->nranks = size;
    GSHMEMI_INFO("bootstrap", "PMIx bootstrap: namespace %s, rank %d of %d", st->me.nspace, bs->rank, bs->nranks);
    *out = bs;
    return GSHMEMI_OK;
}

#endif
