/* The host checks of the unit tests built by nvcc (no cmocka there): CHECK(c) prints the file,
 * the line and the condition and returns 1 from main when c is false. */
#ifndef GSHMEM_TEST_NVCC_CHECK_H
#define GSHMEM_TEST_NVCC_CHECK_H

#include <cstdio>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#endif
