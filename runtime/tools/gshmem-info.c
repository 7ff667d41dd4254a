/* gshmem-info: what a user checks first on a new machine, then every environment variable with its
 * default, value, accepted values and doc. Exits 1 when a variable holds a bad value (each is named
 * on stderr, then a summary), 2 on a bad argument.
 *   gshmem-info [--pes N [--hosts ID,ID,...] [--assume-peer-access]]
 *     the version; the GPUs and their P2P matrix (or why there is none); the RDMA devices, their
 *     ports, whether GPU memory registers by dmabuf and whether IBGDA's DEVX opens a device; with
 *     --pes, the transport each pair of N PEs on this machine would use under the current settings
 *     (the runtime's own rule, transports/route.c): PE i has GSHMEM_DEVICE's GPU or GPU i modulo
 *     the count, and the host id of --hosts (one per PE) or GSHMEM_HOST_ID; --assume-peer-access
 *     takes every GPU as reaching every other (a machine with NVLink between all, or no GPU here)
 *   gshmem-info --markdown   the variables as the markdown table of docs/environment.md
 *   gshmem-info --api [DIR]  every public routine as the markdown of docs/api-reference.md, the
 *     header lines read from DIR (the folder holding gshmem.h; by default this source tree's
 *     include/, else the installed one); exits 1 naming what it cannot find
 *   gshmem-info --rdma       the RDMA part alone
 *   gshmem-info --version    the version alone */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gshmem/types.h"
#include "runtime/tools/api_ref.h"
#include "runtime/base/cudawrap.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "transports/common/ibv_lib.h"
#include "transports/ibgda/setup.h"
#include "transports/route.h"

#define MAX_PES 4096 /* of --pes: the table has a line per pair */

static const char *port_state(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "NOP";
    }
}

/* Each device with each port's state, link layer and MTU; "none" with the reason. 0 when
 * libibverbs loaded (with or without devices), 1 when it did not. */
