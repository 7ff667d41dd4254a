/* Bootstrap: the out-of-band exchange PEs use before (and beside) the symmetric heap.
 * Every implementation fills one ops table; runtime/init.c picks one at shmem_init. */
#ifndef GSHMEMI_BOOTSTRAP_H
#define GSHMEMI_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gshmemi_bootstrap gshmemi_bootstrap_t;

struct gshmemi_bootstrap {
    int rank;       /* 0 .. nranks-1 */
    int nranks;
    void *impl;     /* implementation state */
    /* Each op is collective over all ranks and returns GSHMEMI_OK or a negative status.
     * Every wait is bounded by the bootstrap timeout and fails with GSHMEMI_ERR_TIMEOUT. */
    /* buf holds nranks blocks of len bytes; block `rank` is this rank's input, all are output. */
    int (*allgather)(gshmemi_bootstrap_t *bs, void *buf, size_t len);
    /* sendbuf/recvbuf hold nranks blocks of len bytes: block j of sendbuf goes to rank j,
     * block j of recvbuf comes from rank j. */
    int (*alltoall)(gshmemi_bootstrap_t *bs, const void *sendbuf, void *recvbuf, size_t len);
    int (*barrier)(gshmemi_bootstrap_t *bs);
    /* root's len bytes of buf are copied to every rank's buf. */
    int (*bcast)(gshmemi_bootstrap_t *bs, void *buf, size_t len, int root);
    /* Releases everything; bs itself is freed too. */
    int (*finalize)(gshmemi_bootstrap_t *bs);
};

/* The unique id: what a framework passes from rank 0 to every other rank.
 * Opaque to users (shmemx_uniqueid_t has the same size). */
#define GSHMEMI_UNIQUEID_BYTES 128
typedef struct {
    uint32_t magic;         /* GSHMEMI_UID_MAGIC */
    uint32_t version;
    uint8_t addr[16];       /* IPv4 (first 4 bytes, network order) of rank 0's listener */
    uint16_t port;          /* network order */
    uint16_t family;        /* AF_INET */
    uint32_t reserved;
    uint64_t key[2];        /* random job key; each side proves it holds it, it never travels */
    uint8_t pad[GSHMEMI_UNIQUEID_BYTES - 48];
} gshmemi_uid_t;
#define GSHMEMI_UID_MAGIC 0x47534855u /* "GSHU" */

/* Creates a listener (kept open in this process, so the caller becomes rank 0) and fills uid.
 * It listens on GSHMEM_BOOTSTRAP_ADDR, else on the address of GSHMEM_BOOTSTRAP_IFNAME, else on
 * the first IPv4 interface that is up; the choice is logged at info. */
int gshmemi_uid_create(gshmemi_uid_t *uid);
/* Every PE of the job runs on this host (gshmemrun): listen on 127.0.0.1 only. */
#define GSHMEMI_UID_THIS_HOST 1u
/* gshmemi_uid_create with GSHMEMI_UID_* flags. */
int gshmemi_uid_create_flags(gshmemi_uid_t *uid, unsigned flags);
/* Text form for environment variables: hex of the whole struct. out needs 2*sizeof+1 bytes. */
void gshmemi_uid_to_string(const gshmemi_uid_t *uid, char *out);
int gshmemi_uid_from_string(const char *text, gshmemi_uid_t *uid);
/* Adopts an already listening socket (passed by gshmemrun to rank 0) for the uid it was made for. */
int gshmemi_uid_adopt_listener(int fd, const gshmemi_uid_t *uid);
/* The listening socket this process holds for uid (from create or adopt), or -1.
 * gshmemrun uses it to hand the listener to rank 0. */
int gshmemi_uid_listener_fd(const gshmemi_uid_t *uid);
/* Closes this process's listener, if any: for a creator that will not be rank 0 itself
 * (gshmemrun after it has started rank 0). A later join as rank 0 in this process fails. */
void gshmemi_uid_close_listener(void);

/* The start every bootstrap's init shares: checks out (clearing *out) and timeout_s; who names
 * the init routine in errors. */
int gshmemi_bootstrap_check_args(const char *who, gshmemi_bootstrap_t **out, double timeout_s);
/* A copy of the ops table with rank and nranks set and impl_size zeroed bytes of state at impl
 * (NULL when impl_size is 0); NULL when out of memory. Freed by the implementation's finalize. */
gshmemi_bootstrap_t *gshmemi_bootstrap_new(const gshmemi_bootstrap_t *ops, int rank, int nranks, size_t impl_size);

/* How far a PE started by gshmemrun got, for gshmemrun's rule on PEs that exit with status 0
 * while others run (gshmemrun.c): one byte at offset GSHMEM_RANK of the sealed memory file whose
 * descriptor is GSHMEM_LAUNCHER_FD. OUTSIDE: never in shmem_init, or it failed; IN_JOB: from
 * shmem_init on; FINALIZED: from shmem_finalize on; GLOBAL_EXIT: in shmem_global_exit. */
enum {
    GSHMEMI_PE_OUTSIDE = 0,
    GSHMEMI_PE_IN_JOB = 'I',
    GSHMEMI_PE_FINALIZED = 'F',
    GSHMEMI_PE_GLOBAL_EXIT = 'X',
};
/* Records state for gshmemrun; nothing when GSHMEM_LAUNCHER_FD is unset (-1). Reads gshmemi_env, so
 * call it after gshmemi_env_init. A descriptor that is not such a file (a stray value) is never
 * written: one warning says so. */
void gshmemi_launcher_note(int state);

/* Joins the job described by uid as rank/nranks. timeout_s bounds every wait. */
int gshmemi_bootstrap_uid_init(const gshmemi_uid_t *uid, int rank, int nranks, double timeout_s,
                               gshmemi_bootstrap_t **out);
/* PMIx: rank and size come from the PMIx server (mpirun, srun --mpi=pmix).
 * Returns GSHMEMI_ERR_UNSUPPORTED when built without PMIx. */
int gshmemi_bootstrap_pmix_init(double timeout_s, gshmemi_bootstrap_t **out);
/* True when the environment looks like a PMIx launch (PMIX_RANK / PMIX_NAMESPACE set). */
int gshmemi_bootstrap_pmix_detected(void);
/* One process, no launcher. */
int gshmemi_bootstrap_single_init(gshmemi_bootstrap_t **out);

#ifdef __cplusplus
}
#endif
#endif
