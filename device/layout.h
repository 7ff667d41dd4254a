/* Internal layouts shared by the runtime (C) and the inline device code: the pSync geometry, a
 * team as device code sees it, one collective call's arguments and the per-module device state.
 * Not part of the API: users include gshmem.h, which brings this in through gshmem/types.h. */
#ifndef GSHMEM_DEVICE_LAYOUT_H
#define GSHMEM_DEVICE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* The host proxy's FIFO as producers and the consumer see it (the operations on it: proxy_fifo.h).
 * slots and ret point at struct gshmemi_proxy_slot / gshmemi_proxy_ret of proxy_fifo.h. */
typedef struct gshmemi_proxy_fifo {
    struct gshmemi_proxy_slot *slots; /* [size] pinned host memory (device-mapped pointer on the device copy) */
    struct gshmemi_proxy_ret *ret;   /* [size] pinned: results by ticket % size */
    uint64_t *tail;                  /* next ticket to hand out (producers' atomic counter; device memory on the GPU) */
    uint64_t *head_cache;            /* producers' cached copy of *head (device memory on the GPU) */
    uint64_t *done_cache;            /* producers' cached copy of *done (device memory on the GPU) */
    uint64_t *poll_stamp;            /* 1 while a waiting GPU producer reads done over the bus, else 0
                                      * (device memory): one such read in flight per GPU */
    volatile uint64_t *head;         /* pinned, written by the consumer: tickets < *head are off the FIFO, their slots free */
    volatile uint64_t *done;         /* pinned, written by the consumer: every request with ticket < *done is complete */
    volatile uint64_t *error;        /* pinned: 0, or (ticket of the request that failed) + 1 */
    uint32_t size;                   /* slots, a power of two */
    uint32_t pad_;
    uint64_t timeout_ns;             /* bound of every producer wait (0 = never) */
} gshmemi_proxy_fifo_t;

/* One RC QP of the IBGDA path (device/ibgda.cuh) to one peer (of ibgda_nqp), as device code sees it. The record
 * is read-only to the GPU; what the GPU changes lives behind ctr and bbs. Counters count 64-byte
 * basic blocks (BBs); every WQE asks for a CQE. */
#define GSHMEMI_IBGDA_CTR_RESV 0    /* ctr word: BBs reserved so far (the producers' atomic counter) */
#define GSHMEMI_IBGDA_CTR_POSTED 16 /* BBs the send doorbell record covers (advanced in order) */
#define GSHMEMI_IBGDA_CTR_DONE 32   /* BBs whose CQE was polled (every WQE before them completed) */
#define GSHMEMI_IBGDA_CTR_WORDS 48  /* each counter on a 128-byte line of its own */
typedef struct gshmemi_ibgda_qp {
    void *sq;                    /* SQ ring, sq_bbs BBs (device memory) */
    uint32_t *sq_dbrec;          /* QP doorbell record: [0] receive, [1] send counter (big-endian);
                                  * in pinned host memory when db is NULL */
    volatile uint64_t *db;       /* the doorbell register (the UAR's; emulated: a pinned host page);
                                  * NULL: a host thread rings (GSHMEM_IBGDA_DOORBELL=cpu) */
    void *cq;                    /* one 64-byte CQE: the CQ is collapsed (device memory) */
    uint32_t *cq_dbrec;          /* CQ doorbell record (the NIC's; the GPU does not move it) */
    unsigned long long *ctr;     /* [GSHMEMI_IBGDA_CTR_WORDS] device memory, zero at start */
    uint64_t *result;            /* [sq_bbs] landing words of g and atomics, by WQE counter (device memory) */
    uint8_t *bbs;                /* [sq_bbs] BBs of the WQE that starts at each slot (device memory) */
    uint32_t sq_bbs, ncqe;       /* sq_bbs a power of two, at most 32768; ncqe 1 */
    uint32_t qpn;
    uint32_t lkey;               /* this PE's symmetric heap */
    uint32_t result_lkey;        /* the result words */
    uint32_t buf_lkey;           /* local buffers outside the heap */
    uint32_t rkey;               /* the peer's symmetric heap */
    uint32_t pad_;
    uint64_t raddr;              /* the peer's heap base as its NIC addresses it */
} gshmemi_ibgda_qp_t;

/* pSync geometry. Every team owns one slot of a pool reserved at init (the same offsets on every
 * PE); a slot holds a barrier area per slice (a CTA of a multi-CTA collective, or the one group of
 * a device call) and LL buffers. Sizes are multiples of 128 bytes, so no two teams or slices share
 * a cache line. */
