/* The unique-id bootstrap's message exchange (bootstrap_uid.h): messages are a fixed header (op,
 * sequence number, length) plus payload, moved by poll() against a deadline; a failure rank 0
 * sees is forwarded to the other ranks as an abort, so they report the rank that failed. On it,
 * the collectives of the bootstrap's ops table: a gather to rank 0, then a scatter or broadcast
 * from it. */
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

/* ---------------------------------------------------------------- message engine */

void gshmemi_uidi_set_nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        GSHMEMI_WARN("bootstrap", "setsockopt(TCP_NODELAY) failed: %s", strerror(errno));
}

void gshmemi_uidi_hdr_init(gshmemi_uid_hdr_t *h, int op, int src, int arg, uint64_t seq, uint64_t len)
{
    memset(h, 0, sizeof(*h));
    h->magic = GSHMEMI_UID_MSG_MAGIC;
    h->op = (uint16_t)op;
    h->version = GSHMEMI_UID_PROTO_VERSION;
    h->src = src;
    h->arg = arg;
    h->seq = seq;
    h->len = len;
}

void gshmemi_uidi_xfer_send(xfer_t *x, int peer, int fd, int op, int src, int arg, uint64_t seq, const void *data, size_t len)
{
    memset(x, 0, sizeof(*x));
    x->peer = peer;
    x->fd = fd;
    x->is_send = 1;
    gshmemi_uidi_hdr_init(&x->hdr, op, src, arg, seq, len);
    x->data = (char *)data;
    x->len = len;
}

void gshmemi_uidi_xfer_recv(xfer_t *x, int peer, int fd, int op, int arg, uint64_t seq, void *data, size_t len)
{
    memset(x, 0, sizeof(*x));
    x->peer = peer;
    x->fd = fd;
    x->exp_op = (uint16_t)op;
    x->exp_arg = arg;
    x->exp_seq = seq;
    x->data = (char *)data;
    x->len = len;
}

/* What a failed transfer leaves for the caller's message. */

void gshmemi_uidi_ctx_init(xfer_ctx_t *c, int op, uint64_t seq, int my_rank, double timeout)
{
    if (seq) snprintf(c->label, sizeof(c->label), "%s #%llu", op_name((unsigned)op), (unsigned long long)seq);
    else snprintf(c->label, sizeof(c->label), "joining the job");
    c->my_rank = my_rank;
    c->timeout = timeout;
    c->abort_rank = -1;
    c->abort_status = 0;
}

void gshmemi_uidi_log_abort(const xfer_ctx_t *c)
{
    if (c->abort_rank > 0 && (c->abort_status == GSHMEMI_ERR_TIMEOUT || c->abort_status == GSHMEMI_ERR_INVALID ||
                              c->abort_status == GSHMEMI_ERR_REMOTE))
        GSHMEMI_ERROR("bootstrap", "%s failed: rank 0 %s rank %d (the logs of rank 0 and rank %d say more)", c->label,
                      c->abort_status == GSHMEMI_ERR_TIMEOUT   ? "timed out waiting for"
                      : c->abort_status == GSHMEMI_ERR_INVALID ? "found mismatched arguments from"
                                                               : "lost its connection to",
                      c->abort_rank, c->abort_rank);
    else
        GSHMEMI_ERROR("bootstrap", "%s failed on rank 0: %s (rank 0's log says more)", c->label, gshmemi_strerror(c->abort_status));
}

