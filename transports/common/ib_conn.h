/* The InfiniBand connection setup the proxy's verbs backend (proxy/verbs.c) and IBGDA
 * (ibgda/setup.c) share: the address each PE publishes for its port (the verbs blob, and the head
 * of IBGDA's), made from the port's attributes and checked on arrival, and the path towards a
 * peer's port (the MTU both ends take, the address-handle attributes of RoCE's global routing).
 * The QPs themselves differ (ibv_modify_qp there, DEVX commands here). Nothing here calls
 * libibverbs. */
#ifndef GSHMEMI_TRANSPORTS_IB_CONN_H
#define GSHMEMI_TRANSPORTS_IB_CONN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_port_attr;
struct ibv_ah_attr;
union ibv_gid;

/* How a PE's port is addressed. Same layout on every PE (one build). */
typedef struct {
    uint32_t magic;      /* the publisher's own: a PE whose setup did not open publishes 0 */
    uint32_t psn;        /* first packet sequence number of every QP this PE creates */
    uint16_t lid;        /* InfiniBand: the port's LID (0 on RoCE) */
    uint8_t port;        /* port number on its device */
    uint8_t mtu;         /* enum ibv_mtu: the port's active MTU */
    uint8_t link_layer;  /* IBV_LINK_LAYER_* */
    uint8_t gid_index;   /* index of gid in the port's table */
    uint8_t pad[2];
    uint8_t gid[16];     /* RoCE: the GID peers address (global routing) */
} gshmemi_ib_addr_t;

/* This PE's address on port (its attributes pattr, its GID index 0 gid). */
void gshmemi_ib_addr_make(gshmemi_ib_addr_t *a, uint32_t magic, uint32_t psn, uint8_t port,
                          const struct ibv_port_attr *pattr, const union ibv_gid *gid);
/* Checks PE pe's published address: GSHMEMI_ERR_INVALID, logged under sub, when it lacks magic
 * ("PE 3 published no <what> address (its <opener> did not open)") or is malformed (port, MTU,
 * link layer). */
int gshmemi_ib_addr_check(const gshmemi_ib_addr_t *a, uint32_t magic, const char *sub, const char *what,
                          const char *opener, int pe);
/* GSHMEMI_ERR_INVALID, logged under sub, when peer's link layer is not mine (InfiniBand and RoCE
 * ports cannot be joined by an RC QP). */
int gshmemi_ib_addr_joinable(const gshmemi_ib_addr_t *me, const gshmemi_ib_addr_t *peer, const char *sub, int pe);
/* The MTU of the path from me to peer (enum ibv_mtu): the smaller of the two. */
int gshmemi_ib_path_mtu(const gshmemi_ib_addr_t *me, const gshmemi_ib_addr_t *peer);
/* The address-handle attributes of the path from my port to peer's: its LID on InfiniBand, its
 * GID through my GID on RoCE. */
void gshmemi_ib_ah_attr(const gshmemi_ib_addr_t *me, const gshmemi_ib_addr_t *peer, struct ibv_ah_attr *out);

#ifdef __cplusplus
}
#endif
#endif
