/* The recording format, in one place: the tables and columns (Ingero's trace
 * database plus ingero-top's columns with defaults), schema_info and its
 * versions, how ingero-top events map to Ingero's (source, op) rows, the row
 * types of chains, sessions and stacks, their JSON columns, and the SQL that
 * writes and reads each row. The recorder (rec*.c), the replay reader
 * (replay*.c), the flight recorder and, through the replay reader, the
 * stacks module all use it. docs/recording.md describes the format.
 *
 * Strings in the row types are borrowed unless the row is a copy made here
 * (rec_chain_copy, rec_session_copy, recfmt_chain_read...): then `own`
 * holds their storage and rec_chain_clear / rec_session_clear free it. */
#ifndef IG_RECFMT_H
#define IG_RECFMT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

/* Version of ingero-top's own additions to the format (schema_info key
 * ingero_top_schema). Readers refuse files with a higher number. A file is
 * created at REC_SCHEMA_PLAIN; the recorder raises it to REC_SCHEMA with its
 * first row of ingero_top_summaries (calls summarised, --record-rate), which
 * a reader that does not know them would silently lose. */
#define REC_SCHEMA 2
#define REC_SCHEMA_PLAIN 1
/* Ingero format version the tables follow (schema_info key version). */
#define REC_INGERO_VERSION "0.9"
/* Ingero versions the replay reader accepts: 0.MIN .. 0.MAX. */
#define REC_INGERO_MINOR_MIN 8
#define REC_INGERO_MINOR_MAX 10

/* --- rows ---------------------------------------------------------------------- */

/* One entry of a chain's timeline: when (Unix ns; 0 = not known, as in
 * Ingero's timelines) and what happened. */
struct rec_tl {
	uint64_t ts_ns;
	const char *text;
};

/* One causal chain, as the causal_chains table holds it. NULL strings are
 * stored as "". Times in Unix ns, latencies in microseconds. The
 * recommendations and the timeline are stored as JSON arrays (["...", ...]
 * and [{"ts_ns":..,"text":".."}, ...]); texts that are not valid UTF-8 are
 * stored with U+FFFD in place of the invalid bytes. */
struct rec_chain {
	const char *id; /* stable id, e.g. "chain-0001" */
	uint64_t detected_at_ns;
	const char *severity;	/* "HIGH", "MEDIUM", "LOW", "INFO" */
	const char *summary;	/* one line */
	const char *root_cause; /* root-cause class or text */
	const char *explanation;
	const char *const *recs; /* recommendations: nrecs strings */
	size_t nrecs;
	const char *cuda_op; /* affected op name */
	uint64_t p99_us, p50_us;
	double tail_ratio; /* p99 / p50 */
	const struct rec_tl *timeline;
	size_t ntimeline;
	const char *node; /* node name, "" for the local host */
	int by_ingero;	  /* replayed from a file Ingero wrote: Ingero's analysis, not ours */
	void *own;	  /* storage of a copy; NULL for a borrowed row */
};

/* Session facts (Ingero's sessions table, plus the host in node). NULL
 * strings are stored as "" (version: "ingero-top <version>"). mem_total in
 * MiB. Times Unix ns; stopped_at 0 = running. */
struct rec_session {
	uint64_t started_at_ns, stopped_at_ns;
	const char *gpu_model, *gpu_driver, *cpu_model;
	unsigned cpu_cores;
	uint64_t mem_total_mb;
	const char *kernel, *os_release, *cuda_ver, *python_ver;
	const char *version;	/* writer version, stored in ingero_ver */
	const char *pid_filter; /* e.g. "1234,5678" */
	const char *flags;	/* command-line summary, e.g. "record,max-db=1g" */
	const char *node;	/* host name */
	void *own;		/* storage of a copy; NULL for a borrowed row */
};

/* Deep copies in one allocation each: dst gets its own strings and arrays
 * (NULL strings stay NULL). 0 or -ENOMEM (dst is then empty). */
int rec_chain_copy(struct rec_chain *dst, const struct rec_chain *src);
int rec_session_copy(struct rec_session *dst, const struct rec_session *src);
/* Frees a copy's storage and zeroes the row; a no-op on a borrowed row. */
void rec_chain_clear(struct rec_chain *c);
void rec_session_clear(struct rec_session *s);

/* One frame of a stack_traces.frames array (Ingero's format, documented in
 * stacks/stacks.h): native {"s": "sym+0x1a", "f": file} or, unresolved,
 * {"i": "0x7f..", "f": file, "o": "0x.." (offset in the file, ours)};
 * Python {"pf": file, "pfn": function, "pl": line}; a note {"n": text}. */
enum rec_frame_kind { REC_FRAME_NATIVE = 1, REC_FRAME_PY = 2, REC_FRAME_NOTE = 3 };