#define GSHMEMI_COLL_SLICES 128     /* CTAs of one on-stream collective, at most */
#define GSHMEMI_BARRIER_WORDS 64    /* flags per slice: rounds * (radix - 1) < this */
#define GSHMEMI_BARRIER_RELAY_WORD (GSHMEMI_BARRIER_WORDS - 1) /* a slice's last: how far a broadcast relay got */
#define GSHMEMI_SIMPLE_ROUTED_SLICES 16 /* a team with remote members: most slices of its SIMPLE steps */
#define GSHMEMI_ROUTED_PARTS_MAX 4      /* ... and most CTAs working one slice (device/coll/policy.h) */
#define GSHMEMI_SEQ_ROUTED_PARTS (2 * GSHMEMI_COLL_SLICES) /* [2][routed slice][part]: last step a part sent, received */
#define GSHMEMI_SEQ_GRID (GSHMEMI_SEQ_ROUTED_PARTS + 2 * GSHMEMI_SIMPLE_ROUTED_SLICES * GSHMEMI_ROUTED_PARTS_MAX) /* the grid form's barrier word */
#define GSHMEMI_SEQ_WORDS (GSHMEMI_SEQ_GRID + 1)
#define GSHMEMI_LL_SLICE_BYTES 4096 /* LL buffer per (parity, slice, source PE): 256 lines of 16 B */
#define GSHMEMI_LL_SLICE_DATA (GSHMEMI_LL_SLICE_BYTES / 2)
#define GSHMEMI_LL_MAX_SLICES 16
#define GSHMEMI_SIMPLE_SLICES 64            /* slices with SIMPLE buffers (teams that have them) */
#define GSHMEMI_SIMPLE_CHUNK (32u << 10)    /* one SIMPLE slot: the bytes of one step */
#define GSHMEMI_SIMPLE_SLOTS 2              /* ring of slots per (slice, source member) */
/* LL128: 128-byte lines of 120 data bytes and an 8-byte flag (world team only, like SIMPLE). */
#define GSHMEMI_LL128_SLICES 64
#define GSHMEMI_LL128_SLICE_BYTES (16u << 10) /* per (parity, slice, source member): 128 lines */
#define GSHMEMI_LL128_SLICE_DATA (GSHMEMI_LL128_SLICE_BYTES / 128 * 120)
/* Byte offsets inside a slot: barrier words, the collect count word (a line of its own), the
 * broadcast acknowledgements ([slice][member] words), then LL (offset kept in the team). */
#define GSHMEMI_PSYNC_COLLECT_OFF ((size_t)GSHMEMI_COLL_SLICES * GSHMEMI_BARRIER_WORDS * 8)
#define GSHMEMI_PSYNC_ACK_OFF (GSHMEMI_PSYNC_COLLECT_OFF + 128)

/* A team as device code sees it. Member i is world PE start + i * stride. */
typedef struct gshmemi_team_dev {
    int size;
    int my_idx;          /* -1: this PE is not a member */
    int start, stride;
    int radix;           /* dissemination radix, clamped to the size */
    int has_remote;      /* some member is reached through the proxy, not by loads and stores */
    int ll_slices;       /* slices with LL buffers */
    uint64_t *barrier;   /* symmetric: [GSHMEMI_COLL_SLICES][GSHMEMI_BARRIER_WORDS] flags */
    char *ll;            /* symmetric: [2][ll_slices][size][GSHMEMI_LL_SLICE_BYTES] */
    uint64_t *ack;       /* symmetric: [GSHMEMI_COLL_SLICES][size] broadcast acknowledgements */
    int simple_slices;   /* 0: no SIMPLE buffers (only the world team has them) */
    int routed_slices;   /* a team with remote members: slices of its SIMPLE steps (<= simple_slices) */
    char *simple;        /* symmetric: [GSHMEMI_SIMPLE_SLOTS][simple_slices][size][GSHMEMI_SIMPLE_CHUNK]; a team
                          * with remote members cuts the same buffer as [..][routed_slices][size][routed_chunk] */
    uint64_t *simple_flags; /* symmetric: [simple_slices][size] last step a member put here */
    uint64_t *simple_credit; /* symmetric: [simple_slices][size] last step a member has consumed */
    uint64_t *simple_steps;  /* this PE's SIMPLE step counters, [simple_slices] (device memory) */
    int ll128_slices;    /* 0: no LL128 buffers (only the world team has them) */
    int routed_chunk;    /* a team with remote members: the bytes of one SIMPLE step (device/coll/policy.h) */
    char *ll128;         /* symmetric: [2][ll128_slices][size][GSHMEMI_LL128_SLICE_BYTES] */
    uint64_t *seq;       /* this PE's counters, [GSHMEMI_SEQ_WORDS] (device memory): LL/LL128 step
                          * numbers per slice, syncs done per slice, and the steps of a routed
                          * slice's parts */
} gshmemi_team_dev_t;
/* Kernels take a team by value. The compiler keeps a parameter of up to 128 bytes in registers and
 * reads a larger one from parameter memory at every use, which slows every collective's loops:
 * new fields go into the padding after an int, or the struct must shrink elsewhere. */
typedef char gshmemi_team_dev_fits[sizeof(gshmemi_team_dev_t) <= 128 ? 1 : -1];

