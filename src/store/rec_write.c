/* The recorder's writer: rows through the prepared statements of the
 * recording format, transactions batched by count and by wall time, and
 * --max-db pruning of whole seconds of the oldest events. Runs on the
 * private writer thread (or inline with rec_opts.synchronous). */
#include "store/rec_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"

static uint64_t mono_ms(void)
{
	return ig_mono_ns() / 1000000;
}

uint64_t rec_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Stops the recorder: first error wins. Caller holds no lock. */
static void stop_with(struct rec *r, int err, const char *what)
{
	pthread_mutex_lock(&r->mu);
	if (!r->err) {
		r->err = err;
		snprintf(r->errmsg, sizeof(r->errmsg), "recording to %s stopped: %s (%s)", r->path,
			 what, strerror(-err));
	}
	pthread_cond_broadcast(&r->cv_done);
	pthread_mutex_unlock(&r->mu);
}

/* --- rows ---------------------------------------------------------------------- */

static const char *node_name(struct rec *r, unsigned idx)
{
	if (idx < 256 && r->node_names[idx])
		return r->node_names[idx];
	return "";
}

/* Names are only stored when they change, per pid. */
static int name_changed(struct rec *r, uint32_t pid, const char *comm)
{
	unsigned slot = (pid * 2654435761u) % REC_NAME_SLOTS;
	if (r->names[slot].pid == pid && !strncmp(r->names[slot].comm, comm, IG_COMM_LEN))
		return 0;
	r->names[slot].pid = pid;
	memcpy(r->names[slot].comm, comm, IG_COMM_LEN);
	return 1;
}

static int write_name(struct rec *r, const struct ig_event *e, int is_event)
{
	recfmt_name_bind(r->st_name, e, node_name(r, e->node), is_event);
	return db_step_reset(r->st_name);
}

static int write_event(struct rec *r, const struct ig_event *e)
{
	int rc, op_id;
	if (e->kind == IG_EV_SNAPSHOT) {
		recfmt_snapshot_bind(r->st_snap, e, node_name(r, e->node));
		return db_step_reset(r->st_snap);
	}
	if (e->kind == IG_EV_COMM) {
		name_changed(r, e->pid, e->comm);
		return write_name(r, e, 1);
	}
	int src = recfmt_ingero_op(e->kind, e->op, NULL, &op_id);
	if (!src)
		return SQLITE_OK; /* nothing to store for this kind */
	if (e->comm[0] && name_changed(r, e->pid, e->comm)) {
		rc = write_name(r, e, 0);
		if (rc != SQLITE_OK)
			return rc;
	}
	recfmt_event_bind(r->st_event, e, src, op_id, node_name(r, e->node));
	rc = db_step_reset(r->st_event);
	if (rc == SQLITE_OK) {
		r->rows_in_file++;
		r->w_events++;
	}
	return rc;
}

/* A run of summarised calls; the file's first says that its readers must
 * know summaries (recfmt.h, REC_SCHEMA). */
static int write_summary(struct rec *r, const struct rec_summary *s)
{
	if (!r->sum_schema) {
		char sql[96];
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO schema_info VALUES ('ingero_top_schema', '%d')",
			 REC_SCHEMA);
		int rc = db_exec(r->db, sql);
		if (rc != SQLITE_OK)
			return rc;
		r->sum_schema = 1;
	}
	if (recfmt_summary_bind(r->st_summary, s, node_name(r, s->node)))
		return SQLITE_NOMEM;
	return db_step_reset(r->st_summary);
}

int rec_write_node(struct rec *r, unsigned idx, const char *name)
{
	free(r->node_names[idx]);
	r->node_names[idx] = strdup(name ? name : "");
	recfmt_node_bind(r->st_node, idx, r->node_names[idx]);
	return db_step_reset(r->st_node);
}

