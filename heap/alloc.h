/* Offset allocator for one PE's symmetric heap region.
 *
 * Host-side metadata only: it hands out offsets in [0, region) and never touches the memory.
 * Every PE makes the same calls in the same order, so the allocator is fully deterministic (no
 * randomness, no dependence on where its own metadata lives): equal call sequences give equal
 * offsets on every PE.
 *
 * Policy: best fit (the smallest free block that can hold the request at the requested
 * alignment; the lowest offset among blocks of equal size), the allocation placed at the lowest
 * aligned address of that block, and immediate coalescing of free neighbours. Low addresses are
 * preferred so the physically backed prefix of the heap grows as little as possible.
 *
 * Cost: O(log n) per call in the number n of blocks. The only exception is an allocation aligned
 * above min_align: free blocks that are large enough but cannot hold it at that alignment are
 * skipped, at most GSHMEMI_ALLOC_SCAN_LIMIT of them before taking the smallest block that fits
 * at any offset; the scan goes on past the limit only when no such block exists, so NOMEM is
 * returned only when nothing fits. Passing the limit may pick a block larger than the best fit.
 *
 * Not thread safe: the caller serialises (allocation is collective anyway). */
#ifndef GSHMEMI_ALLOC_H
#define GSHMEMI_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Free blocks too small for an aligned request at their offset examined before giving up on
 * exact best fit (see above). */
#define GSHMEMI_ALLOC_SCAN_LIMIT 64

typedef struct gshmemi_alloc gshmemi_alloc_t;

/* region: bytes managed, a non-zero multiple of min_align. min_align: a power of two; every offset
 * returned is a multiple of it and every size is rounded up to a multiple of it. */
int gshmemi_alloc_create(size_t region, size_t min_align, gshmemi_alloc_t **out);

/* size: bytes (> 0). align: a power of two, or 0 for min_align; values below min_align act as
 * min_align. GSHMEMI_ERR_INVALID for bad arguments, GSHMEMI_ERR_NOMEM when no free block fits
 * (not logged: the caller knows the context); the allocator is unchanged on failure. */
int gshmemi_alloc_alloc(gshmemi_alloc_t *a, size_t size, size_t align, size_t *off);

/* off must be the start of a live allocation; anything else (never allocated, interior offset,
 * double free, out of range) is GSHMEMI_ERR_INVALID and leaves the allocator unchanged. */
int gshmemi_alloc_free(gshmemi_alloc_t *a, size_t off);

/* One past the highest byte ever handed out, whether still live or freed since. Monotonic: the
 * heap's physical backing is never shrunk, so this is the extent that must be backed. */
size_t gshmemi_alloc_high_water(const gshmemi_alloc_t *a);

/* Size of the largest free block (an upper bound on what one allocation can get). */
size_t gshmemi_alloc_largest_free(const gshmemi_alloc_t *a);

/* Total free bytes: region minus the (rounded) sizes of all live allocations. */
size_t gshmemi_alloc_bytes_free(const gshmemi_alloc_t *a);

/* Rounded size of the live allocation starting at off; 0 when none starts there. */
size_t gshmemi_alloc_size_of(const gshmemi_alloc_t *a, size_t off);

void gshmemi_alloc_destroy(gshmemi_alloc_t *a);

#ifdef __cplusplus
}
#endif
#endif
