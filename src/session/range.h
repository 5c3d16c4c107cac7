/* A model, its detector and the slowest calls over one time range, built
 * from the events of that range: what the MCP tools answer when asked
 * about [since, until] rather than the whole session. The events come from
 * a replay source (seeked to since) or from anything that calls
 * range_event (the live ring, session/evring.h). Owned by the caller. */
#ifndef IG_RANGE_H
#define IG_RANGE_H

#include <stdint.h>

#include "core/event.h"
#include "core/source.h"

struct ig_model_cfg;
struct analysis;

struct range {
	struct analysis *an; /* the range's model, chains and slowest calls (lifetime = the range) */
	uint64_t since_ns, until_ns;
	uint64_t first_ns, last_ns; /* first entry, last completion of the events taken */
	uint64_t events;	    /* taken, without host snapshots and names */
};

/* cfg: the session model's (window); NULL = defaults. NULL when out of memory. */
struct range *range_new(const struct ig_model_cfg *cfg, uint64_t since_ns, uint64_t until_ns);
void range_free(struct range *r);
/* Takes e when it completes (ts_ns + dur_ns) in [since, until] (0: open),
 * the time the model counts it at and replay delivers it by. An
 * ig_emit_fn: ctx is the range. */
void range_event(void *ctx, const struct ig_event *e);
/* Feeds every event of a replay source in the range (replay_seek to since).
 * 0, or -errno. */
int range_from_replay(struct range *r, struct ig_source *src);
/* Moves the model's clock past the last event (to the next whole second),
 * so the detector judges the last second. */
void range_finish(struct range *r);

#endif
