/* Placeholder until the ibverbs RC backend lands: reports itself unavailable. */
#include "backend.h"

static int verbs_open(gshmemi_transport_ctx_t *ctx, gshmemi_proxy_backend_t **be, void *my_blob)
{
    (void)ctx, (void)my_blob;
    *be = NULL;
    GSHMEMI_INFO("proxy", "verbs backend: not in this build");
    return GSHMEMI_ERR_UNSUPPORTED;
}

const gshmemi_proxy_backend_ops_t gshmemi_proxy_backend_verbs = {.name = "verbs", .blob_size = 0, .open = verbs_open};