void rec_item_free(struct rec_item *it)
{
	switch (it->type) {
	case IT_CHAIN:
		rec_chain_clear(it->p);
		break;
	case IT_SESSION:
		rec_session_clear(it->p);
		break;
	case IT_STACK: {
		struct rec_stack_cmd *c = it->p;
		free(c->ips);
		free(c->frames);
		break;
	}
	case IT_NODE:
		free(((struct rec_node_cmd *)it->p)->name);
		break;
	}
	free(it->p);
	it->p = NULL;
}

static int write_item(struct rec *r, struct rec_item *it)
{
	switch (it->type) {
	case IT_EVENT:
		return write_event(r, &it->e);
	case IT_CHAIN:
		if (recfmt_chain_bind(r->st_chain, it->p))
			return SQLITE_NOMEM;
		return db_step_reset(r->st_chain);
	case IT_SESSION:
		recfmt_session_bind(r->st_session, it->p, r->session_id, "ingero-top " IG_VERSION,
				    rec_wall_ns());
		return db_step_reset(r->st_session);
	case IT_STACK: {
		struct rec_stack_cmd *s = it->p;
		recfmt_stack_bind(r->st_stack, s->hash, s->ips, s->frames);
		return db_step_reset(r->st_stack);
	}
	case IT_NODE: {
		struct rec_node_cmd *n = it->p;
		return rec_write_node(r, n->idx, n->name);
	}
	case IT_SUMMARY:
		return write_summary(r, it->p);
	}
	return SQLITE_OK;
}

/* --- --max-db -------------------------------------------------------------------- */

/* Used size of the database: pages in use, in bytes. The WAL beside it is
 * bounded on its own (journal_size_limit) and folded in at rec_close. */
uint64_t rec_used_bytes(struct rec *r)
{
	int64_t pages = db_query_int(r->db, "PRAGMA page_count", 0, NULL);
	int64_t free_pages = db_query_int(r->db, "PRAGMA freelist_count", 0, NULL);
	return (uint64_t)(pages - free_pages) * r->page_size;
}

/* Deletes what completed before cutoff and says so, in one transaction.
 * *deleted gets the events deleted. */
static int prune_before(struct rec *r, uint64_t cutoff, uint64_t used, uint64_t *deleted)
{
	char sql[256];
	int rc = db_exec(r->db, "BEGIN");
	if (rc != SQLITE_OK)
		return rc;
	snprintf(sql, sizeof(sql), "DELETE FROM events WHERE end_ns < %" PRIu64, cutoff);
	rc = db_exec(r->db, sql);
	*deleted = (uint64_t)sqlite3_changes(r->db);
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql), "DELETE FROM ingero_top_summaries WHERE to_ns < %" PRIu64,
			 cutoff);
		rc = db_exec(r->db, sql);
	}
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql),
			 "DELETE FROM system_snapshots WHERE timestamp < %" PRIu64, cutoff);
		rc = db_exec(r->db, sql);
	}
	if (rc == SQLITE_OK) { /* older names go too, but each pid keeps its latest */
		snprintf(sql, sizeof(sql),
			 "DELETE FROM process_names WHERE seen_at < %" PRIu64 " AND rowid NOT IN "
			 "(SELECT MAX(rowid) FROM process_names GROUP BY pid)",
			 cutoff);
		rc = db_exec(r->db, sql);
	}
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO ingero_top_pruned VALUES (%" PRIu64 ", %" PRIu64 ", %" PRIu64
			 ", %" PRIu64 ")",
			 rec_wall_ns(), cutoff, *deleted, used);
		rc = db_exec(r->db, sql);
	}
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO schema_info VALUES ('pruned_before_ns', '%" PRIu64
			 "')",
			 cutoff);
		rc = db_exec(r->db, sql);
	}
	if (rc == SQLITE_OK)
		rc = db_exec(r->db, "COMMIT");
	if (rc != SQLITE_OK)
		db_exec(r->db, "ROLLBACK");
	return rc;
}

