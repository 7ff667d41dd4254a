/* gshmem-info: version and every environment variable with its default, value, accepted values and
 * doc. Exits 1 when a variable holds a bad value (each is named on stderr, then a summary).
 * gshmem-info --markdown prints the variables as the markdown table of docs/environment.md.
 * gshmem-info --rdma lists the RDMA devices libibverbs finds, their ports, and whether this
 * libibverbs registers GPU memory by dmabuf. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gshmem/types.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "transports/common/ibv_lib.h"

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

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--markdown") == 0) { /* the table of docs/environment.md */
        gshmemi_env_print_markdown(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--rdma") == 0) return print_rdma();
    int rc = gshmemi_env_init();

    printf("gshmem %d.%d.%d (OpenSHMEM %d.%d)\n", GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH,
           SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (argc > 1 && strcmp(argv[1], "--version") == 0) return 0;
    printf("\nEnvironment variables:\n");
    gshmemi_env_print(stdout, &gshmemi_env);
    return rc == 0 ? 0 : 1;
}
