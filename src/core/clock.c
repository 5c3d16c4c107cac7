/* Unix time and the monotonic-to-Unix conversion (clock.h). */
#include "core/clock.h"

static int64_t mono_offset_ns;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t ig_unix_now_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* The offset, read between two monotonic reads: the realtime read is taken
 * at their midpoint. */
void ig_clock_sync(void)
{
	uint64_t m1 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME),
		 m2 = clock_ns(CLOCK_MONOTONIC);
	mono_offset_ns = (int64_t)r - (int64_t)(m1 + (m2 - m1) / 2);
}

uint64_t ig_mono_to_unix(uint64_t mono_ns)
{
	if (!mono_offset_ns)
		ig_clock_sync();
	return (uint64_t)((int64_t)mono_ns + mono_offset_ns);
}
