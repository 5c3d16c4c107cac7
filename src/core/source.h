/* Event sources: live BPF, SQLite replay and synthetic streams all implement
 * this small vtable and hand struct ig_event to the same emit callback. A
 * session drives every source the same way (session/session.c):
 *
 *   poll({fd}, until the next tick is due)
 *   until = pace(now)             how far event time may go now
 *   poll(emit) while the next event (peek_ts) is at or before until, or,
 *              without look-ahead, while events are waiting
 *   tick(now, emit, status)       periodic work, the source's status
 *   the model clock follows: up to until, never past an event still to come
 *
 * What used to be "if live ... else replay ..." is in the sources: the live
 * source paces on the wall clock and rescans on its ticks, a recording paces
 * on its speed and can seek. Ops a source has no use for may be NULL, as
 * each says. The collector's and the replay's raw streams fill fd, poll,
 * peek_ts and free; the session wraps them into full sources
 * (session/source_live.c, session/source_replay.c). */
#ifndef IG_SOURCE_H
#define IG_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/event.h"
#include "core/status.h"

/* Called once per event; the event is only valid during the call. */
typedef void (*ig_emit_fn)(void *ctx, const struct ig_event *e);

struct ig_source;

struct ig_source_ops {
	const char *name;
	/* A file descriptor that becomes readable when events are waiting, or -1
	 * when the source is always ready (replay, synthetic). NULL: -1. */
	int (*fd)(struct ig_source *s);
	/* Delivers at most max events through emit. Returns the number delivered
	 * (0 when nothing is waiting now), -ENODATA at the end of the stream, or
	 * another -errno on failure. */
	int (*poll)(struct ig_source *s, ig_emit_fn emit, void *ctx, int max);
	/* Event time (Unix ns) of the next event without consuming it: 0 and *ts
	 * set, -EAGAIN when none is waiting, -ENODATA at the end. NULL for a
	 * source without look-ahead (live): whatever it has waiting happened
	 * already. */
	int (*peek_ts)(struct ig_source *s, uint64_t *ts);
	/* Periodic work at wall time now_ns (Unix ns), called after every wake-up
	 * of the loop: may emit events (host snapshots, page deltas, the rest of
	 * a finished command's events) and fills the part of st the source owns
	 * (mode, probes and drops, the replay's span and speed, the launched
	 * command's status). Returns the wall time (Unix ns) it wants its next
	 * tick by, UINT64_MAX when any time will do. NULL: nothing periodic. */
	uint64_t (*tick)(struct ig_source *s, uint64_t now_ns, ig_emit_fn emit, void *ctx,
			 struct ig_status *st);
	/* How far event time may advance at wall time now_ns (Unix ns): the
	 * session delivers the events up to it and moves the model clock there.
	 * Live: the wall clock minus the time a record may wait in the kernel;
	 * a recording: its position moving at its speed, held while paused;
	 * UINT64_MAX: as fast as possible. */
	uint64_t (*pace)(struct ig_source *s, uint64_t now_ns);
	/* The pace goes on from event time pos_ns, from now on, at speed event
	 * ns per wall ns (0: as fast as possible); paused holds it at pos_ns.
	 * 0, or -ENOTSUP for a source paced by the wall clock (NULL: the same). */
	int (*set_pace)(struct ig_source *s, uint64_t pos_ns, double speed, bool paused);
	/* Restarts the stream at the first event at or after event time ts_ns
	 * (0: its first event). 0, -ENOTSUP where a stream cannot move (live;
	 * NULL: the same), or -errno. */
	int (*seek)(struct ig_source *s, uint64_t ts_ns);
	/* True when no event will come any more: the launched command ended and
	 * its events are in, the recording is at its end. NULL: never. */
	bool (*done)(struct ig_source *s);
	/* Writes what the source is, whole lines (the attach summary, the files
	 * replayed; untrusted text escaped). NULL: nothing. */
	void (*describe)(struct ig_source *s, FILE *f);
	/* Frees the source and what it owns; NULL when someone else owns it. */
	void (*free)(struct ig_source *s);
};

struct ig_source {
	const struct ig_source_ops *ops;
	void *priv;
};

#endif
