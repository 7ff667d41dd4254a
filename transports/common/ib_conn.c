/* The connection setup both InfiniBand stacks share (ib_conn.h). */
#include "ib_conn.h"

#include <string.h>

#include <infiniband/verbs.h>

#include "../../runtime/base/log.h"

static const char *link_name(uint8_t link_layer) { return link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand"; }

void gshmemi_ib_addr_make(gshmemi_ib_addr_t *a, uint32_t magic, uint32_t psn, uint8_t port,
                          const struct ibv_port_attr *pattr, const union ibv_gid *gid)
{
    memset(a, 0, sizeof(*a));
    a->magic = magic;
    a->psn = psn;
    a->lid = pattr->lid;
    a->port = port;
    a->mtu = (uint8_t)pattr->active_mtu;
    a->link_layer = pattr->link_layer;
    a->gid_index = 0;
    memcpy(a->gid, gid->raw, sizeof(a->gid));
}

int gshmemi_ib_addr_check(const gshmemi_ib_addr_t *a, uint32_t magic, const char *sub, const char *what,
                          const char *opener, int pe)
{
    if (a->magic != magic) {
        GSHMEMI_ERROR(sub, "PE %d published no %s address (its %s did not open)", pe, what, opener);
        return GSHMEMI_ERR_INVALID;
    }
    if (a->port == 0 || a->mtu < IBV_MTU_256 || a->mtu > IBV_MTU_4096 ||
        (a->link_layer != IBV_LINK_LAYER_INFINIBAND && a->link_layer != IBV_LINK_LAYER_ETHERNET)) {
        GSHMEMI_ERROR(sub, "PE %d published a malformed %s address (port %u, mtu code %u, link layer %u)", pe, what,
                      a->port, a->mtu, a->link_layer);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

int gshmemi_ib_addr_joinable(const gshmemi_ib_addr_t *me, const gshmemi_ib_addr_t *peer, const char *sub, int pe)
{
    if ((peer->link_layer == IBV_LINK_LAYER_ETHERNET) == (me->link_layer == IBV_LINK_LAYER_ETHERNET)) return GSHMEMI_OK;
    GSHMEMI_ERROR(sub, "PE %d's port is %s, this PE's %s: an RC QP cannot join them", pe, link_name(peer->link_layer),
                  link_name(me->link_layer));
    return GSHMEMI_ERR_INVALID;
}

int gshmemi_ib_path_mtu(const gshmemi_ib_addr_t *me, const gshmemi_ib_addr_t *peer)
{
    return me->mtu < peer->mtu ? me->mtu : peer->mtu;
}

void gshmemi_ib_ah_attr(const gshmemi_ib_addr_t *me, const gshmemi_ib_addr_t *peer, struct ibv_ah_attr *out)
{
    memset(out, 0, sizeof(*out));
    out->port_num = me->port;
    if (peer->link_layer == IBV_LINK_LAYER_ETHERNET) {
        out->is_global = 1;
        memcpy(out->grh.dgid.raw, peer->gid, 16);
        out->grh.sgid_index = me->gid_index;
        out->grh.hop_limit = 64;
    } else {
        out->dlid = peer->lid;
    }
}
