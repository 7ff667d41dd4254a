/* Every environment variable gshmem reads, in one table. Nothing else calls getenv().
 * Row: X(NAME, TYPE, DEFAULT, LIMIT, DOC); the variable is GSHMEM_<NAME>, the field gshmemi_env.NAME.
 * LIMIT is what a well-formed value must also satisfy, checked when the table is read (shmem_init
 * reads it before anything else, gshmem-info prints it), so code using a field may rely on it:
 *   ANY                   nothing beyond the TYPE (strings, choices, thresholds where every size means something)
 *   RANGE(lo, hi)         lo <= value <= hi, in the row's unit (bytes, seconds, ...)
 *   CHECK(fn, "rule")     fn(value) != 0; "rule" says what is accepted (a static function in env.c) */
#ifndef GSHMEMI_ENV_H
#define GSHMEMI_ENV_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes stop at 1 PiB: no GPU maps more, and rounding a size up to a granularity cannot overflow. */
#define GSHMEMI_ENV_SIZE_MAX (1ull << 50)
/* Waits last at least a millisecond (a shorter one fails before a peer can answer) and at most
 * 1e9 s, so every wait stays bounded and the device wait's nanoseconds fit 64 bits. */
#define GSHMEMI_ENV_SECONDS_MIN 0.001
#define GSHMEMI_ENV_SECONDS_MAX 1e9

