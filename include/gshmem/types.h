/* Types and constants shared by the host API, the device API and the runtime. */
#ifndef GSHMEM_TYPES_H
#define GSHMEM_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Every standard RMA type, as (name, C type). A new type is one line here. */
#define GSHMEM_RMA_TYPES(X)                                                                      \
    X(float, float)                                                                              \
    X(double, double)                                                                            \
    X(char, char)                                                                                \
    X(schar, signed char)                                                                        \
    X(short, short)                                                                              \
    X(int, int)                                                                                  \
    X(long, long)                                                                                \
    X(longlong, long long)                                                                       \
    X(uchar, unsigned char)                                                                      \
    X(ushort, unsigned short)                                                                    \
    X(uint, unsigned int)                                                                        \
    X(ulong, unsigned long)                                                                      \
    X(ulonglong, unsigned long long)                                                             \
    X(int8, int8_t)                                                                              \
    X(int16, int16_t)                                                                            \
    X(int32, int32_t)                                                                            \
    X(int64, int64_t)                                                                            \
    X(uint8, uint8_t)                                                                            \
    X(uint16, uint16_t)                                                                          \
    X(uint32, uint32_t)                                                                          \
    X(uint64, uint64_t)                                                                          \
    X(size, size_t)                                                                              \
    X(ptrdiff, ptrdiff_t)

/* The sizes of shmem_putSIZE / getSIZE / iputSIZE / igetSIZE, as (bits, bytes). */
#define GSHMEM_RMA_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

/* Comparison operators of wait_until / test. */
enum {
    SHMEM_CMP_EQ = 0,
    SHMEM_CMP_NE = 1,
    SHMEM_CMP_GT = 2,
    SHMEM_CMP_GE = 3,
    SHMEM_CMP_LT = 4,
    SHMEM_CMP_LE = 5,
};

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 64
#define SHMEM_VENDOR_STRING "gshmem"
#define GSHMEM_VERSION_MAJOR 0
#define GSHMEM_VERSION_MINOR 1
#define GSHMEM_VERSION_PATCH 0

/* PEs whose heap base is kept in constant memory; the rest are read from global memory. */
#define GSHMEMI_CONST_PEERS 32

/* What every device code module sees of the runtime (one copy per module, in __constant__). */
typedef struct gshmemi_device_state {
    int initialized;
    int my_pe;
    int n_pes;
    int debug_checks;            /* GSHMEM_DEBUG_CHECKS: validate PE and address on every device call */
    char *heap_base;             /* this PE's heap: symmetric addresses live in [heap_base, +heap_size) */
    size_t heap_size;
    char *const *peer_base;      /* device array [n_pes]: peer's heap as mapped here, NULL if unreachable */
    uint64_t *barrier_flags;     /* symmetric: n_pes words, word j written by PE j */
    uint64_t *barrier_seq;       /* this PE's barrier sequence counter (device memory) */
    uint64_t wait_timeout_ns;    /* device waits on other PEs trap after this long; 0 = never */
    char *peer_base_c[GSHMEMI_CONST_PEERS]; /* first PEs of peer_base, read through the constant cache */
} gshmemi_device_state_t;


/* Each CUDA module's device state is filled through a function compiled into that module. */
typedef int (*gshmemi_module_update_fn)(const gshmemi_device_state_t *state, int device);
#ifdef __cplusplus
extern "C"
#endif
    void
    gshmemi_module_register(gshmemi_module_update_fn update);

#endif
