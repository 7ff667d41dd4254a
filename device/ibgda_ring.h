/* The counter arithmetic of the IBGDA device path (device/ibgda.cuh), plain C for the host unit
 * test and nvcc. Counters are 64-bit counts of 64-byte basic blocks (BBs), free-running; the NIC
 * sees their low 16 bits (the WQE counter). */
#ifndef GSHMEMI_IBGDA_RING_H
#define GSHMEMI_IBGDA_RING_H

#include <stdint.h>

#include "mlx5_wqe.h"

/* How many BBs must have completed before BB t may take its SQ slot (the one BB t - sq_bbs
 * used): 0 on the first pass over the ring. A WQE of n BBs from t asks it for BB t + n - 1. */
GSHMEMI_HD_INLINE unsigned long long gshmemi_ibgda_slot_needs(unsigned long long t, uint32_t sq_bbs)
{
    return t >= sq_bbs ? t - sq_bbs + 1 : 0;
}

/* The count of completed BBs that a CQE for the WQE of bbs BBs whose counter is idx16 means,
 * given done, the count before it: the WQE's 64-bit counter plus its BBs (RC completes a QP's
 * WQEs in order). Widened from below: the WQE is not complete yet, so its counter is at least
 * done, and its slot was free, so it is less than done + sq_bbs <= done + 65536. (Widening from
 * the posted count instead would be wrong: the NIC can complete a WQE before its poster has
 * advanced that count, and reservations may run any distance ahead.) */
GSHMEMI_HD_INLINE unsigned long long gshmemi_ibgda_cqe_done(unsigned long long done, uint16_t idx16, unsigned bbs)
{
    return done + (uint16_t)(idx16 - (uint16_t)done) + bbs;
}

#endif
