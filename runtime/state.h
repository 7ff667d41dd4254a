/* The runtime's per-process state, and what its files (init, teams, the host API) ask of each
 * other. The layers below see none of it: collectives/ gets a table of it (collectives/launch.h),
 * the transports a context (transports/transport.h). */
#ifndef GSHMEMI_STATE_H
#define GSHMEMI_STATE_H

#include "../heap/heap.h"
#include "../transports/transport.h"
#include "base/bootstrap.h"
#include "base/cudawrap.h"
#include "base/env.h"
#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A team slot on the host: the device descriptor (device addresses) and whether it is taken. */
typedef struct {
    int in_use;
    int internal; /* the collectives' own (the world team's levels): no handle reaches it */
    gshmemi_team_dev_t dev;
} gshmemi_team_host_t;

typedef struct {
    int initialized;
    int my_pe, n_pes;
    int my_local, local_size;      /* among the PEs of this host (GSHMEM_HOST_ID, else the machine) */
    int *local_pe;                 /* [local_size] global PE of each local index */
    int phys_local, phys_size;     /* among the PEs of this physical machine */
    gshmemi_peer_info_t *peers;    /* [n_pes] */
    const gshmemi_transport_t **pe_transport; /* [n_pes] */
    int *route;                    /* [n_pes] GSHMEMI_ROUTE_* (transports/route.h) */
    int job_has_remote;            /* some PE of the job reaches some peer through the proxy (the same on every PE) */
    char **peer_base;              /* [n_pes] host copy of where each PE's heap is mapped here */
    char **d_peer_base;            /* the same table in device memory */
    char **host_view;              /* [n_pes] where this machine's PEs' heaps are mapped here (copy engine) */
    int device;
    CUdevice cudev;
    CUcontext ctx;
    cudaStream_t stream;           /* internal stream of host-initiated operations */
    gshmemi_bootstrap_t *bs;
    gshmemi_heap_t heap;
    gshmemi_transport_ctx_t tctx;  /* what the transports see of the above */
    int transports_up;             /* transports (in table order) whose init ran: finalize those */
    gshmemi_device_state_t dstate;
    /* teams (runtime/team.c) */
    int max_teams;
    gshmemi_team_host_t *teams;    /* [max_teams] */
    gshmemi_team_dev_t *d_teams;   /* the same descriptors in device memory */
    uint64_t *d_seq;               /* [max_teams][GSHMEMI_COLL_SLICES] sequence counters */
    char *psync_pool;              /* symmetric: max_teams slots of psync_slot bytes */
    size_t psync_slot;
    uint64_t *team_scratch;        /* symmetric: 2 words for agreeing on a free slot */
    uint64_t *team_mask;           /* pinned: the host's side of that agreement (copies to and from pageable memory
                                    * are synchronous; these stay ordered on the stream like the rest) */
    char *simple_pool;             /* symmetric: the world team's SIMPLE flags and buffers, or NULL */
    char *ll128_pool;              /* symmetric: the world team's LL128 buffers, or NULL */
    uint64_t *d_simple_steps;      /* the world team's SIMPLE step counters (device memory) */
    char *team_simple_pool;        /* symmetric: the other team slots' SIMPLE buffers (jobs with remote members) */
    uint64_t *d_team_simple_steps; /* their step counters, [max_teams][slices] (device memory) */
    uint64_t *d_levels_steps;      /* the step counters of the world team's level across hosts (device memory) */
} gshmemi_state_t;

extern gshmemi_state_t gshmemi_state;

/* runtime/modules.c: the CUDA modules that include gshmem.h. */
/* Refuses (logged, GSHMEMI_ERR_INVALID) if a module registered so far was built against another
 * device state layout; shmem_init's first step. */
int gshmemi_modules_check(void);
/* Calls every registered module's state update; at init and whenever dstate changes. */
int gshmemi_modules_update(void);
/* Finalize: every module's device copy back to zero ("not initialized"). */
void gshmemi_modules_clear(int device);
/* Whether gshmemi_module_preload loads the kernels of the modules it is given (modules.c says
 * when); resets the counts. */
void gshmemi_modules_set_preload(int wanted);
/* Modules (and, in *kernels, kernels) loaded by gshmemi_module_preload since the last set. */
int gshmemi_modules_preloaded(int *kernels);

/* runtime/team.c */
int gshmemi_teams_init(void);      /* pSync pool, counters, the predefined teams */
void gshmemi_teams_fini(void);

/* 1 when shmem_init has completed; otherwise logs "<routine> called before shmem_init" under
 * subsys (with the caller's file and line) and returns 0: the check of every entry point of the
 * runtime (collectives/ makes the same through its table). */
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
