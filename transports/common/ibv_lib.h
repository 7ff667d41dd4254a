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

#ifdef __cplusplus
}
#endif
#endif
