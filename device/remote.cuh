/* How the inline device API reaches its remote path (device/proxy.cuh, device/ibgda.cuh): one far
 * call (memops.cuh: through a __device__ function pointer) to an entry that takes a request record.
 *
 * Without -rdc, ptxas compiles every function a kernel calls directly with that kernel and stacks
 * the callee's registers on what the caller keeps live at the call: every kernel that named a PE
 * paid for the proxy's and IBGDA's posting code, levels of calls included (52-127 registers on
 * sm_90 for a loop of one call, a 160-288 byte stack frame). A function reached through a pointer
 * is compiled to the call ABI under one register count for all such functions of the module (the
 * most any of them needs), and the calling kernel counts the larger of its own and that one. It is
 * still compiled into every kernel that makes such a call (ptxas does not share code between
 * kernels without -rdc), every far function of the module in each: the entries and the steps
 * they call are kept few and small. So every far function here, in proxy.cuh and in ibgda.cuh takes
 * few arguments (records in memory past a handful: each argument is a register of the caller) and
 * keeps few values live, and the module's count is theirs, 46 on sm_90 (docs/transports.md).
 *
 * A call site fills the fields of a gshmemi_remote_req_t its entry reads, on its stack, and calls
 * gshmemi_remote_call; the P2P branch beside it does not change. The table is a mutable __device__
 * variable, so the compiler cannot fold its loads into direct calls; it is static (one per module,
 * like the device state of state.cuh), filled at compile time. */
#ifndef GSHMEM_DEVICE_REMOTE_CUH
#define GSHMEM_DEVICE_REMOTE_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memops.cuh"
#include "proxy.cuh"
#include "state.cuh"

/* One remote request, as its entry reads it. Each entry names the fields it reads; the others
 * are left unwritten by its callers. */
typedef struct gshmemi_remote_req {
    void *dest;          /* RMA and put-with-signal: the destination; p, g, AMO: the symmetric word */
    const void *src;     /* RMA and put-with-signal: the source */
    size_t n;            /* bytes; p, g, AMO: the word's width (bytes); strided: elements */
    uint64_t value;      /* p: the bits; AMO: the operand; put-with-signal: the signal */
    uint64_t cond;       /* AMO: compare-swap's condition */
    uint64_t *sig;       /* put-with-signal: the signal word */
    ptrdiff_t dst, sst;  /* strided: the strides, in elements */
    size_t es;           /* strided: the element size */
    const char *routine; /* the public routine, for reports */
    int op;              /* RMA: GSHMEMI_PROXY_PUT or _GET; AMO: GSHMEMI_AMO_*; put-with-signal: SHMEM_SIGNAL_* */
    int pe;
    int scope;    /* GSHMEMI_SCOPE_*: the group that called */
    int blocking; /* RMA and put-with-signal */
} gshmemi_remote_req_t;

typedef uint64_t (*gshmemi_remote_fn_t)(const gshmemi_remote_req_t *);

/* The entries, in the order of the table. */
enum {
    GSHMEMI_REMOTE_RMA = 0,     /* a group's contiguous put or get: op, dest, src, n, pe, blocking, scope */
    GSHMEMI_REMOTE_P,           /* shmem_TYPE_p: dest, value, n, pe */
    GSHMEMI_REMOTE_G,           /* shmem_TYPE_g: dest (the source word), n, pe; returns the bits */
    GSHMEMI_REMOTE_AMO,         /* op, dest, value, cond, n, pe; returns the old value of a fetching op */
    GSHMEMI_REMOTE_PUT_SIGNAL,  /* a group's put-with-signal: dest, src, n, sig, value, op, pe, blocking, scope */
    GSHMEMI_REMOTE_STRIDED,     /* a group's iput/iget: op, dest, src, dst, sst, n, es, pe, scope */
    GSHMEMI_REMOTE_QUIET,       /* routine */
    GSHMEMI_REMOTE_FENCE,       /* routine */
    GSHMEMI_REMOTE_ENTRIES
};

/* ---- the entries (far functions, each reads routine too) ---- */
#define GSHMEMI_REMOTE_ENTRY static __device__ __noinline__ uint64_t

GSHMEMI_REMOTE_ENTRY gshmemi_remote_rma_entry(const gshmemi_remote_req_t *r)
{
    /* one thread posts between the group's syncs */
    gshmemi_scope_sync(r->scope);
    if (gshmemi_scope_tid(r->scope) == 0) GSHMEMI_FAR(gshmemi_proxy_rma)(r->op, r->dest, r->src, r->n, r->pe, r->blocking, r->routine);
    gshmemi_scope_sync(r->scope);
    return 0;
}

GSHMEMI_REMOTE_ENTRY gshmemi_remote_p_entry(const gshmemi_remote_req_t *r)
{
    gshmemi_proxy_p(r->dest, r->value, r->n, r->pe, r->routine);
    return 0;
}

