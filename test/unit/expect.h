/* A check that counts instead of stopping, for the unit tests without cmocka: EXPECT(cond, fmt,
 * ...) prints the file, the line and the message when cond is false and counts it in
 * expect_failures; main returns expect_failures != 0. */
#ifndef GSHMEM_TEST_EXPECT_H
#define GSHMEM_TEST_EXPECT_H

#include <stdio.h>

static int expect_failures;
#define EXPECT(cond, ...)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                       \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            expect_failures++;                                                                    \
        }                                                                                         \
    } while (0)

#endif
