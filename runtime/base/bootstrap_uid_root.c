/* Rank 0 admitting the other ranks (bootstrap_uid.h: the handshake): pending connections
 * bounded in time, number and accepts per poll, each proven to hold the job key before its rank
 * is taken; the ranks that never came, or died, named. */
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

enum { STAGE_HELLO, STAGE_PROOF };
enum { DROP_DEADLINE, DROP_EVICTED, DROP_GARBAGE, DROP_KEY, DROP_CLOSED, DROP_FDLIMIT, DROP_KINDS };

typedef struct {
    int fd;            /* -1: free slot */
    int stage;         /* STAGE_HELLO: reading the hello; STAGE_PROOF: challenge sent, reading the proof */
    uint64_t serial;   /* accept order: the smallest is the oldest */
    double deadline;   /* accept time + HELLO_DEADLINE_S */
    size_t done;       /* bytes of the current message received */
    uint8_t buf[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_PAYLOAD_MAX];
    int32_t rank, nranks;
    uint8_t jnonce[GSHMEMI_UID_NONCE_BYTES], rnonce[GSHMEMI_UID_NONCE_BYTES];
    char from[INET_ADDRSTRLEN + 8];
} pending_t;

/* Rank 0's admission state while the job forms. */
typedef struct {
    uid_state_t *st;
    const gshmemi_uid_t *uid;
    int nranks, joined;
    pending_t *pend;   /* MAX_PENDING slots */
    int npend;
    uint64_t serial;
    unsigned long drops[DROP_KINDS], ndrops;
    int spare_fd;      /* held open so that at the fd limit one accept can still be made and dropped */
    int fdlimit_warned;
} admit_t;

