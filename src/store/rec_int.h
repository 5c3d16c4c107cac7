/* Inside the recorder: the state shared by rec.c (public side, queue, open
 * and close) and rec_write.c (the writer: rows, transactions, pruning).
 * Not for other modules. */
#ifndef IG_REC_INT_H
#define IG_REC_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "core/clock.h"
#include "store/rec.h"
#include "store/safefile.h"

enum rec_item_type { IT_EVENT = 0, IT_CHAIN, IT_SESSION, IT_STACK, IT_NODE, IT_SUMMARY };

/* One queued item: an event by value, anything else as owned data in p
 * (IT_CHAIN: struct rec_chain copy, IT_SESSION: struct rec_session copy,
 * IT_STACK: struct rec_stack_cmd, IT_NODE: struct rec_node_cmd, IT_SUMMARY:
 * struct rec_summary; IT_EVENT:
 * the copy of a name event's container that e.container points to, or
 * NULL). */
struct rec_item {
	int type;
	void *p;
	struct ig_event e;
};

struct rec_stack_cmd {
	uint64_t hash;
	char *ips, *frames;
};

struct rec_node_cmd {
	unsigned idx;
	char *name;
};

#define REC_NAME_SLOTS 4096

struct rec {
	char *path;
	struct safefile *sf; /* the file, held open (store/safefile.h) */
	sqlite3 *db;
	struct rec_opts o;
	/* statements */
	sqlite3_stmt *st_event, *st_snap, *st_name, *st_chain, *st_stack, *st_node;
	sqlite3_stmt *st_session, *st_begin, *st_commit, *st_rollback, *st_summary;
	/* --record-rate (rec_sum.c), on the caller's thread; NULL = every call */
	struct rec_sum *sum;
	uint64_t sum_lost; /* calls of runs lost (memory, a full queue): in rec_stats.dropped */
	/* queue, guarded by mu */
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done, cv_room;
	int room_waiters; /* producers waiting on cv_room */
	int stuck;	  /* a wait for room timed out; cleared when the writer takes */
	struct rec_item *q;
	size_t qcap, qhead, qlen;
	uint64_t flush_req, flush_done;
	int quit;
	pthread_t thr;
	int have_thr;
	/* state shared with the writer; guarded by mu */
	int err; /* -errno once stopped */
	char errmsg[1024];
	struct rec_stats st;
	/* writer-only state */
	int in_txn;
	unsigned txn_rows;
	uint64_t txn_start_ms;
	int64_t session_id;
	uint64_t rows_in_file; /* estimate for pruning */
	uint64_t w_events;     /* rows written by this recorder */
	int sum_schema;	       /* ingero_top_schema raised for a summary */
	uint64_t page_size;
	char *node_names[256];
	struct {
		uint32_t pid;
		char comm[IG_COMM_LEN];
	} names[REC_NAME_SLOTS];
	struct rec_item *batch; /* writer's private copy of queued items */
};

/* rec.c: queue an event (copied) or a summary (taken, freed on failure).
 * 0 or as rec_event. */
int rec_enqueue_event(struct rec *r, const struct ig_event *e);
int rec_enqueue_summary(struct rec *r, struct rec_summary *s);

/* rec_sum.c: --record-rate. rec_sum_event takes a call (1: it queues it or
 * summarises it later) or looks at an off-CPU interval (0: the caller queues
 * it as usual, as every other event); rec_sum_flush decides everything
 * waiting and ends every run (rec_flush, rec_close). */
struct rec_sum *rec_sum_new(unsigned rate, unsigned run_ms);
void rec_sum_free(struct rec_sum *rs);
int rec_sum_event(struct rec *r, const struct ig_event *e);
void rec_sum_flush(struct rec *r);
/* Event time has reached now_ns: the units no call can nest in any more
 * decided, the runs whose slice has ended queued (rec_tick). */
void rec_sum_tick(struct rec *r, uint64_t now_ns);
/* Calls summarised and rows written so far. */
void rec_sum_counts(const struct rec_sum *rs, uint64_t *calls, uint64_t *rows);

/* rec_write.c: the writer. */
void *rec_writer_main(void *arg);
/* Writes items inside the current transaction, committing by count; on an
 * error the recorder is stopped. Returns 0 or the SQLite error. */
int rec_write_batch(struct rec *r, struct rec_item *items, size_t n);
/* Commits when the transaction is older than commit_ms. */
int rec_commit_by_time(struct rec *r);
/* Commits the open transaction (and prunes); a failure stops the recorder. */
void rec_commit_now(struct rec *r);
/* Frees an item's owned data. */
void rec_item_free(struct rec_item *it);
/* Names node idx in the file and in r. SQLite result code. */
int rec_write_node(struct rec *r, unsigned idx, const char *name);
/* Used size of the database in bytes (pages in use). */
uint64_t rec_used_bytes(struct rec *r);
/* Builds Ingero's query indexes unless too big; notes it in schema_info. */
int rec_build_query_indexes(struct rec *r);
uint64_t rec_wall_ns(void);

#endif
