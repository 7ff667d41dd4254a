/* Monotonic host time, in seconds and in nanoseconds: what the host side's bounded waits measure
 * against. */
#ifndef GSHMEMI_CLOCK_H
#define GSHMEMI_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline double gshmemi_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t gshmemi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
