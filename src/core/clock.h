/* The clocks: the monotonic clock in nanoseconds, for deadlines and
 * durations measured on this host (never stored: recordings hold Unix
 * time), and Unix time (CLOCK_REALTIME) with the conversion of a monotonic
 * timestamp (a BPF record's) to it. */
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

/* Unix ns now (CLOCK_REALTIME). */
uint64_t ig_unix_now_ns(void);
/* Converts a CLOCK_MONOTONIC timestamp to Unix ns, with the offset between
 * the two clocks read once (core/clock.c). */
uint64_t ig_mono_to_unix(uint64_t mono_ns);
/* Reads that offset again (the collector does at its start). */
void ig_clock_sync(void);

#endif
