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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap_uid_msg.h"
#include "clock.h"
#include "env.h"
#include "log.h"

#define UID_VERSION 2u /* 2: the key is proven, never sent (see bootstrap_uid_msg.h) */

/* Admission at rank 0. A connection that has not finished its handshake is "pending"; strangers
 * can open as many as they like, so pending connections are bounded three ways:
 * - HELLO_DEADLINE_S: each must finish its handshake (hello, then the answer to rank 0's
 *   challenge) this long after it was accepted. A real rank sends its hello right after
 *   connecting and answers within one round trip, so seconds are ample even on a loaded host.
 * - MAX_PENDING: when the slots are full, the oldest pending connection is dropped (after reading
 *   whatever it already sent) to make room for the newest, so a flood cannot lock real ranks out.
 * - ACCEPT_BATCH: at most this many accepts between two polls, so handshakes already under way
 *   progress before a burst of new connections can evict them.
 * A rank dropped this way is told "busy" and connects again within its own timeout. */
#define HELLO_DEADLINE_S 2.0
#define MAX_PENDING 256
#define ACCEPT_BATCH 16
#define DROP_WARNINGS 4 /* per-connection warnings before rank 0 only counts them */
#define RC_RETRY 1      /* internal status: rank 0 dropped a joiner before its handshake finished; connect again */

#define MSG_MAGIC GSHMEMI_UID_MSG_MAGIC
enum {
    OP_HELLO = GSHMEMI_UID_OP_HELLO,
    OP_WELCOME = GSHMEMI_UID_OP_WELCOME,
    OP_REJECT = GSHMEMI_UID_OP_REJECT,
    OP_ABORT = GSHMEMI_UID_OP_ABORT,
    OP_ALLGATHER = GSHMEMI_UID_OP_ALLGATHER,
    OP_ALLTOALL = GSHMEMI_UID_OP_ALLTOALL,
    OP_BARRIER = GSHMEMI_UID_OP_BARRIER,
    OP_BCAST = GSHMEMI_UID_OP_BCAST,
    OP_CHALLENGE = GSHMEMI_UID_OP_CHALLENGE,
    OP_PROOF = GSHMEMI_UID_OP_PROOF,
};

enum {
    REJECT_KEY = GSHMEMI_UID_REJECT_KEY,
    REJECT_NRANKS = GSHMEMI_UID_REJECT_NRANKS,
    REJECT_RANK = GSHMEMI_UID_REJECT_RANK,
    REJECT_DUPLICATE = GSHMEMI_UID_REJECT_DUPLICATE,
    REJECT_VERSION = GSHMEMI_UID_REJECT_VERSION,
    REJECT_BUSY = GSHMEMI_UID_REJECT_BUSY,
};

static const char *op_name(unsigned op)
{
    static const char *const names[] = {"?", "hello", "welcome", "reject", "abort", "allgather", "alltoall", "barrier", "bcast",
                                        "challenge", "proof"};
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown";
}

static const char *reject_reason(int reason)
{
    switch (reason) {
    case REJECT_KEY: return "it did not prove the job key (a unique id of another job?)";
    case REJECT_NRANKS: return "its nranks differs from rank 0's";
    case REJECT_RANK: return "its rank is out of range";
    case REJECT_DUPLICATE: return "another process already joined with the same rank";
    case REJECT_VERSION: return "its gshmem bootstrap version differs from rank 0's";
    case REJECT_BUSY: return "rank 0 dropped the connection before its handshake finished";
    default: return "unknown reason";
    }
}

typedef gshmemi_uid_hdr_t msg_hdr_t;

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

/* poll() timeout in ms until deadline, rounded up so we never spin just before it. */
static int ms_until(double deadline)
{
    double left = deadline - gshmemi_now_s();
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
static struct in_addr pick_address(char *ifname, size_t n)
{
    struct ifaddrs *ifs = NULL, *it;
    struct in_addr a;

    a.s_addr = htonl(INADDR_LOOPBACK);
    snprintf(ifname, n, "lo");
    if (getifaddrs(&ifs) != 0) {
        GSHMEMI_WARN("bootstrap", "getifaddrs failed (%s); rank 0 listens on 127.0.0.1 (this host only)", strerror(errno));
        return a;
    }
    for (it = ifs; it; it = it->ifa_next) {
        if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET) continue;
        if (!(it->ifa_flags & IFF_UP) || (it->ifa_flags & IFF_LOOPBACK)) continue;
        a = ((struct sockaddr_in *)(void *)it->ifa_addr)->sin_addr;
        snprintf(ifname, n, "%s", it->ifa_name);
        break;
    }
    freeifaddrs(ifs);
    return a;
}