/* --max-db: deletes the oldest whole seconds of events until the used size is
 * back under ~80 % of the bound, and says so in ingero_top_pruned and
 * schema_info. */
static int prune(struct rec *r)
{
	uint64_t used = rec_used_bytes(r);
	pthread_mutex_lock(&r->mu);
	r->st.db_bytes = used;
	pthread_mutex_unlock(&r->mu);
	if (!r->o.max_db_bytes || used <= r->o.max_db_bytes || !r->rows_in_file)
		return SQLITE_OK;
	uint64_t target = r->o.max_db_bytes / 10 * 8;
	uint64_t per_row = used / r->rows_in_file;
	if (!per_row)
		per_row = 1;
	uint64_t n = (used - target) / per_row + 1;
	if (n > r->rows_in_file / 2) /* the estimate may be off: never wipe out */
		n = r->rows_in_file / 2;
	char sql[128];
	snprintf(sql, sizeof(sql),
		 "SELECT end_ns FROM events ORDER BY end_ns LIMIT 1 OFFSET %" PRIu64, n);
	int64_t ts = db_query_int(r->db, sql, -1, NULL);
	if (ts < 0)
		return SQLITE_OK;
	/* whole seconds: everything before the next second boundary goes */
	uint64_t cutoff = ((uint64_t)ts / 1000000000ull + 1) * 1000000000ull, deleted = 0;
	int rc = prune_before(r, cutoff, used, &deleted);
	if (rc != SQLITE_OK)
		return rc;
	r->rows_in_file = deleted < r->rows_in_file ? r->rows_in_file - deleted : 0;
	pthread_mutex_lock(&r->mu);
	r->st.pruned_events += deleted;
	r->st.prunes++;
	pthread_mutex_unlock(&r->mu);
	return SQLITE_OK;
}

/* Ingero's query indexes (timestamp, pid, source/op/stack) make inserts
 * ~6x slower, so they are built once at close -- unless that would take long
 * (more than REC_INDEX_MAX_ROWS rows) or break --max-db; schema_info
 * query_indexes says which, with the SQL to build them by hand. */
#define REC_INDEX_MAX_ROWS 4000000

int rec_build_query_indexes(struct rec *r)
{
	const char *why = NULL;
	if (r->rows_in_file > REC_INDEX_MAX_ROWS)
		why = "skipped: too many rows to build them at exit";
	else if (r->o.max_db_bytes && rec_used_bytes(r) / 10 * 16 > r->o.max_db_bytes)
		why = "skipped: they would not fit in --max-db";
	int rc = SQLITE_OK;
	if (!why)
		rc = db_exec(r->db, recfmt_query_index_sql);
	char *v =
	    why ? sqlite3_mprintf("%s; to build them: %s", why, recfmt_query_index_sql) : NULL;
	char *q = sqlite3_mprintf("INSERT OR REPLACE INTO schema_info VALUES ('query_indexes', "
				  "%Q)",
				  v ? v : "built");
	if (rc == SQLITE_OK)
		rc = q ? db_exec(r->db, q) : SQLITE_NOMEM;
	sqlite3_free(q);
	sqlite3_free(v);
	return rc;
}

/* --- transactions ------------------------------------------------------------------ */

static int txn_begin(struct rec *r)
{
	if (r->in_txn)
		return SQLITE_OK;
	int rc = db_step_reset(r->st_begin);
	if (rc == SQLITE_OK) {
		r->in_txn = 1;
		r->txn_rows = 0;
		r->txn_start_ms = mono_ms();
	}
	return rc;
}

static int txn_commit(struct rec *r)
{
	if (!r->in_txn)
		return SQLITE_OK;
	int rc = db_step_reset(r->st_commit);
	if (rc != SQLITE_OK)
		return rc;
	r->in_txn = 0;
	pthread_mutex_lock(&r->mu);
	r->st.events = r->w_events;
	r->st.committed = r->w_events;
	r->st.commits++;
	pthread_mutex_unlock(&r->mu);
	return prune(r);
}

