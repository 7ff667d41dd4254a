#include "log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int gshmemi_log_level = GSHMEMI_LOG_WARN;
int gshmemi_log_pe = -1;

static const char *level_name[] = {"ERROR", "WARN", "INFO", "TRACE"};

void gshmemi_log_write(int level, const char *subsys, const char *file, int line, const char *fmt, ...)
{
    char host[64] = "?", pe[16] = "", when[32] = "";
    char msg[1024], out[1400];
    va_list ap;
    const char *base = strrchr(file, '/');
    int n;

    gethostname(host, sizeof(host) - 1);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (gshmemi_log_pe >= 0) snprintf(pe, sizeof(pe), " PE %d", gshmemi_log_pe);
    if (gshmemi_log_level >= GSHMEMI_LOG_TRACE) { /* at trace, when: the order of events across PEs */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(when, sizeof(when), " %ld.%06ld", (long)ts.tv_sec, ts.tv_nsec / 1000);
    }
    n = snprintf(out, sizeof(out), "gshmem %s:%d%s%s %s %s: %s (%s:%d)\n", host, (int)getpid(), when, pe, level_name[level],
                 subsys, msg, base ? base + 1 : file, line);
    if (n < 0) return;
    if ((size_t)n >= sizeof(out)) n = (int)sizeof(out) - 1;
    /* one write per line, so that the lines of several PEs (and threads) do not interleave */
    if (write(STDERR_FILENO, out, (size_t)n) < 0) return;
}

void gshmemi_log_before_init(const char *subsys, const char *routine, const char *file, int line)
{
    gshmemi_log_write(0, subsys, file, line, "%s called before shmem_init", routine);
}

const char *gshmemi_strerror(int status)
{
    switch (status) {
    case GSHMEMI_OK: return "success";
    case GSHMEMI_ERR_INVALID: return "invalid argument";
    case GSHMEMI_ERR_NOMEM: return "out of memory";
    case GSHMEMI_ERR_SYSTEM: return "system call failed";
    case GSHMEMI_ERR_CUDA: return "CUDA call failed";
    case GSHMEMI_ERR_TIMEOUT: return "timed out waiting for another process";
    case GSHMEMI_ERR_REMOTE: return "a peer process failed";
    case GSHMEMI_ERR_UNSUPPORTED: return "not supported";
    case GSHMEMI_ERR_STATE: return "library not initialized";
    case GSHMEMI_ERR_AGAIN: return "queue full, try again";
    default: return "unknown error";
    }
}
