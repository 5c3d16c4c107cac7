/* The recorder: writes struct ig_event streams, chains and session facts to a
 * SQLite file whose tables and columns follow Ingero's trace databases
 * (events, sources, ops, stack_traces, process_names, sessions,
 * system_snapshots, causal_chains, schema_info), plus ingero-top's own
 * columns with defaults. docs/recording.md describes the format.
 *
 * Threading: one thread calls rec_* (the main loop). By default a private
 * writer thread does the SQLite work, so rec_event() only copies the event
 * into a bounded queue. Transactions are committed every batch_events rows
 * and at least every commit_ms of wall time, so a kill -9 loses at most about
 * the last second. The format itself (tables, rows, their JSON) is
 * store/recfmt.h; rec.c is the public side and the queue, rec_write.c the
 * writer thread, its transactions and --max-db pruning. */
#ifndef IG_REC_H
#define IG_REC_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "store/recfmt.h"

struct rec;

struct rec_opts {
	uint64_t max_db_bytes; /* --max-db: prune oldest events above this; 0 = unbounded */
	unsigned batch_events; /* rows per transaction; 0 = 4096 */
	unsigned commit_ms;    /* commit at least this often (wall time); 0 = 500 */
	unsigned queue_events; /* writer queue capacity; 0 = 131072 (~19 MB) */
	unsigned wait_ms;      /* how long rec_event() waits for room in a full queue
				* before it drops the event (counted); 0 = 2000 */
	int synchronous;       /* 1 = no writer thread: rec_event() writes inline */
	int exclusive;	       /* 1 = fail if path exists (flight files) */
	int no_wal;	       /* 1 = no WAL and no journal file: journal_mode=MEMORY, nothing
				* beside the file (flight files, written once: a crash
				* while writing leaves a damaged file) */
	const char *node_name; /* name stored for node index 0; NULL = "" */
	unsigned sum_rate;     /* --record-rate: above this many calls a second in one
				* thread, summarise the rest (store/rec_sum.c); 0 = keep all */
	unsigned run_ms;       /* a run of summarised calls ends at every run_ms of event
				* time (at most, and by default, 1000): with commit_ms, how
				* far behind the file may be (`ingero-top record`: 250) */
};

struct rec_stats {
	uint64_t events;	/* rows written to events (committed or pending) */
	uint64_t committed;	/* rows known to be committed */
	uint64_t dropped;	/* events refused: the queue stayed full for wait_ms */
	uint64_t waits;		/* times rec_event() found the queue full and waited */
	uint64_t wait_ns;	/* time it waited for room, in all */
	uint64_t pruned_events; /* events deleted by --max-db pruning */
	uint64_t prunes;	/* pruning rounds */
	uint64_t db_bytes;	/* used size of the file (pages in use), last check */
	uint64_t commits;
	uint64_t summarised;	/* calls told in ingero_top_summaries, not as rows */
	uint64_t summaries;	/* ingero_top_summaries rows */
};

/* Opens (creates, or appends to an existing ingero-top recording) path,
 * safely (store/safefile.h): never through a symbolic link, created 0600, an
 * existing file only when it is a regular file of the caller's (or root's),
 * nothing in a directory others may write without the sticky bit; SQLite
 * works on the one descriptor opened here. opts may be NULL for defaults.
 * Returns NULL and sets *err (thread-local text, valid until the next call;
 * err may be NULL) on failure: unsafe or unwritable path, not an ingero-top
 * recording, existing file with opts->exclusive. */
struct rec *rec_open(const char *path, const struct rec_opts *opts, const char **err);
/* The same on a file already opened with safefile_open (the flight recorder
 * reserves its name on the caller's thread and writes in another). Takes
 * sf in every case: on failure it is closed, and removed when it created
 * the file. */
struct safefile;
struct rec *rec_open_file(struct safefile *sf, const struct rec_opts *opts, const char **err);

/* Queues one event (copied). Returns 0; -ENOBUFS when the queue is full and
 * the event was dropped (counted in rec_stats.dropped); or the -errno that
 * stopped the recorder (see rec_error). After a stop every call returns that
 * error and the file keeps everything committed before it. */
int rec_event(struct rec *r, const struct ig_event *e);

/* Event time (Unix ns) has reached now_ns: with --record-rate and run_ms
 * set, the calls held for a decision or in a run that can no longer grow
 * are queued, so that a file is at most run_ms + commit_ms behind event
 * time (without run_ms, nothing: they wait for the thread's next call, as
 * --record always did). Call it from the loop; cheap. */
void rec_tick(struct rec *r, uint64_t now_ns);

/* Records (or replaces, by id) a causal chain (copied; its recommendations
 * and timeline become JSON arrays). Same returns as rec_event, or -ENOMEM. */
int rec_chain(struct rec *r, const struct rec_chain *c);

/* Records the session facts; call once after rec_open (again to update). */
int rec_session_info(struct rec *r, const struct rec_session *s);

/* Records a resolved stack: hash (events.stack_hash / ig_event.stack_id),
 * ips and frames as JSON (Ingero's stack_traces format). Replaces by hash. */
int rec_stack(struct rec *r, uint64_t hash, const char *ips_json, const char *frames_json);

/* Names node index idx (0..255) for events.node; default "" for 0 and
 * "node<idx>" for the others. */
int rec_set_node_name(struct rec *r, unsigned idx, const char *name);

/* Commits everything queued so far and waits for it. 0 or -errno. */
int rec_flush(struct rec *r);

/* NULL while recording works; otherwise why it stopped (owned by r). */
const char *rec_error(const struct rec *r);
/* The path being written (owned by r). */
const char *rec_path(const struct rec *r);
void rec_get_stats(struct rec *r, struct rec_stats *st);

/* Flushes, stamps sessions.stopped_at, builds the secondary indexes,
 * checkpoints the WAL and leaves a single self-contained file (journal mode
 * DELETE). Frees r. Returns 0 or the first -errno seen; -ESTALE when the
 * path no longer names the file written (someone removed or replaced it).
 * rec_close(NULL) is a no-op returning 0. */
int rec_close(struct rec *r);

/* Parses a size like "500M", "2g", "1048576", "10 GiB" into bytes (K/M/G/T
 * are powers of 1024). Returns 0 or -EINVAL. For --max-db. */
int rec_parse_size(const char *s, uint64_t *bytes);

#endif
