/* A time range as a session of its own (range.h). */
#include "session/range.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "model/model.h"
#include "session/cli.h"
#include "session/session.h"
#include "session/session_int.h"
#include "store/replay.h"

static int in_range(const struct range *r, const struct ig_event *e)
{
	uint64_t end = e->ts_ns + e->dur_ns;
	return !(r->since_ns && end < r->since_ns) && !(r->until_ns && end > r->until_ns);
}

/* --- the range's source: a replay stream's events in the range ------------ */

static int src_peek(struct ig_source *src, uint64_t *ts)
{
	struct range *r = src->priv;
	if (!r->stream)
		return -ENODATA;
	int e = r->stream->ops->peek_ts(r->stream, ts);
	return !e && r->until_ns && *ts > r->until_ns ? -ENODATA : e; /* past until: the end */
}

struct pass {
	struct range *r;
	ig_emit_fn emit;
	void *ctx;
};

/* A replayed event within the range goes on to the session. */
static void pass_on(void *ctx, const struct ig_event *e)
{
	struct pass *p = ctx;
	if (in_range(p->r, e))
		p->emit(p->ctx, e);
}

static int src_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct range *r = src->priv;
	uint64_t ts;
	if (max < 1)
		return 0;
	int e = src_peek(src, &ts);
	if (e)
		return e;
	struct pass p = {r, emit, ctx};
	return r->stream->ops->poll(r->stream, pass_on, &p, 1);
}

static const struct ig_source_ops range_ops = {
    .name = "range",
    .poll = src_poll,
    .peek_ts = src_peek,
};

/* --- the range ----------------------------------------------------------- */

/* What the range took: its span and count (names and snapshots aside). */
static void count(void *ctx, const struct ig_event *e)
{
	struct range *r = ctx;
	if (e->kind == IG_EV_SNAPSHOT || e->kind == IG_EV_COMM)
		return;
	if (!r->first_ns || e->ts_ns < r->first_ns)
		r->first_ns = e->ts_ns;
	if (e->ts_ns + e->dur_ns > r->last_ns)
		r->last_ns = e->ts_ns + e->dur_ns;
	r->events++;
}

struct range *range_new(double window_s, uint64_t since_ns, uint64_t until_ns)
{
	struct range *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->since_ns = since_ns;
	r->until_ns = until_ns;
	r->src = (struct ig_source){.ops = &range_ops, .priv = r};
	struct cli c;
	memset(&c, 0, sizeof(c));
	c.window_s = window_s > 0 ? window_s : 10.0;
	c.batch = 1;
	char err[128];
	r->s = session_new_source(&r->src, &c, err, sizeof(err));
	if (!r->s || session_keep_slowcalls(r->s)) {
		range_free(r);
		return NULL;
	}
	session_set_event_hook(r->s, count, r);
	return r;
}

void range_free(struct range *r)
{
	if (!r)
		return;
	session_free(r->s); /* the source has no free: it is the range's */
	free(r);
}

void range_event(void *ctx, const struct ig_event *e)
{
	struct range *r = ctx;
	if (in_range(r, e))
		session_ingest(r->s, e);
}

int range_from_replay(struct range *r, struct ig_source *stream)
{
	int e = replay_seek(stream, r->since_ns);
	if (!e)
		r->stream = stream;
	return e;
}

int range_finish(struct range *r)
{
	struct session *s = r->s;
	int n;
	while ((n = session_pump_until(s, UINT64_MAX, 1 << 16)) > 0)
		;
	if (n < 0)
		return n;
	analysis_close(s->an, r->last_ns);
	s->st.now_ns = model_now(s->an->m);
	return 0;
}
