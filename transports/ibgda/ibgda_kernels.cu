/* The emulated NIC's atomics (ibgda.c's atomic callback): one thread applies the decoded atomic to
 * the target word (a peer's heap as mapped here) in a compare-and-swap loop with system-scope
 * atomics, so it is atomic with respect to the target GPU's own atomics and the other PEs'. The
 * semantics are nic_emul.h's, the same the engine's unit test checks. */
#include "gshmem/types.h"
#include "../common/kernel_load.h"
#include "ibgda_kernels.h"

template <typename W> static __device__ uint64_t apply_cas(W *word, const gshmemi_nic_emul_amo_t &amo)
{
    W cur = *(volatile W *)word, prev;
    do {
        prev = cur;
        const W nv = (W)gshmemi_nic_emul_amo_apply_hd(&amo, (uint64_t)prev);
        if (nv == prev) break; /* nothing to write: the value read is the old one */
        cur = atomicCAS_system(word, prev, nv);
    } while (cur != prev);
    return (uint64_t)prev;
}

static __global__ void ibgda_amo_kernel(void *target, gshmemi_nic_emul_amo_t amo, uint64_t *old)
{
    __threadfence_system(); /* after the data of the WQEs before it */
    *(volatile uint64_t *)old = amo.size == 4 ? apply_cas((unsigned int *)target, amo) : apply_cas((unsigned long long *)target, amo);
    __threadfence_system();
}

extern "C" int gshmemi_ibgda_emul_amo(void *target, const gshmemi_nic_emul_amo_t *amo, uint64_t *old, cudaStream_t stream)
{
    ibgda_amo_kernel<<<1, 1, 0, stream>>>(target, *amo, old);
    return (int)cudaGetLastError();
}

/* Loaded at connect, in the context it runs in (lazy loading would load it at the first launch,
 * which may wait for kernels that wait for this atomic). */
extern "C" int gshmemi_ibgda_emul_kernels_load(void) { return gshmemi_kernel_load_now((const void *)ibgda_amo_kernel); }