/* The IPv4 address of the interface GSHMEM_BOOTSTRAP_IFNAME names. */
static int ifname_address(const char *name, struct in_addr *out)
{
    struct ifaddrs *ifs = NULL, *it;
    char have[256];
    size_t off = 0;
    int found = 0;

    if (getifaddrs(&ifs) != 0) {
        GSHMEMI_ERROR("bootstrap", "GSHMEM_BOOTSTRAP_IFNAME=\"%s\": cannot list this host's interfaces (getifaddrs: %s)", name,
                      strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    have[0] = '\0';
    for (it = ifs; it; it = it->ifa_next) {
        if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET) continue;
        if (!found && strcmp(it->ifa_name, name) == 0) {
            *out = ((struct sockaddr_in *)(void *)it->ifa_addr)->sin_addr;
            found = 1;
        }
        if (off < sizeof(have) - 1)
            off += (size_t)snprintf(have + off, sizeof(have) - off, "%s%s", off ? ", " : "", it->ifa_name);
    }
    freeifaddrs(ifs);
    if (!found) {
        GSHMEMI_ERROR("bootstrap", "GSHMEM_BOOTSTRAP_IFNAME=\"%s\" is not an interface with an IPv4 address on this host (those with one: %s)",
                      name, have[0] ? have : "none");
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

/* Where rank 0 listens: 127.0.0.1 when every PE runs on this host, else the address or interface
 * the environment names, else the first non-loopback IPv4 address. *env_var names the variable
 * that chose it (NULL otherwise), so a failed bind can name it; why says how it was chosen. */
static int choose_address(unsigned flags, struct in_addr *addr, const char **env_var, char *why, size_t n)
{
    const char *ifname = gshmemi_env.BOOTSTRAP_IFNAME, *text = gshmemi_env.BOOTSTRAP_ADDR;
    char pick[IF_NAMESIZE + 1];

    *env_var = NULL;
    if (ifname[0] && text[0]) {
        GSHMEMI_ERROR("bootstrap", "GSHMEM_BOOTSTRAP_IFNAME=\"%s\" and GSHMEM_BOOTSTRAP_ADDR=\"%s\" are both set; set one of them", ifname,
                      text);
        return GSHMEMI_ERR_INVALID;
    }
    /* Checked even when unused, so a typo is caught where it is made. */
    if (text[0] && inet_pton(AF_INET, text, addr) != 1) {
        GSHMEMI_ERROR("bootstrap", "GSHMEM_BOOTSTRAP_ADDR=\"%s\" is not an IPv4 address of this host (dotted quad such as 10.0.0.5)", text);
        return GSHMEMI_ERR_INVALID;
    }
    if (ifname[0]) GSHMEMI_CHECK(ifname_address(ifname, addr));
    if (flags & GSHMEMI_UID_THIS_HOST) {
        addr->s_addr = htonl(INADDR_LOOPBACK);
        snprintf(why, n, "every PE runs on this host%s", ifname[0] || text[0] ? "; GSHMEM_BOOTSTRAP_IFNAME/_ADDR are not used" : "");
    } else if (text[0]) {
        *env_var = "GSHMEM_BOOTSTRAP_ADDR";
        snprintf(why, n, "GSHMEM_BOOTSTRAP_ADDR=%s", text);
    } else if (ifname[0]) {
        *env_var = "GSHMEM_BOOTSTRAP_IFNAME";
        snprintf(why, n, "GSHMEM_BOOTSTRAP_IFNAME=%s", ifname);
    } else {
        *addr = pick_address(pick, sizeof(pick));
        snprintf(why, n, "first IPv4 interface that is up, %s; GSHMEM_BOOTSTRAP_IFNAME or _ADDR choose another", pick);
    }
    return GSHMEMI_OK;
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

/* n random bytes from the kernel. */
static int fill_random(void *buf, size_t n, const char *what)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = getrandom((char *)buf + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            GSHMEMI_ERROR("bootstrap", "%s: getrandom failed: %s", what, strerror(errno));
            return GSHMEMI_ERR_SYSTEM;
        }
        got += (size_t)r;
    }
    return GSHMEMI_OK;
}

int gshmemi_uid_create(gshmemi_uid_t *uid) { return gshmemi_uid_create_flags(uid, 0); }

int gshmemi_uid_create_flags(gshmemi_uid_t *uid, unsigned flags)
{
    struct in_addr addr;
    const char *env_var;
    char why[128];
    uint16_t port = 0;
    int fd = -1, err;

    if (!uid) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_uid_create: uid is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    memset(uid, 0, sizeof(*uid));
    GSHMEMI_CHECK(gshmemi_env_init());
    GSHMEMI_CHECK(choose_address(flags, &addr, &env_var, why, sizeof(why)));
    err = listen_on(addr, &fd, &port);
    if (err) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr, ip, sizeof(ip));
        if (env_var) {
            GSHMEMI_ERROR("bootstrap", "gshmemi_uid_create: cannot listen on %s, which %s names: %s", ip, env_var, strerror(-err));
            return GSHMEMI_ERR_INVALID;
        }
        if (addr.s_addr != htonl(INADDR_LOOPBACK)) {
            GSHMEMI_WARN("bootstrap", "cannot listen on %s (%s); using 127.0.0.1, so only PEs of this host can join", ip, strerror(-err));
            addr.s_addr = htonl(INADDR_LOOPBACK);
            snprintf(why, sizeof(why), "the fallback after %s failed", ip);
            err = listen_on(addr, &fd, &port);
        }
    }
    if (err) {
        GSHMEMI_ERROR("bootstrap", "gshmemi_uid_create: cannot open a listening TCP socket: %s", strerror(-err));
        return GSHMEMI_ERR_SYSTEM;
    }
    if (fill_random(uid->key, sizeof(uid->key), "gshmemi_uid_create") != GSHMEMI_OK) {
        close(fd);
        return GSHMEMI_ERR_SYSTEM;
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
        GSHMEMI_INFO("bootstrap", "unique id created; rank 0 listens on %s (%s)", where, why);
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
    h->version = GSHMEMI_UID_PROTO_VERSION;
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
        if (h->arg == REJECT_BUSY && x->exp_op == OP_WELCOME) return RC_RETRY;
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
    rc = run_xfers(x, 2, gshmemi_now_s() + tmo, &c, &failed);
    if (rc != GSHMEMI_OK) peer_abort(st, rc);
    return rc;
}

/* Root side of one round: one message from (gather) or to (scatter) every other rank. After a
 * failed scatter, root_abort sees which sends stopped mid-message. */
static int root_round(gshmemi_bootstrap_t *bs, int op, xfer_t *x, int scatter)
{
    uid_state_t *st = bs->impl;
    xfer_ctx_t c;
    int failed, rc;

    ctx_init(&c, op, st->seq, 0, st->timeout);
    rc = run_xfers(x, bs->nranks - 1, gshmemi_now_s() + st->timeout, &c, &failed);

    if (rc != GSHMEMI_OK)
        root_abort(st, bs->nranks, rc, failed >= 0 ? x[failed].peer : -1, scatter ? x : NULL, scatter ? bs->nranks - 1 : 0);
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

/* The handshake (protocol version 2). The key never travels; each side proves it holds it:
 *   joiner -> 0   HELLO      rank, nranks, the joiner's fresh nonce
 *   0 -> joiner   CHALLENGE  rank 0's fresh nonce, rank 0's proof (SipHash-2-4 under the key of
 *                            both nonces, rank and nranks, side 'R')
 *   joiner -> 0   PROOF      the joiner's proof (the same, side 'J'), sent only once rank 0's
 *                            proof checked out, so a process that took rank 0's port learns nothing
 *   0 -> joiner   WELCOME    once every rank has proven itself (or REJECT / ABORT)
 * Rank 0 decides about rank, nranks and duplicates only after the proof, so a stranger can neither
 * take a rank's place nor learn anything about the job. */

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
    msg_hdr_t h;
    hdr_init(&h, OP_REJECT, 0, reason, 0, 0);
    /* Best effort: the joiner reports it; if it cannot, it sees the close. */
    (void)!send(fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Drops a pending connection. Strangers can cause any number of these, so only the first few
 * are logged one by one; root_accept sums up the rest. */
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
    if (kind == DROP_DEADLINE || kind == DROP_EVICTED) send_reject(p->fd, REJECT_BUSY);
    if (kind == DROP_KEY) send_reject(p->fd, REJECT_KEY);
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
    msg_hdr_t h;
    uint64_t proof;

    p->rank = m->hdr.src;
    p->nranks = m->hdr.arg;
    memcpy(p->jnonce, m->nonce, sizeof(p->jnonce));
    if (fill_random(p->rnonce, sizeof(p->rnonce), "rank 0") != GSHMEMI_OK) {
        drop(a, p, DROP_CLOSED, "no random nonce");
        return;
    }
    proof = gshmemi_uid_proof(a->uid->key, 'R', p->jnonce, p->rnonce, p->rank, p->nranks);
    hdr_init(&h, OP_CHALLENGE, 0, 0, 0, GSHMEMI_UID_NONCE_BYTES + 8);
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
    if (p->nranks != a->nranks) reason = REJECT_NRANKS;
    else if (st->conns[p->rank] >= 0) reason = REJECT_DUPLICATE;
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
    set_nodelay(p->fd);
    GSHMEMI_TRACE("bootstrap", "rank 0: rank %d joined from %s", (int)p->rank, p->from);
    p->fd = -1;
    a->npend--;
    a->joined++;
}

/* Reads what p has sent so far, without waiting, and acts on a complete message. */
static void progress(admit_t *a, pending_t *p)
{
    const int want_op = p->stage == STAGE_HELLO ? OP_HELLO : OP_PROOF;
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
        if (rc == GSHMEMI_ERR_UNSUPPORTED) send_reject(p->fd, REJECT_VERSION);
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
        send_reject(o->fd, REJECT_BUSY);
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
            send_reject(fd, REJECT_BUSY);
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
static int root_accept(uid_state_t *st, int lfd, const gshmemi_uid_t *uid, int nranks)
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
                    root_abort(st, nranks, GSHMEMI_ERR_TIMEOUT, k, NULL, 0);
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
            root_abort(st, nranks, rc, dead, NULL, 0);
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
                    root_abort(st, nranks, rc, 0, NULL, 0);
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
            root_abort(st, nranks, rc, dead, NULL, 0);
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
        ctx_init(&c, OP_WELCOME, 0, 0, st->timeout);
        for (int k = 1; k < nranks; k++) xfer_send(&x[k - 1], k, st->conns[k], OP_WELCOME, 0, nranks, 0, NULL, 0);
        rc = run_xfers(x, nranks - 1, gshmemi_now_s() + st->timeout, &c, &failed);
        if (rc != GSHMEMI_OK) root_abort(st, nranks, rc, failed >= 0 ? x[failed].peer : -1, x, nranks - 1);
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
    msg_hdr_t h;
    const char *why;
    char where[64];
    uint64_t proof;
    long drc;
    int err;
    size_t have = GSHMEMI_UID_HDR_BYTES;

    addr_string(uid, where, sizeof(where));
    GSHMEMI_CHECK(fill_random(jnonce, sizeof(jnonce), "joining"));
    hdr_init(&h, OP_HELLO, rank, nranks, 0, sizeof(jnonce));
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
    if (m.hdr.op == OP_REJECT && m.hdr.arg == REJECT_BUSY) return RC_RETRY;
    if (m.hdr.op == OP_REJECT) {
        GSHMEMI_ERROR("bootstrap", "rank %d: rank 0 rejected this process: %s", rank, reject_reason(m.hdr.arg));
        return GSHMEMI_ERR_INVALID;
    }
    if (m.hdr.op == OP_ABORT) {
        xfer_ctx_t c;
        ctx_init(&c, OP_HELLO, 0, rank, st->timeout);
        c.abort_rank = m.hdr.arg;
        c.abort_status = m.hdr.status < 0 ? m.hdr.status : GSHMEMI_ERR_REMOTE;
        log_abort(&c);
        return c.abort_status;
    }
    if (m.hdr.op != OP_CHALLENGE) {
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
    hdr_init(&h, OP_PROOF, rank, nranks, 0, 8);
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
        ctx_init(&c, OP_HELLO, 0, rank, st->timeout + grace(st->timeout));
        xfer_recv(&x, 0, st->fd, OP_WELCOME, nranks, 0, NULL, 0);
        return run_xfers(&x, 1, gshmemi_now_s() + c.timeout, &c, &failed);
    }
}

/* Rank > 0: connect and handshake; when rank 0 drops us before the handshake finished (a flood
 * of other connections, or we were slow), connect again until the deadline. */
static int peer_join(uid_state_t *st, const gshmemi_uid_t *uid, int rank, int nranks)
{
    double deadline = gshmemi_now_s() + st->timeout;
    int tries = 0, rc;
    char where[64];

    addr_string(uid, where, sizeof(where));
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

static const gshmemi_bootstrap_t uid_ops = {
    .allgather = uid_allgather, .alltoall = uid_alltoall, .barrier = uid_barrier, .bcast = uid_bcast,
    .finalize = uid_finalize,
};

int gshmemi_bootstrap_uid_init(const gshmemi_uid_t *uid, int rank, int nranks, double timeout_s, gshmemi_bootstrap_t **out)
{
    gshmemi_bootstrap_t *bs;
    uid_state_t *st;
    int rc = GSHMEMI_OK;

    GSHMEMI_CHECK(gshmemi_bootstrap_check_args("gshmemi_bootstrap_uid_init", out, timeout_s));
    GSHMEMI_CHECK(uid_check(uid, "gshmemi_bootstrap_uid_init"));
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
                      g_listen_fd < 0 ? " (or it was already used: a unique id starts one job)" : "");
        return GSHMEMI_ERR_INVALID;
    }

    bs = gshmemi_bootstrap_new(&uid_ops, rank, nranks, sizeof(*st));
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
