/* libFuzzer target: the uid bootstrap's message decoder (runtime/base/bootstrap_uid_msg.c), which
 * rank 0 runs on whatever any local process sends to its port, and a joiner on rank 0's answers.
 * Build: clang -fsanitize=fuzzer,address,undefined -I. -Iinclude test/fuzz/fuzz_uid_msg.c \
 *        runtime/base/bootstrap_uid_msg.c (test/fuzz/run-fuzzer.sh does this for CI). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/bootstrap_uid_msg.h"
#include "runtime/base/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gshmemi_uid_msg_t m;
    const char *why = NULL;
    uint8_t *copy;
    long rc;

    /* An exact-size heap copy: ASan sees any read past what arrived. */
    copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    rc = gshmemi_uid_msg_decode(copy, size, &m, &why);
    if (rc < 0) {
        /* a refusal always says why, and only these two statuses exist */
        if (!why || (rc != GSHMEMI_ERR_INVALID && rc != GSHMEMI_ERR_UNSUPPORTED)) abort();
    } else if (rc > 0) {
        /* a complete message lies within the input, starts with a valid header and is exactly
         * header + payload for a setup op (a collective's payload is the caller's to read) */
        if ((size_t)rc > size || (size_t)rc < GSHMEMI_UID_HDR_BYTES) abort();
        if (m.hdr.magic != GSHMEMI_UID_MSG_MAGIC || m.hdr.version != GSHMEMI_UID_PROTO_VERSION) abort();
        if (m.hdr.op < 1 || m.hdr.op >= GSHMEMI_UID_OP_COUNT) abort();
        if ((size_t)rc != GSHMEMI_UID_HDR_BYTES && (size_t)rc != GSHMEMI_UID_HDR_BYTES + m.hdr.len) abort();
        if (m.hdr.op == GSHMEMI_UID_OP_HELLO && (m.hdr.src < 1 || m.hdr.src >= m.hdr.arg)) abort();
        /* every prefix of a complete message asks for more, never decodes differently */
        for (size_t k = 0; k < (size_t)rc; k++) {
            gshmemi_uid_msg_t p;
            const char *w;
            if (gshmemi_uid_msg_decode(copy, k, &p, &w) != 0) abort();
        }
    } else if (size >= GSHMEMI_UID_HDR_BYTES && m.hdr.len > GSHMEMI_UID_PAYLOAD_MAX) {
        abort(); /* "need more" only ever for a bounded handshake payload */
    }
    /* the proof over the input as both nonces must not read out of bounds either */
    if (size >= 16 + 2 * GSHMEMI_UID_NONCE_BYTES) {
        uint64_t key[2];
        memcpy(key, copy, 16);
        (void)gshmemi_uid_proof(key, 'R', copy + 16, copy + 16 + GSHMEMI_UID_NONCE_BYTES, 1, 2);
    }
    if (size >= 16) (void)gshmemi_siphash24(copy, copy + 16, size - 16);
    free(copy);
    return 0;
}
