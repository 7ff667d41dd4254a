/* Every environment variable gshmem reads, in one table. Nothing else calls getenv().
 * Row: X(NAME, TYPE, DEFAULT, DOC); the variable is GSHMEM_<NAME>, the field gshmemi_env.NAME. */
#ifndef GSHMEMI_ENV_H
#define GSHMEMI_ENV_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_ENV_TABLE(X)                                                                          \
    X(SYMMETRIC_SIZE, size, "1G", "Bytes of symmetric heap per PE; suffixes K, M, G, T (powers of 1024)") \
    X(BOOTSTRAP, bootstrap, "auto", "How PEs find each other: pmix | uid | auto (uid when set by gshmemrun, else pmix when launched by PMIx, else one PE)") \
    X(DEBUG, loglevel, "warn", "Log level: none | warn | info | trace")                              \
    X(BOOTSTRAP_TIMEOUT, seconds, "120", "Seconds any bootstrap wait on another process may take before it fails") \
    X(BOOTSTRAP_UID, string, "", "Unique id (hex) of a uid bootstrap; set by gshmemrun")             \
    X(BOOTSTRAP_LISTEN_FD, int, "-1", "Listening socket rank 0 inherits from gshmemrun")             \
    X(RANK, int, "-1", "This PE's rank in a uid bootstrap; set by gshmemrun")                         \
    X(NRANKS, int, "-1", "Number of PEs in a uid bootstrap; set by gshmemrun")                        \
    X(LOCAL_RANK, int, "-1", "Rank among the PEs of this host; set by gshmemrun (PMIx gives its own)") \
    X(DEVICE, int, "-1", "CUDA device of this PE; -1: the device of the current context, else local rank modulo device count") \
    X(HEAP_GROWTH, size, "32M", "Smallest step by which the physical backing of the heap grows (rounded to the allocation granularity)") \
    X(PEER_TIMEOUT, seconds, "60", "Seconds a host-side wait on a same-host peer (heap growth handles) may take") \
    X(DEVICE_WAIT_TIMEOUT, seconds, "120", "Seconds a device-side wait on another PE (barrier, wait_until) may spin before it reports and traps") \
    X(DEBUG_CHECKS, int, "0", "1: every device call checks its PE and symmetric address and traps with a report on a violation") \
    X(MAX_TEAMS, int, "32", "Teams that can exist at once, the predefined four included (4..64); each owns a pSync slot") \
    X(BARRIER_RADIX, int, "32", "Radix of the dissemination barrier/sync (2..32), clamped to the team size: 32 gives one round up to 32 PEs") \
    X(COLL_PROTO, proto, "auto", "Collective protocol: auto | ll | ll128 | simple | direct (forces one, for tests and tuning; ll128 and simple only where the team has their buffers)") \
    X(COLL_LL_MAX, size, "64K", "Largest block, in bytes, that collectives send by LL") \
    X(COLL_SIMPLE_MAX, size, "0", "Largest block, in bytes, that collectives of the world team send by SIMPLE (0: none; DIRECT is faster on NVLink hosts measured so far)") \
    X(COLL_LL128_MAX, size, "512K", "Largest block, in bytes, that collectives of the world team send by LL128 (0: none)") \
    X(COLL_ONESHOT_MAX, size, "1T", "Largest block, in bytes, of a direct reduction of 2 PEs done one-shot (each PE reads the other's whole source) instead of two-shot") \
    X(COLL_PUSH_MIN, size, "1M", "Smallest block, in bytes, that DIRECT fcollect and alltoall move by stores into the peers instead of loads from them") \
    X(COLL_PUSH_REDUCE_MIN, size, "16M", "Smallest block, in bytes, of an on-stream 2-PE reduction into a separate dest done two-shot by stores instead of one-shot by loads") \
    X(COLL_CTAS, int, "128", "Most CTAs (slices) of one on-stream collective (1..128)") \
    X(COLL_PDL, int, "1", "1: on-stream collectives and barriers use programmatic dependent launch, so their launch overlaps the previous kernel's tail; 0: plain launches") \
    X(BOOTSTRAP_IFNAME, string, "", "Interface whose IPv4 address rank 0 of a unique-id job listens on (e.g. eth0); unset: the first one that is up. gshmemrun, whose PEs are all local, always uses 127.0.0.1") \
    X(BOOTSTRAP_ADDR, string, "", "IPv4 address rank 0 of a unique-id job listens on (instead of GSHMEM_BOOTSTRAP_IFNAME); gshmemrun always uses 127.0.0.1")

/* C type of each TYPE column value. */
typedef size_t gshmemi_env_size_t;
typedef int gshmemi_env_int_t;
typedef double gshmemi_env_seconds_t;
typedef const char *gshmemi_env_string_t;
typedef int gshmemi_env_loglevel_t;  /* GSHMEMI_LOG_* */
typedef int gshmemi_env_bootstrap_t; /* GSHMEMI_BOOTSTRAP_* */
typedef int gshmemi_env_proto_t;     /* GSHMEMI_PROTO_* */

enum { GSHMEMI_BOOTSTRAP_AUTO = 0, GSHMEMI_BOOTSTRAP_PMIX = 1, GSHMEMI_BOOTSTRAP_UID = 2 };

typedef struct {
#define GSHMEMI_ENV_FIELD(name, type, def, doc) gshmemi_env_##type##_t name;
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_FIELD)
#undef GSHMEMI_ENV_FIELD
} gshmemi_env_t;

extern gshmemi_env_t gshmemi_env;

/* Fills env from get(name) (NULL = unset -> default). A malformed value logs the variable, the
 * value and what is accepted, and returns GSHMEMI_ERR_INVALID. */
int gshmemi_env_load(const char *(*get)(const char *name), gshmemi_env_t *env);
/* Loads gshmemi_env from the process environment once; later calls return the first result. */
int gshmemi_env_init(void);
/* Prints every variable: name, type, default, current value, doc. */
void gshmemi_env_print(FILE *out, const gshmemi_env_t *env);
/* Parses "1G", "512M", "4096"; exposed for tests. */
int gshmemi_parse_size(const char *text, size_t *out);

#ifdef __cplusplus
}
#endif
#endif
