/* How this PE reaches each peer: the one rule, as a pure function of what every PE told the others
 * at init and the settings, so a unit test can walk its cases without GPUs or NICs. */
#ifndef GSHMEMI_ROUTE_H
#define GSHMEMI_ROUTE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    GSHMEMI_ROUTE_NONE = 0,    /* unreachable: init fails, naming why */
    GSHMEMI_ROUTE_P2P,         /* loads and stores through the mapped heap */
    GSHMEMI_ROUTE_PROXY_COPY,  /* proxy thread, copy engine (a PE of this machine) */
    GSHMEMI_ROUTE_PROXY_VERBS, /* proxy thread, ibverbs RC (a PE of another machine, or forced) */
    GSHMEMI_ROUTE_IBGDA        /* kernels post mlx5 WQEs (GSHMEM_IBGDA_NIC=emulated or null: a PE of this machine;
                                * hw: both PEs opened a ConnectX with DEVX) */
};

typedef struct {
    uint64_t host;    /* host identity (GSHMEM_HOST_ID, else the machine) */
    uint64_t machine; /* physical machine */
    int gpu_access;   /* this PE's GPU can load/store the peer's memory (same machine only) */
    int ibgda_hw;     /* the peer opened an mlx5 device with DEVX (gshmemi_ibgda_probe), as every PE
                       * learnt it over the bootstrap; 0 where no PE probed (gshmemi_route_wants_ibgda_hw) */
} gshmemi_route_peer_t;

typedef struct {
    int disable_p2p; /* GSHMEM_DISABLE_P2P */
    int remote;      /* GSHMEM_REMOTE_TRANSPORT: GSHMEMI_REMOTE_* */
    int backend;     /* GSHMEM_PROXY_BACKEND: GSHMEMI_BACKEND_* */
    int nic;         /* GSHMEM_IBGDA_NIC: GSHMEMI_NIC_* */
} gshmemi_route_cfg_t;

/* "p2p", "proxy-copy", "proxy-verbs", "ibgda", "none" ("?" for another value). */
const char *gshmemi_route_name(int route);

/* The route from PE me to PE pe; *why says why (static text). */
int gshmemi_route_pick(const gshmemi_route_peer_t *peers, int n_pes, int me, int pe, const gshmemi_route_cfg_t *cfg,
                       const char **why);
/* 1 when some PE of the job routes some peer through verbs: then every PE opens the verbs backend,
 * whose set-up is collective. The same answer on every PE (it reads only what all PEs share and
 * settings that must be equal on all). */
int gshmemi_route_job_uses_verbs(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg);

/* 1 when the routes depend on which PEs can open a ConnectX for IBGDA (GSHMEM_IBGDA_NIC=hw with
 * GSHMEM_REMOTE_TRANSPORT=ibgda and a remote peer, or =auto with PEs on more than one machine and
 * GSHMEM_PROXY_BACKEND=auto): then every PE probes and the outcomes are allgathered into
 * ibgda_hw before any route is picked, so all PEs agree. The same answer on every PE. */
int gshmemi_route_wants_ibgda_hw(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg);
/* 1 when some PE routes some peer through IBGDA on a ConnectX (after the probe): then every PE
 * takes part in the IBGDA transport's exchanges. Auto takes IBGDA only when every PE opened a
 * ConnectX, forced IBGDA wherever two did. The same answer on every PE. */
int gshmemi_route_job_uses_ibgda_hw(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg);

/* 1 when some PE of the job reaches some peer other than by P2P; the same on every PE (what
 * every PE needs to agree on, e.g. the symmetric buffers of the protocol such teams use). */
int gshmemi_route_job_has_remote(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg);

#ifdef __cplusplus
}
#endif
#endif
