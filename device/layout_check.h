/* The layout a CUDA module and libgshmem must agree on, as a list of (name, offset, size): every
 * field of the device state, of a team as device code sees it, of the proxy FIFO's descriptor,
 * request, slot and result, and of the IBGDA QP record, with each struct's size, and the
 * constants of the proxy request encoding and the IBGDA counters (a constant: its value as the
 * offset, size 0). The entries are computed by the compiler (offsetof, sizeof) in each CUDA
 * module (device/state.cuh registers its table) and in the library (runtime/modules.c), from this
 * one list, so a reordered field, a resized one or a changed encoding in headers a module was
 * built against shows as the first entry that differs, and the module is refused naming it.
 * A new field is a new row here; a field missing from the list is caught only when it moves
 * another one or the struct's size (each struct's last row must end where the struct ends, which
 * the static assertions below hold). Plain C99 and C++. */
#ifndef GSHMEM_DEVICE_LAYOUT_CHECK_H
#define GSHMEM_DEVICE_LAYOUT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "proxy_fifo.h"

/* One entry: a field (offset and size in bytes), a struct's size (offset 0), or a constant
 * (its value, size 0). */
typedef struct gshmemi_layout_entry {
    const char *name;
    uint64_t offset;
    uint64_t size;
} gshmemi_layout_entry_t;

#define GSHMEMI_LAYOUT_FIELD_SIZE(type, field) sizeof(((type *)0)->field)

/* The list: F(type, field) a field, S(type) a struct's size (after its fields, so that a field
 * that moved is named before the size it changed), C(name) a constant. */
