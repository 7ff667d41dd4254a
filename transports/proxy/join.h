/* Non-blocking puts taken together by the proxy thread (proxy.c): requests that are non-blocking
 * puts, queued back to back, are sorted by PE and destination, and a put whose destination and
 * source both continue another's is joined to it, so that each joined run is one backend call.
 * Non-blocking puts may land in any order until a fence or a quiet, and none of those is inside
 * such a run of requests, so joining and reordering them changes nothing a program may rely on.
 * Pure: no CUDA, no proxy state (test/unit/test_proxy_join.c). */
#ifndef GSHMEMI_PROXY_JOIN_H
#define GSHMEMI_PROXY_JOIN_H

#include <stdint.h>

#include "../../device/proxy_fifo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_PROXY_JOIN_MAX 64 /* requests taken together at most */

typedef struct gshmemi_proxy_put_run {
    int pe;
    uint64_t dst;   /* offset in pe's heap */
    uint64_t src;   /* local address */
    uint64_t n;     /* bytes */
    uint64_t first; /* the lowest ticket of its requests (named when the run fails) */
    int count;      /* requests joined into it */
} gshmemi_proxy_put_run_t;

/* The n (1..GSHMEMI_PROXY_JOIN_MAX) put requests b[] of tickets t0, t0 + 1, ... as runs, in
 * (PE, destination) order, into run[] (n entries at most); returns how many. b[] holds
 * GSHMEMI_PROXY_PUT requests only (arg[1] destination offset, arg[2] source, arg[3] bytes);
 * duplicates of one destination start runs of their own, so no byte of a run is written twice. */
int gshmemi_proxy_join_puts(const gshmemi_proxy_req_t *b, int n, uint64_t t0, gshmemi_proxy_put_run_t *run);

#ifdef __cplusplus
}
#endif
#endif
