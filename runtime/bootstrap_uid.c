/* Unique-id bootstrap over TCP.
 *
 * Rank 0 owns a listening socket (made by gshmemi_uid_create, or inherited from gshmemrun);
 * the uid carries its address, port and a random job key. Every other rank connects to rank 0
 * and presents the key: a star. Each collective is a gather to rank 0 followed by a scatter or
 * broadcast from it. Messages are a fixed header (op, sequence number, length) plus payload, so
 * ranks that call different operations, or the same one with different sizes, are caught.
 *
 * Every wait goes through poll() with a deadline, and a failure seen by rank 0 (a peer timed out,
 * disconnected or disagreed) is forwarded to the other ranks as an abort message, so they report
 * the rank that actually failed instead of timing out on rank 0. */
#include "bootstrap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define UID_VERSION 1u
#define MSG_MAGIC 0x47534842u /* "GSHB" */
#define MAX_PENDING 256       /* connections that have not finished their hello yet */

enum {
    OP_HELLO = 1,   /* joiner -> 0: src = rank, arg = nranks, payload = key */
    OP_WELCOME,     /* 0 -> joiner, once every rank has joined */
    OP_REJECT,      /* 0 -> joiner: arg = reason */
    OP_ABORT,       /* 0 -> everyone: arg = failed rank, status = its status */
    OP_ALLGATHER,
    OP_ALLTOALL,
    OP_BARRIER,
    OP_BCAST,       /* arg = root */
};

enum { REJECT_KEY = 1, REJECT_NRANKS, REJECT_RANK, REJECT_DUPLICATE, REJECT_VERSION };

static const char *op_name(unsigned op)
{
    static const char *const names[] = {"?", "hello", "welcome", "reject", "abort", "allgather", "alltoall", "barrier", "bcast"};
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown";
}

static const char *reject_reason(int reason)
{
    switch (reason) {
    case REJECT_KEY: return "its job key differs from rank 0's (a unique id of another job?)";
    case REJECT_NRANKS: return "its nranks differs from rank 0's";
    case REJECT_RANK: return "its rank is out of range";
    case REJECT_DUPLICATE: return "another process already joined with the same rank";
    case REJECT_VERSION: return "its gshmem bootstrap version differs from rank 0's";
    default: return "unknown reason";
    }
}

/* Fixed-size header in front of every message (native byte order: same-architecture jobs). */
typedef struct {
    uint32_t magic;
    uint16_t op;
    uint16_t version;
    int32_t src;    /* sender's rank */
    int32_t arg;    /* op-specific, see the OP_ list */
    int32_t status; /* OP_ABORT: the failure's status */
    uint32_t reserved;
    uint64_t seq;   /* per-bootstrap operation counter; 0 for connection setup */
    uint64_t len;   /* payload bytes that follow */
} msg_hdr_t;

typedef struct {
    int fd;            /* rank 0: -1; others: the connection to rank 0 */
    int *conns;        /* rank 0: connection to each rank (conns[0] = -1) */
    double timeout;    /* seconds */
    uint64_t seq;
    int failed;        /* status of the failure that made this bootstrap unusable, or 0 */
} uid_state_t;

/* One message moving over one connection, driven by run_xfers(). */
typedef struct {
    int peer;
    int fd;
    int is_send;
    msg_hdr_t hdr;     /* send: the header to send; recv: the header as received */
    /* recv: what the header must say; payload lands in data */
    uint16_t exp_op;
    int32_t exp_arg;
    uint64_t exp_seq;
    char *data;
    size_t len;
    size_t done;       /* bytes of header + payload moved so far */
    int finished;
} xfer_t;

/* The listener of the uid this process created or adopted; it makes this process rank 0.
 * Not thread-safe: create/adopt/join are setup calls made from one thread. */
static int g_listen_fd = -1;
static gshmemi_uid_t g_listen_uid;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* poll() timeout in ms until deadline, rounded up so we never spin just before it. */
static int ms_until(double deadline)
{
    double left = deadline - now_s();
    if (left <= 0) return 0;
    if (left > 3600) return 3600 * 1000; /* the caller loops; keeps the int in range */
    return (int)(left * 1000.0) + 1;
}

static void addr_string(const gshmemi_uid_t *uid, char *out, size_t n)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, uid->addr, ip, sizeof(ip));
    snprintf(out, n, "%s:%u", ip, (unsigned)ntohs(uid->port));
}

