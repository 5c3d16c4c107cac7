/* A model, detector and slowest calls of one time range (range.h). */
#include "report/range.h"

#include <errno.h>
#include <stdlib.h>

#include "detect/detect.h"
#include "model/model.h"
#include "report/slowcalls.h"
#include "store/replay.h"

struct range *range_new(const struct ig_model_cfg *cfg, uint64_t since_ns, uint64_t until_ns)
{
	struct range *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->since_ns = since_ns;
	r->until_ns = until_ns;
	r->m = model_new(cfg);
	r->d = detect_new(NULL);
	r->slow = slowcalls_new(0, 0);
	if (!r->m || !r->d || !r->slow) {
		range_free(r);
		return NULL;
	}
	model_set_window_hook(r->m, detect_window, r->d);
	return r;
}

void range_free(struct range *r)
{
	if (!r)
		return;
	model_free(r->m);
	detect_free(r->d);
	slowcalls_free(r->slow);
	free(r);
}

void range_event(void *ctx, const struct ig_event *e)
{
	struct range *r = ctx;
	uint64_t end = e->ts_ns + e->dur_ns;
	if ((r->since_ns && end < r->since_ns) || (r->until_ns && end > r->until_ns))
		return;
	model_ingest(r->m, e);
	slowcalls_event(r->slow, e);
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
	int rc = replay_seek(src, r->since_ns);
	while (!rc) {
		uint64_t ts;
		int p = src->ops->peek_ts(src, &ts);
		if (p == -ENODATA)
			break;
		if (p < 0)
			return p;
		if (r->until_ns && ts > r->until_ns)
			break;
		int n = src->ops->poll(src, range_event, r, 4096);
		if (n == -ENODATA)
			break;
		if (n < 0)
			return n;
	}
	return rc;
}

void range_finish(struct range *r)
{
	uint64_t t = r->last_ns ? r->last_ns : model_now(r->m);
	model_advance(r->m, (t / 1000000000ULL + 1) * 1000000000ULL);
}
