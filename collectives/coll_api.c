/* Host entry points of barriers and collectives: the blocking forms run on the runtime's stream
 * and wait for it; the on-stream forms only enqueue (the collectives' entry, gshmemi_coll_stream,
 * is in coll.cu, next to the launcher it calls). */
#include <limits.h>

#include "gshmem.h"
#include "../runtime/base/log.h"
#include "launch.h"

/* The reduction type lists map char to a signed element kind. */
_Static_assert(CHAR_MIN < 0, "gshmem's reductions take char as signed");

const gshmemi_coll_runtime_t *gshmemi_coll_rt;

void gshmemi_coll_bind(const gshmemi_coll_runtime_t *rt) { gshmemi_coll_rt = rt; }

int gshmemi_coll_require_init_at(const char *routine, const char *file, int line)
{
    if (gshmemi_coll_rt && gshmemi_coll_rt->initialized()) return 1;
    gshmemi_log_before_init("coll", routine, file, line);
    return 0;
}

static int finish(const char *routine, int rc)
{
    if (rc != GSHMEMI_OK) return -1;
    cudaError_t err = cudaStreamSynchronize(gshmemi_coll_rt->stream());
    if (err != cudaSuccess) {
        GSHMEMI_ERROR("coll", "%s failed: %s", routine, cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

int gshmemi_host_launch_error(const char *routine, const char *reason)
{
    GSHMEMI_ERROR("coll", "%s: %s", routine ? routine : "(launch)", reason ? reason : "failed");
    return -1;
}

int gshmemi_coll_host(const char *routine, shmem_team_t team, gshmemi_coll_args_t *a, int dtype, int op)
{
    if (!gshmemi_coll_require_init(routine)) return -1;
    return finish(routine, gshmemi_coll_launch(routine, team, a, dtype, op, gshmemi_coll_rt->stream()));
}

int gshmemi_host_barrier(shmem_team_t team, const char *routine)
{
    if (!gshmemi_coll_require_init(routine)) return -1;
    /* barrier: host-initiated RMA completes on the runtime stream, which the barrier follows */
    return finish(routine, gshmemi_launch_barrier(team, gshmemi_coll_rt->stream(), routine));
}

void shmemx_barrier_on_stream(shmem_team_t team, struct CUstream_st *stream)
{
    if (gshmemi_coll_require_init("shmemx_barrier_on_stream")) gshmemi_launch_barrier(team, (cudaStream_t)stream, "shmemx_barrier_on_stream");
}

void shmemx_sync_on_stream(shmem_team_t team, struct CUstream_st *stream)
{
    if (gshmemi_coll_require_init("shmemx_sync_on_stream")) gshmemi_launch_barrier(team, (cudaStream_t)stream, "shmemx_sync_on_stream");
}

void shmemx_sync_all_on_stream(struct CUstream_st *stream) { shmemx_sync_on_stream(SHMEM_TEAM_WORLD, stream); }

void shmem_barrier(shmem_team_t team) { gshmemi_host_barrier(team, "shmem_barrier"); }
void shmem_sync(shmem_team_t team) { gshmemi_host_barrier(team, "shmem_sync"); }
void shmem_sync_all(void) { gshmemi_host_barrier(SHMEM_TEAM_WORLD, "shmem_sync_all"); }
