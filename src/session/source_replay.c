/* The replay source: the recordings' events (store/replay.h) paced by a
 * position that moves at the replay's speed from an anchor (wall time,
 * event time), held while paused; seeking restarts the stream. */
#include "session/sources.h"

#include "core/clock.h"
#include "core/escape.h"
#include "core/log.h"
#include "store/replay.h"

#include <errno.h>
#include <stdlib.h>

struct rsrc {
	struct ig_source src;
	struct ig_source *stream; /* store/replay.h, owned */
	double speed;		  /* event ns per wall ns, 0 = as fast as possible */
	bool paused;
	uint64_t pos_anchor_ns; /* event time at wall_anchor_ns */
	uint64_t wall_anchor_ns;
	uint64_t start_ns, end_ns; /* first and last event time, 0 unknown (--since and
				    * --until: those of the range) */
	uint64_t until_ns;	   /* --until: nothing after it, 0 = no limit */
	bool said_sum;		   /* the notice of summarised calls is out */
};

static struct rsrc *rsrc_of(struct ig_source *s)
{
	return s->priv;
}

static int rp_peek(struct ig_source *s, uint64_t *ts)
{
	struct rsrc *r = rsrc_of(s);
	int e = r->stream->ops->peek_ts(r->stream, ts);
	return !e && r->until_ns && *ts > r->until_ns ? -ENODATA : e; /* past --until: the end */
}

static int rp_poll(struct ig_source *s, ig_emit_fn emit, void *ctx, int max)
{
	struct rsrc *r = rsrc_of(s);
	struct ig_source *st = r->stream;
	if (!r->until_ns)
		return st->ops->poll(st, emit, ctx, max);
	int n = 0; /* up to --until: one at a time, looking ahead */
	uint64_t ts;
	while (n < max) {
		int e = rp_peek(s, &ts);
		if (e)
			return n ? n : e;
		int k = st->ops->poll(st, emit, ctx, 1);
		if (k <= 0)
			return n ? n : k;
		n += k;
	}
	return n;
}

static uint64_t rp_tick(struct ig_source *s, uint64_t now_ns, ig_emit_fn emit, void *ctx,
			struct ig_status *st)
{
	struct rsrc *r = rsrc_of(s);
	st->mode = IG_MODE_REPLAY;
	st->replay_speed = r->speed;
	st->replay_start_ns = r->start_ns;
	st->replay_end_ns = r->end_ns;
	st->failed = replay_status(r->stream, st) != 0; /* refused rows, next event, failure */
	if (r->until_ns && st->replay_next_ns > r->until_ns)
		st->replay_next_ns = 0; /* the next is past --until: the end */
	if (st->replay_summarised && !r->said_sum) { /* once, in the status and the log */
		r->said_sum = 1;
		ig_status_say(st, "--record-rate recording: summarised calls' counts exact, "
				  "times estimated");
		log_msg(LOG_INFO, "%s", st->message);
	}
	return UINT64_MAX;
}

static uint64_t rp_pace(struct ig_source *s, uint64_t now_ns)
{
	struct rsrc *r = rsrc_of(s);
	if (r->paused)
		return r->pos_anchor_ns;
	if (r->speed <= 0)
		return UINT64_MAX;
	uint64_t wall = now_ns > r->wall_anchor_ns ? now_ns - r->wall_anchor_ns : 0;
	uint64_t t = r->pos_anchor_ns + (uint64_t)((double)wall * r->speed);
	return r->end_ns && t > r->end_ns ? r->end_ns : t;
}

static int rp_set_pace(struct ig_source *s, uint64_t pos_ns, double speed, bool paused)
{
	struct rsrc *r = rsrc_of(s);
	r->pos_anchor_ns = pos_ns;
	r->wall_anchor_ns = ig_unix_now_ns();
	r->speed = speed;
	r->paused = paused;
	return 0;
}

static int rp_seek(struct ig_source *s, uint64_t ts_ns)
{
	struct rsrc *r = rsrc_of(s);
	return replay_seek(r->stream, ts_ns > r->start_ns ? ts_ns : r->start_ns);
}

static bool rp_done(struct ig_source *s)
{
	struct ig_status st;
	uint64_t ts;
	return rp_peek(s, &ts) == -ENODATA || replay_status(rsrc_of(s)->stream, &st);
}

static void rp_describe(struct ig_source *s, FILE *f)
{
	struct ig_source *st = rsrc_of(s)->stream;
	for (int i = 0; i < replay_file_count(st); i++) {
		struct replay_file_info fi;
		if (replay_file_info(st, i, &fi))
			continue;
		fputs("replay: ", f); /* the writer and version come from the file */
		esc_fputs(f, fi.path, 0);
		fputs(" (", f);
		esc_fputs(f, fi.writer, 0);
		fputs(", schema ", f);
		esc_fputs(f, fi.version, 0);
		fputs(")\n", f);
		char p[300], n[300]; /* a WAL or journal that was not used */
		if (fi.note && fi.note[0])
			fprintf(f, "replay: %s: %s\n", esc_str(p, sizeof(p), fi.path, 0),
				esc_str(n, sizeof(n), fi.note, 0));
	}
}

static void rp_free(struct ig_source *s)
{
	struct rsrc *r = s ? rsrc_of(s) : NULL;
	if (!r)
		return;
	if (r->stream)
		r->stream->ops->free(r->stream);
	free(r);
}

static const struct ig_source_ops replay_source_ops = {
    .name = "replay",
    .fd = NULL, /* always ready: the pace says when */
    .poll = rp_poll,
    .peek_ts = rp_peek,
    .tick = rp_tick,
    .pace = rp_pace,
    .set_pace = rp_set_pace,
    .seek = rp_seek,
    .done = rp_done,
    .describe = rp_describe,
    .free = rp_free,
};

struct ig_source *replay_source_new(const char *const *paths, int n, double speed, char *err,
				    size_t errlen)
{
	struct rsrc *r = calloc(1, sizeof(*r));
	const char *why = NULL;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->src = (struct ig_source){.ops = &replay_source_ops, .priv = r};
	r->stream = replay_open(paths, n, &why);
	if (!r->stream) {
		snprintf(err, errlen, "%s", why ? why : "cannot open the recording");
		free(r);
		return NULL;
	}
	replay_span(r->stream, &r->start_ns, &r->end_ns);
	r->speed = speed;
	r->pos_anchor_ns = r->start_ns;
	r->wall_anchor_ns = ig_unix_now_ns();
	return &r->src;
}

int replay_source_range(struct ig_source *s, uint64_t since_ns, uint64_t until_ns)
{
	struct rsrc *r = rsrc_of(s);
	uint64_t ts;
	if (since_ns > r->start_ns)
		r->start_ns = since_ns;
	if (until_ns && (!r->end_ns || until_ns < r->end_ns))
		r->end_ns = until_ns;
	r->until_ns = until_ns;
	int e = replay_seek(r->stream, r->start_ns);
	if (e)
		return e;
	if (rp_peek(s, &ts))
		return -ENODATA;
	r->start_ns = ts; /* the first event in the range, as without a range */
	/* the last event in the range: the span's end when that is in it */
	if (until_ns) {
		uint64_t first, last;
		replay_span(r->stream, &first, &last);
		r->end_ns = last && last <= until_ns ? last : until_ns;
	}
	r->pos_anchor_ns = r->start_ns;
	r->wall_anchor_ns = ig_unix_now_ns();
	return 0;
}

struct ig_source *replay_source_stream(struct ig_source *s)
{
	return rsrc_of(s)->stream;
}
