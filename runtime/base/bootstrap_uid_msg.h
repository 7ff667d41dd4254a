/* The uid bootstrap's wire format: message header, handshake payloads, their decoder and the
 * keyed proof. Pure functions (no sockets, no logging), so a fuzzer can drive the decoder. */
#ifndef GSHMEMI_BOOTSTRAP_UID_MSG_H
#define GSHMEMI_BOOTSTRAP_UID_MSG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_UID_MSG_MAGIC 0x47534842u /* "GSHB" */
#define GSHMEMI_UID_PROTO_VERSION 2u      /* 2: mutual key proof; the key never travels */
#define GSHMEMI_UID_NONCE_BYTES 16

enum {
    GSHMEMI_UID_OP_HELLO = 1,   /* joiner -> 0: src = rank, arg = nranks, payload = joiner's nonce */
    GSHMEMI_UID_OP_WELCOME,     /* 0 -> joiner, once every rank has joined */
    GSHMEMI_UID_OP_REJECT,      /* 0 -> joiner: arg = reason (GSHMEMI_UID_REJECT_*) */
    GSHMEMI_UID_OP_ABORT,       /* 0 -> everyone: arg = failed rank, status = its status */
    GSHMEMI_UID_OP_ALLGATHER,
    GSHMEMI_UID_OP_ALLTOALL,
    GSHMEMI_UID_OP_BARRIER,
    GSHMEMI_UID_OP_BCAST,       /* arg = root */
    GSHMEMI_UID_OP_CHALLENGE,   /* 0 -> joiner: payload = rank 0's nonce + rank 0's proof */
    GSHMEMI_UID_OP_PROOF,       /* joiner -> 0: payload = the joiner's proof */
    GSHMEMI_UID_OP_COUNT
};

enum {
    GSHMEMI_UID_REJECT_KEY = 1, /* the joiner's proof is wrong */
    GSHMEMI_UID_REJECT_NRANKS,
    GSHMEMI_UID_REJECT_RANK,
    GSHMEMI_UID_REJECT_DUPLICATE,
    GSHMEMI_UID_REJECT_VERSION,
    GSHMEMI_UID_REJECT_BUSY,    /* dropped before the handshake finished (slots full, too slow): try again */
};

/* Fixed-size header in front of every message (native byte order: same-architecture jobs). */
typedef struct {
    uint32_t magic;  /* GSHMEMI_UID_MSG_MAGIC */
    uint16_t op;     /* GSHMEMI_UID_OP_* */
    uint16_t version;
    int32_t src;     /* sender's rank */
    int32_t arg;     /* op-specific, see the op list */
    int32_t status;  /* OP_ABORT: the failure's status */
    uint32_t reserved;
    uint64_t seq;    /* per-bootstrap operation counter; 0 for connection setup */
    uint64_t len;    /* payload bytes that follow */
} gshmemi_uid_hdr_t;

#define GSHMEMI_UID_HDR_BYTES ((size_t)sizeof(gshmemi_uid_hdr_t))
#define GSHMEMI_UID_PAYLOAD_MAX 32 /* the largest fixed handshake payload (challenge: 24) */

/* A decoded message: the header and, for the handshake ops, the payload. */
typedef struct {
    gshmemi_uid_hdr_t hdr;
    uint8_t nonce[GSHMEMI_UID_NONCE_BYTES]; /* HELLO, CHALLENGE: the sender's nonce */
    uint64_t proof;                         /* CHALLENGE, PROOF */
} gshmemi_uid_msg_t;

/* Decodes the first n bytes received on a connection. Returns the bytes the message takes
 * (header + payload) once they are all there, 0 when more bytes are needed (once n covers the
 * header, out->hdr is filled and hdr.len says how many follow), or GSHMEMI_ERR_INVALID (not a
 * well-formed message) or GSHMEMI_ERR_UNSUPPORTED (another protocol version) with *why set.
 * The setup ops (hello, challenge, proof, welcome, reject, abort) have fixed payload sizes and are
 * decoded whole; a collective's payload is left to the caller (the return covers the header). */
long gshmemi_uid_msg_decode(const void *bytes, size_t n, gshmemi_uid_msg_t *out, const char **why);

/* SipHash-2-4 of msg under a 16-byte key (the reference algorithm; little-endian key and words). */
uint64_t gshmemi_siphash24(const uint8_t key[16], const void *msg, size_t len);

/* The proof one side gives that it holds the job key: a keyed hash of both nonces and the
 * joiner's claimed rank/nranks. `side` separates rank 0's proof ('R') from a joiner's ('J'), so
 * one side's answer can never be replayed as the other's. */
uint64_t gshmemi_uid_proof(const uint64_t key[2], char side, const uint8_t joiner_nonce[GSHMEMI_UID_NONCE_BYTES],
                           const uint8_t root_nonce[GSHMEMI_UID_NONCE_BYTES], int32_t rank, int32_t nranks);

/* Constant-time equality of two proofs (a mismatch position must not show in the timing). */
int gshmemi_uid_proof_equal(uint64_t a, uint64_t b);

#ifdef __cplusplus
}
#endif
#endif
