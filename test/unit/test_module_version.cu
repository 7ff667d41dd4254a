/* A CUDA module built against another device layout is refused, naming the first entry of the
 * layout list (device/layout_check.h) that differs, as the module has it and as the library has
 * it. This file is compiled with another GSHMEMI_CONST_PEERS than the library (test/meson.build),
 * so its own module's device state has a longer peer_base_c and every field after it moved:
 * shmem_init must refuse it before it opens anything (no GPU needed: the check is its first
 * step). The check itself must accept exactly the library's own table and refuse each kind of
 * change: a field reordered in the device state, a team field moved, a changed proxy request
 * encoding, an IBGDA QP record field resized, a shorter list, and a module registered without a
 * list. Messages are read back from this process's stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"
#include "device/layout_check.h"
#include "stderr_capture.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stdout, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stdout, __VA_ARGS__);                                                          \
            fprintf(stdout, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static gshmemi_layout_entry_t changed[1024];
static unsigned n_changed;

/* A copy of the library's table to change. */
static void copy_library(void)
{
    unsigned n;
    const gshmemi_layout_entry_t *lib = gshmemi_layout_of_library(&n);
    if (n > sizeof(changed) / sizeof(changed[0])) {
        printf("FAIL: the library's layout has %u entries, the test room for %zu\n", n, sizeof(changed) / sizeof(changed[0]));
        exit(1);
    }
    memcpy(changed, lib, n * sizeof(*lib));
    n_changed = n;
}

static gshmemi_layout_entry_t *entry(const char *name)
{
    for (unsigned i = 0; i < n_changed; i++)
        if (strcmp(changed[i].name, name) == 0) return &changed[i];
    printf("FAIL: no layout entry %s\n", name);
    exit(1);
}

/* gshmemi_module_check of `changed` (n entries): its status, and what it logged in *log. */
static int check_changed(const char *module, unsigned n, const char **log)
{
    capture_begin();
    int rc = gshmemi_module_check(module, changed, n);
    *log = capture_end();
    return rc;
}

/* The refusal of `changed` names `theirs` and `ours`. */
static void expect_refused(const char *what, unsigned n, const char *theirs, const char *ours)
{
    const char *log;
    int rc = check_changed(what, n, &log);
    CHECK(rc != 0 && strstr(log, what) && strstr(log, theirs) && strstr(log, ours) && strstr(log, "rebuild it"),
          "%s: rc %d, message '%s' (wanted '%s' and '%s')", what, rc, log, theirs, ours);
}

int main(void)
{
    const char *log;
    char theirs[160], ours[160];
    int rc;

    copy_library();
    rc = check_changed("module own", n_changed, &log);
    CHECK(rc == 0 && log[0] == '\0', "this library's own layout refused (rc %d): %s", rc, log);

    /* my_pe and n_pes swapped: the same set of (offset, size) pairs, under other names */
    gshmemi_layout_entry_t *my_pe = entry("gshmemi_device_state_t.my_pe"), *n_pes = entry("gshmemi_device_state_t.n_pes");
    uint64_t my_pe_offset = my_pe->offset;
    my_pe->offset = n_pes->offset;
    n_pes->offset = my_pe_offset;
    snprintf(theirs, sizeof(theirs), "gshmemi_device_state_t.my_pe at offset %llu, 4 bytes there", (unsigned long long)my_pe->offset);
    snprintf(ours, sizeof(ours), "gshmemi_device_state_t.my_pe at offset %llu, 4 bytes in this libgshmem",
             (unsigned long long)my_pe_offset);
    expect_refused("module reordered", n_changed, theirs, ours);

    copy_library();
    entry("gshmemi_team_dev_t.radix")->offset += 4;
    expect_refused("module team", n_changed, "gshmemi_team_dev_t.radix at offset", "this libgshmem");

    copy_library();
    entry("GSHMEMI_PROXY_PUT")->offset = 9;
    snprintf(ours, sizeof(ours), "GSHMEMI_PROXY_PUT = %d in this libgshmem", GSHMEMI_PROXY_PUT);
    expect_refused("module fifo", n_changed, "GSHMEMI_PROXY_PUT = 9 there", ours);

    copy_library();
    entry("gshmemi_ibgda_qp_t.rkey")->size = 8;
    expect_refused("module qp", n_changed, "gshmemi_ibgda_qp_t.rkey at offset", ", 8 bytes there");

    copy_library();
    snprintf(theirs, sizeof(theirs), "%u layout entries there, %u in this libgshmem", n_changed - 1, n_changed);
    expect_refused("module shorter", n_changed - 1, theirs, "another device layout");

    capture_begin();
    rc = gshmemi_module_check("module unlisted", NULL, 7);
    log = capture_end();
    CHECK(rc != 0 && strstr(log, "module unlisted was compiled against gshmem headers that predate") &&
              strstr(log, "layout version 7"),
          "a module without a layout list: rc %d, message '%s'", rc, log);

    /* This file's own module registered its table at load, with a longer peer_base_c: init refuses
     * it, naming that field (libgshmem's own collective kernels are a module too, so this one's
     * number is not fixed). */
    capture_begin();
    rc = shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL);
    log = capture_end();
    snprintf(theirs, sizeof(theirs), "that include gshmem.h) was compiled against another device layout: "
             "gshmemi_device_state_t.peer_base_c at offset %zu, %zu bytes there",
             offsetof(gshmemi_device_state_t, peer_base_c), sizeof(((gshmemi_device_state_t *)0)->peer_base_c));
    CHECK(rc != 0 && strstr(log, theirs) && strstr(log, "in this libgshmem"),
          "shmem_init with a module of another layout: rc %d, message '%s' (wanted '%s')", rc, log, theirs);
    CHECK(strstr(log, "driver") == NULL && strstr(log, "bootstrap") == NULL, "shmem_init went on past the refusal: '%s'", log);

    if (failures) return 1;
    printf("test_module_version: own layout accepted; a reordered state, a moved team field, another proxy encoding, "
           "a resized QP field, a shorter list, an unlisted module and a module of another layout refused, naming the entry\n");
    return 0;
}
