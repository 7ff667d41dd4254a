/* The unit tests' stderr capture: what a call logs, read back to check its message. Include it
 * after <cmocka.h> (it asserts). capture_begin() sends stderr to a temporary file; capture_end()
 * restores it, echoes what was caught into the test log and returns it (valid until the next
 * capture). */
#ifndef GSHMEM_TEST_STDERR_CAPTURE_H
#define GSHMEM_TEST_STDERR_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

static char captured[16384];
static int capture_saved_fd = -1;
static FILE *capture_file;

static void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    assert_non_null(capture_file);
    capture_saved_fd = dup(2);
    assert_true(capture_saved_fd >= 0);
    assert_true(dup2(fileno(capture_file), 2) >= 0);
}

static const char *capture_end(void)
{
    size_t n;
    fflush(stderr);
    assert_true(dup2(capture_saved_fd, 2) >= 0);
    close(capture_saved_fd);
    rewind(capture_file);
    n = fread(captured, 1, sizeof(captured) - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
    fprintf(stderr, "[captured] %s", captured); /* shown in the test log */
    return captured;
}

#endif
