/* shmem_init / shmem_finalize: bootstrap, device choice, peer exchange, heap, transports. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../collectives/launch.h"
#include "../device/coll/policy.h"
#include "../transports/common/mapped.h"
#include "../transports/p2p/p2p.h"
#include "../transports/ibgda/ibgda.h"
#include "../transports/route.h"
#include "gshmem.h"
#include "state.h"

gshmemi_state_t gshmemi_state;

_Static_assert(sizeof(shmemx_uniqueid_t) == sizeof(gshmemi_uid_t), "uniqueid layout");

/* Every transport of the build, in the order their life cycles run (pick_transports chooses). */
static const gshmemi_transport_t *const transports[] = {&gshmemi_transport_p2p, &gshmemi_transport_proxy, &gshmemi_transport_ibgda};

int gshmemi_require_init_at(const char *subsys, const char *routine, const char *file, int line)
{
    if (gshmemi_state.initialized) return 1;
    gshmemi_log_before_init(subsys, routine, file, line);
    return 0;
}

int gshmemi_host_initialized(void) { return gshmemi_state.initialized; }
cudaStream_t gshmemi_runtime_stream(void) { return gshmemi_state.stream; }
const gshmemi_device_state_t *gshmemi_runtime_dstate(void) { return &gshmemi_state.dstate; }

int gshmemi_in_heap(const void *ptr, size_t len)
{
    const char *p = (const char *)ptr, *base = gshmemi_state.heap.my_base;
    return p >= base && p <= base + gshmemi_state.heap.region && len <= (size_t)(base + gshmemi_state.heap.region - p);
}

static void *coll_sym_alloc(size_t size) { return shmem_align(128, size); }

/* What collectives/ asks of the runtime (collectives/launch.h), bound at every shmem_init. */
static const gshmemi_coll_runtime_t coll_runtime = {
    .initialized = gshmemi_host_initialized,
    .stream = gshmemi_runtime_stream,
    .dstate = gshmemi_runtime_dstate,
    .team_member = gshmemi_team_member,
    .in_heap = gshmemi_in_heap,
    .sym_alloc = coll_sym_alloc,
    .sym_free = shmem_free,
};

/* ---- bootstrap choice ---- */

/* The uid bootstrap closes the listener it adopts once the job has formed (a unique id starts one
 * job). gshmemrun's listener must outlive that, or shmem_init after shmem_finalize could not form
 * the job again: the bootstrap gets a duplicate and the inherited fd stays open, close-on-exec,
 * for the next shmem_init. Joiners that connect between jobs wait in its backlog. */
static int adopt_launcher_listener(int fd, const gshmemi_uid_t *uid)
{
    int listening = 0, dup_fd, rc;
    socklen_t len = sizeof(listening);

    /* not an open listening socket: the bootstrap's own checks say why, naming this fd */
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
        return gshmemi_uid_adopt_listener(fd, uid);
    dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) {
        GSHMEMI_ERROR("init", "cannot duplicate GSHMEM_BOOTSTRAP_LISTEN_FD=%d: %s", fd, strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
        GSHMEMI_WARN("init", "cannot set FD_CLOEXEC on GSHMEM_BOOTSTRAP_LISTEN_FD=%d: %s", fd, strerror(errno));
    rc = gshmemi_uid_adopt_listener(dup_fd, uid);
    if (rc != GSHMEMI_OK) close(dup_fd);
    return rc;
}

static int bootstrap_open(unsigned flags, const shmemx_init_attr_t *attr, gshmemi_bootstrap_t **bs)
{
    const double tmo = gshmemi_env.BOOTSTRAP_TIMEOUT;
    int mode = gshmemi_env.BOOTSTRAP;

    if (flags == SHMEMX_INIT_WITH_UNIQUEID) {
        if (!attr) {
            GSHMEMI_ERROR("init", "shmemx_init_attr: attr is NULL with SHMEMX_INIT_WITH_UNIQUEID");
            return GSHMEMI_ERR_INVALID;
        }
        return gshmemi_bootstrap_uid_init((const gshmemi_uid_t *)&attr->uid, attr->rank, attr->nranks, tmo, bs);
    }
    if (flags == SHMEMX_INIT_WITH_PMIX) return gshmemi_bootstrap_pmix_init(tmo, bs);
    if (flags != SHMEMX_INIT_DEFAULT) {
        GSHMEMI_ERROR("init", "shmemx_init_attr: unknown flags %u", flags);
        return GSHMEMI_ERR_INVALID;
    }
    if (mode == GSHMEMI_BOOTSTRAP_AUTO)
        mode = gshmemi_env.BOOTSTRAP_UID[0] ? GSHMEMI_BOOTSTRAP_UID
               : gshmemi_bootstrap_pmix_detected() ? GSHMEMI_BOOTSTRAP_PMIX : -1;
    if (mode == GSHMEMI_BOOTSTRAP_PMIX) return gshmemi_bootstrap_pmix_init(tmo, bs);
    if (mode == GSHMEMI_BOOTSTRAP_UID) {
        gshmemi_uid_t uid;
        if (!gshmemi_env.BOOTSTRAP_UID[0] || gshmemi_env.RANK < 0 || gshmemi_env.NRANKS < 1) {
            GSHMEMI_ERROR("init", "GSHMEM_BOOTSTRAP=uid needs GSHMEM_BOOTSTRAP_UID, GSHMEM_RANK and GSHMEM_NRANKS (start the PEs with gshmemrun, or use shmemx_init_attr)");
            return GSHMEMI_ERR_INVALID;
        }
        GSHMEMI_CHECK(gshmemi_uid_from_string(gshmemi_env.BOOTSTRAP_UID, &uid));
        if (gshmemi_env.BOOTSTRAP_LISTEN_FD >= 0) GSHMEMI_CHECK(adopt_launcher_listener(gshmemi_env.BOOTSTRAP_LISTEN_FD, &uid));
        return gshmemi_bootstrap_uid_init(&uid, gshmemi_env.RANK, gshmemi_env.NRANKS, tmo, bs);
    }
    return gshmemi_bootstrap_single_init(bs);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
    return h;
}

/* The physical machine: host name and boot id (a container may share the host name). */
static uint64_t machine_hash(void)
{
    char buf[320] = {0};
    int fd;

    gethostname(buf, 255);
    fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf + 256, 60);
        (void)n;
        close(fd);
    }
    return fnv1a(1469598103934665603ull, buf, sizeof(buf));
}