static void fail_txn(struct rec *r, int rc, const char *what)
{
	char why[300];
	snprintf(why, sizeof(why), "%s: %s", what, sqlite3_errmsg(r->db));
	if (r->in_txn) {
		db_step_reset(r->st_rollback);
		r->in_txn = 0;
	}
	stop_with(r, db_errno(rc), why);
}

void rec_commit_now(struct rec *r)
{
	if (!r->err && r->in_txn) {
		int rc = txn_commit(r);
		if (rc != SQLITE_OK)
			fail_txn(r, rc, "cannot commit");
	}
}

int rec_write_batch(struct rec *r, struct rec_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = txn_begin(r);
		if (rc == SQLITE_OK)
			rc = write_item(r, &items[i]);
		if (rc == SQLITE_OK && ++r->txn_rows >= r->o.batch_events)
			rc = txn_commit(r);
		if (rc != SQLITE_OK) {
			fail_txn(r, rc, "cannot write");
			return rc;
		}
	}
	pthread_mutex_lock(&r->mu);
	r->st.events = r->w_events;
	pthread_mutex_unlock(&r->mu);
	return SQLITE_OK;
}

int rec_commit_by_time(struct rec *r)
{
	if (r->in_txn && mono_ms() - r->txn_start_ms >= r->o.commit_ms) {
		int rc = txn_commit(r);
		if (rc != SQLITE_OK) {
			fail_txn(r, rc, "cannot commit");
			return rc;
		}
	}
	return SQLITE_OK;
}

/* --- the writer thread ---------------------------------------------------------------- */

/* Waits (mu held) until there is work, a flush, quit, or the open
 * transaction is due for its commit by time. */
static void wait_for_work(struct rec *r)
{
	while (!r->qlen && !r->quit && r->flush_req == r->flush_done) {
		if (!r->in_txn || r->err) {
			pthread_cond_wait(&r->cv_work, &r->mu);
			continue;
		}
		uint64_t due = r->txn_start_ms + r->o.commit_ms, now = mono_ms();
		uint64_t wait = due > now ? due - now : 0;
		if (!wait)
			return;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(wait / 1000);
		ts.tv_nsec += (long)(wait % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&r->cv_work, &r->mu, &ts);
	}
}

void *rec_writer_main(void *arg)
{
	struct rec *r = arg;
	size_t chunk = r->o.batch_events;
	/* its own name, so that top -H and tests/bench/record_storm.sh tell it */
	pthread_setname_np(pthread_self(), "ig-rec-writer");
	pthread_mutex_lock(&r->mu);
	for (;;) {
		wait_for_work(r);
		size_t n = r->qlen < chunk ? r->qlen : chunk;
		for (size_t i = 0; i < n; i++) {
			r->batch[i] = r->q[r->qhead];
			r->qhead = (r->qhead + 1) % r->qcap;
		}
		r->qlen -= n;
		if (n)
			r->stuck = 0;
		if (n && r->room_waiters)
			pthread_cond_broadcast(&r->cv_room);
		uint64_t flush_req = r->flush_req;
		int quit = r->quit;
		int failed = r->err;
		pthread_mutex_unlock(&r->mu);

		if (!failed && n)
			rec_write_batch(r, r->batch, n);
		for (size_t i = 0; i < n; i++)
			if (r->batch[i].type != IT_EVENT || r->batch[i].p)
				rec_item_free(&r->batch[i]);
		if (!r->err)
			rec_commit_by_time(r);

		pthread_mutex_lock(&r->mu);
		if (!r->qlen && flush_req != r->flush_done) {
			pthread_mutex_unlock(&r->mu);
			rec_commit_now(r);
			pthread_mutex_lock(&r->mu);
			r->flush_done = flush_req;
			pthread_cond_broadcast(&r->cv_done);
		}
		if (quit && !r->qlen)
			break;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}
