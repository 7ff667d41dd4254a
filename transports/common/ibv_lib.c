/* The dlopen'ed libibverbs of transports/common/ibv_lib.h. */
#include "ibv_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../runtime/base/env.h"
#include "../../runtime/base/log.h"

gshmemi_ibv_t gshmemi_ibv;

static gshmemi_dl_lib_t ibv_lib = {"libibverbs.so.1", "rdma-core's libibverbs", NULL};

static const gshmemi_dl_sym_t ibv_syms[] = {
#define GSHMEMI_IBV_SYM(fn) {"ibv_" #fn, offsetof(gshmemi_ibv_t, fn), 0},
    GSHMEMI_IBV_FUNCS(GSHMEMI_IBV_SYM)
#undef GSHMEMI_IBV_SYM
#define GSHMEMI_IBV_SYM(fn) {"ibv_" #fn, offsetof(gshmemi_ibv_t, fn), 1},
    GSHMEMI_IBV_OPTIONAL_FUNCS(GSHMEMI_IBV_SYM)
#undef GSHMEMI_IBV_SYM
};

void gshmemi_dl_table_unload(gshmemi_dl_lib_t *lib, void *table, size_t table_size)
{
    if (lib->handle) dlclose(lib->handle);
    lib->handle = NULL;
    memset(table, 0, table_size);
}

int gshmemi_dl_table_load(gshmemi_dl_lib_t *lib, const gshmemi_dl_sym_t *syms, size_t n_syms, void *table, size_t table_size,
                          const char *user, char *why, size_t cap)
{
    const char *err;
    size_t i;
    if (lib->handle) return GSHMEMI_OK;
    lib->handle = dlopen(lib->name, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        err = dlerror();
        snprintf(why, cap, "%s is missing (%s): no %s on this host (install %s)", lib->name, err ? err : "dlopen failed",
                 user, lib->package);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    for (i = 0; i < n_syms; i++) {
        void *fn = dlsym(lib->handle, syms[i].symbol);
        if (!fn && !syms[i].optional) {
            snprintf(why, cap, "%s has no %s: no %s on this host (%s too old)", lib->name, syms[i].symbol, user, lib->package);
            gshmemi_dl_table_unload(lib, table, table_size);
            return GSHMEMI_ERR_UNSUPPORTED;
        }
        /* a function pointer as dlsym returns it: POSIX makes the two the same size */
        memcpy((char *)table + syms[i].offset, &fn, sizeof(fn));
    }
    return GSHMEMI_OK;
}

void gshmemi_ibv_set_library_for_test(const char *name)
{
    gshmemi_dl_table_unload(&ibv_lib, &gshmemi_ibv, sizeof(gshmemi_ibv));
    ibv_lib.name = name ? name : "libibverbs.so.1";
}

int gshmemi_ibv_load_why(const char *user, char *why, size_t cap)
{
    return gshmemi_dl_table_load(&ibv_lib, ibv_syms, sizeof(ibv_syms) / sizeof(ibv_syms[0]), &gshmemi_ibv, sizeof(gshmemi_ibv),
                                 user, why, cap);
}

int gshmemi_ibv_load(const char *sub, const char *user)
{
    char why[512];
    int rc = gshmemi_ibv_load_why(user, why, sizeof(why));
    if (rc == GSHMEMI_ERR_UNSUPPORTED) GSHMEMI_INFO(sub, "%s", why);
    return rc;
}

int gshmemi_ibv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr)
{
    struct verbs_context *vctx = verbs_get_ctx_op(c, query_port);
    if (vctx) return vctx->query_port(c, port, attr, sizeof(*attr));
    memset(attr, 0, sizeof(*attr));
    return gshmemi_ibv.query_port(c, port, (struct _compat_ibv_port_attr *)attr);
}

int gshmemi_ibv_query_attrs(const char *sub, struct ibv_context *c, const char *name, uint8_t port, struct ibv_device_attr *dattr,
                            struct ibv_port_attr *pattr, union ibv_gid *gid)
{
    int rc = gshmemi_ibv.query_device(c, dattr);
    if (rc) {
        GSHMEMI_ERROR(sub, "%s: ibv_query_device failed: %s", name, strerror(rc));
        return GSHMEMI_ERR_SYSTEM;
    }
    rc = gshmemi_ibv_query_port(c, port, pattr);
    if (rc) {
        GSHMEMI_ERROR(sub, "%s port %u: ibv_query_port failed: %s", name, port, strerror(rc));
        return GSHMEMI_ERR_SYSTEM;
    }
    memset(gid, 0, sizeof(*gid));
    /* RoCE addresses by GID; index 0 is the port's default (link-local or RoCE v1 on some setups:
     * GSHMEM_IB_DEVICE cannot pick another index yet, and RoCE v2 fabrics may need one) */
    if (pattr->link_layer == IBV_LINK_LAYER_ETHERNET && gshmemi_ibv.query_gid(c, port, 0, gid)) {
        GSHMEMI_ERROR(sub, "%s port %u: ibv_query_gid(index 0) failed: %s", name, port, strerror(errno));
        return GSHMEMI_ERR_SYSTEM;
    }
    return GSHMEMI_OK;
}

