/* device/mlx5_wqe.h under nvcc: every builder compiled for the device in a kernel (never
 * launched: no GPU needed; the device byte swap is __byte_perm there), and the header run as host
 * C++, where a few WQEs are checked against bytes written out by hand (the C test,
 * test_mlx5_wqe.c, holds the full comparison with mlx5dv.h). */
#include <cstdio>
#include <cstring>

#include "device/mlx5_wqe.h"

__global__ void mlx5_wqe_builders_kernel(uint8_t *sq, uint32_t sq_bbs, uint64_t raddr, uint64_t laddr,
                                         const gshmemi_mlx5_cqe_t *cq, unsigned *out)
{
    uint16_t idx = (uint16_t)(threadIdx.x * 2);
    uint8_t *w = sq + gshmemi_mlx5_sq_slot(idx, sq_bbs) * GSHMEMI_MLX5_SEND_WQE_BB;
    unsigned ds = 0;
    uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    switch (threadIdx.x % 9) {
    case 0: ds = gshmemi_mlx5_wqe_put(w, idx, 7, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, raddr, 1, laddr, 2, 64); break;
    case 1: ds = gshmemi_mlx5_wqe_put_inline(w, idx, 7, 0, raddr, 1, payload, 8); break;
    case 2: ds = gshmemi_mlx5_wqe_get(w, idx, 7, 0, raddr, 1, laddr, 2, 64); break;
    case 3: ds = gshmemi_mlx5_wqe_fetch_add(w, idx, 7, 0, raddr, 1, laddr, 2, 8, 1); break;
    case 4: ds = gshmemi_mlx5_wqe_compare_swap(w, idx, 7, 0, raddr, 1, laddr, 2, 4, 1, 2); break;
    case 5: ds = gshmemi_mlx5_wqe_bitwise(w, idx, 7, 0, raddr, 1, laddr, 2, 8, GSHMEMI_MLX5_BIT_AND, 3); break;
    case 6: ds = gshmemi_mlx5_wqe_bitwise(w, idx, 7, 0, raddr, 1, laddr, 2, 4, GSHMEMI_MLX5_BIT_XOR, 3); break;
    case 7: ds = gshmemi_mlx5_wqe_nop(w, idx, 7, 0); break;
    default: ds = gshmemi_mlx5_wqe_masked_fa(w, idx, 7, 0, raddr, 1, laddr, 2, 8, 1, 0); break;
    }
    const gshmemi_mlx5_cqe_t *e = &cq[gshmemi_mlx5_cq_slot(threadIdx.x, 8)];
    char buf[GSHMEMI_MLX5_SYNDROME_BUF];
    if (gshmemi_mlx5_cqe_is_new(e->ok.op_own, threadIdx.x, 8) && gshmemi_mlx5_cqe_is_error(e->ok.op_own)) {
        gshmemi_mlx5_err_info_t i = gshmemi_mlx5_err_decode(&e->err);
        printf("error CQE: %s, opcode %s, wqe %u\n", gshmemi_mlx5_syndrome_str(i.syndrome, buf),
               gshmemi_mlx5_opcode_name(i.wqe_opcode), i.wqe_counter);
    }
    out[threadIdx.x] = ds + gshmemi_mlx5_sq_dbrec(idx) + (unsigned)gshmemi_mlx5_widen16(1000, idx);
}

#include "nvcc_check.h"

int main()
{
    uint8_t w[128];
    CHECK(gshmemi_mlx5_wqe_put(w, 0xfffe, 0xabc, GSHMEMI_MLX5_WQE_CTRL_CQ_UPDATE, 0x00007f0000001000ull, 0x11223344,
                               0x00007e0000002000ull, 0x55667788, 0x10000) == 3);
    static const uint8_t put[48] = {0x00, 0xff, 0xfe, 0x08, 0x00, 0x0a, 0xbc, 0x03, 0, 0, 0, 0x08, 0, 0, 0, 0,
                                    0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0,
                                    0x00, 0x01, 0x00, 0x00, 0x55, 0x66, 0x77, 0x88,
                                    0x00, 0x00, 0x7e, 0x00, 0x00, 0x00, 0x20, 0x00};
    CHECK(memcmp(w, put, sizeof(put)) == 0);
    CHECK(gshmemi_mlx5_wqe_bitwise(w, 1, 0xabc, 0, 0, 0, 0, 0, 8, GSHMEMI_MLX5_BIT_OR, 0x0102030405060708ull) == 5);
    static const uint8_t or_mask[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    CHECK(w[0] == 0x09 && w[3] == 0x14 && memcmp(w + 48, or_mask, 8) == 0);
    char buf[GSHMEMI_MLX5_SYNDROME_BUF];
    CHECK(strcmp(gshmemi_mlx5_syndrome_str(0x13, buf), "remote access error") == 0);
    CHECK(strcmp(gshmemi_mlx5_syndrome_str(0x42, buf), "unknown syndrome 0x42") == 0);
    (void)mlx5_wqe_builders_kernel; /* compiled for the device, not launched */
    printf("test_mlx5_wqe_nvcc: passed (host side as C++; device builders compiled)\n");
    return 0;
}
