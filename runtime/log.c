#include "log.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

int gshmemi_log_level = GSHMEMI_LOG_WARN;
int gshmemi_log_pe = -1;

static const char *level_name[] = {"ERROR", "WARN", "INFO", "TRACE"};

void gshmemi_log_write(int level, const char *subsys, const char *file, int line, const char *fmt, ...)
{
    char host[64] = "?";
    char msg[1024];
    va_list ap;
    const char *base = strrchr(file, '/');

    gethostname(host, sizeof(host) - 1);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One write per line so lines of several PEs do not interleave. */
    if (gshmemi_log_pe >= 0)
        fprintf(stderr, "gshmem %s:%d PE %d %s %s: %s (%s:%d)\n", host, (int)getpid(), gshmemi_log_pe,
                level_name[level], subsys, msg, base ? base + 1 : file, line);
    else
        fprintf(stderr, "gshmem %s:%d %s %s: %s (%s:%d)\n", host, (int)getpid(), level_name[level], subsys,
                msg, base ? base + 1 : file, line);
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
    default: return "unknown error";
    }
}
