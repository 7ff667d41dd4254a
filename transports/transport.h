/* A transport: how this PE reaches another. Each fills one ops table; runtime/init.c picks one
 * per peer at init and never branches on the transport again. */
#ifndef GSHMEMI_TRANSPORT_H
#define GSHMEMI_TRANSPORT_H

#include "../runtime/state.h"
#include "gshmem/amo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gshmemi_transport {
    const char *name;
    /* *reachable = 1 when this transport can reach pe (called once per peer after the info exchange). */
    int (*can_reach)(gshmemi_state_t *st, int pe, int *reachable);
    /* Host-initiated RMA enqueued on stream; dest/src: one symmetric and one local address. */
    int (*put)(gshmemi_state_t *st, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
    int (*get)(gshmemi_state_t *st, void *dest, const void *src, size_t n, int pe, cudaStream_t stream);
    /* Strided forms: nelems elements of elem_size bytes, dest/src advanced by the pitches (bytes). */
    int (*iput)(gshmemi_state_t *st, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                size_t nelems, int pe, cudaStream_t stream);
    int (*iget)(gshmemi_state_t *st, void *dest, size_t dpitch, const void *src, size_t spitch, size_t elem_size,
                size_t nelems, int pe, cudaStream_t stream);
    /* Host-initiated atomic op (GSHMEMI_AMO_*, gshmem/amo.h) on the width-byte (4 or 8) word at the
     * symmetric dest on pe, ordered after earlier work on stream and a release for it (the signal of
     * the stream-ordered put-with-signal). With fetched != NULL it also waits for completion and
     * stores the old value there (the host AMOs); with NULL it only enqueues (capturable). */
    int (*amo)(gshmemi_state_t *st, int op, void *dest, uint64_t value, uint64_t cond, size_t width, int pe,
               cudaStream_t stream, uint64_t *fetched);
    /* Later work on stream waits until the local word ivar (2, 4 or 8 bytes, signed or not)
     * compares cmp to value (bits zero-extended); what names the routine in a timeout report. */
    int (*wait_local)(gshmemi_state_t *st, const void *ivar, size_t width, int is_signed, int cmp, uint64_t value,
                      const char *what, cudaStream_t stream);
} gshmemi_transport_t;

extern const gshmemi_transport_t gshmemi_transport_p2p;

#ifdef __cplusplus
}
#endif
#endif
