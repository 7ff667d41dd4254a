#include "route.h"

#include "../runtime/base/env.h"

const char *gshmemi_route_name(int route)
{
    static const char *const names[] = {"none", "p2p", "proxy-copy", "proxy-verbs", "ibgda"};
    return route >= 0 && route < (int)(sizeof(names) / sizeof(names[0])) ? names[route] : "?";
}

int gshmemi_route_pick(const gshmemi_route_peer_t *peers, int n_pes, int me, int pe, const gshmemi_route_cfg_t *cfg,
                       const char **why)
{
    const gshmemi_route_peer_t *a = &peers[me], *b = &peers[pe];
    const int same_machine = a->machine == b->machine;

    (void)n_pes; /* the rule looks at this pair alone */

    if (pe == me) {
        *why = "this PE";
        return GSHMEMI_ROUTE_P2P;
    }
    if (!cfg->disable_p2p && a->host == b->host && same_machine && b->gpu_access) {
        *why = "P2P";
        return GSHMEMI_ROUTE_P2P;
    }
    if (cfg->remote == GSHMEMI_REMOTE_NONE) {
        *why = "not reachable by P2P and GSHMEM_REMOTE_TRANSPORT=none";
        return GSHMEMI_ROUTE_NONE;
    }
    if (cfg->remote == GSHMEMI_REMOTE_IBGDA) {
        /* A ConnectX reaches any peer whose PE opened one too (an RC QP pair). The emulated NIC
         * executes WQEs with the copy engine between heaps mapped here, so it reaches the PEs of
         * this machine whose GPU this one can access. */
        if (cfg->nic == GSHMEMI_NIC_HW) {
            if (a->ibgda_hw && b->ibgda_hw) {
                *why = "IBGDA, ConnectX (GSHMEM_REMOTE_TRANSPORT=ibgda)";
                return GSHMEMI_ROUTE_IBGDA;
            }
            *why = a->ibgda_hw ? "GSHMEM_REMOTE_TRANSPORT=ibgda with GSHMEM_IBGDA_NIC=hw: the peer cannot use IBGDA (its log says why)"
                               : "GSHMEM_REMOTE_TRANSPORT=ibgda with GSHMEM_IBGDA_NIC=hw: this PE cannot use IBGDA (logged above; "
                                 "GSHMEM_IBGDA_NIC=emulated runs it between PEs of one machine, GSHMEM_REMOTE_TRANSPORT=auto falls "
                                 "back to the proxy)";
            return GSHMEMI_ROUTE_NONE;
        }
        if (same_machine && b->gpu_access) {
            *why = cfg->nic == GSHMEMI_NIC_NULL ? "IBGDA, null NIC (GSHMEM_IBGDA_NIC=null: puts and gets complete without moving bytes)"
                                                : "IBGDA, emulated NIC (GSHMEM_IBGDA_NIC=emulated)";
            return GSHMEMI_ROUTE_IBGDA;
        }
        *why = same_machine ? "GSHMEM_IBGDA_NIC=emulated needs this GPU to have peer access to the peer's GPU"
                            : "GSHMEM_IBGDA_NIC=emulated only reaches PEs of this machine";
        return GSHMEMI_ROUTE_NONE;
    }
    /* auto: the proxy for every peer P2P does not reach. IBGDA is taken only when asked for
     * (GSHMEM_REMOTE_TRANSPORT=ibgda): it has not yet run on a NIC. */
    if (cfg->backend == GSHMEMI_BACKEND_VERBS) {
        *why = "proxy, verbs (GSHMEM_PROXY_BACKEND=verbs)";
        return GSHMEMI_ROUTE_PROXY_VERBS;
    }
    if (same_machine && b->gpu_access) {
        *why = cfg->disable_p2p ? "proxy, copy engine (P2P disabled by GSHMEM_DISABLE_P2P=1)"
                                : "proxy, copy engine (same machine, another host by GSHMEM_HOST_ID)";
        return GSHMEMI_ROUTE_PROXY_COPY;
    }
    if (cfg->backend == GSHMEMI_BACKEND_COPY) {
        *why = same_machine ? "the copy backend (GSHMEM_PROXY_BACKEND=copy) needs this GPU to have peer access to the peer's GPU"
                            : "the copy backend (GSHMEM_PROXY_BACKEND=copy) only reaches PEs of this machine";
        return GSHMEMI_ROUTE_NONE;
    }
    if (same_machine) {
        *why = "same machine, but this GPU has no peer access to the peer's GPU: neither P2P nor the copy engine reaches it "
               "(GSHMEM_PROXY_BACKEND=verbs would use an RDMA NIC)";
        return GSHMEMI_ROUTE_NONE;
    }
    *why = "proxy, verbs (another machine; GSHMEM_REMOTE_TRANSPORT=ibgda asks for IBGDA)";
    return GSHMEMI_ROUTE_PROXY_VERBS;
}

static int several_machines(const gshmemi_route_peer_t *peers, int n_pes)
{
    for (int pe = 1; pe < n_pes; pe++)
        if (peers[pe].machine != peers[0].machine) return 1;
    return 0;
}

int gshmemi_route_wants_ibgda_hw(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg)
{
    if (cfg->nic != GSHMEMI_NIC_HW) return 0;
    return cfg->remote == GSHMEMI_REMOTE_IBGDA && gshmemi_route_job_has_remote(peers, n_pes, cfg);
}

int gshmemi_route_job_uses_ibgda_hw(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg)
{
    int n_hw = 0;
    if (!gshmemi_route_wants_ibgda_hw(peers, n_pes, cfg)) return 0;
    for (int pe = 0; pe < n_pes; pe++) n_hw += peers[pe].ibgda_hw != 0;
    return n_hw >= 2; /* forced: a PE without one fails init (its remote peers have no route) */
}

int gshmemi_route_job_uses_verbs(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg)
{
    if (cfg->remote == GSHMEMI_REMOTE_NONE || cfg->remote == GSHMEMI_REMOTE_IBGDA) return 0;
    if (cfg->backend == GSHMEMI_BACKEND_COPY) return 0;
    /* forced: used wherever some PE has a non-P2P peer */
    if (cfg->backend == GSHMEMI_BACKEND_VERBS) return gshmemi_route_job_has_remote(peers, n_pes, cfg);
    /* auto: verbs between machines */
    return several_machines(peers, n_pes);
}

int gshmemi_route_job_has_remote(const gshmemi_route_peer_t *peers, int n_pes, const gshmemi_route_cfg_t *cfg)
{
    if (n_pes > 1 && cfg->disable_p2p) return 1;
    for (int pe = 1; pe < n_pes; pe++)
        if (peers[pe].host != peers[0].host || peers[pe].machine != peers[0].machine) return 1;
    return 0;
}
