/* The runtime's per-process state. */
#ifndef GSHMEMI_STATE_H
#define GSHMEMI_STATE_H

#include "../heap/heap.h"
#include "bootstrap.h"
#include "cudawrap.h"
#include "env.h"
#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What each PE tells the others at init. */
typedef struct {
    uint64_t host_hash;  /* equal for PEs of one host */
    int32_t pid;
    int32_t local_index; /* index among the PEs of its host, in rank order */
    CUuuid uuid;         /* its GPU */
} gshmemi_peer_info_t;

struct gshmemi_transport;

/* A team slot on the host: the device descriptor (device addresses) and whether it is taken. */
typedef struct {
    int in_use;
    gshmemi_team_dev_t dev;
} gshmemi_team_host_t;

typedef struct {
    int initialized;
    int my_pe, n_pes;
    int my_local, local_size;
    int *local_pe;                 /* [local_size] global PE of each local index */
    gshmemi_peer_info_t *peers;    /* [n_pes] */
    const struct gshmemi_transport **pe_transport; /* [n_pes] */
    char **peer_base;              /* [n_pes] host copy of where each PE's heap is mapped here */
    char **d_peer_base;            /* the same table in device memory */
    int device;
    CUdevice cudev;
    CUcontext ctx;
    cudaStream_t stream;           /* internal stream of host-initiated operations */
    gshmemi_bootstrap_t *bs;
    gshmemi_heap_t heap;
    gshmemi_device_state_t dstate;
    /* teams (runtime/team.c) */
    int max_teams;
    gshmemi_team_host_t *teams;    /* [max_teams] */
    gshmemi_team_dev_t *d_teams;   /* the same descriptors in device memory */
    uint64_t *d_seq;               /* [max_teams][GSHMEMI_COLL_SLICES] sequence counters */
    char *psync_pool;              /* symmetric: max_teams slots of psync_slot bytes */
    size_t psync_slot;
    uint64_t *team_scratch;        /* symmetric: 2 words for agreeing on a free slot */
    char *simple_pool;             /* symmetric: the world team's SIMPLE flags and buffers, or NULL */
    char *ll128_pool;              /* symmetric: the world team's LL128 buffers, or NULL */
    uint64_t *d_simple_steps;      /* the world team's SIMPLE step counters (device memory) */
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
/* Host-side check that [ptr, ptr+len) lies in this PE's heap. */
int gshmemi_in_heap(const void *ptr, size_t len);

/* runtime/team.c */
int gshmemi_teams_init(void);      /* pSync pool, counters, the predefined teams */
void gshmemi_teams_fini(void);
/* The team's host descriptor, or NULL with a logged reason naming the routine. */
const gshmemi_team_dev_t *gshmemi_team_lookup(shmem_team_t team, const char *routine);
/* The same, and NULL with a logged reason when this PE is not a member. */
const gshmemi_team_dev_t *gshmemi_team_member(shmem_team_t team, const char *routine);

/* collectives/: launchers of the stream-ordered kernels. */
/* Barrier and sync are one kernel: its release signal already is the quiet a barrier needs. */
int gshmemi_launch_barrier(shmem_team_t team, cudaStream_t stream, const char *routine);
int gshmemi_launch_quiet(cudaStream_t stream);
/* Checks the arguments of a collective, picks its protocol and slices, and enqueues it. */
int gshmemi_coll_launch(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op,
                        cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