GSHMEMI_REMOTE_ENTRY gshmemi_remote_g_entry(const gshmemi_remote_req_t *r)
{
    return gshmemi_proxy_g(r->dest, r->n, r->pe, r->routine);
}

GSHMEMI_REMOTE_ENTRY gshmemi_remote_amo_entry(const gshmemi_remote_req_t *r)
{
    return gshmemi_proxy_amo(r->op, r->dest, r->value, r->cond, r->n, r->pe, r->routine);
}

GSHMEMI_REMOTE_ENTRY gshmemi_remote_put_signal_entry(const gshmemi_remote_req_t *r)
{
    /* one thread posts data and signal as one request, which the proxy executes in order */
    gshmemi_scope_sync(r->scope);
    if (gshmemi_scope_tid(r->scope) == 0)
        gshmemi_proxy_put_signal(r->dest, r->src, r->n, r->sig, r->value, r->op, r->pe, r->blocking, r->routine);
    gshmemi_scope_sync(r->scope);
    return 0;
}

/* Remote strided: one request per element, posted by the group's threads in turn, then one
 * thread waits for them all. */
GSHMEMI_REMOTE_ENTRY gshmemi_remote_strided_entry(const gshmemi_remote_req_t *r)
{
    const ptrdiff_t es = (ptrdiff_t)r->es;
    for (size_t i = gshmemi_scope_tid(r->scope); i < r->n; i += gshmemi_scope_size(r->scope))
        GSHMEMI_FAR(gshmemi_proxy_rma)(r->op, (char *)r->dest + (ptrdiff_t)i * r->dst * es, (const char *)r->src + (ptrdiff_t)i * r->sst * es,
                          r->es, r->pe, 0, r->routine);
    gshmemi_scope_sync(r->scope);
    if (gshmemi_scope_tid(r->scope) == 0) GSHMEMI_FAR(gshmemi_proxy_quiet)(r->routine);
    return 0;
}

GSHMEMI_REMOTE_ENTRY gshmemi_remote_quiet_entry(const gshmemi_remote_req_t *r)
{
    GSHMEMI_FAR(gshmemi_proxy_quiet)(r->routine);
    return 0;
}

GSHMEMI_REMOTE_ENTRY gshmemi_remote_fence_entry(const gshmemi_remote_req_t *r)
{
    gshmemi_proxy_fence(r->routine);
    return 0;
}

#undef GSHMEMI_REMOTE_ENTRY

/* __constant__, as the far pointers are (memops.cuh) */
static __constant__ gshmemi_remote_fn_t gshmemi_remote_table[GSHMEMI_REMOTE_ENTRIES] = {
    gshmemi_remote_rma_entry,        gshmemi_remote_p_entry,       gshmemi_remote_g_entry,
    gshmemi_remote_amo_entry,        gshmemi_remote_put_signal_entry, gshmemi_remote_strided_entry,
    gshmemi_remote_quiet_entry,      gshmemi_remote_fence_entry,
};

GSHMEMI_DEV uint64_t gshmemi_remote_call(int entry, const gshmemi_remote_req_t *r)
{
#ifdef GSHMEMI_REMOTE_DIRECT
    switch (entry) { /* plain calls (memops.cuh: GSHMEMI_REMOTE_DIRECT) */
    case GSHMEMI_REMOTE_RMA: return gshmemi_remote_rma_entry(r);
    case GSHMEMI_REMOTE_P: return gshmemi_remote_p_entry(r);
    case GSHMEMI_REMOTE_G: return gshmemi_remote_g_entry(r);
    case GSHMEMI_REMOTE_AMO: return gshmemi_remote_amo_entry(r);
    case GSHMEMI_REMOTE_PUT_SIGNAL: return gshmemi_remote_put_signal_entry(r);
    case GSHMEMI_REMOTE_STRIDED: return gshmemi_remote_strided_entry(r);
    case GSHMEMI_REMOTE_QUIET: return gshmemi_remote_quiet_entry(r);
    default: return gshmemi_remote_fence_entry(r);
    }
#else
    return gshmemi_remote_table[entry](r);
#endif
}

