/* Unique-id bootstrap over TCP.
 *
 * Rank 0 owns a listening socket (made by gshmemi_uid_create, or inherited from gshmemrun);
 * the uid carries its address, port and a random job key. Every other rank connects to rank 0,
 * and each side proves to the other that it holds the key without sending it (see "joining"):
 * a star. Each collective is a gather to rank 0 followed by a scatter or
 * broadcast from it. Messages are a fixed header (op, sequence number, length) plus payload, so
 * ranks that call different operations, or the same one with different sizes, are caught.
 *
 * Every wait goes through poll() with a deadline, and a failure seen by rank 0 (a peer timed out,
 * disconnected or disagreed) is forwarded to the other ranks as an abort message, so they report
 * the rank that actually failed instead of timing out on rank 0.
 *
 * This file: a rank joining rank 0 (the handshake's client side) and the bootstrap's init; the
 * other parts are listed in bootstrap_uid.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap_uid.h"
#include "env.h"
#include "log.h"

static int connect_root(const gshmemi_uid_t *uid, int rank, double deadline, double timeout, int *out)
{
    struct sockaddr_in sa;
    int backoff_ms = 10, last_err = 0;
    char where[64];

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_addr, uid->addr, 4);
    sa.sin_port = uid->port;
    gshmemi_uidi_addr_string(uid, where, sizeof(where));
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;
        if (fd < 0) {
            GSHMEMI_ERROR("bootstrap", "rank %d: socket failed: %s", rank, strerror(errno));
            return GSHMEMI_ERR_SYSTEM;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            err = errno;
            if (err == EINPROGRESS || err == EINTR) {
                struct pollfd p = {fd, POLLOUT, 0};
                socklen_t len = sizeof(err);
                int r;
                do r = poll(&p, 1, ms_until(deadline));
                while (r < 0 && errno == EINTR);
                if (r == 0) err = ETIMEDOUT;
                else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
            }
        }
        if (!err) {
            gshmemi_uidi_set_nodelay(fd);
            *out = fd;
            return GSHMEMI_OK;
        }
        close(fd);
        last_err = err;
        if (err != ECONNREFUSED && err != ETIMEDOUT && err != EHOSTUNREACH && err != ENETUNREACH && err != ECONNRESET &&
            err != EAGAIN && err != EINTR) {
            GSHMEMI_ERROR("bootstrap", "rank %d: cannot connect to rank 0 at %s: %s", rank, where, strerror(err));
            return GSHMEMI_ERR_SYSTEM;
        }
        if (gshmemi_now_s() >= deadline) break;
        GSHMEMI_TRACE("bootstrap", "rank %d: rank 0 at %s not reachable yet (%s); retrying in %d ms", rank, where, strerror(err), backoff_ms);
        poll(NULL, 0, backoff_ms < ms_until(deadline) ? backoff_ms : ms_until(deadline));
        if (backoff_ms < 500) backoff_ms *= 2;
    }
    GSHMEMI_ERROR("bootstrap", "rank %d: timed out after %g s waiting for rank 0 to accept at %s (last error: %s); GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                  rank, timeout, where, strerror(last_err));
    return GSHMEMI_ERR_TIMEOUT;
}

/* Moves n bytes over a non-blocking socket by deadline: 0, -ETIMEDOUT, -ECONNRESET for a close
 * by the other side, or another -errno. */
