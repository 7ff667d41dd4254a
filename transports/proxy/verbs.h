/* The verbs backend's pure parts (blob layout, key and region lookups, the CAS-loop step, the
 * messages), shared by transports/proxy/verbs.c and its unit test, and the test hook. Nothing
 * here calls libibverbs. */
#ifndef GSHMEMI_PROXY_VERBS_H
#define GSHMEMI_PROXY_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/ib_conn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_VERBS_BLOB_MAGIC 0x47534956u /* "GSIV" */
#define GSHMEMI_VERBS_NAME_MAX 64            /* IBV_SYSFS_NAME_MAX */

/* What each PE publishes at open: how its port is addressed (common/ib_conn.h), magic
 * GSHMEMI_VERBS_BLOB_MAGIC. */
typedef gshmemi_ib_addr_t gshmemi_verbs_blob_t;

#define GSHMEMI_VERBS_BLOB_SIZE sizeof(gshmemi_verbs_blob_t)

void gshmemi_verbs_blob_pack(const gshmemi_verbs_blob_t *in, void *out);
/* GSHMEMI_ERR_INVALID (logged, naming pe) when the bytes are not an opened verbs backend's blob. */
int gshmemi_verbs_blob_unpack(const void *in, int pe, gshmemi_verbs_blob_t *out);

/* One PE's registration of one heap chunk, as allgathered at register_chunk. */
typedef struct {
    uint64_t offset; /* from the start of that PE's heap */
    uint64_t size;   /* 0: empty entry */
    uint64_t addr;   /* the chunk's address in that PE's process: what RDMA ops target */
    uint32_t rkey;
    uint32_t pad;
} gshmemi_verbs_rkey_t;

/* table: [n_chunks][n_pes]. Finds pe's chunk holding heap offset off: the remote address, its key
 * and the bytes from off to the chunk's end (an op is split there). GSHMEMI_ERR_INVALID (not
 * logged) when no chunk of pe holds off. */
int gshmemi_verbs_rkey_lookup(const gshmemi_verbs_rkey_t *table, int n_chunks, int n_pes, int pe, uint64_t off,
                              uint64_t *raddr, uint32_t *rkey, uint64_t *avail);

/* A local registered range (a heap chunk or a cached buffer). */
typedef struct {
    uintptr_t addr;
    size_t size;
    uint32_t lkey;
    int kind;            /* GSHMEMI_VERBS_REG_* */
    uint64_t buffer_id;  /* a device buffer's CU_POINTER_ATTRIBUTE_BUFFER_ID when registered */
    void *mr;            /* struct ibv_mr * (opaque here) */
} gshmemi_verbs_region_t;
enum {
    GSHMEMI_VERBS_REG_HEAP = 0, /* a heap chunk: until close */
    GSHMEMI_VERBS_REG_DEVICE,   /* a cached device allocation: dropped when its buffer id changes */
    GSHMEMI_VERBS_REG_HOST,     /* host pages: dropped at the next flush */
};

/* Index of the region holding p, with the bytes from p to its end; -1 when none does. */
int gshmemi_verbs_region_find(const gshmemi_verbs_region_t *regs, int n, const void *p, size_t *avail);

/* Parses GSHMEM_IB_DEVICE: "name" or "name:port" (gshmemi_ibv_parse_device). name gets the
 * device (cap bytes), *port 0 when none is given. GSHMEMI_ERR_INVALID, logged naming the variable
 * and the value, on anything else. NULL or "" gives name "" (no device named). */
int gshmemi_verbs_parse_device(const char *text, char *name, size_t cap, int *port);

/* The word a CAS loop swaps in: op (GSHMEMI_AMO_*) applied to the width-byte (4 or 8) field at
 * bit shift of word (the remote 8-byte word as last seen), the other bits unchanged. */
uint64_t gshmemi_verbs_amo_apply(int op, size_t width, unsigned shift, uint64_t word, uint64_t value, uint64_t cond);

/* Kinds of work request, kept in the wr_id (an error CQE's opcode field is undefined). */
enum {
    GSHMEMI_VERBS_OP_WRITE = 1,
    GSHMEMI_VERBS_OP_WRITE_INLINE,
    GSHMEMI_VERBS_OP_READ,
    GSHMEMI_VERBS_OP_FETCH_ADD,
    GSHMEMI_VERBS_OP_CMP_SWAP,
};
const char *gshmemi_verbs_op_name(int kind);

/* The message of an error completion: "RDMA WRITE to PE 3 failed: remote access error (status 10,
 * vendor error 0x88)". Returns buf. */
char *gshmemi_verbs_cqe_message(char *buf, size_t cap, int kind, int pe, const char *status_str, int status,
                                uint32_t vendor_err);

/* Tests: the library open() loads (default "libibverbs.so.1"); NULL restores the default. Unloads
 * a loaded one. */
void gshmemi_verbs_set_library_for_test(const char *name);

#ifdef __cplusplus
}
#endif
#endif