/* The host as gshmem groups PEs: GSHMEM_HOST_ID when set, else the machine. */
static uint64_t host_hash(uint64_t machine)
{
    const char *id = gshmemi_env.HOST_ID;
    if (!id || !*id) return machine;
    return fnv1a(fnv1a(1469598103934665603ull, "GSHMEM_HOST_ID=", 15), id, strlen(id));
}

static int select_device(int local_index)
{
    CUcontext cur = NULL;
    int ndev = 0;

    GSHMEMI_CUDACHECK(cudaGetDeviceCount(&ndev));
    if (gshmemi_env.DEVICE >= 0) {
        if (gshmemi_env.DEVICE >= ndev) {
            GSHMEMI_ERROR("init", "GSHMEM_DEVICE=%d but this process sees %d GPUs", gshmemi_env.DEVICE, ndev);
            return GSHMEMI_ERR_INVALID;
        }
        gshmemi_state.device = gshmemi_env.DEVICE;
    } else if (gshmemi_cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur) {
        CUdevice d;
        GSHMEMI_CUCHECK(cuCtxGetDevice(&d));
        gshmemi_state.device = (int)d;
    } else {
        gshmemi_state.device = local_index % ndev;
    }
    GSHMEMI_CUCHECK(cuDeviceGet(&gshmemi_state.cudev, gshmemi_state.device));
    GSHMEMI_CUCHECK(cuDevicePrimaryCtxRetain(&gshmemi_state.ctx, gshmemi_state.cudev));
    GSHMEMI_CUCHECK(cuCtxSetCurrent(gshmemi_state.ctx));
    GSHMEMI_CUDACHECK(cudaSetDevice(gshmemi_state.device));
    return GSHMEMI_OK;
}

/* Two groupings: PEs of one host (GSHMEM_HOST_ID or the machine: teams SHARED and NODE, and P2P
 * stays inside one) and PEs of one physical machine (the heap reservation's slots, the device
 * choice, and whose heaps can be mapped here). */