static int uid_check(const gshmemi_uid_t *uid, const char *routine)
{
    if (!uid) {
        GSHMEMI_ERROR("bootstrap", "%s: uid is NULL", routine);
        return GSHMEMI_ERR_INVALID;
    }
    if (uid->magic != GSHMEMI_UID_MAGIC) {
        GSHMEMI_ERROR("bootstrap", "%s: uid has magic 0x%08x, not 0x%08x: not a gshmem unique id (uninitialized or corrupted)",
                      routine, uid->magic, GSHMEMI_UID_MAGIC);
        return GSHMEMI_ERR_INVALID;
    }
    if (uid->version != UID_VERSION || uid->family != AF_INET) {
        GSHMEMI_ERROR("bootstrap", "%s: uid has version %u, family %u; this library understands version %u, family %u (AF_INET)",
                      routine, uid->version, uid->family, UID_VERSION, (unsigned)AF_INET);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static int same_job(const gshmemi_uid_t *a, const gshmemi_uid_t *b)
{
    return a->port == b->port && memcmp(a->key, b->key, sizeof(a->key)) == 0;
}

/* ---------------------------------------------------------------- unique id */

/* First up, non-loopback IPv4 address of this host, else 127.0.0.1 (network order). */
static struct in_addr pick_address(void)
{
    struct ifaddrs *ifs = NULL, *it;
    struct in_addr a;

    a.s_addr = htonl(INADDR_LOOPBACK);
    if (getifaddrs(&ifs) != 0) {
        GSHMEMI_WARN("bootstrap", "getifaddrs failed (%s); rank 0 listens on 127.0.0.1 (this host only)", strerror(errno));
        return a;
    }
    for (it = ifs; it; it = it->ifa_next) {
        if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET) continue;
        if (!(it->ifa_flags & IFF_UP) || (it->ifa_flags & IFF_LOOPBACK)) continue;
        a = ((struct sockaddr_in *)(void *)it->ifa_addr)->sin_addr;
        break;
    }
    freeifaddrs(ifs);
    return a;
}

static int listen_on(struct in_addr addr, int *fd_out, uint16_t *port_out)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) return -errno;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    sa.sin_port = 0; /* ephemeral */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    *fd_out = fd;
    *port_out = sa.sin_port;
    return 0;
}

static void set_listener(int fd, const gshmemi_uid_t *uid)
{
    if (g_listen_fd >= 0 && g_listen_fd != fd) {
        GSHMEMI_INFO("bootstrap", "replacing this process's listener (fd %d) by fd %d; the older unique id can no longer start a job",
                     g_listen_fd, fd);
        close(g_listen_fd);
    }
    g_listen_fd = fd;
    g_listen_uid = *uid;
}

int gshmemi_uid_create(gshmemi_uid_t *uid)
{
    struct in_addr addr;
    uint16_t port = 0;
    int fd = -1, err;
    size_t got = 0;

    if (!uid) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_uid_create: uid is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    memset(uid, 0, sizeof(*uid));
    addr = pick_address();
    err = listen_on(addr, &fd, &port);
    if (err && addr.s_addr != htonl(INADDR_LOOPBACK)) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr, ip, sizeof(ip));
        GSHMEMI_WARN("bootstrap", "cannot listen on %s (%s); using 127.0.0.1, so only PEs of this host can join", ip, strerror(-err));
        addr.s_addr = htonl(INADDR_LOOPBACK);
        err = listen_on(addr, &fd, &port);
    }
    if (err) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_uid_create: cannot open a listening TCP socket: %s", strerror(-err));
        return GSHMEMI_ERR_SYSTEM;
    }
    while (got < sizeof(uid->key)) {
        ssize_t n = getrandom((char *)uid->key + got, sizeof(uid->key) - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            GSHMEMI_ERROR("bootstrap", "gshmemi_uid_create: getrandom failed: %s", strerror(errno));
            close(fd);
            return GSHMEMI_ERR_SYSTEM;
        }
        got += (size_t)n;
    }
    uid->magic = GSHMEMI_UID_MAGIC;
    uid->version = UID_VERSION;
    memcpy(uid->addr, &addr, 4);
    uid->port = port;
    uid->family = AF_INET;
    set_listener(fd, uid);
    if (gshmemi_log_level >= GSHMEMI_LOG_INFO) {
        char where[64];
        addr_string(uid, where, sizeof(where));
        GSHMEMI_INFO("bootstrap", "unique id created; rank 0 listens on %s", where);
    }
    return GSHMEMI_OK;
}

