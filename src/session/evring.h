/* A bounded in-memory ring of recent events, for questions about a time
 * range of a live session (the MCP tools' since/until, get_timeline): the
 * events whose completion lies within `seconds` of the newest, at most
 * max_events (memory grows with use up to that: ~136 bytes an event).
 * Not thread-safe: the thread that ingests pushes and reads. */
#ifndef IG_EVRING_H
#define IG_EVRING_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/source.h"

struct evring;

/* NULL when out of memory or seconds <= 0 or max_events == 0. */
struct evring *evring_new(double seconds, size_t max_events);
void evring_free(struct evring *r);
/* Copies e (snapshots and names too: a range model needs them). */
void evring_push(struct evring *r, const struct ig_event *e);

size_t evring_count(const struct evring *r);
/* Oldest entry time and newest completion time of the events held; 0 and
 * -ENODATA when empty. */
int evring_span(const struct evring *r, uint64_t *oldest_ns, uint64_t *newest_ns);
/* The latest completion time of an event that left the ring (for its age
 * or the cap), 0 when none did: the ring holds every event that completes
 * after it. */
uint64_t evring_lost_until(const struct evring *r);
/* Events dropped for the cap (not for age). */
uint64_t evring_capped(const struct evring *r);

/* Calls fn, oldest first, for each event that completes (ts_ns + dur_ns)
 * in [since, until] (0: open). Returns how many were passed. */
size_t evring_each(const struct evring *r, uint64_t since_ns, uint64_t until_ns, ig_emit_fn fn,
		   void *ctx);

#endif
