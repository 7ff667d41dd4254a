/* The API reference (gshmem-info --api, docs/api-reference.md): every public shmem_ and shmemx_
 * routine with its C signature, where it runs, a line of meaning and the header line that makes it.
 *
 * Where each part comes from:
 * - The routines of the family lists (GSHMEMI_CORE_FAMILY, GSHMEMI_RMA_FAMILY and its extension
 *   types, GSHMEMI_AMO_FAMILY, GSHMEMI_SIGNAL_FAMILY, GSHMEMI_SYNC_FAMILY): the lists themselves,
 *   expanded here as gshmem/device.cuh expands them, with row macros that keep each row's return
 *   type, name and parameters as text. A type, an operation or a row added to a list is listed
 *   with no change here.
 * - The routines that gshmem/coll.h, gshmem/coll.cuh, gshmem.h, gshmem/amo.h and gshmem/device.cuh
 *   write as whole functions from a type list (the typed collectives, the typed on-stream forms,
 *   the barriers' _warp/_block forms): the type and operator lists of gshmem/types.h and
 *   gshmem/rma.h, expanded here, with the forms each generator writes (API_MOVE, API_REDUCE, ...
 *   below). Those the C compiler sees are checked against the headers by test_api_doc.sh.
 * - Plain declarations and definitions (shmem_init, shmem_team_split_strided, shmemx_engine_*,
 *   ...): read from the headers' text at run time (parse_plain).
 * - The meaning: one row per form (TYPE, OP and SIZE standing for the list's entries) in
 *   api_forms below; a routine whose form has no row, or a row that makes no routine, is an error.
 * - The line: found at run time in the header's text. A form's row in api_forms names its header,
 *   the macro whose body holds the row and a piece of text of the row (its name pattern); the
 *   line is the first line of that macro's body holding it. Text rather than a line number kept
 *   beside the macros, so a line moved by an edit elsewhere in the header needs nothing; a row
 *   whose text changes fails here, naming it. */
#include "runtime/tools/api_ref.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"

/* Where a routine runs, and which compilers see it: C (gshmem.h from a C file) and CUDA (.cu). */
enum { W_HOST = 1, W_DEVICE = 2, L_C = 4, L_CUDA = 8 };
#define API_WHERE_HD_C (W_HOST | W_DEVICE | L_C | L_CUDA)
#define API_WHERE_HD (W_HOST | W_DEVICE | L_CUDA)
#define API_WHERE_DEV (W_DEVICE | L_CUDA)
#define API_WHERE_HOST_C (W_HOST | L_C | L_CUDA)
#define API_WHERE_HOST (W_HOST | L_CUDA)

/* The sections of the page, in order. */
enum { SEC_SETUP, SEC_RMA, SEC_AMO, SEC_SIGNAL, SEC_COLL, SEC_ENGINE, SEC_COUNT };
static const char *const sec_title[SEC_COUNT] = {
    "Setup, symmetric memory and host-only forms (`gshmem.h`)",
    "RMA, PE queries, quiet, fence (the lists of `gshmem/rma.h`)",
    "Atomics (the lists of `gshmem/amo.h`)",
    "Signals and point-to-point synchronization (`gshmem/amo.h`)",
    "Teams, barriers and collectives (`gshmem/coll.h`, `gshmem/coll.cuh`, `gshmem/device.cuh`)",
    "The collective engine (`gshmem/engine.h`)",
};

/* What holds for a whole section, said once above its table. */
static const char *const sec_note[SEC_COUNT] = {
    "On-stream forms enqueue and return; they are capturable in a CUDA graph.",
    "A device call over P2P is loads and stores; _warp and _block forms are called by every thread of the group "
    "with the same arguments. Host calls use the copy engine.",
    "Every atomic is __host__ __device__ in CUDA code and a library call in C. A fetching atomic's _nbi form "
    "stores the old value to fetch.",
    "The waits and tests are device code; each device wait is bounded by GSHMEM_DEVICE_WAIT_TIMEOUT.",
    "Collectives are collective over team: every member calls with the same arguments and, on the device, the "
    "same group shape. They return 0, or -1 with a logged reason. shmem_X called by a device thread runs on that "
    "thread; called from the host it runs on the runtime's stream and waits for it. The _grid forms need "
    "shmemx_collective_launch.",
    "Every routine returns 0 or a negative SHMEMX_ENGINE_E* status with the reason logged.",
};

/* One routine as a row makes it: form is NULL where it is found from the name (form_of). */
typedef struct {
    unsigned where;
    const char *ret, *name, *params, *form;
} api_row_t;

#define API_ROW_(where, ret, name, params, form) {API_WHERE_##where, #ret, #name, #params, form},
/* one level more, so that the arguments are expanded before # makes them text */
#define API_ROW(where, ret, name, params, form) API_ROW_(where, ret, name, params, form)

/* ---- the family lists, expanded as gshmem/device.cuh expands them ---- */
#define GSHMEMI_HOSTDEV(ret, name, params, device_body, host_body) API_ROW(API_HOSTDEV_SIDE, ret, name, params, NULL)
#define GSHMEMI_DEVONLY(ret, name, params, device_body) API_ROW(DEV, ret, name, params, NULL)
#define API_HOSTDEV_SIDE HD_C
static const api_row_t rma_rows[] = {GSHMEMI_CORE_FAMILY GSHMEMI_RMA_FAMILY};
static const api_row_t amo_rows[] = {GSHMEMI_AMO_FAMILY};
static const api_row_t signal_rows[] = {GSHMEMI_SIGNAL_FAMILY GSHMEMI_SYNC_FAMILY};
/* the extension types: CUDA code only (gshmem.h declares no C prototype of them) */
#undef API_HOSTDEV_SIDE
#define API_HOSTDEV_SIDE HD
static const api_row_t rma_ext_rows[] = {GSHMEM_RMA_EXT_TYPES(GSHMEMI_RMA_TYPED)};
#undef API_HOSTDEV_SIDE
#undef GSHMEMI_HOSTDEV
#undef GSHMEMI_DEVONLY

/* ---- the forms of the generators that write whole functions, over the same type lists ---- */
#define API_STREAM_PARAMS(...) (__VA_ARGS__, struct CUstream_st *stream)
/* gshmem.h, GSHMEMI_DEFINE_TYPED_ON_STREAM, over GSHMEM_RMA_TYPES */
#define API_TYPED_ON_STREAM(name, T)                                                                          \
    API_ROW(HOST_C, void, shmemx_##name##_put_on_stream, API_STREAM_PARAMS(T *dest, const T *source, size_t nelems, int pe), \
            "shmemx_TYPE_put_on_stream")                                                                      \
    API_ROW(HOST_C, void, shmemx_##name##_get_on_stream, API_STREAM_PARAMS(T *dest, const T *source, size_t nelems, int pe), \
            "shmemx_TYPE_get_on_stream")
/* gshmem/amo.h, GSHMEMI_DECL_WAIT_ON_STREAM, over GSHMEM_SYNC_TYPES */
#define API_WAIT_ON_STREAM(name, T)                                                                           \
    API_ROW(HOST_C, void, shmemx_##name##_wait_until_on_stream, API_STREAM_PARAMS(T *ivar, int cmp, T value),  \
            "shmemx_TYPE_wait_until_on_stream")
