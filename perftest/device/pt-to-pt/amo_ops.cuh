/* The 64-bit atomics measured by atomic_latency and atomic_bw (OpenSHMEM 1.5 names). Each op's
 * operand is derived from the value the word holds (`cur`, tracked by the one thread that uses the
 * word) and the iteration, so the fetched values and the final word can be checked exactly. */
#include "../../common/perftest.h"

/* Every op, fetching ones first: AMO_<NAME> in this order. */
#define AMO_OPS(X)                                                                                 \
    X(FETCH_ADD) X(FETCH) X(COMPARE_SWAP) X(SWAP) X(FETCH_INC) X(FETCH_AND) X(FETCH_OR) X(FETCH_XOR) \
    X(ADD) X(INC) X(SET) X(AND) X(OR) X(XOR)
#define AMO_ENUM(name) AMO_##name,
enum { AMO_OPS(AMO_ENUM) AMO_NOPS };
#undef AMO_ENUM
static const char *const amo_names[AMO_NOPS] = {"fetch_add", "fetch", "compare_swap", "swap", "fetch_inc",
                                                "fetch_and", "fetch_or", "fetch_xor", "add", "inc",
                                                "set", "and", "or", "xor"};
#define AMO_FIRST_NONFETCH AMO_ADD

static __host__ __device__ __forceinline__ uint64_t amo_bit(int i) { return 1ull << (i & 63); }

/* The word's value after op number i, given its value before. */
static __host__ __device__ __forceinline__ uint64_t amo_next(int op, uint64_t cur, int i)
{
    switch (op) {
    case AMO_FETCH_ADD: case AMO_ADD: case AMO_COMPARE_SWAP: case AMO_SWAP: case AMO_SET: return cur + (uint64_t)i + 1;
    case AMO_FETCH_INC: case AMO_INC: return cur + 1;
    case AMO_FETCH_AND: case AMO_AND: return cur & ~amo_bit(i);
    case AMO_FETCH_OR: case AMO_OR: return cur | amo_bit(i);
    case AMO_FETCH_XOR: case AMO_XOR: return cur ^ amo_bit(i);
    default: return cur; /* fetch */
    }
}

/* Initial value of word g: every bit pattern differs, so and/or/xor change something. */
static __host__ __device__ __forceinline__ uint64_t amo_init(size_t g) { return (uint64_t)(g + 1) * 0x9e3779b97f4a7c15ull; }

/* Does op OP on dest at pe; returns the fetched value (cur for non-fetching ops, nothing to check). */
template <int OP> static __device__ __forceinline__ uint64_t amo_do(uint64_t *dest, uint64_t cur, int i, int pe)
{
    const uint64_t v = (uint64_t)i + 1;
    switch (OP) {
    case AMO_FETCH_ADD: return shmem_uint64_atomic_fetch_add(dest, v, pe);
    case AMO_FETCH: return shmem_uint64_atomic_fetch(dest, pe);
    case AMO_COMPARE_SWAP: return shmem_uint64_atomic_compare_swap(dest, cur, cur + v, pe);
    case AMO_SWAP: return shmem_uint64_atomic_swap(dest, cur + v, pe);
    case AMO_FETCH_INC: return shmem_uint64_atomic_fetch_inc(dest, pe);
    case AMO_FETCH_AND: return shmem_uint64_atomic_fetch_and(dest, ~amo_bit(i), pe);
    case AMO_FETCH_OR: return shmem_uint64_atomic_fetch_or(dest, amo_bit(i), pe);
    case AMO_FETCH_XOR: return shmem_uint64_atomic_fetch_xor(dest, amo_bit(i), pe);
    case AMO_ADD: shmem_uint64_atomic_add(dest, v, pe); return cur;
    case AMO_INC: shmem_uint64_atomic_inc(dest, pe); return cur;
    case AMO_SET: shmem_uint64_atomic_set(dest, cur + v, pe); return cur;
    case AMO_AND: shmem_uint64_atomic_and(dest, ~amo_bit(i), pe); return cur;
    case AMO_OR: shmem_uint64_atomic_or(dest, amo_bit(i), pe); return cur;
    default: shmem_uint64_atomic_xor(dest, amo_bit(i), pe); return cur;
    }
}

/* An op number as a type, for the kernel templates. */
template <int OP> struct amo_op_t {
    static constexpr int value = OP;
};

/* launch(amo_op_t<op>()) for a runtime op number. */
template <class F> static void amo_dispatch(int op, F launch)
{
    switch (op) {
#define AMO_DISPATCH_CASE(name)                                                                    \
    case AMO_##name: launch(amo_op_t<AMO_##name>()); break;
        AMO_OPS(AMO_DISPATCH_CASE)
#undef AMO_DISPATCH_CASE
    default: launch(amo_op_t<AMO_XOR>()); break;
    }
}

/* Runs KERNEL<op> with the given launch arguments for a runtime op id. */
#define AMO_DISPATCH(op, KERNEL, grid, block, ...)                                                 \
    do {                                                                                           \
        amo_dispatch(op, [&](auto tag) { KERNEL<decltype(tag)::value><<<grid, block>>>(__VA_ARGS__); }); \
        PT_CUDA(cudaGetLastError());                                                               \
    } while (0)

/* --op: a name of amo_names, or "all" (or none) for ops [first_all, last_all). Exits 2 on a bad name. */
static void amo_check_op(const pt_opts_t *o)
{
    if (!o->op || !strcmp(o->op, "all")) return;
    for (int k = 0; k < AMO_NOPS; k++)
        if (!strcmp(o->op, amo_names[k])) return;
    fprintf(stderr, "%s: unknown --op %s; one of all", o->name, o->op);
    for (int k = 0; k < AMO_NOPS; k++) fprintf(stderr, " %s", amo_names[k]);
    fprintf(stderr, "\n");
    exit(2);
}