#define GSHMEMI_LAYOUT_LIST(F, S, C)                                                              \
    F(gshmemi_device_state_t, initialized)                                                        \
    F(gshmemi_device_state_t, my_pe)                                                              \
    F(gshmemi_device_state_t, n_pes)                                                              \
    F(gshmemi_device_state_t, debug_checks)                                                       \
    F(gshmemi_device_state_t, heap_base)                                                          \
    F(gshmemi_device_state_t, heap_size)                                                          \
    F(gshmemi_device_state_t, peer_base)                                                          \
    F(gshmemi_device_state_t, max_teams)                                                          \
    F(gshmemi_device_state_t, teams)                                                              \
    F(gshmemi_device_state_t, world)                                                              \
    F(gshmemi_device_state_t, coll_proto)                                                         \
    F(gshmemi_device_state_t, coll_ll_max)                                                        \
    F(gshmemi_device_state_t, coll_simple_max)                                                    \
    F(gshmemi_device_state_t, coll_ll128_max)                                                     \
    F(gshmemi_device_state_t, coll_oneshot_max)                                                   \
    F(gshmemi_device_state_t, coll_push_min)                                                      \
    F(gshmemi_device_state_t, coll_push_reduce_min)                                               \
    F(gshmemi_device_state_t, wait_timeout_ns)                                                    \
    F(gshmemi_device_state_t, peer_base_c)                                                        \
    F(gshmemi_device_state_t, proxy)                                                              \
    F(gshmemi_device_state_t, ibgda)                                                              \
    F(gshmemi_device_state_t, ibgda_nqp)                                                          \
    S(gshmemi_device_state_t)                                                                     \
    F(gshmemi_team_dev_t, size)                                                                   \
    F(gshmemi_team_dev_t, my_idx)                                                                 \
    F(gshmemi_team_dev_t, start)                                                                  \
    F(gshmemi_team_dev_t, stride)                                                                 \
    F(gshmemi_team_dev_t, radix)                                                                  \
    F(gshmemi_team_dev_t, has_remote)                                                             \
    F(gshmemi_team_dev_t, ll_slices)                                                              \
    F(gshmemi_team_dev_t, barrier)                                                                \
    F(gshmemi_team_dev_t, ll)                                                                     \
    F(gshmemi_team_dev_t, ack)                                                                    \
    F(gshmemi_team_dev_t, simple_slices)                                                          \
    F(gshmemi_team_dev_t, routed_slices)                                                          \
    F(gshmemi_team_dev_t, simple)                                                                 \
    F(gshmemi_team_dev_t, simple_flags)                                                           \
    F(gshmemi_team_dev_t, simple_credit)                                                          \
    F(gshmemi_team_dev_t, simple_steps)                                                           \
    F(gshmemi_team_dev_t, ll128_slices)                                                           \
    F(gshmemi_team_dev_t, routed_chunk)                                                           \
    F(gshmemi_team_dev_t, ll128)                                                                  \
    F(gshmemi_team_dev_t, seq)                                                                    \
    S(gshmemi_team_dev_t)                                                                         \
    C(GSHMEMI_COLL_SLICES)                                                                        \
    C(GSHMEMI_BARRIER_WORDS)                                                                      \
    C(GSHMEMI_SEQ_WORDS)                                                                          \
    C(GSHMEMI_LL_SLICE_BYTES)                                                                     \
    C(GSHMEMI_SIMPLE_CHUNK)                                                                       \
    C(GSHMEMI_SIMPLE_SLOTS)                                                                       \
    C(GSHMEMI_LL128_SLICE_BYTES)                                                                  \
    C(GSHMEMI_PSYNC_ACK_OFF)                                                                      \
    F(gshmemi_proxy_fifo_t, slots)                                                                \
    F(gshmemi_proxy_fifo_t, ret)                                                                  \
    F(gshmemi_proxy_fifo_t, tail)                                                                 \
    F(gshmemi_proxy_fifo_t, head_cache)                                                           \
    F(gshmemi_proxy_fifo_t, done_cache)                                                           \
    F(gshmemi_proxy_fifo_t, poll_stamp)                                                           \
    F(gshmemi_proxy_fifo_t, head)                                                                 \
    F(gshmemi_proxy_fifo_t, done)                                                                 \
    F(gshmemi_proxy_fifo_t, error)                                                                \
    F(gshmemi_proxy_fifo_t, size)                                                                 \
    F(gshmemi_proxy_fifo_t, pad_)                                                                 \
    F(gshmemi_proxy_fifo_t, timeout_ns)                                                           \
    S(gshmemi_proxy_fifo_t)                                                                       \
    F(gshmemi_proxy_req_t, arg)                                                                   \
    F(gshmemi_proxy_req_t, seq)                                                                   \
    S(gshmemi_proxy_req_t)                                                                        \
    F(gshmemi_proxy_slot_t, word)                                                                 \
    S(gshmemi_proxy_slot_t)                                                                       \
    F(gshmemi_proxy_ret_t, value)                                                                 \
    F(gshmemi_proxy_ret_t, seq)                                                                   \
    S(gshmemi_proxy_ret_t)                                                                        \
    C(GSHMEMI_PROXY_ARGS)                                                                         \
    C(GSHMEMI_PROXY_WORDS)                                                                        \
    C(GSHMEMI_PROXY_PAYLOAD_MASK)                                                                 \
    C(GSHMEMI_PROXY_RET_BUSY)                                                                     \
    C(GSHMEMI_PROXY_PUT)                                                                          \
    C(GSHMEMI_PROXY_GET)                                                                          \
    C(GSHMEMI_PROXY_PUT_VALUE)                                                                    \
    C(GSHMEMI_PROXY_AMO)                                                                          \
    C(GSHMEMI_PROXY_PUT_SIGNAL)                                                                   \
    C(GSHMEMI_PROXY_FENCE)                                                                        \
    C(GSHMEMI_PROXY_QUIET)                                                                        \
    C(GSHMEMI_PROXY_NOP)                                                                          \
    F(gshmemi_ibgda_qp_t, sq)                                                                     \
    F(gshmemi_ibgda_qp_t, sq_dbrec)                                                               \
    F(gshmemi_ibgda_qp_t, db)                                                                     \
    F(gshmemi_ibgda_qp_t, cq)                                                                     \
    F(gshmemi_ibgda_qp_t, cq_dbrec)                                                               \
    F(gshmemi_ibgda_qp_t, ctr)                                                                    \
    F(gshmemi_ibgda_qp_t, result)                                                                 \
    F(gshmemi_ibgda_qp_t, bbs)                                                                    \
    F(gshmemi_ibgda_qp_t, sq_bbs)                                                                 \
    F(gshmemi_ibgda_qp_t, ncqe)                                                                   \
    F(gshmemi_ibgda_qp_t, qpn)                                                                    \
    F(gshmemi_ibgda_qp_t, lkey)                                                                   \
    F(gshmemi_ibgda_qp_t, result_lkey)                                                            \
    F(gshmemi_ibgda_qp_t, buf_lkey)                                                               \
    F(gshmemi_ibgda_qp_t, rkey)                                                                   \
    F(gshmemi_ibgda_qp_t, pad_)                                                                   \
    F(gshmemi_ibgda_qp_t, raddr)                                                                  \
    S(gshmemi_ibgda_qp_t)                                                                         \
    C(GSHMEMI_IBGDA_CTR_RESV)                                                                     \
    C(GSHMEMI_IBGDA_CTR_POSTED)                                                                   \
    C(GSHMEMI_IBGDA_CTR_DONE)                                                                     \
    C(GSHMEMI_IBGDA_CTR_WORDS)

