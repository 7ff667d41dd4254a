/* IBGDA's host setup: an mlx5 device opened with DEVX, one UAR (the doorbell page),
 * the caller's SQ, CQ and doorbell-record buffers registered as umems, and per remote peer
 * GSHMEM_IBGDA_NUM_RC_PER_PE reliable-connected QPs, each with a send CQ of its own, created with
 * mlx5_prm.h's commands and moved to RTS from the peers' published blobs. The GPU side (WQEs,
 * doorbells, CQ polls) and the emulated NIC are elsewhere; nothing here touches CUDA: the
 * caller allocates the buffers (GPU memory, or pinned host memory) and maps the UAR for the GPU.
 *
 * No NIC was available where this was written: DEVX object creation, the commands' acceptance
 * by firmware, umem registration of GPU memory and the doorbell page's mapping are unverified;
 * everything here has run only against test/unit/fake_mlx5.c. */
#ifndef GSHMEMI_IBGDA_SETUP_H
#define GSHMEMI_IBGDA_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "../../device/layout.h" /* gshmemi_ibgda_qp_t */
#include "../common/ib_conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the published blob: how peers reach this PE's QPs -------------------------------------- */
#define GSHMEMI_IBGDA_BLOB_MAGIC 0x47534942u /* "GSIB" */

typedef struct {
    gshmemi_ib_addr_t addr; /* how its port is addressed (common/ib_conn.h), magic GSHMEMI_IBGDA_BLOB_MAGIC */
    uint16_t n_pes;      /* the job it was made for, checked on unpack */
    uint16_t n_rc;       /* QPs per peer */
    /* then uint32_t qpn[n_pes][n_rc]: qpn[pe][k] is this PE's k-th QP to pe (0: none) */
} gshmemi_ibgda_blob_t;

/* Bytes of one PE's blob in a job of n_pes with n_rc QPs per peer. */
size_t gshmemi_ibgda_blob_size(int n_pes, int n_rc);
/* Checks a peer's blob (magic, job shape, port, MTU, link layer); GSHMEMI_ERR_INVALID logged
 * naming pe otherwise. hdr may be NULL. */
int gshmemi_ibgda_blob_check(const void *blob, int pe, int n_pes, int n_rc, gshmemi_ibgda_blob_t *hdr);
/* The QP number blob's PE created as its k-th QP towards to_pe. */
uint32_t gshmemi_ibgda_blob_qpn(const void *blob, int to_pe, int k, int n_rc);

/* ---- buffers and their layout ----------------------------------------------------------------- */

/* Memory the NIC reads or writes, given by the caller. dmabuf_fd >= 0 registers it through the
 * dmabuf (mlx5dv_devx_umem_reg_ex; for GPU memory from cuMemGetHandleForAddressRange), else by
 * address (GPU memory then needs a peer-memory module such as nvidia-peermem). The dmabuf must
 * start at addr (offset 0) and cover size bytes, a multiple of the host page size. */
typedef struct {
    void *addr;
    size_t size;
    int dmabuf_fd;
} gshmemi_ibgda_buf_t;

/* Where QP q (0 .. n_qps-1, in peer order then k) keeps its parts: SQ ring at q * wq_stride in the
 * wq buffer, CQEs at q * cq_stride in the cq buffer, doorbell records 64 bytes apart in the dbr
 * buffer (the QP's at q * 64, its CQ's at (n_qps + q) * 64). Every size is whole 4 KiB pages. */
typedef struct {
    int n_qps;
    size_t wq_stride, wq_bytes;
    size_t cq_stride, cq_bytes;
    size_t dbr_bytes;
} gshmemi_ibgda_layout_t;
#define GSHMEMI_IBGDA_DBR_STRIDE 64

/* GSHMEMI_ERR_INVALID, logged naming the argument, on sizes out of the PRM's ranges (log_sq_bbs
 * 0..15, log_cqes 0..24). */
int gshmemi_ibgda_layout(int n_qps, unsigned log_sq_bbs, unsigned log_cqes, gshmemi_ibgda_layout_t *out);

/* ---- setup ------------------------------------------------------------------------------------ */

typedef struct {
    int my_pe, n_pes;
    int n_rc;                 /* QPs per remote peer (GSHMEM_IBGDA_NUM_RC_PER_PE) */
    const uint8_t *remote;    /* [n_pes]: 1 for the peers IBGDA serves; NULL: every other PE */
    unsigned log_sq_bbs;      /* each SQ: 2^log_sq_bbs 64-byte basic blocks */
    unsigned log_cqes;        /* each CQ: 2^log_cqes 64-byte CQEs */
    int collapsed_cq;         /* every CQE in entry 0 (NVSHMEM's choice); 0: a ring */
    gshmemi_ibgda_buf_t wq, cq, dbr; /* at least gshmemi_ibgda_layout's bytes each */
} gshmemi_ibgda_args_t;

typedef struct {
    int peer, k;              /* the k-th QP to PE peer */
    uint32_t qpn, cqn;
    size_t wq_offset, cq_offset, qp_dbr_offset, cq_dbr_offset;
} gshmemi_ibgda_qp_info_t;

typedef struct gshmemi_ibgda gshmemi_ibgda_t;

/* Opens the device (GSHMEM_IB_DEVICE, else the first mlx5 device with an active port), its PD,
 * a UAR, the umems of a's buffers, and every QP and CQ (in RESET). On failure everything made
 * is released and *out is NULL: GSHMEMI_ERR_UNSUPPORTED with one info line when this host has no
 * libibverbs, no libmlx5, no RDMA device, no mlx5 device or no DEVX; GSHMEMI_ERR_INVALID when
 * GSHMEM_IB_DEVICE names a device that is not there; other errors logged. */
