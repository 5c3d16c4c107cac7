/* The synthetic streams as an event source (core/source.h), over the
 * generator's public calls (synth.h). */
#include "synth.h"

#include <errno.h>
#include <stdlib.h>

static int src_fd(struct ig_source *src)
{
	return -1;
}

static int src_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct synth *s = src->priv;
	struct ig_event e;
	int n = 0;
	while (n < max && synth_next(s, &e)) {
		emit(ctx, &e);
		n++;
	}
	return n ? n : -ENODATA;
}

static int src_peek(struct ig_source *src, uint64_t *ts)
{
	return synth_peek_ts(src->priv, ts);
}

static void src_free(struct ig_source *src)
{
	if (!src)
		return;
	synth_free(src->priv);
	free(src);
}

static const struct ig_source_ops synth_ops = {
    .name = "synth",
    .fd = src_fd,
    .poll = src_poll,
    .peek_ts = src_peek,
    .free = src_free,
};

struct ig_source *synth_source_new(const struct synth_cfg *cfg)
{
	struct ig_source *src = calloc(1, sizeof(*src));
	struct synth *s = synth_new(cfg);
	if (!src || !s) {
		free(src);
		synth_free(s);
		return NULL;
	}
	src->ops = &synth_ops;
	src->priv = s;
	return src;
}