#define GSHMEMI_ENV_TABLE(X)                                                                          \
    X(SYMMETRIC_SIZE, size, "0", RANGE(0, GSHMEMI_ENV_SIZE_MAX), "Most bytes of symmetric heap per PE (address space is reserved at init, GPU memory mapped as allocations need it); 0: the memory of the job's smallest GPU (1 GiB with IBGDA on a ConnectX, which maps the heap whole); suffixes K, M, G, T (powers of 1024). Where unset, NVSHMEM_SYMMETRIC_SIZE is read") \
    X(BOOTSTRAP, bootstrap, "auto", ANY, "How PEs find each other: pmix | uid | auto (uid when set by gshmemrun, else pmix when launched by PMIx, else one PE)") \
    X(DEBUG, loglevel, "warn", ANY, "Log level: none | warn | info | trace")                              \
    X(BOOTSTRAP_TIMEOUT, seconds, "120", RANGE(GSHMEMI_ENV_SECONDS_MIN, GSHMEMI_ENV_SECONDS_MAX), "Seconds any bootstrap wait on another process may take before it fails") \
    X(BOOTSTRAP_UID, string, "", CHECK(uid_text, "empty or the 256 hex digits of a unique id"), "Unique id (hex) of a uid bootstrap; set by gshmemrun")             \
    X(BOOTSTRAP_LISTEN_FD, int, "-1", RANGE(-1, INT_MAX), "Listening socket rank 0 inherits from gshmemrun")             \
    X(RANK, int, "-1", RANGE(-1, INT_MAX), "This PE's rank in a uid bootstrap; set by gshmemrun")                         \
    X(NRANKS, int, "-1", CHECK(unset_or_positive, "-1 (unset) or >= 1"), "Number of PEs in a uid bootstrap; set by gshmemrun")                        \
    X(LOCAL_RANK, int, "-1", RANGE(-1, INT_MAX), "Rank among the PEs of this host; set by gshmemrun (PMIx gives its own)") \
    X(LAUNCHER_FD, int, "-1", RANGE(-1, INT_MAX), "Descriptor of gshmemrun's sealed state file (a byte per rank) where shmem_init, shmem_finalize and shmem_global_exit note how far this PE got, so gshmemrun can name a PE that exits without shmem_finalize; set by gshmemrun") \
    X(DEVICE, int, "-1", RANGE(-1, INT_MAX), "CUDA device of this PE; -1: the device of the current context, else local rank modulo device count") \
    X(HEAP_INITIAL, size, "1G", RANGE(0, GSHMEMI_ENV_SIZE_MAX), "Bytes of symmetric heap mapped at init for the program's allocations (beyond the runtime's own), as NVSHMEM maps its heap at init: a first shmem_malloc up to this size maps no memory; 0: memory is mapped only as allocations need it. Capped by GSHMEM_SYMMETRIC_SIZE; skipped where a GPU has not this much free for each of its PEs and 1 GiB to spare") \
    X(HEAP_GROWTH, size, "32M", RANGE(1, GSHMEMI_ENV_SIZE_MAX), "Smallest step by which the physical backing of the heap grows (rounded to the allocation granularity)") \
    X(PEER_TIMEOUT, seconds, "60", RANGE(GSHMEMI_ENV_SECONDS_MIN, GSHMEMI_ENV_SECONDS_MAX), "Seconds a host-side wait on a same-host peer (heap growth handles) may take") \
    X(DEVICE_WAIT_TIMEOUT, seconds, "120", RANGE(GSHMEMI_ENV_SECONDS_MIN, GSHMEMI_ENV_SECONDS_MAX), "Seconds a device-side wait on another PE (barrier, wait_until) may spin before it reports and traps") \
    X(DEBUG_CHECKS, int, "0", RANGE(0, 1), "1: every device call checks its PE and symmetric address and traps with a report on a violation") \
    X(MAX_TEAMS, int, "32", RANGE(4, 64), "Teams that can exist at once, the predefined four included, and the two private teams of world reductions in two levels where a job has them (GSHMEM_COLL_LEVELS_MIN); each owns a pSync slot") \
    X(BARRIER_RADIX, int, "32", RANGE(2, 32), "Radix of the dissemination barrier/sync, clamped to the team size: 32 gives one round up to 32 PEs") \
    X(COLL_PROTO, proto, "auto", ANY, "Collective protocol: auto | ll | ll128 | simple | direct (forces one, for tests and tuning; ll128 and simple only where the team has their buffers)") \
    X(COLL_LL_MAX, size, "64K", ANY, "Largest block, in bytes, that collectives send by LL") \
    X(COLL_SIMPLE_MAX, size, "0", ANY, "Largest block, in bytes, that collectives of the world team send by SIMPLE (0: none; DIRECT is faster on NVLink hosts measured so far)") \
    X(COLL_LL128_MAX, size, "512K", ANY, "Largest block, in bytes, that collectives of the world team send by LL128 (0: none)") \
    X(COLL_ONESHOT_MAX, size, "1T", ANY, "Largest block, in bytes, of a direct reduction of 2 PEs done one-shot (each PE reads the other's whole source) instead of two-shot") \
    X(COLL_PUSH_MIN, size, "1M", ANY, "Smallest block, in bytes, that DIRECT fcollect and alltoall move by stores into the peers instead of loads from them") \
    X(COLL_PUSH_REDUCE_MIN, size, "16M", ANY, "Smallest block, in bytes, of an on-stream 2-PE reduction into a separate dest done two-shot by stores instead of one-shot by loads") \
    X(COLL_LEVELS_MIN, size, "2M", ANY, "Smallest result, in bytes, of a world-team reduction that a job spanning hosts runs in two levels (reduce-scatter and all-gather within each host and across hosts, so one host's share crosses between hosts) instead of one routed exchange among all PEs; for hosts of equal blocks of consecutive PEs that reach each other by loads and stores") \
    X(COLL_CTAS, int, "0", RANGE(0, GSHMEMI_COLL_SLICES), "Most CTAs (slices) of one on-stream DIRECT collective; 0 (auto): 128, but where PEs share this GPU half the SMs this PE may use (its MPS share) below 32 MiB moved a PE, 32 for a two-shot reduction of 4 MiB or more on 3 or more PEs and 64 for a relayed broadcast of 4 to 32 MiB; the job takes the least over its PEs") \
    X(COLL_PDL, int, "1", RANGE(0, 1), "1: on-stream collectives and barriers use programmatic dependent launch, so their launch overlaps the previous kernel's tail; 0: plain launches") \
    X(BOOTSTRAP_IFNAME, string, "", CHECK(ifname_text, "empty or an interface name: 1..15 printable characters, no space or '/'"), "Interface whose IPv4 address rank 0 of a unique-id job listens on (e.g. eth0); unset: the first one that is up. gshmemrun, whose PEs are all local, always uses 127.0.0.1") \
    X(BOOTSTRAP_ADDR, string, "", CHECK(ipv4_text, "empty or a dotted-quad IPv4 address (10.0.0.5)"), "IPv4 address rank 0 of a unique-id job listens on (instead of GSHMEM_BOOTSTRAP_IFNAME); gshmemrun always uses 127.0.0.1") \
    X(HOST_ID, string, "", CHECK(host_id_text, "up to 255 printable ASCII characters"), "Identity PEs are grouped by as one host (SHMEM_TEAM_SHARED, SHMEMX_TEAM_NODE, the choice of transport); unset: the host name. Lets one machine act as several hosts for testing") \
    X(DISABLE_P2P, int, "0", RANGE(0, 1), "1: no peer is reached by load/store; every other PE goes through the remote transport (tests, and hosts where P2P misbehaves)") \
    X(REMOTE_TRANSPORT, remote, "auto", ANY, "Transport of peers not reached by P2P: auto (the host proxy: copy engine within a machine, verbs between machines; IBGDA only when asked for, as it has not yet run on a NIC) | proxy | ibgda (kernels post mlx5 work requests; with GSHMEM_IBGDA_NIC=emulated or null, PEs of this machine only; hw: a PE that cannot open a ConnectX fails shmem_init, naming why) | none (such a peer fails shmem_init)") \
    X(PROXY_BACKEND, backend, "auto", ANY, "How the host proxy moves data: auto (copy for PEs of this physical host, verbs for others) | copy | verbs") \
    X(PROXY_FIFO_SLOTS, int, "4096", CHECK(power_of_two, "a power of two, 64..1048576"), "Requests the proxy FIFO of a PE holds (64 bytes each, in pinned host memory)") \
    X(PROXY_OWN_CONTEXT, int, "-1", RANGE(-1, 1), "The copy backend's CUDA work in a context of its own: 1 | 0 | -1 (auto: when the GPU runs under MPS, where work in the application's context can wait behind the kernels it queued)") \
    X(PROXY_INJECT_ERROR, int, "0", RANGE(0, INT_MAX), "Tests: the proxy fails its Nth request (1-based) as if the backend had, to show the reported error; 0: never") \
    X(IB_DEVICE, string, "", CHECK(ib_device_text, "empty, NAME or NAME:PORT (NAME: 1..63 of A-Z a-z 0-9 _ . -; PORT: 1..255)"), "RDMA device the verbs backend and IBGDA open, optionally with its port (mlx5_0 or mlx5_0:1); unset: the first device with an active port (IBGDA: the first mlx5 one)") \
    X(IBGDA_DOORBELL, doorbell, "auto", ANY, "Who rings an IBGDA QP's doorbell: gpu (the kernel writes the doorbell record and the NIC's doorbell page, mapped for the GPU) | cpu (the kernel advances a producer index, a host thread rings) | auto (gpu when the doorbell page maps for the GPU, else cpu; logged)") \
    X(IBGDA_NUM_RC_PER_PE, int, "2", CHECK(qps_per_peer, "a power of two, 1..64"), "Reliable-connected QPs IBGDA makes per remote peer, each with its own send CQ; a posting thread takes the one its CTA and warp pick, so posters spread over them") \
    X(IBGDA_INJECT_BAD_RKEY, int, "0", RANGE(0, INT_MAX), "Tests: the emulated IBGDA NIC fails the Nth work request (1-based) of each QP as if its rkey were unknown (an error CQE the device reports), 0: never") \
    X(IBGDA_NIC, nic, "hw", ANY, "What executes IBGDA work requests: hw (a ConnectX through mlx5 DEVX; never run on a NIC) | emulated (a host thread per PE decodes the WQEs and executes them on this host; a test vehicle) | null (puts and gets complete without moving their bytes; inline writes and atomics, so signals and barriers, still execute; times the GPU side of posting)")

