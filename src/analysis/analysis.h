/* An analysis: the model, the detector that judges its windows and, when
 * asked for, the keeper of the slowest calls, wired once. What a session
 * (session/), a time range (session/range.c) and a checkpoint restore
 * feed events to and read from; the layer between detect and its users
 * (docs/architecture.md). Not thread-safe: one thread feeds and reads. */
#ifndef IG_ANALYSIS_H
#define IG_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

struct ig_model;
struct ig_model_cfg;
struct ig_detect;
struct ig_detect_cfg;
struct slowcalls;

struct analysis {
	struct ig_model *m;	/* owned; its windows go to d */
	struct ig_detect *d;	/* owned */
	struct slowcalls *slow; /* owned; NULL unless asked for */
};

/* mcfg, dcfg: copied, NULL = defaults. slow: also keep the slowest calls
 * (analysis/slowcalls.h, default bounds). NULL when out of memory. */
struct analysis *analysis_new(const struct ig_model_cfg *mcfg, const struct ig_detect_cfg *dcfg,
			      bool slow);
/* NULL is a no-op. */
void analysis_free(struct analysis *a);
/* Keeps the slowest calls from now on (a no-op when it does). 0, or
 * -ENOMEM. */
int analysis_keep_slow(struct analysis *a);
/* Feeds e to the model and to the slow-call keeper. */
void analysis_ingest(struct analysis *a, const struct ig_event *e);
/* The model clock to `to` (event time): the windows it closes are judged. */
void analysis_advance(struct analysis *a, uint64_t to);
/* Closes the second of event time that holds last_ns (0: the model's
 * clock) with the detector told it is the end (a run shorter than a judged
 * window is judged whole), so the last second is judged. */
void analysis_finish(struct analysis *a, uint64_t last_ns);
/* The same without the end rule: a time range is judged as the windows it
 * spans (session/range.c). */
void analysis_close(struct analysis *a, uint64_t last_ns);
/* Forgets the statistics (process names stay), the chains, the slowest
 * calls (the r key, a time range that starts later). */
void analysis_reset(struct analysis *a);
/* Starts over on m, a model the caller made (owned from now on; the old one
 * is freed unless it is m): its windows go to the detector. The detector is
 * left as it is (detect_reset or detect_restore it as needed). */
void analysis_set_model(struct analysis *a, struct ig_model *m);

#endif