static void send_reject(int fd, int reason)
{
    gshmemi_uid_hdr_t h;
    gshmemi_uidi_hdr_init(&h, GSHMEMI_UID_OP_REJECT, 0, reason, 0, 0);
    /* Best effort: the joiner reports it; if it cannot, it sees the close. */
    (void)!send(fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Drops a pending connection. Strangers can cause any number of these, so only the first few
 * are logged one by one; gshmemi_uidi_root_accept sums up the rest. */
static void drop(admit_t *a, pending_t *p, int kind, const char *detail)
{
    static const char *const what[DROP_KINDS] = {
        "no complete handshake within the hello deadline",
        "evicted, the oldest of a full table of pending connections",
        "not a gshmem hello",
        "it did not prove the job key",
        "closed by the other side before its handshake was complete",
        "dropped at the open-file limit",
    };
    if (kind == DROP_DEADLINE || kind == DROP_EVICTED) send_reject(p->fd, GSHMEMI_UID_REJECT_BUSY);
    if (kind == DROP_KEY) send_reject(p->fd, GSHMEMI_UID_REJECT_KEY);
    a->drops[kind]++;
    if (++a->ndrops <= DROP_WARNINGS)
        GSHMEMI_WARN("bootstrap", "rank 0: dropping a connection from %s: %s%s%s%s", p->from, what[kind], detail ? " (" : "",
                     detail ? detail : "", detail ? ")" : "");
    close(p->fd);
    p->fd = -1;
    a->npend--;
}

static int send_now(int fd, const void *buf, size_t n)
{
    ssize_t r;
    do r = send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)n ? 0 : -1;
}

/* A complete hello: answer with rank 0's nonce and proof. */
static void on_hello(admit_t *a, pending_t *p, const gshmemi_uid_msg_t *m)
{
    uint8_t out[GSHMEMI_UID_HDR_BYTES + GSHMEMI_UID_NONCE_BYTES + 8];
    gshmemi_uid_hdr_t h;
    uint64_t proof;

    p->rank = m->hdr.src;
    p->nranks = m->hdr.arg;
    memcpy(p->jnonce, m->nonce, sizeof(p->jnonce));
    if (gshmemi_uidi_fill_random(p->rnonce, sizeof(p->rnonce), "rank 0") != GSHMEMI_OK) {
        drop(a, p, DROP_CLOSED, "no random nonce");
        return;
    }
    proof = gshmemi_uid_proof(a->uid->key, 'R', p->jnonce, p->rnonce, p->rank, p->nranks);
    gshmemi_uidi_hdr_init(&h, GSHMEMI_UID_OP_CHALLENGE, 0, 0, 0, GSHMEMI_UID_NONCE_BYTES + 8);
    memcpy(out, &h, sizeof(h));
    memcpy(out + sizeof(h), p->rnonce, GSHMEMI_UID_NONCE_BYTES);
    memcpy(out + sizeof(h) + GSHMEMI_UID_NONCE_BYTES, &proof, 8);
    /* The socket has sent nothing before, so the whole challenge fits its buffer. */
    if (send_now(p->fd, out, sizeof(out)) != 0) {
        drop(a, p, DROP_CLOSED, "cannot send the challenge");
        return;
    }
    p->stage = STAGE_PROOF;
    p->done = 0;
}

/* A complete proof: admit the joiner as its rank, or reject it. */
static void on_proof(admit_t *a, pending_t *p, const gshmemi_uid_msg_t *m)
{
    uid_state_t *st = a->st;
    uint64_t want = gshmemi_uid_proof(a->uid->key, 'J', p->jnonce, p->rnonce, p->rank, p->nranks);
    int reason = 0;

    if (!gshmemi_uid_proof_equal(m->proof, want)) {
        drop(a, p, DROP_KEY, NULL);
        return;
    }
    /* From here on the joiner holds the key: it is one of ours, so every rejection is logged. */
    if (p->nranks != a->nranks) reason = GSHMEMI_UID_REJECT_NRANKS;
    else if (st->conns[p->rank] >= 0) reason = GSHMEMI_UID_REJECT_DUPLICATE;
    if (reason) {
        GSHMEMI_WARN("bootstrap", "rank 0: rejecting a join from %s as rank %d of %d: %s; still waiting for valid ranks", p->from,
                     (int)p->rank, (int)p->nranks, reject_reason(reason));
        send_reject(p->fd, reason);
        close(p->fd);
        p->fd = -1;
        a->npend--;
        return;
    }
    st->conns[p->rank] = p->fd;
    gshmemi_uidi_set_nodelay(p->fd);
    GSHMEMI_TRACE("bootstrap", "rank 0: rank %d joined from %s", (int)p->rank, p->from);
    p->fd = -1;
    a->npend--;
    a->joined++;
}

/* Reads what p has sent so far, without waiting, and acts on a complete message. */
static void progress(admit_t *a, pending_t *p)
{
    const int want_op = p->stage == STAGE_HELLO ? GSHMEMI_UID_OP_HELLO : GSHMEMI_UID_OP_PROOF;
    const size_t want = GSHMEMI_UID_HDR_BYTES + (p->stage == STAGE_HELLO ? GSHMEMI_UID_NONCE_BYTES : 8);

    while (p->fd >= 0) {
        gshmemi_uid_msg_t m;
        const char *why;
        long rc;
        ssize_t n = recv(p->fd, p->buf + p->done, want - p->done, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            drop(a, p, DROP_CLOSED, p->stage == STAGE_PROOF ? "after rank 0's challenge: a joiner whose unique id is of another job stops there" : NULL);
            return;
        }
        p->done += (size_t)n;
        rc = gshmemi_uid_msg_decode(p->buf, p->done, &m, &why);
        if (rc == GSHMEMI_ERR_UNSUPPORTED) send_reject(p->fd, GSHMEMI_UID_REJECT_VERSION);
        if (rc < 0) {
            drop(a, p, DROP_GARBAGE, why);
            return;
        }
        if (p->done >= GSHMEMI_UID_HDR_BYTES && m.hdr.op != want_op) {
            drop(a, p, DROP_GARBAGE, p->stage == STAGE_HELLO ? "its first message is not a hello" : "its second message is not a proof");
            return;
        }
        if (rc == 0) continue;
        if (p->stage == STAGE_HELLO) on_hello(a, p, &m);
        else on_proof(a, p, &m);
        return;
    }
}

static pending_t *oldest(admit_t *a)
{
    pending_t *o = NULL;
    for (int i = 0; i < MAX_PENDING; i++)
        if (a->pend[i].fd >= 0 && (!o || a->pend[i].serial < o->serial)) o = &a->pend[i];
    return o;
}

/* Frees a slot: the oldest pending connection goes, unless what it already sent settles it. */
static void evict_oldest(admit_t *a)
{
    pending_t *o = oldest(a);
    uint64_t serial;

    if (!o) return;
    serial = o->serial;
    progress(a, o);
    if (o->fd >= 0 && o->serial == serial && a->npend == MAX_PENDING) drop(a, o, DROP_EVICTED, NULL);
}

/* At the open-file limit: make room by dropping the oldest pending connection, or, with none,
 * accept the newcomer on the spare descriptor and drop it (a real rank connects again).
 * Returns 0 when neither was possible. */
static int at_fd_limit(admit_t *a, int lfd, int err)
{
    if (!a->fdlimit_warned++)
        GSHMEMI_WARN("bootstrap", "rank 0: accept failed: %s (the open-file limit, ulimit -n, is reached); dropping the oldest unauthenticated connection to make room, and going on",
                     strerror(err));
    if (a->npend > 0) {
        pending_t *o = oldest(a);
        a->ndrops++, a->drops[DROP_FDLIMIT]++;
        send_reject(o->fd, GSHMEMI_UID_REJECT_BUSY);
        close(o->fd);
        o->fd = -1;
        a->npend--;
        return 1;
    }
    if (a->spare_fd >= 0) {
        int fd;
        close(a->spare_fd);
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            send_reject(fd, GSHMEMI_UID_REJECT_BUSY);
            close(fd);
            a->ndrops++, a->drops[DROP_FDLIMIT]++;
        }
        a->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return 1;
    }
    return 0;
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

/* A joined rank sends nothing until the welcome: anything readable on its connection means it
 * died (or broke the protocol). Returns the rank, or 0 when all are fine. */
static int dead_rank(const struct pollfd *pfd, int np, const int *idx)
{
    for (int k = 0; k < np; k++) {
        char c;
        ssize_t n;
        if (idx[k] >= -1 || !pfd[k].revents) continue; /* -1: the listener */
        n = recv(pfd[k].fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        {
            int r = -idx[k] - 1;
            GSHMEMI_ERROR("bootstrap", "rank 0: rank %d %s after joining, before the job formed; the job cannot start", r,
                          n > 0 ? "sent data it should not have" : "closed its connection (the process exited or was killed?)");
            return r;
        }
    }
    return 0;
}

static void log_drops(const admit_t *a)
{
    if (a->ndrops <= DROP_WARNINGS) return;
    GSHMEMI_WARN("bootstrap", "rank 0: %lu connections in all were dropped before finishing a handshake: %lu past the %g s hello deadline, %lu evicted from the %d full slots, %lu not gshmem hellos, %lu failed the key proof, %lu closed by the other side, %lu at the open-file limit",
                 a->ndrops, a->drops[DROP_DEADLINE], HELLO_DEADLINE_S, a->drops[DROP_EVICTED], MAX_PENDING, a->drops[DROP_GARBAGE],
                 a->drops[DROP_KEY], a->drops[DROP_CLOSED], a->drops[DROP_FDLIMIT]);
}

/* Rank 0: accept until every rank has proven itself, then welcome them all. */
int gshmemi_uidi_root_accept(uid_state_t *st, int lfd, const gshmemi_uid_t *uid, int nranks)
{
    admit_t a;
    const int cap = 1 + MAX_PENDING + nranks;
    struct pollfd *pfd = calloc((size_t)cap, sizeof(*pfd));
    int *idx = calloc((size_t)cap, sizeof(int));
    int rc = GSHMEMI_OK, dead;
    double deadline = gshmemi_now_s() + st->timeout;

    memset(&a, 0, sizeof(a));
    a.st = st;
    a.uid = uid;
    a.nranks = nranks;
    a.pend = calloc(MAX_PENDING, sizeof(*a.pend));
    a.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!a.pend || !pfd || !idx) {
        rc = GSHMEMI_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < MAX_PENDING; i++) a.pend[i].fd = -1;
    /* accept4 after poll can still find the queue empty (the connection was reset, or a forked
     * copy of this listener took it), so the listener must not block. */
    if (fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) != 0)
        GSHMEMI_WARN("bootstrap", "cannot make the listener non-blocking: %s", strerror(errno));
    while (a.joined < nranks - 1) {
        int np = 0, r;
        double now = gshmemi_now_s(), wake = deadline;
        if (now >= deadline) {
            log_missing(st, nranks, a.joined);
            for (int k = 1; k < nranks; k++)
                if (st->conns[k] < 0) {
                    gshmemi_uidi_root_abort(st, nranks, GSHMEMI_ERR_TIMEOUT, k, NULL, 0);
                    break;
                }
            rc = GSHMEMI_ERR_TIMEOUT;
            goto out;
        }
        /* idx: -1 the listener, i >= 0 pending slot i, -r-1 joined rank r (watched for death) */
        pfd[np].fd = lfd;
        pfd[np].events = POLLIN;
        idx[np++] = -1;
        for (int i = 0; i < MAX_PENDING; i++) {
            if (a.pend[i].fd < 0) continue;
            if (a.pend[i].deadline < wake) wake = a.pend[i].deadline;
            pfd[np].fd = a.pend[i].fd;
            pfd[np].events = POLLIN;
            idx[np++] = i;
        }
        for (int k = 1; k < nranks; k++) {
            if (st->conns[k] < 0) continue;
            pfd[np].fd = st->conns[k];
            pfd[np].events = POLLIN;
            idx[np++] = -k - 1;
        }
        for (int k = 0; k < np; k++) pfd[k].revents = 0;
        r = poll(pfd, (nfds_t)np, ms_until(wake));
        if (r < 0) {
            if (errno == EINTR) continue;
            GSHMEMI_ERROR("bootstrap", "rank 0: poll failed: %s", strerror(errno));
            rc = GSHMEMI_ERR_SYSTEM;
            goto out;
        }
        if ((dead = dead_rank(pfd, np, idx)) > 0) {
            rc = GSHMEMI_ERR_REMOTE;
            gshmemi_uidi_root_abort(st, nranks, rc, dead, NULL, 0);
            goto out;
        }
        /* What the pending connections sent comes first: a real rank's handshake finishes
         * before any new connection can evict it. */
        for (int k = 1; k < np; k++)
            if (idx[k] >= 0 && pfd[k].revents && a.pend[idx[k]].fd == pfd[k].fd) progress(&a, &a.pend[idx[k]]);
        now = gshmemi_now_s();
        for (int i = 0; i < MAX_PENDING; i++)
            if (a.pend[i].fd >= 0 && a.pend[i].deadline <= now) drop(&a, &a.pend[i], DROP_DEADLINE, NULL);
        if (!(pfd[0].revents & POLLIN)) continue;
        for (int b = 0; b < ACCEPT_BATCH && a.joined < nranks - 1; b++) {
            struct sockaddr_in sa;
            socklen_t salen = sizeof(sa);
            char ip[INET_ADDRSTRLEN] = "?";
            int fd, slot = -1;
            if (a.npend == MAX_PENDING) evict_oldest(&a);
            fd = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                int e = errno;
                if (e == EINTR || e == ECONNABORTED) continue;
                if (e == EAGAIN || e == EWOULDBLOCK) break;
                if (e == EMFILE || e == ENFILE) {
                    if (at_fd_limit(&a, lfd, e)) continue;
                    poll(NULL, 0, 10); /* nothing to close: the joined ranks hold every fd; do not spin */
                    break;
                }
                if (e == EBADF || e == EINVAL || e == ENOTSOCK || e == EFAULT || e == EOPNOTSUPP) {
                    GSHMEMI_ERROR("bootstrap", "rank 0: accept failed: %s", strerror(e));
                    rc = GSHMEMI_ERR_SYSTEM;
                    gshmemi_uidi_root_abort(st, nranks, rc, 0, NULL, 0);
                    goto out;
                }
                /* ENOBUFS, ENOMEM, EPERM, network errors: this connection is lost, the listener is fine */
                GSHMEMI_WARN("bootstrap", "rank 0: accept failed: %s; going on", strerror(e));
                break;
            }
            for (int i = 0; i < MAX_PENDING && slot < 0; i++)
                if (a.pend[i].fd < 0) slot = i;
            if (slot < 0) { /* evict_oldest found nothing to drop: cannot happen with npend counted right */
                close(fd);
                continue;
            }
            memset(&a.pend[slot], 0, offsetof(pending_t, buf));
            a.pend[slot].fd = fd;
            a.pend[slot].stage = STAGE_HELLO;
            a.pend[slot].serial = a.serial++;
            a.pend[slot].deadline = gshmemi_now_s() + HELLO_DEADLINE_S;
            inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
            snprintf(a.pend[slot].from, sizeof(a.pend[slot].from), "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
            a.npend++;
            /* A real rank's hello is usually here already. */
            progress(&a, &a.pend[slot]);
        }
    }
    /* A rank that died since it joined must fail the init of all, not the first collective. */
    {
        int np = 0;
        for (int k = 1; k < nranks; k++) {
            pfd[np].fd = st->conns[k];
            pfd[np].events = POLLIN;
            pfd[np].revents = 0;
            idx[np++] = -k - 1;
        }
        if (poll(pfd, (nfds_t)np, 0) > 0 && (dead = dead_rank(pfd, np, idx)) > 0) {
            rc = GSHMEMI_ERR_REMOTE;
            gshmemi_uidi_root_abort(st, nranks, rc, dead, NULL, 0);
            goto out;
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
        gshmemi_uidi_ctx_init(&c, GSHMEMI_UID_OP_WELCOME, 0, 0, st->timeout);
        for (int k = 1; k < nranks; k++) gshmemi_uidi_xfer_send(&x[k - 1], k, st->conns[k], GSHMEMI_UID_OP_WELCOME, 0, nranks, 0, NULL, 0);
        rc = gshmemi_uidi_run_xfers(x, nranks - 1, gshmemi_now_s() + st->timeout, &c, &failed);
        if (rc != GSHMEMI_OK) gshmemi_uidi_root_abort(st, nranks, rc, failed >= 0 ? x[failed].peer : -1, x, nranks - 1);
        free(x);
    }
out:
    log_drops(&a);
    if (a.pend)
        for (int i = 0; i < MAX_PENDING; i++)
            if (a.pend[i].fd >= 0) close(a.pend[i].fd);
    if (a.spare_fd >= 0) close(a.spare_fd);
    free(a.pend);
    free(pfd);
    free(idx);
    return rc;
}
