/* Inside the replay reader: the state shared by replay.c (the source, the
 * streams and their k-way merge), replay_file.c (opening and checking files,
 * their tables) and replay_ingero.c (the adapter for Ingero's files). Not for
 * other modules. */
#ifndef IG_REPLAY_INT_H
#define IG_REPLAY_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "store/replay.h"

#define RP_MAX_FILES 64
#define RP_MAX_NODES 256
#define RP_NAME_SLOTS 8192

enum rp_writer { W_INGERO = 0, W_OWN = 1 };

/* Stream types, in tie-break order at equal times: names first, then host
 * context, then events, then the calls laid out from summaries. */
enum rp_stype { S_COMM = 0, S_SNAP = 1, S_AGG = 2, S_EVENTS = 3, S_SUM = 4, S_NTYPES };

/* A row of a file's ops table; kind 0 when ingero-top has no use for the
 * op (sched_wakeup, tcp...): its rows are skipped, not refused. */
struct opmap {
	int src;
	int64_t id;
	int kind, op;
};

/* What a reader makes of a row. */
enum rp_row { ROW_OK = 0, ROW_SKIP = 1, ROW_REFUSE = 2 };

struct pending {
	struct ig_event e;
	uint64_t seq;
};

struct rfile;

struct stream {
	struct rfile *f;
	int type;
	sqlite3_stmt *st;
	int has_head, eof;
	struct ig_event head;
	uint64_t last_key;	       /* key of the last head: a stream never goes back */
	char container[IG_DETAIL_LEN]; /* what head.container points to */
	uint64_t seq;
	/* Ingero events: reorder heap (rows come by timestamp; a call's
	 * completion is later than its timestamp by its duration) */
	struct pending *heap;
	size_t hlen, hcap;
	int64_t last_stamp;
	int cursor_eof;
	/* array streams (aggregates, Ingero names) */
	struct ig_event *arr;
	size_t alen, apos;
};

struct name_slot {
	uint32_t pid;
	char comm[IG_COMM_LEN];
};

struct rofile;

struct rfile {
	int idx;
	char *path;	   /* as given */
	struct rofile *ro; /* the file, held open (store/rofile.h) */
	sqlite3 *db;
	int writer;
	char version[16];
	int top_schema;
	int has_node, has_comm, has_names_ext, has_names_ppid, has_names_container, has_snap_node,
	    has_chain_node;
	int has_arg2;	/* events.arg2 (NCCL communicators), newer files */
	int has_detail; /* events.detail (a cgroup's directory), newer still */
	char default_node[128];
	unsigned default_node_idx;
	struct opmap *ops;
	size_t nops;
	int map[8][64];	     /* fast (source, op_id) -> index into ops, -1 = none */
	uint64_t w_ns;	     /* longest duration of a start-stamped row (calls) */
	int64_t dur_max;     /* longest duration a row may have (recfmt_dur_max) */
	uint64_t start, end; /* span of what this file delivers */
	int has_span;
	struct name_slot *names; /* Ingero files: pid -> name */
	/* per-row node lookup cache */
	char last_node[128];
	unsigned last_node_idx;
	int last_node_valid;
	struct stream s[S_NTYPES];
};

struct rp_node {
	char *key; /* raw name, or "\1<file idx>" for a file's unnamed node */
	char *display;
};

struct replay {
	struct ig_source src;
	struct replay_opts o;
	struct rfile *files;
	int nfiles;
	struct rp_node nodes[RP_MAX_NODES];
	int nnodes;
	uint64_t seek_ts;
	struct replay_stats st;
	char err[512];
};

/* The merge key: completion time, the model's clock. */
static inline uint64_t rp_key(const struct ig_event *e)
{
	return e->ts_ns + e->dur_ns;
}

/* replay.c */
struct replay *rp_of(struct ig_source *s); /* NULL when s is not a replay */
int rp_node_register(struct replay *r, const char *key, const char *display, int preferred);
/* Node index for a row's node text (NULL or "" = the file's default node). */
unsigned rp_node_for(struct replay *r, struct rfile *f, const char *name);
/* Records why reading failed (first error wins); returns -EIO. */
int rp_fail_read(struct replay *r, struct rfile *f, const char *what);
/* The same for a stream that went back in time: a damaged index. */
int rp_fail_order(struct replay *r, struct rfile *f, const char *table);
void rp_span_add(struct rfile *f, uint64_t ts);
/* The reorder heap of a stream (by completion, then seq). 0 or -ENOMEM. */
int rp_heap_push(struct stream *s, const struct ig_event *e, uint64_t seq);
void rp_heap_pop(struct stream *s, struct ig_event *out);
/* A step of a stream whose rows come by a stamp (s->last_stamp, the last
 * row's) that no later row's events precede: 1 when it set the next head
 * (at or after the seek time: one of the heap that no row still to read
 * can precede) or eof; 0 when the cursor is on a row to read (then push
 * its events and set last_stamp); -EIO when reading failed (what: "reading
 * TABLE", for the message). */
int rp_heap_step(struct replay *r, struct stream *s, const char *what);

/* replay_file.c */
/* One line in thread-local storage (valid until the next call). */
const char *rp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rp_one_line(char *s);
/* Opens and checks f->path; NULL or the error line. */
const char *rp_open_file(struct replay *r, struct rfile *f);
void rp_file_free(struct rfile *f);
const struct opmap *rp_op_lookup(const struct rfile *f, int64_t src, int64_t id);
/* Room for one more element of size in *v (n used, *cap allocated).
 * 0 or -ENOMEM. */
int rp_grow(void **v, size_t n, size_t *cap, size_t size);

/* replay_sum.c: the calls of ingero_top_summaries (--record-rate), laid
 * out again. Advances stream s (S_SUM) to its next head: each row's calls
 * go to the heap, delivered by completion. Rows out of range are refused
 * and counted. */
int rp_sum_next(struct replay *r, struct stream *s);

/* replay_ingero.c */
/* After the checks: the names, the longest call, the span and the arrays
 * (names at the start, page allocations from event_aggregates). */
const char *rp_ingero_prepare(struct replay *r, struct rfile *f);
/* The SELECT of an Ingero file's events from ?1 (by timestamp). */
void rp_ingero_events_sql(struct rfile *f, char *buf, size_t len);
/* Advances the events stream of an Ingero file to its next head: rows come
 * by timestamp and are reordered by completion through a heap. Rows out of
 * range are refused and counted. */
int rp_ingero_next(struct replay *r, struct stream *s);

#endif