struct rec_frame {
	int kind;	  /* enum rec_frame_kind */
	uint64_t ip;	  /* native: the address, 0 = none */
	uint64_t off;	  /* native: offset in sym, or in file when sym is "" */
	int line;	  /* Python: line; native: Ingero's "l", 0 = none */
	const char *sym;  /* native: symbol as stored (Ingero keeps it mangled);
			   * Python: function; "" = unresolved */
	const char *file; /* native: mapped file (base name); Python: file */
	const char *note; /* note text */
	const char *src;  /* native: the source file of line ("sf", base name), "" none */
};

/* The frames as Ingero's stack_traces.frames JSON. A native frame with a
 * symbol is written by name ("s", with off), one without by address ("i",
 * with "o" when it has a file and an offset); with a source line, "sf" and
 * "l" (ingero-top's keys). malloc'd; NULL when out of memory. */
char *recfmt_frames_json(const struct rec_frame *fr, size_t n);
/* Calls fn for every frame of a frames JSON array, in order; the frame's
 * strings are valid during the call. Elements that are not objects or name
 * no frame are skipped. Returns 0, -EINVAL when json is not a JSON array,
 * -ENOMEM, or the first non-zero return of fn. */
typedef int (*recfmt_frame_fn)(void *ctx, const struct rec_frame *f);
int recfmt_frames_parse(const char *json, recfmt_frame_fn fn, void *ctx);
/* Return addresses as stack_traces.ips JSON (["0x7f..", ...]), malloc'd. */
char *recfmt_ips_json(const uint64_t *ips, size_t n);
/* Parses an ips array into ips[max] (more are counted in *n up to max).
 * 0 or -EINVAL (not an array of hex strings). */
int recfmt_ips_parse(const char *json, uint64_t *ips, size_t max, size_t *n);

/* The JSON columns of a chain, malloc'd: ["rec", ...] and
 * [{"ts_ns":..,"text":".."}, ...]. NULL when out of memory. */
char *recfmt_recs_json(const char *const *recs, size_t n);
char *recfmt_timeline_json(const struct rec_tl *tl, size_t n);

/* --- summaries (--record-rate) ---------------------------------------------------- */

/* Calls of one thread that a recording made with --record-rate did not keep
 * as rows: one ingero_top_summaries row per run of them (between two calls
 * kept, within one second, with no off-CPU interval of the thread in it).
 * A run is told as *units*: a call and the calls inside it (a runtime call
 * and the driver call it made), of up to REC_SUM_TYPES kinds, each kind with
 * its count, the quantiles of its duration and the sums the replay needs to
 * lay the calls out again (store/replay_sum.c). docs/recording.md. */
#define REC_SUM_TYPES 8			 /* kinds of unit in one run */
#define REC_SUM_CALLS 3			 /* calls in one unit: the outer one and those inside it */
#define REC_SUM_Q 9			 /* quantiles of a unit's duration, at recfmt_sum_q[] */
#define REC_SUM_MAX_UNITS 4096		 /* units in one run */
#define REC_SUM_MAX_SPAN_NS 1000000000ll /* a run lies within one second */
extern const double recfmt_sum_q[REC_SUM_Q];

/* One call of a unit: everything of the event but its times, and the sums
 * of its durations and of its starts after the unit's start over the
 * unit's count. */
struct rec_sum_call {
	uint16_t op;	    /* enum ig_op (writing; reading: set by the caller from src, op_id) */
	int64_t src, op_id; /* reading: the file's (source, op) */
	int32_t ret;
	uint32_t flags, cpu;
	uint64_t arg0, arg1, arg2, stream, stack_id;
	uint64_t dur_sum, off_sum;
};

struct rec_sum_unit {
	uint32_t n;	       /* units of this kind */
	unsigned ncalls;       /* 1..REC_SUM_CALLS; c[0] is the outer call */
	uint64_t q[REC_SUM_Q]; /* the outer call's duration at the quantiles */
	struct rec_sum_call c[REC_SUM_CALLS];
};

struct rec_summary {
	uint32_t pid, tid;
	uint64_t cgroup_id;
	uint8_t node;
	uint64_t from_ns, to_ns; /* the first call's start, the last one's end */
	uint64_t calls;		 /* calls summarised: sum of n * ncalls */
	unsigned nunits;
	struct rec_sum_unit u[REC_SUM_TYPES];
};

extern const char recfmt_summary_insert_sql[];
/* Binds s (its units as text, freed by SQLite). 0 or -ENOMEM. */
int recfmt_summary_bind(sqlite3_stmt *st, const struct rec_summary *s, const char *node);
/* Rows whose run may complete calls at or after ?1, by first call. */
extern const char recfmt_summary_select_sql[];
/* One row into *s (ops as src, op_id; *node: the row's node text, owned by
 * st). 0, or -ERANGE for a row to refuse: times, pids, counts, quantiles
 * or sums out of range or not consistent (docs/recording.md). */
