/* The unique id (bootstrap_uid.h): the address rank 0 listens on (GSHMEM_BOOTSTRAP_IFNAME /
 * _ADDR, or the host's first usable one), its listening socket (made here, or adopted from
 * gshmemrun), the random job key, and the text form of a unique id. */
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

/* The listener of the uid this process created or adopted; it makes this process rank 0.
 * Not thread-safe: create/adopt/join are setup calls made from one thread. */
static int g_listen_fd = -1;
static gshmemi_uid_t g_listen_uid;

void gshmemi_uidi_addr_string(const gshmemi_uid_t *uid, char *out, size_t n)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, uid->addr, ip, sizeof(ip));
    snprintf(out, n, "%s:%u", ip, (unsigned)ntohs(uid->port));
}

int gshmemi_uidi_check(const gshmemi_uid_t *uid, const char *routine)
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

int gshmemi_uidi_same_job(const gshmemi_uid_t *a, const gshmemi_uid_t *b)
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
int gshmemi_uidi_fill_random(void *buf, size_t n, const char *what)
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
    if (gshmemi_uidi_fill_random(uid->key, sizeof(uid->key), "gshmemi_uid_create") != GSHMEMI_OK) {
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
        gshmemi_uidi_addr_string(uid, where, sizeof(where));
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

    GSHMEMI_CHECK(gshmemi_uidi_check(uid, "gshmemi_uid_adopt_listener"));
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
    if (!uid || g_listen_fd < 0 || !gshmemi_uidi_same_job(uid, &g_listen_uid)) return -1;
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
    GSHMEMI_CHECK(gshmemi_uidi_check(&tmp, "unique id text (GSHMEM_BOOTSTRAP_UID)"));
    *uid = tmp;
    return GSHMEMI_OK;
}


int gshmemi_uidi_has_listener(void) { return g_listen_fd >= 0; }
