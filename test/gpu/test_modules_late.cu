/* Modules loaded after shmem_init (dlopen): one built against this gshmem's device state layout is
 * filled at its registration and sees the runtime's state; one built with another layout
 * (another GSHMEMI_CONST_PEERS) is refused there, with a message naming the field that differs.
 * Usage: test_modules_late GOOD_MODULE.so OTHER_LAYOUT_MODULE.so */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "gpu_test.cuh"

typedef int (*module_pe_fn)(void);

/* dlopens path with stderr going to a temporary file; returns the handle, err gets what it wrote. */
static void *open_capturing(const char *path, char *err, size_t len)
{
    char tmp[] = "/tmp/gshmem_modlate_XXXXXX";
    int fd = mkstemp(tmp), saved = dup(2);
    GT_CHECK(fd >= 0 && saved >= 0, "temporary file for stderr");
    unlink(tmp);
    fflush(stderr);
    dup2(fd, 2);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, err, len - 1, 0);
    close(fd);
    err[n > 0 ? n : 0] = '\0';
    fputs(err, stderr);
    GT_CHECK(h != NULL, "dlopen %s: %s", path, dlerror());
    return h;
}

int main(int argc, char **argv)
{
    char err[8192], want[256];
    gt_skip_without_gpu();
    if (argc != 3) {
        fprintf(stderr, "usage: %s GOOD_MODULE.so OTHER_LAYOUT_MODULE.so\n", argv[0]);
        return 2;
    }
    shmem_init();
    const int me = shmem_my_pe();

    void *good = open_capturing(argv[1], err, sizeof(err));
    GT_CHECK(strstr(err, "another device layout") == NULL, "the module of this layout was refused: %s", err);
    module_pe_fn good_pe = (module_pe_fn)dlsym(good, "module_late_my_pe");
    GT_CHECK(good_pe != NULL, "module_late_my_pe in %s", argv[1]);
    GT_CHECK(good_pe() == me, "the late module of this layout sees PE %d, expected %d", good_pe(), me);

    (void)open_capturing(argv[2], err, sizeof(err));
    snprintf(want, sizeof(want), "a CUDA module loaded after shmem_init was compiled against another device layout: "
             "gshmemi_device_state_t.peer_base_c at offset %zu", offsetof(gshmemi_device_state_t, peer_base_c));
    GT_CHECK(strstr(err, want) != NULL, "no refusal naming the field for %s; stderr: '%s'", argv[2], err);

    shmem_barrier_all();
    if (me == 0) printf("test_modules_late: a late module of this layout filled, one of another layout refused\n");
    shmem_finalize();
    return 0;
}
