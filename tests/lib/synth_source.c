/* The synthetic stream as an event source (synth.h): the whole vtable of
 * core/source.h, like a recording's: always ready, as fast as possible
 * unless paused, seekable (the stream is made again from its start: it is
 * a function of its config), done at its end, its span in the status. */
#include "synth.h"

#include <errno.h>
#include <stdlib.h>

#define SEC 1000000000ULL

struct synth_src {
	struct ig_source src;
	struct synth *sy;
	struct synth_cfg cfg; /* as given, to make the stream again */
	bool paused;
	uint64_t hold_ns; /* the position held while paused */
};

static struct synth_src *of(struct ig_source *src)
{
	return src->priv;
}

static int src_fd(struct ig_source *src)
{
	return -1;
}

static int src_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct ig_event e;
	int n = 0;
	while (n < max && synth_next(of(src)->sy, &e)) {
		emit(ctx, &e);
		n++;
	}
	return n ? n : -ENODATA;
}

static int src_peek(struct ig_source *src, uint64_t *ts)
{
	return synth_peek_ts(of(src)->sy, ts);
}

static uint64_t src_tick(struct ig_source *src, uint64_t now_ns, ig_emit_fn emit, void *ctx,
			 struct ig_status *st)
{
	const struct synth_cfg *c = synth_config(of(src)->sy);
	st->mode = IG_MODE_REPLAY;
	st->replay_start_ns = c->start_ns;
	st->replay_end_ns = c->start_ns + (uint64_t)(c->seconds * SEC);
	return UINT64_MAX;
}

static uint64_t src_pace(struct ig_source *src, uint64_t now_ns)
{
	return of(src)->paused ? of(src)->hold_ns : UINT64_MAX;
}

static int src_set_pace(struct ig_source *src, uint64_t pos_ns, double speed, bool paused)
{
	of(src)->paused = paused;
	of(src)->hold_ns = pos_ns;
	return 0;
}

static int src_seek(struct ig_source *src, uint64_t ts_ns)
{
	struct synth_src *s = of(src);
	struct synth *sy = synth_new(&s->cfg);
	struct ig_event e;
	uint64_t ts;

	if (!sy)
		return -ENOMEM;
	synth_free(s->sy);
	s->sy = sy;
	while (synth_peek_ts(sy, &ts) == 0 && ts < ts_ns)
		synth_next(sy, &e);
	return 0;
}

static bool src_done(struct ig_source *src)
{
	uint64_t ts;
	return synth_peek_ts(of(src)->sy, &ts) == -ENODATA;
}

static void src_describe(struct ig_source *src, FILE *f)
{
	const struct synth_cfg *c = synth_config(of(src)->sy);
	fprintf(f, "synthetic: %s, %.0f s from %llu\n", synth_name(c->scenario), c->seconds,
		(unsigned long long)c->start_ns);
}

static void src_free(struct ig_source *src)
{
	if (!src)
		return;
	synth_free(of(src)->sy);
	free(of(src));
}

static const struct ig_source_ops synth_ops = {
    .name = "synth",
    .fd = src_fd,
    .poll = src_poll,
    .peek_ts = src_peek,
    .tick = src_tick,
    .pace = src_pace,
    .set_pace = src_set_pace,
    .seek = src_seek,
    .done = src_done,
    .describe = src_describe,
    .free = src_free,
};

struct ig_source *synth_source_new(const struct synth_cfg *cfg)
{
	struct synth_src *s = calloc(1, sizeof(*s));
	struct synth *sy = synth_new(cfg);
	if (!s || !sy) {
		free(s);
		synth_free(sy);
		return NULL;
	}
	s->src = (struct ig_source){.ops = &synth_ops, .priv = s};
	s->sy = sy;
	s->cfg = *cfg;
	return &s->src;
}
