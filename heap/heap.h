/* The symmetric heap: one VA reservation holding the heap of every PE of this host at a fixed
 * offset, and this PE's physical chunks created on demand. The heap knows no transport: whoever
 * must map or register a new chunk (transports/p2p maps it on same-host peers) subscribes. */
#ifndef GSHMEMI_HEAP_H
#define GSHMEMI_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "../runtime/base/cudawrap.h"
#include "alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every symmetric block starts on a 256-byte boundary, as cudaMalloc's do: a buffer that straddles
 * 128-byte lines turns each warp-wide 512-byte store into five partial-line NVLink writes instead
 * of four full ones. */
#define GSHMEMI_HEAP_MIN_ALIGN 256

/* A chunk of this PE's heap, just created and mapped here; what subscribers are told. */
typedef struct {
    size_t offset;                       /* from the start of this PE's heap */
    size_t size;
    char *addr;                          /* my_base + offset */
    CUmemGenericAllocationHandle handle; /* valid during the callback only */
} gshmemi_heap_chunk_t;

/* A growth subscriber (a transport that maps or registers memory): called once per new chunk,
 * in subscription order; an error fails the growth. */
typedef int (*gshmemi_heap_grow_fn)(void *arg, const gshmemi_heap_chunk_t *chunk);
#define GSHMEMI_HEAP_MAX_SUBSCRIBERS 8

typedef struct {
    CUdevice device;
    size_t heap_size;      /* requested bytes per PE (GSHMEM_SYMMETRIC_SIZE) */
    size_t growth_min;     /* GSHMEM_HEAP_GROWTH */
    int local_size;        /* PEs on this host: the reservation holds a slot for each */
    int my_local;          /* this PE's index among them */
} gshmemi_heap_config_t;

typedef struct {
    gshmemi_heap_config_t cfg;
    size_t granularity;
    size_t region;           /* bytes per PE in the reservation (heap_size rounded up) */
    CUdeviceptr reserve;     /* base of the whole reservation */
    size_t reserve_size;
    char *my_base;           /* this PE's heap */
    size_t backed;           /* bytes of this PE's heap backed, mapped and told to every subscriber */
    size_t mapped;           /* bytes of this PE's heap mapped here (>= backed after a failed growth) */
    gshmemi_alloc_t *alloc;
    int n_subs;
    struct {
        gshmemi_heap_grow_fn fn;
        void *arg;
    } subs[GSHMEMI_HEAP_MAX_SUBSCRIBERS];
} gshmemi_heap_t;

/* Reserves the VA of every same-host PE's heap (nothing is backed yet). */
int gshmemi_heap_init(gshmemi_heap_t *heap, const gshmemi_heap_config_t *cfg);
/* fn(arg, chunk) is called for every chunk created from now on. */
int gshmemi_heap_subscribe(gshmemi_heap_t *heap, gshmemi_heap_grow_fn fn, void *arg);
/* Backs [0, end) of this PE's heap and tells every subscriber. Collective over the PEs of this
 * host when a subscriber's callback is (P2P maps peers' chunks in it). */
int gshmemi_heap_ensure_backed(gshmemi_heap_t *heap, size_t end);
/* Where local PE l's heap lies in the reservation (mapped there only by a transport that maps it). */
char *gshmemi_heap_slot(const gshmemi_heap_t *heap, int local);
/* Exports a chunk as a POSIX fd that a same-host process can import; the caller closes it. */
int gshmemi_heap_export_fd(const gshmemi_heap_chunk_t *chunk, int *fd);
/* Gives this PE's GPU read/write access to [addr, addr+size) of the reservation. */
int gshmemi_heap_set_access(const gshmemi_heap_t *heap, CUdeviceptr addr, size_t size);
/* Unmaps this PE's chunks and frees the reservation; peers' mappings must be gone already. */
int gshmemi_heap_fini(gshmemi_heap_t *heap);

#ifdef __cplusplus
}
#endif
#endif