static int print_rdma(void)
{
    char why[512];
    struct ibv_device **list;
    int n = 0;

    printf("RDMA devices (libibverbs; the proxy's verbs backend and IBGDA use them):\n");
    if (gshmemi_ibv_load_why("RDMA device", why, sizeof(why)) != GSHMEMI_OK) {
        printf("  none: %s\n", why);
        return 1;
    }
    printf("  dmabuf registration of GPU memory: %s\n",
           gshmemi_ibv.reg_dmabuf_mr ? "this libibverbs has ibv_reg_dmabuf_mr (the kernel and the NIC's driver must support it too)"
                                     : "not in this libibverbs (rdma-core 34 or newer has it); a peer-memory module must register GPU memory");
    {
        char dev[GSHMEMI_IBV_NAME_MAX + 16], why2[2048];
        if (gshmemi_ibgda_probe_why(dev, sizeof(dev), why2, sizeof(why2)) > 0)
            printf("  DEVX (IBGDA on a ConnectX): %s opens with DEVX\n", dev);
        else
            printf("  DEVX (IBGDA on a ConnectX): not usable: %s\n", why2);
    }
    list = gshmemi_ibv.get_device_list(&n);
    if (!list || n == 0) {
        printf("  no device: libibverbs finds none (%s)\n", list ? "an empty list" : strerror(errno));
        if (list) gshmemi_ibv.free_device_list(list);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const char *name = gshmemi_ibv.get_device_name(list[i]);
        struct ibv_context *c = gshmemi_ibv.open_device(list[i]);
        struct ibv_device_attr da;
        if (!c) {
            printf("  %s: cannot be opened (%s)\n", name, strerror(errno));
            continue;
        }
        if (gshmemi_ibv.query_device(c, &da) != 0) {
            printf("  %s: ibv_query_device failed\n", name);
            gshmemi_ibv.close_device(c);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt; p++) {
            struct ibv_port_attr pa;
            if (gshmemi_ibv_query_port(c, (uint8_t)p, &pa) != 0) {
                printf("  %s port %d: ibv_query_port failed\n", name, p);
                continue;
            }
            printf("  %s port %d: %s, %s, MTU %d\n", name, p, port_state(pa.state),
                   pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand", 128 << pa.active_mtu);
        }
        gshmemi_ibv.close_device(c);
    }
    gshmemi_ibv.free_device_list(list);
    return 0;
}

/* The GPUs this process sees: *n_gpus of them, and in access[a * n + b] whether a reaches b's
 * memory (1 on the diagonal). Prints them with the P2P matrix, or why there is none. */
static int *print_gpus(int *n_gpus)
{
    int n = 0, *access;
    cudaError_t err = cudaGetDeviceCount(&n);

    *n_gpus = 0;
    printf("\nGPUs:\n");
    if (err != cudaSuccess || n == 0) {
        printf("  none: %s; gshmem needs an NVIDIA GPU and its driver (libcuda.so.1), the rest below holds without\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "the CUDA driver reports no GPU");
        return NULL;
    }
    if (gshmemi_driver_load() != GSHMEMI_OK) return NULL; /* logged, naming the entry point */
    access = calloc((size_t)n * (size_t)n, sizeof(int));
    if (!access) {
        printf("  out of host memory for %d GPUs\n", n);
        return NULL;
    }
    for (int d = 0; d < n; d++) {
        struct cudaDeviceProp prop;
        err = cudaGetDeviceProperties(&prop, d);
        if (err != cudaSuccess) printf("  GPU %d: cudaGetDeviceProperties failed: %s\n", d, cudaGetErrorString(err));
        else printf("  GPU %d: %s, sm_%d%d, %.0f GiB, PCI %04x:%02x:%02x\n", d, prop.name, prop.major, prop.minor,
                    (double)prop.totalGlobalMem / (1 << 30), prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    }
    printf("  P2P (row reaches column: yes with its performance rank, and + where atomics are native; -: no):\n       ");
    for (int b = 0; b < n; b++) printf(" %7d", b);
    printf("\n");
    for (int a = 0; a < n; a++) {
        printf("  %4d ", a);
        for (int b = 0; b < n; b++) {
            CUdevice da, db;
            int can = 0, rank = 0, atomics = 0;
            CUresult res;
            if (a == b) {
                access[a * n + b] = 1;
                printf(" %7s", "self");
                continue;
            }
            res = gshmemi_cu.cuDeviceGet(&da, a);
            if (res == CUDA_SUCCESS) res = gshmemi_cu.cuDeviceGet(&db, b);
            if (res == CUDA_SUCCESS) res = gshmemi_cu.cuDeviceCanAccessPeer(&can, da, db);
            if (res == CUDA_SUCCESS && can)
                res = gshmemi_cu.cuDeviceGetP2PAttribute(&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, da, db);
            if (res == CUDA_SUCCESS && can)
                res = gshmemi_cu.cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, da, db);
            if (res != CUDA_SUCCESS) {
                printf(" %7s", "error");
                fprintf(stderr, "gshmem-info: peer access of GPU %d to GPU %d: %s\n", a, b, gshmemi_cu_errstr(res));
                continue;
            }
            access[a * n + b] = can;
            if (can) printf("   yes %d%s", rank, atomics ? "+" : " ");
            else printf(" %7s", "-");
        }
        printf("\n");
    }
    *n_gpus = n;
    return access;
}

/* The host id of each of n PEs: the comma-separated list hosts (n items), or GSHMEM_HOST_ID (or
 * this machine, "") for all; as numbers equal where the ids are. 0, or -1 after naming the
 * argument. */
static int host_ids(const char *hosts, int n, uint64_t *ids)
{
    char *copy, **item;
    int k = 0, rc = 0;
    if (!hosts) {
        for (int pe = 0; pe < n; pe++) ids[pe] = 0;
        return 0;
    }
    copy = strdup(hosts);
    item = calloc((size_t)n + 1, sizeof(*item));
    if (!copy || !item) {
        fprintf(stderr, "gshmem-info: out of host memory for --hosts\n");
        free(copy);
        free(item);
        return -1;
    }
    /* split at every comma (an empty id is refused below) */
    for (char *p = copy; k <= n; k++) {
        item[k] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p++ = '\0';
    }
    if (k != n - 1) rc = -1;
    for (int pe = 0; rc == 0 && pe < n; pe++) {
        if (item[pe][0] == '\0') rc = -1;
        ids[pe] = (uint64_t)pe;
        for (int j = 0; j < pe; j++)
            if (strcmp(item[j], item[pe]) == 0) {
                ids[pe] = ids[j];
                break;
            }
    }
    if (rc) fprintf(stderr, "gshmem-info: --hosts \"%s\": give %d host ids, one per PE, separated by commas\n", hosts, n);
    free(copy);
    free(item);
    return rc;
}

/* The route of every pair of n PEs of this machine, by the runtime's rule. */
static int print_routes(int n, const char *hosts, int assume_access, int n_gpus, const int *access)
{
    const gshmemi_route_cfg_t cfg = {gshmemi_env.DISABLE_P2P, gshmemi_env.REMOTE_TRANSPORT, gshmemi_env.PROXY_BACKEND,
                                     gshmemi_env.IBGDA_NIC};
    gshmemi_route_peer_t *peers = calloc((size_t)n, sizeof(*peers));
    uint64_t *ids = calloc((size_t)n, sizeof(*ids));
    int rc = peers && ids ? 0 : -1, ibgda_hw = 0;

    if (rc) fprintf(stderr, "gshmem-info: out of host memory for %d PEs\n", n);
    if (!rc) rc = host_ids(hosts, n, ids);
    if (!rc) {
        printf("\nTransports for %d PEs on this machine (", n);
        if (assume_access) printf("every GPU taken as reaching every other");
        else if (n_gpus == 0) printf("no GPU here: no PE reaches another's memory");
        else if (gshmemi_env.DEVICE >= 0) printf("every PE on GPU %d", gshmemi_env.DEVICE);
        else printf("PE i on GPU i modulo %d", n_gpus);
        printf("; hosts: %s):\n", hosts ? hosts : gshmemi_env.HOST_ID[0] ? "GSHMEM_HOST_ID for all" : "this machine for all");
        for (int pe = 0; pe < n; pe++) {
            peers[pe].host = ids[pe];
            peers[pe].machine = 1;
        }
        if (gshmemi_route_wants_ibgda_hw(peers, n, &cfg)) {
            char dev[GSHMEMI_IBV_NAME_MAX + 16], why[2048];
            ibgda_hw = gshmemi_ibgda_probe_why(dev, sizeof(dev), why, sizeof(why)) > 0;
        }
        for (int me = 0; me < n; me++) {
            int gme = gshmemi_env.DEVICE >= 0 ? gshmemi_env.DEVICE : n_gpus ? me % n_gpus : 0;
            for (int pe = 0; pe < n; pe++) {
                int gpe = gshmemi_env.DEVICE >= 0 ? gshmemi_env.DEVICE : n_gpus ? pe % n_gpus : 0;
                /* the peers' view from me: which of them my GPU reaches */
                peers[pe].gpu_access = assume_access || (n_gpus > 0 && gme < n_gpus && gpe < n_gpus && access[gme * n_gpus + gpe]);
                peers[pe].ibgda_hw = ibgda_hw;
            }
            for (int pe = 0; pe < n; pe++) {
                const char *why = "";
                int route;
                if (pe == me) continue;
                route = gshmemi_route_pick(peers, n, me, pe, &cfg, &why);
                printf("  PE %d -> PE %d: %s (%s)\n", me, pe, gshmemi_route_name(route), why);
            }
        }
    }
    free(peers);
    free(ids);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: gshmem-info [--pes N [--hosts ID,ID,...] [--assume-peer-access]] | --markdown | --api [DIR] | --rdma | "
                    "--version\n");
}

/* The API reference from the headers under dir, or under the first folder of this build's that
 * holds gshmem.h: the source tree's include/, then the installed one. */
static int print_api(const char *dir)
{
    static const char *const dirs[] = {GSHMEM_SOURCE_INCLUDE_DIR, GSHMEM_INSTALL_INCLUDE_DIR};
    for (size_t i = 0; !dir && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        char path[4096];
        FILE *f;
        snprintf(path, sizeof(path), "%s/gshmem.h", dirs[i]);
        if ((f = fopen(path, "r"))) {
            fclose(f);
            dir = dirs[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "gshmem-info --api: no gshmem.h in %s nor in %s; give the folder holding it: --api DIR\n", dirs[0], dirs[1]);
        return 1;
    }
    return gshmemi_api_ref_print(stdout, dir) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *hosts = NULL;
    int pes = 0, assume_access = 0, n_gpus = 0, *access, rc;

    if (argc > 1 && strcmp(argv[1], "--markdown") == 0) { /* the table of docs/environment.md */
        gshmemi_env_print_markdown(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--api") == 0) { /* docs/api-reference.md */
        if (argc > 3) {
            usage();
            return 2;
        }
        return print_api(argc == 3 ? argv[2] : NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--rdma") == 0) return print_rdma();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0 && argc == 2) continue;
        if (strcmp(argv[i], "--pes") == 0 && i + 1 < argc) {
            char *end;
            long v;
            errno = 0;
            v = strtol(argv[++i], &end, 10);
            if (errno || end == argv[i] || *end || v < 1 || v > MAX_PES) {
                fprintf(stderr, "gshmem-info: --pes \"%s\": give a number of PEs from 1 to %d\n", argv[i], MAX_PES);
                return 2;
            }
            pes = (int)v;
        } else if (strcmp(argv[i], "--hosts") == 0 && i + 1 < argc) {
            hosts = argv[++i];
        } else if (strcmp(argv[i], "--assume-peer-access") == 0) {
            assume_access = 1;
        } else {
            fprintf(stderr, "gshmem-info: unknown or incomplete argument \"%s\"\n", argv[i]);
            usage();
            return 2;
        }
    }
    if ((hosts || assume_access) && !pes) {
        fprintf(stderr, "gshmem-info: --hosts and --assume-peer-access go with --pes N\n");
        usage();
        return 2;
    }
    rc = gshmemi_env_init();

    printf("gshmem %d.%d.%d (OpenSHMEM %d.%d)\n", GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH,
           SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (argc > 1 && strcmp(argv[1], "--version") == 0) return 0;
    access = print_gpus(&n_gpus);
    printf("\n");
    (void)print_rdma(); /* without libibverbs it says so, and the rest still holds */
    if (pes && print_routes(pes, hosts, assume_access, n_gpus, access) != 0) {
        free(access);
        return 2;
    }
    free(access);
    printf("\nEnvironment variables:\n");
    gshmemi_env_print(stdout, &gshmemi_env);
    return rc == 0 ? 0 : 1;
}