int gshmemi_uid_adopt_listener(int fd, const gshmemi_uid_t *uid)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    int listening = 0, gerr;
    socklen_t optlen = sizeof(listening);

    GSHMEMI_CHECK(uid_check(uid, "gshmemi_uid_adopt_listener"));
    if (fd < 0) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_uid_adopt_listener: fd %d is not a file descriptor", fd);
        return GSHMEMI_ERR_INVALID;
    }
    gerr = getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) != 0 ? errno : 0;
    if (gerr || !listening) {
        GSHMEMI_ERROR("bootstrap", "GSHMEM_BOOTSTRAP_LISTEN_FD=%d is not a listening socket (%s); it is set by gshmemrun for rank 0 only",
                      fd, gerr ? strerror(gerr) : "a socket, but not listening");
        return GSHMEMI_ERR_INVALID;
    }
    if (getsockname(fd, (struct sockaddr *)&sa, &salen) != 0 || sa.sin_family != AF_INET || sa.sin_port != uid->port) {
        GSHMEMI_ERROR("bootstrap", "GSHMEM_BOOTSTRAP_LISTEN_FD=%d listens on port %u, but the unique id names port %u",
                      fd, (unsigned)ntohs(sa.sin_port), (unsigned)ntohs(uid->port));
        return GSHMEMI_ERR_INVALID;
    }
    /* Programs the PE starts must not inherit it. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) GSHMEMI_WARN("bootstrap", "cannot set FD_CLOEXEC on fd %d: %s", fd, strerror(errno));
    set_listener(fd, uid);
    return GSHMEMI_OK;
}

int gshmemi_uid_listener_fd(const gshmemi_uid_t *uid)
{
    if (!uid || g_listen_fd < 0 || !same_job(uid, &g_listen_uid)) return -1;
    return g_listen_fd;
}

void gshmemi_uid_close_listener(void)
{
    if (g_listen_fd >= 0) close(g_listen_fd);
    g_listen_fd = -1;
    memset(&g_listen_uid, 0, sizeof(g_listen_uid));
}

void gshmemi_uid_to_string(const gshmemi_uid_t *uid, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)uid;

    for (size_t i = 0; i < sizeof(*uid); i++) {
        out[2 * i] = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * sizeof(*uid)] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int gshmemi_uid_from_string(const char *text, gshmemi_uid_t *uid)
{
    gshmemi_uid_t tmp;
    unsigned char *p = (unsigned char *)&tmp;
    size_t n;

    if (!text || !uid) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_uid_from_string: %s is NULL", text ? "uid" : "text");
        return GSHMEMI_ERR_INVALID;
    }
    n = strlen(text);
    if (n != 2 * sizeof(tmp)) {
        GSHMEMI_ERROR("bootstrap", "unique id text (GSHMEM_BOOTSTRAP_UID) has %zu characters; expected %zu hex digits", n, 2 * sizeof(tmp));
        return GSHMEMI_ERR_INVALID;
    }
    for (size_t i = 0; i < sizeof(tmp); i++) {
        int hi = hexval(text[2 * i]), lo = hexval(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            size_t bad = hi < 0 ? 2 * i : 2 * i + 1;
            GSHMEMI_ERROR("bootstrap", "unique id text (GSHMEM_BOOTSTRAP_UID) has '%c' at position %zu; expected only hex digits",
                          text[bad], bad);
            return GSHMEMI_ERR_INVALID;
        }
        p[i] = (unsigned char)(hi << 4 | lo);
    }
    GSHMEMI_CHECK(uid_check(&tmp, "unique id text (GSHMEM_BOOTSTRAP_UID)"));
    *uid = tmp;
    return GSHMEMI_OK;
}

/* ---------------------------------------------------------------- message engine */

static void set_nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        GSHMEMI_WARN("bootstrap", "setsockopt(TCP_NODELAY) failed: %s", strerror(errno));
}

