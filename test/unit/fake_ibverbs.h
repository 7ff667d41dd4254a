/* What test/unit/fake_ibverbs.c records of each work request posted to it, for a test that
 * reads it back through dlsym (the fake is loaded as libibverbs, not linked). */
#ifndef GSHMEM_TEST_FAKE_IBVERBS_H
#define GSHMEM_TEST_FAKE_IBVERBS_H

#include <stdint.h>

typedef struct {
    int opcode;           /* enum ibv_wr_opcode */
    int send_flags;
    uint64_t local;       /* the scatter/gather entry: address, length, key */
    uint32_t length, lkey;
    uint64_t remote;      /* RDMA or atomic: the remote address and key */
    uint32_t rkey;
    uint64_t compare_add; /* atomics */
    uint64_t swap;
} fake_ibv_wr_t;

/* The ith work request posted since the library loaded (0-based): 1 and *out, or 0 when i is
 * not posted yet or no longer kept (the last 1024 are). */
typedef int (*fake_ibv_wr_fn)(int i, fake_ibv_wr_t *out);
/* The rkey of the registration with remote access that holds addr; 0 for none. */
typedef uint32_t (*fake_ibv_rkey_at_fn)(uint64_t addr);

#endif
