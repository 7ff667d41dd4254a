/* The symmetric heap: one VA reservation holding the heap of every PE of this host at a fixed
 * offset, physical chunks created on demand, exported as POSIX fds and mapped by same-host peers.
 * The heap knows no transport; a transport that must register memory sets on_grow. */
#ifndef GSHMEMI_HEAP_H
#define GSHMEMI_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "../runtime/cudawrap.h"
#include "alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every symmetric block starts on a 256-byte boundary, as cudaMalloc's do: a buffer that straddles
 * 128-byte lines turns each warp-wide 512-byte store into five partial-line NVLink writes instead
 * of four full ones. */
#define GSHMEMI_HEAP_MIN_ALIGN 256

typedef struct {
    CUdevice device;
    size_t heap_size;      /* requested bytes per PE (GSHMEM_SYMMETRIC_SIZE) */
    size_t growth_min;     /* GSHMEM_HEAP_GROWTH */
    int local_size;        /* PEs on this host */
    int my_local;          /* this PE's index among them */
    const int *reachable;  /* [local_size]: 1 where this PE maps that peer's heap */
    uint64_t job_key;      /* same on every PE of the job: names the handle-exchange sockets */
    double peer_timeout;   /* seconds */
    /* Called after every growth with the new range of this PE's heap. */
    int (*on_grow)(void *arg, void *addr, size_t size);
    void *on_grow_arg;
} gshmemi_heap_config_t;

typedef struct {
    gshmemi_heap_config_t cfg;
    int *reachable;          /* own copy of cfg.reachable */
    size_t granularity;
    size_t region;           /* bytes per PE in the reservation (heap_size rounded up) */
    CUdeviceptr reserve;     /* base of the whole reservation */
    size_t reserve_size;
    char *my_base;           /* this PE's heap */
    size_t backed;           /* bytes of every PE's heap backed and mapped here */
    uint32_t grow_seq;
    int sock;                /* datagram socket receiving peers' handles */
    gshmemi_alloc_t *alloc;
} gshmemi_heap_t;

int gshmemi_heap_init(gshmemi_heap_t *heap, const gshmemi_heap_config_t *cfg);
/* Collective over the PEs of this host (in the same order on each): backs [0, end) of every
 * heap and maps it on every peer before returning. */
int gshmemi_heap_ensure_backed(gshmemi_heap_t *heap, size_t end);
/* Where local peer l's heap is mapped in this process (NULL when not reachable). */
char *gshmemi_heap_local_base(const gshmemi_heap_t *heap, int local);
int gshmemi_heap_fini(gshmemi_heap_t *heap);

/* Handle exchange between the PEs of one host (heap/ipc.c). */
int gshmemi_ipc_open(uint64_t job_key, int my_local, int *sock);
int gshmemi_ipc_send_fd(int sock, uint64_t job_key, int to_local, uint32_t seq, int from_local, uint64_t offset,
                        uint64_t size, int fd, double timeout_s);
/* Receives one handle of growth seq; reports the sender and range. */
int gshmemi_ipc_recv_fd(int sock, uint32_t seq, double timeout_s, int *from_local, uint64_t *offset, uint64_t *size,
                        int *fd);
void gshmemi_ipc_close(int sock);

#ifdef __cplusplus
}
#endif
#endif