/* gshmem/device.cuh, GSHMEMI_DEFINE_BARRIER_SCOPE(_warp) and (_block) */
#define API_BARRIER_SCOPE(sfx)                                                                                \
    API_ROW(DEV, void, shmemx_barrier_all##sfx, (void), "shmemx_barrier_all" #sfx)                          \
    API_ROW(DEV, void, shmemx_barrier##sfx, (shmem_team_t team), "shmemx_barrier" #sfx)                     \
    API_ROW(DEV, void, shmemx_sync##sfx, (shmem_team_t team), "shmemx_sync" #sfx)                           \
    API_ROW(DEV, void, shmemx_sync_all##sfx, (void), "shmemx_sync_all" #sfx)
/* gshmem/coll.cuh, GSHMEMI_DEVICE_COLL_FORMS: shmem_NAME (host and device), its _warp, _block and
 * _grid forms; and gshmem/coll.h's on-stream form of the typed ones. */
#define API_COLL_FORMS(HD_SIDE, NAME, FORM, PARAMS)                                                           \
    API_ROW(HD_SIDE, int, shmem_##NAME, PARAMS, "shmem_" FORM)                                                \
    API_ROW(DEV, int, shmemx_##NAME##_warp, PARAMS, "shmemx_" FORM "_warp")                                   \
    API_ROW(DEV, int, shmemx_##NAME##_block, PARAMS, "shmemx_" FORM "_block")                                 \
    API_ROW(DEV, int, shmemx_##NAME##_grid, PARAMS, "shmemx_" FORM "_grid")
#define API_COLL_TYPED(HD_SIDE, STREAM_SIDE, NAME, FORM, PARAMS)                                              \
    API_COLL_FORMS(HD_SIDE, NAME, FORM, PARAMS)                                                               \
    API_ROW(STREAM_SIDE, int, shmemx_##NAME##_on_stream, API_STREAM_PARAMS PARAMS, "shmemx_" FORM "_on_stream")
#define API_MOVE(HD_SIDE, STREAM_SIDE, name, T)                                                               \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##_broadcast, "TYPE_broadcast",                                  \
                   (shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root))                 \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##_fcollect, "TYPE_fcollect",                                    \
                   (shmem_team_t team, T *dest, const T *source, size_t nelems))                              \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##_collect, "TYPE_collect",                                      \
                   (shmem_team_t team, T *dest, const T *source, size_t nelems))                              \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##_alltoall, "TYPE_alltoall",                                    \
                   (shmem_team_t team, T *dest, const T *source, size_t nelems))                              \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##_alltoalls, "TYPE_alltoalls",                                  \
                   (shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems))
#define API_REDUCE(HD_SIDE, STREAM_SIDE, op, name, T)                                                         \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##op##_reduce, "TYPE_OP_reduce",                                 \
                   (shmem_team_t team, T *dest, const T *source, size_t nreduce))                             \
    API_COLL_TYPED(HD_SIDE, STREAM_SIDE, name##op##_reducescatter, "TYPE_OP_reducescatter",                   \
                   (shmem_team_t team, T *dest, const T *source, size_t nreduce))
#define API_MOVE_STD(name, T) API_MOVE(HD_C, HOST_C, name, T)
#define API_MOVE_EXT(name, T) API_MOVE(HD, HOST, name, T)
#define API_REDUCE_STD(op, OPC, name, T, DT) API_REDUCE(HD_C, HOST_C, op, name, T)
#define API_REDUCE_EXT(op, OPC, name, T, DT) API_REDUCE(HD, HOST, op, name, T)

static const api_row_t setup_forms[] = {GSHMEM_RMA_TYPES(API_TYPED_ON_STREAM)};
static const api_row_t signal_forms[] = {GSHMEM_SYNC_TYPES(API_WAIT_ON_STREAM)};
static const api_row_t coll_forms[] = {
    API_BARRIER_SCOPE(_warp) API_BARRIER_SCOPE(_block)
    GSHMEM_RMA_TYPES(API_MOVE_STD) GSHMEM_RMA_EXT_TYPES(API_MOVE_EXT)
    GSHMEM_REDUCE_PAIRS(API_REDUCE_STD) GSHMEM_REDUCE_EXT_PAIRS(API_REDUCE_EXT)
    /* the untyped forms; their C and on-stream forms are plain definitions of gshmem/coll.h */
    API_COLL_FORMS(HD, broadcastmem, "broadcastmem", (shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root))
    API_COLL_FORMS(HD, fcollectmem, "fcollectmem", (shmem_team_t team, void *dest, const void *source, size_t nelems))
    API_COLL_FORMS(HD, collectmem, "collectmem", (shmem_team_t team, void *dest, const void *source, size_t nelems))
    API_COLL_FORMS(HD, alltoallmem, "alltoallmem", (shmem_team_t team, void *dest, const void *source, size_t nelems))};

/* ---- the type lists, as the page's TYPE, OP and SIZE ---- */
typedef struct {
    const char *a, *b;
} api_pair_t;
#define API_TYPE(name, T) {#name, #T},
#define API_SIZE(bits, bytes) {#bits, #bytes},
#define API_OP_TYPE(op, OPC, name, T, DT) {#op, #name},
static const api_pair_t rma_types[] = {GSHMEM_RMA_TYPES(API_TYPE)};
static const api_pair_t rma_ext_types[] = {GSHMEM_RMA_EXT_TYPES(API_TYPE)};
static const api_pair_t sync_types[] = {GSHMEM_SYNC_TYPES(API_TYPE)};
static const api_pair_t amo_types[] = {GSHMEM_AMO_TYPES(API_TYPE)};
static const api_pair_t amo_ext_types[] = {GSHMEM_AMO_EXTENDED_TYPES(API_TYPE)};
static const api_pair_t amo_bit_types[] = {GSHMEM_AMO_BITWISE_TYPES(API_TYPE)};
static const api_pair_t rma_sizes[] = {GSHMEM_RMA_SIZES(API_SIZE)};
static const api_pair_t reduce_pairs[] = {GSHMEM_REDUCE_PAIRS(API_OP_TYPE)};
static const api_pair_t reduce_ext_pairs[] = {GSHMEM_REDUCE_EXT_PAIRS(API_OP_TYPE)};
#define API_N(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *list, *file; /* file under include/ */
    const api_pair_t *rows;
    size_t n;
    int is_pairs; /* reduction pairs: (op, type) */
} api_list_t;
static const api_list_t api_lists[] = {
    {"GSHMEM_RMA_TYPES", "gshmem/types.h", rma_types, API_N(rma_types), 0},
    {"GSHMEM_RMA_EXT_TYPES", "gshmem/rma.h", rma_ext_types, API_N(rma_ext_types), 0},
    {"GSHMEM_SYNC_TYPES", "gshmem/types.h", sync_types, API_N(sync_types), 0},
    {"GSHMEM_AMO_TYPES", "gshmem/types.h", amo_types, API_N(amo_types), 0},
    {"GSHMEM_AMO_EXTENDED_TYPES", "gshmem/types.h", amo_ext_types, API_N(amo_ext_types), 0},
    {"GSHMEM_AMO_BITWISE_TYPES", "gshmem/types.h", amo_bit_types, API_N(amo_bit_types), 0},
    {"GSHMEM_RMA_SIZES", "gshmem/types.h", rma_sizes, API_N(rma_sizes), 0},
    {"GSHMEM_REDUCE_PAIRS", "gshmem/types.h", reduce_pairs, API_N(reduce_pairs), 1},
    {"GSHMEM_REDUCE_EXT_PAIRS", "gshmem/types.h", reduce_ext_pairs, API_N(reduce_ext_pairs), 1},
};

/* ---- what each form does, and the row that makes it ----
 * at: the header (under include/), the macro whose body holds the row (NULL: the whole file) and
 * a piece of the row's text (NULL: the macro's #define line). A plain declaration has no at: its
 * line is where parse_plain finds it. An atomic's row is its operation's row (its operands make
 * the signature); other rows are the GSHMEMI_HOSTDEV/GSHMEMI_DEVONLY row or the function the
 * generator writes. */
typedef struct {
    const char *file, *macro, *key;
} api_at_t;
typedef struct {
    const char *form, *meaning;
    api_at_t at[2];
} api_form_t;

#define RMA "gshmem/rma.h"
#define AMO "gshmem/amo.h"
#define COLL "gshmem/coll.h"
#define COLLD "gshmem/coll.cuh"
#define DEVH "gshmem/device.cuh"
#define TOP "gshmem.h"
#define AT_MEM {RMA, "GSHMEMI_RMA_MEM", "shmem_##dir##mem##nbi,"}
#define AT_MEM_WARP {RMA, "GSHMEMI_RMA_MEM", "shmemx_##dir##mem##nbi##_warp,"}
#define AT_MEM_BLOCK {RMA, "GSHMEMI_RMA_MEM", "shmemx_##dir##mem##nbi##_block,"}
#define AT_BULK {RMA, "GSHMEMI_RMA_TYPED_BULK", "shmem_##name##_##dir##nbi,"}
#define AT_BULK_WARP {RMA, "GSHMEMI_RMA_TYPED_BULK", "shmemx_##name##_##dir##nbi##_warp,"}
#define AT_BULK_BLOCK {RMA, "GSHMEMI_RMA_TYPED_BULK", "shmemx_##name##_##dir##nbi##_block,"}
#define AT_SIZED {RMA, "GSHMEMI_RMA_SIZED_BULK", "shmem_##dir##bits##nbi,"}
#define AT_STRIDED {RMA, "GSHMEMI_RMA_STRIDED", "pfx##dir##name,"}
#define AT_STD(op) {AMO, "GSHMEMI_AMO_STD_OPS", "X(name, T, " #op ","}
#define AT_EXT(op) {AMO, "GSHMEMI_AMO_EXT_OPS", "X(name, T, " #op ","}
#define AT_BIT(op) {AMO, "GSHMEMI_AMO_BIT_OPS", "X(name, T, " #op ","}
#define AT_SIG {AMO, "GSHMEMI_SIGNAL_MEM", "shmem_putmem_signal##nbi,"}
#define AT_SIG_WARP {AMO, "GSHMEMI_SIGNAL_MEM", "shmemx_putmem_signal##nbi##_warp,"}
#define AT_SIG_BLOCK {AMO, "GSHMEMI_SIGNAL_MEM", "shmemx_putmem_signal##nbi##_block,"}
#define AT_TSIG {AMO, "GSHMEMI_SIGNAL_TYPED_NBI", "shmem_##name##_put_signal##nbi,"}
#define AT_TSIG_WARP {AMO, "GSHMEMI_SIGNAL_TYPED_NBI", "shmemx_##name##_put_signal##nbi##_warp,"}
#define AT_TSIG_BLOCK {AMO, "GSHMEMI_SIGNAL_TYPED_NBI", "shmemx_##name##_put_signal##nbi##_block,"}
#define AT_SYNC(what) {AMO, "GSHMEMI_SYNC_VECTOR", "shmem_##name##_" #what "##vec,"}
#define AT_DMOVE(c) {COLLD, "GSHMEMI_DEVICE_MOVE", "GSHMEMI_DEVICE_COLL_FORMS(name##_" #c ","}
#define AT_HMOVE(c) {COLL, "GSHMEMI_COLL_MOVE_FORMS", "PFX##name##_" #c "##SFX("}
#define AT_DRED(c) {COLLD, "GSHMEMI_DEVICE_REDUCE", "GSHMEMI_DEVICE_COLL_FORMS(name##op##_" #c ","}
#define AT_HRED(c) {COLL, "GSHMEMI_COLL_REDUCE_FORMS", "PFX##name##op##_" #c "##SFX("}
#define AT_DMEM(c) {COLLD, NULL, "GSHMEMI_DEVICE_COLL_FORMS(" #c ","}
#define AT_BAR(pat) {DEVH, "GSHMEMI_DEFINE_BARRIER_SCOPE", pat}
#define NOWHERE {NULL, NULL, NULL}
/* the four forms of one collective: shmem_X, shmemx_X_warp, _block, _grid (and _on_stream); at_dev
 * and at_host are the names of AT_ macros, so that their commas stay out of this macro's arguments */
#define COLL_MEANINGS(form, what, at_dev, c, at_host)                                                         \
    {"shmem_" form, what, {at_dev(c), at_host(c)}},                                                           \
    {"shmemx_" form "_warp", what ", by the calling warp", {at_dev(c), NOWHERE}},                            \
    {"shmemx_" form "_block", what ", by the calling thread block", {at_dev(c), NOWHERE}},                   \
    {"shmemx_" form "_grid", what ", by every thread of a cooperative launch", {at_dev(c), NOWHERE}}
#define COLL_MEANINGS_STREAM(form, what, at_dev, c, at_host)                                                  \
    COLL_MEANINGS(form, what, at_dev, c, at_host),                                                            \
    {"shmemx_" form "_on_stream", what ", enqueued on stream", {at_host(c), NOWHERE}}
#define AT_NONE(c) NOWHERE

static const api_form_t api_forms[] = {
    /* gshmem.h */
    {"shmem_init", "initializes this PE: the bootstrap, the symmetric heap, the peers' routes", {NOWHERE, NOWHERE}},
    {"shmem_finalize", "releases what shmem_init made, after a barrier of all PEs", {NOWHERE, NOWHERE}},
    {"shmem_global_exit", "ends every PE of the job with status", {NOWHERE, NOWHERE}},
    {"shmem_info_get_version", "the OpenSHMEM version implemented (1.5)", {NOWHERE, NOWHERE}},
    {"shmem_info_get_name", "the vendor string, into SHMEM_MAX_NAME_LEN bytes", {NOWHERE, NOWHERE}},
    {"shmem_init_thread", "shmem_init with a thread level; SHMEM_THREAD_FUNNELED at most is provided", {NOWHERE, NOWHERE}},
    {"shmem_query_thread", "the thread level provided at initialization", {NOWHERE, NOWHERE}},
    {"shmem_pe_accessible", "1 if pe can be reached (every PE of the job can)", {NOWHERE, NOWHERE}},
    {"shmem_addr_accessible", "1 if addr is symmetric and reachable on pe", {NOWHERE, NOWHERE}},
    {"shmemx_get_uniqueid", "a unique id for the unique-id bootstrap (rank 0 makes it and passes it on)", {NOWHERE, NOWHERE}},
    {"shmemx_set_attr_uniqueid_args", "fills attr with this rank, the rank count and the unique id", {NOWHERE, NOWHERE}},
    {"shmemx_init_attr", "shmem_init through the bootstrap that flags name (SHMEMX_INIT_WITH_UNIQUEID: attr's id)", {NOWHERE, NOWHERE}},
    {"shmem_malloc", "size bytes of symmetric memory (collective over all PEs)", {NOWHERE, NOWHERE}},
    {"shmem_calloc", "count x size bytes of zeroed symmetric memory (collective)", {NOWHERE, NOWHERE}},
    {"shmem_align", "size bytes of symmetric memory aligned to alignment (collective)", {NOWHERE, NOWHERE}},
    {"shmem_free", "frees symmetric memory (collective)", {NOWHERE, NOWHERE}},
    {"shmemx_barrier_all_on_stream", "shmem_barrier_all, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_quiet_on_stream", "completes this PE's earlier puts when stream reaches it", {NOWHERE, NOWHERE}},
    {"shmemx_putmem_on_stream", "shmem_putmem, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_getmem_on_stream", "shmem_getmem, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_TYPE_put_on_stream", "shmem_TYPE_put, enqueued on stream", {{TOP, "GSHMEMI_DEFINE_TYPED_ON_STREAM", "shmemx_##name##_put_on_stream("}, NOWHERE}},
    {"shmemx_TYPE_get_on_stream", "shmem_TYPE_get, enqueued on stream", {{TOP, "GSHMEMI_DEFINE_TYPED_ON_STREAM", "shmemx_##name##_get_on_stream("}, NOWHERE}},
    /* gshmem/rma.h: GSHMEMI_CORE_FAMILY */
    {"shmem_my_pe", "this PE's number in the world team", {{RMA, "GSHMEMI_CORE_FAMILY", "shmem_my_pe,"}, NOWHERE}},
    {"shmem_n_pes", "the number of PEs of the job", {{RMA, "GSHMEMI_CORE_FAMILY", "shmem_n_pes,"}, NOWHERE}},
    {"shmem_ptr", "a load/store address of dest on pe; NULL where pe is not reached by load/store", {{RMA, "GSHMEMI_CORE_FAMILY", "shmem_ptr,"}, NOWHERE}},
    {"shmem_quiet", "completes every earlier put, AMO and signal of this thread, to every PE", {{RMA, "GSHMEMI_CORE_FAMILY", "shmem_quiet,"}, NOWHERE}},
    {"shmem_fence", "orders this thread's earlier puts to each PE before its later ones", {{RMA, "GSHMEMI_CORE_FAMILY", "shmem_fence,"}, NOWHERE}},
    {"shmem_barrier_all", "quiet, then waits for every PE (device: one thread per PE)", {{RMA, "GSHMEMI_CORE_FAMILY", "shmem_barrier_all,"}, NOWHERE}},
    /* GSHMEMI_RMA_MEM */
    {"shmem_putmem", "copies nelems bytes from source to dest on pe; returns once source may be reused", {AT_MEM, NOWHERE}},
    {"shmem_getmem", "copies nelems bytes from source on pe to dest", {AT_MEM, NOWHERE}},
    {"shmem_putmem_nbi", "starts copying nelems bytes to dest on pe; complete at the next shmem_quiet", {AT_MEM, NOWHERE}},
    {"shmem_getmem_nbi", "starts copying nelems bytes from source on pe; complete at the next shmem_quiet", {AT_MEM, NOWHERE}},
    {"shmemx_putmem_warp", "shmem_putmem by the calling warp", {AT_MEM_WARP, NOWHERE}},
    {"shmemx_getmem_warp", "shmem_getmem by the calling warp", {AT_MEM_WARP, NOWHERE}},
    {"shmemx_putmem_nbi_warp", "shmem_putmem_nbi by the calling warp", {AT_MEM_WARP, NOWHERE}},
    {"shmemx_getmem_nbi_warp", "shmem_getmem_nbi by the calling warp", {AT_MEM_WARP, NOWHERE}},
    {"shmemx_putmem_block", "shmem_putmem by the calling thread block", {AT_MEM_BLOCK, NOWHERE}},
    {"shmemx_getmem_block", "shmem_getmem by the calling thread block", {AT_MEM_BLOCK, NOWHERE}},
    {"shmemx_putmem_nbi_block", "shmem_putmem_nbi by the calling thread block", {AT_MEM_BLOCK, NOWHERE}},
    {"shmemx_getmem_nbi_block", "shmem_getmem_nbi by the calling thread block", {AT_MEM_BLOCK, NOWHERE}},
    /* GSHMEMI_RMA_TYPED_BULK, GSHMEMI_RMA_TYPED */
    {"shmem_TYPE_put", "copies nelems elements from source to dest on pe; returns once source may be reused", {AT_BULK, NOWHERE}},
    {"shmem_TYPE_get", "copies nelems elements from source on pe to dest", {AT_BULK, NOWHERE}},
    {"shmem_TYPE_put_nbi", "starts copying nelems elements to dest on pe; complete at the next shmem_quiet", {AT_BULK, NOWHERE}},
    {"shmem_TYPE_get_nbi", "starts copying nelems elements from source on pe; complete at the next shmem_quiet", {AT_BULK, NOWHERE}},
    {"shmemx_TYPE_put_warp", "shmem_TYPE_put by the calling warp", {AT_BULK_WARP, NOWHERE}},
    {"shmemx_TYPE_get_warp", "shmem_TYPE_get by the calling warp", {AT_BULK_WARP, NOWHERE}},
    {"shmemx_TYPE_put_nbi_warp", "shmem_TYPE_put_nbi by the calling warp", {AT_BULK_WARP, NOWHERE}},
    {"shmemx_TYPE_get_nbi_warp", "shmem_TYPE_get_nbi by the calling warp", {AT_BULK_WARP, NOWHERE}},
    {"shmemx_TYPE_put_block", "shmem_TYPE_put by the calling thread block", {AT_BULK_BLOCK, NOWHERE}},
    {"shmemx_TYPE_get_block", "shmem_TYPE_get by the calling thread block", {AT_BULK_BLOCK, NOWHERE}},
    {"shmemx_TYPE_put_nbi_block", "shmem_TYPE_put_nbi by the calling thread block", {AT_BULK_BLOCK, NOWHERE}},
    {"shmemx_TYPE_get_nbi_block", "shmem_TYPE_get_nbi by the calling thread block", {AT_BULK_BLOCK, NOWHERE}},
    {"shmem_TYPE_p", "stores value into dest on pe (visible at the next fence or quiet)", {{RMA, "GSHMEMI_RMA_TYPED", "shmem_##name##_p,"}, NOWHERE}},
    {"shmem_TYPE_g", "loads source from pe", {{RMA, "GSHMEMI_RMA_TYPED", "shmem_##name##_g,"}, NOWHERE}},
    {"shmem_TYPE_iput", "strided put: nelems elements, every sst-th of source to every dst-th of dest on pe", {AT_STRIDED, NOWHERE}},
    {"shmem_TYPE_iget", "strided get: nelems elements, every sst-th of source on pe to every dst-th of dest", {AT_STRIDED, NOWHERE}},
    {"shmemx_TYPE_iput_block", "shmem_TYPE_iput by the calling thread block", {{RMA, "GSHMEMI_RMA_TYPED", "shmemx_##name##_iput_block,"}, NOWHERE}},
    {"shmemx_TYPE_iget_block", "shmem_TYPE_iget by the calling thread block", {{RMA, "GSHMEMI_RMA_TYPED", "shmemx_##name##_iget_block,"}, NOWHERE}},
    /* GSHMEMI_RMA_SIZED_BULK, GSHMEMI_RMA_SIZED */
    {"shmem_putSIZE", "copies nelems elements of SIZE bits from source to dest on pe", {AT_SIZED, NOWHERE}},
    {"shmem_getSIZE", "copies nelems elements of SIZE bits from source on pe to dest", {AT_SIZED, NOWHERE}},
    {"shmem_putSIZE_nbi", "shmem_putSIZE, complete at the next shmem_quiet", {AT_SIZED, NOWHERE}},
    {"shmem_getSIZE_nbi", "shmem_getSIZE, complete at the next shmem_quiet", {AT_SIZED, NOWHERE}},
    {"shmem_iputSIZE", "strided put of elements of SIZE bits (strides in elements)", {AT_STRIDED, NOWHERE}},
    {"shmem_igetSIZE", "strided get of elements of SIZE bits (strides in elements)", {AT_STRIDED, NOWHERE}},
    /* gshmem/amo.h: GSHMEMI_AMO_STD_OPS, _EXT_OPS, _BIT_OPS */
    {"shmem_TYPE_atomic_compare_swap", "stores value into dest on pe if it holds cond; returns the old value", {AT_STD(compare_swap), NOWHERE}},
    {"shmem_TYPE_atomic_compare_swap_nbi", "shmem_TYPE_atomic_compare_swap, the old value stored to fetch", {AT_STD(compare_swap), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_inc", "adds 1 to dest on pe; returns the old value", {AT_STD(fetch_inc), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_inc_nbi", "shmem_TYPE_atomic_fetch_inc, the old value stored to fetch", {AT_STD(fetch_inc), NOWHERE}},
    {"shmem_TYPE_atomic_inc", "adds 1 to dest on pe", {AT_STD(inc), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_add", "adds value to dest on pe; returns the old value", {AT_STD(fetch_add), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_add_nbi", "shmem_TYPE_atomic_fetch_add, the old value stored to fetch", {AT_STD(fetch_add), NOWHERE}},
    {"shmem_TYPE_atomic_add", "adds value to dest on pe", {AT_STD(add), NOWHERE}},
    {"shmem_TYPE_atomic_fetch", "reads source on pe atomically", {AT_EXT(fetch), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_nbi", "shmem_TYPE_atomic_fetch, the value stored to fetch", {AT_EXT(fetch), NOWHERE}},
    {"shmem_TYPE_atomic_set", "stores value into dest on pe atomically", {AT_EXT(set), NOWHERE}},
    {"shmem_TYPE_atomic_swap", "stores value into dest on pe; returns the old value", {AT_EXT(swap), NOWHERE}},
    {"shmem_TYPE_atomic_swap_nbi", "shmem_TYPE_atomic_swap, the old value stored to fetch", {AT_EXT(swap), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_and", "ANDs value into dest on pe; returns the old value", {AT_BIT(fetch_and), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_and_nbi", "shmem_TYPE_atomic_fetch_and, the old value stored to fetch", {AT_BIT(fetch_and), NOWHERE}},
    {"shmem_TYPE_atomic_and", "ANDs value into dest on pe", {AT_BIT(and), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_or", "ORs value into dest on pe; returns the old value", {AT_BIT(fetch_or), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_or_nbi", "shmem_TYPE_atomic_fetch_or, the old value stored to fetch", {AT_BIT(fetch_or), NOWHERE}},
    {"shmem_TYPE_atomic_or", "ORs value into dest on pe", {AT_BIT(or), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_xor", "XORs value into dest on pe; returns the old value", {AT_BIT(fetch_xor), NOWHERE}},
    {"shmem_TYPE_atomic_fetch_xor_nbi", "shmem_TYPE_atomic_fetch_xor, the old value stored to fetch", {AT_BIT(fetch_xor), NOWHERE}},
    {"shmem_TYPE_atomic_xor", "XORs value into dest on pe", {AT_BIT(xor), NOWHERE}},
    /* GSHMEMI_SIGNAL_FAMILY */
    {"shmem_putmem_signal", "shmem_putmem, then updates sig_addr on pe by sig_op (SET or ADD) with signal, after the data", {AT_SIG, NOWHERE}},
    {"shmem_putmem_signal_nbi", "shmem_putmem_signal, complete at the next shmem_quiet", {AT_SIG, NOWHERE}},
    {"shmemx_putmem_signal_warp", "shmem_putmem_signal by the calling warp", {AT_SIG_WARP, NOWHERE}},
    {"shmemx_putmem_signal_nbi_warp", "shmem_putmem_signal_nbi by the calling warp", {AT_SIG_WARP, NOWHERE}},
    {"shmemx_putmem_signal_block", "shmem_putmem_signal by the calling thread block", {AT_SIG_BLOCK, NOWHERE}},
    {"shmemx_putmem_signal_nbi_block", "shmem_putmem_signal_nbi by the calling thread block", {AT_SIG_BLOCK, NOWHERE}},
    {"shmem_TYPE_put_signal", "shmem_TYPE_put, then updates sig_addr on pe by sig_op with signal, after the data", {AT_TSIG, NOWHERE}},
    {"shmem_TYPE_put_signal_nbi", "shmem_TYPE_put_signal, complete at the next shmem_quiet", {AT_TSIG, NOWHERE}},
    {"shmemx_TYPE_put_signal_warp", "shmem_TYPE_put_signal by the calling warp", {AT_TSIG_WARP, NOWHERE}},
    {"shmemx_TYPE_put_signal_nbi_warp", "shmem_TYPE_put_signal_nbi by the calling warp", {AT_TSIG_WARP, NOWHERE}},
    {"shmemx_TYPE_put_signal_block", "shmem_TYPE_put_signal by the calling thread block", {AT_TSIG_BLOCK, NOWHERE}},
    {"shmemx_TYPE_put_signal_nbi_block", "shmem_TYPE_put_signal_nbi by the calling thread block", {AT_TSIG_BLOCK, NOWHERE}},
    {"shmemx_signal_op", "updates sig_addr on pe by sig_op with signal, without data (a release)", {{AMO, "GSHMEMI_SIGNAL_FAMILY", "shmemx_signal_op,"}, NOWHERE}},
    {"shmem_signal_fetch", "reads the local signal word sig_addr (an acquire)", {{AMO, "GSHMEMI_SIGNAL_FAMILY", "shmem_signal_fetch,"}, NOWHERE}},
    {"shmem_signal_wait_until", "waits until the local sig_addr compares cmp to cmp_value; returns the value seen", {{AMO, "GSHMEMI_SIGNAL_FAMILY", "shmem_signal_wait_until,"}, NOWHERE}},
    {"shmemx_putmem_signal_on_stream", "shmem_putmem_signal, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_signal_wait_until_on_stream", "later work on stream starts once the local sig_addr compares cmp to value", {NOWHERE, NOWHERE}},
    {"shmemx_TYPE_wait_until_on_stream", "later work on stream starts once the local ivar compares cmp to value", {{AMO, "GSHMEMI_DECL_WAIT_ON_STREAM", "shmemx_##name##_wait_until_on_stream("}, NOWHERE}},
    /* GSHMEMI_SYNC_FAMILY */
    {"shmem_TYPE_wait_until", "waits until the local ivar compares cmp to value (an acquire; bounded by GSHMEM_DEVICE_WAIT_TIMEOUT)", {{AMO, "GSHMEMI_WAIT_UNTIL_TYPED", "shmem_##name##_wait_until,"}, NOWHERE}},
    {"shmem_TYPE_wait_until_all", "waits until every ivars[i] not excluded by status compares cmp to cmp_value", {AT_SYNC(wait_until_all), NOWHERE}},
    {"shmem_TYPE_wait_until_any", "waits until one ivars[i] not excluded by status compares cmp to cmp_value; returns its index", {AT_SYNC(wait_until_any), NOWHERE}},
    {"shmem_TYPE_wait_until_some", "waits until some ivars[i] compare cmp to cmp_value; their indices into indices, returns their count", {AT_SYNC(wait_until_some), NOWHERE}},
    {"shmem_TYPE_wait_until_all_vector", "shmem_TYPE_wait_until_all against cmp_values[i] each", {AT_SYNC(wait_until_all), NOWHERE}},
    {"shmem_TYPE_wait_until_any_vector", "shmem_TYPE_wait_until_any against cmp_values[i] each", {AT_SYNC(wait_until_any), NOWHERE}},
    {"shmem_TYPE_wait_until_some_vector", "shmem_TYPE_wait_until_some against cmp_values[i] each", {AT_SYNC(wait_until_some), NOWHERE}},
    {"shmem_TYPE_test", "1 if the local ivar compares cmp to cmp_value, else 0 (does not wait)", {{AMO, "GSHMEMI_SYNC_TYPED", "shmem_##name##_test,"}, NOWHERE}},
    {"shmem_TYPE_test_all", "1 if every ivars[i] not excluded by status compares cmp to cmp_value (does not wait)", {AT_SYNC(test_all), NOWHERE}},
    {"shmem_TYPE_test_any", "the index of one ivars[i] that compares cmp to cmp_value, or SIZE_MAX (does not wait)", {AT_SYNC(test_any), NOWHERE}},
    {"shmem_TYPE_test_some", "the indices of the ivars[i] that compare cmp to cmp_value into indices, and their count (does not wait)", {AT_SYNC(test_some), NOWHERE}},
    {"shmem_TYPE_test_all_vector", "shmem_TYPE_test_all against cmp_values[i] each", {AT_SYNC(test_all), NOWHERE}},
    {"shmem_TYPE_test_any_vector", "shmem_TYPE_test_any against cmp_values[i] each", {AT_SYNC(test_any), NOWHERE}},
    {"shmem_TYPE_test_some_vector", "shmem_TYPE_test_some against cmp_values[i] each", {AT_SYNC(test_some), NOWHERE}},
    /* gshmem/coll.h, gshmem/coll.cuh, gshmem/device.cuh: teams and barriers */
    {"shmem_team_split_strided", "a new team of size PEs of parent_team from start by stride (collective over the parent)", {NOWHERE, NOWHERE}},
    {"shmem_team_split_2d", "splits parent_team into rows of xrange PEs and the columns across them (collective)", {NOWHERE, NOWHERE}},
    {"shmem_team_get_config", "the configuration team was made with, for the fields of config_mask", {NOWHERE, NOWHERE}},
    {"shmem_team_destroy", "destroys team (collective over it)", {NOWHERE, NOWHERE}},
    {"shmem_team_my_pe", "this PE's number in team, or -1", {NOWHERE, NOWHERE}},
    {"shmem_team_n_pes", "the number of PEs of team, or -1", {NOWHERE, NOWHERE}},
    {"shmem_team_translate_pe", "the number in dest_team of src_team's PE src_pe, or -1", {NOWHERE, NOWHERE}},
    {"shmem_barrier", "quiet, then waits for every PE of team", {NOWHERE, NOWHERE}},
    {"shmem_sync", "waits for every PE of team (orders no memory by itself)", {NOWHERE, NOWHERE}},
    {"shmem_sync_all", "shmem_sync over the world team", {NOWHERE, NOWHERE}},
    {"shmemx_barrier_on_stream", "shmem_barrier, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_sync_on_stream", "shmem_sync, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_sync_all_on_stream", "shmem_sync_all, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_barrier_all_warp", "shmem_barrier_all by the calling warp", {AT_BAR("shmemx_barrier_all##sfx("), NOWHERE}},
    {"shmemx_barrier_warp", "shmem_barrier by the calling warp", {AT_BAR("shmemx_barrier##sfx("), NOWHERE}},
    {"shmemx_sync_warp", "shmem_sync by the calling warp", {AT_BAR("shmemx_sync##sfx("), NOWHERE}},
    {"shmemx_sync_all_warp", "shmem_sync_all by the calling warp", {AT_BAR("shmemx_sync_all##sfx("), NOWHERE}},
    {"shmemx_barrier_all_block", "shmem_barrier_all by the calling thread block", {AT_BAR("shmemx_barrier_all##sfx("), NOWHERE}},
    {"shmemx_barrier_block", "shmem_barrier by the calling thread block", {AT_BAR("shmemx_barrier##sfx("), NOWHERE}},
    {"shmemx_sync_block", "shmem_sync by the calling thread block", {AT_BAR("shmemx_sync##sfx("), NOWHERE}},
    {"shmemx_sync_all_block", "shmem_sync_all by the calling thread block", {AT_BAR("shmemx_sync_all##sfx("), NOWHERE}},
    {"shmemx_collective_launch_query_gridsize", "the most CTAs of block that can run func at once on this PE's GPU", {NOWHERE, NOWHERE}},
    {"shmemx_collective_launch", "a cooperative launch of func, refused with the reason where the grid cannot be resident at once", {NOWHERE, NOWHERE}},
    /* the collectives */
    COLL_MEANINGS_STREAM("TYPE_broadcast", "copies nelems elements of source on team's PE PE_root into dest on every member", AT_DMOVE, broadcast, AT_HMOVE),
    COLL_MEANINGS_STREAM("TYPE_fcollect", "concatenates every member's nelems elements of source into dest, in team order", AT_DMOVE, fcollect, AT_HMOVE),
    COLL_MEANINGS_STREAM("TYPE_collect", "concatenates every member's source (nelems each, may differ) into dest, in team order", AT_DMOVE, collect, AT_HMOVE),
    COLL_MEANINGS_STREAM("TYPE_alltoall", "sends the j-th block of nelems elements of source to member j, into its dest at this PE's index", AT_DMOVE, alltoall, AT_HMOVE),
    COLL_MEANINGS_STREAM("TYPE_alltoalls", "shmem_TYPE_alltoall with strides dst and sst, in elements", AT_DMOVE, alltoalls, AT_HMOVE),
    COLL_MEANINGS_STREAM("TYPE_OP_reduce", "reduces nreduce elements of source over team with the OP operator; every member gets the result in dest", AT_DRED, reduce, AT_HRED),
    COLL_MEANINGS_STREAM("TYPE_OP_reducescatter", "reduces source over team with the OP operator; each member gets its part of nreduce elements in dest", AT_DRED, reducescatter, AT_HRED),
    COLL_MEANINGS("broadcastmem", "a broadcast of nelems bytes", AT_DMEM, broadcastmem, AT_NONE),
    COLL_MEANINGS("fcollectmem", "an fcollect of nelems bytes each", AT_DMEM, fcollectmem, AT_NONE),
    COLL_MEANINGS("collectmem", "a collect of nelems bytes each", AT_DMEM, collectmem, AT_NONE),
    COLL_MEANINGS("alltoallmem", "an alltoall of nelems bytes a block", AT_DMEM, alltoallmem, AT_NONE),
    {"shmemx_broadcastmem_on_stream", "shmem_broadcastmem, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_fcollectmem_on_stream", "shmem_fcollectmem, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_collectmem_on_stream", "shmem_collectmem, enqueued on stream", {NOWHERE, NOWHERE}},
    {"shmemx_alltoallmem_on_stream", "shmem_alltoallmem, enqueued on stream", {NOWHERE, NOWHERE}},
    /* gshmem/engine.h */
    {"shmemx_engine_create", "starts a collective engine (collective over all PEs; attr may be NULL)", {NOWHERE, NOWHERE}},
    {"shmemx_engine_register", "registers a collective with the engine, its handle into id (collective over desc->team)", {NOWHERE, NOWHERE}},
    {"shmemx_engine_submit", "queues one call of collective id; its ticket into ticket", {NOWHERE, NOWHERE}},
    {"shmemx_engine_submit_cb", "shmemx_engine_submit, and cb(arg, ticket) runs on the engine's host thread once it completes", {NOWHERE, NOWHERE}},
    {"shmemx_engine_test", "*done = 1 once the request of ticket is complete", {NOWHERE, NOWHERE}},
    {"shmemx_engine_wait", "waits until the request of ticket is complete, at most timeout_s seconds", {NOWHERE, NOWHERE}},
    {"shmemx_engine_stream_wait", "later work on stream starts once the request of ticket is complete", {NOWHERE, NOWHERE}},
    {"shmemx_engine_stats", "the engine's counters (preemptions, exits, launches)", {NOWHERE, NOWHERE}},
    {"shmemx_engine_destroy", "waits for every request, stops the daemon and frees the engine (collective)", {NOWHERE, NOWHERE}},
};

/* ---- the headers' text ---- */
static const char *const hdr_names[] = {"gshmem.h", "gshmem/types.h", "gshmem/rma.h", "gshmem/amo.h", "gshmem/coll.h",
                                        "gshmem/coll.cuh", "gshmem/device.cuh", "gshmem/engine.h"};
#define N_HDRS (sizeof(hdr_names) / sizeof(hdr_names[0]))
typedef struct {
    const char *rel; /* under include/ */
    char *text;      /* the file */
    char *code;      /* the file with comments, literals and preprocessor lines blanked */
    char **lines;    /* lines[i]: line i + 1 of text, NUL-terminated */
    unsigned char *lang; /* lang[i]: L_C | L_CUDA, who sees line i + 1 */
    int n;
} api_hdr_t;

typedef struct {
    char *name, *ret, *params, *meaning;
    unsigned where;
    int section;
    const api_form_t *form;
    char at[3][80];
    int n_at;
} api_entry_t;

typedef struct {
    api_hdr_t hdr[N_HDRS];
    api_entry_t *e;
    size_t n, cap;
    unsigned char used[sizeof(api_forms) / sizeof(api_forms[0])];
} api_ctx_t;

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "gshmem-info --api: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return -1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* Blanks comments, string and character literals (their newlines kept) in code. */
static void blank_comments(char *c)
{
    for (char *p = c; *p;) {
        if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            char *stop = end ? end + 2 : p + strlen(p);
            for (; p < stop; p++)
                if (*p != '\n') *p = ' ';
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++) *p = ' ';
        } else if (*p == '"' || *p == '\'') {
            char q = *p;
            *p++ = ' ';
            for (; *p && *p != q && *p != '\n'; p++) {
                if (*p == '\\' && p[1]) *p++ = ' ';
                *p = ' ';
            }
            if (*p == q) *p++ = ' ';
        } else {
            p++;
        }
    }
}

/* Splits h->text into lines, blanks h->code's preprocessor lines and sets who sees each line:
 * inside #ifndef __CUDACC__ only C, inside #ifdef __CUDACC__ only CUDA (and the reverse after
 * #else); a .cuh file only CUDA. */
static int load_header(api_hdr_t *h, const char *dir, const char *rel)
{
    char path[4096];
    unsigned char stack[64];
    int depth = 0, cont = 0;
    const unsigned file_lang = strstr(rel, ".cuh") ? L_CUDA : L_C | L_CUDA;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    h->rel = rel;
    if (!(h->text = read_file(path))) return fail("cannot read %s%s (give the folder holding gshmem.h: --api DIR)", path, "");
    if (!(h->code = strdup(h->text))) return fail("out of memory reading %s%s", path, "");
    blank_comments(h->code);
    h->n = 1;
    for (const char *p = h->text; *p; p++) h->n += *p == '\n';
    h->lines = calloc((size_t)h->n, sizeof(*h->lines));
    h->lang = calloc((size_t)h->n, 1);
    if (!h->lines || !h->lang) return fail("out of memory reading %s%s", path, "");
    char *line = h->text, *code = h->code;
    for (int i = 0; i < h->n; i++) {
        char *nl = strchr(line, '\n'), *cnl = strchr(code, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line), clen = cnl ? (size_t)(cnl - code) : strlen(code);
        const char *s = code + strspn(code, " \t");
        unsigned lang = file_lang;
        for (int d = 0; d < depth; d++) lang &= stack[d];
        if (!cont && *s == '#') { /* a directive: follow the conditionals on __CUDACC__ */
            char word[16] = "", arg[32] = "";
            sscanf(s + 1, " %15[a-z] %31[A-Za-z_]", word, arg);
            if (!strcmp(word, "if") || !strcmp(word, "ifdef") || !strcmp(word, "ifndef")) {
                if (depth == 64) return fail("%s: conditionals nested too deep%s", rel, "");
                stack[depth++] = strcmp(arg, "__CUDACC__") ? L_C | L_CUDA : !strcmp(word, "ifdef") ? L_CUDA : L_C;
            } else if (!strcmp(word, "else") && depth) {
                stack[depth - 1] = stack[depth - 1] == L_CUDA ? L_C : stack[depth - 1] == L_C ? L_CUDA : L_C | L_CUDA;
            } else if (!strcmp(word, "elif") && depth) {
                stack[depth - 1] = L_C | L_CUDA;
            } else if (!strcmp(word, "endif") && depth) {
                depth--;
            }
        }
        if (cont || *s == '#') { /* a directive or its continuation: no declaration there */
            cont = clen > 0 && code[clen - 1] == '\\';
            memset(code, ' ', clen);
        }
        h->lang[i] = (unsigned char)lang;
        h->lines[i] = line;
        if (nl) *nl = '\0';
        line = nl ? nl + 1 : line + len;
        code = cnl ? cnl + 1 : code + clen;
    }
    return 0;
}

/* The line (1-based) of at in its header, 0 where it is not there. */
static int find_row(const api_ctx_t *c, const api_at_t *at, const api_hdr_t **hdr)
{
    const api_hdr_t *h = NULL;
    int from = 0, to;
    for (size_t i = 0; i < N_HDRS; i++)
        if (!strcmp(c->hdr[i].rel, at->file)) h = &c->hdr[i];
    if (!h) return 0;
    *hdr = h;
    to = h->n;
    if (at->macro) {
        const size_t ml = strlen(at->macro);
        for (from = 0; from < h->n; from++) {
            const char *s = h->lines[from] + strspn(h->lines[from], " \t");
            if (!strncmp(s, "#define", 7)) {
                s += 7 + strspn(s + 7, " \t");
                if (!strncmp(s, at->macro, ml) && (s[ml] == '(' || s[ml] == ' ' || s[ml] == '\0')) break;
            }
        }
        if (from == h->n) return 0;
        for (to = from + 1; to < h->n; to++) {
            size_t len = strlen(h->lines[to - 1]);
            if (len == 0 || h->lines[to - 1][len - 1] != '\\') break;
        }
    }
    if (!at->key) return from + 1;
    for (int i = from; i < to; i++)
        if (strstr(h->lines[i], at->key)) return i + 1;
    return 0;
}

/* text with each run of white space made one space, none after '(' or before ')', and `T * x`
 * written `T *x`. */
static char *tidy(const char *text, size_t len)
{
    char *out = malloc(len + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < len; i++) {
        if (isspace((unsigned char)text[i])) {
            while (i + 1 < len && isspace((unsigned char)text[i + 1])) i++;
            if (o == out || o[-1] == '(' || (o[-1] == '*' && o - 1 > out && o[-2] == ' ') || i + 1 == len || text[i + 1] == ')' ||
                text[i + 1] == ',')
                continue;
            *o++ = ' ';
        } else {
            *o++ = text[i];
        }
    }
    *o = '\0';
    return out;
}

static const api_form_t *find_form(api_ctx_t *c, const char *form)
{
    for (size_t i = 0; i < API_N(api_forms); i++)
        if (!strcmp(api_forms[i].form, form)) {
            c->used[i] = 1;
            return &api_forms[i];
        }
    return NULL;
}

/* The form of a routine made by a family list: its type (the longest list type that follows
 * shmem_ or shmemx_ up to a '_') made TYPE, or else a number of GSHMEM_RMA_SIZES made SIZE. */
static void form_of(const char *name, char *form, size_t n)
{
    const char *pfx = !strncmp(name, "shmemx_", 7) ? "shmemx_" : "shmem_", *rest = name + strlen(pfx);
    size_t best = 0;
    const api_pair_t *lists[2] = {rma_types, rma_ext_types};
    const size_t counts[2] = {API_N(rma_types), API_N(rma_ext_types)};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            size_t len = strlen(lists[l][i].a);
            if (len > best && !strncmp(rest, lists[l][i].a, len) && rest[len] == '_') best = len;
        }
    if (best) {
        snprintf(form, n, "%sTYPE%s", pfx, rest + best);
        return;
    }
    const char *d = strpbrk(rest, "0123456789");
    if (d) {
        size_t len = strspn(d, "0123456789");
        for (size_t i = 0; i < API_N(rma_sizes); i++)
            if (strlen(rma_sizes[i].a) == len && !strncmp(d, rma_sizes[i].a, len)) {
                snprintf(form, n, "%s%.*sSIZE%s", pfx, (int)(d - rest), rest, d + len);
                return;
            }
    }
    snprintf(form, n, "%s", name);
}

/* The parts of name that TYPE, OP and SIZE of form stand for (the shortest that fit, left to
 * right): 1 with them in part[] and len[], 0 where name does not have the form's shape. */
static const char *const placeholders[3] = {"TYPE", "OP", "SIZE"};
static int match_form(const char *form, const char *name, const char *part[3], size_t len[3])
{
    if (!*form) return !*name;
    for (int k = 0; k < 3; k++) {
        const size_t pl = strlen(placeholders[k]);
        if (strncmp(form, placeholders[k], pl)) continue;
        for (size_t l = 1; l <= strlen(name); l++) {
            part[k] = name;
            len[k] = l;
            if (match_form(form + pl, name + l, part, len)) return 1;
        }
        return 0;
    }
    return *form == *name && match_form(form + 1, name + 1, part, len);
}

/* meaning with the TYPE, OP and SIZE of form written as they are in name. */
static char *fill_in(const char *meaning, const char *form, const char *name)
{
    const char *part[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0}, n = 0;
    char *out;
    if (!match_form(form, name, part, len)) return NULL;
    if (!(out = malloc(strlen(meaning) + strlen(name) * 8 + 1))) return NULL;
    for (const char *m = meaning; *m;) {
        int k;
        for (k = 0; k < 3; k++)
            if (part[k] && !strncmp(m, placeholders[k], strlen(placeholders[k]))) break;
        if (k < 3) {
            memcpy(out + n, part[k], len[k]);
            n += len[k];
            m += strlen(placeholders[k]);
        } else {
            out[n++] = *m++;
        }
    }
    out[n] = '\0';
    return out;
}

/* Adds a routine of form f (NULL: found from its name), or merges it into the one of that name
 * already there (the same signature; the sides and the lines of both). */
static int add_entry(api_ctx_t *c, const char *name, const char *ret, size_t ret_len, const char *params, size_t params_len,
                     unsigned where, int section, const char *at, const api_form_t *f)
{
    char *r = tidy(ret, ret_len), *p = tidy(params, params_len);
    api_entry_t *e = NULL;
    if (!r || !p) return fail("out of memory%s%s", "", "");
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].name, name)) e = &c->e[i];
    if (e) {
        if (strcmp(e->ret, r) || strcmp(e->params, p)) {
            fprintf(stderr, "gshmem-info --api: %s is %s%s%s at %s but %s%s%s at %s\n", name, e->ret, e->ret[strlen(e->ret) - 1] == '*' ? "" : " ",
                    e->params, e->at[0], r, r[strlen(r) - 1] == '*' ? "" : " ", p, at);
            free(r);
            free(p);
            return -1;
        }
        free(r);
        free(p);
    } else {
        char form[128];
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 1024;
            api_entry_t *ne = realloc(c->e, cap * sizeof(*ne));
            if (!ne) return fail("out of memory%s%s", "", "");
            c->e = ne;
            c->cap = cap;
        }
        e = &c->e[c->n++];
        memset(e, 0, sizeof(*e));
        e->name = strdup(name);
        e->ret = r;
        e->params = p;
        e->section = section;
        if (!e->name) return fail("out of memory%s%s", "", "");
        form_of(name, form, sizeof(form));
        if (!(e->form = f ? f : find_form(c, form)))
            return fail("%s (form %s) has no row in api_forms of runtime/tools/api_ref.c: add what it does and the row that makes it",
                        name, form);
        if (!(e->meaning = fill_in(e->form->meaning, e->form->form, name)))
            return fail("%s does not have the shape of its form %s", name, e->form->form);
    }
    e->where |= where;
    for (int i = 0; i < e->n_at; i++)
        if (!strcmp(e->at[i], at)) return 0;
    if (e->n_at < 3) snprintf(e->at[e->n_at++], sizeof(e->at[0]), "%s", at);
    return 0;
}

/* Adds the routines of rows; a row's line is its form's at. */
static int add_rows(api_ctx_t *c, const api_row_t *rows, size_t n, int section)
{
    for (size_t i = 0; i < n; i++) {
        char form[128], at[2][80];
        const api_form_t *f;
        int n_at = 0;
        if (rows[i].form) snprintf(form, sizeof(form), "%s", rows[i].form);
        else form_of(rows[i].name, form, sizeof(form));
        if (!(f = find_form(c, form)))
            return fail("%s (form %s) has no row in api_forms of runtime/tools/api_ref.c: add what it does and the row that makes it",
                        rows[i].name, form);
        for (int k = 0; k < 2; k++) {
            const api_hdr_t *h = NULL;
            int line;
            if (!f->at[k].file) continue;
            if (!(line = find_row(c, &f->at[k], &h))) {
                fprintf(stderr, "gshmem-info --api: the row of %s is not in include/%s: no line of %s%s holds \"%s\"; "
                        "update its row of api_forms in runtime/tools/api_ref.c\n", form, f->at[k].file,
                        f->at[k].macro ? "the body of " : "the file", f->at[k].macro ? f->at[k].macro : "",
                        f->at[k].key ? f->at[k].key : "#define");
                return -1;
            }
            snprintf(at[n_at++], sizeof(at[0]), "include/%s:%d", h->rel, line);
        }
        if (!n_at) return fail("the row of %s in api_forms of runtime/tools/api_ref.c names no header line (made from %s)", form, "the lists");
        for (int k = 0; k < n_at; k++)
            if (add_entry(c, rows[i].name, rows[i].ret, strlen(rows[i].ret), rows[i].params, strlen(rows[i].params), rows[i].where,
                          section, at[k], f))
                return -1;
    }
    return 0;
}

static int is_ident(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

/* Adds every shmem_/shmemx_ routine declared or defined in h outside a macro: a name at file
 * scope followed by its parameters and ';' or '{'. The words before it on its line are its return
 * type and qualifiers: GSHMEMI_HD makes it host and device, GSHMEMI_DEV device only. */
static int parse_plain(api_ctx_t *c, const api_hdr_t *h, int section)
{
    const char *code = h->code;
    int brace = 0, paren = 0, line = 1;
    unsigned char braces[64]; /* 1: a brace that counts (not extern "C") */
    int nb = 0;
    for (size_t i = 0; code[i]; i++) {
        const char ch = code[i];
        if (ch == '\n') line++;
        else if (ch == '(') paren++;
        else if (ch == ')') paren--;
        else if (ch == '{' || ch == '}') {
            if (ch == '{') {
                size_t j = i;
                while (j > 0 && isspace((unsigned char)code[j - 1])) j--;
                int ext = j >= 6 && !strncmp(code + j - 6, "extern", 6);
                if (nb < 64) braces[nb++] = !ext;
                brace += !ext;
            } else if (nb > 0) {
                brace -= braces[--nb];
            }
        } else if (is_ident(ch) && (i == 0 || !is_ident(code[i - 1]))) {
            size_t end = i;
            while (is_ident(code[end])) end++;
            if (brace == 0 && paren == 0 && (!strncmp(code + i, "shmem_", 6) || !strncmp(code + i, "shmemx_", 7))) {
                size_t open = end + strspn(code + end, " \t\n"), close, start = i;
                int depth = 0;
                if (code[open] == '(') {
                    for (close = open; code[close]; close++) {
                        if (code[close] == '(') depth++;
                        else if (code[close] == ')' && --depth == 0) break;
                    }
                    size_t after = close + 1 + strspn(code + close + 1, " \t\n");
                    /* the return type and qualifiers: words and '*' before the name on its line */
                    while (start > 0 && (is_ident(code[start - 1]) || code[start - 1] == ' ' || code[start - 1] == '\t' ||
                                         code[start - 1] == '*'))
                        start--;
                    if (code[close] == ')' && (code[after] == ';' || code[after] == '{')) {
                        char name[128], words[256] = "", *w, *save;
                        unsigned where = W_HOST;
                        snprintf(name, sizeof(name), "%.*s", (int)(end - i), code + i);
                        snprintf(words, sizeof(words), "%.*s", (int)(i - start), code + start);
                        /* keep the type, drop the qualifiers */
                        char type[256] = "";
                        for (w = strtok_r(words, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
                            if (!strcmp(w, "GSHMEMI_HD")) where = W_HOST | W_DEVICE;
                            else if (!strcmp(w, "GSHMEMI_DEV")) where = W_DEVICE;
                            else if (strcmp(w, "static") && strcmp(w, "inline") && strcmp(w, "extern"))
                                snprintf(type + strlen(type), sizeof(type) - strlen(type), "%s%s", type[0] ? " " : "", w);
                        }
                        if (type[0]) {
                            char at[80];
                            snprintf(at, sizeof(at), "include/%s:%d", h->rel, line);
                            if (add_entry(c, name, type, strlen(type), code + open, close + 1 - open,
                                          where | (where & W_DEVICE ? L_CUDA : h->lang[line - 1]), section, at, NULL))
                                return -1;
                        }
                    }
                }
            }
            i = end - 1;
        }
    }
    return 0;
}

static const char *where_text(unsigned w)
{
    if ((w & (W_HOST | W_DEVICE)) == W_DEVICE) return "device";
    if (w & W_DEVICE) return w & L_C ? "host, device" : "host, device (CUDA code)";
    if (!(w & L_C)) return "host (CUDA code)";
    return w & L_CUDA ? "host" : "host (C code)";
}

static void print_lists(api_ctx_t *c, FILE *out)
{
    fprintf(out, "## The lists\n\nTYPE, OP and SIZE in a form below stand for each entry of these lists:\n\n"
                 "| list | row | entries |\n|---|---|---|\n");
    for (size_t l = 0; l < API_N(api_lists); l++) {
        const api_list_t *L = &api_lists[l];
        const api_at_t at = {L->file, L->list, NULL};
        const api_hdr_t *h = NULL;
        int line = find_row(c, &at, &h);
        fprintf(out, "| `%s` | `include/%s:%d` | ", L->list, L->file, line);
        if (!L->is_pairs) {
            for (size_t i = 0; i < L->n; i++) fprintf(out, "%s%s (%s)", i ? ", " : "", L->rows[i].a, L->rows[i].b);
        } else { /* one group per operator, in the order they first appear */
            for (size_t i = 0; i < L->n; i++) {
                int seen = 0;
                for (size_t j = 0; j < i; j++) seen |= !strcmp(L->rows[j].a, L->rows[i].a);
                if (seen) continue;
                fprintf(out, "%sOP %s: ", i ? "; " : "", L->rows[i].a + 1);
                for (size_t j = i, first = 1; j < L->n; j++)
                    if (!strcmp(L->rows[j].a, L->rows[i].a)) {
                        fprintf(out, "%s%s", first ? "" : ", ", L->rows[j].b);
                        first = 0;
                    }
            }
        }
        fprintf(out, " |\n");
    }
}

int gshmemi_api_ref_print(FILE *out, const char *include_dir)
{
    api_ctx_t c;
    int rc = -1;
    size_t counts[SEC_COUNT] = {0};
    static const int plain_section[N_HDRS] = {SEC_SETUP, SEC_RMA, SEC_RMA, SEC_SIGNAL, SEC_COLL, SEC_COLL, SEC_COLL, SEC_ENGINE};

    memset(&c, 0, sizeof(c));
    for (size_t i = 0; i < N_HDRS; i++)
        if (load_header(&c.hdr[i], include_dir, hdr_names[i])) goto out;
    /* in the order of the page: each section's plain routines, then its families */
    if (parse_plain(&c, &c.hdr[0], plain_section[0]) || add_rows(&c, setup_forms, API_N(setup_forms), SEC_SETUP) ||
        parse_plain(&c, &c.hdr[1], plain_section[1]) || parse_plain(&c, &c.hdr[2], plain_section[2]) ||
        add_rows(&c, rma_rows, API_N(rma_rows), SEC_RMA) || add_rows(&c, rma_ext_rows, API_N(rma_ext_rows), SEC_RMA) ||
        add_rows(&c, amo_rows, API_N(amo_rows), SEC_AMO) || parse_plain(&c, &c.hdr[3], plain_section[3]) ||
        add_rows(&c, signal_rows, API_N(signal_rows), SEC_SIGNAL) || add_rows(&c, signal_forms, API_N(signal_forms), SEC_SIGNAL))
        goto out;
    for (size_t i = 4; i < N_HDRS; i++)
        if (parse_plain(&c, &c.hdr[i], plain_section[i])) goto out;
    if (add_rows(&c, coll_forms, API_N(coll_forms), SEC_COLL)) goto out;
    for (size_t i = 0; i < API_N(api_forms); i++)
        if (!c.used[i]) {
            fail("the row of %s in api_forms of runtime/tools/api_ref.c makes no routine of the headers: remove it%s",
                 api_forms[i].form, "");
            goto out;
        }

    for (size_t i = 0; i < c.n; i++) counts[c.e[i].section]++;
    fprintf(out, "%zu routines: their C signature, where they run (host code, device code; CUDA code: only where nvcc "
                 "compiles the caller), what they do and the header line that makes them.\n\n", c.n);
    print_lists(&c, out);
    for (int s = 0; s < SEC_COUNT; s++) {
        fprintf(out, "\n## %s\n\n%zu routines. %s\n\n| routine | runs on | what it does | made by |\n|---|---|---|---|\n",
                sec_title[s], counts[s], sec_note[s]);
        for (size_t i = 0; i < c.n; i++) {
            const api_entry_t *e = &c.e[i];
            if (e->section != s) continue;
            fprintf(out, "| `%s%s%s%s` | %s | %s | ", e->ret, e->ret[strlen(e->ret) - 1] == '*' ? "" : " ", e->name, e->params,
                    where_text(e->where), e->meaning);
            for (int k = 0; k < e->n_at; k++) fprintf(out, "%s`%s`", k ? ", " : "", e->at[k]);
            fprintf(out, " |\n");
        }
    }
    rc = 0;
out:
    for (size_t i = 0; i < N_HDRS; i++) {
        free(c.hdr[i].text);
        free(c.hdr[i].code);
        free(c.hdr[i].lines);
        free(c.hdr[i].lang);
    }
    for (size_t i = 0; i < c.n; i++) {
        free(c.e[i].name);
        free(c.e[i].ret);
        free(c.e[i].params);
        free(c.e[i].meaning);
    }
    free(c.e);
    return rc;
}
