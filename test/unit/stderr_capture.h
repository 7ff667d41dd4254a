/* The unit tests' stderr capture: what a call logs, read back to check its message. Included
 * after <cmocka.h> it asserts through cmocka, otherwise it aborts on a failed call. capture_begin() sends stderr to a temporary file; capture_end()
 * restores it, echoes what was caught into the test log and returns it (valid until the next
 * capture). */
#ifndef GSHMEM_TEST_STDERR_CAPTURE_H
#define GSHMEM_TEST_STDERR_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef assert_true
#define capture_check(cond) assert_true(cond)
#else
#define capture_check(cond)                                                                       \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "stderr capture: %s failed (%s:%d)\n", #cond, __FILE__, __LINE__);     \
            abort();                                                                              \
        }                                                                                         \
    } while (0)
#endif

static char captured[16384];
static int capture_saved_fd = -1;
static FILE *capture_file;

static void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    capture_check(capture_file != NULL);
    capture_saved_fd = dup(2);
    capture_check(capture_saved_fd >= 0);
    capture_check(dup2(fileno(capture_file), 2) >= 0);
}

static const char *capture_end(void)
{
    size_t n;
    fflush(stderr);
    capture_check(dup2(capture_saved_fd, 2) >= 0);
    close(capture_saved_fd);
    rewind(capture_file);
    n = fread(captured, 1, sizeof(captured) - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
    fprintf(stderr, "[captured] %s", captured); /* shown in the test log */
    return captured;
}

#endif
