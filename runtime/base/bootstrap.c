/* What every bootstrap's init shares: the argument checks and the filled ops table; and what a PE
 * tells gshmemrun of its progress. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootstrap.h"
#include "env.h"
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

void gshmemi_launcher_note(int state)
{
    static int warned;
    const int sealed = F_SEAL_GROW | F_SEAL_SHRINK;
    unsigned char c = (unsigned char)state;
    struct stat st;
    int fd, rank, seals;

    (void)gshmemi_env_init(); /* shmem_global_exit may come first; a bad row keeps its default */
    fd = gshmemi_env.LAUNCHER_FD;
    rank = gshmemi_env.RANK;
    if (fd < 0) return;
    /* gshmemrun's file is a memfd sealed at one byte per rank; a descriptor of that number that is
     * anything else (a log file, a socket) must not get a byte written into it. */
    seals = fcntl(fd, F_GET_SEALS);
    if (rank < 0 || seals < 0 || (seals & sealed) != sealed || fstat(fd, &st) != 0 || st.st_size <= rank) {
        if (!warned++)
            GSHMEMI_WARN("launcher", "GSHMEM_LAUNCHER_FD=%d is not gshmemrun's sealed file with a byte for GSHMEM_RANK=%d (%s); "
                         "not written, so gshmemrun cannot tell how far this PE got",
                         fd, rank, seals < 0 ? strerror(errno) : rank < 0 ? "no rank" : "not sealed or too short");
        return;
    }
    if (pwrite(fd, &c, 1, rank) != 1 && !warned++)
        GSHMEMI_WARN("launcher", "GSHMEM_LAUNCHER_FD=%d: writing this PE's state failed: %s", fd, strerror(errno));
}