/* One collective call, as the kernels see it. */
typedef struct gshmemi_coll_args {
    int kind;           /* GSHMEMI_COLL_* */
    int proto;          /* GSHMEMI_PROTO_*, resolved (never AUTO) */
    int root;           /* broadcast: the root's index in the team */
    void *dest;
    const void *src;
    size_t nelems;      /* as the OpenSHMEM routine counts: per block (fcollect, alltoall), per result (reduce) */
    size_t es;          /* element size */
    ptrdiff_t dst, sst; /* alltoalls strides, in elements */
} gshmemi_coll_args_t;

/* PEs whose heap base is kept in constant memory (PEs 0 .. GSHMEMI_CONST_PEERS - 1); the rest are
 * read from global memory. A power of two. The build option const_peers sets another, so that
 * tests reach the global path with few PEs; the library and its modules must agree (the layout
 * check, device/layout_check.h, refuses a mismatch). */
#ifndef GSHMEMI_CONST_PEERS
#define GSHMEMI_CONST_PEERS 32
#endif

/* The per-thread device stack (bytes) a context needs when a peer is remote. The remote path is
 * reached through far calls (device/remote.cuh), whose chain ptxas cannot size, so the runtime
 * raises the context's stack limit to these (never lowers it): the frames of every far function
 * of the path, plus 1 KiB for the calling kernel's own frame (CUDA's default limit). Checked
 * against ptxas by test/unit/test_user_registers.sh. */
#define GSHMEMI_REMOTE_STACK_KERNEL 1024
#define GSHMEMI_REMOTE_STACK_PROXY 2048 /* the proxy's functions */
#define GSHMEMI_REMOTE_STACK_IBGDA 4096 /* the proxy's and IBGDA's */

/* What every device code module sees of the runtime (one copy per module, in __constant__). */
typedef struct gshmemi_device_state {
    int initialized;
    int my_pe;
    int n_pes;
    int debug_checks;            /* GSHMEM_DEBUG_CHECKS: validate PE and address on every device call */
    char *heap_base;             /* this PE's heap: symmetric addresses live in [heap_base, +heap_size) */
    size_t heap_size;
    char *const *peer_base;      /* device array [n_pes]: peer's heap as mapped here, NULL if not P2P (proxy) */
    int max_teams;
    const gshmemi_team_dev_t *teams; /* device array [max_teams]; handles index it */
    gshmemi_team_dev_t world;    /* teams[SHMEM_TEAM_WORLD], read through the constant cache */
    int coll_proto;              /* GSHMEM_COLL_PROTO: GSHMEMI_PROTO_* */
    size_t coll_ll_max;          /* GSHMEM_COLL_LL_MAX: largest block (bytes) sent by LL */
    size_t coll_simple_max;      /* GSHMEM_COLL_SIMPLE_MAX: largest block sent by SIMPLE */
    size_t coll_ll128_max;       /* GSHMEM_COLL_LL128_MAX: largest block sent by LL128 */
    size_t coll_oneshot_max;     /* GSHMEM_COLL_ONESHOT_MAX: largest 2-PE direct reduction done one-shot */
    size_t coll_push_min;        /* GSHMEM_COLL_PUSH_MIN: smallest fcollect/alltoall block DIRECT stores */
    size_t coll_push_reduce_min; /* GSHMEM_COLL_PUSH_REDUCE_MIN: smallest 2-PE reduction two-shot by stores */
    uint64_t wait_timeout_ns;    /* device waits on other PEs trap after this long; 0 = never */
    char *peer_base_c[GSHMEMI_CONST_PEERS]; /* first PEs of peer_base, read through the constant cache */
    gshmemi_proxy_fifo_t proxy;  /* this PE's host-proxy FIFO (device pointers); size 0: no proxy */
    const gshmemi_ibgda_qp_t *ibgda; /* device array [n_pes * ibgda_nqp]: the QPs to each PE routed
                                      * through IBGDA, PE by PE (sq NULL for the others); NULL: no PE is */
    uint32_t ibgda_nqp;          /* QPs per peer (GSHMEM_IBGDA_NUM_RC_PER_PE), 1 or more */
} gshmemi_device_state_t;

/* Each CUDA module's device state is filled through a function compiled into that module; the
 * module registers it with its layout (device/layout_check.h, device/state.cuh). */
typedef int (*gshmemi_module_update_fn)(const gshmemi_device_state_t *state, int device);
#ifdef __cplusplus
extern "C" {
#endif
/* Loads every kernel of the CUDA module that holds `function` (a CUfunction: cudaGetFuncBySymbol
 * of one of its kernels) when the runtime asks for it (CUDA loads kernels lazily and a host
 * thread of gshmem serves device requests: runtime/modules.c says why). Returns 0; a failure is
 * logged, not returned. */
int gshmemi_module_preload(void *function);
#ifdef __cplusplus
}
#endif

#endif