static void hdr_init(msg_hdr_t *h, int op, int src, int arg, uint64_t seq, uint64_t len)
{
    memset(h, 0, sizeof(*h));
    h->magic = MSG_MAGIC;
    h->op = (uint16_t)op;
    h->version = UID_VERSION;
    h->src = src;
    h->arg = arg;
    h->seq = seq;
    h->len = len;
}

static void xfer_send(xfer_t *x, int peer, int fd, int op, int src, int arg, uint64_t seq, const void *data, size_t len)
{
    memset(x, 0, sizeof(*x));
    x->peer = peer;
    x->fd = fd;
    x->is_send = 1;
    hdr_init(&x->hdr, op, src, arg, seq, len);
    x->data = (char *)data;
    x->len = len;
}

static void xfer_recv(xfer_t *x, int peer, int fd, int op, int arg, uint64_t seq, void *data, size_t len)
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
typedef struct {
    char label[48];   /* "allgather #3", "joining": what the messages say we were doing */
    int my_rank;
    double timeout;
    int abort_rank;   /* OP_ABORT received: the rank rank 0 reports */
    int abort_status;
} xfer_ctx_t;

static void ctx_init(xfer_ctx_t *c, int op, uint64_t seq, int my_rank, double timeout)
{
    if (seq) snprintf(c->label, sizeof(c->label), "%s #%llu", op_name((unsigned)op), (unsigned long long)seq);
    else snprintf(c->label, sizeof(c->label), "joining the job");
    c->my_rank = my_rank;
    c->timeout = timeout;
    c->abort_rank = -1;
    c->abort_status = 0;
}