static int exchange_peers(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    gshmemi_peer_info_t *me;

    st->peers = calloc((size_t)st->n_pes, sizeof(*st->peers));
    st->local_pe = calloc((size_t)st->n_pes, sizeof(int));
    if (!st->peers || !st->local_pe) return GSHMEMI_ERR_NOMEM;
    me = &st->peers[st->my_pe];
    me->phys_hash = machine_hash();
    me->host_hash = host_hash(me->phys_hash);
    me->pid = (int32_t)getpid();
    GSHMEMI_CHECK(st->bs->allgather(st->bs, st->peers, sizeof(*st->peers)));
    st->local_size = 0;
    st->phys_size = 0;
    for (int pe = 0; pe < st->n_pes; pe++) {
        if (st->peers[pe].phys_hash == me->phys_hash) {
            if (pe == st->my_pe) st->phys_local = st->phys_size;
            st->phys_size++;
        }
        if (st->peers[pe].host_hash != me->host_hash) continue;
        if (pe == st->my_pe) st->my_local = st->local_size;
        st->local_pe[st->local_size++] = pe;
    }
    GSHMEMI_CHECK(select_device(st->phys_local));
    me->local_index = st->phys_local;
    GSHMEMI_CUCHECK(cuDeviceGetUuid(&me->uuid, st->cudev));
    {
        size_t free_b = 0, total_b = 0;
        GSHMEMI_CUDACHECK(cudaMemGetInfo(&free_b, &total_b));
        me->gpu_mem = total_b;
        me->gpu_free = free_b;
    }
    return st->bs->allgather(st->bs, st->peers, sizeof(*st->peers));
}

/* The route of every peer (transports/route.c: P2P where it can, else the remote transport
 * GSHMEM_REMOTE_TRANSPORT names), logged per peer at info; an unreachable peer fails init. */
static int pick_transports(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    const gshmemi_route_cfg_t cfg = {gshmemi_env.DISABLE_P2P, gshmemi_env.REMOTE_TRANSPORT, gshmemi_env.PROXY_BACKEND,
                                     gshmemi_env.IBGDA_NIC};
    gshmemi_route_peer_t *rp = calloc((size_t)st->n_pes, sizeof(*rp));
    const char **access_why = calloc((size_t)st->n_pes, sizeof(*access_why));
    int rc = rp && access_why ? GSHMEMI_OK : GSHMEMI_ERR_NOMEM;

    for (int pe = 0; pe < st->n_pes && rc == GSHMEMI_OK; pe++) {
        rp[pe].host = st->peers[pe].host_hash;
        rp[pe].machine = st->peers[pe].phys_hash;
        access_why[pe] = "";
        rc = gshmemi_p2p_gpu_access(&st->tctx, pe, &rp[pe].gpu_access, &access_why[pe]);
    }
    /* IBGDA on a ConnectX: every PE probes its device and all learn every outcome, so the routes
     * agree on both ends of each pair (the transport's setup, at init, can still fail: then
     * shmem_init fails, logged) */
    if (rc == GSHMEMI_OK && gshmemi_route_wants_ibgda_hw(rp, st->n_pes, &cfg)) {
        int *hw = calloc((size_t)st->n_pes, sizeof(int));
        if (!hw) rc = GSHMEMI_ERR_NOMEM;
        if (rc == GSHMEMI_OK) {
            hw[st->my_pe] = gshmemi_ibgda_hw_probe(cfg.remote == GSHMEMI_REMOTE_IBGDA);
            rc = st->bs->allgather(st->bs, hw, sizeof(int));
        }
        for (int pe = 0; pe < st->n_pes && rc == GSHMEMI_OK; pe++) rp[pe].ibgda_hw = hw[pe];
        free(hw);
        st->tctx.job_uses_ibgda_hw = rc == GSHMEMI_OK && gshmemi_route_job_uses_ibgda_hw(rp, st->n_pes, &cfg);
    }
    for (int pe = 0; pe < st->n_pes && rc == GSHMEMI_OK; pe++) {
        const char *why = "";
        st->route[pe] = gshmemi_route_pick(rp, st->n_pes, st->my_pe, pe, &cfg, &why);
        if (st->route[pe] == GSHMEMI_ROUTE_NONE) {
            GSHMEMI_ERROR("init", "no transport reaches PE %d: %s (GPU: %s)", pe, why, access_why[pe]);
            rc = GSHMEMI_ERR_UNSUPPORTED;
            break;
        }
        st->pe_transport[pe] = st->route[pe] == GSHMEMI_ROUTE_P2P     ? &gshmemi_transport_p2p
                               : st->route[pe] == GSHMEMI_ROUTE_IBGDA ? &gshmemi_transport_ibgda
                                                                      : &gshmemi_transport_proxy;
        if (pe != st->my_pe) GSHMEMI_INFO("init", "PE %d: %s (GPU: %s)", pe, why, access_why[pe]);
    }
    if (rc == GSHMEMI_OK) {
        st->tctx.job_uses_verbs = gshmemi_route_job_uses_verbs(rp, st->n_pes, &cfg);
        st->job_has_remote = gshmemi_route_job_has_remote(rp, st->n_pes, &cfg);
    }
    free(rp);
    free(access_why);
    return rc;
}

