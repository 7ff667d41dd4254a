/* Inside the unique-id bootstrap (bootstrap_uid*.c; the wire format is bootstrap_uid_msg.h):
 * the constants, the per-job state and the pieces its files share. The files, by concern:
 *   bootstrap_uid_addr.c    the unique id: rank 0's address, its listener, the text form
 *   bootstrap_uid_xfer.c    the message exchange (poll-driven sends and receives with deadlines,
 *                           aborts forwarded by rank 0) and the collectives built on it
 *   bootstrap_uid_root.c    rank 0 admitting the other ranks (the handshake's server side)
 *   bootstrap_uid.c         a rank joining rank 0 (the client side), and the bootstrap's init */
#ifndef GSHMEMI_BOOTSTRAP_UID_H
#define GSHMEMI_BOOTSTRAP_UID_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "bootstrap_uid_msg.h"
#include "clock.h"

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

static inline const char *op_name(unsigned op)
{
    static const char *const names[] = {"?", "hello", "welcome", "reject", "abort", "allgather", "alltoall", "barrier", "bcast",
                                        "challenge", "proof"};
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown";
}

static inline const char *reject_reason(int reason)
{
    switch (reason) {
    case GSHMEMI_UID_REJECT_KEY: return "it did not prove the job key (a unique id of another job?)";
    case GSHMEMI_UID_REJECT_NRANKS: return "its nranks differs from rank 0's";
    case GSHMEMI_UID_REJECT_RANK: return "its rank is out of range";
    case GSHMEMI_UID_REJECT_DUPLICATE: return "another process already joined with the same rank";
    case GSHMEMI_UID_REJECT_VERSION: return "its gshmem bootstrap version differs from rank 0's";
    case GSHMEMI_UID_REJECT_BUSY: return "rank 0 dropped the connection before its handshake finished";
    default: return "unknown reason";
    }
}


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
    gshmemi_uid_hdr_t hdr;     /* send: the header to send; recv: the header as received */
    /* recv: what the header must say; payload lands in data */
    uint16_t exp_op;
    int32_t exp_arg;
    uint64_t exp_seq;
    char *data;
    size_t len;
    size_t done;       /* bytes of header + payload moved so far */
    int finished;
} xfer_t;

/* poll() timeout in ms until deadline, rounded up so we never spin just before it. */
/* poll() timeout in ms until deadline, rounded up so we never spin just before it. */
static inline int ms_until(double deadline)
{
    double left = deadline - gshmemi_now_s();
    if (left <= 0) return 0;
    if (left > 3600) return 3600 * 1000; /* the caller loops; keeps the int in range */
    return (int)(left * 1000.0) + 1;
}

/* What a round of messages was doing, for its reports. */
typedef struct {
    char label[48];   /* "allgather #3", "joining": what the messages say we were doing */
    int my_rank;
    double timeout;
    int abort_rank;   /* GSHMEMI_UID_OP_ABORT received: the rank rank 0 reports */
    int abort_status;
} xfer_ctx_t;

/* How long rank 0 waits for the others' last messages once a round failed. */
static inline double grace(double timeout) { return timeout * 0.25 < 1.0 ? timeout * 0.25 : 1.0; }

/* ---- bootstrap_uid_addr.c */
/* "a.b.c.d:port" of uid's rank 0 */
void gshmemi_uidi_addr_string(const gshmemi_uid_t *uid, char *out, size_t n);
/* GSHMEMI_ERR_INVALID, logged naming routine, when uid is not a unique id of this version */
int gshmemi_uidi_check(const gshmemi_uid_t *uid, const char *routine);
/* 1 when a and b name the same job */
int gshmemi_uidi_same_job(const gshmemi_uid_t *a, const gshmemi_uid_t *b);
/* 1 while this process holds a listener (created or adopted) not yet used by a job */
int gshmemi_uidi_has_listener(void);
/* n random bytes (getrandom) into buf; what names them in an error */
int gshmemi_uidi_fill_random(void *buf, size_t n, const char *what);

/* ---- bootstrap_uid_xfer.c */
void gshmemi_uidi_set_nodelay(int fd);
void gshmemi_uidi_hdr_init(gshmemi_uid_hdr_t *h, int op, int src, int arg, uint64_t seq, uint64_t len);
/* x: one message to send to, or receive from, peer over fd, moved by run_xfers */
void gshmemi_uidi_xfer_send(xfer_t *x, int peer, int fd, int op, int src, int arg, uint64_t seq, const void *data, size_t len);
void gshmemi_uidi_xfer_recv(xfer_t *x, int peer, int fd, int op, int arg, uint64_t seq, void *data, size_t len);
void gshmemi_uidi_ctx_init(xfer_ctx_t *c, int op, uint64_t seq, int my_rank, double timeout);
/* The abort rank 0 forwarded, reported once */
void gshmemi_uidi_log_abort(const xfer_ctx_t *c);
/* Moves the n messages of x until all are done or deadline; *failed: the peer that failed */
int gshmemi_uidi_run_xfers(xfer_t *x, int n, double deadline, xfer_ctx_t *c, int *failed);
/* Rank 0: tells every rank still connected that the job failed (status, failed_rank) */
void gshmemi_uidi_root_abort(uid_state_t *st, int nranks, int status, int failed_rank, const xfer_t *sends, int nsends);
void gshmemi_uidi_state_free(uid_state_t *st, int nranks);
extern const gshmemi_bootstrap_t gshmemi_uidi_ops;

/* ---- bootstrap_uid_root.c */
/* Rank 0: admits the other nranks - 1 ranks on listener lfd (the handshake below). */
int gshmemi_uidi_root_accept(uid_state_t *st, int lfd, const gshmemi_uid_t *uid, int nranks);

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


#endif
