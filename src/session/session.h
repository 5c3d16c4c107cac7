/* A session: a source (core/source.h: live collection, a replay, or any
 * source a test makes), the model and the detector, and what records them,
 * pumped by one loop. The batch loop (src/app/batch.c) and the full-screen
 * viewer (tui/) both drive a session the same way, whatever its source:
 *
 *   poll({session_fd(s), stdin}, session_timeout_ms(s));
 *   session_pump(s, budget);   // events due by the source's pace -> model
 *                              // (and stacks, recorder, flight ring)
 *   session_tick(s);           // the source's periodic work, model clock
 *   if (session_done(s)) ...
 *
 * session_wait is those three calls in one (the batch and stream loops,
 * record, explain, mcp and the viewer use it; the viewer with a time
 * slice, session_set_slice, so that keys never wait long).
 *
 * Code: session.c (life cycle, the loop), open.c (which source, with its
 * stacks, recording and flight recorder), source_live.c and command.c (live
 * collection, a launched command), source_replay.c (recordings and their
 * pace), seek.c (pause, speed, seeking), record.c (recording, flight).
 * Not thread-safe; one thread owns it. */
#ifndef IG_SESSION_H
#define IG_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "session/cli.h"
#include "core/status.h"

struct session;
struct ig_model;

/* What a loop (the batch loop, the stream, the viewer) calls once per
 * refresh to publish the session elsewhere: app/ passes one that renders
 * the /metrics endpoint (serve/promsrv.h). fn NULL: nothing to publish. */
struct session_publish {
	void (*fn)(void *ctx, struct session *s);
	void *ctx;
};

static inline void session_publish(const struct session_publish *p, struct session *s)
{
	if (p && p->fn)
		p->fn(p->ctx, s);
}

/* Creates the session the options ask for: live (needs privileges) or
 * replay. On failure returns NULL with a one-line reason in err. A command
 * (cli->cmd) is started, held until probes are attached. */
struct session *session_new(const struct cli *cli, char *err, size_t errlen);
/* A session over src (tests: the synthetic source), which it owns from now
 * on (freed on failure too); cli gives the window (window_s) and nothing
 * else is opened: no recording, no flight recorder, no stacks. */
struct ig_source;
struct session *session_new_source(struct ig_source *src, const struct cli *cli, char *err,
				   size_t errlen);
/* Flushes and closes the recording. Returns 0, or -EIO when the recording
 * failed (disk full, ...) with the whole reason, on one line, in err (err
 * may be NULL). session_free calls it when the caller did not. */
int session_stop(struct session *s, char *err, size_t errlen);
/* session_stop, then frees everything; the source stops a launched command
 * still running (SIGTERM) and a demo scenario. session_free(NULL) is a
 * no-op. */
void session_free(struct session *s);

/* A descriptor to poll for readability, or -1 (replay: use the timeout). */
int session_fd(struct session *s);
/* Milliseconds until session_pump/session_tick have work, for poll(). */
int session_timeout_ms(struct session *s);
/* Ingests at most budget of the events due by the source's pace. Returns
 * the number ingested, or -errno. */
int session_pump(struct session *s, int budget);
/* Periodic work: the source's (collector rescans and page deltas, system
 * snapshots, the launched command), the model clock, the recording, status
 * counters. Cheap; call after every poll wake-up. */
void session_tick(struct session *s);
/* One turn of the loop: polls session_fd and the caller's extra[nextra]
 * (their revents filled in; extra may be NULL) until one is readable, the
 * session has work (session_timeout_ms) or deadline_ms passes (ig_mono_ms
 * time, core/clock.h; 0: none), then pumps (at most SESSION_WAIT_BUDGET
 * events) and ticks. A live session's ring is read in batches: for 20 ms
 * after a pump that got events it is not polled, and a wake-up by the
 * caller's descriptors in that time only ticks. Returns the events
 * ingested, or -errno: the poll failed (not EINTR: nothing pumped) or the
 * pump did (ticked all the same). */
#define SESSION_WAIT_BUDGET (1 << 16)
struct pollfd;
int session_wait(struct session *s, struct pollfd *extra, int nextra, uint64_t deadline_ms);
/* A loop that must answer keys (the viewer): session_wait then pumps in
 * chunks of SESSION_SLICE_CHUNK events until fewer come or slice_ms pass.
 * A slice that runs out leaves the rest for the next session_wait, which
 * then does not sleep (session_backlog). 0, the default: one pump of
 * SESSION_WAIT_BUDGET events. */
