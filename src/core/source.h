/* Event sources: live BPF, SQLite replay and synthetic streams all implement
 * this small vtable and hand struct ig_event to the same emit callback. */
#ifndef IG_SOURCE_H
#define IG_SOURCE_H

#include "core/event.h"

/* Called once per event; the event is only valid during the call. */
typedef void (*ig_emit_fn)(void *ctx, const struct ig_event *e);

struct ig_source;

struct ig_source_ops {
	const char *name;
	/* A file descriptor that becomes readable when events are waiting, or -1
	 * when the source is always ready (replay, synthetic). */
	int (*fd)(struct ig_source *s);
	/* Delivers at most max events through emit. Returns the number delivered
	 * (0 when nothing is waiting now), -ENODATA at the end of the stream, or
	 * another -errno on failure. */
	int (*poll)(struct ig_source *s, ig_emit_fn emit, void *ctx, int max);
	/* Event time (Unix ns) of the next event without consuming it: 0 and *ts
	 * set, -EAGAIN when none is waiting, -ENODATA at the end. May be NULL
	 * (live sources). */
	int (*peek_ts)(struct ig_source *s, uint64_t *ts);
	void (*free)(struct ig_source *s);
};

struct ig_source {
	const struct ig_source_ops *ops;
	void *priv;
};

#endif
