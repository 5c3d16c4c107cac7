/* A model, detector and slowest calls of one time range (range.h). */
#include "session/range.h"

#include <stdlib.h>

#include "analysis/analysis.h"
#include "model/model.h"
#include "store/replay.h"

struct range *range_new(const struct ig_model_cfg *cfg, uint64_t since_ns, uint64_t until_ns)
{
	struct range *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->since_ns = since_ns;
	r->until_ns = until_ns;
	r->an = analysis_new(cfg, NULL, true);
	if (!r->an) {
		range_free(r);
		return NULL;
	}
	return r;
}

void range_free(struct range *r)
{
	if (!r)
		return;
	analysis_free(r->an);
	free(r);
}

void range_event(void *ctx, const struct ig_event *e)
{
	struct range *r = ctx;
	uint64_t end = e->ts_ns + e->dur_ns;
	if ((r->since_ns && end < r->since_ns) || (r->until_ns && end > r->until_ns))
		return;
	analysis_ingest(r->an, e);
	if (e->kind != IG_EV_SNAPSHOT && e->kind != IG_EV_COMM) {
		if (!r->first_ns || e->ts_ns < r->first_ns)
			r->first_ns = e->ts_ns;
		if (e->ts_ns + e->dur_ns > r->last_ns)
			r->last_ns = e->ts_ns + e->dur_ns;
		r->events++;
	}
}

int range_from_replay(struct range *r, struct ig_source *src)
{
	return replay_each(src, r->since_ns, r->until_ns, range_event, r);
}

void range_finish(struct range *r)
{
	/* the next whole second, without the detector's end rule (a range is
	 * judged as the windows it spans, not as a whole run) */
	uint64_t t = r->last_ns ? r->last_ns : model_now(r->an->m);
	analysis_advance(r->an, (t / 1000000000ULL + 1) * 1000000000ULL);
}