/* The most bytes of symmetric heap a PE may have: GSHMEM_SYMMETRIC_SIZE (or NVSHMEM's) when set,
 * else the memory of the smallest GPU of the job, so that what runs under NVSHMEM's defaults (a
 * heap that grows up to the GPU's memory) runs here. Only address space is reserved at init;
 * memory is mapped as shmem_malloc needs it (GSHMEM_HEAP_GROWTH). IBGDA on a ConnectX maps the
 * whole heap at the first allocation, so there the unset size is 1 GiB. The same on every PE. */
#define HEAP_SIZE_BOUNDED (1ull << 30) /* where the GPU's memory cannot be the bound */
static size_t heap_size(void)
{
    const gshmemi_state_t *st = &gshmemi_state;
    if (gshmemi_env.SYMMETRIC_SIZE) return gshmemi_env.SYMMETRIC_SIZE;
    if (st->tctx.job_uses_ibgda_hw) {
        if (st->my_pe == 0)
            GSHMEMI_INFO("heap", "symmetric heap: %llu bytes a PE (IBGDA on a ConnectX maps the heap whole; GSHMEM_SYMMETRIC_SIZE sets it)",
                         (unsigned long long)HEAP_SIZE_BOUNDED);
        return HEAP_SIZE_BOUNDED;
    }
    uint64_t least = st->peers[0].gpu_mem;
    for (int pe = 1; pe < st->n_pes; pe++)
        if (st->peers[pe].gpu_mem < least) least = st->peers[pe].gpu_mem;
    if (least == 0) least = HEAP_SIZE_BOUNDED; /* a GPU that reports no memory: never seen; stay usable */
    if (st->my_pe == 0)
        GSHMEMI_INFO("heap", "symmetric heap: up to %llu bytes a PE (the smallest GPU's memory; GSHMEM_SYMMETRIC_SIZE sets it)",
                     (unsigned long long)least);
    return (size_t)least;
}

/* How many PEs of the job run on PE pe's GPU (the same machine and GPU UUID), pe included. */
static int pes_on_gpu_of(int pe)
{
    const gshmemi_state_t *st = &gshmemi_state;
    const gshmemi_peer_info_t *p = &st->peers[pe];
    int n = 0;
    for (int q = 0; q < st->n_pes; q++)
        n += st->peers[q].phys_hash == p->phys_hash && !memcmp(&st->peers[q].uuid, &p->uuid, sizeof(CUuuid));
    return n;
}

/* The initial heap: GSHMEM_HEAP_INITIAL bytes for the program's allocations, beyond what the
 * runtime took, mapped now on every PE (with the peers' chunks), as NVSHMEM maps its heap at init:
 * a program's first shmem_malloc up to that size then maps nothing. (The first mapping of a large
 * peer chunk costs some 9 ms in the driver, serialized across the processes of a machine; here
 * init pays it instead of the first allocation.) Collective: every PE takes the same decision
 * from the peers' data, and skips it, saying so, where a GPU has not that much free for each PE
 * it holds with 1 GiB to spare. */
#define HEAP_INITIAL_SPARE (1ull << 30)
static int back_initial_heap(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    const size_t used = gshmemi_alloc_high_water(st->heap.alloc);
    size_t want = gshmemi_env.HEAP_INITIAL;

    if (want > st->heap.region - used) want = st->heap.region - used;
    if (want == 0) return GSHMEMI_OK;
    for (int pe = 0; pe < st->n_pes; pe++) {
        const uint64_t sharers = (uint64_t)pes_on_gpu_of(pe);
        if (st->peers[pe].gpu_free < sharers * want + HEAP_INITIAL_SPARE) {
            if (st->my_pe == 0)
                GSHMEMI_INFO("heap", "no initial heap: PE %d's GPU has %llu bytes free for %llu PEs of %zu bytes (GSHMEM_HEAP_INITIAL); "
                                     "the heap is mapped as allocations need it",
                             pe, (unsigned long long)st->peers[pe].gpu_free, (unsigned long long)sharers, want);
            return GSHMEMI_OK;
        }
    }
    return gshmemi_heap_ensure_backed(&st->heap, used + want);
}

/* Heap growth subscription of one transport: hands it the new chunk. */
static int transport_on_grow(void *arg, const gshmemi_heap_chunk_t *chunk)
{
    const gshmemi_transport_t *tp = (const gshmemi_transport_t *)arg;
    return tp->register_chunk(&gshmemi_state.tctx, chunk);
}

