/* What runtime/ (and the host API) call in collectives/: the launchers of the stream-ordered
 * kernels. collectives/ defines them; nothing here names runtime state. */
#ifndef GSHMEMI_COLL_LAUNCH_H
#define GSHMEMI_COLL_LAUNCH_H

#include <cuda_runtime_api.h>

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Barrier and sync are one kernel: its release signal already is the quiet a barrier needs. */
int gshmemi_launch_barrier(shmem_team_t team, cudaStream_t stream, const char *routine);
int gshmemi_launch_quiet(cudaStream_t stream);
/* How many CTAs an on-stream DIRECT collective may take (coll/policy.h), the same on every PE:
 * the runtime sets it at init (GSHMEM_COLL_CTAS, or gshmemi_direct_ctas_auto). */
struct gshmemi_direct_ctas;
void gshmemi_coll_set_ctas(const struct gshmemi_direct_ctas *ctas);
/* The world team's two levels (device/coll/policy.h, gshmemi_levels_block): private teams of this
 * host's PEs and of this local index across hosts, set by the runtime at init; NULL, NULL: none. */
struct gshmemi_team_dev;
void gshmemi_coll_set_levels(const struct gshmemi_team_dev *host, const struct gshmemi_team_dev *across);
/* Checks the arguments of a collective, picks its protocol and slices, and enqueues it. */
int gshmemi_coll_launch(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op,
                        cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
