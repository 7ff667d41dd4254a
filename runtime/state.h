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
} gshmemi_state_t;

extern gshmemi_state_t gshmemi_state;

/* Calls every registered module's state update; at init and whenever dstate changes. */
int gshmemi_modules_update(void);
/* Host-side check that [ptr, ptr+len) lies in this PE's heap. */
int gshmemi_in_heap(const void *ptr, size_t len);

/* collectives/: launchers of the stream-ordered kernels. */
int gshmemi_launch_barrier_all(cudaStream_t stream);
int gshmemi_launch_quiet(cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