/* Every transport of the table, on every PE: init, the blob allgather, connect, and the heap
 * subscription. The allgather also orders every PE's init before any peer's first growth. */
static int start_transports(void)
{
    gshmemi_state_t *st = &gshmemi_state;

    for (size_t t = 0; t < sizeof(transports) / sizeof(transports[0]); t++) {
        const gshmemi_transport_t *tp = transports[t];
        char *blobs = calloc((size_t)st->n_pes, tp->blob_size ? tp->blob_size : 1);
        int rc;

        if (!blobs) return GSHMEMI_ERR_NOMEM;
        st->transports_up = (int)t + 1;
        rc = tp->init(&st->tctx, blobs + (size_t)st->my_pe * tp->blob_size);
        if (rc == GSHMEMI_OK && tp->blob_size) rc = st->bs->allgather(st->bs, blobs, tp->blob_size);
        if (rc == GSHMEMI_OK) rc = tp->connect(&st->tctx, blobs);
        free(blobs);
        GSHMEMI_CHECK(rc);
        if (tp->register_chunk) GSHMEMI_CHECK(gshmemi_heap_subscribe(&st->heap, transport_on_grow, (void *)tp));
    }
    return GSHMEMI_OK;
}

static int wants_preload(void);
static int provide_remote_stack(void);

static int setup_heap_and_transports(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    gshmemi_transport_ctx_t *ctx = &st->tctx;
    gshmemi_heap_config_t cfg;

    st->pe_transport = calloc((size_t)st->n_pes, sizeof(*st->pe_transport));
    st->peer_base = calloc((size_t)st->n_pes, sizeof(char *));
    st->host_view = calloc((size_t)st->n_pes, sizeof(char *));
    st->route = calloc((size_t)st->n_pes, sizeof(int));
    if (!st->pe_transport || !st->peer_base || !st->host_view || !st->route) return GSHMEMI_ERR_NOMEM;
    ctx->my_pe = st->my_pe;
    ctx->n_pes = st->n_pes;
    ctx->my_local = st->phys_local;
    ctx->local_size = st->phys_size;
    ctx->host_view = st->host_view;
    ctx->route = st->route;
    ctx->dev_proxy = &st->dstate.proxy;
    ctx->dev_ibgda = &st->dstate.ibgda;
    ctx->dev_ibgda_nqp = &st->dstate.ibgda_nqp;
    ctx->device = st->device;
    ctx->peers = st->peers;
    ctx->pe_transport = st->pe_transport;
    ctx->peer_base = st->peer_base;
    ctx->bs = st->bs;
    ctx->heap = &st->heap;
    ctx->cudev = st->cudev;
    ctx->peer_timeout = gshmemi_env.PEER_TIMEOUT;
    ctx->wait_timeout_ns = (uint64_t)(gshmemi_env.DEVICE_WAIT_TIMEOUT * 1e9); /* as dstate's (build_device_state) */
    GSHMEMI_CHECK(pick_transports());
    GSHMEMI_CHECK(provide_remote_stack());
    /* before the transports open: the proxy's and the emulated NIC's kernels are loaded there */
    gshmemi_modules_set_preload(wants_preload());

    memset(&cfg, 0, sizeof(cfg));
    cfg.device = st->cudev;
    cfg.heap_size = heap_size();
    cfg.growth_min = gshmemi_env.HEAP_GROWTH;
    cfg.local_size = st->phys_size;
    cfg.my_local = st->phys_local;
    GSHMEMI_CHECK(gshmemi_heap_init(&st->heap, &cfg));
    return start_transports();
}

static int build_device_state(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    gshmemi_device_state_t *ds = &st->dstate;

    GSHMEMI_CUDACHECK(cudaMalloc((void **)&st->d_peer_base, (size_t)st->n_pes * sizeof(char *)));
    GSHMEMI_CUDACHECK(cudaMemcpy(st->d_peer_base, st->peer_base, (size_t)st->n_pes * sizeof(char *), cudaMemcpyHostToDevice));
    ds->initialized = 1;
    ds->my_pe = st->my_pe;
    ds->n_pes = st->n_pes;
    ds->heap_base = st->heap.my_base;
    ds->heap_size = st->heap.region;
    ds->peer_base = st->d_peer_base;
    ds->wait_timeout_ns = (uint64_t)(gshmemi_env.DEVICE_WAIT_TIMEOUT * 1e9);
    ds->debug_checks = gshmemi_env.DEBUG_CHECKS != 0;
    ds->coll_proto = gshmemi_env.COLL_PROTO;
    ds->coll_ll_max = gshmemi_env.COLL_LL_MAX;
    ds->coll_simple_max = gshmemi_env.COLL_SIMPLE_MAX;
    ds->coll_ll128_max = gshmemi_env.COLL_LL128_MAX;
    ds->coll_oneshot_max = gshmemi_env.COLL_ONESHOT_MAX;
    ds->coll_push_min = gshmemi_env.COLL_PUSH_MIN;
    ds->coll_push_reduce_min = gshmemi_env.COLL_PUSH_REDUCE_MIN;
    for (int pe = 0; pe < st->n_pes && pe < GSHMEMI_CONST_PEERS; pe++) ds->peer_base_c[pe] = st->peer_base[pe];
    return GSHMEMI_OK;
}

