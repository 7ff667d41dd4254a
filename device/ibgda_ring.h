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

/* The count of completed BBs that the CQE of a collapsed CQ (one entry: the newest completion)
 * means, given done, the count before it: the CQE's WQE is the one of 64-bit counter nearest done
 * whose low 16 bits are idx16 (a posted WQE is less than sq_bbs <= 32768 BBs from done, and RC
 * completes a QP's WQEs in order), and the count runs to its end, its bbs BBs later. A CQE already
 * counted gives at most done, so the count only grows. */
GSHMEMI_HD_INLINE unsigned long long gshmemi_ibgda_collapsed_done(unsigned long long done, uint16_t idx16, unsigned bbs)
{
    return done + (long long)(int16_t)(uint16_t)(idx16 - (uint16_t)done) + bbs;
}

/* Which of a peer's nqp QPs (a power of two: ibgda.c checks) a thread posts to, from its CTA's
 * linear index, its warp in the CTA and the CTA's warps: warp + cta * (warps | 1), masked. The
 * warps of a grid in launch order take consecutive QPs (a stride of one more warp where a CTA has
 * an even number, so that warp 0 of consecutive CTAs, the posters of _block calls, also takes
 * consecutive QPs: an odd stride). The first CTAs of a launch load no QP more than twice the even
 * share. Concurrent posters thus ring different QPs instead of queueing on one QP's in-order
 * doorbell. A thread always gets the same QP, so its operations to a peer stay in order on one QP
 * (fence and quiet cover every QP). */
GSHMEMI_HD_INLINE unsigned gshmemi_ibgda_qp_pick(unsigned cta, unsigned warp, unsigned warps, unsigned nqp)
{
    return (warp + cta * (warps | 1)) & (nqp - 1);
}

#endif
