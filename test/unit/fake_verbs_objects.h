/* What the unit tests' stand-ins for libibverbs (fake_ibverbs.c, fake_mlx5.c) share: every object
 * they hand out is counted in `live`, so that a test sees a close free them all, and the entry
 * points that only name or free one. Included once by each stand-in, after <infiniband/verbs.h>. */
#ifndef GSHMEM_TEST_FAKE_VERBS_OBJECTS_H
#define GSHMEM_TEST_FAKE_VERBS_OBJECTS_H

#include <stdlib.h>

static int live; /* objects created and not destroyed */

/* An object's destroy: freed and no longer counted. */
static int fake_free(void *obj)
{
    free(obj);
    live--;
    return 0;
}

const char *ibv_get_device_name(struct ibv_device *d) { return d->name; }

void ibv_free_device_list(struct ibv_device **list)
{
    (void)list;
    live--;
}

int ibv_close_device(struct ibv_context *c) { return fake_free(c); }

int ibv_dealloc_pd(struct ibv_pd *pd) { return fake_free(pd); }

#endif