/* Releases whatever init made, in reverse order; safe on a partial init (every field is zero
 * until its step ran). Nobody may touch a peer's heap once this starts unmapping. */
static void release_all(void)
{
    gshmemi_state_t *st = &gshmemi_state;

    if (st->max_teams) gshmemi_teams_fini();
    for (int t = st->transports_up - 1; t >= 0; t--) transports[t]->finalize(&st->tctx);
    gshmemi_heap_fini(&st->heap);
    if (st->d_peer_base) cudaFree(st->d_peer_base);
    if (st->stream) cudaStreamDestroy(st->stream);
    if (st->bs) st->bs->finalize(st->bs);
    /* Only modules that were given the state (initialized is set just before that): a failed early
     * init makes no CUDA call here. */
    if (st->initialized) gshmemi_modules_clear(st->device);
    if (st->ctx) gshmemi_cu.cuDevicePrimaryCtxRelease(st->cudev);
    free(st->peers);
    free(st->local_pe);
    free(st->pe_transport);
    free(st->peer_base);
    free(st->host_view);
    free(st->route);
    memset(st, 0, sizeof(*st));
    gshmemi_log_pe = -1;
}

/* How many CTAs an on-stream DIRECT collective may take: GSHMEM_COLL_CTAS, else the rule of
 * coll/policy.h for the SMs this PE may use and the PEs on its GPU; the least over the job, since
 * the members of a collective must run the same slices. */
static int agree_coll_ctas(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    int sms = 0, on_gpu = pes_on_gpu_of(st->my_pe), rc;
    gshmemi_direct_ctas_t least = {GSHMEMI_COLL_SLICES, GSHMEMI_COLL_SLICES};
    gshmemi_direct_ctas_t *all = calloc((size_t)st->n_pes, sizeof(*all));

    if (!all) return GSHMEMI_ERR_NOMEM;
    CUresult res = gshmemi_cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, st->cudev);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_ERROR("init", "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) failed: %s", gshmemi_cu_errstr(res));
        free(all);
        return GSHMEMI_ERR_CUDA;
    }
    if (gshmemi_env.COLL_CTAS > 0) all[st->my_pe].most = all[st->my_pe].bulk = gshmemi_env.COLL_CTAS;
    else all[st->my_pe] = gshmemi_direct_ctas_auto(sms, on_gpu);
    rc = st->bs->allgather(st->bs, all, sizeof(*all));
    for (int pe = 0; pe < st->n_pes && rc == GSHMEMI_OK; pe++) {
        if (all[pe].most < least.most) least.most = all[pe].most;
        if (all[pe].bulk < least.bulk) least.bulk = all[pe].bulk;
    }
    if (rc == GSHMEMI_OK) {
        gshmemi_coll_set_ctas(&least);
        GSHMEMI_INFO("init", "on-stream DIRECT collectives: at most %d CTAs, %d from %zu MiB a PE (%s; here %d SMs, %d PEs on this GPU)",
                     least.most, least.bulk, GSHMEMI_DIRECT_BULK_BYTES >> 20,
                     gshmemi_env.COLL_CTAS > 0 ? "GSHMEM_COLL_CTAS" : "auto, the least over the job", sms, on_gpu);
    }
    free(all);
    return rc;
}

/* Whether every kernel is loaded at init (runtime/modules.c says why): CUDA loads lazily and a
 * host thread of gshmem (the proxy, the emulated NIC) serves a peer of this PE. */