static void log_abort(const xfer_ctx_t *c)
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
    const msg_hdr_t *h = &x->hdr;

    if (h->magic != MSG_MAGIC) {
        GSHMEMI_ERROR("bootstrap", "%s: rank %d sent a message that is not a gshmem bootstrap message (magic 0x%08x)",
                      c->label, x->peer, h->magic);
        return GSHMEMI_ERR_REMOTE;
    }
    if (h->op == OP_ABORT) {
        c->abort_rank = h->arg;
        c->abort_status = h->status < 0 ? h->status : GSHMEMI_ERR_REMOTE;
        log_abort(c);
        return c->abort_status;
    }
    if (h->op == OP_REJECT) {
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
                      c->label, x->peer, x->exp_op == OP_BCAST ? "root" : "argument", h->arg,
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
    const size_t hlen = sizeof(msg_hdr_t);

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
static int run_xfers(xfer_t *x, int n, double deadline, xfer_ctx_t *c, int *failed)
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
        if (now_s() >= deadline) {
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
static void root_abort(uid_state_t *st, int nranks, int status, int failed_rank, const xfer_t *sends, int nsends)
{
    for (int r = 1; r < nranks; r++) {
        int fd = st->conns[r], dirty = 0;
        msg_hdr_t h;
        if (fd < 0) continue;
        for (int i = 0; i < nsends; i++)
            if (sends[i].peer == r && sends[i].done > 0 && !sends[i].finished) dirty = 1;
        if (!dirty) {
            hdr_init(&h, OP_ABORT, 0, failed_rank, st->seq, 0);
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
static double grace(double timeout) { return timeout * 0.25 < 1.0 ? timeout * 0.25 : 1.0; }

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

    ctx_init(&c, op, st->seq, bs->rank, tmo);
    /* The receive goes first: an abort already waiting explains a send that then fails. */
    xfer_recv(&x[0], 0, st->fd, op, arg, st->seq, out, out_len);
    xfer_send(&x[1], 0, st->fd, op, bs->rank, arg, st->seq, in, in_len);
    rc = run_xfers(x, 2, now_s() + tmo, &c, &failed);
    if (rc != GSHMEMI_OK) peer_abort(st, rc);
    return rc;
}

/* Root side, first half: one message from every other rank. */
static int root_gather(gshmemi_bootstrap_t *bs, int op, xfer_t *recvs)
{
    uid_state_t *st = bs->impl;
    xfer_ctx_t c;
    int failed, rc;

    ctx_init(&c, op, st->seq, 0, st->timeout);
    rc = run_xfers(recvs, bs->nranks - 1, now_s() + st->timeout, &c, &failed);

    if (rc != GSHMEMI_OK) root_abort(st, bs->nranks, rc, failed >= 0 ? recvs[failed].peer : -1, NULL, 0);
    return rc;
}

/* Root side, second half: one message to every other rank. */
static int root_scatter(gshmemi_bootstrap_t *bs, int op, xfer_t *sends)
{
    uid_state_t *st = bs->impl;
    xfer_ctx_t c;
    int failed, rc;

    ctx_init(&c, op, st->seq, 0, st->timeout);
    rc = run_xfers(sends, bs->nranks - 1, now_s() + st->timeout, &c, &failed);

    if (rc != GSHMEMI_OK) root_abort(st, bs->nranks, rc, failed >= 0 ? sends[failed].peer : -1, sends, bs->nranks - 1);
    return rc;
}

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
        return peer_exchange(bs, OP_ALLGATHER, 0, (char *)buf + (size_t)bs->rank * len, len, buf, total);
    x = malloc(2 * (size_t)(n - 1) * sizeof(*x));
    if (!x) return GSHMEMI_ERR_NOMEM;
    for (int r = 1; r < n; r++) {
        xfer_recv(&x[r - 1], r, st->conns[r], OP_ALLGATHER, 0, st->seq, (char *)buf + (size_t)r * len, len);
        xfer_send(&x[n - 1 + r - 1], r, st->conns[r], OP_ALLGATHER, 0, 0, st->seq, buf, total);
    }
    rc = root_gather(bs, OP_ALLGATHER, x);
    if (rc == GSHMEMI_OK) rc = root_scatter(bs, OP_ALLGATHER, x + n - 1);
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
    if (bs->rank != 0) return peer_exchange(bs, OP_ALLTOALL, 0, sendbuf, row, recvbuf, row);
    /* rows: row i = rank i's sendbuf; cols: row j = what rank j receives (a transpose). */
    rows = malloc(square ? square : 1);
    cols = malloc(square ? square : 1);
    x = malloc((size_t)(n - 1) * sizeof(*x));
    if (!rows || !cols || !x) {
        rc = GSHMEMI_ERR_NOMEM;
        GSHMEMI_ERROR("bootstrap", "alltoall: cannot allocate 2 x %zu bytes on rank 0", square);
        root_abort(st, n, rc, 0, NULL, 0);
        goto out;
    }
    if (row) memcpy(rows, sendbuf, row);
    for (int r = 1; r < n; r++) xfer_recv(&x[r - 1], r, st->conns[r], OP_ALLTOALL, 0, st->seq, rows + (size_t)r * row, row);
    rc = root_gather(bs, OP_ALLTOALL, x);
    if (rc != GSHMEMI_OK) goto out;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) memcpy(cols + (size_t)j * row + (size_t)i * len, rows + (size_t)i * row + (size_t)j * len, len);
    for (int r = 1; r < n; r++) xfer_send(&x[r - 1], r, st->conns[r], OP_ALLTOALL, 0, 0, st->seq, cols + (size_t)r * row, row);
    rc = root_scatter(bs, OP_ALLTOALL, x);
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
    if (bs->rank != 0) return peer_exchange(bs, OP_BARRIER, 0, NULL, 0, NULL, 0);
    x = malloc(2 * (size_t)(n - 1) * sizeof(*x));
    if (!x) return GSHMEMI_ERR_NOMEM;
    for (int r = 1; r < n; r++) {
        xfer_recv(&x[r - 1], r, st->conns[r], OP_BARRIER, 0, st->seq, NULL, 0);
        xfer_send(&x[n - 1 + r - 1], r, st->conns[r], OP_BARRIER, 0, 0, st->seq, NULL, 0);
    }
    rc = root_gather(bs, OP_BARRIER, x);
    if (rc == GSHMEMI_OK) rc = root_scatter(bs, OP_BARRIER, x + n - 1);
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
        return peer_exchange(bs, OP_BCAST, root, buf, me_root ? len : 0, buf, me_root ? 0 : len);
    }
    x = malloc(2 * (size_t)(n - 1) * sizeof(*x));
    if (!x) return GSHMEMI_ERR_NOMEM;
    for (int r = 1; r < n; r++) {
        xfer_recv(&x[r - 1], r, st->conns[r], OP_BCAST, root, st->seq, buf, r == root ? len : 0);
        xfer_send(&x[n - 1 + r - 1], r, st->conns[r], OP_BCAST, 0, root, st->seq, buf, r == root ? 0 : len);
    }
    rc = root_gather(bs, OP_BCAST, x);
    if (rc == GSHMEMI_OK) rc = root_scatter(bs, OP_BCAST, x + n - 1);
    free(x);
    return rc;
}

static void state_free(uid_state_t *st, int nranks)
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
    state_free(bs->impl, bs->nranks);
    free(bs);
    return GSHMEMI_OK;
}

