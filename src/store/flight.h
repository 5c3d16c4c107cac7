/* The flight recorder: a bounded in-memory ring of the last N seconds of
 * events (plus the latest process names, recent chains and the session
 * facts) that can be written to a timestamped recording at any moment,
 * in a background thread, so that "what just happened" can be saved even
 * when --record was not given. One thread calls flight_* (the main loop). */
#ifndef IG_FLIGHT_H
#define IG_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "store/recfmt.h"

#define FLIGHT_DEFAULT_SECONDS 300	  /* --flight default: 5 minutes */
#define FLIGHT_DEFAULT_MAX_EVENTS 1000000 /* hard cap: ~150 MB (twice while saving) */
#define FLIGHT_MAX_CHAINS 256		  /* most recent chains kept */
#define FLIGHT_MAX_STACKS 4096		  /* distinct stacks written per save */

struct flight;

/* A ring keeping events whose completion time (ts_ns + dur_ns) lies within
 * seconds of the newest one, and at most max_events of them (0 = the
 * default cap). Memory grows with use up to the cap. NULL when out of memory
 * or seconds <= 0. */
struct flight *flight_new(double seconds, size_t max_events);
/* Waits for a save in progress, then frees f. flight_free(NULL) is a no-op. */
void flight_free(struct flight *f);

/* Copies e into the ring, dropping the oldest events beyond the time span or
 * the cap. O(1); a new chunk every 4096 events (reused from released ones
 * when it can). An event that finds no memory is dropped and counted in
 * flight_capped. */
void flight_push(struct flight *f, const struct ig_event *e);
/* Keeps a deep copy of the chain (the last FLIGHT_MAX_CHAINS, replaced by
 * id). 0 or -ENOMEM. */
int flight_chain(struct flight *f, const struct rec_chain *c);
/* Session facts written to every saved file (deep copy). */
int flight_set_session(struct flight *f, const struct rec_session *s);

/* Where the frames of the calls' stacks come from: for each distinct
 * stack id among the events of a save (at most FLIGHT_MAX_STACKS), fn is
 * called on the thread that calls flight_poll (about 5 ms of them per
 * call, while the saver waits for them; flight_free serves the rest) and
 * returns 0 with *ips and *frames malloc'd (Ingero's stack_traces JSON;
 * flight frees them), 1 with them when the frames are not resolved yet
 * (flight_poll asks again for up to 3 s, then saves it without), or
 * negative when it has none. The saved file then has
 * them in stack_traces. fn NULL: no stacks. */
typedef int (*flight_stack_fn)(void *ctx, uint64_t id, char **ips, char **frames);
void flight_set_stacks(struct flight *f, flight_stack_fn fn, void *ctx);

/* Snapshots the ring and writes it in a background thread to
 * dir/ingero-top-flight-YYYYmmdd-HHMMSS.db (local time; "-2", "-3"... when
 * taken). dir NULL or "" = the current directory. The file is created on
 * the caller's thread, safely (store/safefile.h: never through a link, 0600,
 * not in a directory others may write without the sticky bit) and written
 * through that descriptor, without a journal or WAL beside it. The caller's
 * share is O(chunks): the ring is kept in chunks of 4096 events and the
 * save takes a reference on each (no event is copied); the ring goes on in
 * new chunks while the saver writes the old ones (up to twice the memory
 * while a save runs). The chosen path is copied to path_out (may be NULL).
 * Returns 0, -EBUSY when a save is still running, or -errno when the file
 * cannot be created (flight_error says why). */
int flight_save(struct flight *f, const char *dir, char *path_out, size_t len);
/* One line on why the last flight_save failed ("" when it did not). */
const char *flight_error(const struct flight *f);
/* 1 when a save finished since the last call: msg gets one line ("saved
 * 12345 events (300 s) to PATH" or why it failed); 0 otherwise (msg
 * untouched). Never blocks. */
int flight_poll(struct flight *f, char *msg, size_t len);
/* 1 while a save runs. */
int flight_busy(struct flight *f);

/* fn(ctx) runs on the saver thread when a save starts, before it opens the
 * file: tests hold a save there to see that the caller of flight_save is
 * not waiting for it. NULL = none. */
void flight_set_save_hook(struct flight *f, void (*fn)(void *ctx), void *ctx);

/* Events in the ring now; oldest and newest completion times (Unix ns). */
size_t flight_count(const struct flight *f);
int flight_span(const struct flight *f, uint64_t *oldest_ns, uint64_t *newest_ns);
/* Events dropped because of the hard cap or a failed allocation (not the
 * time span). */
uint64_t flight_capped(const struct flight *f);

#endif
