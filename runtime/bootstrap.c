/* What every bootstrap's init shares: the argument checks and the filled ops table. */
#include <stdlib.h>

#include "bootstrap.h"
#include "log.h"

int gshmemi_bootstrap_check_args(const char *who, gshmemi_bootstrap_t **out, double timeout_s)
{
    if (!out) {
        GSHMEMI_ERROR("bootstrap", "%s: out is NULL", who);
        return GSHMEMI_ERR_INVALID;
    }
    *out = NULL;
    if (!(timeout_s > 0)) {
        GSHMEMI_ERROR("bootstrap", "%s: timeout %g s must be positive (GSHMEM_BOOTSTRAP_TIMEOUT)", who, timeout_s);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

gshmemi_bootstrap_t *gshmemi_bootstrap_new(const gshmemi_bootstrap_t *ops, int rank, int nranks, size_t impl_size)
{
    gshmemi_bootstrap_t *bs = malloc(sizeof(*bs));
    void *impl = impl_size ? calloc(1, impl_size) : NULL;

    if (!bs || (impl_size && !impl)) {
        free(bs);
        free(impl);
        return NULL;
    }
    *bs = *ops;
    bs->rank = rank;
    bs->nranks = nranks;
    bs->impl = impl;
    return bs;
}
