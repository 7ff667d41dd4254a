/* Logging and return codes shared by every host-side layer. */
#ifndef GSHMEMI_LOG_H
#define GSHMEMI_LOG_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal status codes: 0 is success, negative is failure. */
enum {
    GSHMEMI_OK = 0,
    GSHMEMI_ERR_INVALID = -1,  /* bad argument */
    GSHMEMI_ERR_NOMEM = -2,    /* out of heap / host memory */
    GSHMEMI_ERR_SYSTEM = -3,   /* OS call failed */
    GSHMEMI_ERR_CUDA = -4,     /* CUDA driver/runtime call failed */
    GSHMEMI_ERR_TIMEOUT = -5,  /* a wait on another process ran out of time */
    GSHMEMI_ERR_REMOTE = -6,   /* a peer failed or disconnected */
    GSHMEMI_ERR_UNSUPPORTED = -7,
    GSHMEMI_ERR_STATE = -8,    /* called before init / after finalize */
    GSHMEMI_ERR_AGAIN = -9,    /* a queue is full: try again once some of it has drained */
};

enum { GSHMEMI_LOG_NONE = 0, GSHMEMI_LOG_WARN = 1, GSHMEMI_LOG_INFO = 2, GSHMEMI_LOG_TRACE = 3 };

extern int gshmemi_log_level;
/* Set by the runtime once the PE is known; -1 before. */
extern int gshmemi_log_pe;

void gshmemi_log_write(int level, const char *subsys, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
const char *gshmemi_strerror(int status);
/* The one refusal of an entry point called before shmem_init ("<routine> called before
 * shmem_init"), at the caller's file and line: the runtime's check and collectives' share it. */
void gshmemi_log_before_init(const char *subsys, const char *routine, const char *file, int line);

/* Errors are always printed; warnings/info/trace follow GSHMEM_DEBUG. */
#define GSHMEMI_ERROR(subsys, ...) gshmemi_log_write(0, subsys, __FILE__, __LINE__, __VA_ARGS__)
#define GSHMEMI_LOG(level, subsys, ...)                                                         \
    do {                                                                                        \
        if (gshmemi_log_level >= (level)) gshmemi_log_write(level, subsys, __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
#define GSHMEMI_WARN(subsys, ...) GSHMEMI_LOG(GSHMEMI_LOG_WARN, subsys, __VA_ARGS__)
#define GSHMEMI_INFO(subsys, ...) GSHMEMI_LOG(GSHMEMI_LOG_INFO, subsys, __VA_ARGS__)
#define GSHMEMI_TRACE(subsys, ...) GSHMEMI_LOG(GSHMEMI_LOG_TRACE, subsys, __VA_ARGS__)

/* Propagate a failing internal status. */
#define GSHMEMI_CHECK(call)                                                                     \
    do {                                                                                        \
        int gshmemi_rc_ = (call);                                                               \
        if (gshmemi_rc_ != GSHMEMI_OK) return gshmemi_rc_;                                      \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