/* ---------------------------------------------------------------- joining */

typedef struct {
    int fd;
    size_t done;
    struct {
        msg_hdr_t hdr;
        uint64_t key[2];
    } msg;
    char from[INET_ADDRSTRLEN + 8];
} pending_t;

static void reject(pending_t *p, int reason)
{
    msg_hdr_t h;
    hdr_init(&h, OP_REJECT, 0, reason, 0, 0);
    /* Best effort: the joiner reports it; if it cannot, it sees the close. */
    (void)!send(p->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
    close(p->fd);
    p->fd = -1;
}

/* A complete hello from p: adopt it as a rank or reject it. Returns 1 when adopted. */
static int judge_hello(uid_state_t *st, const gshmemi_uid_t *uid, int nranks, pending_t *p)
{
    const msg_hdr_t *h = &p->msg.hdr;
    int reason = 0;

    if (h->magic != MSG_MAGIC || h->op != OP_HELLO || h->len != sizeof(p->msg.key)) {
        GSHMEMI_WARN("bootstrap", "rank 0: dropping a connection from %s that did not send a gshmem hello", p->from);
        close(p->fd);
        p->fd = -1;
        return 0;
    }
    if (h->version != UID_VERSION)
        reason = REJECT_VERSION;
    else if (memcmp(p->msg.key, uid->key, sizeof(uid->key)) != 0)
        reason = REJECT_KEY;
    else if (h->arg != nranks)
        reason = REJECT_NRANKS;
    else if (h->src < 1 || h->src >= nranks)
        reason = REJECT_RANK;
    else if (st->conns[h->src] >= 0)
        reason = REJECT_DUPLICATE;
    if (reason) {
        GSHMEMI_WARN("bootstrap", "rank 0: rejecting a join from %s as rank %d of %d: %s; still waiting for valid ranks",
                     p->from, (int)h->src, (int)h->arg, reject_reason(reason));
        reject(p, reason);
        return 0;
    }
    st->conns[h->src] = p->fd;
    set_nodelay(p->fd);
    GSHMEMI_TRACE("bootstrap", "rank 0: rank %d joined from %s", (int)h->src, p->from);
    p->fd = -1;
    return 1;
}

static void log_missing(uid_state_t *st, int nranks, int joined)
{
    char list[256];
    size_t off = 0;
    int shown = 0;

    list[0] = '\0';
    for (int r = 1; r < nranks && off < sizeof(list) - 32; r++) {
        if (st->conns[r] >= 0) continue;
        off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d", shown ? ", " : "", r);
        shown++;
    }
    if (shown < nranks - 1 - joined) snprintf(list + off, sizeof(list) - off, ", ...");
    GSHMEMI_ERROR("bootstrap", "rank 0: timed out after %g s waiting for rank%s %s to join (%d of %d present); GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                  st->timeout, nranks - 1 - joined > 1 ? "s" : "", list, joined + 1, nranks);
}

/* Rank 0: accept until every rank has presented a valid hello, then welcome them all. */
static int root_accept(uid_state_t *st, int lfd, const gshmemi_uid_t *uid, int nranks)
{
    pending_t *pend = calloc(MAX_PENDING, sizeof(*pend));
    struct pollfd *pfd = calloc(MAX_PENDING + 1, sizeof(*pfd));
    int *idx = calloc(MAX_PENDING + 1, sizeof(int));
    int npend = 0, joined = 0, rc = GSHMEMI_OK;
    double deadline = now_s() + st->timeout;

    if (!pend || !pfd || !idx) {
        rc = GSHMEMI_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < MAX_PENDING; i++) pend[i].fd = -1;
    /* accept4 after poll can still find the queue empty (the connection was reset, or a forked
     * copy of this listener took it), so the listener must not block. */
    if (fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) != 0)
        GSHMEMI_WARN("bootstrap", "cannot make the listener non-blocking: %s", strerror(errno));
    while (joined < nranks - 1) {
        int np = 0, r;
        if (now_s() >= deadline) {
            log_missing(st, nranks, joined);
            for (int k = 1; k < nranks; k++)
                if (st->conns[k] < 0) {
                    root_abort(st, nranks, GSHMEMI_ERR_TIMEOUT, k, NULL, 0);
                    break;
                }
            rc = GSHMEMI_ERR_TIMEOUT;
            goto out;
        }
        pfd[np].fd = lfd;
        pfd[np].events = npend < MAX_PENDING ? POLLIN : 0;
        idx[np++] = -1;
        for (int i = 0; i < MAX_PENDING; i++) {
            if (pend[i].fd < 0) continue;
            pfd[np].fd = pend[i].fd;
            pfd[np].events = POLLIN;
            idx[np++] = i;
        }
        r = poll(pfd, (nfds_t)np, ms_until(deadline));
        if (r < 0) {
            if (errno == EINTR) continue;
            GSHMEMI_ERROR("bootstrap", "rank 0: poll failed: %s", strerror(errno));
            rc = GSHMEMI_ERR_SYSTEM;
            goto out;
        }
        for (int k = 1; k < np; k++) {
            pending_t *p = &pend[idx[k]];
            if (!pfd[k].revents) continue;
            for (;;) {
                ssize_t n = recv(p->fd, (char *)&p->msg + p->done, sizeof(p->msg) - p->done, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (n <= 0) {
                    GSHMEMI_WARN("bootstrap", "rank 0: a connection from %s closed before its hello was complete", p->from);
                    close(p->fd);
                    p->fd = -1;
                    npend--;
                    break;
                }
                p->done += (size_t)n;
                if (p->done == sizeof(p->msg)) {
                    joined += judge_hello(st, uid, nranks, p);
                    npend--;
                    break;
                }
            }
        }
        if (pfd[0].revents & POLLIN) {
            for (;;) {
                struct sockaddr_in sa;
                socklen_t salen = sizeof(sa);
                int fd, slot = -1;
                if (npend == MAX_PENDING) break;
                fd = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) {
                    if (errno == EINTR || errno == ECONNABORTED) continue;
                    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                    GSHMEMI_ERROR("bootstrap", "rank 0: accept failed: %s%s", strerror(errno),
                                  errno == EMFILE || errno == ENFILE ? " (raise the open-file limit, ulimit -n)" : "");
                    rc = GSHMEMI_ERR_SYSTEM;
                    root_abort(st, nranks, rc, 0, NULL, 0);
                    goto out;
                }
                for (int i = 0; i < MAX_PENDING && slot < 0; i++)
                    if (pend[i].fd < 0) slot = i;
                memset(&pend[slot], 0, sizeof(pend[slot]));
                pend[slot].fd = fd;
                char ip[INET_ADDRSTRLEN] = "?";
                inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
                snprintf(pend[slot].from, sizeof(pend[slot].from), "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
                npend++;
            }
        }
    }
    /* Everyone is here: welcome them (this also makes init a barrier). */
    {
        xfer_t *x = malloc((size_t)(nranks - 1) * sizeof(*x));
        xfer_ctx_t c;
        int failed;
        if (!x) {
            rc = GSHMEMI_ERR_NOMEM;
            goto out;
        }
        ctx_init(&c, OP_WELCOME, 0, 0, st->timeout);
        for (int k = 1; k < nranks; k++) xfer_send(&x[k - 1], k, st->conns[k], OP_WELCOME, 0, nranks, 0, NULL, 0);
        rc = run_xfers(x, nranks - 1, now_s() + st->timeout, &c, &failed);
        if (rc != GSHMEMI_OK) root_abort(st, nranks, rc, failed >= 0 ? x[failed].peer : -1, x, nranks - 1);
        free(x);
    }
out:
    if (pend)
        for (int i = 0; i < MAX_PENDING; i++)
            if (pend[i].fd >= 0) close(pend[i].fd);
    free(pend);
    free(pfd);
    free(idx);
    return rc;
}

/* Connect to rank 0, retrying (rank 0 may not be listening yet) until deadline. */
static int connect_root(const gshmemi_uid_t *uid, int rank, double deadline, double timeout, int *out)
{
    struct sockaddr_in sa;
    int backoff_ms = 10, last_err = 0;
    char where[64];

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_addr, uid->addr, 4);
    sa.sin_port = uid->port;
    addr_string(uid, where, sizeof(where));
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
            set_nodelay(fd);
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
        if (now_s() >= deadline) break;
        GSHMEMI_TRACE("bootstrap", "rank %d: rank 0 at %s not reachable yet (%s); retrying in %d ms", rank, where, strerror(err), backoff_ms);
        poll(NULL, 0, backoff_ms < ms_until(deadline) ? backoff_ms : ms_until(deadline));
        if (backoff_ms < 500) backoff_ms *= 2;
    }
    GSHMEMI_ERROR("bootstrap", "rank %d: timed out after %g s waiting for rank 0 to accept at %s (last error: %s); GSHMEM_BOOTSTRAP_TIMEOUT bounds this wait",
                  rank, timeout, where, strerror(last_err));
    return GSHMEMI_ERR_TIMEOUT;
}

