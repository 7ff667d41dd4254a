/* NVSHMEM's extension header: gshmem's compatibility <nvshmem.h> already holds every nvshmemx_
 * name it maps, so this only includes it. */
#ifndef GSHMEM_NVSHMEMX_COMPAT_H
#define GSHMEM_NVSHMEMX_COMPAT_H
#include "nvshmem.h"
#endif
