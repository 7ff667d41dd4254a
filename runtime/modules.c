/* The CUDA modules that include gshmem.h: each registers, from a static constructor, the function
 * that fills its copy of the device state, with the layout table it was compiled with
 * (device/state.cuh, device/layout_check.h). A module built against other headers would misread
 * the state (or the FIFO requests and QP records it points to), so one whose table differs from
 * this library's in any entry is refused: shmem_init fails for a module registered before it, and
 * a module loaded later (dlopen) is not filled. */
#include <stdlib.h>
#include <string.h>

#include "gshmem.h"
#include "device/layout_check.h"
#include "base/cudawrap.h"
#include "state.h"

#define GSHMEMI_MAX_MODULES 1024
static struct {
    gshmemi_module_update_fn update;
    const gshmemi_layout_entry_t *layout; /* NULL: registered by gshmemi_module_register */
    unsigned n_entries;                   /* ... or the layout version it carries */
    int preloaded;                        /* its kernels were loaded by gshmemi_module_preload */
} modules[GSHMEMI_MAX_MODULES];
static int n_modules;
static int updating = -1; /* the module whose update runs now, or -1 (a library module) */
static int update_module(int i, const gshmemi_device_state_t *state, int device);

static const gshmemi_layout_entry_t library_layout[] = GSHMEMI_LAYOUT_ROWS;
#define LIBRARY_ENTRIES ((unsigned)(sizeof(library_layout) / sizeof(library_layout[0])))

const gshmemi_layout_entry_t *gshmemi_layout_of_library(unsigned *n)
{
    *n = LIBRARY_ENTRIES;
    return library_layout;
}

/* One entry as the message shows it: a field's offset and size, a struct's size, a constant. */
static void describe(char *out, size_t cap, const gshmemi_layout_entry_t *e)
{
    if (e->size == 0) snprintf(out, cap, "%s = %llu", e->name, (unsigned long long)e->offset);
    else if (strncmp(e->name, "sizeof(", 7) == 0) snprintf(out, cap, "%s = %llu", e->name, (unsigned long long)e->size);
    else snprintf(out, cap, "%s at offset %llu, %llu bytes", e->name, (unsigned long long)e->offset, (unsigned long long)e->size);
}

int gshmemi_module_check(const char *module, const gshmemi_layout_entry_t *layout, unsigned n)
{
    char theirs[160], ours[160];
    unsigned i;
    if (!layout) {
        GSHMEMI_ERROR("init", "%s was compiled against gshmem headers that predate this library's layout check (device state "
                              "layout version %u); rebuild it against this gshmem's headers", module, n);
        return GSHMEMI_ERR_INVALID;
    }
    for (i = 0; i < n && i < LIBRARY_ENTRIES; i++) {
        const gshmemi_layout_entry_t *a = &layout[i], *b = &library_layout[i];
        if (a->name && strcmp(a->name, b->name) == 0 && a->offset == b->offset && a->size == b->size) continue;
        if (!a->name) snprintf(theirs, sizeof(theirs), "entry %u unnamed", i);
        else describe(theirs, sizeof(theirs), a);
        describe(ours, sizeof(ours), b);
        GSHMEMI_ERROR("init", "%s was compiled against another device layout: %s there, %s in this libgshmem; rebuild it "
                              "against this gshmem's headers", module, theirs, ours);
        return GSHMEMI_ERR_INVALID;
    }
    if (n != LIBRARY_ENTRIES) {
        GSHMEMI_ERROR("init", "%s was compiled against another device layout: %u layout entries there, %u in this libgshmem; "
                              "rebuild it against this gshmem's headers", module, n, LIBRARY_ENTRIES);
        return GSHMEMI_ERR_INVALID;
    }
    return GSHMEMI_OK;
}

static void add_module(gshmemi_module_update_fn update, const gshmemi_layout_entry_t *layout, unsigned n)
{
    if (n_modules == GSHMEMI_MAX_MODULES) {
        GSHMEMI_ERROR("init", "more than %d CUDA translation units include gshmem.h", GSHMEMI_MAX_MODULES);
        return;
    }
    modules[n_modules].update = update;
    modules[n_modules].layout = layout;
    modules[n_modules].n_entries = n;
    modules[n_modules].preloaded = 0;
    n_modules++;
    /* A module loaded after shmem_init (dlopen) gets the state at once, if it can read it. */
    if (gshmemi_state.initialized) {
        if (gshmemi_module_check("a CUDA module loaded after shmem_init", layout, n) != GSHMEMI_OK) return;
        int err = update_module(n_modules - 1, &gshmemi_state.dstate, gshmemi_state.device);
        if (err) GSHMEMI_ERROR("init", "setting the device state of a late-loaded module failed: %s", cudaGetErrorString((cudaError_t)err));
    }
}

void gshmemi_module_register_layout(gshmemi_module_update_fn update, const gshmemi_layout_entry_t *layout, unsigned n)
{
    /* a NULL table is refused as an empty one (not taken for the layout version of
     * gshmemi_module_register) */
    add_module(update, layout ? layout : library_layout, layout ? n : 0);
}

