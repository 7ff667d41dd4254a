/* A function of the fake libibverbs (FAKE_IBVERBS, its path, from the build) that the code under
 * test already loaded: the tests call its knobs directly. Include after <cmocka.h>. */
#ifndef GSHMEM_TEST_FAKE_IBVERBS_SYM_H
#define GSHMEM_TEST_FAKE_IBVERBS_SYM_H

#include <dlfcn.h>

static void *fake_sym(const char *name)
{
    void *h = dlopen(FAKE_IBVERBS, RTLD_NOW | RTLD_NOLOAD), *f;
    assert_non_null(h);
    f = dlsym(h, name);
    assert_non_null(f);
    dlclose(h);
    return f;
}

#endif
