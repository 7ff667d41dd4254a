/* shmemx_collective_launch and its grid-size query refuse bad arguments, and any call before
 * shmem_init, with a logged reason that names the problem; no GPU needed (nothing is launched). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gshmem.h>

static __global__ void noop_kernel(int *p) { if (p) *p = 1; }

static int failures;

/* Runs `call` with stderr captured; it must return -1 and log text containing `want`. */
#define EXPECT_REFUSED(call, want)                                                                 \
    do {                                                                                           \
        char text_[1024] = {0};                                                                    \
        FILE *f_ = tmpfile();                                                                      \
        int saved_ = dup(2), rc_;                                                                  \
        fflush(stderr);                                                                            \
        dup2(fileno(f_), 2);                                                                       \
        rc_ = (call);                                                                              \
        fflush(stderr);                                                                            \
        dup2(saved_, 2);                                                                           \
        close(saved_);                                                                             \
        rewind(f_);                                                                                \
        (void)!fread(text_, 1, sizeof(text_) - 1, f_);                                             \
        fclose(f_);                                                                                \
        if (rc_ != -1 || !strstr(text_, want)) {                                                   \
            fprintf(stderr, "FAILED %s: returned %d, logged \"%s\", wanted -1 and \"%s\"\n", #call, rc_, text_, want); \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(void)
{
    const void *fn = (const void *)noop_kernel;
    int *none = NULL, grid = -5;
    void *args[] = {&none};
    EXPECT_REFUSED(shmemx_collective_launch(NULL, 1, 32, args, 0, 0), "shmemx_collective_launch: func is NULL");
    EXPECT_REFUSED(shmemx_collective_launch(fn, dim3(0), 32, args, 0, 0), "grid of 0 CTAs");
    EXPECT_REFUSED(shmemx_collective_launch(fn, 1, dim3(0), args, 0, 0), "block of 0 x 1 x 1 threads");
    EXPECT_REFUSED(shmemx_collective_launch(fn, 1, dim3(32, 32, 2), args, 0, 0), "block of 32 x 32 x 2 threads");
    EXPECT_REFUSED(shmemx_collective_launch(fn, 1, 32, args, 0, 0), "shmemx_collective_launch: called before shmem_init");
    EXPECT_REFUSED(shmemx_collective_launch_query_gridsize(fn, 32, args, 0, NULL), "gridsize is NULL");
    EXPECT_REFUSED(shmemx_collective_launch_query_gridsize(NULL, 32, args, 0, &grid), "func is NULL");
    EXPECT_REFUSED(shmemx_collective_launch_query_gridsize(fn, 32, args, 0, &grid),
                   "shmemx_collective_launch_query_gridsize: called before shmem_init");
    if (grid != -5) {
        fprintf(stderr, "FAILED: a refused query wrote the grid size (%d)\n", grid);
        failures++;
    }
    if (failures) return 1;
    printf("shmemx_collective_launch: 8 bad calls refused with their reasons\n");
    return 0;
}