/* C type of each TYPE column value. */
typedef size_t gshmemi_env_size_t;
typedef int gshmemi_env_int_t;
typedef double gshmemi_env_seconds_t;
typedef const char *gshmemi_env_string_t;
typedef int gshmemi_env_loglevel_t;  /* GSHMEMI_LOG_* */
typedef int gshmemi_env_bootstrap_t; /* GSHMEMI_BOOTSTRAP_* */
typedef int gshmemi_env_proto_t;     /* GSHMEMI_PROTO_* */
typedef int gshmemi_env_remote_t;    /* GSHMEMI_REMOTE_* */
typedef int gshmemi_env_backend_t;   /* GSHMEMI_BACKEND_* */
typedef int gshmemi_env_doorbell_t;  /* GSHMEMI_DOORBELL_* */
typedef int gshmemi_env_nic_t;       /* GSHMEMI_NIC_* */

enum { GSHMEMI_BOOTSTRAP_AUTO = 0, GSHMEMI_BOOTSTRAP_PMIX = 1, GSHMEMI_BOOTSTRAP_UID = 2 };
enum { GSHMEMI_REMOTE_AUTO = 0, GSHMEMI_REMOTE_PROXY = 1, GSHMEMI_REMOTE_IBGDA = 2, GSHMEMI_REMOTE_NONE = 3 };
enum { GSHMEMI_BACKEND_AUTO = 0, GSHMEMI_BACKEND_COPY = 1, GSHMEMI_BACKEND_VERBS = 2 };
enum { GSHMEMI_DOORBELL_AUTO = 0, GSHMEMI_DOORBELL_GPU = 1, GSHMEMI_DOORBELL_CPU = 2 };
enum { GSHMEMI_NIC_HW = 0, GSHMEMI_NIC_EMULATED = 1, GSHMEMI_NIC_NULL = 2 };