static int wants_preload(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    CUmoduleLoadingMode mode = CU_MODULE_LAZY_LOADING;
    int remote = 0;

    for (int pe = 0; pe < st->n_pes; pe++)
        if (st->route[pe] != GSHMEMI_ROUTE_P2P) remote = 1; /* this PE's own route is P2P */
    if (!remote) return 0;
    if (gshmemi_cu.cuModuleGetLoadingMode && gshmemi_cu.cuModuleGetLoadingMode(&mode) != CUDA_SUCCESS) mode = CU_MODULE_LAZY_LOADING;
    return mode != CU_MODULE_EAGER_LOADING;
}

/* The device stack of the remote path (device/layout.h: GSHMEMI_REMOTE_STACK_*): kernels reach it
 * through far calls whose stack ptxas cannot size, so where a peer of this PE is remote the
 * context's per-thread stack limit is raised to what the path's transport needs (IBGDA's chain is
 * the deeper). A larger limit, the user's, is kept. The driver reserves the stack for every thread
 * the GPU can hold, so a job whose peers are all P2P keeps CUDA's default. */
static int provide_remote_stack(void)
{
    gshmemi_state_t *st = &gshmemi_state;
    size_t need = 0, have = 0;

    for (int pe = 0; pe < st->n_pes; pe++) {
        if (st->route[pe] == GSHMEMI_ROUTE_IBGDA) need = GSHMEMI_REMOTE_STACK_IBGDA;
        else if (st->route[pe] != GSHMEMI_ROUTE_P2P && need < GSHMEMI_REMOTE_STACK_PROXY) need = GSHMEMI_REMOTE_STACK_PROXY;
    }
    if (!need) return GSHMEMI_OK;
    GSHMEMI_CUCHECK(cuCtxGetLimit(&have, CU_LIMIT_STACK_SIZE));
    if (have >= need) return GSHMEMI_OK;
    GSHMEMI_CUCHECK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, need));
    GSHMEMI_INFO("init", "a peer is remote: the device stack is %zu bytes a thread (was %zu) for the remote path's calls", need, have);
    return GSHMEMI_OK;
}

/* The P2P transport's host-launched kernels (the others' are loaded as their transports open),
 * then one line on what was loaded. */
static void preload_report(void)
{
    int kernels = 0, modules;

    gshmemi_mapped_kernels_load();
    modules = gshmemi_modules_preloaded(&kernels);
    if (modules)
        GSHMEMI_INFO("init", "CUDA loads kernels lazily and a host thread serves remote peers: %d kernels of %d modules loaded now",
                     kernels, modules);
}

static int init_impl(unsigned flags, shmemx_init_attr_t *attr)
{
    gshmemi_state_t *st = &gshmemi_state;

    if (st->initialized) return GSHMEMI_OK;
    gshmemi_coll_bind(&coll_runtime);
    GSHMEMI_CHECK(gshmemi_modules_check()); /* before anything is opened: a refusal leaves nothing behind */
    GSHMEMI_CHECK(gshmemi_env_init());
    /* From here the other PEs may wait for this one: gshmemrun names it if it exits before finalize. */
    gshmemi_launcher_note(GSHMEMI_PE_IN_JOB);
    GSHMEMI_CHECK(bootstrap_open(flags, attr, &st->bs));
    st->my_pe = st->bs->rank;
    st->n_pes = st->bs->nranks;
    gshmemi_log_pe = st->my_pe;
    GSHMEMI_CHECK(gshmemi_driver_load());
    GSHMEMI_CHECK(exchange_peers());
    GSHMEMI_CHECK(setup_heap_and_transports());
    GSHMEMI_CHECK(agree_coll_ctas());
    GSHMEMI_CUDACHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    GSHMEMI_CHECK(gshmemi_teams_init());
    GSHMEMI_CHECK(back_initial_heap());
    GSHMEMI_CHECK(build_device_state());
    st->initialized = 1;
    GSHMEMI_CHECK(gshmemi_modules_update());
    preload_report();
    GSHMEMI_CHECK(st->bs->barrier(st->bs));
    /* One barrier through the device path, once every PE's state is in place (the bootstrap
     * barrier above): the first launch of the library's kernels (loading them, the context's
     * first launch) costs some 3 ms, which init pays here rather than the program's first
     * collective call (a shmem_malloc's closing barrier, say). */
    if (gshmemi_host_barrier(SHMEM_TEAM_WORLD, "shmem_init") != 0) return GSHMEMI_ERR_CUDA;
    GSHMEMI_INFO("init", "PE %d of %d, local %d of %d, GPU %d", st->my_pe, st->n_pes, st->my_local, st->local_size, st->device);
    return GSHMEMI_OK;
}

