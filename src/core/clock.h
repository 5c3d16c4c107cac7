/* The monotonic clock in nanoseconds, for deadlines and durations measured
 * on this host (never stored: recordings hold Unix time). */
#ifndef IG_CLOCK_H
#define IG_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ig_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ig_mono_ms(void)
{
	return ig_mono_ns() / 1000000;
}

#endif
