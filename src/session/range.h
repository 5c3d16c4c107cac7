/* One time range as a session of its own: what the MCP tools answer when
 * asked about [since, until] rather than the whole session. The session
 * takes the events handed to range_event (the live ring,
 * session/evring.h; the names of the processes known before the range) as
 * they come, then, from its source, those of a replay stream seeked to
 * since (range_from_replay) when range_finish runs it; its model,
 * detector and slowest calls are the range's. Owned by the caller. */
#ifndef IG_RANGE_H
#define IG_RANGE_H

#include <stdint.h>

#include "core/event.h"
#include "core/source.h"

struct session;

struct range {
	struct session *s; /* over the range's events (lifetime = the range) */
	uint64_t since_ns, until_ns;
	uint64_t first_ns, last_ns; /* first entry, last completion of the events taken */
	uint64_t events;	    /* taken, without host snapshots and names */
	/* the range's source (range.c) */
	struct ig_source src;
	struct ig_source *stream; /* range_from_replay's, not owned */
};

/* window_s: the session's window (0: the default). NULL when out of memory. */
struct range *range_new(double window_s, uint64_t since_ns, uint64_t until_ns);
void range_free(struct range *r);
/* Takes e when it completes (ts_ns + dur_ns) in [since, until] (0: open),
 * the time the model counts it at and replay delivers it by. An
 * ig_emit_fn: ctx is the range. */
void range_event(void *ctx, const struct ig_event *e);
/* After the events given, the range's events of a replay stream (the
 * caller's, left open): seeked to since here, read by range_finish. 0, or
 * -errno. */
int range_from_replay(struct range *r, struct ig_source *stream);
/* Runs the session over the range's events, then moves its model clock
 * past the last of them (to the next whole second) without the detector's
 * end rule: a range is judged as the windows it spans, not as a whole run.
 * 0, or -errno (reading the replay failed). */
int range_finish(struct range *r);

#endif