/* ---- the call sites' forms, one per entry, with the arguments the remote functions took ---- */
GSHMEMI_DEV void gshmemi_remote_rma_scope(int op, void *dest, const void *src, size_t n, int pe, int blocking, int scope,
                                          const char *routine)
{
    gshmemi_remote_req_t r;
    r.op = op, r.dest = dest, r.src = src, r.n = n, r.pe = pe, r.blocking = blocking, r.scope = scope, r.routine = routine;
    (void)gshmemi_remote_call(GSHMEMI_REMOTE_RMA, &r);
}
GSHMEMI_DEV void gshmemi_remote_p(void *sym, uint64_t bits, size_t width, int pe, const char *routine)
{
    gshmemi_remote_req_t r;
    r.dest = sym, r.value = bits, r.n = width, r.pe = pe, r.routine = routine;
    (void)gshmemi_remote_call(GSHMEMI_REMOTE_P, &r);
}
GSHMEMI_DEV uint64_t gshmemi_remote_g(const void *sym, size_t width, int pe, const char *routine)
{
    gshmemi_remote_req_t r;
    r.dest = (void *)sym, r.n = width, r.pe = pe, r.routine = routine;
    return gshmemi_remote_call(GSHMEMI_REMOTE_G, &r);
}
GSHMEMI_DEV uint64_t gshmemi_remote_amo(int op, void *sym, uint64_t value, uint64_t cond, size_t width, int pe,
                                        const char *routine)
{
    gshmemi_remote_req_t r;
    r.op = op, r.dest = sym, r.value = value, r.cond = cond, r.n = width, r.pe = pe, r.routine = routine;
    return gshmemi_remote_call(GSHMEMI_REMOTE_AMO, &r);
}
GSHMEMI_DEV void gshmemi_remote_put_signal_scope(void *dest, const void *src, size_t n, uint64_t *sig, uint64_t signal,
                                                 int sig_op, int pe, int blocking, int scope, const char *routine)
{
    gshmemi_remote_req_t r;
    r.dest = dest, r.src = src, r.n = n, r.sig = sig, r.value = signal, r.op = sig_op, r.pe = pe, r.blocking = blocking;
    r.scope = scope, r.routine = routine;
    (void)gshmemi_remote_call(GSHMEMI_REMOTE_PUT_SIGNAL, &r);
}
/* A thread alone: the group of one. */
GSHMEMI_DEV void gshmemi_remote_put_signal(void *dest, const void *src, size_t n, uint64_t *sig, uint64_t signal, int sig_op,
                                           int pe, int blocking, const char *routine)
{
    gshmemi_remote_put_signal_scope(dest, src, n, sig, signal, sig_op, pe, blocking, GSHMEMI_SCOPE_THREAD, routine);
}
GSHMEMI_DEV void gshmemi_remote_strided(int op, char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es,
                                        int pe, int scope, const char *routine)
{
    gshmemi_remote_req_t r;
    r.op = op, r.dest = dest, r.src = src, r.dst = dst, r.sst = sst, r.n = n, r.es = es, r.pe = pe, r.scope = scope;
    r.routine = routine;
    (void)gshmemi_remote_call(GSHMEMI_REMOTE_STRIDED, &r);
}
GSHMEMI_DEV void gshmemi_remote_quiet(const char *routine)
{
    gshmemi_remote_req_t r;
    r.routine = routine;
    (void)gshmemi_remote_call(GSHMEMI_REMOTE_QUIET, &r);
}
GSHMEMI_DEV void gshmemi_remote_fence(const char *routine)
{
    gshmemi_remote_req_t r;
    r.routine = routine;
    (void)gshmemi_remote_call(GSHMEMI_REMOTE_FENCE, &r);
}
/* GSHMEM_DEBUG_CHECKS=1: every device call validates its PE and symmetric range, and a violation
 * is reported with the routine, PE, address and heap bounds, then traps (an error at the call,
 * not a corrupted peer heap). The test is one uniform branch on constant memory when off. */
GSHMEMI_DEV int gshmemi_sym_range_ok(const void *sym, size_t n)
{
    const char *p = (const char *)sym, *base = gshmemi_dstate.heap_base;
    return p >= base && p <= base + gshmemi_dstate.heap_size && n <= (size_t)(base + gshmemi_dstate.heap_size - p);
}
/* A failed debug check (gshmemi_check_sym): the report, then the trap. A direct call: nothing is
 * live across a call that does not return, so it costs the caller few registers, and a kernel
 * that only waits makes no far call. */
GSHMEMI_DEV_REPORT void gshmemi_check_report(int which, const void *sym, size_t n, int pe, const char *routine)
{
    static const char *const why[] = {"PE out of range", "address range outside the symmetric heap",
                                      "PE not reachable (no P2P mapping, no proxy)"};
    printf("gshmem: PE %d: %s: %s: pe %d (of %d), address %p, %llu bytes, heap [%p, %p)\n", gshmemi_dstate.my_pe, routine,
           why[which], pe, gshmemi_dstate.n_pes, sym, (unsigned long long)n, gshmemi_dstate.heap_base,
           gshmemi_dstate.heap_base + gshmemi_dstate.heap_size);
    __trap();
}
GSHMEMI_DEV void gshmemi_check_sym(const void *sym, size_t n, int pe, const char *routine)
{
    if (!gshmemi_dstate.debug_checks) return;
    int why = -1;
    if (pe < 0 || pe >= gshmemi_dstate.n_pes) why = 0;
    else if (!gshmemi_sym_range_ok(sym, n)) why = 1;
    else if (!gshmemi_peer_base(pe) && !gshmemi_proxy_on()) why = 2;
    if (why >= 0) gshmemi_check_report(why, sym, n, pe, routine);
}

#endif