static int move_all(int fd, void *buf, size_t n, int sending, double deadline)
{
    size_t done = 0;

    while (done < n) {
        ssize_t r = sending ? send(fd, (char *)buf + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(fd, (char *)buf + done, n - done, MSG_DONTWAIT);
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        if (r == 0) return -ECONNRESET;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return errno == EPIPE ? -ECONNRESET : -errno;
        {
            struct pollfd p = {fd, sending ? POLLOUT : POLLIN, 0};
            int pr;
            if (gshmemi_now_s() >= deadline) return -ETIMEDOUT;
            pr = poll(&p, 1, ms_until(deadline));
            if (pr < 0 && errno != EINTR) return -errno;
        }
    }
    return 0;
}

/* Rank > 0, one attempt on a fresh connection: hello, check rank 0's proof, give ours, wait for
 * the welcome. Returns OK, RC_RETRY (rank 0 dropped us early: busy) or a failure. */
static int peer_handshake(uid_state_t *st, const gshmemi_uid_t *uid, int rank, int nranks, double deadline)
{
    uint8_t hello[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES], in[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_PAYLOAD_MAX];
    uint8_t proof_msg[GSHMEMI_UID_HDR_BYTES + 8], jnonce[GSHMEMI_UID_NONCE_BYTES];
    gshmemi_uid_msg_t m;
    gshmemi_uid_hdr_t h;
    const char *why;
    char where[64];
    uint64_t proof;
    long drc;
    int err;
    size_t have = GSHMEMI_UID_HDR_BYTES;

    gshmemi_uidi_addr_string(uid, where, sizeof(where));
    GSHMEMI_CHECK(gshmemi_uidi_fill_random(jnonce, sizeof(jnonce), "joining"));
    gshmemi_uidi_hdr_init(&h, GSHMEMI_UID_OP_HELLO, rank, nranks, 0, sizeof(jnonce));
    memcpy(hello, &h, sizeof(h));
    memcpy(hello + sizeof(h), jnonce, sizeof(jnonce));
    err = move_all(st->fd, hello, sizeof(hello), 1, deadline);
    if (err == 0) err = move_all(st->fd, in, have, 0, deadline);
    if (err == 0) {
        drc = gshmemi_uid_msg_decode(in, have, &m, &why);
        if (drc == 0 && m.hdr.len <= GSHMEMI_UID_PAYLOAD_MAX) {
            err = move_all(st->fd, in + have, (size_t)m.hdr.len, 0, deadline);
            have += (size_t)m.hdr.len;
            if (err == 0) drc = gshmemi_uid_msg_decode(in, have, &m, &why);
        }
    }
    if (err == -ECONNRESET) return RC_RETRY;
    if (err == -ETIMEDOUT) {
        GSHMEMI_ERROR("bootstrap", "rank %d: timed out after %g s waiting for rank 0 at %s to answer its hello; GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                      rank, st->timeout, where);
        return GSHMEMI_ERR_TIMEOUT;
    }
    if (err) {
        GSHMEMI_ERROR("bootstrap", "rank %d: joining rank 0 at %s failed: %s", rank, where, strerror(-err));
        return GSHMEMI_ERR_SYSTEM;
    }
    if (drc <= 0) {
        GSHMEMI_ERROR("bootstrap", "rank %d: the process at %s answered with %s: it is not this job's rank 0 (rank 0 exited and another process took its port?)",
                      rank, where, drc < 0 ? why : "an oversized message");
        return GSHMEMI_ERR_INVALID;
    }
    if (m.hdr.op == GSHMEMI_UID_OP_REJECT && m.hdr.arg == GSHMEMI_UID_REJECT_BUSY) return RC_RETRY;
    if (m.hdr.op == GSHMEMI_UID_OP_REJECT) {
        GSHMEMI_ERROR("bootstrap", "rank %d: rank 0 rejected this process: %s", rank, reject_reason(m.hdr.arg));
        return GSHMEMI_ERR_INVALID;
    }
    if (m.hdr.op == GSHMEMI_UID_OP_ABORT) {
        xfer_ctx_t c;
        gshmemi_uidi_ctx_init(&c, GSHMEMI_UID_OP_HELLO, 0, rank, st->timeout);
        c.abort_rank = m.hdr.arg;
        c.abort_status = m.hdr.status < 0 ? m.hdr.status : GSHMEMI_ERR_REMOTE;
        gshmemi_uidi_log_abort(&c);
        return c.abort_status;
    }
    if (m.hdr.op != GSHMEMI_UID_OP_CHALLENGE) {
        GSHMEMI_ERROR("bootstrap", "rank %d: the process at %s sent a %s where rank 0's challenge belongs: it is not this job's rank 0 (rank 0 exited and another process took its port?); nothing secret was sent to it",
                      rank, where, op_name(m.hdr.op));
        return GSHMEMI_ERR_INVALID;
    }
    proof = gshmemi_uid_proof(uid->key, 'R', jnonce, m.nonce, rank, nranks);
    if (!gshmemi_uid_proof_equal(proof, m.proof)) {
        GSHMEMI_ERROR("bootstrap", "rank %d: the process listening at %s did not prove this job's key: it is not this job's rank 0 (rank 0 exited and another process took its port?), or this unique id belongs to another job; nothing secret was sent to it",
                      rank, where);
        return GSHMEMI_ERR_INVALID;
    }
    proof = gshmemi_uid_proof(uid->key, 'J', jnonce, m.nonce, rank, nranks);
    gshmemi_uidi_hdr_init(&h, GSHMEMI_UID_OP_PROOF, rank, nranks, 0, 8);
    memcpy(proof_msg, &h, sizeof(h));
    memcpy(proof_msg + sizeof(h), &proof, 8);
    err = move_all(st->fd, proof_msg, sizeof(proof_msg), 1, deadline);
    if (err == -ECONNRESET) return RC_RETRY;
    if (err) {
        GSHMEMI_ERROR("bootstrap", "rank %d: sending its proof to rank 0 at %s failed: %s", rank, where, strerror(-err));
        return err == -ETIMEDOUT ? GSHMEMI_ERR_TIMEOUT : GSHMEMI_ERR_SYSTEM;
    }
    /* Admitted (or about to be told why not): wait for the others, a little longer than rank 0
     * does, so that rank 0's report of a late rank arrives first. */
    {
        xfer_t x;
        xfer_ctx_t c;
        int failed;
        gshmemi_uidi_ctx_init(&c, GSHMEMI_UID_OP_HELLO, 0, rank, st->timeout + grace(st->timeout));
        gshmemi_uidi_xfer_recv(&x, 0, st->fd, GSHMEMI_UID_OP_WELCOME, nranks, 0, NULL, 0);
        return gshmemi_uidi_run_xfers(&x, 1, gshmemi_now_s() + c.timeout, &c, &failed);
    }
}

/* Rank > 0: connect and handshake; when rank 0 drops us before the handshake finished (a flood
 * of other connections, or we were slow), connect again until the deadline. */
static int peer_join(uid_state_t *st, const gshmemi_uid_t *uid, int rank, int nranks)
{
    double deadline = gshmemi_now_s() + st->timeout;
    int tries = 0, rc;
    char where[64];

    gshmemi_uidi_addr_string(uid, where, sizeof(where));
    for (;;) {
        GSHMEMI_CHECK(connect_root(uid, rank, deadline, st->timeout, &st->fd));
        rc = peer_handshake(st, uid, rank, nranks, deadline);
        if (rc != RC_RETRY) return rc;
        close(st->fd);
        st->fd = -1;
        tries++;
        if (gshmemi_now_s() >= deadline) {
            GSHMEMI_ERROR("bootstrap", "rank %d: rank 0 at %s dropped all %d of its connections before the handshake finished, for %g s (a flood of other connections?); GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                          rank, where, tries, st->timeout);
            return GSHMEMI_ERR_TIMEOUT;
        }
        GSHMEMI_INFO("bootstrap", "rank %d: rank 0 at %s dropped the connection before the handshake finished (busy); connecting again", rank, where);
        poll(NULL, 0, ms_until(deadline) < 20 ? ms_until(deadline) : 20);
    }
}


int gshmemi_bootstrap_uid_init(const gshmemi_uid_t *uid, int rank, int nranks, double timeout_s, gshmemi_bootstrap_t **out)
{
    gshmemi_bootstrap_t *bs;
    uid_state_t *st;
    int rc = GSHMEMI_OK;

    GSHMEMI_CHECK(gshmemi_bootstrap_check_args("gshmemi_bootstrap_uid_init", out, timeout_s));
    GSHMEMI_CHECK(gshmemi_uidi_check(uid, "gshmemi_bootstrap_uid_init"));
    if (nranks < 1) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: nranks %d must be at least 1", nranks);
        return GSHMEMI_ERR_INVALID;
    }
    if (rank < 0 || rank >= nranks) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: rank %d is out of range 0..%d (nranks %d)", rank, nranks - 1, nranks);
        return GSHMEMI_ERR_INVALID;
    }
    if (rank == 0 && nranks > 1 && gshmemi_uid_listener_fd(uid) < 0) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: rank 0 must run in the process that created the unique id (shmemx_get_uniqueid) or inherited its listener from gshmemrun; this process has no listener for it%s",
                      !gshmemi_uidi_has_listener() ? " (or it was already used: a unique id starts one job)" : "");
        return GSHMEMI_ERR_INVALID;
    }

    bs = gshmemi_bootstrap_new(&gshmemi_uidi_ops, rank, nranks, sizeof(*st));
    if (!bs) return GSHMEMI_ERR_NOMEM;
    st = bs->impl;
    st->fd = -1;
    st->timeout = timeout_s;

    if (rank == 0) {
        int lfd = gshmemi_uid_listener_fd(uid);
        if (nranks > 1) {
            st->conns = malloc((size_t)nranks * sizeof(int));
            if (!st->conns) {
                rc = GSHMEMI_ERR_NOMEM;
                goto fail;
            }
            for (int r = 0; r < nranks; r++) st->conns[r] = -1;
            rc = gshmemi_uidi_root_accept(st, lfd, uid, nranks);
        }
        /* A uid starts one job: later joiners are refused, not left waiting. */
        if (lfd >= 0) gshmemi_uid_close_listener();
    } else {
        rc = peer_join(st, uid, rank, nranks);
    }
    if (rc != GSHMEMI_OK) goto fail;
    GSHMEMI_INFO("bootstrap", "uid bootstrap: rank %d of %d joined", rank, nranks);
    *out = bs;
    return GSHMEMI_OK;
fail:
    gshmemi_uidi_state_free(st, nranks);
    free(bs);
    return rc;
}
