/* The slowest calls of a whole run (or of a range), per (op, process): what
 * the model keeps only for its rolling window (model_slow_calls), kept here
 * over the lifetime for the incident report and the MCP tools. Fed with
 * every ingested event (calls are taken, the rest ignored); bounded: at
 * most `per_series` calls per (op, process) and `max_series` series (when
 * full, the series whose slowest call is the fastest makes room). Not
 * thread-safe: one thread feeds and reads. */
#ifndef IG_SLOWCALLS_H
#define IG_SLOWCALLS_H

#include <stdint.h>

#include "core/event.h"

struct slowcalls;

/* 0 = the defaults (10 per series, 512 series). NULL when out of memory. */
struct slowcalls *slowcalls_new(unsigned per_series, unsigned max_series);
void slowcalls_free(struct slowcalls *s);
/* Forgets every call (a report range starts). */
void slowcalls_reset(struct slowcalls *s);
/* Takes e when it is a call (IG_EV_CALL). */
void slowcalls_event(struct slowcalls *s, const struct ig_event *e);

/* The slowest calls of op (-1: every op) in pid (0: every process) that
 * complete in [since_ns, until_ns] (0: open), slowest first, copied into
 * out[max]. With op -1 a call made inside another listed call of the same
 * thread (a driver call under its runtime call) is left out. Returns the
 * number written. */
int slowcalls_get(const struct slowcalls *s, int op, uint32_t pid, uint64_t since_ns,
		  uint64_t until_ns, struct ig_event *out, int max);

/* Series dropped or replaced to stay under max_series. */
uint64_t slowcalls_evicted(const struct slowcalls *s);

#endif