#define GSHMEMI_LAYOUT_ROW_FIELD(type, field)                                                     \
    {#type "." #field, (uint64_t)offsetof(type, field), (uint64_t)GSHMEMI_LAYOUT_FIELD_SIZE(type, field)},
#define GSHMEMI_LAYOUT_ROW_SIZE(type) {"sizeof(" #type ")", 0, (uint64_t)sizeof(type)},
#define GSHMEMI_LAYOUT_ROW_CONST(name) {#name, (uint64_t)(name), 0},
/* The table's initializer: static const gshmemi_layout_entry_t t[] = GSHMEMI_LAYOUT_ROWS; */
#define GSHMEMI_LAYOUT_ROWS \
    {GSHMEMI_LAYOUT_LIST(GSHMEMI_LAYOUT_ROW_FIELD, GSHMEMI_LAYOUT_ROW_SIZE, GSHMEMI_LAYOUT_ROW_CONST)}

/* Each struct's last field ends where the struct ends, give or take its tail padding (less than
 * its widest member): a field added after the listed ones without a row fails here. */
#ifdef __cplusplus
#define GSHMEMI_LAYOUT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define GSHMEMI_LAYOUT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#define GSHMEMI_LAYOUT_ENDS_WITH(type, field)                                                     \
    GSHMEMI_LAYOUT_STATIC_ASSERT(sizeof(type) - (offsetof(type, field) + GSHMEMI_LAYOUT_FIELD_SIZE(type, field)) < 8, \
                                 #type ": a field after " #field " has no row in GSHMEMI_LAYOUT_LIST")
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_device_state_t, ibgda_nqp);
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_team_dev_t, seq);
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_proxy_fifo_t, timeout_ns);
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_proxy_req_t, seq);
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_proxy_slot_t, word);
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_proxy_ret_t, seq);
GSHMEMI_LAYOUT_ENDS_WITH(gshmemi_ibgda_qp_t, raddr);

#ifdef __cplusplus
extern "C" {
#endif
/* Called from each module's static constructor with the layout table it was built with
 * (n entries). */
void gshmemi_module_register_layout(gshmemi_module_update_fn update, const gshmemi_layout_entry_t *layout, unsigned n);
/* 0 if a module built with this layout table may take this library's state; otherwise -1, with a
 * logged error naming `module` (what the caller calls it) and the first entry that differs, as
 * the module has it and as the library has it. */
int gshmemi_module_check(const char *module, const gshmemi_layout_entry_t *layout, unsigned n);
/* This library's own table (*n entries). */
const gshmemi_layout_entry_t *gshmemi_layout_of_library(unsigned *n);
/* What a module built against headers without this list registers: always refused, naming the
 * layout version it carries. */
void gshmemi_module_register(gshmemi_module_update_fn update, unsigned version, size_t size);
#ifdef __cplusplus
}
#endif

#endif