/* Header arrived: is it the message we expected? */
static int check_header(xfer_t *x, xfer_ctx_t *c)
{
    const gshmemi_uid_hdr_t *h = &x->hdr;

    if (h->magic != GSHMEMI_UID_MSG_MAGIC) {
        GSHMEMI_ERROR("bootstrap", "%s: rank %d sent a message that is not a gshmem bootstrap message (magic 0x%08x)",
                      c->label, x->peer, h->magic);
        return GSHMEMI_ERR_REMOTE;
    }
    if (h->op == GSHMEMI_UID_OP_ABORT) {
        c->abort_rank = h->arg;
        c->abort_status = h->status < 0 ? h->status : GSHMEMI_ERR_REMOTE;
        gshmemi_uidi_log_abort(c);
        return c->abort_status;
    }
    if (h->op == GSHMEMI_UID_OP_REJECT) {
        if (h->arg == GSHMEMI_UID_REJECT_BUSY && x->exp_op == GSHMEMI_UID_OP_WELCOME) return RC_RETRY;
        GSHMEMI_ERROR("bootstrap", "rank %d: rank 0 rejected this process: %s", c->my_rank, reject_reason(h->arg));
        return GSHMEMI_ERR_INVALID;
    }
    if (h->op != x->exp_op || h->seq != x->exp_seq) {
        GSHMEMI_ERROR("bootstrap", "rank %d is in %s #%llu while rank %d is in %s #%llu: the ranks do not call the same bootstrap operations in the same order",
                      x->peer, op_name(h->op), (unsigned long long)h->seq, c->my_rank, op_name(x->exp_op), (unsigned long long)x->exp_seq);
        return GSHMEMI_ERR_INVALID;
    }
    if (h->arg != x->exp_arg) {
        GSHMEMI_ERROR("bootstrap", "%s: rank %d called it with %s %d, rank %d with %d",
                      c->label, x->peer, x->exp_op == GSHMEMI_UID_OP_BCAST ? "root" : "argument", h->arg,
                      c->my_rank, x->exp_arg);
        return GSHMEMI_ERR_INVALID;
    }
    if (h->len != x->len) {
        GSHMEMI_ERROR("bootstrap", "%s: rank %d sends %llu bytes but rank %d expects %zu: the ranks passed different lengths",
                      c->label, x->peer, (unsigned long long)h->len, c->my_rank, x->len);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static int peer_gone(xfer_t *x, xfer_ctx_t *c, int err)
{
    if (err)
        GSHMEMI_ERROR("bootstrap", "%s: connection to rank %d failed: %s (the process exited or was killed?)",
                      c->label, x->peer, strerror(err));
    else
        GSHMEMI_ERROR("bootstrap", "%s: rank %d closed its connection (the process exited or was killed?)",
                      c->label, x->peer);
    c->abort_rank = x->peer;
    return GSHMEMI_ERR_REMOTE;
}

/* Moves as much of x as the socket takes now. Returns OK (maybe unfinished) or a failure. */
static int xfer_progress(xfer_t *x, xfer_ctx_t *c)
{
    const size_t hlen = sizeof(gshmemi_uid_hdr_t);

    for (;;) {
        ssize_t n;
        if (x->done == hlen + x->len) {
            x->finished = 1;
            return GSHMEMI_OK;
        }
        if (x->is_send) {
            struct iovec iov[2];
            struct msghdr mh;
            int niov = 0;
            if (x->done < hlen) {
                iov[niov].iov_base = (char *)&x->hdr + x->done;
                iov[niov++].iov_len = hlen - x->done;
            }
            if (x->len) {
                size_t off = x->done > hlen ? x->done - hlen : 0;
                iov[niov].iov_base = x->data + off;
                iov[niov++].iov_len = x->len - off;
            }
            memset(&mh, 0, sizeof(mh));
            mh.msg_iov = iov;
            mh.msg_iovlen = (size_t)niov;
            n = sendmsg(x->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else if (x->done < hlen) {
            n = recv(x->fd, (char *)&x->hdr + x->done, hlen - x->done, MSG_DONTWAIT);
        } else {
            n = recv(x->fd, x->data + (x->done - hlen), hlen + x->len - x->done, MSG_DONTWAIT);
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return GSHMEMI_OK;
            return peer_gone(x, c, errno);
        }
        if (n == 0 && !x->is_send) return peer_gone(x, c, 0);
        x->done += (size_t)n;
        if (!x->is_send && x->done == hlen) GSHMEMI_CHECK(check_header(x, c));
    }
}

/* Drives all of x[0..n) until done or deadline. On failure *failed is the index of the
 * transfer that failed (or the first unfinished one on timeout). */
int gshmemi_uidi_run_xfers(xfer_t *x, int n, double deadline, xfer_ctx_t *c, int *failed)
{
    struct pollfd stack_pfd[8];
    struct pollfd *pfd = n <= 8 ? stack_pfd : malloc((size_t)n * sizeof(*pfd));
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    int rc = GSHMEMI_OK;

    *failed = -1;
    if (!pfd || !idx) {
        rc = GSHMEMI_ERR_NOMEM;
        goto out;
    }
    /* Nothing is moved before the first poll: try everything once. */
    for (int i = 0; i < n; i++) {
        rc = xfer_progress(&x[i], c);
        if (rc != GSHMEMI_OK) {
            *failed = i;
            goto out;
        }
    }
    for (;;) {
        int np = 0, r;
        for (int i = 0; i < n; i++) {
            if (x[i].finished) continue;
            pfd[np].fd = x[i].fd;
            pfd[np].events = x[i].is_send ? POLLOUT : POLLIN;
            pfd[np].revents = 0;
            idx[np++] = i;
        }
        if (np == 0) break;
        if (gshmemi_now_s() >= deadline) {
            *failed = idx[0];
            rc = GSHMEMI_ERR_TIMEOUT;
            if (np > 1)
                GSHMEMI_ERROR("bootstrap", "%s: timed out after %g s waiting for rank %d (and %d more); GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                              c->label, c->timeout, x[idx[0]].peer, np - 1);
            else
                GSHMEMI_ERROR("bootstrap", "%s: timed out after %g s waiting for rank %d; GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                              c->label, c->timeout, x[idx[0]].peer);
            c->abort_rank = x[idx[0]].peer;
            goto out;
        }
        r = poll(pfd, (nfds_t)np, ms_until(deadline));
        if (r < 0) {
            if (errno == EINTR) continue;
            GSHMEMI_ERROR("bootstrap", "%s: poll failed: %s", c->label, strerror(errno));
            rc = GSHMEMI_ERR_SYSTEM;
            goto out;
        }
        for (int k = 0; k < np && r > 0; k++) {
            if (!pfd[k].revents) continue;
            rc = xfer_progress(&x[idx[k]], c);
            if (rc != GSHMEMI_OK) {
                *failed = idx[k];
                goto out;
            }
        }
    }
out:
    if (pfd != stack_pfd) free(pfd);
    free(idx);
    return rc;
}

/* ---------------------------------------------------------------- failure handling */

/* After a failure on rank 0: tell every rank whose outgoing stream is between messages, and cut
 * the others off (they see rank 0 disconnect), so nobody waits out its timeout. */
void gshmemi_uidi_root_abort(uid_state_t *st, int nranks, int status, int failed_rank, const xfer_t *sends, int nsends)
{
    for (int r = 1; r < nranks; r++) {
        int fd = st->conns[r], dirty = 0;
        gshmemi_uid_hdr_t h;
        if (fd < 0) continue;
        for (int i = 0; i < nsends; i++)
            if (sends[i].peer == r && sends[i].done > 0 && !sends[i].finished) dirty = 1;
        if (!dirty) {
            gshmemi_uidi_hdr_init(&h, GSHMEMI_UID_OP_ABORT, 0, failed_rank, st->seq, 0);
            h.status = status;
            /* Best effort: a full socket buffer means the peer is stuck anyway. */
            if (send(fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(h)) continue;
        }
        shutdown(fd, SHUT_RDWR);
    }
    st->failed = status;
}

/* A non-root rank gives up: rank 0 sees the disconnect at once and tells the others. */
static void peer_abort(uid_state_t *st, int status)
{
    if (st->fd >= 0) shutdown(st->fd, SHUT_RDWR);
    st->failed = status;
}

/* How much longer a non-root rank waits for rank 0 than rank 0 waits for the others, so that
 * when a third rank is late, rank 0's abort (naming it) arrives before our own timeout. */

/* ---------------------------------------------------------------- collectives */

/* Non-root side of every op: send our part to rank 0 and receive our part back. Both run at
 * once so that an abort from rank 0 is seen even while our send is stuck. */
static int peer_exchange(gshmemi_bootstrap_t *bs, int op, int arg, const void *in, size_t in_len, void *out, size_t out_len)
{
    uid_state_t *st = bs->impl;
    double tmo = st->timeout + grace(st->timeout);
    xfer_ctx_t c;
    xfer_t x[2];
    int failed, rc;

    gshmemi_uidi_ctx_init(&c, op, st->seq, bs->rank, tmo);
    /* The receive goes first: an abort already waiting explains a send that then fails. */
    gshmemi_uidi_xfer_recv(&x[0], 0, st->fd, op, arg, st->seq, out, out_len);
    gshmemi_uidi_xfer_send(&x[1], 0, st->fd, op, bs->rank, arg, st->seq, in, in_len);
    rc = gshmemi_uidi_run_xfers(x, 2, gshmemi_now_s() + tmo, &c, &failed);
    if (rc != GSHMEMI_OK) peer_abort(st, rc);
    return rc;
}

/* Root side of one round: one message from (gather) or to (scatter) every other rank. After a
 * failed scatter, gshmemi_uidi_root_abort sees which sends stopped mid-message. */
static int root_round(gshmemi_bootstrap_t *bs, int op, xfer_t *x, int scatter)
{
    uid_state_t *st = bs->impl;
    xfer_ctx_t c;
    int failed, rc;

    gshmemi_uidi_ctx_init(&c, op, st->seq, 0, st->timeout);
    rc = gshmemi_uidi_run_xfers(x, bs->nranks - 1, gshmemi_now_s() + st->timeout, &c, &failed);

    if (rc != GSHMEMI_OK)
        gshmemi_uidi_root_abort(st, bs->nranks, rc, failed >= 0 ? x[failed].peer : -1, scatter ? x : NULL, scatter ? bs->nranks - 1 : 0);
    return rc;
}
#define root_gather(bs, op, recvs) root_round(bs, op, recvs, 0)
#define root_scatter(bs, op, sends) root_round(bs, op, sends, 1)

static int op_begin(gshmemi_bootstrap_t *bs, const char *what)
{
    uid_state_t *st = bs ? bs->impl : NULL;

    if (!st) {
        GSHMEMI_ERROR("bootstrap", "%s: the bootstrap is not initialized", what);
        return GSHMEMI_ERR_STATE;
    }
    if (st->failed) {
        GSHMEMI_ERROR("bootstrap", "%s: an earlier bootstrap operation failed (%s); the bootstrap cannot be used any more",
                      what, gshmemi_strerror(st->failed));
        return st->failed;
    }
    st->seq++;
    return GSHMEMI_OK;
}

static int mul_overflows(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b) return 1;
    *out = a * b;
    return 0;
}

static int uid_allgather(gshmemi_bootstrap_t *bs, void *buf, size_t len)
{
    uid_state_t *st;
    xfer_t *x;
    size_t total;
    int n = bs ? bs->nranks : 0, rc;

    GSHMEMI_CHECK(op_begin(bs, "allgather"));
    st = bs->impl;
    if (n == 1) return GSHMEMI_OK;
    if (!buf && len) {
        GSHMEMI_ERROR("bootstrap", "allgather: buf is NULL with len %zu", len);
        return GSHMEMI_ERR_INVALID;
    }
    if (mul_overflows(len, (size_t)n, &total)) {
        GSHMEMI_ERROR("bootstrap", "allgather: len %zu times %d ranks overflows", len, n);
        return GSHMEMI_ERR_INVALID;
    }
    if (bs->rank != 0)
        return peer_exchange(bs, GSHMEMI_UID_OP_ALLGATHER, 0, (char *)buf + (size_t)bs->rank * len, len, buf, total);
    x = malloc(2 * (size_t)(n - 1) * sizeof(*x));
    if (!x) return GSHMEMI_ERR_NOMEM;
    for (int r = 1; r < n; r++) {
        gshmemi_uidi_xfer_recv(&x[r - 1], r, st->conns[r], GSHMEMI_UID_OP_ALLGATHER, 0, st->seq, (char *)buf + (size_t)r * len, len);
        gshmemi_uidi_xfer_send(&x[n - 1 + r - 1], r, st->conns[r], GSHMEMI_UID_OP_ALLGATHER, 0, 0, st->seq, buf, total);
    }
    rc = root_gather(bs, GSHMEMI_UID_OP_ALLGATHER, x);
    if (rc == GSHMEMI_OK) rc = root_scatter(bs, GSHMEMI_UID_OP_ALLGATHER, x + n - 1);
    free(x);
    return rc;
}

static int uid_alltoall(gshmemi_bootstrap_t *bs, const void *sendbuf, void *recvbuf, size_t len)
{
    uid_state_t *st;
    xfer_t *x = NULL;
    char *rows = NULL, *cols = NULL;
    size_t row, square;
    int n = bs ? bs->nranks : 0, rc;

    GSHMEMI_CHECK(op_begin(bs, "alltoall"));
    st = bs->impl;
    if ((!sendbuf || !recvbuf) && len) {
        GSHMEMI_ERROR("bootstrap", "alltoall: %s is NULL with len %zu", sendbuf ? "recvbuf" : "sendbuf", len);
        return GSHMEMI_ERR_INVALID;
    }
    if (mul_overflows(len, (size_t)n, &row) || mul_overflows(row, (size_t)n, &square)) {
        GSHMEMI_ERROR("bootstrap", "alltoall: len %zu times %d ranks squared overflows", len, n);
        return GSHMEMI_ERR_INVALID;
    }
    if (n == 1) {
        if (len && sendbuf != recvbuf) memmove(recvbuf, sendbuf, len);
        return GSHMEMI_OK;
    }
    if (bs->rank != 0) return peer_exchange(bs, GSHMEMI_UID_OP_ALLTOALL, 0, sendbuf, row, recvbuf, row);
    /* rows: row i = rank i's sendbuf; cols: row j = what rank j receives (a transpose). */
    rows = malloc(square ? square : 1);
    cols = malloc(square ? square : 1);
    x = malloc((size_t)(n - 1) * sizeof(*x));
    if (!rows || !cols || !x) {
        rc = GSHMEMI_ERR_NOMEM;
        GSHMEMI_ERROR("bootstrap", "alltoall: cannot allocate 2 x %zu bytes on rank 0", square);
        gshmemi_uidi_root_abort(st, n, rc, 0, NULL, 0);
        goto out;
    }
    if (row) memcpy(rows, sendbuf, row);
    for (int r = 1; r < n; r++) gshmemi_uidi_xfer_recv(&x[r - 1], r, st->conns[r], GSHMEMI_UID_OP_ALLTOALL, 0, st->seq, rows + (size_t)r * row, row);
    rc = root_gather(bs, GSHMEMI_UID_OP_ALLTOALL, x);
    if (rc != GSHMEMI_OK) goto out;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) memcpy(cols + (size_t)j * row + (size_t)i * len, rows + (size_t)i * row + (size_t)j * len, len);
    for (int r = 1; r < n; r++) gshmemi_uidi_xfer_send(&x[r - 1], r, st->conns[r], GSHMEMI_UID_OP_ALLTOALL, 0, 0, st->seq, cols + (size_t)r * row, row);
    rc = root_scatter(bs, GSHMEMI_UID_OP_ALLTOALL, x);
    if (rc != GSHMEMI_OK) goto out;
    if (row) memcpy(recvbuf, cols, row);
out:
    free(rows);
    free(cols);
    free(x);
    return rc;
}

static int uid_barrier(gshmemi_bootstrap_t *bs)
{
    uid_state_t *st;
    xfer_t *x;
    int n = bs ? bs->nranks : 0, rc;

    GSHMEMI_CHECK(op_begin(bs, "barrier"));
    st = bs->impl;
    if (n == 1) return GSHMEMI_OK;
    if (bs->rank != 0) return peer_exchange(bs, GSHMEMI_UID_OP_BARRIER, 0, NULL, 0, NULL, 0);
    x = malloc(2 * (size_t)(n - 1) * sizeof(*x));
    if (!x) return GSHMEMI_ERR_NOMEM;
    for (int r = 1; r < n; r++) {
        gshmemi_uidi_xfer_recv(&x[r - 1], r, st->conns[r], GSHMEMI_UID_OP_BARRIER, 0, st->seq, NULL, 0);
        gshmemi_uidi_xfer_send(&x[n - 1 + r - 1], r, st->conns[r], GSHMEMI_UID_OP_BARRIER, 0, 0, st->seq, NULL, 0);
    }
    rc = root_gather(bs, GSHMEMI_UID_OP_BARRIER, x);
    if (rc == GSHMEMI_OK) rc = root_scatter(bs, GSHMEMI_UID_OP_BARRIER, x + n - 1);
    free(x);
    return rc;
}

/* Gather (root's data reaches rank 0, the others check in), then rank 0 sends it to all. */
static int uid_bcast(gshmemi_bootstrap_t *bs, void *buf, size_t len, int root)
{
    uid_state_t *st;
    xfer_t *x;
    int n = bs ? bs->nranks : 0, rc;

    GSHMEMI_CHECK(op_begin(bs, "bcast"));
    st = bs->impl;
    if (root < 0 || root >= n) {
        GSHMEMI_ERROR("bootstrap", "bcast: root %d is not a rank (nranks %d)", root, n);
        return GSHMEMI_ERR_INVALID;
    }
    if (!buf && len) {
        GSHMEMI_ERROR("bootstrap", "bcast: buf is NULL with len %zu", len);
        return GSHMEMI_ERR_INVALID;
    }
    if (n == 1) return GSHMEMI_OK;
    if (bs->rank != 0) {
        int me_root = bs->rank == root;
        return peer_exchange(bs, GSHMEMI_UID_OP_BCAST, root, buf, me_root ? len : 0, buf, me_root ? 0 : len);
    }
    x = malloc(2 * (size_t)(n - 1) * sizeof(*x));
    if (!x) return GSHMEMI_ERR_NOMEM;
    for (int r = 1; r < n; r++) {
        gshmemi_uidi_xfer_recv(&x[r - 1], r, st->conns[r], GSHMEMI_UID_OP_BCAST, root, st->seq, buf, r == root ? len : 0);
        gshmemi_uidi_xfer_send(&x[n - 1 + r - 1], r, st->conns[r], GSHMEMI_UID_OP_BCAST, 0, root, st->seq, buf, r == root ? 0 : len);
    }
    rc = root_gather(bs, GSHMEMI_UID_OP_BCAST, x);
    if (rc == GSHMEMI_OK) rc = root_scatter(bs, GSHMEMI_UID_OP_BCAST, x + n - 1);
    free(x);
    return rc;
}

void gshmemi_uidi_state_free(uid_state_t *st, int nranks)
{
    if (!st) return;
    if (st->fd >= 0) close(st->fd);
    if (st->conns)
        for (int r = 0; r < nranks; r++)
            if (st->conns[r] >= 0) close(st->conns[r]);
    free(st->conns);
    free(st);
}

static int uid_finalize(gshmemi_bootstrap_t *bs)
{
    if (!bs) return GSHMEMI_OK;
    gshmemi_uidi_state_free(bs->impl, bs->nranks);
    free(bs);
    return GSHMEMI_OK;
}


const gshmemi_bootstrap_t gshmemi_uidi_ops = {
    .allgather = uid_allgather, .alltoall = uid_alltoall, .barrier = uid_barrier, .bcast = uid_bcast,
    .finalize = uid_finalize,
};
