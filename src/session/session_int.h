/* Inside the session: the state shared by its files. session.c (life
 * cycle, ingest, the loop), open.c (which source, its stacks, recording and
 * flight recorder), record.c (recording, flight recorder, session facts),
 * seek.c (pace, seeking, chain jumps, batch replay). Not for other modules. */
#ifndef IG_SESSION_INT_H
#define IG_SESSION_INT_H

#include "session/session.h"

#include "analysis/analysis.h"

#include "collect/sysinfo.h"
#include "core/source.h"
#include "core/status.h"

struct session {
	struct cli cli;
	struct ig_source *src; /* owned: live, replay, or one given (tests) */
	struct analysis *an; /* model + detector (analysis/analysis.h) */
	struct ig_status st;
	session_event_hook hook;
	void *hook_ctx;
	/* the loop */
	uint64_t pos_ns;      /* event time reached: the model clock may go there */
	uint64_t tick_due_ns; /* wall time the source wants its next tick by */
	int slice_ms; /* session_set_slice: pump in chunks for this long, 0 none */
	bool backlog; /* the last slice ran out with events due: do not sleep */
	uint64_t drained_ms; /* ig_mono_ms of the last pump that got events */
	bool at_end;	      /* the stream said it has no more */
	uint64_t last_ev_ns;  /* latest completion time ingested */
	uint64_t rate_t0_ns, rate_events0;
	/* recording */
	struct rec *rec;
	struct rotor *rotor; /* `ingero-top record`: rotation and pruning (rotate.c) */
	struct flight *flight;
	const char *no_flight;	    /* why there is none, for session_flight_save */
	struct sysinfo_facts facts; /* read once, for the sessions rows */
	bool have_facts;
	char flags[160]; /* the sessions row's flags (record.c, describe_session) */
	struct stacks *stacks;
	struct collector *stack_tail; /* live, tail-only stacks: where thresholds go */
	uint64_t rec_chain_gen;
	/* detection times of the chains the recordings hold, sorted (jumps) */
	uint64_t *marks;
	size_t nmarks;
	struct ckpts *ck; /* a replay's checkpoints (ckpt.c), NULL: none */
};

/* session.c: the one ingest function every source emits into (ctx: the
 * session), and the pump that seeking shares: ingests at most budget events
 * up to event time until (a source without look-ahead: what is waiting).
 * Returns the number ingested, or -errno when none was. */
void session_ingest(void *ctx, const struct ig_event *e);
int session_pump_until(struct session *s, uint64_t until, int budget);
/* The model clock to pos_ns, never past an event still to come. */
void session_advance(struct session *s);

/* open.c: the source the options ask for, its stacks, and, live, the
 * recording and the flight recorder. 0, or -errno with the reason in err. */
int session_open(struct session *s, char *err, size_t errlen);

/* record.c */
/* How far behind event time a service's file may be: its commits and the
 * runs of --record-rate (docs/recording.md, "Always-on recording"). */
#define SESSION_REC_LAG_MS 250
int session_open_record(struct session *s, char *err, size_t errlen);
/* A recorder on path with the session's options and facts; NULL with the
 * reason in err. The status names it as the recording. In steps (rotate.c
 * creates the next file on its thread): the options, the file (any
 * thread; ro must outlive it: it names the node by s->st.host), the
 * session facts and the status (the session's thread). */
struct rec *session_rec_open(struct session *s, const char *path, char *err, size_t errlen);
struct rec_opts;
void session_rec_opts(struct session *s, struct rec_opts *ro);
struct rec *session_rec_create(const char *path, const struct rec_opts *ro, char *err,
			       size_t errlen);
void session_rec_begin(struct session *s, struct rec *r);
void session_open_flight(struct session *s);
/* Writes the chains that changed since the last call (recording, flight). */
void session_record_chains(struct session *s);
/* Periodic: stacks into the recording, the flight recorder's and the
 * recording's notices into the status. */
void session_record_tick(struct session *s);
/* Flushes the stacks and the chains and closes the recording: 0, or -EIO
 * with the reason on one line in err (may be NULL). */
int session_close_record(struct session *s, char *err, size_t errlen);

/* rotate.c: the rotating files of `ingero-top record` (cli.record_dir).
 * session_rotor_open opens the first file and starts the thread that
 * closes the files rotated out and prunes the oldest; session_rotor_event
 * (in ingest, before the event is recorded) and session_rotor_tick move to
 * a new file when event time crosses a boundary; session_rotor_free (after
 * the last file was closed) waits for that thread and prunes a last time. */
int session_rotor_open(struct session *s, char *err, size_t errlen);
void session_rotor_event(struct session *s, uint64_t end_ns);
void session_rotor_tick(struct session *s);
void session_rotor_free(struct session *s);

/* ckpt.c: a replay's checkpoints. ckpt_init once the source told its start
 * (no-op for a source that cannot seek); ckpt_before in the pump, before an
 * event that ends at next_end_ns is ingested; ckpt_rewound after a read
 * from the start; ckpt_restore puts back the checkpoint nearest at or
 * before `to` where that saves reading (0), else -ENOENT (or -errno: the
 * caller reads from the start). */
void ckpt_init(struct session *s);
void ckpt_before(struct session *s, uint64_t next_end_ns);
void ckpt_rewound(struct session *s);
int ckpt_restore(struct session *s, uint64_t to);
/* A seek reads towards `to` (0: done): checkpoints far before it thin out. */
void ckpt_target(struct session *s, uint64_t to);
void ckpt_free(struct session *s);

#endif
