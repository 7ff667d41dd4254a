/* libibverbs reached through dlopen, shared by the proxy's verbs backend and IBGDA's setup, so
 * that libgshmem loads on hosts without rdma-core (only its headers are needed to build): the
 * table of entry points, its loader, and the device and port choice both make. */
#ifndef GSHMEMI_IBV_LIB_H
#define GSHMEMI_IBV_LIB_H

#include <stddef.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field fn has the type of ibv_fn; named without the prefix because several ibv_ names are
 * function-like macros in verbs.h (ibv_query_port, ibv_reg_mr) that a call would expand. */
#define GSHMEMI_IBV_FUNCS(X)                                                                      \
    X(get_device_list)                                                                            \
    X(free_device_list)                                                                           \
    X(get_device_name)                                                                            \
    X(open_device)                                                                                \
    X(close_device)                                                                               \
    X(query_device)                                                                               \
    X(query_port)                                                                                 \
    X(query_gid)                                                                                  \
    X(alloc_pd)                                                                                   \
    X(dealloc_pd)                                                                                 \
    X(create_cq)                                                                                  \
    X(destroy_cq)                                                                                 \
    X(create_qp)                                                                                  \
    X(destroy_qp)                                                                                 \
    X(modify_qp)                                                                                  \
    X(reg_mr)                                                                                     \
    X(dereg_mr)                                                                                   \
    X(create_ah)                                                                                  \
    X(destroy_ah)                                                                                 \
    X(wc_status_str)
/* Newer than the rest (rdma-core 34): its absence only rules out dmabuf registration. */
#define GSHMEMI_IBV_OPTIONAL_FUNCS(X) X(reg_dmabuf_mr)

typedef struct {
#define GSHMEMI_IBV_FIELD(fn) __typeof__(&ibv_##fn) fn;
    GSHMEMI_IBV_FUNCS(GSHMEMI_IBV_FIELD)
    GSHMEMI_IBV_OPTIONAL_FUNCS(GSHMEMI_IBV_FIELD)
#undef GSHMEMI_IBV_FIELD
} gshmemi_ibv_t;

/* A library reached through dlopen and the table of its entry points (gshmemi_dl_table_load). */
typedef struct {
    const char *symbol; /* "ibv_reg_mr" */
    size_t offset;      /* of its function pointer in the table */
    int optional;       /* its absence leaves the pointer NULL instead of failing the load */
} gshmemi_dl_sym_t;

typedef struct {
    const char *name;    /* the file dlopen opens ("libibverbs.so.1") */
    const char *package; /* what provides it, for the message ("rdma-core's libibverbs") */
    void *handle;        /* NULL until loaded */
} gshmemi_dl_lib_t;

/* Opens lib once and fills table (table_size bytes) from syms. GSHMEMI_ERR_UNSUPPORTED, with why
 * ("<lib> is missing (...): no <user> on this host", or the entry point it lacks), when the library
 * or a required entry point is missing; the table is then all NULL. */
int gshmemi_dl_table_load(gshmemi_dl_lib_t *lib, const gshmemi_dl_sym_t *syms, size_t n_syms, void *table, size_t table_size,
                          const char *user, char *why, size_t cap);
/* Closes lib and clears table. */
void gshmemi_dl_table_unload(gshmemi_dl_lib_t *lib, void *table, size_t table_size);

/* Filled by gshmemi_ibv_load; all NULL before. */
extern gshmemi_ibv_t gshmemi_ibv;

/* Loads libibverbs once. GSHMEMI_ERR_UNSUPPORTED with one info line (subsystem sub: "<lib> is
 * missing (...): no <user> on this host") when the library or an entry point is missing. */
int gshmemi_ibv_load(const char *sub, const char *user);
/* The same, silent: on GSHMEMI_ERR_UNSUPPORTED why says what is missing (what the other logs). */
int gshmemi_ibv_load_why(const char *user, char *why, size_t cap);

/* Tests: the library gshmemi_ibv_load opens (default "libibverbs.so.1"); NULL restores the
 * default. Unloads a loaded one. */
void gshmemi_ibv_set_library_for_test(const char *name);

/* ibv_query_port as verbs.h's inline does it, with the loaded table for the old entry point. */
int gshmemi_ibv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr);

/* What a QP's setup needs of device name's port: its device and port attributes, and its GID
 * index 0 on RoCE (all zero on InfiniBand, which addresses by LID). Errors logged under sub,
 * naming the device, the port and the call; GSHMEMI_ERR_SYSTEM. */
int gshmemi_ibv_query_attrs(const char *sub, struct ibv_context *c, const char *name, uint8_t port, struct ibv_device_attr *dattr,
                            struct ibv_port_attr *pattr, union ibv_gid *gid);

#define GSHMEMI_IBV_NAME_MAX 64 /* IBV_SYSFS_NAME_MAX */

/* Parses GSHMEM_IB_DEVICE (errors logged under subsystem sub) with the shape the env table checks
 * (gshmemi_env_ib_device_parse): "name" or "name:port". name gets the device (cap bytes), *port 0
 * when none is given. GSHMEMI_ERR_INVALID, logged naming the variable and the value, on anything
 * else. NULL or "" gives name "" (no device named). */
int gshmemi_ibv_parse_device(const char *sub, const char *text, char *name, size_t cap, int *port);

/* The first ACTIVE port of c (want == 0) or port want if ACTIVE; 0 when none, with why (naming
 * device name and each port's state) in why. */
int gshmemi_ibv_pick_port(struct ibv_context *c, const char *name, int want, char *why, size_t cap);

/* "mlx5_0 mlx5_1", or "none", into out. */
void gshmemi_ibv_device_names(struct ibv_device **list, int n, char *out, size_t cap);

/* Opens candidate dev (named name) the way its user needs it: the context, or NULL with why
 * (naming the device and the call) in why. arg is the caller's. */
typedef struct ibv_context *(*gshmemi_ibv_open_fn)(void *arg, struct ibv_device *dev, const char *name, char *why, size_t cap);

/* What gshmemi_ibv_find_device found, for the caller's messages. */
typedef struct {
    struct ibv_context *ctx;         /* the device opened, NULL when none was */
    uint8_t port;                    /* its port (ACTIVE) */
    char name[GSHMEMI_IBV_NAME_MAX]; /* its name */
    int listed;                      /* how many devices libibverbs listed */
    const char *none_cause;          /* listed none: "; this kernel has no RDMA support", "; ibv_get_device_list failed" or "" */
    int named_found;                 /* the device asked for (want) is listed */
    char why[512];                   /* why the last candidate was passed over */
    char present[512];               /* the listed devices' names, or "none" */
} gshmemi_ibv_found_t;

/* The RDMA device to use: device want (any when "") with port want_port (the first ACTIVE one when
 * 0), the first that open opens and that has such a port. Lists the devices with the loaded
 * libibverbs and frees the list; the caller logs and closes found->ctx. */
void gshmemi_ibv_find_device(const char *want, int want_port, gshmemi_ibv_open_fn open, void *arg, gshmemi_ibv_found_t *found);

#ifdef __cplusplus
}
#endif
#endif