void gshmemi_module_register(gshmemi_module_update_fn update, unsigned version, size_t size)
{
    (void)size;
    add_module(update, NULL, version);
}

/* Lazy loading (CUDA_MODULE_LOADING=LAZY, CUDA's default since 12.2) loads a kernel at its first
 * launch, and loading can wait until the kernels already running on the GPU finish while holding
 * the context's lock. Where a host thread of gshmem serves device requests (the proxy, the
 * emulated NIC), a kernel that waits for it, and a first launch queued behind that kernel, then
 * hang the job: the serving thread's next CUDA call waits for the lock. So, where such a thread
 * runs, every kernel of every module that includes gshmem.h, and of the library's own modules,
 * is loaded at shmem_init (and at registration for a module loaded later), whatever
 * CUDA_MODULE_LOADING says. Modules that do not include gshmem.h (other libraries') are not
 * known here: docs/transports.md says what to do about them. */
static int preload_wanted;
static int preload_modules, preload_kernels;

void gshmemi_modules_set_preload(int wanted)
{
    preload_wanted = wanted;
    preload_modules = preload_kernels = 0;
    for (int i = 0; i < n_modules; i++) modules[i].preloaded = 0;
}

/* modules[i].update, with `updating` naming it for gshmemi_module_preload. */
static int update_module(int i, const gshmemi_device_state_t *state, int device)
{
    updating = i;
    int err = modules[i].update(state, device);
    updating = -1;
    return err;
}

int gshmemi_modules_preloaded(int *kernels)
{
    *kernels = preload_kernels;
    return preload_modules;
}

int gshmemi_module_preload(void *function)
{
    static int warned;
    CUmodule mod;
    CUfunction *fns;
    unsigned n = 0;
    CUresult res;

    if (!preload_wanted || (updating >= 0 && modules[updating].preloaded)) return 0;
    if (updating >= 0) modules[updating].preloaded = 1;
    if (!gshmemi_cu.cuFuncGetModule || !gshmemi_cu.cuModuleGetFunctionCount || !gshmemi_cu.cuModuleEnumerateFunctions ||
        !gshmemi_cu.cuFuncIsLoaded || !gshmemi_cu.cuFuncLoad) {
        if (!warned++)
            GSHMEMI_WARN("init", "this CUDA driver cannot load a module's kernels on request (CUDA 12.4 or newer can): set "
                                 "CUDA_MODULE_LOADING=EAGER, or a kernel loaded while another waits for the host proxy can hang");
        return 0;
    }
    res = gshmemi_cu.cuFuncGetModule(&mod, (CUfunction)function);
    if (res == CUDA_SUCCESS) res = gshmemi_cu.cuModuleGetFunctionCount(&n, mod);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_WARN("init", "cannot list the kernels of a CUDA module to load them now (%s): set CUDA_MODULE_LOADING=EAGER",
                     gshmemi_cu_errstr(res));
        return 0;
    }
    fns = calloc(n ? n : 1, sizeof(*fns));
    if (!fns) return 0;
    res = gshmemi_cu.cuModuleEnumerateFunctions(fns, n, mod);
    for (unsigned i = 0; res == CUDA_SUCCESS && i < n; i++) {
        CUfunctionLoadingState ls = CU_FUNCTION_LOADING_STATE_UNLOADED;
        res = gshmemi_cu.cuFuncIsLoaded(&ls, fns[i]);
        if (res == CUDA_SUCCESS && ls != CU_FUNCTION_LOADING_STATE_LOADED) {
            res = gshmemi_cu.cuFuncLoad(fns[i]);
            if (res == CUDA_SUCCESS) preload_kernels++;
        }
    }
    free(fns);
    if (res != CUDA_SUCCESS) {
        GSHMEMI_WARN("init", "loading the kernels of a CUDA module failed (%s): set CUDA_MODULE_LOADING=EAGER", gshmemi_cu_errstr(res));
        return 0;
    }
    preload_modules++;
    return 0;
}

int gshmemi_modules_check(void)
{
    char what[64];
    int rc = GSHMEMI_OK;
    for (int i = 0; i < n_modules; i++) {
        snprintf(what, sizeof(what), "CUDA module %d (of %d that include gshmem.h)", i, n_modules);
        if (gshmemi_module_check(what, modules[i].layout, modules[i].n_entries) != GSHMEMI_OK) rc = GSHMEMI_ERR_INVALID;
    }
    return rc;
}

int gshmemi_modules_update(void)
{
    for (int i = 0; i < n_modules; i++) {
        int err = update_module(i, &gshmemi_state.dstate, gshmemi_state.device);
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
        int err = update_module(i, &zero, device);
        if (err) {
            GSHMEMI_INFO("finalize", "clearing the device state of module %d failed: %s", i, cudaGetErrorString((cudaError_t)err));
            return;
        }
    }
}