int recfmt_summary_read(sqlite3_stmt *st, struct rec_summary *s, const char **node,
			int64_t dur_max);

/* --- the op table ------------------------------------------------------------------ */

/* Maps between ingero-top kinds/ops and Ingero's (source, op name), as used
 * in the files. Returns the Ingero source id (1 CUDA, 3 HOST, 4 DRIVER,
 * 5 IO) and sets *name (and *op_id, may be NULL), or 0 when the event is
 * not stored in events (snapshots, comm) or unknown. */
int recfmt_ingero_op(int kind, int op, const char **name, int *op_id);
/* The reverse: an Ingero (source id, op name) to an ingero-top kind and op
 * (enum ig_op for calls, enum ig_io_op for block I/O, 0 otherwise). Returns 0,
 * or -ENOENT for rows ingero-top has no kind for (sched_wakeup, tcp, net...). */
int recfmt_ingero_kind(int source, const char *name, int *kind, int *op);
/* Ingero stamps sched_switch and block I/O rows when they end, calls and
 * process events when they start. */
int recfmt_end_stamped(int kind);

/* --- schema --------------------------------------------------------------------- */

/* Creates what is missing in db: every table, idx_events_end, the columns
 * older ingero-top files lack (process_names.ppid and .container), the sources and ops
 * rows, and schema_info (version, writer, ingero_top_schema,
 * ingero_top_version, unit notes). Run it inside the caller's transaction.
 * Returns an SQLite result code. */
int recfmt_create(sqlite3 *db, const char *writer_version);
/* Ingero's query indexes, built when a recording is closed (they make
 * inserts ~6x slower). */
extern const char recfmt_query_index_sql[];

/* --- rows in SQL ---------------------------------------------------------------- */

/* Every insert statement and its bind. The strings of the rows are bound
 * SQLITE_STATIC: they must stay valid until the statement is stepped. */
extern const char recfmt_event_insert_sql[];
/* e: an event of a stored kind; source/op_id from recfmt_ingero_op. */
void recfmt_event_bind(sqlite3_stmt *st, const struct ig_event *e, int source, int op_id,
		       const char *node);
extern const char recfmt_snapshot_insert_sql[];
void recfmt_snapshot_bind(sqlite3_stmt *st, const struct ig_event *e, const char *node);
extern const char recfmt_name_insert_sql[];
/* is_event: 1 = a recorded IG_EV_COMM (replayed as such, ppid in arg0),
 * 0 = a name seen on another event. */
void recfmt_name_bind(sqlite3_stmt *st, const struct ig_event *e, const char *node, int is_event);
extern const char recfmt_stack_insert_sql[];
void recfmt_stack_bind(sqlite3_stmt *st, uint64_t hash, const char *ips, const char *frames);
extern const char recfmt_node_insert_sql[];
void recfmt_node_bind(sqlite3_stmt *st, unsigned idx, const char *name);
extern const char recfmt_chain_insert_sql[];
/* Encodes the JSON columns (bound with free() as their destructor).
 * 0 or -ENOMEM. */
int recfmt_chain_bind(sqlite3_stmt *st, const struct rec_chain *c);
/* Updates session row id; a NULL version stores "ingero-top <ver>". */
extern const char recfmt_session_update_sql[];
void recfmt_session_bind(sqlite3_stmt *st, const struct rec_session *s, int64_t id,
			 const char *default_version, uint64_t now_ns);

/* Reading ingero-top's events: the SELECT (rows completing at or after ?1,
 * by completion time; RECFMT_EVENT_COLS columns; has_arg2, has_detail: the
 * file's events have the arg2 and detail columns, older files lack them) and
 * the row. Fills e but for op, node and the detail text: *source, *op_id,
 * *node and *detail (texts owned by st, may be NULL) are for the caller.
 * Returns 0, or -ERANGE for a row to refuse (a
 * numeric column that is not an integer, or recfmt_event_check). */
#define RECFMT_EVENT_COLS 27
const char *recfmt_event_select_sql(int has_arg2, int has_detail);
int recfmt_event_read(sqlite3_stmt *st, struct ig_event *e, int64_t *source, int64_t *op_id,
		      const char **node, const char **detail, int64_t dur_max);