#define SESSION_SLICE_CHUNK 2048
void session_set_slice(struct session *s, int slice_ms);
bool session_backlog(const struct session *s);
/* True when there is nothing more to see: the launched command exited and
 * its events were drained, or the replay reached its end. */
bool session_done(struct session *s);
/* Exit status of the launched command (-1 when none or not yet; also
 * session_status()->cmd_status). */
int session_cmd_status(struct session *s);

/* The model. A backward seek replaces it with a new one: fetch it again
 * after session_seek/session_jump_chain instead of keeping the pointer. */
struct ig_model *session_model(struct session *s);
/* The detector judging the model's windows: the chains the views show. */
struct ig_detect;
const struct ig_detect *session_detect(struct session *s);
/* The stacks of the session (live or replay), NULL when off. */
struct stacks *session_stacks(struct session *s);
/* The status the views show (owned by the session, refreshed by tick). */
struct ig_status *session_status(struct session *s);
struct slowcalls;
/* The slowest calls of the run (analysis/slowcalls.h), kept from
 * session_keep_slowcalls on (the handover subcommands; a session that
 * seeks back would count the calls read again): NULL before. Forgotten by
 * session_reset. session_keep_slowcalls: 0, or -ENOMEM. */
int session_keep_slowcalls(struct session *s);
const struct slowcalls *session_slowcalls(struct session *s);

/* Views: freeze (live: collection continues) or pause replay (it goes on
 * from where it stopped when resumed). */
void session_set_paused(struct session *s, bool paused);
/* Forgets the statistics, the chains and the slowest calls (the r key). */
void session_reset(struct session *s);

/* Replay controls; -ENOTSUP for a source paced by the wall clock (live).
 * Speed 0 = as fast as possible. */
int session_set_speed(struct session *s, double speed);
int session_seek(struct session *s, int64_t delta_ns);
/* Moves to event time to_ns (Unix ns), clamped to the replay's span (its
 * --since/--until range); backwards rebuilds the model from the start. */
int session_seek_to(struct session *s, uint64_t to_ns);
/* A replay's checkpoints (docs/tui.md, "Walking a replay"): how many are
 * held, taken and restored so far. */
void session_ckpt_stats(const struct session *s, int *n, uint64_t *taken, uint64_t *restored);
/* The first detections of the chains a recording holds (Unix ns, sorted,
 * within the range; owned by the session), and how many: 0 when it holds
 * none (then the detector's own chains are all there is). */
size_t session_chain_marks(struct session *s, const uint64_t **marks);
/* Moves to the first detection of the next (dir 1) or previous (dir -1)
 * recorded or detected chain. */
int session_jump_chain(struct session *s, int dir);
/* --since/--until, before anything is shown: the replay holds only the
 * events from since_ns to until_ns (Unix ns of event time, both included;
 * 0: no bound), starts at the first of them (its span, seeks and chain
 * jumps stay inside). 0; -ENOTSUP for a source that is not a replay;
 * -ENODATA when the range holds no event; -errno. */
int session_set_range(struct session *s, uint64_t since_ns, uint64_t until_ns);

/* Batch replay: ingests every event up to event time until, whatever the
 * pace, and moves the model clock there; at or past the end of the
 * recording, everything left. Returns 1 while events remain, 0 at the end,
 * -errno: -ENOTSUP for a source without look-ahead (live), -EIO when the
 * replay failed (session_status()->message says why). */
int session_replay_to(struct session *s, uint64_t until);

/* End of the run: a live session first reads what the kernel already holds
 * (a stop loses none of the calls made before it); then the model clock
 * moves to the next whole second after the last event time so the detector
 * evaluates the final second. */
void session_finish(struct session *s);

/* Writes the flight-recorder ring to a new file (in the background); the
 * result appears later in session_status()->message. */
int session_flight_save(struct session *s);

/* Called with every event ingested (e.g. --events printing). */
struct ig_event;
typedef void (*session_event_hook)(void *ctx, const struct ig_event *e);
void session_set_event_hook(struct session *s, session_event_hook hook, void *ctx);

/* Writes the attach summary (live) or the replay summary to f. */
void session_describe(struct session *s, FILE *f);

#endif
