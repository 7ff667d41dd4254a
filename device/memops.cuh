/* Memory-model primitives and the bulk copy used by every device path. */
#ifndef GSHMEM_DEVICE_MEMOPS_CUH
#define GSHMEM_DEVICE_MEMOPS_CUH

#include <stdint.h>

/* The one spelling of each kind of inline routine: device only, and __host__ __device__ (whose
 * body picks its side with GSHMEMI_HOSTDEV_BRANCH). */
#define GSHMEMI_DEV static __device__ __forceinline__
#define GSHMEMI_HD static __host__ __device__ __forceinline__
/* An out-of-line report that ends in a trap. noreturn lets ptxas drop what the caller would
 * otherwise keep live across the call: a rarely taken error branch then costs the calling kernel
 * few registers (on sm_90: int_p over IBGDA 40 -> 30; the grid sum reduce, whose waits report
 * through gshmemi_wait_report, 128 -> 96). */
#define GSHMEMI_DEV_REPORT static __device__ __noinline__ __attribute__((noreturn))
/* A far call: through a __device__ function pointer, so that the remote path's code does not
 * weigh on the registers of the kernels that call it. ptxas (without -rdc) compiles what a kernel
 * calls directly with that kernel, its registers allocated on top of what the caller keeps live at
 * the call, so every level of direct calls adds to the kernel's count. A callee reached through a
 * pointer is compiled to the call ABI instead, under one register count for every function of the
 * module whose address is taken (the most any of them needs); the caller's live values wait in
 * callee-saved registers or on the stack, and a kernel that makes such a call counts the larger
 * of its own registers and that one. It is still compiled into each kernel that makes a far call
 * (with every other far function of the module), so every function reached this way is kept small
 * (device/remote.cuh). GSHMEMI_FAR_DEFINE(fn) after fn's definition; GSHMEMI_FAR(fn)(args) calls it. The
 * pointer is a __constant__ variable, which the host could rewrite, so the compiler cannot turn
 * the call into a direct one; it is read through the constant cache, which an acquire load does
 * not invalidate (a __device__ pointer read after a wait is an L2 round trip on the call's path). */
#define GSHMEMI_FAR_DEFINE(fn) static __constant__ decltype(&fn) gshmemi_far_##fn = fn
/* GSHMEMI_REMOTE_DIRECT, defined before the first include: the unit's far calls are plain calls.
 * The library's collective kernels use it: their launch bounds fix their registers anyway, and
 * with plain calls ptxas sizes their stack (a far call's it cannot: runtime/init.c raises the
 * limit for user kernels). */
#ifdef GSHMEMI_REMOTE_DIRECT
#define GSHMEMI_FAR(fn) (fn)
#else
#define GSHMEMI_FAR(fn) (*gshmemi_far_##fn)
#endif
#ifdef __CUDA_ARCH__
#define GSHMEMI_HOSTDEV_BRANCH(device_code, host_code) device_code
#else
#define GSHMEMI_HOSTDEV_BRANCH(device_code, host_code) host_code
#endif

/* PTX register constraints by width. */
#define GSHMEMI_PTX_REG32 "r"
#define GSHMEMI_PTX_REG64 "l"

/* System-scope loads and stores of 32/64-bit words, one wrapper per (semantics, width):
 * gshmemi_ld_relaxed_u32/u64, gshmemi_ld_acquire_u32/u64, gshmemi_st_relaxed_u32/u64,
 * gshmemi_st_release_u32/u64. */
