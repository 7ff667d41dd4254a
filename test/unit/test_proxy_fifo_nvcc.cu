/* device/proxy_fifo.h under nvcc: the producer calls compiled for the device in a kernel
 * (never launched: no GPU needed), and the whole header compiled as C++ for the host, where a
 * round trip through a host FIFO checks that the C++ build behaves as the C one. */
#include <cstdio>
#include <cstdlib>

#include "device/proxy_fifo.h"

/* Every device-side producer call: reserve (1 and n), publish, post, wait_free, wait_done, wait_ret. */
__global__ void proxy_fifo_producer_kernel(gshmemi_proxy_fifo_t f, uint64_t *out)
{
    uint64_t a[GSHMEMI_PROXY_ARGS] = {gshmemi_proxy_op_word(GSHMEMI_PROXY_AMO, (int)blockIdx.x), threadIdx.x};
    uint64_t t = 0, v = 0;
    int rc = gshmemi_fifo_reserve(&f, 1, &t);
    if (rc == GSHMEMI_FIFO_OK) gshmemi_fifo_publish(&f, t, a);
    if (rc == GSHMEMI_FIFO_OK) rc = gshmemi_fifo_wait_ret(&f, t, &v);
    if (rc == GSHMEMI_FIFO_OK) rc = gshmemi_fifo_post(&f, a, &t);
    if (rc == GSHMEMI_FIFO_OK) rc = gshmemi_fifo_reserve(&f, 4, &t);
    if (rc == GSHMEMI_FIFO_TIMEOUT) rc = gshmemi_fifo_wait_free(&f, t, 4);
    if (rc == GSHMEMI_FIFO_OK) rc = gshmemi_fifo_wait_done(&f, t);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v + (uint64_t)rc;
}

#include "nvcc_check.h"

int main()
{
    static_assert(sizeof(gshmemi_proxy_slot_t) == 64 && alignof(gshmemi_proxy_slot_t) == 64, "slot layout");
    gshmemi_proxy_fifo_t f;
    size_t bytes = gshmemi_fifo_host_bytes(4);
    void *mem = nullptr;
    CHECK(bytes > 0 && posix_memalign(&mem, 64, bytes) == 0);
    CHECK(gshmemi_fifo_host_init(&f, 4, mem) == GSHMEMI_FIFO_OK);
    f.timeout_ns = 20000000; /* 20 ms */
    uint64_t a[GSHMEMI_PROXY_ARGS] = {gshmemi_proxy_op_word(GSHMEMI_PROXY_GET, 3), 11, 12, 13, 14, 15, 16};
    uint64_t t, v = 0;
    for (uint64_t k = 0; k < 4; k++) CHECK(gshmemi_fifo_post(&f, a, &t) == GSHMEMI_FIFO_OK && t == k);
    CHECK(gshmemi_fifo_reserve(&f, 1, &t) == GSHMEMI_FIFO_TIMEOUT && t == 4);
    gshmemi_proxy_req_t r;
    CHECK(gshmemi_fifo_take(&f, 0, &r) == 1 && gshmemi_proxy_req_op(&r) == GSHMEMI_PROXY_GET &&
          gshmemi_proxy_req_pe(&r) == 3 && r.arg[6] == 16);
    gshmemi_fifo_release(&f, 1);
    CHECK(gshmemi_fifo_wait_free(&f, 4, 1) == GSHMEMI_FIFO_OK);
    gshmemi_fifo_publish(&f, 4, a);
    CHECK(gshmemi_fifo_take(&f, 4, &r) == 1 && r.seq == 5);
    gshmemi_fifo_return(&f, 4, 77);
    CHECK(gshmemi_fifo_wait_ret(&f, 4, &v) == GSHMEMI_FIFO_OK && v == 77);
    gshmemi_fifo_complete(&f, 5);
    CHECK(gshmemi_fifo_wait_done(&f, 4) == GSHMEMI_FIFO_OK);
    CHECK(gshmemi_fifo_wait_done(&f, 5) == GSHMEMI_FIFO_TIMEOUT);
    gshmemi_fifo_fail(&f, 5);
    CHECK(gshmemi_fifo_wait_done(&f, 5) == GSHMEMI_FIFO_FAILED);
    free(mem);
    (void)proxy_fifo_producer_kernel; /* compiled for the device, not launched */
    printf("test_proxy_fifo_nvcc: passed (host side as C++; device producers compiled)\n");
    return 0;
}