/* ---------------------------------------------------------------- device and port */

_Static_assert(GSHMEMI_IBV_NAME_MAX == GSHMEMI_ENV_IB_NAME_MAX, "one limit on RDMA device names");

int gshmemi_ibv_parse_device(const char *sub, const char *text, char *name, size_t cap, int *port)
{
    char buf[GSHMEMI_ENV_IB_NAME_MAX];
    const char *why = gshmemi_env_ib_device_parse(text, buf, port);

    name[0] = '\0';
    if (why) {
        *port = 0;
        GSHMEMI_ERROR(sub, "GSHMEM_IB_DEVICE=%s: %s (mlx5_0 or mlx5_0:1)", text, why);
        return GSHMEMI_ERR_INVALID;
    }
    if (strlen(buf) >= cap) {
        *port = 0;
        GSHMEMI_ERROR(sub, "GSHMEM_IB_DEVICE=%s: the device name does not fit %zu bytes", text, cap);
        return GSHMEMI_ERR_INVALID;
    }
    strcpy(name, buf);
    return GSHMEMI_OK;
}

static const char *port_state_name(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "NOP";
    }
}

int gshmemi_ibv_pick_port(struct ibv_context *c, const char *name, int want, char *why, size_t cap)
{
    struct ibv_device_attr da;
    struct ibv_port_attr pa;
    int p, rc, first = want ? want : 1, last;
    size_t used = 0;

    why[0] = '\0';
    rc = gshmemi_ibv.query_device(c, &da);
    if (rc) {
        snprintf(why, cap, "%s: ibv_query_device failed: %s", name, strerror(rc));
        return 0;
    }
    last = want ? want : da.phys_port_cnt;
    if (want > da.phys_port_cnt) {
        snprintf(why, cap, "%s has %d port(s), no port %d", name, da.phys_port_cnt, want);
        return 0;
    }
    for (p = first; p <= last; p++) {
        rc = gshmemi_ibv_query_port(c, (uint8_t)p, &pa);
        if (rc == 0 && pa.state == IBV_PORT_ACTIVE) return p;
        if (used < cap)
            used += snprintf(why + used, cap - used, "%s%s port %d %s", used ? ", " : "", name, p,
                             rc ? strerror(rc) : port_state_name(pa.state));
    }
    return 0;
}

void gshmemi_ibv_device_names(struct ibv_device **list, int n, char *out, size_t cap)
{
    size_t used = 0;
    int i;
    out[0] = '\0';
    for (i = 0; i < n && used < cap; i++)
        used += snprintf(out + used, cap - used, "%s%s", i ? " " : "", gshmemi_ibv.get_device_name(list[i]));
    if (n == 0) snprintf(out, cap, "none");
}

void gshmemi_ibv_find_device(const char *want, int want_port, gshmemi_ibv_open_fn open, void *arg, gshmemi_ibv_found_t *found)
{
    struct ibv_device **list;
    int n = 0, i, err;

    memset(found, 0, sizeof(*found));
    found->none_cause = "";
    errno = 0;
    list = gshmemi_ibv.get_device_list(&n);
    err = errno;
    if (!list || n == 0) {
        if (list) gshmemi_ibv.free_device_list(list);
        /* ENOSYS: the kernel has no RDMA subsystem (no /sys/class/infiniband) */
        if (!list && err == ENOSYS) found->none_cause = "; this kernel has no RDMA support";
        else if (!list && err) found->none_cause = "; ibv_get_device_list failed";
        snprintf(found->present, sizeof(found->present), "none");
        return;
    }
    found->listed = n;
    gshmemi_ibv_device_names(list, n, found->present, sizeof(found->present));
    for (i = 0; i < n && !found->ctx; i++) {
        const char *name = gshmemi_ibv.get_device_name(list[i]);
        struct ibv_context *c;
        int port;
        if (want[0] && strcmp(name, want) != 0) continue;
        found->named_found = 1;
        c = open(arg, list[i], name, found->why, sizeof(found->why));
        if (!c) continue;
        port = gshmemi_ibv_pick_port(c, name, want_port, found->why, sizeof(found->why));
        if (!port) {
            gshmemi_ibv.close_device(c);
            continue;
        }
        found->ctx = c;
        found->port = (uint8_t)port;
        snprintf(found->name, sizeof(found->name), "%s", name);
    }
    gshmemi_ibv.free_device_list(list);
}