/* Reading chains and sessions of any file, ours or Ingero's (has_node: the
 * table has the node column). The SELECTs are static strings. A row is read
 * into an owned copy (rec_chain_clear / rec_session_clear); default_node is
 * used when the row names none. The JSON columns are parsed: Ingero's
 * timeline entries ({"layer","op","detail"}) become "LAYER op: detail" at
 * time 0 (as does an entry whose time is out of range); a column that is
 * not valid JSON (what ingero-top wrote before it used jansson) comes back
 * as one entry holding the column's text. 0, -ENOMEM, or (chains)
 * -ERANGE for a row out of range (recfmt_chain_check). */
const char *recfmt_chain_select_sql(int has_node);
int recfmt_chain_read(sqlite3_stmt *st, int has_node, const char *default_node,
		      struct rec_chain *out);
const char *recfmt_session_select_sql(int has_node);
int recfmt_session_read(sqlite3_stmt *st, int has_node, const char *default_node,
			struct rec_session *out);
extern const char recfmt_stack_select_sql[];

/* The host snapshots of any file and the name events of ingero-top's files
 * (process_names rows with is_event = 1; has_ppid, has_container: the
 * columns exist), both from time ?1 on, in time order. A row is read into
 * e; *node gets the row's node text (owned by st; NULL when the table has no
 * node column), *container the name event's container ("" when unknown;
 * owned by st: e->container is left NULL for the caller to point at a copy). */
const char *recfmt_snapshot_select_sql(int has_node);
void recfmt_snapshot_read(sqlite3_stmt *st, struct ig_event *e, const char **node);
const char *recfmt_name_select_sql(int has_ppid, int has_container);
/* 0, or -ERANGE (times, pid, tid, ppid out of range: e is then unset). */
int recfmt_name_read(sqlite3_stmt *st, struct ig_event *e, const char **node,
		     const char **container);
/* Copies a name column into a comm field (cut at IG_COMM_LEN, zero-padded). */
void recfmt_column_comm(char dst[IG_COMM_LEN], sqlite3_stmt *st, int col);

/* --- values read from a file ----------------------------------------------------------
 * A row whose values are out of range is refused whole when it is read, and
 * counted (replay_stats.refused); nothing is clamped. The bounds, also in
 * docs/recording.md: */
#define RECFMT_TS_MAX_NS 4102444800000000000ll /* times: 1 ns .. 2100-01-01T00:00:00Z */
#define RECFMT_PID_MAX 4194304		       /* pids 1 .. 2^22 (PID_MAX_LIMIT); tids 0 .. */
#define RECFMT_DUR_SLACK_NS 3600000000000ll    /* durations 0 .. the file's span + an hour */
#define RECFMT_MIB_MAX (1ll << 40)	       /* memory figures of snapshots, MiB */
#define RECFMT_LOAD_MAX 1e6		       /* load average */
#define RECFMT_CHAIN_US_MAX (1ll << 40)	       /* chain p50/p99 (~12.7 days), us */
#define RECFMT_RATIO_MAX 1e9		       /* chain tail ratio */
#define RECFMT_BYTES_MAX (1ll << 50)	       /* bytes of a page allocation or an I/O, 1 PiB */

/* 1 when column col holds an integer (or, _real, a finite number) within
 * [lo, hi]: NULL, text and blobs are out of range. */
int recfmt_col_in(sqlite3_stmt *st, int col, int64_t lo, int64_t hi);
int recfmt_col_real_in(sqlite3_stmt *st, int col, double lo, double hi);
/* 1 when a column of the current row of st is NULL: every column the
 * readers select is NOT NULL in the format (Ingero's and ours), so such a
 * row is refused whole, whichever column it is. */
int recfmt_row_has_null(sqlite3_stmt *st);
int recfmt_ts_ok(int64_t ts);
int recfmt_pid_ok(int64_t pid);
/* The longest duration a row may have in a file whose rows' times span
 * lo..hi (ns): the span plus an hour. */
int64_t recfmt_dur_max(int64_t lo, int64_t hi);
/* 0, or -ERANGE for a row to refuse: the integer columns v[] of a row of
 * recfmt_event_select_sql (times, duration up to dur_max and end = start
 * + duration, pids, cpu, state, off-CPU parts within the duration, a
 * fork's child pid, bytes), a row of recfmt_snapshot_select_sql (cpu and
 * memory 0..100 %), of recfmt_chain_select_sql. */
int recfmt_event_check(const int64_t v[RECFMT_EVENT_COLS], int64_t dur_max);
/* The first (last = 0) or last completion time among the events rows in
 * range, durations up to dur_max (own files: by idx_events_end); the
 * first or last snapshot in range. SQL text in thread-local storage. */
const char *recfmt_event_span_sql(int last, int64_t dur_max);
const char *recfmt_snapshot_span_sql(int last);
int recfmt_snapshot_check(sqlite3_stmt *st);
int recfmt_chain_check(sqlite3_stmt *st);

#endif
