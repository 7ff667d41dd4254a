/* What runtime/ (and the host API) call in collectives/: the launchers of the stream-ordered
 * kernels, and the table through which the runtime hands this layer what it needs of it (the
 * runtime is above collectives/, which includes none of its headers). */
#ifndef GSHMEMI_COLL_LAUNCH_H
#define GSHMEMI_COLL_LAUNCH_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What collectives/ asks of the runtime, bound by it (gshmemi_coll_bind) at shmem_init. */
typedef struct {
    /* 1 when shmem_init has completed (the check of every entry point) */
    int (*initialized)(void);
    /* the runtime's stream of host-initiated operations (the blocking forms run and wait on it) */
    cudaStream_t (*stream)(void);
    /* the device state every module holds (policy knobs, the transports in use) */
    const gshmemi_device_state_t *(*dstate)(void);
    /* the team's descriptor, or NULL with a logged reason naming the routine when the team is
     * not valid or this PE is not a member */
    const gshmemi_team_dev_t *(*team_member)(shmem_team_t team, const char *routine);
    /* 1 when [ptr, ptr+len) lies in this PE's heap */
    int (*in_heap)(const void *ptr, size_t len);
    /* symmetric memory, collective over all PEs (shmem_align's rules; NULL with a logged reason),
     * and its release (collective too) */
    void *(*sym_alloc)(size_t size);
    void (*sym_free)(void *ptr);
} gshmemi_coll_runtime_t;
/* Binds the runtime's table (it must outlive every call); before the first bind every entry point
 * refuses, as called before shmem_init. */
void gshmemi_coll_bind(const gshmemi_coll_runtime_t *rt);

/* Barrier and sync are one kernel: its release signal already is the quiet a barrier needs. */
int gshmemi_launch_barrier(shmem_team_t team, cudaStream_t stream, const char *routine);
int gshmemi_launch_quiet(cudaStream_t stream);
/* How many CTAs an on-stream DIRECT collective may take (coll/policy.h), the same on every PE:
 * the runtime sets it at init (GSHMEM_COLL_CTAS, or gshmemi_direct_ctas_auto). */
struct gshmemi_direct_ctas;
void gshmemi_coll_set_ctas(const struct gshmemi_direct_ctas *ctas);
/* The most CTAs an on-stream DIRECT collective takes (the job's agreed `most`): what a PE may give
 * one collective, under MPS its share. */
int gshmemi_coll_most_ctas(void);
/* The world team's two levels (device/coll/policy.h, gshmemi_levels_block): private teams of this
 * host's PEs and of this local index across hosts, set by the runtime at init; NULL, NULL: none. */
struct gshmemi_team_dev;
void gshmemi_coll_set_levels(const struct gshmemi_team_dev *host, const struct gshmemi_team_dev *across);
/* Checks the arguments of a collective, picks its protocol and slices, and enqueues it. */
int gshmemi_coll_launch(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op,
                        cudaStream_t stream);

/* Inside collectives/: the bound table, and the check of every entry point (1 when shmem_init
 * has completed; else logs "<routine> called before shmem_init" and returns 0). */
extern const gshmemi_coll_runtime_t *gshmemi_coll_rt;
#define gshmemi_coll_require_init(routine) gshmemi_coll_require_init_at(routine, __FILE__, __LINE__)
int gshmemi_coll_require_init_at(const char *routine, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif
