/* The counter arithmetic of the IBGDA device path (device/ibgda.cuh), plain C for the host unit
 * test and nvcc. Counters are 64-bit counts of WQEs (every WQE the path posts is one basic
 * block), free-running; the NIC sees their low 16 bits (the WQE counter). */
#ifndef GSHMEMI_IBGDA_RING_H
#define GSHMEMI_IBGDA_RING_H

#include <stdint.h>

#include "mlx5_wqe.h"

/* How many WQEs must have completed before WQE t may take its SQ slot (the one WQE t - sq_bbs
 * used): 0 on the first pass over the ring. */
GSHMEMI_HD_INLINE unsigned long long gshmemi_ibgda_slot_needs(unsigned long long t, uint32_t sq_bbs)
{
    return t >= sq_bbs ? t - sq_bbs + 1 : 0;
}

/* The count of completed WQEs that a CQE for the WQE whose counter is idx16 means, when posted
 * WQEs (>= 1, the CQE's among them) have been handed to the NIC and fewer than 65536 of them are
 * outstanding: the WQE's 64-bit counter plus one (RC completes a QP's WQEs in order). */
GSHMEMI_HD_INLINE unsigned long long gshmemi_ibgda_cqe_done(unsigned long long posted, uint16_t idx16)
{
    return gshmemi_mlx5_widen16(posted - 1, idx16) + 1;
}

#endif
