/* The IBGDA transport (ibgda.c): sizes and the made-up keys and QP numbers of the emulated NIC,
 * shared with its unit test. */
#ifndef GSHMEMI_IBGDA_H
#define GSHMEMI_IBGDA_H

#include <stdint.h>


#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_IBGDA_SQ_BBS 1024u            /* SQ slots per QP */
#define GSHMEMI_IBGDA_NCQE 1 /* a collapsed CQ: the NIC writes every CQE into its one entry */

/* Keys of the emulated NIC: the kind in the top byte, the PE below. */
#define GSHMEMI_IBGDA_KEY_HEAP 0x48000000u   /* PE p's symmetric heap (lkey and rkey) */
#define GSHMEMI_IBGDA_KEY_RESULT 0x52000000u /* PE p's result words of g */
#define GSHMEMI_IBGDA_KEY_BUF 0x42000000u    /* PE p's local buffers outside the heap */

/* QP number (24 bits, never 0) of QP k (of GSHMEM_IBGDA_NUM_RC_PER_PE, at most 64) from PE me to
 * PE pe: distinct among one PE's QPs while pe < 512 (the emulated NIC's PEs share one machine). */
static inline uint32_t gshmemi_ibgda_qpn(int me, int pe, int k)
{
    return 0x800000u | (((uint32_t)k & 0x3fu) << 17) | (((uint32_t)me & 0xffu) << 9) | ((uint32_t)pe & 0x1ffu);
}

/* Whether this PE can open a ConnectX for IBGDA (transports/ibgda/setup.h, gshmemi_ibgda_probe):
 * 1, or 0 after one line naming why (an error when forced, else info: the proxy serves). */
int gshmemi_ibgda_hw_probe(int forced);

struct gshmemi_transport;
extern const struct gshmemi_transport gshmemi_transport_ibgda; /* transports/transport.h */

#ifdef __cplusplus
}
#endif
#endif
