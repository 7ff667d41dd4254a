/* Monotonic host time in seconds: what the host side's bounded waits measure against. */
#ifndef GSHMEMI_CLOCK_H
#define GSHMEMI_CLOCK_H

#include <time.h>

static inline double gshmemi_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
