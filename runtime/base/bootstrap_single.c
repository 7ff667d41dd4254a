/* One PE, no launcher: every collective is a local copy or nothing. */
#include "bootstrap.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

static int single_allgather(gshmemi_bootstrap_t *bs, void *buf, size_t len)
{
    (void)bs, (void)buf, (void)len; /* block 0 is already in place */
    return GSHMEMI_OK;
}

static int single_alltoall(gshmemi_bootstrap_t *bs, const void *sendbuf, void *recvbuf, size_t len)
{
    (void)bs;
    if (len && sendbuf != recvbuf) memmove(recvbuf, sendbuf, len);
    return GSHMEMI_OK;
}

static int single_barrier(gshmemi_bootstrap_t *bs)
{
    (void)bs;
    return GSHMEMI_OK;
}

static int single_bcast(gshmemi_bootstrap_t *bs, void *buf, size_t len, int root)
{
    (void)buf, (void)len;
    if (root != 0) {
        GSHMEMI_ERROR("bootstrap", "bcast: root %d is not a rank (nranks %d)", root, bs->nranks);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static int single_finalize(gshmemi_bootstrap_t *bs)
{
    free(bs);
    return GSHMEMI_OK;
}

static const gshmemi_bootstrap_t single_ops = {
    .allgather = single_allgather, .alltoall = single_alltoall, .barrier = single_barrier, .bcast = single_bcast,
    .finalize = single_finalize,
};

int gshmemi_bootstrap_single_init(gshmemi_bootstrap_t **out)
{
    gshmemi_bootstrap_t *bs;

    if (!out) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_single_init: out is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    bs = gshmemi_bootstrap_new(&single_ops, 0, 1, 0);
    if (!bs) return GSHMEMI_ERR_NOMEM;
    *out = bs;
    GSHMEMI_INFO("bootstrap", "no launcher found: running as the only PE");
    return GSHMEMI_OK;
}