int shmemx_init_attr(unsigned flags, shmemx_init_attr_t *attr)
{
    int rc;

    if (gshmemi_state.initialized) return GSHMEMI_OK;
    rc = init_impl(flags, attr);
    if (rc != GSHMEMI_OK) {
        GSHMEMI_ERROR("init", "shmem initialization failed: %s", gshmemi_strerror(rc));
        /* A later shmem_init starts from nothing, and a failed one leaks no fd, thread or memory. */
        release_all();
        gshmemi_launcher_note(GSHMEMI_PE_OUTSIDE);
    }
    return rc;
}

void shmem_init(void)
{
    if (shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL) != GSHMEMI_OK) exit(EXIT_FAILURE);
}

/* The host side keeps no locks, and the PE's CUDA device is current only in the thread that
 * initialized: one thread calls gshmem (FUNNELED), whatever was asked. */
int shmem_init_thread(int requested, int *provided)
{
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        GSHMEMI_ERROR("init", "shmem_init_thread: requested %d is not a SHMEM_THREAD_* level", requested);
        return -1;
    }
    if (shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL) != GSHMEMI_OK) return -1;
    if (provided) *provided = SHMEM_THREAD_FUNNELED;
    return 0;
}

void shmem_query_thread(int *provided)
{
    if (!provided) GSHMEMI_ERROR("init", "shmem_query_thread: provided is NULL");
    else if (gshmemi_require_init("init", "shmem_query_thread")) *provided = SHMEM_THREAD_FUNNELED;
}

int shmemx_get_uniqueid(shmemx_uniqueid_t *uid)
{
    if (!uid) {
        GSHMEMI_ERROR("init", "shmemx_get_uniqueid: uid is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    GSHMEMI_CHECK(gshmemi_env_init());
    return gshmemi_uid_create((gshmemi_uid_t *)uid);
}

int shmemx_set_attr_uniqueid_args(int rank, int nranks, const shmemx_uniqueid_t *uid, shmemx_init_attr_t *attr)
{
    if (!uid || !attr || nranks < 1 || rank < 0 || rank >= nranks) {
        GSHMEMI_ERROR("init", "shmemx_set_attr_uniqueid_args: bad arguments (rank %d, nranks %d, uid %p, attr %p)", rank, nranks,
                      (const void *)uid, (void *)attr);
        return GSHMEMI_ERR_INVALID;
    }
    memset(attr, 0, sizeof(*attr));
    attr->version = SHMEMX_INIT_ATTR_VERSION;
    attr->rank = rank;
    attr->nranks = nranks;
    attr->uid = *uid;
    return GSHMEMI_OK;
}

/* Every transport's requests posted by device code complete (the proxy's); errors logged. */
int gshmemi_transports_quiet(const char *routine)
{
    int rc = GSHMEMI_OK;
    for (int t = 0; t < gshmemi_state.transports_up; t++) {
        if (!transports[t]->quiet) continue;
        int r = transports[t]->quiet(&gshmemi_state.tctx);
        if (r != GSHMEMI_OK) {
            GSHMEMI_ERROR("api", "%s: the %s transport's requests did not complete", routine, transports[t]->name);
            rc = r;
        }
    }
    return rc;
}

void shmem_finalize(void)
{
    gshmemi_state_t *st = &gshmemi_state;

    if (!st->initialized) return;
    /* Before the final barrier: no PE can leave it, and exit, before every PE has said so. */
    gshmemi_launcher_note(GSHMEMI_PE_FINALIZED);
    /* Nobody may touch a peer's heap once it starts unmapping: kernels done, and what they
     * posted to the proxy delivered. */
    cudaDeviceSynchronize();
    (void)gshmemi_transports_quiet("shmem_finalize");
    if (st->bs->barrier(st->bs) != GSHMEMI_OK) GSHMEMI_WARN("finalize", "the final barrier failed; tearing down anyway");
    release_all();
}

void shmem_global_exit(int status)
{
    GSHMEMI_WARN("exit", "shmem_global_exit(%d)", status);
    gshmemi_launcher_note(GSHMEMI_PE_GLOBAL_EXIT);
    fflush(NULL);
    /* gshmemrun and PMIx launchers stop the other PEs when one exits with an error; gshmemrun, told
     * by the note above, for status 0 too. */
    _exit(status);
}

void shmem_info_get_version(int *major, int *minor)
{
    if (major) *major = SHMEM_MAJOR_VERSION;
    if (minor) *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    if (name) snprintf(name, SHMEM_MAX_NAME_LEN, "%s %d.%d.%d", SHMEM_VENDOR_STRING, GSHMEM_VERSION_MAJOR,
                       GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
}
