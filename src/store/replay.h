/* The replay source: streams struct ig_event from one or more recordings, its
 * own (full fidelity) or Ingero's trace databases (schema 0.8, 0.9 and the
 * additive 0.10), merged by event time. Files are opened read-only and
 * immutable: nothing is ever written next to them.
 *
 * Stream order: events come in non-decreasing ts_ns (event time as defined in
 * event.h: call entry, switch-out, I/O issue), ties broken by file, then by
 * the order in the file. peek_ts() returns that ts_ns. Several files are
 * merged with a streaming k-way merge; memory does not grow with file size.
 *
 * What the stream holds, besides the events table:
 *   IG_EV_SNAPSHOT  one per system_snapshots row, at its timestamp;
 *   IG_EV_COMM      ingero-top files: each recorded IG_EV_COMM event (the
 *                   process_names rows with is_event = 1), at its time;
 *                   Ingero files: every process_names row, at the start of
 *                   the file (Ingero stamps them when the session ends);
 *   IG_EV_PAGE_ALLOC Ingero files only: mm_page_alloc is not stored per
 *                   event there but summed per minute in event_aggregates;
 *                   each such row is spread evenly over the seconds of its
 *                   minute that the recording covers (opt out with
 *                   replay_opts.no_aggregates).
 *
 * Ingero conversions: op ids are read from the file's ops table by name;
 * calls get IG_F_NO_SPLIT (no preempted/blocked split); sched_switch rows
 * (stamped when the thread came back) become IG_EV_OFFCPU with ts_ns =
 * timestamp - duration and state IG_OFF_UNKNOWN; block I/O rows (stamped at
 * completion, arg0 = sectors) become IG_EV_BLOCK_IO with ts_ns = timestamp -
 * duration and arg0 = bytes; process_fork's child pid moves from arg1 to arg0;
 * comm comes from events.comm (0.10) or process_names. Rows of kinds
 * ingero-top has no use for (sched_wakeup, tcp, net, pod_*) are skipped and
 * counted (replay_stats.skipped).
 *
 * Code: replay.c (this source: streams, k-way merge, seek, nodes),
 * replay_file.c (opening and checking files, the tables read whole),
 * replay_ingero.c (the Ingero adapter); rows are read with store/recfmt.h. */
#ifndef IG_REPLAY_H
#define IG_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "core/source.h"
#include "store/recfmt.h"

struct replay_opts {
	int no_aggregates; /* do not synthesise IG_EV_PAGE_ALLOC from event_aggregates */
	int no_summaries;  /* do not lay out the calls of ingero_top_summaries (--record-rate):
			    * only the calls kept as rows */
	/* Files smaller than this many bytes get PRAGMA integrity_check at open
	 * (it also finds an index that does not match its table), larger ones
	 * quick_check up to 256 MiB, nothing above. 0 = 16 MiB; -1 = never
	 * (quick_check only). */
	int64_t full_check_max;
};

/* Opens n recordings (n >= 1) as one source. Returns NULL and sets *err to
 * one line (thread-local storage, valid until the next call) naming the file
 * and the reason: missing, empty, not SQLite, truncated, corrupt, not a trace
 * database, unknown or newer schema version, a project table that is a
 * view. Free with s->ops->free(s). Every file is read through one
 * descriptor (store/rofile.h): a file left with a hot WAL or journal (a
 * recorder killed with -9) is recovered in memory; nothing is written
 * anywhere. Every statement runs under the guard of store/db.h (SIGINT,
 * a time limit per step). A stream whose rows go back in time (an index
 * that does not match its table) stops with an error (replay_error). */
struct ig_source *replay_open(const char *const *paths, int n, const char **err);
struct ig_source *replay_open_opts(const char *const *paths, int n, const struct replay_opts *o,
				   const char **err);

/* Restarts every stream so that the next event is the first with ts_ns >=
 * ts_ns (Unix ns). The caller owns the model: to show the state at time T,
 * rebuild it by replay_seek(s, start) and feeding events up to T (replay
 * runs at millions of events/s), or from a checkpoint of its own taken at
 * T0 <= T followed by replay_seek(s, T0). Returns 0 or -errno. */
int replay_seek(struct ig_source *s, uint64_t ts_ns);

/* Every event of the stream from since_ns up to until_ns (0: the end), in
 * delivery order, to emit, one at a time by the look-ahead (replay_seek to
 * since_ns first): what the MCP tools read of a time range. 0, or -errno. */