typedef struct {
#define GSHMEMI_ENV_FIELD(name, type, def, limit, doc) gshmemi_env_##type##_t name;
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_FIELD)
#undef GSHMEMI_ENV_FIELD
} gshmemi_env_t;

extern gshmemi_env_t gshmemi_env;

/* Fills env from get(name) (NULL = unset -> default). Every malformed or out-of-limit value logs
 * one error line (the variable, the value and what is accepted) and keeps its default; after them
 * one summary line names them all, and GSHMEMI_ERR_INVALID is returned. */
int gshmemi_env_load(const char *(*get)(const char *name), gshmemi_env_t *env);
/* Loads gshmemi_env from the process environment once; later calls return the first result. */
int gshmemi_env_init(void);
/* Prints every variable: name, type, default, current value, accepted values, doc. */
void gshmemi_env_print(FILE *out, const gshmemi_env_t *env);
/* The same rows as a markdown table (name, type, default, accepted values, doc): docs/environment.md
 * holds it as gshmem-info --markdown prints it. */
void gshmemi_env_print_markdown(FILE *out);
/* Parses "1G", "512M", "4096"; exposed for tests. */
int gshmemi_parse_size(const char *text, size_t *out);

/* GSHMEM_IB_DEVICE's shape, for the table's check and the transports that open the device: "" or
 * NAME or NAME:PORT, NAME 1..63 characters of A-Z a-z 0-9 _ . -, PORT decimal 1..255. Returns NULL
 * and fills name (GSHMEMI_ENV_IB_NAME_MAX bytes; "" for "" or NULL) and *port (0 when none is
 * given), else what is wrong (a phrase for a message naming the variable). Logs nothing. */
#define GSHMEMI_ENV_IB_NAME_MAX 64 /* IBV_SYSFS_NAME_MAX */
const char *gshmemi_env_ib_device_parse(const char *text, char *name, int *port);

#ifdef __cplusplus
}
#endif
#endif