/* Rank > 0: connect, say hello, wait to be welcomed. */
static int peer_join(uid_state_t *st, const gshmemi_uid_t *uid, int rank, int nranks)
{
    xfer_t x;
    xfer_ctx_t c;
    int failed, rc;

    ctx_init(&c, OP_HELLO, 0, rank, st->timeout);
    GSHMEMI_CHECK(connect_root(uid, rank, now_s() + st->timeout, st->timeout, &st->fd));
    xfer_send(&x, 0, st->fd, OP_HELLO, rank, nranks, 0, uid->key, sizeof(uid->key));
    rc = run_xfers(&x, 1, now_s() + st->timeout, &c, &failed);
    if (rc != GSHMEMI_OK) return rc;
    xfer_recv(&x, 0, st->fd, OP_WELCOME, nranks, 0, NULL, 0);
    c.timeout = st->timeout + grace(st->timeout);
    return run_xfers(&x, 1, now_s() + c.timeout, &c, &failed);
}

int gshmemi_bootstrap_uid_init(const gshmemi_uid_t *uid, int rank, int nranks, double timeout_s, gshmemi_bootstrap_t **out)
{
    gshmemi_bootstrap_t *bs;
    uid_state_t *st;
    int rc = GSHMEMI_OK;

    if (!out) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: out is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    *out = NULL;
    GSHMEMI_CHECK(uid_check(uid, "gshmemi_bootstrap_uid_init"));
    if (nranks < 1) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: nranks %d must be at least 1", nranks);
        return GSHMEMI_ERR_INVALID;
    }
    if (rank < 0 || rank >= nranks) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: rank %d is out of range 0..%d (nranks %d)", rank, nranks - 1, nranks);
        return GSHMEMI_ERR_INVALID;
    }
    if (!(timeout_s > 0)) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: timeout %g s must be positive (GSHMEM_BOOTSTRAP_TIMEOUT)", timeout_s);
        return GSHMEMI_ERR_INVALID;
    }
    if (rank == 0 && nranks > 1 && gshmemi_uid_listener_fd(uid) < 0) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_bootstrap_uid_init: rank 0 must run in the process that created the unique id (shmemx_get_uniqueid) or inherited its listener from gshmemrun; this process has no listener for it%s",
                      g_listen_fd < 0 ? " (or it was already used: a unique id starts one job)" : "");
        return GSHMEMI_ERR_INVALID;
    }

    bs = calloc(1, sizeof(*bs));
    st = calloc(1, sizeof(*st));
    if (!bs || !st) {
        free(bs);
        free(st);
        return GSHMEMI_ERR_NOMEM;
    }
    st->fd = -1;
    st->timeout = timeout_s;
    bs->rank = rank;
    bs->nranks = nranks;
    bs->impl = st;
    bs->allgather = uid_allgather;
    bs->alltoall = uid_alltoall;
    bs->barrier = uid_barrier;
    bs->bcast = uid_bcast;
    bs->finalize = uid_finalize;

    if (rank == 0) {
        int lfd = gshmemi_uid_listener_fd(uid);
        if (nranks > 1) {
            st->conns = malloc((size_t)nranks * sizeof(int));
            if (!st->conns) {
                rc = GSHMEMI_ERR_NOMEM;
                goto fail;
            }
            for (int r = 0; r < nranks; r++) st->conns[r] = -1;
            rc = root_accept(st, lfd, uid, nranks);
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
    state_free(st, nranks);
    free(bs);
    return rc;
}