int replay_each(struct ig_source *s, uint64_t since_ns, uint64_t until_ns, ig_emit_fn emit,
		void *ctx);

/* First and last ts_ns the stream delivers (Unix ns). 0 or -ENODATA when the
 * recordings hold no events. */
int replay_span(struct ig_source *s, uint64_t *start_ns, uint64_t *end_ns);

/* Node names: events carry ig_event.node, an index into this table. Names
 * come from the files (Ingero 0.9 events.node, ingero-top's node column),
 * else the session's host, else the file name without ".db". Nodes named in
 * the sessions tables (and ingero-top's ingero_top_nodes, at their recorded
 * indexes) are known once replay_open returns; a node seen only in event
 * rows is added when its first row is read. The string is owned by s; NULL
 * when idx is unused. */
const char *replay_node_name(struct ig_source *s, unsigned idx);
int replay_node_count(struct ig_source *s);

/* The causal chains recorded in the files, ordered by detected_at. *out is
 * an array of n owned chains (recfmt.h: rec_chain_copy); free it with
 * replay_chains_free. chain.node is set (file node when the row has none).
 * Recommendations and timeline are parsed from their JSON columns; older
 * files whose columns are not valid JSON give one entry with the text.
 * 0, -EINVAL or -ENOMEM. */
int replay_chains(struct ig_source *s, struct rec_chain **out, size_t *n);
void replay_chains_free(struct rec_chain *c, size_t n);

/* The sessions rows of every file (Ingero's sessions table), in file order;
 * strings owned by the array. */
int replay_sessions(struct ig_source *s, struct rec_session **out, size_t *n);
void replay_sessions_free(struct rec_session *v, size_t n);

/* Calls fn for every stack_traces row of every file (ours and Ingero's):
 * the hash (events.stack_hash) and the ips and frames JSON (recfmt.h;
 * valid during the call, "" when empty). fn returns 0 when it took the row.
 * Returns the number of rows taken, or -EIO when a file cannot be read
 * (replay_error says why). Files without stack_traces give none. */
typedef int (*replay_stack_fn)(void *ctx, uint64_t hash, const char *ips, const char *frames);
int replay_stacks(struct ig_source *s, replay_stack_fn fn, void *ctx);

/* Calls cb for every process_names row (all files): pid, name, when seen
 * (Unix ns), node index. Returns 0 or -errno. */
typedef void (*replay_name_fn)(void *ctx, uint32_t pid, const char *name, uint64_t seen_at_ns,
			       unsigned node);
int replay_process_names(struct ig_source *s, replay_name_fn cb, void *ctx);

struct replay_file_info {
	const char *path;      /* as given */
	const char *writer;    /* "ingero-top" or "ingero" */
	const char *version;   /* schema_info version, e.g. "0.9" */
	int ingero_top_schema; /* 0 for Ingero files */
	int recovered;	       /* 1 when pages of a hot WAL/journal were applied (in memory) */
	const char *note;      /* "" or one line: a WAL or journal that was not used, and why */
	uint64_t summarised;   /* calls told in ingero_top_summaries (--record-rate) */
};
int replay_file_count(struct ig_source *s);
/* Fills *fi for file i; the strings are owned by s. 0 or -EINVAL. */
int replay_file_info(struct ig_source *s, int i, struct replay_file_info *fi);

struct replay_stats {
	uint64_t rows;	      /* events rows read */
	uint64_t delivered;   /* events handed to emit (all kinds) */
	uint64_t skipped;     /* rows with no ingero-top kind (sched_wakeup, net...) */
	uint64_t refused;     /* rows refused: values out of range or an op the file's
			       * ops table does not name (events, snapshots, names,
			       * chains, page-allocation sums; docs/recording.md) */
	uint64_t synthesized; /* IG_EV_PAGE_ALLOC made from event_aggregates */
	uint64_t summarised;  /* calls laid out from ingero_top_summaries (--record-rate) */
};
void replay_get_stats(struct ig_source *s, struct replay_stats *st);

/* Why poll() last failed (corruption found while reading), or NULL. */
const char *replay_error(struct ig_source *s);

/* What the views show of a replay, into st: rows_refused, replay_next_ns,
 * and the failure (message). Returns -EIO when the replay failed, else 0. */
struct ig_status;
int replay_status(struct ig_source *s, struct ig_status *st);

/* 1 when s is a replay source. */
int replay_is(const struct ig_source *s);

#endif
