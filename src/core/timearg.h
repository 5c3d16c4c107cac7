/* Times and durations as people (and agents) write them, for --since and
 * --until of `explain` and the time arguments of the MCP tools:
 *
 *   +30s, +1m30s      from the start of the data
 *   -5m, -90s         before the end of the data
 *   10m ago, 1h30m ago
 *                     before now (the wall clock: a recording still being
 *                     written, a directory of rotated ones)
 *   2026-03-20T14:02:00Z, 2026-03-20T14:02:00.250+01:00, 2026-03-20 14:02
 *                     absolute ISO 8601 (no zone: UTC)
 *   14:02, 14:02:30.5 that time of day (UTC) on the day the data starts
 *                     (the next day when that is before the start)
 *   1774015605291250636
 *                     Unix nanoseconds (any number of 16 digits or more)
 *
 * Durations: a number with a unit, ns us ms s m h (several in a row:
 * 1h30m), or a bare number of seconds. Pure. */
#ifndef IG_TIMEARG_H
#define IG_TIMEARG_H

#include <stddef.h>
#include <stdint.h>

/* A duration ("1m30s", "250ms", "2.5") in ns. 0, or -EINVAL. */
int timearg_duration(const char *s, uint64_t *ns);

/* s relative to [start_ns, end_ns] of the data, into *out (Unix ns; a
 * relative time is clamped to 0 below). 0, or -EINVAL with a one-line
 * reason in err. */
int timearg_parse(const char *s, uint64_t start_ns, uint64_t end_ns, uint64_t *out, char *err,
		  size_t errlen);

/* timearg_parse for a person at a clock: a time of day ("14:02") is local
 * time (TZ), as the viewer's header shows it, on the day the data starts
 * there; every other form as timearg_parse (leading spaces skipped). 0, or
 * -EINVAL with a one-line reason in err. */
int timearg_parse_local(const char *s, uint64_t start_ns, uint64_t end_ns, uint64_t *out, char *err,
			size_t errlen);

/* "2026-03-20T14:02:00.250Z" (UTC, ms) into buf; "-" for 0. Returns buf. */
char *timearg_iso(char *buf, size_t n, uint64_t ns);

#endif