#define GSHMEMI_DEFINE_LD(sem, bits)                                                                       \
    GSHMEMI_DEV uint##bits##_t gshmemi_ld_##sem##_u##bits(const void *p)                                       \
    {                                                                                                         \
        uint##bits##_t v;                                                                                     \
        asm volatile("ld." #sem ".sys.global.u" #bits " %0, [%1];" : "=" GSHMEMI_PTX_REG##bits(v) : "l"(p) : "memory"); \
        return v;                                                                                             \
    }
#define GSHMEMI_DEFINE_ST(sem, bits)                                                                          \
    GSHMEMI_DEV void gshmemi_st_##sem##_u##bits(void *p, uint##bits##_t v)                                     \
    {                                                                                                         \
        asm volatile("st." #sem ".sys.global.u" #bits " [%0], %1;" ::"l"(p), GSHMEMI_PTX_REG##bits(v) : "memory"); \
    }
GSHMEMI_DEFINE_LD(relaxed, 32)
GSHMEMI_DEFINE_LD(relaxed, 64)
GSHMEMI_DEFINE_LD(acquire, 32)
GSHMEMI_DEFINE_LD(acquire, 64)
GSHMEMI_DEFINE_ST(relaxed, 64)
GSHMEMI_DEFINE_ST(release, 64)
#undef GSHMEMI_DEFINE_LD
#undef GSHMEMI_DEFINE_ST

/* A release fence at system scope: with the strong (relaxed .sys) writes that follow it in this
 * thread, a release of each (PTX memory model: a release pattern), and those writes do not wait
 * for each other, as a release's fence does for the writes before it. */
GSHMEMI_DEV void gshmemi_fence_release_sys(void) { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
/* Adds 1 to a counter, with no value returned: the signaller needs no count of its own. */
GSHMEMI_DEV void gshmemi_red_relaxed_inc_u64(void *p)
{
    asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(p) : "memory");
}
GSHMEMI_DEV uint64_t gshmemi_globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Start of a kernel launched with programmatic dependent launch: wait for the previous kernel
 * of the stream (its completion and memory), then let the next one launch, since every CTA of
 * this one is resident by now. No-op for a plain launch. */
GSHMEMI_DEV void gshmemi_pdl_enter(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Loads of another PE's memory skip L1 (.cg): L1 is not coherent with remote writers. */
GSHMEMI_DEV int4 gshmemi_ld_cg_v16(const int4 *p) { return __ldcg(p); }
GSHMEMI_DEV uint64_t gshmemi_ld_cg_v8(const uint64_t *p) { return __ldcg((const unsigned long long *)p); }
GSHMEMI_DEV uint32_t gshmemi_ld_cg_v4(const uint32_t *p) { return __ldcg((const unsigned int *)p); }
GSHMEMI_DEV uint8_t gshmemi_ld_cg_v1(const uint8_t *p) { return (uint8_t)__ldcg((const unsigned char *)p); }

/* One copy loop per element width. UNROLL independent loads are issued before their
 * stores, so that bytes enough to cover NVLink latency are in flight (gets are latency bound). The
 * device API copies with 4 (64 bytes a thread in flight, 16 registers of data), which keeps a
 * user's kernel within 48 registers; the library's collective kernels with 8. Few threads
 * copying much (one thread, or a few CTAs of 256) are latency bound and move about half as fast
 * with 4 as with 8 (docs/performance.md); a kernel's register count bounds its threads, not this.
 * A group whose size is a multiple of 32 copies in runs of UNROLL x 32 elements a warp, lane l of a
 * run taking elements l, l + 32, ...: each load of a warp reads 32 consecutive elements and the
 * offsets between a thread's loads are constants, so no load or store needs an address register of
 * its own. One thread copies UNROLL consecutive elements at a time. A group of another size (a
 * block of 48 threads, say) copies one element a thread a turn. */
#ifndef GSHMEMI_COPY_UNROLL
#define GSHMEMI_COPY_UNROLL 4 /* the device API, in users' kernels: 16 registers of data at 16 bytes */
#endif
#define GSHMEMI_COPY_UNROLL_COLL 8 /* the library's collective kernels, whose registers are their own */
#define GSHMEMI_DEFINE_COPY(width, T)                                                                \
    template <unsigned S, int UNROLL>                                                                 \
    GSHMEMI_DEV void gshmemi_copy_runs_w##width(T *dst, const T *src, size_t n, size_t i, size_t step) \
    {                                                                                                 \
        _Pragma("unroll 1") for (; i + (UNROLL - 1) * S < n; i += step) {                             \
            T v[UNROLL];                                                                              \
            _Pragma("unroll") for (int u = 0; u < UNROLL; u++) v[u] = gshmemi_ld_cg_v##width(src + i + u * S); \
            _Pragma("unroll") for (int u = 0; u < UNROLL; u++) dst[i + u * S] = v[u];                \
        }                                                                                             \
        /* this thread's last run, short (the runs after it start past n) */                         \
        _Pragma("unroll 1") for (; i < n; i += S) dst[i] = gshmemi_ld_cg_v##width(src + i);           \
    }                                                                                                 \
    template <int UNROLL>                                                                             \
    GSHMEMI_DEV void gshmemi_copy_w##width(T *dst, const T *src, size_t n, unsigned tid, unsigned nt) \
    {                                                                                                 \
        if (nt == 1)                                                                                  \
            gshmemi_copy_runs_w##width<1, UNROLL>(dst, src, n, 0, UNROLL);                            \
        else if ((nt & 31) == 0)                                                                      \
            gshmemi_copy_runs_w##width<32, UNROLL>(dst, src, n, (size_t)(tid >> 5) * 32 * UNROLL + (tid & 31), \
                                                   (size_t)nt * UNROLL);                              \
        else                                                                                          \
            for (size_t i = tid; i < n; i += nt) dst[i] = gshmemi_ld_cg_v##width(src + i);            \
    }
GSHMEMI_DEFINE_COPY(16, int4)
GSHMEMI_DEFINE_COPY(8, uint64_t)
GSHMEMI_DEFINE_COPY(4, uint32_t)
GSHMEMI_DEFINE_COPY(1, uint8_t)
#undef GSHMEMI_DEFINE_COPY

/* The last n < 16 bytes of a copy whose pointers are aligned to the widest access it used (2 or
 * more): one access each of 8, 4, 2 and 1 bytes as n needs, every load issued before a store, so
 * a small get waits one trip over NVLink, not one per few bytes. */
GSHMEMI_DEV void gshmemi_copy_tail(char *dst, const char *src, size_t n)
{
    const size_t at4 = n & 8, at2 = at4 + (n & 4), at1 = at2 + (n & 2);
    unsigned long long v8 = 0;
    unsigned int v4 = 0;
    unsigned short v2 = 0;
    unsigned char v1 = 0;
    if (n & 8) v8 = __ldcg((const unsigned long long *)src);
    if (n & 4) v4 = __ldcg((const unsigned int *)(src + at4));
    if (n & 2) v2 = __ldcg((const unsigned short *)(src + at2));
    if (n & 1) v1 = __ldcg((const unsigned char *)(src + at1));
    if (n & 8) *(unsigned long long *)dst = v8;
    if (n & 4) *(unsigned int *)(dst + at4) = v4;
    if (n & 2) *(unsigned short *)(dst + at2) = v2;
    if (n & 1) *(unsigned char *)(dst + at1) = v1;
}

/* Copies n bytes with threads tid of nt; uses the widest access both pointers allow after
 * peeling a head that aligns them (when they share alignment modulo 16). */
template <int UNROLL = GSHMEMI_COPY_UNROLL>
GSHMEMI_DEV void gshmemi_copy(void *dstv, const void *srcv, size_t n, unsigned tid, unsigned nt)
{
    char *dst = (char *)dstv;
    const char *src = (const char *)srcv;
    uintptr_t mis = ((uintptr_t)dst ^ (uintptr_t)src);
    unsigned width = (mis & 15) == 0 ? 16 : (mis & 7) == 0 ? 8 : (mis & 3) == 0 ? 4 : 1;

    if (width > 1) {
        size_t head = (width - ((uintptr_t)dst & (width - 1))) & (width - 1);
        if (head > n) head = n;
        gshmemi_copy_w1<4>((uint8_t *)dst, (const uint8_t *)src, head, tid, nt);
        dst += head;
        src += head;
        n -= head;
    }
    size_t nvec = n / width;
    switch (width) {
    case 16: gshmemi_copy_w16<UNROLL>((int4 *)dst, (const int4 *)src, nvec, tid, nt); break;
    case 8: gshmemi_copy_w8<UNROLL>((uint64_t *)dst, (const uint64_t *)src, nvec, tid, nt); break;
    case 4: gshmemi_copy_w4<UNROLL>((uint32_t *)dst, (const uint32_t *)src, nvec, tid, nt); break;
    default: nvec = 0; break;
    }
    size_t done = nvec * width;
    if (width == 1) gshmemi_copy_w1<4>((uint8_t *)dst + done, (const uint8_t *)src + done, n - done, tid, nt);
    else if (tid == 0 && done < n) gshmemi_copy_tail(dst + done, src + done, n - done);
}

/* Thread-group scopes of the _warp and _block variants. */
enum { GSHMEMI_SCOPE_THREAD = 0, GSHMEMI_SCOPE_WARP = 1, GSHMEMI_SCOPE_BLOCK = 2 };

GSHMEMI_DEV unsigned gshmemi_scope_tid(int scope)
{
    if (scope == GSHMEMI_SCOPE_THREAD) return 0;
    if (scope == GSHMEMI_SCOPE_WARP) return threadIdx.x & 31; /* lane of a full warp */
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
GSHMEMI_DEV unsigned gshmemi_scope_size(int scope)
{
    if (scope == GSHMEMI_SCOPE_THREAD) return 1;
    if (scope == GSHMEMI_SCOPE_WARP) return 32;
    return blockDim.x * blockDim.y * blockDim.z;
}
/* The same for the RMA routines' copies, made opaque to the compiler where the copy starts (an
 * empty volatile asm): what the copy derives from them (a warp's run, the stride) is computed
 * there, not hoisted out of the user's loop, where it would wait across every far call of the
 * loop in callee-saved registers beside the user's own values (enough to take a typed block put in
 * a loop past 48: README, "What a kernel costs in registers"). The index itself may still be
 * hoisted: one register. */
GSHMEMI_DEV unsigned gshmemi_opaque(unsigned v)
{
    asm volatile("" : "+r"(v));
    return v;
}
GSHMEMI_DEV unsigned gshmemi_scope_tid_fresh(int scope) { return gshmemi_opaque(gshmemi_scope_tid(scope)); }
GSHMEMI_DEV unsigned gshmemi_scope_size_fresh(int scope) { return gshmemi_opaque(gshmemi_scope_size(scope)); }
/* Lanes of a warp (mask, e.g. __activemask()): the mask, this lane's rank among them, their count. */
typedef struct gshmemi_lanes {
    unsigned mask, rank, n;
} gshmemi_lanes_t;
/* The lanes of this warp below this one. */
GSHMEMI_DEV unsigned gshmemi_lanemask_lt(void)
{
    unsigned lt;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    return lt;
}
GSHMEMI_DEV gshmemi_lanes_t gshmemi_lanes_of(unsigned mask)
{
    return {mask, (unsigned)__popc(mask & gshmemi_lanemask_lt()), (unsigned)__popc(mask)};
}

/* This CTA's index in its grid, counted across every grid dimension. */
GSHMEMI_DEV unsigned gshmemi_cta_index(void) { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
GSHMEMI_DEV void gshmemi_scope_sync(int scope)
{
    if (scope == GSHMEMI_SCOPE_WARP) __syncwarp();
    else if (scope == GSHMEMI_SCOPE_BLOCK) __syncthreads();
}

#endif
