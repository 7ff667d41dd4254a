/* The CUDA modules that include gshmem.h: each registers, from a static constructor, the function
 * that fills its copy of the device state, with the layout version and size it was compiled with
 * (device/state.cuh). A module built against other headers would misread a state copied by another
 * size, so one whose pair differs from this library's is refused: shmem_init fails for a module
 * registered before it, and a module loaded later (dlopen) is not filled. */
#include <string.h>

#include "gshmem.h"
#include "state.h"

#define GSHMEMI_MAX_MODULES 1024
static struct {
    gshmemi_module_update_fn update;
    unsigned version;
    size_t size;
} modules[GSHMEMI_MAX_MODULES];
static int n_modules;

int gshmemi_module_check(const char *module, unsigned version, size_t size)
{
    if (version == GSHMEMI_DEVICE_STATE_VERSION && size == sizeof(gshmemi_device_state_t)) return GSHMEMI_OK;
    GSHMEMI_ERROR("init",
                  "%s was compiled against device state layout version %u (%zu bytes), but this libgshmem has "
                  "version %u (%zu bytes); rebuild it against this gshmem's headers",
                  module, version, size, (unsigned)GSHMEMI_DEVICE_STATE_VERSION, sizeof(gshmemi_device_state_t));
    return GSHMEMI_ERR_INVALID;
}

void gshmemi_module_register(gshmemi_module_update_fn update, unsigned version, size_t size)
{
    if (n_modules == GSHMEMI_MAX_MODULES) {
        GSHMEMI_ERROR("init", "more than %d CUDA translation units include gshmem.h", GSHMEMI_MAX_MODULES);
        return;
    }
    modules[n_modules].update = update;
    modules[n_modules].version = version;
    modules[n_modules].size = size;
    n_modules++;
    /* A module loaded after shmem_init (dlopen) gets the state at once, if it can read it. */
    if (gshmemi_state.initialized) {
        if (gshmemi_module_check("a CUDA module loaded after shmem_init", version, size) != GSHMEMI_OK) return;
        int err = update(&gshmemi_state.dstate, gshmemi_state.device);
        if (err) GSHMEMI_ERROR("init", "setting the device state of a late-loaded module failed: %s", cudaGetErrorString((cudaError_t)err));
    }
}

int gshmemi_modules_check(void)
{
    char what[64];
    int rc = GSHMEMI_OK;
    for (int i = 0; i < n_modules; i++) {
        snprintf(what, sizeof(what), "CUDA module %d (of %d that include gshmem.h)", i, n_modules);
        if (gshmemi_module_check(what, modules[i].version, modules[i].size) != GSHMEMI_OK) rc = GSHMEMI_ERR_INVALID;
    }
    return rc;
}

int gshmemi_modules_update(void)
{
    for (int i = 0; i < n_modules; i++) {
        int err = modules[i].update(&gshmemi_state.dstate, gshmemi_state.device);
        if (err) {
            GSHMEMI_ERROR("init", "setting the device state of module %d failed: %s", i, cudaGetErrorString((cudaError_t)err));
            return GSHMEMI_ERR_CUDA;
        }
    }
    return GSHMEMI_OK;
}

/* At finalize every module's device copy goes back to "not initialized" instead of pointing at
 * freed memory; a later shmem_init fills it anew. Harmless if it fails (a finalize from an atexit
 * handler may run after the CUDA runtime has unloaded): logged at info only. */
void gshmemi_modules_clear(int device)
{
    gshmemi_device_state_t zero;

    memset(&zero, 0, sizeof(zero));
    for (int i = 0; i < n_modules; i++) {
        int err = modules[i].update(&zero, device);
        if (err) {
            GSHMEMI_INFO("finalize", "clearing the device state of module %d failed: %s", i, cudaGetErrorString((cudaError_t)err));
            return;
        }
    }
}
