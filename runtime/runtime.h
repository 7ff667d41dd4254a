/* What the other layers (collectives/, the host API) may ask of the runtime without seeing its
 * state (runtime/state.h). */
#ifndef GSHMEMI_RUNTIME_H
#define GSHMEMI_RUNTIME_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when shmem_init has completed; otherwise logs "<routine> called before shmem_init" under
 * subsys (with the caller's file and line) and returns 0. The one check of every public entry point. */
#define gshmemi_require_init(subsys, routine) gshmemi_require_init_at(subsys, routine, __FILE__, __LINE__)
int gshmemi_require_init_at(const char *subsys, const char *routine, const char *file, int line);
/* Host-side check that [ptr, ptr+len) lies in this PE's heap. */
int gshmemi_in_heap(const void *ptr, size_t len);
/* The internal stream of host-initiated operations (the blocking forms run and wait on it). */
cudaStream_t gshmemi_runtime_stream(void);
/* The device state every module holds (policy knobs, the world team). */
const gshmemi_device_state_t *gshmemi_runtime_dstate(void);

/* Host side: what this PE's device code posted to a remote transport is complete (shmem_quiet,
 * shmem_finalize); routine names the caller in errors. */
int gshmemi_transports_quiet(const char *routine);

/* runtime/team.c */
/* The team's host descriptor, or NULL with a logged reason naming the routine. */
const gshmemi_team_dev_t *gshmemi_team_lookup(shmem_team_t team, const char *routine);
/* The same, and NULL with a logged reason when this PE is not a member. */
const gshmemi_team_dev_t *gshmemi_team_member(shmem_team_t team, const char *routine);

#ifdef __cplusplus
}
#endif
#endif
