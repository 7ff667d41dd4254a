/* The per-peer choice of transport (transports/route.c) for given host ids, machines, GPU access
 * and settings: which route, and that the reason says why. */
#include <stdio.h>
#include <string.h>

#include "runtime/base/env.h"
#include "transports/route.h"
#include "expect.h"

/* route from me to pe, expected route and a word its reason must contain */
static void expect_route(const gshmemi_route_peer_t *p, int n, int me, int pe, gshmemi_route_cfg_t cfg, int want,
                         const char *why_has)
{
    const char *why = NULL;
    int got = gshmemi_route_pick(p, n, me, pe, &cfg, &why);
    EXPECT(got == want, "PE %d -> %d: route %s, expected %s (why: %s)", me, pe, gshmemi_route_name(got), gshmemi_route_name(want), why ? why : "(null)");
    EXPECT(why && strstr(why, why_has), "PE %d -> %d: reason \"%s\" lacks \"%s\"", me, pe, why ? why : "(null)", why_has);
}

int main(void)
{
    const gshmemi_route_cfg_t dflt = {0, GSHMEMI_REMOTE_AUTO, GSHMEMI_BACKEND_AUTO, GSHMEMI_NIC_HW};
    gshmemi_route_cfg_t c;
    /* 4 PEs on one machine, one GPU shared: every GPU reaches every other */
    gshmemi_route_peer_t one[4] = {{7, 100, 1, 0}, {7, 100, 1, 0}, {7, 100, 1, 0}, {7, 100, 1, 0}};
    /* the same machine split into two hosts of two by GSHMEM_HOST_ID */
    gshmemi_route_peer_t split[4] = {{1, 100, 1, 0}, {1, 100, 1, 0}, {2, 100, 1, 0}, {2, 100, 1, 0}};
    /* two machines of two PEs (PE 0's view: gpu_access only for its machine) */
    gshmemi_route_peer_t two[4] = {{1, 100, 1, 0}, {1, 100, 1, 0}, {2, 200, 0, 0}, {2, 200, 0, 0}};
    /* one machine, PE 3's GPU without peer access */
    gshmemi_route_peer_t noacc[4] = {{7, 100, 1, 0}, {7, 100, 1, 0}, {7, 100, 1, 0}, {7, 100, 0, 0}};

    expect_route(one, 4, 0, 0, dflt, GSHMEMI_ROUTE_P2P, "this PE");
    expect_route(one, 4, 0, 3, dflt, GSHMEMI_ROUTE_P2P, "P2P");
    EXPECT(!gshmemi_route_job_uses_verbs(one, 4, &dflt), "one machine: verbs opened");

    c = dflt, c.disable_p2p = 1; /* every peer remote, through the copy engine; this PE stays local */
    expect_route(one, 4, 1, 1, c, GSHMEMI_ROUTE_P2P, "this PE");
    for (int pe = 0; pe < 4; pe++)
        if (pe != 2) expect_route(one, 4, 2, pe, c, GSHMEMI_ROUTE_PROXY_COPY, "GSHMEM_DISABLE_P2P");
    EXPECT(!gshmemi_route_job_uses_verbs(one, 4, &c), "P2P disabled on one machine, backend auto: verbs opened");

    /* two hosts of two: P2P inside, proxy (copy) across */
    expect_route(split, 4, 0, 1, dflt, GSHMEMI_ROUTE_P2P, "P2P");
    expect_route(split, 4, 0, 2, dflt, GSHMEMI_ROUTE_PROXY_COPY, "GSHMEM_HOST_ID");
    expect_route(split, 4, 3, 1, dflt, GSHMEMI_ROUTE_PROXY_COPY, "GSHMEM_HOST_ID");

    /* another machine: verbs, and every PE of the job opens it */
    expect_route(two, 4, 0, 1, dflt, GSHMEMI_ROUTE_P2P, "P2P");
    expect_route(two, 4, 0, 2, dflt, GSHMEMI_ROUTE_PROXY_VERBS, "another machine");
    EXPECT(gshmemi_route_job_uses_verbs(two, 4, &dflt), "two machines: verbs not opened");
    c = dflt, c.backend = GSHMEMI_BACKEND_COPY;
    expect_route(two, 4, 0, 3, c, GSHMEMI_ROUTE_NONE, "only reaches PEs of this machine");
    EXPECT(!gshmemi_route_job_uses_verbs(two, 4, &c), "backend copy: verbs opened");

    /* settings that leave a peer unreachable, each named */
    c = dflt, c.remote = GSHMEMI_REMOTE_NONE;
    expect_route(two, 4, 0, 2, c, GSHMEMI_ROUTE_NONE, "GSHMEM_REMOTE_TRANSPORT=none");
    expect_route(two, 4, 0, 1, c, GSHMEMI_ROUTE_P2P, "P2P");
    c = dflt, c.remote = GSHMEMI_REMOTE_IBGDA;
    expect_route(two, 4, 0, 2, c, GSHMEMI_ROUTE_NONE, "ibgda");
    expect_route(noacc, 4, 0, 3, dflt, GSHMEMI_ROUTE_NONE, "no peer access");

    /* IBGDA through the emulated (or null) NIC: PEs of this machine whose GPU this one reaches */
    c = dflt, c.remote = GSHMEMI_REMOTE_IBGDA, c.nic = GSHMEMI_NIC_EMULATED, c.disable_p2p = 1;
    expect_route(one, 4, 1, 1, c, GSHMEMI_ROUTE_P2P, "this PE");
    for (int pe = 0; pe < 4; pe++)
        if (pe != 1) expect_route(one, 4, 1, pe, c, GSHMEMI_ROUTE_IBGDA, "GSHMEM_IBGDA_NIC=emulated");
    EXPECT(!gshmemi_route_job_uses_verbs(one, 4, &c), "IBGDA emulated: verbs opened");
    EXPECT(gshmemi_route_job_has_remote(one, 4, &c), "IBGDA emulated with P2P disabled: no remote peer seen");
    c.disable_p2p = 0; /* two hosts of two: P2P inside, IBGDA across */
    expect_route(split, 4, 0, 1, c, GSHMEMI_ROUTE_P2P, "P2P");
    expect_route(split, 4, 0, 2, c, GSHMEMI_ROUTE_IBGDA, "emulated NIC");
    expect_route(split, 4, 3, 0, c, GSHMEMI_ROUTE_IBGDA, "emulated NIC");
    expect_route(two, 4, 0, 2, c, GSHMEMI_ROUTE_NONE, "only reaches PEs of this machine");
    EXPECT(!gshmemi_route_job_uses_verbs(two, 4, &c), "IBGDA emulated across machines: verbs opened");
    expect_route(noacc, 4, 0, 3, c, GSHMEMI_ROUTE_NONE, "peer access");
    expect_route(noacc, 4, 0, 1, c, GSHMEMI_ROUTE_P2P, "P2P");
    c.nic = GSHMEMI_NIC_NULL;
    expect_route(split, 4, 1, 3, c, GSHMEMI_ROUTE_IBGDA, "null NIC");
    c.nic = GSHMEMI_NIC_HW; /* forced on hardware, no PE opened a ConnectX: refused, naming the setting and the way out */
    EXPECT(gshmemi_route_wants_ibgda_hw(split, 4, &c), "forced IBGDA hw with remote peers: no probe");
    expect_route(split, 4, 0, 2, c, GSHMEMI_ROUTE_NONE, "GSHMEM_IBGDA_NIC=hw: this PE cannot use IBGDA");
    expect_route(split, 4, 0, 2, c, GSHMEMI_ROUTE_NONE, "GSHMEM_IBGDA_NIC=emulated");
    expect_route(split, 4, 0, 1, c, GSHMEMI_ROUTE_P2P, "P2P");
    EXPECT(!gshmemi_route_wants_ibgda_hw(one, 4, &c), "forced IBGDA hw, every peer P2P: a probe");
    {
        /* forced, ConnectX opened: every remote peer whose PE opened one too, of any machine */
        gshmemi_route_peer_t hw[4] = {{1, 100, 1, 1}, {1, 100, 1, 1}, {2, 200, 0, 1}, {3, 300, 0, 0}};
        expect_route(hw, 4, 0, 2, c, GSHMEMI_ROUTE_IBGDA, "IBGDA, ConnectX");
        expect_route(hw, 4, 0, 1, c, GSHMEMI_ROUTE_P2P, "P2P");
        expect_route(hw, 4, 0, 3, c, GSHMEMI_ROUTE_NONE, "the peer cannot use IBGDA");
        expect_route(hw, 4, 3, 0, c, GSHMEMI_ROUTE_NONE, "this PE cannot use IBGDA");
        EXPECT(!gshmemi_route_job_uses_verbs(hw, 4, &c), "forced IBGDA hw: verbs opened");
        c.disable_p2p = 1;
        expect_route(hw, 4, 0, 1, c, GSHMEMI_ROUTE_IBGDA, "IBGDA, ConnectX");
        EXPECT(gshmemi_route_job_uses_ibgda_hw(hw, 4, &c), "forced, PEs 0-2 with a ConnectX: no IBGDA exchanges");
        /* auto: the proxy, even where every PE opened a ConnectX (IBGDA only when asked for),
         * and no PE probes for one */
        c = dflt;
        EXPECT(!gshmemi_route_wants_ibgda_hw(hw, 4, &c), "auto, hw, two machines: a probe");
        EXPECT(!gshmemi_route_job_uses_ibgda_hw(hw, 4, &c), "auto: IBGDA exchanges");
        expect_route(hw, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_VERBS, "proxy, verbs (another machine");
        expect_route(hw, 4, 0, 3, c, GSHMEMI_ROUTE_PROXY_VERBS, "another machine");
        expect_route(hw, 4, 3, 0, c, GSHMEMI_ROUTE_PROXY_VERBS, "another machine");
        EXPECT(gshmemi_route_job_uses_verbs(hw, 4, &c), "auto across machines: verbs not opened");
        hw[3].ibgda_hw = 1;
        EXPECT(!gshmemi_route_job_uses_ibgda_hw(hw, 4, &c), "auto, every PE with a ConnectX: IBGDA exchanges");
        expect_route(hw, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_VERBS, "GSHMEM_REMOTE_TRANSPORT=ibgda asks for IBGDA");
        expect_route(hw, 4, 3, 0, c, GSHMEMI_ROUTE_PROXY_VERBS, "another machine");
        expect_route(hw, 4, 0, 1, c, GSHMEMI_ROUTE_P2P, "P2P");
        EXPECT(gshmemi_route_job_uses_verbs(hw, 4, &c), "auto, every PE with a ConnectX: verbs not opened");
        c.disable_p2p = 1; /* this machine's peer: the copy engine */
        expect_route(hw, 4, 0, 1, c, GSHMEMI_ROUTE_PROXY_COPY, "copy engine");
        c = dflt, c.backend = GSHMEMI_BACKEND_VERBS;
        EXPECT(!gshmemi_route_wants_ibgda_hw(hw, 4, &c), "auto with GSHMEM_PROXY_BACKEND=verbs: a probe");
        expect_route(hw, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_VERBS, "GSHMEM_PROXY_BACKEND=verbs");
        c = dflt, c.nic = GSHMEMI_NIC_EMULATED;
        EXPECT(!gshmemi_route_wants_ibgda_hw(hw, 4, &c), "auto with the emulated NIC: a probe");
        expect_route(hw, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_VERBS, "another machine");
    }
    /* auto on one machine keeps the proxy, whatever the NIC setting, and probes nothing */
    c = dflt, c.nic = GSHMEMI_NIC_EMULATED, c.disable_p2p = 1;
    expect_route(one, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_COPY, "copy engine");
    c.nic = GSHMEMI_NIC_HW;
    expect_route(split, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_COPY, "copy engine");
    EXPECT(!gshmemi_route_wants_ibgda_hw(split, 4, &c), "auto on one machine: a probe");
    EXPECT(!gshmemi_route_wants_ibgda_hw(one, 4, &c), "auto on one machine, P2P disabled: a probe");
    c = dflt;
    EXPECT(!gshmemi_route_wants_ibgda_hw(two, 4, &c), "auto across machines: a probe");
    expect_route(two, 4, 0, 2, c, GSHMEMI_ROUTE_PROXY_VERBS, "another machine");

    /* forced verbs: every remote peer, even on this machine */
    c = dflt, c.backend = GSHMEMI_BACKEND_VERBS, c.disable_p2p = 1;
    expect_route(one, 4, 0, 1, c, GSHMEMI_ROUTE_PROXY_VERBS, "GSHMEM_PROXY_BACKEND=verbs");
    EXPECT(gshmemi_route_job_uses_verbs(one, 4, &c), "forced verbs with P2P disabled: verbs not opened");
    c.disable_p2p = 0;
    expect_route(noacc, 4, 0, 3, c, GSHMEMI_ROUTE_PROXY_VERBS, "GSHMEM_PROXY_BACKEND=verbs");
    EXPECT(!gshmemi_route_job_uses_verbs(one, 4, &c), "forced verbs, all P2P: verbs opened");
    EXPECT(gshmemi_route_job_uses_verbs(split, 4, &c), "forced verbs across host ids: verbs not opened");

    if (expect_failures) {
        fprintf(stderr, "test_route: %d check(s) failed\n", expect_failures);
        return 1;
    }
    printf("test_route: every case routed as expected\n");
    return 0;
}