int gshmemi_ibgda_open(const gshmemi_ibgda_args_t *a, gshmemi_ibgda_t **out);
/* This PE's blob (gshmemi_ibgda_blob_size bytes) into out. */
void gshmemi_ibgda_blob(const gshmemi_ibgda_t *g, void *out);
/* Moves every QP through INIT and RTR to RTS, towards the QP its peer published for this PE in
 * blobs ([n_pes][blob_size], allgathered). On failure the QPs stay as they are; close releases. */
int gshmemi_ibgda_connect(gshmemi_ibgda_t *g, const void *blobs);
/* Releases everything in the reverse order of its making; NULL does nothing. */
void gshmemi_ibgda_close(gshmemi_ibgda_t *g);

/* Registers memory the peers' WQEs target and this PE's WQEs read or write (a heap chunk, a
 * staging buffer) with remote read, write and atomic access: through the dmabuf when dmabuf_fd >=
 * 0 and libibverbs has ibv_reg_dmabuf_mr (the fd's offset dmabuf_offset is addr), else by address
 * (GPU memory then needs a peer-memory module). *mr is released by gshmemi_ibgda_dereg_mr or, if
 * still registered, by close. A dmabuf registration that fails is retried by address (one info
 * line). Errors logged naming the range and both ways tried. */
typedef struct gshmemi_ibgda_mr gshmemi_ibgda_mr_t;
int gshmemi_ibgda_reg_mr(gshmemi_ibgda_t *g, void *addr, size_t size, int dmabuf_fd, uint64_t dmabuf_offset,
                         gshmemi_ibgda_mr_t **mr, uint32_t *lkey, uint32_t *rkey);
void gshmemi_ibgda_dereg_mr(gshmemi_ibgda_t *g, gshmemi_ibgda_mr_t *mr);

int gshmemi_ibgda_n_qps(const gshmemi_ibgda_t *g);
void gshmemi_ibgda_qp_info(const gshmemi_ibgda_t *g, int q, gshmemi_ibgda_qp_info_t *out);
/* The doorbell page: its CPU mapping (what cudaHostRegister(IoMemory) would map for the GPU),
 * the doorbell register's address in it, and its UAR page id. */
void gshmemi_ibgda_uar(const gshmemi_ibgda_t *g, void **page, void **doorbell, uint32_t *page_id);

/* ---- doorbell mode ---------------------------------------------------------------------------- */

/* GSHMEM_IBGDA_DOORBELL (GSHMEMI_DOORBELL_*) and whether the UAR page could be mapped for the GPU
 * (map_error: why not, when it could not) give *mode GSHMEMI_DOORBELL_GPU or _CPU, with one info
 * line saying why. gpu asked for but not mapped: GSHMEMI_ERR_UNSUPPORTED, logged as an error
 * naming the variable and the cause. */
int gshmemi_ibgda_doorbell_mode(int asked, int uar_mapped, const char *map_error, int *mode);

/* ---- the transport's use of it (transports/ibgda/ibgda.c, GSHMEM_IBGDA_NIC=hw) --------------- */

/* Whether this PE can open an mlx5 device with DEVX (the cheap part of gshmemi_ibgda_open: the
 * libraries, the device, its port; nothing is kept): 1 if so. 0 after one line naming why: an
 * info line that the proxy serves this PE's remote peers, or, forced (GSHMEM_REMOTE_TRANSPORT=
 * ibgda), an error line. */
int gshmemi_ibgda_probe(int forced);
/* The same, silent: 1 with the device and port ("mlx5_0 port 1") in dev; else why in why and 0
 * (this host has no such device) or -1 (the device GSHMEM_IB_DEVICE names is absent or unusable). */
int gshmemi_ibgda_probe_why(char *dev, size_t dev_cap, char *why, size_t why_cap);

/* Where the GPU sees what gshmemi_ibgda_open was given, and what else a device record needs. */
typedef struct {
    char *wq, *cq;             /* the wq and cq buffers */
    char *dbr;                 /* the dbr buffer for the QPs' records (cpu doorbells: pinned host
                                * memory, this is its device-mapped address) */
    char *dbr_cq;              /* the dbr buffer for the CQs' records (the same buffer) */
    volatile uint64_t *db;     /* the doorbell register mapped for the GPU; NULL: a host thread rings */
    char *aux;                 /* per QP, aux_stride bytes: counters, result words, BB counts */
    size_t aux_stride;         /* at least gshmemi_ibgda_aux_bytes(sq_bbs) */
} gshmemi_ibgda_gpu_view_t;

/* Bytes of one QP's counters, result words and BB counts (whole 4 KiB pages). */
size_t gshmemi_ibgda_aux_bytes(uint32_t sq_bbs);
/* Fills recs[peer * n_rc + k] (of [n_pes * n_rc], as the device state holds them) for QP k of
 * each peer with QPs; QP q (gshmemi_ibgda_qp_info's order) gets the q-th aux area. Keys and raddr
 * are left 0 (the caller's: they come with the heap's registration). Returns the number of peers
 * filled. */
int gshmemi_ibgda_fill_records(const gshmemi_ibgda_t *g, const gshmemi_ibgda_gpu_view_t *v, gshmemi_ibgda_qp_t *recs);

/* Tests: the libraries gshmemi_ibgda_open loads (defaults libibverbs.so.1, libmlx5.so.1); NULL
 * restores a default. Unloads loaded ones. */
void gshmemi_ibgda_set_libraries_for_test(const char *ibverbs, const char *mlx5);

#ifdef __cplusplus
}
#endif
#endif
