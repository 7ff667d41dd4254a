/* Host-side atomics, put-with-signal, signal fetch/wait and the stream-ordered signal and wait
 * forms. Each routine checks its arguments here, where the routine is known, and hands the work to
 * the peer's transport (amo, put, wait_local ops). Host AMOs complete before they return. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../transports/transport.h"
#include "gshmem.h"
#include "state.h"

static int check_init(const char *routine)
{
    return gshmemi_require_init("api", routine) ? GSHMEMI_OK : GSHMEMI_ERR_STATE;
}

static int check_pe(const char *routine, int pe)
{
    GSHMEMI_CHECK(check_init(routine));
    if (pe < 0 || pe >= gshmemi_state.n_pes) {
        GSHMEMI_ERROR("api", "%s: pe %d is out of range [0, %d)", routine, pe, gshmemi_state.n_pes);
        return GSHMEMI_ERR_INVALID;
    }
    if (!gshmemi_state.pe_transport[pe] || !gshmemi_state.pe_transport[pe]->amo) {
        GSHMEMI_ERROR("api", "%s: PE %d is reached by a transport without atomics", routine, pe);
        return GSHMEMI_ERR_UNSUPPORTED;
    }
    return GSHMEMI_OK;
}

/* An atomic word must lie in the symmetric heap and be naturally aligned. */
static int check_word(const char *routine, const char *arg, const void *word, size_t width)
{
    if (!gshmemi_in_heap(word, width)) {
        GSHMEMI_ERROR("api", "%s: %s [%p, +%zu) is not inside the symmetric heap [%p, %p)", routine, arg, word, width,
                      (void *)gshmemi_state.heap.my_base, (void *)(gshmemi_state.heap.my_base + gshmemi_state.heap.region));
        return GSHMEMI_ERR_INVALID;
    }
    if ((uintptr_t)word % width) {
        GSHMEMI_ERROR("api", "%s: %s %p is not aligned to its size (%zu bytes)", routine, arg, word, width);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static int check_cmp(const char *routine, int cmp)
{
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE) {
        GSHMEMI_ERROR("api", "%s: cmp %d is not one of SHMEM_CMP_EQ .. SHMEM_CMP_LE", routine, cmp);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

uint64_t gshmemi_host_amo(const char *routine, int op, void *dest, uint64_t value, uint64_t cond, size_t width, int pe)
{
    gshmemi_state_t *st = &gshmemi_state;
    uint64_t old = 0;
    int rc;

    if (check_pe(routine, pe) != GSHMEMI_OK || check_word(routine, "dest", dest, width) != GSHMEMI_OK) return 0;
    rc = st->pe_transport[pe]->amo(&st->tctx, op, dest, value, cond, width, pe, st->stream, &old);
    if (rc != GSHMEMI_OK) GSHMEMI_ERROR("api", "%s with PE %d failed: %s", routine, pe, gshmemi_strerror(rc));
    return old;
}

void gshmemi_host_amo_fetch_nbi(const char *routine, int op, void *fetch, void *dest, uint64_t value, uint64_t cond,
                                size_t width, int pe)
{
    uint64_t old = gshmemi_host_amo(routine, op, dest, value, cond, width, pe);
    uint32_t old32 = (uint32_t)old;
    /* fetch may be host or device memory: let UVA tell. */
    cudaError_t err = cudaMemcpy(fetch, width == 4 ? (const void *)&old32 : (const void *)&old, width, cudaMemcpyDefault);
    if (err != cudaSuccess) GSHMEMI_ERROR("api", "%s: storing the fetched value to %p failed: %s", routine, fetch, cudaGetErrorString(err));
}

/* The data, then the signal update ordered after it on the same stream. */
static void put_signal(const char *routine, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                       uint64_t signal, int sig_op, int pe, cudaStream_t stream, int blocking)
{
    gshmemi_state_t *st = &gshmemi_state;
    int rc = GSHMEMI_OK;

    if (check_pe(routine, pe) != GSHMEMI_OK || check_word(routine, "sig_addr", sig_addr, sizeof(uint64_t)) != GSHMEMI_OK)
        return;
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD) {
        GSHMEMI_ERROR("api", "%s: sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", routine, sig_op);
        return;
    }
    if (nelems && !gshmemi_in_heap(dest, nelems)) {
        GSHMEMI_ERROR("api", "%s: dest [%p, +%zu) is not inside the symmetric heap [%p, %p)", routine, dest, nelems,
                      (void *)st->heap.my_base, (void *)(st->heap.my_base + st->heap.region));
        return;
    }
    if (nelems) rc = st->pe_transport[pe]->put(&st->tctx, dest, source, nelems, pe, stream);
    if (rc == GSHMEMI_OK)
        rc = st->pe_transport[pe]->amo(&st->tctx, sig_op == SHMEM_SIGNAL_ADD ? GSHMEMI_AMO_ADD : GSHMEMI_AMO_SET, sig_addr,
                                       signal, 0, sizeof(uint64_t), pe, stream, NULL);
    if (rc == GSHMEMI_OK && blocking && cudaStreamSynchronize(stream) != cudaSuccess) rc = GSHMEMI_ERR_CUDA;
    if (rc != GSHMEMI_OK)
        GSHMEMI_ERROR("api", "%s of %zu bytes with PE %d failed: %s", routine, nelems, pe, gshmemi_strerror(rc));
}

void gshmemi_host_putmem_signal(const char *routine, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                uint64_t signal, int sig_op, int pe, int blocking)
{
    put_signal(routine, dest, source, nelems, sig_addr, signal, sig_op, pe, gshmemi_state.stream, blocking);
}

void shmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                    int sig_op, int pe, struct CUstream_st *stream)
{
    put_signal("shmemx_putmem_signal_on_stream", dest, source, nelems, sig_addr, signal, sig_op, pe,
               (cudaStream_t)stream, 0);
}

uint64_t gshmemi_host_signal_fetch(const uint64_t *sig_addr)
{
    if (check_init("shmem_signal_fetch") != GSHMEMI_OK) return 0;
    return gshmemi_host_amo("shmem_signal_fetch", GSHMEMI_AMO_FETCH, (void *)sig_addr, 0, 0, sizeof(uint64_t),
                            gshmemi_state.my_pe);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The host polls with atomic fetches rather than parking a kernel on the internal stream, which
 * would hold back every other host operation of this process until the signal came. Bounded by
 * the same timeout as device waits. */
uint64_t gshmemi_host_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value)
{
    const char *routine = "shmem_signal_wait_until";
    const uint64_t timeout = gshmemi_state.dstate.wait_timeout_ns;
    uint64_t cur, start;

    if (check_init(routine) != GSHMEMI_OK || check_cmp(routine, cmp) != GSHMEMI_OK ||
        check_word(routine, "sig_addr", sig_addr, sizeof(uint64_t)) != GSHMEMI_OK)
        return 0;
    start = now_ns();
    for (unsigned polls = 0;; polls++) {
        cur = gshmemi_host_amo(routine, GSHMEMI_AMO_FETCH, sig_addr, 0, 0, sizeof(uint64_t), gshmemi_state.my_pe);
        if (gshmemi_cmp_u(cmp, cur, value)) return cur;
        if (timeout && now_ns() - start > timeout) {
            GSHMEMI_ERROR("api", "%s: %p still %llu after %llu s, waiting for cmp %d against %llu (GSHMEM_DEVICE_WAIT_TIMEOUT)",
                          routine, (void *)sig_addr, (unsigned long long)cur, (unsigned long long)(timeout / 1000000000ull),
                          cmp, (unsigned long long)value);
            return cur;
        }
        if (polls > 1000) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
}

static void wait_on_stream(const char *routine, const void *ivar, size_t width, int is_signed, int cmp, uint64_t value,
                           cudaStream_t stream)
{
    gshmemi_state_t *st = &gshmemi_state;
    const gshmemi_transport_t *self;
    int rc;

    if (check_init(routine) != GSHMEMI_OK || check_cmp(routine, cmp) != GSHMEMI_OK ||
        check_word(routine, "ivar", ivar, width) != GSHMEMI_OK)
        return;
    /* The word is local: whoever writes it, the wait is this PE's own (its self transport). */
    self = st->pe_transport[st->my_pe];
    if (!self || !self->wait_local) {
        GSHMEMI_ERROR("api", "%s: no transport of this PE can wait on a stream", routine);
        return;
    }
    rc = self->wait_local(&st->tctx, ivar, width, is_signed, cmp, value, routine, stream);
    if (rc != GSHMEMI_OK) GSHMEMI_ERROR("api", "%s failed: %s", routine, gshmemi_strerror(rc));
}

void shmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t value, struct CUstream_st *stream)
{
    wait_on_stream("shmemx_signal_wait_until_on_stream", sig_addr, sizeof(uint64_t), 0, cmp, value, (cudaStream_t)stream);
}

#define HOST_WAIT_ON_STREAM(name, T)                                                                          \
    void shmemx_##name##_wait_until_on_stream(T *ivar, int cmp, T value, struct CUstream_st *stream)          \
    {                                                                                                         \
        wait_on_stream("shmemx_" #name "_wait_until_on_stream", ivar, sizeof(T), !((T)-1 > (T)0), cmp,         \
                       gshmemi_host_bits(&value, sizeof(T)), (cudaStream_t)stream);                          \
    }
GSHMEM_SYNC_TYPES(HOST_WAIT_ON_STREAM)
#undef HOST_WAIT_ON_STREAM

/* ---- the C entry points of routines CUDA code gets inline: the host bodies of the rows of
 * GSHMEMI_AMO_FAMILY and GSHMEMI_SIGNAL_FAMILY (include/gshmem/amo.h), which list their names ---- */
#define GSHMEMI_HOSTDEV GSHMEMI_EMIT_HOST
#define GSHMEMI_DEVONLY GSHMEMI_EMIT_NONE
GSHMEMI_AMO_FAMILY
GSHMEMI_SIGNAL_FAMILY
#undef GSHMEMI_HOSTDEV
#undef GSHMEMI_DEVONLY
