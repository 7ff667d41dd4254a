/* Passing VMM export fds between the PEs of one host: one datagram Unix socket per PE in the
 * abstract namespace, named by the PE's key (its P2P blob) and local index; fds travel as SCM_RIGHTS. */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../runtime/base/clock.h"
#include "p2p.h"

typedef struct {
    uint64_t key;     /* the receiver's */
    uint32_t seq;
    int32_t from_local;
    uint64_t offset;
    uint64_t size;
} ipc_msg_t;

/* Room for one fd beside a message. */
typedef union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
} ipc_ctrl_t;

/* A header for one ipc_msg_t and one fd, as sendmsg and recvmsg both take it. */
static void msghdr_init(struct msghdr *mh, struct iovec *iov, ipc_msg_t *msg, ipc_ctrl_t *ctrl)
{
    iov->iov_base = msg;
    iov->iov_len = sizeof(*msg);
    memset(mh, 0, sizeof(*mh));
    memset(ctrl, 0, sizeof(*ctrl));
    mh->msg_iov = iov;
    mh->msg_iovlen = 1;
    mh->msg_control = ctrl->buf;
    mh->msg_controllen = sizeof(ctrl->buf);
}

static socklen_t ipc_addr(uint64_t key, int local, struct sockaddr_un *addr)
{
    int n;
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    /* sun_path[0] == 0: abstract namespace, nothing to clean up on disk. */
    n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "gshmem-%016llx-%d", (unsigned long long)key, local);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int gshmemi_ipc_open(uint64_t key, int my_local, int *sock)
{
    struct sockaddr_un addr;
    socklen_t len = ipc_addr(key, my_local, &addr);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        GSHMEMI_ERROR("heap", "socket(AF_UNIX) failed: %s", strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    if (bind(fd, (struct sockaddr *)&addr, len) != 0) {
        GSHMEMI_ERROR("heap", "bind of handle-exchange socket @%s failed: %s", addr.sun_path + 1, strerror(errno));
        close(fd);
        return GSHMEMI_ERR_SYSTEM;
    }
    *sock = fd;
    return GSHMEMI_OK;
}

void gshmemi_ipc_close(int sock)
{
    if (sock >= 0) close(sock);
}

int gshmemi_ipc_send_fd(int sock, uint64_t to_key, int to_local, uint32_t seq, int from_local, uint64_t offset,
                        uint64_t size, int fd, double timeout_s)
{
    struct sockaddr_un addr;
    socklen_t alen = ipc_addr(to_key, to_local, &addr);
    ipc_msg_t msg = {to_key, seq, from_local, offset, size};
    struct iovec iov;
    ipc_ctrl_t ctrl;
    struct msghdr mh;
    struct cmsghdr *cm;
    double deadline = gshmemi_now_s() + timeout_s;

    msghdr_init(&mh, &iov, &msg, &ctrl);
    mh.msg_name = &addr;
    mh.msg_namelen = alen;
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    for (;;) {
        if (sendmsg(sock, &mh, MSG_DONTWAIT) == (ssize_t)sizeof(msg)) return GSHMEMI_OK;
        /* A full queue drains as the peer receives; anything else is fatal. */
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ENOBUFS) {
            GSHMEMI_ERROR("heap", "sending a heap handle to local PE %d failed: %s", to_local, strerror(errno));
            return GSHMEMI_ERR_SYSTEM;
        }
        if (gshmemi_now_s() > deadline) {
            GSHMEMI_ERROR("heap", "local PE %d did not take a heap handle within %.0f s (GSHMEM_PEER_TIMEOUT)", to_local, timeout_s);
            return GSHMEMI_ERR_TIMEOUT;
        }
        usleep(100);
    }
}

int gshmemi_ipc_recv_fd(int sock, uint32_t seq, double timeout_s, int *from_local, uint64_t *offset, uint64_t *size,
                        int *fd)
{
    ipc_msg_t msg;
    struct iovec iov;
    ipc_ctrl_t ctrl;
    struct msghdr mh;
    struct cmsghdr *cm;
    struct pollfd pfd = {sock, POLLIN, 0};
    double deadline = gshmemi_now_s() + timeout_s;
    ssize_t n;

    for (;;) {
        int left_ms = (int)((deadline - gshmemi_now_s()) * 1000);
        int rc;
        if (left_ms <= 0) {
            GSHMEMI_ERROR("heap", "no heap handle from the other PEs of this host within %.0f s (growth %u; GSHMEM_PEER_TIMEOUT); a peer may have died or skipped a collective shmem_malloc",
                          timeout_s, seq);
            return GSHMEMI_ERR_TIMEOUT;
        }
        rc = poll(&pfd, 1, left_ms);
        if (rc > 0) break;
        if (rc < 0 && errno != EINTR) {
            GSHMEMI_ERROR("heap", "poll on the handle-exchange socket failed: %s", strerror(errno));
            return GSHMEMI_ERR_SYSTEM;
        }
    }
    msghdr_init(&mh, &iov, &msg, &ctrl);
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0) {
        GSHMEMI_ERROR("heap", "recvmsg on the handle-exchange socket failed: %s", strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    cm = CMSG_FIRSTHDR(&mh);
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(cm), sizeof(int));
    else *fd = -1;
    if (n != (ssize_t)sizeof(msg) || *fd < 0 || msg.seq != seq) {
        GSHMEMI_ERROR("heap", "unexpected message on the handle-exchange socket (%zd bytes, fd %d, growth %u, expected growth %u)",
                      n, *fd, msg.seq, seq);
        if (*fd >= 0) close(*fd);
        return GSHMEMI_ERR_REMOTE;
    }
    *from_local = msg.from_local;
    *offset = msg.offset;
    *size = msg.size;
    return GSHMEMI_OK;
}
