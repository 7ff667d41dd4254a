/* What the tests against the fake libibverbs (FAKE_IBVERBS, its path, from the build) share: a
 * function of the fake that the code under test already loaded (the tests call its knobs
 * directly), and the allgather of a bootstrap of 2 PEs where PE 1 mirrors PE 0, so PE 1's heap is
 * PE 0's own. Include after <cmocka.h>. */
#ifndef GSHMEM_TEST_FAKE_IBVERBS_HELPERS_H
#define GSHMEM_TEST_FAKE_IBVERBS_HELPERS_H

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "runtime/base/bootstrap.h"
#include "runtime/base/log.h" /* GSHMEMI_OK */

static void *fake_sym(const char *name)
{
    void *h = dlopen(FAKE_IBVERBS, RTLD_NOW | RTLD_NOLOAD), *f;
    assert_non_null(h);
    f = dlsym(h, name);
    assert_non_null(f);
    dlclose(h);
    return f;
}

static int mirror_allgather(gshmemi_bootstrap_t *bs, void *buf, size_t len)
{
    (void)bs;
    memcpy((char *)buf + len, buf, len);
    if (len == 2 * sizeof(uint32_t)) {
        /* the QP numbers: PE 1's QP for PE 0 is the one PE 0 made for PE 1 (a loopback) */
        uint32_t *q = buf;
        q[2] = q[1];
        q[3] = 0;
    }
    return GSHMEMI_OK;
}

#endif
