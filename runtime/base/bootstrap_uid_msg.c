/* The uid bootstrap's wire format: decoder and keyed proof (see bootstrap_uid_msg.h). */
#include "bootstrap_uid_msg.h"

#include <string.h>

#include "log.h"

/* Payload bytes of each setup op; -1: a collective, whose length the caller checks. */
static long fixed_payload(unsigned op)
{
    switch (op) {
    case GSHMEMI_UID_OP_HELLO: return GSHMEMI_UID_NONCE_BYTES;
    case GSHMEMI_UID_OP_CHALLENGE: return GSHMEMI_UID_NONCE_BYTES + 8;
    case GSHMEMI_UID_OP_PROOF: return 8;
    case GSHMEMI_UID_OP_WELCOME:
    case GSHMEMI_UID_OP_REJECT:
    case GSHMEMI_UID_OP_ABORT: return 0;
    default: return -1;
    }
}

long gshmemi_uid_msg_decode(const void *bytes, size_t n, gshmemi_uid_msg_t *out, const char **why)
{
    const uint8_t *p = bytes;
    gshmemi_uid_hdr_t h;
    long fixed;

    *why = NULL;
    if (n < GSHMEMI_UID_HDR_BYTES) return 0;
    memcpy(&h, p, sizeof(h));
    if (h.magic != GSHMEMI_UID_MSG_MAGIC) {
        *why = "not a gshmem bootstrap message (wrong magic)";
        return GSHMEMI_ERR_INVALID;
    }
    if (h.version != GSHMEMI_UID_PROTO_VERSION) {
        *why = "another gshmem bootstrap protocol version";
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    if (h.op < 1 || h.op >= GSHMEMI_UID_OP_COUNT) {
        *why = "unknown operation";
        return GSHMEMI_ERR_INVALID;
    }
    fixed = fixed_payload(h.op);
    if (fixed >= 0 && h.len != (uint64_t)fixed) {
        *why = "wrong payload length for its operation";
        return GSHMEMI_ERR_INVALID;
    }
    if (h.op == GSHMEMI_UID_OP_HELLO && (h.arg < 2 || h.src < 1 || h.src >= h.arg)) {
        *why = "a hello with a rank out of range";
        return GSHMEMI_ERR_INVALID;
    }
    if (h.seq != 0 && fixed >= 0 && h.op != GSHMEMI_UID_OP_ABORT) {
        *why = "a connection-setup message with a sequence number";
        return GSHMEMI_ERR_INVALID;
    }
    memset(out, 0, sizeof(*out));
    out->hdr = h;
    if (fixed < 0) return (long)GSHMEMI_UID_HDR_BYTES;
    if (n < GSHMEMI_UID_HDR_BYTES + (size_t)fixed) return 0;
    p += GSHMEMI_UID_HDR_BYTES;
    if (h.op == GSHMEMI_UID_OP_HELLO || h.op == GSHMEMI_UID_OP_CHALLENGE) {
        memcpy(out->nonce, p, GSHMEMI_UID_NONCE_BYTES);
        p += GSHMEMI_UID_NONCE_BYTES;
    }
    if (h.op == GSHMEMI_UID_OP_CHALLENGE || h.op == GSHMEMI_UID_OP_PROOF) memcpy(&out->proof, p, 8);
    return (long)(GSHMEMI_UID_HDR_BYTES + (size_t)fixed);
}

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

#define SIPROUND                                                                   \
    do {                                                                           \
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);                  \
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                                     \
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                                     \
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);                  \
    } while (0)

uint64_t gshmemi_siphash24(const uint8_t key[16], const void *msg, size_t len)
{
    const uint8_t *m = msg;
    const uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    uint64_t last = (uint64_t)len << 56;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t w = load_le64(m + i);
        v3 ^= w;
        SIPROUND;
        SIPROUND;
        v0 ^= w;
    }
    for (size_t k = 0; i + k < len; k++) last |= (uint64_t)m[i + k] << (8 * k);
    v3 ^= last;
    SIPROUND;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t gshmemi_uid_proof(const uint64_t key[2], char side, const uint8_t joiner_nonce[GSHMEMI_UID_NONCE_BYTES],
                           const uint8_t root_nonce[GSHMEMI_UID_NONCE_BYTES], int32_t rank, int32_t nranks)
{
    /* "gshmem-uid-proof" + side + both nonces + rank + nranks: every field at a fixed offset */
    uint8_t m[16 + 1 + 2 * GSHMEMI_UID_NONCE_BYTES + 8], k[16];
    size_t o = 0;

    memcpy(k, key, 16);
    memcpy(m, "gshmem-uid-proof", 16), o += 16;
    m[o++] = (uint8_t)side;
    memcpy(m + o, joiner_nonce, GSHMEMI_UID_NONCE_BYTES), o += GSHMEMI_UID_NONCE_BYTES;
    memcpy(m + o, root_nonce, GSHMEMI_UID_NONCE_BYTES), o += GSHMEMI_UID_NONCE_BYTES;
    memcpy(m + o, &rank, 4), o += 4;
    memcpy(m + o, &nranks, 4), o += 4;
    return gshmemi_siphash24(k, m, o);
}

int gshmemi_uid_proof_equal(uint64_t a, uint64_t b)
{
    volatile uint64_t d = a ^ b;
    return d == 0;
}
